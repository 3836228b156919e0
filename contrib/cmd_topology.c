/*
 * topoml check, show, generate: validate, describe and draw site topology
 * files, and write synthetic ones of any size.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "cli.h"
#include "util/util.h"
#include "topoml/load.h"
#include "topoml/wait.h"
#include "topoml/health.h"
#include "sim.h"

/* Above this many switches, show prints levels, not every switch. */
#define SHOW_TREE_MAX 200

static int _format_parse(const char *s, enum topoml_format *fmt)
{
	if (!strcmp(s, "auto"))
		*fmt = TOPOML_FMT_AUTO;
	else if (!strcmp(s, "conf"))
		*fmt = TOPOML_FMT_CONF;
	else if (!strcmp(s, "json"))
		*fmt = TOPOML_FMT_JSON;
	else if (!strcmp(s, "ibnet") || !strcmp(s, "ibnetdiscover"))
		*fmt = TOPOML_FMT_IBNET;
	else
		return -1;
	return 0;
}

/*
 * Load path; *rc is CLI_USAGE when it cannot be read (nothing in err),
 * CLI_INVALID when it is not a valid topology.
 */
static topoml_topo_t *_load_quiet(const char *path, enum topoml_format fmt,
				  topoml_errors_t *err, topoml_errors_t *warn,
				  int *rc)
{
	int fd = topoml__open_regular(path);
	topoml_topo_t *t;

	if (fd < 0) {
		topoml_errors_add(err, "%s: %s", path,
				  topoml__open_error(errno));
		*rc = CLI_USAGE;
		return NULL;
	}
	close(fd);
	cli_progress_step("loading %s", path);
	t = topoml_load_ex(path, fmt, err, warn);
	cli_progress_end();
	if (!t && !err->n)
		topoml_errors_add(err, "%s: cannot load topology", path);
	*rc = t ? CLI_OK : CLI_INVALID;
	return t;
}

/* Errors (and warnings, unless quiet) go to stderr. */
static topoml_topo_t *_load(const char *path, enum topoml_format fmt,
			    bool quiet, int *rc)
{
	topoml_errors_t err = { 0 }, warn = { 0 };
	topoml_topo_t *t;
	int r;

	t = _load_quiet(path, fmt, &err, &warn, &r);
	if (!quiet)
		cli_errors(&warn, "warning: ");
	cli_errors(&err, NULL);
	topoml_errors_clear(&err);
	topoml_errors_clear(&warn);
	if (rc)
		*rc = r;
	return t;
}

topoml_topo_t *cli_load_topology(const char *path, int *rc)
{
	return _load(path, TOPOML_FMT_AUTO,
		     cli_progress_mode == CLI_PROGRESS_OFF, rc);
}

static const char *_family_name(const topoml_topo_t *t)
{
	switch (t->family) {
	case TOPOML_FAT_TREE:
		return "fat-tree";
	case TOPOML_DRAGONFLY:
		return "dragonfly";
	case TOPOML_TORUS:
		return t->wrap[0] || t->wrap[1] || t->wrap[2] ? "torus" :
								"mesh";
	}
	return "unknown";
}

json_object *cli_topology_json(const topoml_topo_t *t)
{
	static const char *const arr[] = { "explicit", "all-to-all",
					   "absolute", "relative" };
	json_object *o = json_object_new_object();
	char sum[512];
	int i, leaves = 0;

	topoml_summary(t, sum, sizeof(sum));
	json_object_object_add(o, "family", json_object_new_string(
			       t->nblocks > 0 ? "block" : _family_name(t)));
	if (t->nblocks > 0) {
		json_object *bs = json_object_new_array();

		json_object_object_add(o, "blocks",
				       json_object_new_int(t->nblocks));
		for (i = 0; i < 16; i++)
			if (t->block_levels & (1u << i))
				json_object_array_add(bs, json_object_new_int(
					t->block_base << i));
		json_object_object_add(o, "block_sizes", bs);
	}
	if (t->nnvl > 0)
		json_object_object_add(o, "nvlink_domains",
				       json_object_new_int(t->nnvl));
	json_object_object_add(o, "nodes", json_object_new_int(t->nnodes));
	json_object_object_add(o, "switches",
			       json_object_new_int(t->nswitches));
	switch (t->family) {
	case TOPOML_FAT_TREE:
		for (i = 0; i < t->nswitches; i++)
			leaves += !t->switches[i].level;
		json_object_object_add(o, "leaves", json_object_new_int(leaves));
		json_object_object_add(o, "levels",
				       json_object_new_int(t->nlevels));
		break;
	case TOPOML_DRAGONFLY:
		json_object_object_add(o, "groups",
				       json_object_new_int(t->ngroups));
		json_object_object_add(o, "arrangement", json_object_new_string(
			arr[t->df_arrangement <= TOPOML_DF_RELATIVE ?
			    t->df_arrangement : 0]));
		break;
	case TOPOML_TORUS: {
		json_object *d = json_object_new_array();
		json_object *w = json_object_new_array();

		for (i = 0; i < 3; i++) {
			json_object_array_add(d, json_object_new_int(t->dims[i]));
			json_object_array_add(w,
					json_object_new_boolean(t->wrap[i]));
		}
		json_object_object_add(o, "dims", d);
		json_object_object_add(o, "wrap", w);
		break;
	}
	}
	json_object_object_add(o, "summary", json_object_new_string(sum));
	return o;
}

static json_object *_errors_json(const topoml_errors_t *e)
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < e->n; i++)
		json_object_array_add(a, json_object_new_string(e->msg[i]));
	return a;
}

