/*
 * What every topoml command shares: messages prefixed "topoml COMMAND:",
 * the exit-status convention, and progress on stderr.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "topoml/load.h"
#include "util/util.h"	/* topoml__open_regular: files the CLI opens */

const char *cli_cmd = "";
enum cli_progress cli_progress_mode = CLI_PROGRESS_AUTO;

static bool _progress_on, _progress_tty, _progress_shown;
static double _progress_last;

static void _prefix(FILE *f)
{
	fprintf(f, "topoml%s%s: ", *cli_cmd ? " " : "", cli_cmd);
}

/*
 * Messages carry names from files and arguments (a node, a path, a key),
 * which may be someone else's: each line escaped (topoml_log_vformat),
 * so that none reaches the terminal as a control sequence or a line of
 * its own.
 */
#define CLI_LINE 2048

void cli_err(const char *fmt, ...)
{
	char line[CLI_LINE];
	va_list ap;

	cli_progress_end();
	va_start(ap, fmt);
	topoml_log_vformat(line, sizeof(line), fmt, ap);
	va_end(ap);
	_prefix(stderr);
	fprintf(stderr, "%s\n", line);
}

void cli_errors(const topoml_errors_t *e, const char *what)
{
	int i;

	if (!e)
		return;
	cli_progress_end();
	for (i = 0; i < e->n && i < 20; i++) {
		char line[CLI_LINE];

		_prefix(stderr);
		fprintf(stderr, "%s\n",
			topoml_log_format(line, sizeof(line), "%s%s",
					  what ? what : "", e->msg[i]));
	}
	if (e->n > 20) {
		_prefix(stderr);
		fprintf(stderr, "... and %d more\n", e->n - 20);
	}
}

int cli_readable(const char *path)
{
	/* a directory opens for reading too, and then reads as nothing */
	int fd = topoml__open_regular(path);

	if (fd < 0) {
		cli_err("%s: %s", path, topoml__open_error(errno));
		return -1;
	}
	close(fd);
	return 0;
}

FILE *cli_out_open(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		cli_err("%s: %s", path, strerror(errno));
	return f;
}

int cli_out_close(FILE *f, const char *path, bool keep)
{
	int bad = ferror(f), e = bad ? EIO : 0;
	struct stat fs, ps;
	bool mine;

	/* only the empty regular file this command opened goes: never
	 * /dev/null, a symbolic link, or what another process put there */
	mine = !keep && !fstat(fileno(f), &fs) && S_ISREG(fs.st_mode) &&
	       !fs.st_size && !lstat(path, &ps) && S_ISREG(ps.st_mode) &&
	       ps.st_ino == fs.st_ino && ps.st_dev == fs.st_dev;
	if (fclose(f) && !bad) {
		bad = 1;
		e = errno;
	}
	if (!keep) {
		if (mine)
			unlink(path);
		return 0;
	}
	if (bad)
		cli_err("%s: %s", path, strerror(e));
	return bad ? -1 : 0;
}

/* The value of the first word of p when it is KEY=VALUE, else NULL. */
static char *_conf_value(char *p, const char *key)
{
	size_t n = strlen(key);
	char *end;

	while (isspace((unsigned char)*p))
		p++;
	if (strncasecmp(p, key, n) || p[n] != '=')
		return NULL;
	p += n + 1;
	if (*p == '"') {	/* PartitionName="a b" */
		end = strchr(++p, '"');
		if (end)
			*end = '\0';
		return p;
	}
	for (end = p; *end && !isspace((unsigned char)*end); end++)
		;
	*end = '\0';
	return p;
}

int cli_slurm_conf_read(const char *path, const topoml_topo_t *t,
			struct cli_slurm_conf *sc)
{
	FILE *f;
	char line[8192];

	memset(sc, 0, sizeof(*sc));
	if (cli_readable(path))
		return -1;
	if (!(f = topoml__fopen_regular(path)) ||
	    !(sc->nodes = hwloc_bitmap_alloc())) {
		cli_err("%s: %s", path, strerror(errno ? errno : ENOMEM));
		if (f)
			fclose(f);
		return -1;
	}
	static const char *const keys[] = { "SelectType", "TopologyPlugin",
		"TopologyParam", "SelectTypeParameters" };
	struct cli_conf_key *kv[] = { &sc->select_type, &sc->topology_plugin,
		&sc->topology_param, &sc->select_params };
	int ln = 0;

