/* select/topoml (placeholder until the select plugin issue lands). */
int select_topoml_placeholder;