static void _json_print(json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

/* ---- check --------------------------------------------------------- */

static void _check_usage(FILE *f)
{
	fprintf(f,
"usage: topoml check [-q] [--json] [--format auto|conf|json|ibnet] FILE...\n"
"       topoml check [-q] [--json] --site-conf topoml.conf\n"
"                    [--slurm-conf slurm.conf] [FILE...]\n"
"Validate site topology files: one summary line per file and exit 0, or\n"
"every error found (FILE:LINE[:COL]: what is wrong) and exit 1; exit 2 for\n"
"a file that cannot be read or a usage error.\n"
"--json prints one object per file: valid, topology fields, errors,\n"
"warnings.  --progress shows what is loading (default on a terminal).\n"
"Warnings (what Slurm accepts but only logs) go to stderr; -q hides them.\n"
"--site-conf also validates select/topoml's topoml.conf and the topology\n"
"file it names, as slurmctld will read them, and prints every key's value\n"
"(defaults included) and each partition's overrides.  --slurm-conf adds\n"
"what that slurm.conf lacks (exit 1): a partition topoml.conf names, a\n"
"node of the topology; it names the integration slurm.conf chooses\n"
"(select/topoml, or topology/topoml and the Slurm plugin it wraps) and\n"
"what stops it (topology/topoml beside another SelectType than\n"
"select/cons_tres, or beside a topology.yaml).\n");
}

/* topoml.conf's own spelling of each value (topology/conf/siteconf.c
 * parses these). */
static const char *_format_name(enum topoml_format fmt)
{
	switch (fmt) {
	case TOPOML_FMT_CONF:
		return "conf";
	case TOPOML_FMT_JSON:
		return "json";
	case TOPOML_FMT_IBNET:
		return "ibnetdiscover";
	default:
		return "auto";
	}
}

static const char *_sc_family(const struct topoml_siteconf *sc)
{
	return sc->family ? topoml_family_name(sc->family) : "auto";
}

/*
 * Every key topoml.conf sets, with the value slurmctld will use (defaults
 * included), so that an admin sees what a typo or a missing line means.
 */
static void _site_conf_json(json_object *o, const struct topoml_siteconf *sc)
{
	json_object *parts = json_object_new_array();
	char hw[128];

	json_object_object_add(o, "topology_format", json_object_new_string(
		_format_name(sc->topology_format)));
	json_object_object_add(o, "family",
			       json_object_new_string(_sc_family(sc)));
	json_object_object_add(o, "dragonfly_spread", json_object_new_string(
		sc->df_spread_alltoall ? "alltoall" : "never"));
	json_object_object_add(o, "torus_placement", json_object_new_string(
		topoml_torus_placement_name(sc->torus_curve)));
	json_object_object_add(o, "torus_box_wait",
			       json_object_new_int(sc->torus_box_wait));
	json_object_object_add(o, "torus_box_wait_span",
			       json_object_new_double(sc->torus_box_wait_span));
	json_object_object_add(o, "hybrid_wait",
			       json_object_new_int(sc->hybrid_wait));
	/* LocalityWait: both halves, apart only by their old names */
	json_object_object_add(o, "locality_wait",
			       sc->torus_box_wait == sc->hybrid_wait ?
			       json_object_new_int(sc->torus_box_wait) : NULL);
	json_object_object_add(o, "locality_wait_span",
			       json_object_new_double(sc->torus_box_wait_span));
	topoml_kind_weights_format(sc->hybrid_weights, hw, sizeof(hw));
	json_object_object_add(o, "hybrid_weights",
			       json_object_new_string(hw));
	json_object_object_add(o, "debug", json_object_new_int(sc->debug));
	json_object_object_add(o, "health_policy", json_object_new_string(
		topoml_health_policy_name(sc->health_policy)));
	json_object_object_add(o, "health_avoid_time",
			       json_object_new_int(sc->health_avoid_time));
	for (int i = 0; i < sc->nparts; i++) {
		const struct topoml_part_conf *pc = &sc->parts[i];
		json_object *po = json_object_new_object();

		json_object_object_add(po, "name",
				       json_object_new_string(pc->name));
		if (pc->has_hint)
			json_object_object_add(po, "hint",
				json_object_new_string(
					topoml_hint_name(pc->hint)));
		if (pc->placement >= 0)
			json_object_object_add(po, "placement",
				json_object_new_string(
					pc->placement ? "topoml" : "off"));
		if (pc->locality_wait >= 0)
			json_object_object_add(po, "locality_wait",
				json_object_new_int(pc->locality_wait));
		json_object_array_add(parts, po);
	}
	json_object_object_add(o, "partitions", parts);
}

static void _site_conf_print(const char *path,
			     const struct topoml_siteconf *sc, const char *topo)
{
	char hw[128], lw[64];

	printf("%s: DefaultHint=%s Placement=%s, %d partition override%s\n",
	       path, topoml_hint_name(sc->default_hint),
	       sc->placement ? "topoml" : "off", sc->nparts,
	       cli_plural(sc->nparts));
	topoml_kind_weights_format(sc->hybrid_weights, hw, sizeof(hw));
	/* the halves differ only by the deprecated names: show both */
	if (sc->torus_box_wait == sc->hybrid_wait)
		snprintf(lw, sizeof(lw), "LocalityWait=%d", sc->torus_box_wait);
	else
		snprintf(lw, sizeof(lw), "TorusBoxWait=%d HybridWait=%d",
			 sc->torus_box_wait, sc->hybrid_wait);
	printf("%s: TopologyFile=%s TopologyFormat=%s Family=%s "
	       "DragonflySpread=%s TorusPlacement=%s %s "
	       "LocalityWaitSpan=%g HybridWeights=%s Debug=%d\n",
	       path, topo ? topo : "(none)", _format_name(sc->topology_format),
	       _sc_family(sc), sc->df_spread_alltoall ? "alltoall" : "never",
	       topoml_torus_placement_name(sc->torus_curve), lw,
	       sc->torus_box_wait_span, hw, sc->debug);
	printf("%s: HealthPolicy=%s HealthAvoidTime=%d\n", path,
	       topoml_health_policy_name(sc->health_policy),
	       sc->health_avoid_time);
	for (int i = 0; i < sc->nparts; i++) {
		const struct topoml_part_conf *pc = &sc->parts[i];

		printf("%s: PartitionName=%s", path, pc->name);
		if (pc->has_hint)
			printf(" Hint=%s", topoml_hint_name(pc->hint));
		if (pc->placement >= 0)
			printf(" Placement=%s",
			       pc->placement ? "topoml" : "off");
		if (pc->locality_wait >= 0)
			printf(" LocalityWait=%d", pc->locality_wait);
		printf("\n");
	}
}

/*
 * The integration slurm.conf chooses, in INTEG ("select/topoml",
 * "topology/topoml wrapping topology/tree", ...), and what stops it from
 * working as an error: topology/topoml beside another select plugin than
 * cons_tres or beside select/topoml, or with a topology.yaml Slurm would
 * read instead.  What only changes its effect is a warning.
 */
static int _check_integration(const char *slurm_conf,
			      const struct cli_slurm_conf *s, bool quiet,
			      char *integ, size_t len, topoml_errors_t *err)
{
	const char *st = s->select_type.value, *tp = s->topology_plugin.value;
	char *dir = strdup(slurm_conf), *slash, *path = NULL;
	const char *kind;
	int n = 0;

	if (!dir)
		return 0;
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	if (strcasecmp(tp, "topology/topoml")) {
		snprintf(integ, len, "%s", !strcasecmp(st, "select/topoml") ?
			 "select/topoml" : "none (slurmctld does not use "
			 "topoml's placement: SelectType=select/topoml, or "
			 "TopologyPlugin=topology/topoml from Slurm 24.05)");
		free(dir);
		return 0;
	}
	if (asprintf(&path, "%s/topology.conf", dir) < 0)
		path = NULL;
	kind = topoml_slurm_topology_kind(path);
	snprintf(integ, len, "topology/topoml wrapping %s (%s)",
		 !kind ? "the flat plugin" : !strcmp(kind, "block") ?
		 "topology/block" : "topology/tree",
		 !kind ? "no SwitchName= or BlockName= in topology.conf" :
		 !strcmp(kind, "block") ? "BlockName= lines in topology.conf" :
		 "SwitchName= lines in topology.conf");
	free(path);
	if (!strcasecmp(st, "select/topoml")) {
		n++;
		topoml_errors_add(err, "%s:%d: SelectType=select/topoml with TopologyPlugin=topology/topoml (line %d): both integrations at once; choose one (topology/topoml with SelectType=select/cons_tres from Slurm 24.05)",
				  slurm_conf, s->select_type.line,
				  s->topology_plugin.line);
	} else if (st[0] && strcasecmp(st, "select/cons_tres")) {
		n++;
		topoml_errors_add(err, "%s:%d: SelectType=%s: topology/topoml places inside select/cons_tres only",
				  slurm_conf, s->select_type.line, st);
	}
	if (asprintf(&path, "%s/topology.yaml", dir) >= 0) {
		if (!access(path, F_OK)) {
			n++;
			topoml_errors_add(err, "%s: Slurm reads it instead of TopologyPlugin=topology/topoml (%s:%d) and knows only its own plugins: remove it, and name a torus3d or other network in topoml.conf TopologyFile=",
					  path, slurm_conf,
					  s->topology_plugin.line);
		}
		free(path);
	}
	if (!quiet && strcasestr(s->select_params.value,
				 "CR_NO_DIST_TOPO_BLOCK"))
		cli_err("%s:%d: warning: CR_NO_DIST_TOPO_BLOCK: Slurm 26.05 "
			"then keeps its own task order, and SLURM_PROCID does "
			"not follow topology/topoml's ring", slurm_conf,
			s->select_params.line);
	if (!quiet && strcasestr(s->topology_param.value, "dragonfly"))
		cli_err("%s:%d: warning: TopologyParam=dragonfly is "
			"topology/tree's rule; topology/topoml places a "
			"dragonfly described in topoml.conf TopologyFile=",
			slurm_conf, s->topology_param.line);
	free(dir);
	return n;
}

/*
 * What slurm.conf lacks: partitions topoml.conf overrides (a typo leaves
 * the override unused) and nodes of the topology (slurmctld places on
 * slurm.conf's nodes only), each with the FILE:LINE that names it.
 */
static int _check_slurm_conf(const char *slurm_conf,
			     const struct topoml_siteconf *sc,
			     const topoml_topo_t *t, const char *topo,
			     bool quiet, char *integ, size_t len,
			     topoml_errors_t *err)
{
	struct cli_slurm_conf s;
	int i, k, v, n = 0;

	if (cli_slurm_conf_read(slurm_conf, t, &s))
		return CLI_USAGE;
	n += _check_integration(slurm_conf, &s, quiet, integ, len, err);
	for (i = 0; i < sc->nparts; i++) {
		const char *name = sc->parts[i].name, *like = NULL;

		for (k = 0; k < s.nparts; k++) {
			if (!strcmp(s.parts[k], name))
				break;
			if (!strcasecmp(s.parts[k], name))
				like = s.parts[k];
		}
		if (k < s.nparts)
			continue;
		n++;
		if (like)
			topoml_errors_add(err, "%s:%d: PartitionName=%s: no such partition in %s (partition names are case-sensitive: %s)",
					  sc->path ? sc->path : "topoml.conf",
					  sc->parts[i].line, name, slurm_conf,
					  like);
		else
			topoml_errors_add(err, "%s:%d: PartitionName=%s: no such partition in %s",
					  sc->path ? sc->path : "topoml.conf",
					  sc->parts[i].line, name, slurm_conf);
	}
	for (v = 0; t && v < t->nnodes; v++) {
		if (hwloc_bitmap_isset(s.nodes, v))
			continue;
		n++;
		if (t->nodes[v].line > 0)
			topoml_errors_add(err, "%s:%d: node %s: not a NodeName of %s",
					  topo ? topo : "?", t->nodes[v].line,
					  t->nodes[v].name, slurm_conf);
		else
			topoml_errors_add(err, "%s: node %s: not a NodeName of %s",
					  topo ? topo : "?", t->nodes[v].name,
					  slurm_conf);
	}
	cli_slurm_conf_clear(&s);
	return n ? CLI_INVALID : CLI_OK;
}

/* topoml.conf and the topology it names, as select/topoml loads them. */
static int _check_site_conf(const char *path, const char *slurm_conf,
			    json_object *jarr, bool quiet)
{
	struct topoml_siteconf sc;
	topoml_errors_t err = { 0 };
	topoml_topo_t *t = NULL;
	char *dir = NULL, *slash, *topo = NULL, sum[512];
	char notes[8][TOPOML_NOTE_LEN], integ[256] = "";
	int nnotes;
	int fd, rc = CLI_INVALID;

	topoml_siteconf_init(&sc);
	/* cannot be read (a directory too): 2, as for every file */
	if ((fd = topoml__open_regular(path)) < 0) {
		topoml_errors_add(&err, "%s: %s", path,
				  topoml__open_error(errno));
		rc = CLI_USAGE;
		goto out;
	}
	close(fd);
	if (!(dir = strdup(path)))
		goto out;
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	if (topoml_siteconf_read(path, &sc, &err))
		goto out;
	/* deprecated names, settings that do nothing as set */
	nnotes = topoml_siteconf_notes(&sc, notes, 8);
	for (int i = 0; i < nnotes && !quiet; i++)
		cli_err("%s: warning: %s", path, notes[i]);
	topo = topoml_siteconf_topology_path(&sc, dir);
	if (sc.placement && topo &&
	    (fd = topoml__open_regular(topo)) < 0) {
		topoml_errors_add(&err, "%s: %s", topo,
				  topoml__open_error(errno));
		rc = CLI_USAGE;
		goto out;
	}
	if (sc.placement && topo)
		close(fd);
	if (sc.placement &&
	    !(t = topoml_siteconf_load_topology(&sc, dir, &err)))
		goto out;
	if (topoml_siteconf_wait_inert_on(&sc, t, notes[0], sizeof(notes[0])) &&
	    !quiet)
		cli_err("%s: warning: %s", path, notes[0]);
	rc = slurm_conf ? _check_slurm_conf(slurm_conf, &sc, t, topo, quiet,
					    integ, sizeof(integ), &err) :
			  CLI_OK;
	if (rc == CLI_USAGE)
		goto out;
	if (jarr) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "file", json_object_new_string(path));
		json_object_object_add(o, "kind",
				       json_object_new_string("topoml.conf"));
		json_object_object_add(o, "valid",
				       json_object_new_boolean(rc == CLI_OK));
		json_object_object_add(o, "default_hint", json_object_new_string(
			topoml_hint_name(sc.default_hint)));
		json_object_object_add(o, "placement", json_object_new_string(
			sc.placement ? "topoml" : "off"));
		json_object_object_add(o, "partition_overrides",
				       json_object_new_int(sc.nparts));
		if (topo)
			json_object_object_add(o, "topology_file",
					       json_object_new_string(topo));
		if (slurm_conf) {
			json_object_object_add(o, "slurm_conf",
					json_object_new_string(slurm_conf));
			json_object_object_add(o, "integration",
					json_object_new_string(integ));
		}
		_site_conf_json(o, &sc);
		if (t)
			json_object_object_add(o, "topology",
					       cli_topology_json(t));
		json_object_object_add(o, "errors", _errors_json(&err));
		json_object_array_add(jarr, o);
		goto done;
	}
	_site_conf_print(path, &sc, topo);
	if (slurm_conf)
		printf("%s: integration: %s\n", slurm_conf, integ);
	if (t) {
		topoml_summary(t, sum, sizeof(sum));
		printf("%s: %s\n", topo ? topo : "?", sum);
	}
