/*
 * topoml command-line tool: one function per subcommand.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_CLI_H
#define TOPOML_CLI_H

#include "topoml.h"

struct topoml_cmd {
	const char *name;
	int (*run)(int argc, char **argv);	/* argv[0] is the command */
	const char *summary;
};

/* Load a site file or print its errors to stderr; NULL on failure. */
topoml_topo_t *cli_load_topology(const char *path);

/* SVG picture of t; node_job (job id per node, 0 = idle) may be NULL. */
int cli_write_svg(const topoml_topo_t *t, FILE *f, const uint32_t *node_job);

int cmd_check(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_import_ib(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_place(int argc, char **argv);
int cmd_sim(int argc, char **argv);

#endif
