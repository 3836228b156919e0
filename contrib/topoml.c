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
	{ "plan", cmd_plan,
	  "fastest training layouts (TP, PP, DP, ...) on a machine" },
	{ "health", cmd_health,
	  "nodes jobs reported slow, and what select/topoml did" },
	{ NULL, NULL, NULL },
};

static void _usage(FILE *f)
{
	fprintf(f, "usage: topoml COMMAND [OPTIONS] ...\n\ncommands:\n");
	for (const struct topoml_cmd *c = commands; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fprintf(f, "  %-10s %s\n", "help", "a command's options and exit "
		"status: topoml help COMMAND");
	fprintf(f, "\n'topoml COMMAND --help' is 'topoml help COMMAND'; "
		"'topoml --version' (-V)\nprints the version; topoml(1) for "
		"details.\n"
		"Exit status: 0 done, 1 invalid input (a finding), 2 usage "
		"error or a file\nthat cannot be read or written.\n");
}

static const struct topoml_cmd *_find(const char *name)
{
	for (const struct topoml_cmd *c = commands; c->name; c++)
		if (!strcmp(name, c->name))
			return c;
	return NULL;
}

/* Run c with argv[0] "topoml NAME", which getopt's own messages show. */
static int _run(const struct topoml_cmd *c, int argc, char **argv)
{
	char name[64];
	int rc;

	snprintf(name, sizeof(name), "topoml %s", c->name);
	argv[0] = name;
	cli_cmd = c->name;
	rc = c->run(argc, argv);
	cli_progress_end();
	return rc;
}

int main(int argc, char **argv)
{
	const struct topoml_cmd *c;

	/* place --policy slurm-tree etc.: Slurm's algorithms, which
	 * libtopoml_sim holds (the plugins link the core only) */
	topoml_sim_register_baselines();
	if (argc < 2) {
		cli_err("no command given");
		_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    (!strcmp(argv[1], "help") && argc == 2)) {
		_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "help")) {
		/* topoml help CMD: CMD --help */
		char *help[] = { argv[2], "--help", NULL };

		if (argc > 3 || !(c = _find(argv[2]))) {
			if (argc > 3)
				cli_err("help: one command at a time");
			else
				cli_err("help: unknown command '%s'", argv[2]);
			_usage(stderr);
			return 2;
		}
		return _run(c, 2, help);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("topoml %s\n", PACKAGE_VERSION);
		return 0;
	}
	if ((c = _find(argv[1])))
		return _run(c, argc - 1, argv + 1);
	cli_err("unknown command '%s'", argv[1]);
	_usage(stderr);
	return 2;
}