out:
	if (rc && jarr) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "file", json_object_new_string(path));
		json_object_object_add(o, "kind",
				       json_object_new_string("topoml.conf"));
		json_object_object_add(o, "valid", json_object_new_boolean(0));
		json_object_object_add(o, "errors", _errors_json(&err));
		json_object_array_add(jarr, o);
	} else {
		cli_errors(&err, NULL);
	}
done:
	topoml_errors_clear(&err);
	if (t)
		topoml_free(t);
	topoml_siteconf_clear(&sc);
	free(topo);
	free(dir);
	return rc;
}

int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "site-conf", required_argument, NULL, 'c' },
		{ "slurm-conf", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "progress", no_argument, NULL, CLI_OPT_PROGRESS },
		{ NULL, 0, NULL, 0 }
	};
	enum topoml_format fmt = TOPOML_FMT_AUTO;
	const char *site_conf = NULL, *slurm_conf = NULL;
	json_object *jarr = NULL;
	bool quiet = false;
	int c, i, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:qc:S:jh", opts, NULL)) != -1) {
		if (cli_common_opt(c)) {
			quiet = quiet || c == CLI_OPT_QUIET;
			continue;
		}
		switch (c) {
		case 'c':
			site_conf = optarg;
			break;
		case 'S':
			slurm_conf = optarg;
			break;
		case 'j':
			jarr = jarr ? jarr : json_object_new_array();
			break;
		case 'f':
			if (_format_parse(optarg, &fmt)) {
				cli_err("unknown format '%s'", optarg);
				json_object_put(jarr);
				return 2;
			}
			break;
		case 'h':
			_check_usage(stdout);
			json_object_put(jarr);
			return 0;
		default:
			_check_usage(stderr);
			json_object_put(jarr);
			return 2;
		}
	}
	if (optind >= argc && !site_conf) {
		cli_err("no FILE and no --site-conf given");
		_check_usage(stderr);
		json_object_put(jarr);
		return 2;
	}
	if (slurm_conf && !site_conf) {
		cli_err("--slurm-conf goes with --site-conf");
		json_object_put(jarr);
		return 2;
	}
	if (site_conf)
		rc = _check_site_conf(site_conf, slurm_conf, jarr, quiet);
	for (i = optind; i < argc; i++) {
		topoml_errors_t err = { 0 }, warn = { 0 };
		topoml_topo_t *t;
		char sum[512];
		int r;

		t = _load_quiet(argv[i], fmt, &err, &warn, &r);
		/* an unreadable file (2) outranks an invalid one (1) */
		rc = r > rc ? r : rc;
		if (jarr) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "file",
					       json_object_new_string(argv[i]));
			json_object_object_add(o, "valid",
					       json_object_new_boolean(t != NULL));
			if (t)
				json_object_object_add(o, "topology",
						       cli_topology_json(t));
			json_object_object_add(o, "errors", _errors_json(&err));
			json_object_object_add(o, "warnings",
					       _errors_json(&warn));
			json_object_array_add(jarr, o);
		} else {
			if (!quiet)
				cli_errors(&warn, "warning: ");
			cli_errors(&err, NULL);
			if (t) {
				topoml_summary(t, sum, sizeof(sum));
				printf("%s: %s\n", argv[i], sum);
			}
		}
		topoml_errors_clear(&err);
		topoml_errors_clear(&warn);
		topoml_free(t);
	}
	if (jarr)
		_json_print(jarr);
	return rc;
}

