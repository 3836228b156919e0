/*
 * topoml check, show, generate: validate, describe and draw site topology
 * files, and write synthetic ones of any size.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model_int.h"
#include "loaders.h"

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

/* Errors (and warnings, unless quiet) go to stderr. */
static topoml_topo_t *_load(const char *path, enum topoml_format fmt,
			    bool quiet)
{
	topoml_errors_t err = { 0 }, warn = { 0 };
	topoml_topo_t *t = topoml_load_ex(path, fmt, &err, &warn);
	int i;

	for (i = 0; !quiet && i < warn.n; i++)
		fprintf(stderr, "warning: %s\n", warn.msg[i]);
	if (!t) {
		if (!err.n)
			fprintf(stderr, "%s: cannot load topology\n", path);
		topoml_errors_print(&err, stderr);
	}
	topoml_errors_clear(&err);
	topoml_errors_clear(&warn);
	return t;
}

topoml_topo_t *cli_load_topology(const char *path)
{
	return _load(path, TOPOML_FMT_AUTO, false);
}

/* ---- check --------------------------------------------------------- */

static void _check_usage(FILE *f)
{
	fprintf(f,
"usage: topoml check [-q] [--format auto|conf|json|ibnet] FILE...\n"
"       topoml check [-q] --site-conf topoml.conf [FILE...]\n"
"Validate site topology files: one summary line per file and exit 0, or\n"
"every error found (FILE:LINE[:COL]: what is wrong) and exit 1.\n"
"Warnings (what Slurm accepts but only logs) go to stderr; -q hides them.\n"
"--site-conf also validates select/topoml's topoml.conf and the topology\n"
"file it names, as slurmctld will read them.\n");
}

/* topoml.conf and the topology it names, as select/topoml loads them. */
static int _check_site_conf(const char *path)
{
	struct topoml_siteconf sc;
	topoml_errors_t err = { 0 };
	topoml_topo_t *t = NULL;
	char *dir = strdup(path), *slash, sum[512];
	int rc = 1;

	if (!dir)
		return 1;
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	if (topoml_siteconf_read(path, &sc, &err))
		goto out;
	if (sc.placement &&
	    !(t = topoml_siteconf_load_topology(&sc, dir, &err)))
		goto out;
	printf("%s: DefaultHint=%s Placement=%s, %d partition override(s)\n",
	       path, topoml_hint_name(sc.default_hint),
	       sc.placement ? "topoml" : "off", sc.nparts);
	if (t) {
		char *topo = topoml_siteconf_topology_path(&sc, dir);

		topoml_summary(t, sum, sizeof(sum));
		printf("%s: %s\n", topo ? topo : "?", sum);
		free(topo);
	}
	rc = 0;
out:
	topoml_errors_print(&err, stderr);
	topoml_errors_clear(&err);
	if (t)
		topoml_free(t);
	topoml_siteconf_clear(&sc);
	free(dir);
	return rc;
}

int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "site-conf", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	enum topoml_format fmt = TOPOML_FMT_AUTO;
	const char *site_conf = NULL;
	bool quiet = false;
	int c, i, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:qc:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			site_conf = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'f':
			if (_format_parse(optarg, &fmt)) {
				fprintf(stderr, "topoml check: unknown format '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			_check_usage(stdout);
			return 0;
		default:
			_check_usage(stderr);
			return 2;
		}
	}
	if (optind >= argc && !site_conf) {
		_check_usage(stderr);
		return 2;
	}
	if (site_conf)
		rc = _check_site_conf(site_conf);
	for (i = optind; i < argc; i++) {
		topoml_topo_t *t = _load(argv[i], fmt, quiet);
		char sum[512];

		if (!t) {
			rc = 1;
			continue;
		}
		topoml_summary(t, sum, sizeof(sum));
		printf("%s: %s\n", argv[i], sum);
		topoml_free(t);
	}
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

	printf("%*s%s (level %d, %d nodes", 2 * depth, "", s->name, s->level,
	       hwloc_bitmap_weight(s->desc));
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
		list = topoml_names_format(names, n, false);
		printf("level %d: %d %s%s, %d", l, n, l ? "switch" : "leaf switch",
		       n == 1 ? "" : "es", lo);
		if (hi != lo)
			printf("-%d", hi);
		printf(" nodes below each: %s\n", list ? list : "?");
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
		printf("group %s: %d routers, %d nodes, %d global links to %d groups: ",
		       gr->name, gr->nrouters, hwloc_bitmap_weight(gr->desc),
		       links, peers);
		_print_set(t, gr->desc);
		printf("\n");
		if (!all && t->nswitches > SHOW_TREE_MAX)
			continue;
		for (k = 0; k < gr->nrouters; k++) {
			const struct topoml_switch *s =
				&t->switches[gr->routers[k]];

			printf("  router %s: %d nodes: ", s->name, s->nnodes);
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
		printf("plane z=%d: %d of %d positions hold nodes", z, count,
		       X * Y);
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
"usage: topoml show [--svg OUT] [--all] [--format auto|conf|json|ibnet] FILE\n"
"A readable description of a site topology; --svg also draws it (switch\n"
"tree, dragonfly groups, torus planes, with node counts).\n");
}

int cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "svg", required_argument, NULL, 's' },
		{ "all", no_argument, NULL, 'a' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	enum topoml_format fmt = TOPOML_FMT_AUTO;
	const char *svg = NULL;
	topoml_topo_t *t;
	bool all = false;
	char sum[512];
	int c, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:af:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			svg = optarg;
			break;
		case 'a':
			all = true;
			break;
		case 'f':
			if (_format_parse(optarg, &fmt)) {
				fprintf(stderr, "topoml show: unknown format '%s'\n",
					optarg);
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
		_show_usage(stderr);
		return 2;
	}
	t = _load(argv[optind], fmt, false);
	if (!t)
		return 1;
	topoml_summary(t, sum, sizeof(sum));
	printf("%s: %s\n", argv[optind], sum);
	switch (t->family) {
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
	if (svg) {
		FILE *f = fopen(svg, "w");

		if (!f || cli_write_svg(t, f, NULL) || ferror(f)) {
			fprintf(stderr, "topoml show: %s: %s\n", svg,
				strerror(errno ? errno : EIO));
			rc = 1;
		}
		if (f && fclose(f) && !rc) {
			fprintf(stderr, "topoml show: %s: %s\n", svg,
				strerror(errno));
			rc = 1;
		}
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
"   common: [--prefix NAME] [--format conf|json] [-o OUT]\n"
"Nodes are named NAME1..NAMEn (default prefix \"node\").  Default format:\n"
"conf (Slurm topology.conf) for fat-trees, json otherwise; a torus is\n"
"json only.\n");
}

static int _int_arg(const char *opt, const char *s, int min, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > INT_MAX) {
		fprintf(stderr, "topoml generate: --%s: '%s' is not an integer >= %d\n",
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
		fprintf(stderr, "topoml generate: --dims: '%s' is not XxYxZ (each >= 1)\n",
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
		_generate_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	family = argv[1];
	optind = 1;
	while ((c = getopt_long(argc - 1, argv + 1, "o:h", opts, NULL)) != -1) {
		rc = 0;
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
				fprintf(stderr, "topoml generate: --arrangement: '%s' is not all-to-all, absolute or relative\n",
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
		_generate_usage(stderr);
		return 2;
	}
	if (format && strcmp(format, "conf") && strcmp(format, "json")) {
		fprintf(stderr, "topoml generate: --format: '%s' is not conf or json\n",
			format);
		return 2;
	}
	if (!strcmp(family, "fat-tree")) {
		if (!nodes || !per_leaf) {
			fprintf(stderr, "topoml generate fat-tree: --nodes and --per-leaf are required\n");
			return 2;
		}
		t = topoml_gen_fat_tree(prefix, nodes, per_leaf, radix, levels);
	} else if (!strcmp(family, "dragonfly")) {
		if (!groups || !routers || !per_router) {
			fprintf(stderr, "topoml generate dragonfly: --groups, --routers and --per-router are required\n");
			return 2;
		}
		if ((long)groups * routers * per_router > INT_MAX / 2) {
			fprintf(stderr, "topoml generate dragonfly: too many nodes\n");
			return 2;
		}
		t = topoml_gen_dragonfly(prefix, groups, routers, per_router,
					 arr);
		format = format ? format : "json";
	} else if (!strcmp(family, "torus")) {
		if (!dims[0]) {
			fprintf(stderr, "topoml generate torus: --dims XxYxZ is required\n");
			return 2;
		}
		if (format && !strcmp(format, "conf")) {
			fprintf(stderr, "topoml generate torus: topology.conf cannot describe a torus: use --format json\n");
			return 2;
		}
		t = topoml_gen_torus(prefix, dims[0], dims[1], dims[2], wrap);
		format = "json";
	} else {
		fprintf(stderr, "topoml generate: unknown family '%s' (fat-tree, dragonfly, torus)\n",
			family);
		return 2;
	}
	if (!t) {
		fprintf(stderr, "topoml generate %s: cannot build this topology (sizes too large or inconsistent)\n",
			family);
		return 1;
	}
	if (out && !(f = fopen(out, "w"))) {
		fprintf(stderr, "topoml generate: %s: %s\n", out, strerror(errno));
		topoml_free(t);
		return 1;
	}
	rc = (format && !strcmp(format, "json")) ? topoml_write_json(t, f) :
						   topoml_write_conf(t, f);
	if (out && fclose(f))
		rc = -1;
	if (rc) {
		fprintf(stderr, "topoml generate: %s: write failed\n",
			out ? out : "stdout");
	} else if (out) {
		char sum[512];

		topoml_summary(t, sum, sizeof(sum));
		printf("%s: %s\n", out, sum);
	}
	topoml_free(t);
	return rc ? 1 : 0;
}
