/*
 * topoml: check, show, import, generate site topologies; place jobs and
 * simulate traces with the same engine select/topoml runs in slurmctld.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "topoml_config.h"
#include "cli.h"
#include "sim.h"

static const struct topoml_cmd commands[] = {
	/* COMMANDS: one row per subcommand, in the order of --help */
	{ "check", cmd_check, "validate site topology files, one summary line each" },
	{ "show", cmd_show, "describe a topology; --svg draws it" },
	{ "import-ib", cmd_import_ib,
	  "ibnetdiscover output -> topology.conf or JSON" },
	{ "generate", cmd_generate,
	  "synthetic fat-tree, dragonfly or torus site files" },
	{ "place", cmd_place,
	  "where a job of N nodes goes, per policy, with its score" },
	{ "sim", cmd_sim,
	  "replay a job trace (FCFS + backfill) with each policy" },
	{ NULL, NULL, NULL },
};

static void _usage(FILE *f)
{
	fprintf(f, "usage: topoml COMMAND [OPTIONS] ...\n\ncommands:\n");
	for (const struct topoml_cmd *c = commands; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fprintf(f, "\n'topoml COMMAND --help' for a command's options; "
		"topoml(1) for details.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("topoml %s\n", PACKAGE_VERSION);
		return 0;
	}
	/* place --policy slurm-tree etc.: Slurm's algorithms, which
	 * libtopoml_sim holds (the plugins link the core only) */
	topoml_sim_register_baselines();
	for (const struct topoml_cmd *c = commands; c->name; c++)
		if (!strcmp(argv[1], c->name)) {
			int rc;

			cli_cmd = c->name;
			rc = c->run(argc - 1, argv + 1);
			cli_progress_end();
			return rc;
		}
	cli_err("unknown command '%s'", argv[1]);
	_usage(stderr);
	return 2;
}