/* ---- show ---------------------------------------------------------- */

static void _print_set(const topoml_topo_t *t, hwloc_const_bitmap_t set)
{
	char *s = topoml_nodeset_format(t, set);

	printf("%s", s ? s : "?");
	free(s);
}

/* Each switch under its first parent; other parents noted. */
static void _tree(const topoml_topo_t *t, int sw, int from, int depth)
{
	const struct topoml_switch *s = &t->switches[sw];
	int k;

	printf("%*s%s (level %d, %d node%s", 2 * depth, "", s->name, s->level,
	       hwloc_bitmap_weight(s->desc),
	       cli_plural(hwloc_bitmap_weight(s->desc)));
	if (s->link_speed > 0)
		printf(", link speed %g", s->link_speed);
	printf(")");
	if (s->nnodes) {
		printf(": ");
		_print_set(t, s->desc);
	}
	if (s->nparents > 1) {
		printf(" [also under");
		for (k = 0; k < s->nparents; k++)
			if (s->parents[k] != from)
				printf(" %s", t->switches[s->parents[k]].name);
		printf("]");
	}
	printf("\n");
	for (k = 0; k < s->nchildren; k++) {
		int c = s->children[k];

		/* a multi-parent child is drawn under its first parent */
		if (t->switches[c].parents[0] == sw)
			_tree(t, c, sw, depth + 1);
	}
}