	while (fgets(line, sizeof(line), f)) {
		char *hash = strchr(line, '#'), *v = NULL;
		size_t k;

		ln++;
		if (hash)
			*hash = '\0';
		for (k = 0; k < sizeof(keys) / sizeof(*keys); k++) {
			char copy[sizeof(line)];

			memcpy(copy, line, sizeof(copy));
			if ((v = _conf_value(copy, keys[k]))) {
				snprintf(kv[k]->value, sizeof(kv[k]->value),
					 "%s", v);
				kv[k]->line = ln;
				break;
			}
		}
		if (v)
			continue;
		if ((v = _conf_value(line, "NodeName"))) {
			topoml_errors_t err = { 0 };
			hwloc_bitmap_t set;

			if (!strcasecmp(v, "DEFAULT"))
				continue;
			sc->node_lines++;
			if (!t)
				continue;
			/* names t lacks are skipped, not an error */
			set = topoml_nodeset_parse(t, v, &err);
			if (set)
				hwloc_bitmap_or(sc->nodes, sc->nodes, set);
			hwloc_bitmap_free(set);
			topoml_errors_clear(&err);
		} else if ((v = _conf_value(line, "PartitionName"))) {
			char **np;

			if (!strcasecmp(v, "DEFAULT"))
				continue;
			np = realloc(sc->parts, (sc->nparts + 1) *
				     sizeof(*np));
			if (!np || !(np[sc->nparts] = strdup(v))) {
				if (np)
					sc->parts = np;
				cli_err("%s: %s", path, strerror(ENOMEM));
				fclose(f);
				cli_slurm_conf_clear(sc);
				return -1;
			}
			sc->parts = np;
			sc->nparts++;
		}
	}
	fclose(f);
	return 0;
}

void cli_slurm_conf_clear(struct cli_slurm_conf *sc)
{
	for (int i = 0; i < sc->nparts; i++)
		free(sc->parts[i]);
	free(sc->parts);
	hwloc_bitmap_free(sc->nodes);
	memset(sc, 0, sizeof(*sc));
}

const char *cli_policy_list(void)
{
	static char list[256];
	size_t len = 0;

	if (list[0])
		return list;
	/* ids need not be consecutive (libtopoml_sim's baselines) */
	for (int i = 0; i < 64; i++) {
		if (!strcmp(topoml_policy_name(i), "unknown"))
			continue;
		len += snprintf(list + len, len < sizeof(list) ?
				sizeof(list) - len : 0, "%s%s",
				len ? ", " : "", topoml_policy_name(i));
	}
	return list;
}

static double _now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Decided once per command, after its options. */
static void _progress_setup(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	_progress_tty = isatty(STDERR_FILENO);
	_progress_on = cli_progress_mode == CLI_PROGRESS_ON ||
		       (cli_progress_mode == CLI_PROGRESS_AUTO && _progress_tty);
}

static void _vprogress(bool force, const char *fmt, va_list ap)
{
	char line[CLI_LINE];
	double now;

	_progress_setup();
	if (!_progress_on)
		return;
	now = _now();
	/* a terminal line is redrawn 10 times a second, a log line once */
	if (!force && now - _progress_last < (_progress_tty ? 0.1 : 1.0))
		return;
	_progress_last = now;
	if (_progress_tty)
		fputs("\r\033[K", stderr);
	_prefix(stderr);
	fputs(topoml_log_vformat(line, sizeof(line), fmt, ap), stderr);
	fputc(_progress_tty ? ' ' : '\n', stderr);
	fflush(stderr);
	_progress_shown = _progress_tty;
}

void cli_progress(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	_vprogress(false, fmt, ap);
	va_end(ap);
}

void cli_progress_step(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	_vprogress(true, fmt, ap);
	va_end(ap);
}

void cli_progress_end(void)
{
	if (_progress_shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		_progress_shown = false;
	}
}

int cli_common_opt(int c)
{
	switch (c) {
	case CLI_OPT_PROGRESS:
		cli_progress_mode = CLI_PROGRESS_ON;
		return 1;
	case CLI_OPT_QUIET:
		cli_progress_mode = CLI_PROGRESS_OFF;
		return 1;
	}
	return 0;
}
