/*
 * topoml import-ib: ibnetdiscover output -> topology.conf (or JSON).
 * The rules (hosts from node descriptions, leaves grouped into scalable
 * units, levels from the wiring) are in topology/load/load_ib.c and
 * doc/import-ib.txt.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "topoml/load.h"
#include "topoml/build.h"
#include "sim.h"

static void _import_usage(FILE *f)
{
	fprintf(f,
"usage: topoml import-ib IBNETDISCOVER_FILE [--format conf|json | --json]\n"
"                        [-o OUT]\n"
"                        [--hosts PATTERN]... [--slurm-conf FILE]\n"
"\n"
"Turn the output of ibnetdiscover into a fat-tree site file: Slurm's\n"
"topology.conf (default) or topoml JSON, on stdout or into OUT.\n"
"Hosts come from CA node descriptions (\"HOST HCA-1\", \"HOST mlx5_0\");\n"
"leaves that share hosts (rail-optimised clusters) become one unit.\n"
"Warnings (what had to be decided, host names that cannot be cluster\n"
"nodes such as \"localhost\" or \"ubuntu\") go to stderr.\n"
"\n"
"  -f, --format conf|json   output format (default conf)\n"
"  -j, --json               the same as --format json\n"
"  -o, --output OUT         write to OUT instead of stdout\n"
"  -H, --hosts PATTERN      keep only hosts matching this shell pattern\n"
"                           (\"dgx-*\"; repeatable: any of them)\n"
"  -S, --slurm-conf FILE    keep only hosts slurm.conf defines (NodeName=)\n"
"  -q, --quiet              no warnings, no progress\n"
"      --progress           progress on stderr even when not a terminal\n"
"  -h, --help               this text\n"
"Exit 0, 1 for an invalid file or no host left, 2 for a usage error or a\n"
"file that cannot be read or written.\n");
}

/* Default or placeholder host names no cluster node has. */
static const char *_not_a_node(const char *name)
{
	static const char *const defaults[] = {
		"localhost", "localhost.localdomain", "ubuntu", "debian",
		"centos", "rocky", "rhel", "almalinux", "fedora", "sles",
		"(none)", "none", "unknown", "hostname", "linux", NULL
	};
	const char *p;

	for (int i = 0; defaults[i]; i++)
		if (!strcasecmp(name, defaults[i]))
			return "a distribution's default host name";
	if (!strncasecmp(name, "localhost", 9))
		return "a default host name";
	for (p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' &&
		    *p != '.')
			return "not a valid host name";
	if (*name == '-' || *name == '.')
		return "not a valid host name";
	{
		char low[256];
		size_t i;

		for (i = 0; name[i] && i < sizeof(low) - 1; i++)
			low[i] = tolower((unsigned char)name[i]);
		low[i] = '\0';
		if (strstr(low, "ufm") || strstr(low, "opensm"))
			return "looks like a fabric-manager host";
	}
	return NULL;
}

/*
 * The same fabric with only the hosts in keep: switches left without a
 * host below them go too (Slurm's topology.conf has no use for them).
 */
static topoml_topo_t *_filtered(const topoml_topo_t *t,
				hwloc_const_bitmap_t keep, topoml_errors_t *err)
{
	topoml_topo_t *n = topoml_new(t->family, t->source);
	int *map = malloc((t->nswitches ? t->nswitches : 1) * sizeof(int));
	int i, k, v;

	if (!n || !map)
		goto fail;
	for (i = 0; i < t->nswitches; i++) {
		const struct topoml_switch *s = &t->switches[i];

		map[i] = -1;
		if (!hwloc_bitmap_intersects(s->desc, keep))
			continue;
		map[i] = topoml_add_switch(n, s->name, s->line, err);
		if (map[i] < 0)
			goto fail;
		n->switches[map[i]].link_speed = s->link_speed;
	}
	for (i = 0; i < t->nswitches; i++)
		for (k = 0; map[i] >= 0 && k < t->switches[i].nchildren; k++) {
			int c = t->switches[i].children[k];

			if (map[c] >= 0)
				topoml_link_switches(n, map[i], map[c]);
		}
	hwloc_bitmap_foreach_begin(v, keep)
		int idx = topoml_add_node(n, t->nodes[v].name, t->nodes[v].line,
					  err);

		if (idx < 0 || t->nodes[v].leaf < 0 ||
		    topoml_attach_node(n, map[t->nodes[v].leaf], idx, err))
			goto fail;
	hwloc_bitmap_foreach_end();
	if (topoml_finalize(n, err))
		goto fail;
	free(map);
	return n;
fail:
	free(map);
	topoml_free(n);
	return NULL;
}