static void _show_fat_tree(const topoml_topo_t *t, bool all)
{
	int l, i;

	for (l = t->nlevels - 1; l >= 0; l--) {
		int n = 0, lo = INT_MAX, hi = 0;
		const char **names;
		char *list;

		names = malloc(t->nswitches * sizeof(*names));
		if (!names)
			return;
		for (i = 0; i < t->nswitches; i++) {
			const struct topoml_switch *s = &t->switches[i];
			int w;

			if (s->level != l)
				continue;
			names[n++] = s->name;
			w = hwloc_bitmap_weight(s->desc);
			lo = w < lo ? w : lo;
			hi = w > hi ? w : hi;
		}
		list = topoml__names_format(names, n, false);
		if (t->nblocks > 0)	/* Slurm's base and aggregated blocks */
			printf("level %d: %d %sblock%s, %d", l, n,
			       l ? "aggregated " : "", n == 1 ? "" : "s", lo);
		else
			printf("level %d: %d %s%s, %d", l, n,
			       l ? "switch" : "leaf switch",
			       n == 1 ? "" : "es", lo);
		if (hi != lo)
			printf("-%d", hi);
		printf(" node%s below each: %s\n", cli_plural(hi),
		       list ? list : "?");
		free(list);
		free(names);
	}
	if (!all && t->nswitches > SHOW_TREE_MAX) {
		printf("(%d switches: --all prints the whole tree)\n",
		       t->nswitches);
		return;
	}
	printf("\n");
	for (i = 0; i < t->nswitches; i++)
		if (!t->switches[i].nparents)
			_tree(t, i, -1, 0);
}

