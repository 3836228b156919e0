/*
 * topoml command-line tool: one function per subcommand.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_CLI_H
#define TOPOML_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "topoml.h"

/*
 * Exit status of every command: done, invalid input or cannot place,
 * usage error or a file that cannot be read or written.
 */
enum { CLI_OK = 0, CLI_INVALID = 1, CLI_USAGE = 2 };

/* The running command, for the "topoml COMMAND: " prefix of messages. */
extern const char *cli_cmd;

/* Progress on stderr: on a terminal unless --quiet, always with --progress. */
enum cli_progress { CLI_PROGRESS_AUTO, CLI_PROGRESS_ON, CLI_PROGRESS_OFF };
extern enum cli_progress cli_progress_mode;

/* getopt values of --progress and --quiet/-q in every command. */
#define CLI_OPT_PROGRESS 0x1000
#define CLI_OPT_QUIET 'q'
#define CLI_COMMON_OPTS \
	{ "progress", no_argument, NULL, CLI_OPT_PROGRESS }, \
	{ "quiet", no_argument, NULL, CLI_OPT_QUIET }
/* 1 when c was --progress or --quiet (and is now applied). */
int cli_common_opt(int c);

/* "topoml COMMAND: message" on stderr (clears a progress line first). */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Each message of e, prefixed, after what (may be NULL). */
void cli_errors(const topoml_errors_t *e, const char *what);
/* 0 when path can be opened for reading, else -1 with a message. */
int cli_readable(const char *path);
/*
 * Open an output file (--svg) before the work, so that a path that cannot
 * be written fails the command before it prints or computes anything: NULL
 * with a message.  cli_out_close: 0, or -1 with a message when writing or
 * closing failed; with keep false the file is removed (the command failed
 * before writing it) when it is still the empty regular file opened here.
 */
FILE *cli_out_open(const char *path);
int cli_out_close(FILE *f, const char *path, bool keep);

/*
 * What a slurm.conf defines, for import-ib --slurm-conf and check
 * --site-conf --slurm-conf: the nodes of t its NodeName= lines name (host
 * lists expanded, DEFAULT ignored; names t lacks skipped), the names of
 * its PartitionName= lines and the keys that choose the integration.
 */
struct cli_slurm_conf {
	int node_lines;		/* NodeName= lines but DEFAULT */
	hwloc_bitmap_t nodes;	/* nodes of t (empty when t is NULL) */
	int nparts;
	char **parts;
	/* the keys that choose topoml's integration: the last value of
	 * each (Slurm's rule), "" when absent, and its line */
	struct cli_conf_key {
		char value[256];
		int line;
	} select_type, topology_plugin, topology_param, select_params;
};
/* 0, or -1 with a message (cannot be read, no memory); t may be NULL. */
int cli_slurm_conf_read(const char *path, const topoml_topo_t *t,
			struct cli_slurm_conf *sc);
void cli_slurm_conf_clear(struct cli_slurm_conf *sc);

/* "s" unless n is 1: "1 node", "2 nodes". */
static inline const char *cli_plural(long n)
{
	return n == 1 ? "" : "s";
}

/*
 * Width in pixels of s in the SVGs' sans-serif at size px: a bound for the
 * fonts renderers pick (DejaVu Sans, Liberation Sans, Arial average 0.55 to
 * 0.6 em a character), so that a picture is sized to hold its text.
 */
static inline int cli_text_w(const char *s, double size)
{
	return (int)(strlen(s) * size * 0.62 + 0.999);
}

/* "topoml, slurm-tree, ...": every policy libtopoml knows, for help texts
 * and errors (one list: the engine's name table). */
const char *cli_policy_list(void);
/* A progress line, at most 10 a second (a terminal) or 1 (a log). */
void cli_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, never throttled: the start of a phase. */
void cli_progress_step(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
/* Erase the progress line on a terminal. */
void cli_progress_end(void);

struct topoml_cmd {
	const char *name;
	int (*run)(int argc, char **argv);	/* argv[0] is the command */
	const char *summary;
};

/*
 * Load a site file or print its errors to stderr; NULL on failure, with
 * *rc (may be NULL) CLI_USAGE when it cannot be read, else CLI_INVALID.
 */
topoml_topo_t *cli_load_topology(const char *path, int *rc);

/* The topology's fields for --json: family, nodes, switches, ... */
struct json_object *cli_topology_json(const topoml_topo_t *t);

/*
 * SVG picture of t; node_job (job id per node, 0 = idle) may be NULL.
 * CLI_JOB_NEW marks the job being placed, CLI_JOB_BUSY nodes busy with an
 * unknown job.  title NULL: the topology's summary.
 */
#define CLI_JOB_NEW (UINT32_MAX - 1)
#define CLI_JOB_BUSY UINT32_MAX
int cli_write_svg(const topoml_topo_t *t, FILE *f, const uint32_t *node_job);
int cli_write_svg_titled(const topoml_topo_t *t, FILE *f,
			 const uint32_t *node_job, const char *title);

int cmd_check(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_import_ib(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_place(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_health(int argc, char **argv);

#endif