int cmd_import_ib(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "hosts", required_argument, NULL, 'H' },
		{ "slurm-conf", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		CLI_COMMON_OPTS,
		{ NULL, 0, NULL, 0 },
	};
	const char *slurm_conf = NULL, **pat = NULL;
	hwloc_bitmap_t keep = NULL;
	int npat = 0;
	topoml_errors_t err = { 0 }, warn = { 0 };
	topoml_topo_t *t = NULL;
	const char *out = NULL;
	bool json = false, quiet = false;
	FILE *f = stdout;
	int c, i, rc = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:jo:H:S:qh", opts, NULL)) != -1) {
		if (cli_common_opt(c)) {
			quiet = quiet || c == CLI_OPT_QUIET;
			continue;
		}
		switch (c) {
		case 'H': {
			const char **np = realloc(pat, (npat + 1) * sizeof(*pat));

			if (!np) {
				free(pat);
				return 1;
			}
			pat = np;
			pat[npat++] = optarg;
			break;
		}
		case 'S':
			slurm_conf = optarg;
			break;
		case 'f':
			/* the last of --format and --json wins */
			if (!strcmp(optarg, "json") ||
			    !strcmp(optarg, "conf")) {
				json = !strcmp(optarg, "json");
			} else {
				cli_err("--format '%s': use conf or json",
					optarg);
				free(pat);
				return 2;
			}
			break;
		case 'j':
			json = true;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			_import_usage(stdout);
			free(pat);
			return 0;
		default:
			_import_usage(stderr);
			free(pat);
			return 2;
		}
	}
	if (optind != argc - 1) {
		cli_err(optind < argc ? "one IBNETDISCOVER_FILE at a time" :
			"no IBNETDISCOVER_FILE given");
		_import_usage(stderr);
		free(pat);
		return 2;
	}
	if (cli_readable(argv[optind]) ||
	    (slurm_conf && cli_readable(slurm_conf))) {
		free(pat);
		return 2;
	}
	cli_progress_step("reading %s", argv[optind]);
	t = topoml_load_ibnet_ex(argv[optind], &err, &warn);
	if (!quiet)
		cli_errors(&warn, "warning: ");
	if (!t) {
		cli_errors(&err, NULL);
		goto out;
	}
	if (npat || slurm_conf) {
		topoml_topo_t *n;
		int v;

		keep = hwloc_bitmap_alloc();
		if (!keep)
			goto out;
		if (npat)
			for (v = 0; v < t->nnodes; v++)
				for (i = 0; i < npat; i++)
					if (!fnmatch(pat[i], t->nodes[v].name, 0))
						hwloc_bitmap_set(keep, v);
		if (slurm_conf) {
			struct cli_slurm_conf sc;

			if (cli_slurm_conf_read(slurm_conf, t, &sc)) {
				rc = 2;
				goto out;
			}
			/* both filters: a host must pass both */
			if (npat)
				hwloc_bitmap_and(keep, keep, sc.nodes);
			else
				hwloc_bitmap_copy(keep, sc.nodes);
			cli_slurm_conf_clear(&sc);
		}
		if (hwloc_bitmap_iszero(keep)) {
			cli_err("no host of %s passes %s%s%s", argv[optind],
				npat ? "--hosts" : "",
				npat && slurm_conf ? " and " : "",
				slurm_conf ? "--slurm-conf" : "");
			goto out;
		}
		if (!quiet && hwloc_bitmap_weight(keep) < t->nnodes) {
			hwloc_bitmap_t gone = hwloc_bitmap_alloc();
			char *list;

			hwloc_bitmap_set_range(gone, 0, t->nnodes - 1);
			hwloc_bitmap_andnot(gone, gone, keep);
			list = topoml_nodeset_format(t, gone);
			cli_err("warning: left out %d host%s: %s",
				hwloc_bitmap_weight(gone),
				hwloc_bitmap_weight(gone) == 1 ? "" : "s",
				list ? list : "?");
			free(list);
			hwloc_bitmap_free(gone);
		}
		topoml_errors_clear(&err);
		n = _filtered(t, keep, &err);
		if (!n) {
			cli_errors(&err, NULL);
			goto out;
		}
		topoml_free(t);
		t = n;
	}
	for (i = 0; !quiet && i < t->nnodes; i++) {
		const char *why = _not_a_node(t->nodes[i].name);

		if (why)
			cli_err("warning: host '%s' cannot be a cluster node "
				"(%s): leave it out with --hosts or --slurm-conf",
				t->nodes[i].name, why);
	}
	if (out && !(f = fopen(out, "w"))) {
		cli_err("%s: %s", out, strerror(errno));
		rc = 2;
		goto out;
	}
	if (out)
		cli_progress_step("writing %s", out);
	else
		cli_progress_end();	/* the file goes to the terminal */
	if ((json ? topoml_write_json(t, f) : topoml_write_conf(t, f)) ||
	    fflush(f)) {
		cli_err("writing %s failed", out ? out : "stdout");
		rc = 2;
		goto out;
	}
	rc = 0;
out:
	if (f && f != stdout && fclose(f) && !rc) {
		cli_err("%s: %s", out, strerror(errno));
		rc = 2;
	}
	hwloc_bitmap_free(keep);
	free(pat);
	topoml_free(t);
	topoml_errors_clear(&err);
	topoml_errors_clear(&warn);
	return rc;
}