static void _show_dragonfly(const topoml_topo_t *t, bool all)
{
	int g = t->ngroups, i, k;

	for (i = 0; i < g && (all || i < SHOW_TREE_MAX); i++) {
		const struct topoml_group *gr = &t->groups[i];
		int links = 0, peers = 0;

		for (k = 0; k < g; k++)
			if (k != i && t->global_links[i * g + k] > 0) {
				links += t->global_links[i * g + k];
				peers++;
			}
		printf("group %s: %d router%s, %d node%s, %d global link%s to %d group%s: ",
		       gr->name, gr->nrouters, cli_plural(gr->nrouters),
		       hwloc_bitmap_weight(gr->desc),
		       cli_plural(hwloc_bitmap_weight(gr->desc)), links,
		       cli_plural(links), peers, cli_plural(peers));
		_print_set(t, gr->desc);
		printf("\n");
		if (!all && t->nswitches > SHOW_TREE_MAX)
			continue;
		for (k = 0; k < gr->nrouters; k++) {
			const struct topoml_switch *s =
				&t->switches[gr->routers[k]];

			printf("  router %s: %d node%s: ", s->name, s->nnodes,
			       cli_plural(s->nnodes));
			_print_set(t, s->desc);
			printf("\n");
		}
	}
	if (!all && (g > SHOW_TREE_MAX || t->nswitches > SHOW_TREE_MAX))
		printf("(--all prints every group and router)\n");
}

static void _show_torus(const topoml_topo_t *t, bool all)
{
	int X = t->dims[0], Y = t->dims[1], Z = t->dims[2], x, y, z;

	printf("dimensions %dx%dx%d, wrap-around x %s, y %s, z %s\n", X, Y, Z,
	       t->wrap[0] ? "yes" : "no", t->wrap[1] ? "yes" : "no",
	       t->wrap[2] ? "yes" : "no");
	for (z = 0; z < Z; z++) {
		int count = 0, n;

		for (y = 0; y < Y; y++)
			for (x = 0; x < X; x++)
				count += t->coord_node[x + X * (y + Y * z)] >= 0;
		printf("plane z=%d: %d of %d position%s hold%s node%s", z,
		       count, X * Y, cli_plural(X * Y), count == 1 ? "s" : "",
		       cli_plural(count));
		n = t->coord_node[X * Y * z];
		if (n >= 0)
			printf(", (0,0,%d) = %s", z, t->nodes[n].name);
		printf("\n");
		if (!all && z >= SHOW_TREE_MAX) {
			printf("(--all prints every plane)\n");
			break;
		}
	}
}

static void _show_usage(FILE *f)
{
	fprintf(f,
"usage: topoml show [--svg OUT] [--all] [--json] [--format auto|conf|json|ibnet]\n"
"                   [--progress|-q] FILE\n"
"A readable description of a site topology; --svg also draws it (switch\n"
"tree, dragonfly groups, torus planes, with node counts).  --json prints\n"
"the same as an object: topology fields and every switch, group or plane.\n"
"Exit 0, 1 for an invalid topology, 2 for a file that cannot be read or\n"
"written or a usage error.\n");
}

static json_object *_set_json(const topoml_topo_t *t, hwloc_const_bitmap_t set)
{
	char *s = topoml_nodeset_format(t, set);
	json_object *o = json_object_new_string(s ? s : "");

	free(s);
	return o;
}

/* show --json: the topology fields and its parts, by family. */
static void _show_json(const topoml_topo_t *t, const char *path)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	int i, k;

	json_object_object_add(o, "file", json_object_new_string(path));
	json_object_object_add(o, "topology", cli_topology_json(t));
	switch (t->family) {
	case TOPOML_FAT_TREE:
		for (i = 0; i < t->nswitches; i++) {
			const struct topoml_switch *s = &t->switches[i];
			json_object *j = json_object_new_object();
			json_object *p = json_object_new_array();

			json_object_object_add(j, "name",
					       json_object_new_string(s->name));
			json_object_object_add(j, "level",
					       json_object_new_int(s->level));
			json_object_object_add(j, "nodes", json_object_new_int(
					hwloc_bitmap_weight(s->desc)));
			json_object_object_add(j, "nodelist",
					       _set_json(t, s->desc));
			for (k = 0; k < s->nparents; k++)
				json_object_array_add(p, json_object_new_string(
					t->switches[s->parents[k]].name));
			json_object_object_add(j, "parents", p);
			if (s->link_speed > 0)
				json_object_object_add(j, "link_speed",
					json_object_new_double(s->link_speed));
			json_object_array_add(a, j);
		}
		json_object_object_add(o, "switches", a);
		break;
	case TOPOML_DRAGONFLY:
		for (i = 0; i < t->ngroups; i++) {
			const struct topoml_group *g = &t->groups[i];
			json_object *j = json_object_new_object();
			json_object *r = json_object_new_array();
			json_object *gl = json_object_new_object();

			json_object_object_add(j, "name",
					       json_object_new_string(g->name));
			json_object_object_add(j, "nodes", json_object_new_int(
					hwloc_bitmap_weight(g->desc)));
			json_object_object_add(j, "nodelist",
					       _set_json(t, g->desc));
			for (k = 0; k < g->nrouters; k++) {
				const struct topoml_switch *s =
					&t->switches[g->routers[k]];
				json_object *rj = json_object_new_object();

				json_object_object_add(rj, "name",
					json_object_new_string(s->name));
				json_object_object_add(rj, "nodes",
					json_object_new_int(s->nnodes));
				json_object_object_add(rj, "nodelist",
					_set_json(t, s->desc));
				json_object_array_add(r, rj);
			}
			json_object_object_add(j, "routers", r);
			for (k = 0; t->global_links && k < t->ngroups; k++) {
				int c = t->global_links[i * t->ngroups + k];

				if (k != i && c > 0)
					json_object_object_add(gl,
						t->groups[k].name,
						json_object_new_int(c));
			}
			json_object_object_add(j, "global_links", gl);
			json_object_array_add(a, j);
		}
		json_object_object_add(o, "groups", a);
		break;
	case TOPOML_TORUS: {
		int X = t->dims[0], Y = t->dims[1], Z = t->dims[2], x, y, z;

		for (z = 0; z < Z; z++) {
			json_object *j = json_object_new_object();
			int count = 0;

			for (y = 0; y < Y; y++)
				for (x = 0; x < X; x++)
					count += t->coord_node[x + X *
							       (y + Y * z)] >= 0;
			json_object_object_add(j, "z", json_object_new_int(z));
			json_object_object_add(j, "nodes",
					       json_object_new_int(count));
			json_object_array_add(a, j);
		}
		json_object_object_add(o, "planes", a);
		break;
	}
	}
	_json_print(o);
}

int cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "svg", required_argument, NULL, 's' },
		{ "all", no_argument, NULL, 'a' },
		{ "format", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		CLI_COMMON_OPTS,
		{ NULL, 0, NULL, 0 }
	};
	enum topoml_format fmt = TOPOML_FMT_AUTO;
	const char *svg = NULL;
	topoml_topo_t *t;
	FILE *f = NULL;
	bool all = false, json = false, quiet = false;
	char sum[512];
	int c, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:af:jqh", opts, NULL)) != -1) {
		if (cli_common_opt(c)) {
			quiet = quiet || c == CLI_OPT_QUIET;
			continue;
		}
		switch (c) {
		case 'j':
			json = true;
			break;
		case 's':
			svg = optarg;
			break;
		case 'a':
			all = true;
			break;
		case 'f':
			if (_format_parse(optarg, &fmt)) {
				cli_err("unknown format '%s'", optarg);
				return 2;
			}
			break;
		case 'h':
			_show_usage(stdout);
			return 0;
		default:
			_show_usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		cli_err(optind < argc ? "one FILE at a time" :
			"no FILE given");
		_show_usage(stderr);
		return 2;
	}
	t = _load(argv[optind], fmt, quiet, &rc);
	if (!t)
		return rc;
	/* an SVG that cannot be written fails before the description */
	if (svg && !(f = cli_out_open(svg))) {
		topoml_free(t);
		return CLI_USAGE;
	}
	topoml_summary(t, sum, sizeof(sum));
	if (json)
		_show_json(t, argv[optind]);
	else
		printf("%s: %s\n", argv[optind], sum);
	switch (json ? -1 : (int)t->family) {
	case TOPOML_FAT_TREE:
		_show_fat_tree(t, all);
		break;
	case TOPOML_DRAGONFLY:
		_show_dragonfly(t, all);
		break;
	case TOPOML_TORUS:
		_show_torus(t, all);
		break;
	}
	if (f) {
		cli_progress_step("drawing %s", svg);
		fflush(stdout);
		if (cli_write_svg(t, f, NULL)) {
			cli_err("%s: cannot draw this topology", svg);
			cli_out_close(f, svg, false);
			rc = CLI_INVALID;
		} else if (cli_out_close(f, svg, true)) {
			rc = CLI_USAGE;
		}
		cli_progress_end();
	}
	topoml_free(t);
	return rc;
}

/* ---- generate ------------------------------------------------------ */

static void _generate_usage(FILE *f)
{
	fprintf(f,
"usage: topoml generate fat-tree --nodes N --per-leaf P [--radix R] [--levels L]\n"
"       topoml generate dragonfly --groups G --routers R --per-router P\n"
"                                 [--arrangement all-to-all|absolute|relative]\n"
"       topoml generate torus --dims XxYxZ [--no-wrap]\n"
"   common: [--prefix NAME] [--format conf|json] [-o|--output OUT]\n"
"           [--progress|-q]\n"
"Nodes are named NAME1..NAMEn (default prefix \"node\").  Default format:\n"
"conf (Slurm topology.conf) for fat-trees, json otherwise; a torus is\n"
"json only.\n"
"Exit 0, 1 for sizes that make no topology, 2 for a usage error or an\n"
"output that cannot be written.\n");
}

