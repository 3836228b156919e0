/*
 * topoml health: select/topoml's node health table for admins (what was
 * seen, by which jobs and users, when, what was done), read from its
 * state file in StateSaveLocation (topology/topoml/health.h).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "cli.h"
#include "topoml/health.h"

static void _usage(FILE *f)
{
	fprintf(f,
"usage: topoml health [--state FILE | --slurm-conf FILE] [--node NAME]\n"
"                     [--json] [--progress|-q]\n"
"select/topoml's node health records: per node, the jobs that reported it\n"
"slow (job, user, when), the last root-side preflight finding, the last\n"
"action (none, avoid, drain), until when placement avoids it, and why.\n"
"  --state FILE       the state file (default: topoml_health.state in the\n"
"                     StateSaveLocation of --slurm-conf, $SLURM_CONF or\n"
"                     /etc/slurm/slurm.conf)\n"
"  --node NAME        that node only\n"
"  --json             one JSON object: {\"nodes\": [...]}\n"
"Exit status: 0 done (no records too), 1 a bad state file or no such\n"
"node, 2 usage or a file that cannot be read.\n");
}

/* StateSaveLocation= of a slurm.conf (its last value), or NULL. */
static char *_state_dir(const char *conf)
{
	char line[4096], *dir = NULL;
	FILE *f = fopen(conf, "r");

	if (!f) {
		cli_err("%s: %s", conf, strerror(errno));
		return NULL;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *e;

		while (*p == ' ' || *p == '\t')
			p++;
		if (strncasecmp(p, "StateSaveLocation=", 18))
			continue;
		p += 18;
		for (e = p; *e && *e != '\n' && *e != ' ' && *e != '#'; e++)
			;
		*e = '\0';
		free(dir);
		dir = strdup(p);
	}
	fclose(f);
	if (!dir)
		cli_err("%s: no StateSaveLocation", conf);
	return dir;
}

static char *_read_all(const char *path, size_t *len)
{
	struct stat st;
	char *buf = NULL;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT) {
			*len = 0;
			return strdup("");
		}
		cli_err("%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size > (off_t)TOPOML_HEALTH_NODES_MAX * 1024) {
		cli_err("%s: not a state file", path);
		goto out;
	}
	if (!(buf = malloc(st.st_size + 1)))
		goto out;
	n = read(fd, buf, st.st_size);
	if (n != st.st_size) {
		cli_err("%s: short read", path);
		free(buf);
		buf = NULL;
		goto out;
	}
	buf[n] = '\0';
	*len = n;
out:
	close(fd);
	return buf;
}

static void _when(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!t || !localtime_r(&tt, &tm))
		snprintf(buf, len, "-");
	else
		strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
}

static void _user(uint32_t uid, char *buf, size_t len)
{
	struct passwd pw, *p = NULL;
	char tmp[1024];

	if (!getpwuid_r(uid, &pw, tmp, sizeof(tmp), &p) && p)
		snprintf(buf, len, "%s(%" PRIu32 ")", p->pw_name, uid);
	else
		snprintf(buf, len, "%" PRIu32, uid);
}

static void _text(const struct topoml_health_node *n, time_t now)
{
	char a[32], u[32], who[300];

	_when(n->action_at, a, sizeof(a));
	printf("%s: action=%s at %s", n->name,
	       topoml_health_action_name(n->action), a);
	if (topoml_health_avoided(n, now)) {
		_when(n->avoid_until, u, sizeof(u));
		printf(", avoided until %s", u);
	}
	printf(" (%s)\n", n->why);
	for (int i = 0; i < n->nseen; i++) {
		_when(n->seen[i].at, a, sizeof(a));
		_user(n->seen[i].uid, who, sizeof(who));
		printf("  straggler reported by job %" PRIu32 " of %s at %s\n",
		       n->seen[i].job, who, a);
	}
	if (n->pf_at) {
		char c[32];

		_when(n->pf_at, a, sizeof(a));
		topoml_health_pf_checks_write(n->pf_checks, c, sizeof(c));
		printf("  root-side preflight failed (%s) in job %" PRIu32
		       " at %s\n", c, n->pf_job, a);
	}
}

