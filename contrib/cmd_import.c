/*
 * topoml import-ib: ibnetdiscover output -> topology.conf (or JSON).
 * The rules (hosts from node descriptions, leaves grouped into scalable
 * units, levels from the wiring) are in topology/load_ib.c and
 * doc/import-ib.txt.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "loaders.h"

static void _import_usage(FILE *f)
{
	fprintf(f,
"usage: topoml import-ib IBNETDISCOVER_FILE [--format conf|json] [-o OUT]\n"
"\n"
"Turn the output of ibnetdiscover into a fat-tree site file: Slurm's\n"
"topology.conf (default) or topoml JSON, on stdout or into OUT.\n"
"Hosts come from CA node descriptions (\"HOST HCA-1\", \"HOST mlx5_0\");\n"
"leaves that share hosts (rail-optimised clusters) become one unit.\n"
"Warnings (what had to be decided) go to stderr.\n"
"\n"
"  -f, --format conf|json   output format (default conf)\n"
"  -o, --output OUT         write to OUT instead of stdout\n"
"  -q, --quiet              no warnings\n"
"  -h, --help               this text\n");
}

int cmd_import_ib(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	topoml_errors_t err = { 0 }, warn = { 0 };
	topoml_topo_t *t = NULL;
	const char *out = NULL;
	bool json = false, quiet = false;
	FILE *f = stdout;
	int c, i, rc = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "json")) {
				json = true;
			} else if (strcmp(optarg, "conf")) {
				fprintf(stderr, "topoml import-ib: --format "
					"'%s': use conf or json\n", optarg);
				return 2;
			}
			break;
		case 'o':
			out = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			_import_usage(stdout);
			return 0;
		default:
			_import_usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		_import_usage(stderr);
		return 2;
	}
	t = topoml_load_ibnet_ex(argv[optind], &err, &warn);
	if (!quiet)
		for (i = 0; i < warn.n; i++)
			fprintf(stderr, "warning: %s\n", warn.msg[i]);
	if (!t) {
		topoml_errors_print(&err, stderr);
		goto out;
	}
	if (out && !(f = fopen(out, "w"))) {
		fprintf(stderr, "topoml import-ib: %s: %s\n", out,
			strerror(errno));
		goto out;
	}
	if ((json ? topoml_write_json(t, f) : topoml_write_conf(t, f)) ||
	    fflush(f)) {
		fprintf(stderr, "topoml import-ib: writing %s failed\n",
			out ? out : "stdout");
		goto out;
	}
	rc = 0;
out:
	if (f && f != stdout && fclose(f) && !rc) {
		fprintf(stderr, "topoml import-ib: %s: %s\n", out,
			strerror(errno));
		rc = 1;
	}
	topoml_free(t);
	topoml_errors_clear(&err);
	topoml_errors_clear(&warn);
	return rc;
}