static int _int_arg(const char *opt, const char *s, int min, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > INT_MAX) {
		cli_err("--%s: '%s' is not an integer >= %d",
			opt, s, min);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int _dims_arg(const char *s, int d[3])
{
	char extra;

	if (sscanf(s, "%dx%dx%d%c", &d[0], &d[1], &d[2], &extra) != 3 ||
	    d[0] < 1 || d[1] < 1 || d[2] < 1) {
		cli_err("--dims: '%s' is not XxYxZ (each >= 1)",
			s);
		return -1;
	}
	return 0;
}

int cmd_generate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "per-leaf", required_argument, NULL, 'p' },
		{ "radix", required_argument, NULL, 'r' },
		{ "levels", required_argument, NULL, 'l' },
		{ "groups", required_argument, NULL, 'G' },
		{ "routers", required_argument, NULL, 'R' },
		{ "per-router", required_argument, NULL, 'P' },
		{ "arrangement", required_argument, NULL, 'A' },
		{ "dims", required_argument, NULL, 'd' },
		{ "no-wrap", no_argument, NULL, 'W' },
		{ "prefix", required_argument, NULL, 'x' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		CLI_COMMON_OPTS,
		{ NULL, 0, NULL, 0 }
	};
	int nodes = 0, per_leaf = 0, radix = 0, levels = 0;
	int groups = 0, routers = 0, per_router = 0, dims[3] = { 0, 0, 0 };
	enum topoml_df_arrangement arr = TOPOML_DF_ALL_TO_ALL;
	const char *family, *prefix = NULL, *out = NULL, *format = NULL;
	topoml_topo_t *t = NULL;
	bool wrap = true;
	FILE *f = stdout;
	int c, rc;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		if (argc < 2)
			cli_err("no family given: fat-tree, dragonfly or torus");
		_generate_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	family = argv[1];
	argv[1] = argv[0];	/* "topoml generate" in getopt's messages */
	optind = 1;
	while ((c = getopt_long(argc - 1, argv + 1, "o:qh", opts, NULL)) != -1) {
		rc = 0;
		if (cli_common_opt(c))
			continue;
		switch (c) {
		case 'n':
			rc = _int_arg("nodes", optarg, 1, &nodes);
			break;
		case 'p':
			rc = _int_arg("per-leaf", optarg, 1, &per_leaf);
			break;
		case 'r':
			rc = _int_arg("radix", optarg, 2, &radix);
			break;
		case 'l':
			rc = _int_arg("levels", optarg, 1, &levels);
			break;
		case 'G':
			rc = _int_arg("groups", optarg, 1, &groups);
			break;
		case 'R':
			rc = _int_arg("routers", optarg, 1, &routers);
			break;
		case 'P':
			rc = _int_arg("per-router", optarg, 1, &per_router);
			break;
		case 'A':
			if (!strcmp(optarg, "all-to-all"))
				arr = TOPOML_DF_ALL_TO_ALL;
			else if (!strcmp(optarg, "absolute"))
				arr = TOPOML_DF_ABSOLUTE;
			else if (!strcmp(optarg, "relative"))
				arr = TOPOML_DF_RELATIVE;
			else {
				cli_err("--arrangement: '%s' is not all-to-all, absolute or relative",
					optarg);
				rc = -1;
			}
			break;
		case 'd':
			rc = _dims_arg(optarg, dims);
			break;
		case 'W':
			wrap = false;
			break;
		case 'x':
			prefix = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			_generate_usage(stdout);
			return 0;
		default:
			_generate_usage(stderr);
			return 2;
		}
		if (rc)
			return 2;
	}
	if (optind != argc - 1) {
		cli_err("unexpected argument '%s'", argv[optind + 1]);
		_generate_usage(stderr);
		return 2;
	}
	if (format && strcmp(format, "conf") && strcmp(format, "json")) {
		cli_err("--format: '%s' is not conf or json",
			format);
		return 2;
	}
	cli_progress_step("building the %s", family);
	if (!strcmp(family, "fat-tree")) {
		if (!nodes || !per_leaf) {
			cli_err("fat-tree: --nodes and --per-leaf are required");
			return 2;
		}
		t = topoml_gen_fat_tree(prefix, nodes, per_leaf, radix, levels);
	} else if (!strcmp(family, "dragonfly")) {
		if (!groups || !routers || !per_router) {
			cli_err("dragonfly: --groups, --routers and --per-router are required");
			return 2;
		}
		if ((long)groups * routers * per_router > INT_MAX / 2) {
			cli_err("dragonfly: too many nodes");
			return 2;
		}
		t = topoml_gen_dragonfly(prefix, groups, routers, per_router,
					 arr);
		format = format ? format : "json";
	} else if (!strcmp(family, "torus")) {
		if (!dims[0]) {
			cli_err("torus: --dims XxYxZ is required");
			return 2;
		}
		if (format && !strcmp(format, "conf")) {
			cli_err("torus: topology.conf cannot describe a torus: use --format json");
			return 2;
		}
		t = topoml_gen_torus(prefix, dims[0], dims[1], dims[2], wrap);
		format = "json";
	} else {
		cli_err("unknown family '%s' (fat-tree, dragonfly, torus)",
			family);
		return 2;
	}
	if (!t) {
		cli_err("%s: cannot build this topology (sizes too large or inconsistent)",
			family);
		return 1;
	}
	if (out && !(f = fopen(out, "w"))) {
		cli_err("%s: %s", out, strerror(errno));
		topoml_free(t);
		return 2;
	}
	if (out)
		cli_progress_step("writing %s", out);
	else
		cli_progress_end();	/* the file goes to the terminal */
	rc = (format && !strcmp(format, "json")) ? topoml_write_json(t, f) :
						   topoml_write_conf(t, f);
	if (out && fclose(f))
		rc = -1;
	cli_progress_end();
	if (rc) {
		cli_err("%s: write failed",
			out ? out : "stdout");
	} else if (out) {
		char sum[512];

		topoml_summary(t, sum, sizeof(sum));
		printf("%s: %s\n", out, sum);
	}
	topoml_free(t);
	return rc ? 2 : 0;
}