static json_object *_json(const struct topoml_health_node *n, time_t now)
{
	json_object *o = json_object_new_object(), *s = json_object_new_array();

	json_object_object_add(o, "node", json_object_new_string(n->name));
	json_object_object_add(o, "action", json_object_new_string(
		topoml_health_action_name(n->action)));
	json_object_object_add(o, "action_at",
			       json_object_new_int64(n->action_at));
	json_object_object_add(o, "avoid_until",
			       json_object_new_int64(n->avoid_until));
	json_object_object_add(o, "avoided", json_object_new_boolean(
		topoml_health_avoided(n, now)));
	json_object_object_add(o, "why", json_object_new_string(n->why));
	for (int i = 0; i < n->nseen; i++) {
		json_object *e = json_object_new_object();

		json_object_object_add(e, "event",
				       json_object_new_string("straggler"));
		json_object_object_add(e, "job",
				       json_object_new_int64(n->seen[i].job));
		json_object_object_add(e, "uid",
				       json_object_new_int64(n->seen[i].uid));
		json_object_object_add(e, "at",
				       json_object_new_int64(n->seen[i].at));
		json_object_array_add(s, e);
	}
	json_object_object_add(o, "seen", s);
	if (n->pf_at) {
		json_object *r = json_object_new_object();
		char c[32];

		topoml_health_pf_checks_write(n->pf_checks, c, sizeof(c));
		json_object_object_add(r, "checks", json_object_new_string(c));
		json_object_object_add(r, "job",
				       json_object_new_int64(n->pf_job));
		json_object_object_add(r, "at",
				       json_object_new_int64(n->pf_at));
		json_object_object_add(o, "root_side", r);
	}
	return o;
}

int cmd_health(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "slurm-conf", required_argument, NULL, 'c' },
		{ "node", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		CLI_COMMON_OPTS,
		{ NULL, 0, NULL, 0 },
	};
	const char *state = NULL, *conf = NULL, *node = NULL;
	struct topoml_health_table t = { 0 };
	char *path = NULL, *buf = NULL, err[256];
	bool json = false;
	int c, rc = CLI_USAGE, shown = 0;
	size_t len = 0;
	time_t now = time(NULL);

	while ((c = getopt_long(argc, argv, "hq", opts, NULL)) != -1) {
		if (cli_common_opt(c))
			continue;
		switch (c) {
		case 's': state = optarg; break;
		case 'c': conf = optarg; break;
		case 'n': node = optarg; break;
		case 'j': json = true; break;
		case 'h': _usage(stdout); return CLI_OK;
		default: _usage(stderr); return CLI_USAGE;
		}
	}
	if (optind < argc) {
		_usage(stderr);
		return CLI_USAGE;
	}
	if (!state) {
		char *dir;

		if (!conf)
			conf = getenv("SLURM_CONF");
		if (!conf)
			conf = "/etc/slurm/slurm.conf";
		if (!(dir = _state_dir(conf)))
			return CLI_USAGE;
		if (asprintf(&path, "%s/%s", dir, TOPOML_HEALTH_STATE) < 0)
			path = NULL;
		free(dir);
		if (!path)
			return CLI_USAGE;
		state = path;
	}
	if (!(buf = _read_all(state, &len)))
		goto out;
	if (len && topoml_health_load(buf, len, &t, err, sizeof(err))) {
		cli_err("%s: %s", state, err);
		rc = CLI_INVALID;
		goto out;
	}
	if (json) {
		json_object *o = json_object_new_object(),
			    *a = json_object_new_array();

		for (int i = 0; i < t.n; i++)
			if (!node || !strcmp(node, t.node[i].name)) {
				json_object_array_add(a, _json(&t.node[i],
							       now));
				shown++;
			}
		json_object_object_add(o, "state",
				       json_object_new_string(state));
		json_object_object_add(o, "nodes", a);
		printf("%s\n", json_object_to_json_string_ext(o,
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		for (int i = 0; i < t.n; i++)
			if (!node || !strcmp(node, t.node[i].name)) {
				_text(&t.node[i], now);
				shown++;
			}
		if (!t.n)
			printf("no health records (%s)\n", state);
	}
	rc = (node && !shown) ? CLI_INVALID : CLI_OK;
	if (node && !shown)
		cli_err("no record of node %s", node);
out:
	topoml_health_table_clear(&t);
	free(buf);
	free(path);
	return rc;
}
