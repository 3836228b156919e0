/*
 * topoml-netsim: time, not hops.  Every job of a set runs one ring
 * all-reduce at the same time on the shared links of a site's network,
 * simulated at flow level by SimGrid (S4U's C API: one actor per rank,
 * 2(n-1) steps of size/n to its ring neighbour); prints each job's
 * communication time per step and the run-weighted mean and p95.
 *
 * The jobs come from a file (ID=HOSTLIST lines, nodes in ring order) or
 * from topoml's trace simulator (the placements each policy makes, running
 * at given times).  A separate program so that libtopoml and the plugins
 * never link SimGrid; built only when configure finds it.
 *
 * The platform is built link by link from topoml's model (not SimGrid's
 * FAT_TREE / DRAGONFLY / TORUS cluster zones: those take one bandwidth for
 * every level and a regular shape, while site files give any tree):
 * a host per node, a router per switch, dragonfly router or torus
 * coordinate, split-duplex links, shortest-path routing (DijkstraCache).
 * Each simulation runs in a child process (SimGrid's engine runs once a
 * process), so jobs can also be timed alone.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>

#include "topoml.h"
#include "sim.h"

#define PROG "topoml-netsim"
#define MAX_LEVELS 8
#define MAX_POL 8
#define MAX_AT 64

/* exit statuses as the topoml command's */
#define EX_INVALID 1
#define EX_USAGE 2

struct job {
	char *id;
	int n;
	int *nodes;		/* node indices, ring order */
	double weight;		/* run time (trace), or as given, or 1 */
	double time;		/* all-reduce time with the others */
	double alone;		/* alone, with --alone; else -1 */
};

struct jobset {
	int n;
	struct job *j;
};

static struct {
	double bw[MAX_LEVELS];	/* bytes/s per link level */
	double lat[MAX_LEVELS];	/* s per link */
	int nbw, nlat;
	double size;		/* bytes all-reduced per step */
	double taper;		/* fat-tree uplinks without --bandwidth */
	int snapshots;		/* --snapshots, without --at */
	bool alone;
	bool quiet;
} _o = { .size = 256.0 * 1024 * 1024, .taper = 1,
	.snapshots = 1 };

static void _err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void _err(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	topoml_log_vformat(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, PROG ": %s\n", line);
}

static void _usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " --topology FILE (--jobs FILE | --trace FILE) [OPTIONS]\n"
"Simulate every job's ring all-reduce at the same time on the shared links\n"
"(SimGrid) and print each job's communication time per step.\n"
"  -t, --topology FILE     site topology (topology.conf, JSON, ibnetdiscover)\n"
"  -J, --jobs FILE         jobs, one a line: ID=HOSTLIST [WEIGHT], nodes in\n"
"                          ring order ('-': stdin)\n"
"  -T, --trace FILE        or: replay this trace as topoml sim does and take\n"
"                          the jobs each policy has running at --at\n"
"  -p, --policy P1,...     with --trace: policies (default topoml and the\n"
"                          family's Slurm baseline)\n"
"      --at T1,T2,...      with --trace: snapshot times in seconds\n"
"      --snapshots K       without --at: K times evenly spaced over the\n"
"                          first policy's makespan (default 1: its middle)\n"
"  -s, --scale X|fit       with --trace: job sizes as topoml sim --scale\n"
"  -n, --max-jobs N        with --trace: the first N jobs only\n"
"  -m, --size BYTES        bytes all-reduced per step (K, M, G suffixes,\n"
"                          powers of 1024; default 256M)\n"
"  -b, --bandwidth B0,B1,..  Gbit/s per link level (default 200): node\n"
"                          link, then a fat-tree switch's uplink at level\n"
"                          1, 2, ... (one per parent; default: its nodes'\n"
"                          bandwidth / --taper / its parents), dragonfly\n"
"                          local and global links (default B0; global x\n"
"                          the links of the group pair), torus links (B0)\n"
"      --taper T           fat-tree uplinks without a --bandwidth carry\n"
"                          1/T of their nodes' bandwidth (default 1)\n"
"  -l, --latency L0,L1,..  microseconds per link, same levels (default 1)\n"
"      --alone             also time each job alone on the machine\n"
"      --platform FILE     write the SimGrid platform (XML) and go on\n"
"  -q, --quiet             no SimGrid messages\n"
"  -h, --help\n"
"Exit 0, 1 for an invalid topology or job, 2 for a usage error.\n");
}

/* ---- options ------------------------------------------------------- */

static int _parse_list(const char *arg, double *v, int *n, double unit,
		       const char *what)
{
	char *dup = strdup(arg), *save = NULL, *tok;

	*n = 0;
	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *end;
		double x = strtod(tok, &end);

		if (end == tok || *end || !(x > 0) || !isfinite(x) ||
		    *n == MAX_LEVELS) {
			_err("%s: '%s' is not a list of up to %d positive "
			     "numbers", what, arg, MAX_LEVELS);
			free(dup);
			return -1;
		}
		v[(*n)++] = x * unit;
	}
	free(dup);
	if (!*n) {
		_err("%s: empty list", what);
		return -1;
	}
	return 0;
}

static int _parse_size(const char *arg, double *out)
{
	char *end;
	double x = strtod(arg, &end);

	switch (*end) {
	case 'K': case 'k': x *= 1024; end++; break;
	case 'M': case 'm': x *= 1024.0 * 1024; end++; break;
	case 'G': case 'g': x *= 1024.0 * 1024 * 1024; end++; break;
	}
	if (end == arg || *end || !(x >= 1) || x > 1e15) {
		_err("--size: '%s' is not a size in bytes", arg);
		return -1;
	}
	*out = x;
	return 0;
}

/* Level k's value: the last one given repeats. */
static double _bw(int k)
{
	return _o.bw[k < _o.nbw ? k : _o.nbw - 1];
}

static double _lat(int k)
{
	return _o.lat[k < _o.nlat ? k : _o.nlat - 1];
}

/* ---- the platform -------------------------------------------------- */

static void _xml_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* Routers: "#s<switch>" (fat-tree, dragonfly), "#t<coordinate>" (torus):
 * '#' is in no host list name, so they never clash with a node. */
static void _link(FILE *f, const char *id, int level)
{
	fprintf(f, "<link id=\"%s\" bandwidth=\"%.17gBps\" latency=\"%.17gs\""
		" sharing_policy=\"SPLITDUPLEX\"/>\n", id, _bw(level),
		_lat(level));
}

/* Both directions of link id between netpoints a and b (names). */
static void _route(FILE *f, const char *a, bool a_host, const char *b,
		   const char *id)
{
	fputs("<route src=\"", f);
	if (a_host)
		_xml_str(f, a);
	else
		fputs(a, f);
	fprintf(f, "\" dst=\"%s\" symmetrical=\"NO\"><link_ctn id=\"%s\" "
		"direction=\"UP\"/></route>\n", b, id);
	fprintf(f, "<route src=\"%s\" dst=\"", b);
	if (a_host)
		_xml_str(f, a);
	else
		fputs(a, f);
	fprintf(f, "\" symmetrical=\"NO\"><link_ctn id=\"%s\" "
		"direction=\"DOWN\"/></route>\n", id);
}

static int _torus_index(const topoml_topo_t *t, const int c[3])
{
	return (c[2] * t->dims[1] + c[1]) * t->dims[0] + c[0];
}

static int _write_platform(const topoml_topo_t *t, FILE *f)
{
	char id[64], a[32], b[32];
	int i, k;

	fputs("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM "
	      "\"https://simgrid.org/simgrid.dtd\">\n"
	      "<platform version=\"4.1\">\n"
	      "<zone id=\"site\" routing=\"DijkstraCache\">\n", f);
	for (i = 0; i < t->nnodes; i++) {
		fputs("<host id=\"", f);
		_xml_str(f, t->nodes[i].name);
		fputs("\" speed=\"1Gf\"/>\n", f);
	}
	if (t->family == TOPOML_TORUS) {
		int cells = t->dims[0] * t->dims[1] * t->dims[2];

		for (i = 0; i < cells; i++)
			fprintf(f, "<router id=\"#t%d\"/>\n", i);
	} else {
		for (i = 0; i < t->nswitches; i++)
			fprintf(f, "<router id=\"#s%d\"/>\n", i);
	}
	/* links first (the DTD wants them before the routes) */
	for (i = 0; i < t->nnodes; i++) {
		snprintf(id, sizeof(id), "n%d", i);
		_link(f, id, 0);
	}
	if (t->family == TOPOML_FAT_TREE) {
		for (i = 0; i < t->nswitches; i++) {
			const struct topoml_switch *s = &t->switches[i];

			for (k = 0; k < s->nparents; k++) {
				snprintf(id, sizeof(id), "s%d-%d", i,
					 s->parents[k]);
				/* the uplink of a level-L switch is level L+1;
				 * without its own --bandwidth, the nodes below
				 * at full speed over the taper, shared by the
				 * parents */
				if (s->level + 1 < _o.nbw) {
					_link(f, id, s->level + 1);
					continue;
				}
				fprintf(f, "<link id=\"%s\" bandwidth=\"%.17g"
					"Bps\" latency=\"%.17gs\" sharing_"
					"policy=\"SPLITDUPLEX\"/>\n", id,
					_bw(0) * hwloc_bitmap_weight(s->desc) /
					(_o.taper * s->nparents),
					_lat(s->level + 1));
			}
		}
	} else if (t->family == TOPOML_DRAGONFLY) {
		for (int g = 0; g < t->ngroups; g++) {
			const struct topoml_group *gr = &t->groups[g];

			for (i = 0; i < gr->nrouters; i++)
				for (k = i + 1; k < gr->nrouters; k++) {
					snprintf(id, sizeof(id), "l%d-%d",
						 gr->routers[i],
						 gr->routers[k]);
					_link(f, id, 1);
				}
			for (int h = g + 1; h < t->ngroups; h++) {
				int c = t->global_links[g * t->ngroups + h];

				if (c < 1)
					continue;
				/* c links in parallel: one of c times the
				 * bandwidth */
				fprintf(f, "<link id=\"g%d-%d\" bandwidth="
					"\"%.17gBps\" latency=\"%.17gs\" "
					"sharing_policy=\"SPLITDUPLEX\"/>\n",
					g, h, c * _bw(2), _lat(2));
			}
		}
	} else {
		int cells = t->dims[0] * t->dims[1] * t->dims[2];

		for (i = 0; i < cells; i++) {
			int c[3] = { i % t->dims[0],
				     i / t->dims[0] % t->dims[1],
				     i / t->dims[0] / t->dims[1] };

			for (int d = 0; d < 3; d++) {
				int nc[3] = { c[0], c[1], c[2] };

				if (t->dims[d] < 2 ||
				    (c[d] + 1 == t->dims[d] &&
				     (!t->wrap[d] || t->dims[d] == 2)))
					continue;
				nc[d] = (c[d] + 1) % t->dims[d];
				snprintf(id, sizeof(id), "t%d-%d", i,
					 _torus_index(t, nc));
				_link(f, id, 1);
			}
		}
	}
	/* routes: the graph's edges */
	for (i = 0; i < t->nnodes; i++) {
		const struct topoml_node *n = &t->nodes[i];

		snprintf(id, sizeof(id), "n%d", i);
		if (t->family == TOPOML_TORUS)
			snprintf(b, sizeof(b), "#t%d",
				 _torus_index(t, n->coord));
		else
			snprintf(b, sizeof(b), "#s%d", n->leaf);
		_route(f, n->name, true, b, id);
	}
	if (t->family == TOPOML_FAT_TREE) {
		for (i = 0; i < t->nswitches; i++) {
			const struct topoml_switch *s = &t->switches[i];

			for (k = 0; k < s->nparents; k++) {
				snprintf(id, sizeof(id), "s%d-%d", i,
					 s->parents[k]);
				snprintf(a, sizeof(a), "#s%d", i);
				snprintf(b, sizeof(b), "#s%d", s->parents[k]);
				_route(f, a, false, b, id);
			}
		}
	} else if (t->family == TOPOML_DRAGONFLY) {
		for (int g = 0; g < t->ngroups; g++) {
			const struct topoml_group *gr = &t->groups[g];

			for (i = 0; i < gr->nrouters; i++)
				for (k = i + 1; k < gr->nrouters; k++) {
					snprintf(id, sizeof(id), "l%d-%d",
						 gr->routers[i],
						 gr->routers[k]);
					snprintf(a, sizeof(a), "#s%d",
						 gr->routers[i]);
					snprintf(b, sizeof(b), "#s%d",
						 gr->routers[k]);
					_route(f, a, false, b, id);
				}
			for (int h = g + 1; h < t->ngroups; h++) {
				const struct topoml_group *hr = &t->groups[h];

				if (t->global_links[g * t->ngroups + h] < 1)
					continue;
				/* which router carries it: spread over the
				 * group's routers by the other group */
				snprintf(id, sizeof(id), "g%d-%d", g, h);
				snprintf(a, sizeof(a), "#s%d",
					 gr->routers[h % gr->nrouters]);
				snprintf(b, sizeof(b), "#s%d",
					 hr->routers[g % hr->nrouters]);
				_route(f, a, false, b, id);
			}
		}
	} else {
		int cells = t->dims[0] * t->dims[1] * t->dims[2];

		for (i = 0; i < cells; i++) {
			int c[3] = { i % t->dims[0],
				     i / t->dims[0] % t->dims[1],
				     i / t->dims[0] / t->dims[1] };

			for (int d = 0; d < 3; d++) {
				int nc[3] = { c[0], c[1], c[2] };
				int j;

				if (t->dims[d] < 2 ||
				    (c[d] + 1 == t->dims[d] &&
				     (!t->wrap[d] || t->dims[d] == 2)))
					continue;
				nc[d] = (c[d] + 1) % t->dims[d];
				j = _torus_index(t, nc);
				snprintf(id, sizeof(id), "t%d-%d", i, j);
				snprintf(a, sizeof(a), "#t%d", i);
				snprintf(b, sizeof(b), "#t%d", j);
				_route(f, a, false, b, id);
			}
		}
	}
	fputs("</zone>\n</platform>\n", f);
	return ferror(f) ? -1 : 0;
}

/* ---- one simulation (in a child process) --------------------------- */

static double *_finish;		/* per job, latest rank end */
static int _dummy;		/* S4U wants a payload */

/* argv: name job rank n chunk */
static void _rank(int argc, char **argv)
{
	int j = atoi(argv[1]), r = atoi(argv[2]), n = atoi(argv[3]);
	long chunk = atol(argv[4]);
	char name[64];
	sg_mailbox_t out, in;

	(void)argc;
	snprintf(name, sizeof(name), "j%d-r%d", j, (r + 1) % n);
	out = sg_mailbox_by_name(name);
	snprintf(name, sizeof(name), "j%d-r%d", j, r);
	in = sg_mailbox_by_name(name);
	/* reduce-scatter then all-gather: 2(n-1) steps of size/n */
	for (int s = 0; s < 2 * (n - 1); s++) {
		sg_comm_t c = sg_mailbox_put_async(out, &_dummy, chunk);

		sg_mailbox_get(in);
		sg_comm_wait(c);
	}
	if (simgrid_get_clock() > _finish[j])
		_finish[j] = simgrid_get_clock();
}

/*
 * Time the jobs of js selected by `only' (-1: all together) on the
 * platform; times into res[] (per job; unselected ones untouched).
 */
static int _simulate(const topoml_topo_t *t, const char *platform,
		     const struct jobset *js, int only, double *res)
{
	int fd[2], status;
	pid_t pid;

	fflush(NULL);
	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char *av[] = { PROG,
			/* no TCP corrections: times are link arithmetic */
			"--cfg=network/model:CM02",
			"--cfg=network/latency-factor:1",
			"--cfg=network/bandwidth-factor:1",
			"--cfg=network/weight-S:0",
			"--cfg=network/crosstraffic:0",
			"--cfg=network/TCP-gamma:0",
			_o.quiet ? "--log=root.thres:critical" :
				   "--log=root.thres:warning",
			NULL };
		int ac = 8;

		close(fd[0]);
		simgrid_init(&ac, av);
		simgrid_load_platform(platform);
		_finish = calloc(js->n, sizeof(double));
		for (int j = 0; j < js->n; j++) {
			const struct job *jb = &js->j[j];
			long chunk = (long)ceil(_o.size / jb->n);

			if ((only >= 0 && j != only) || jb->n < 2)
				continue;
			for (int r = 0; r < jb->n; r++) {
				char sj[16], sr[16], sn[16], sc[32];
				char *args[] = { "rank", sj, sr, sn, sc };
				sg_host_t h = sg_host_by_name(
					t->nodes[jb->nodes[r]].name);

				snprintf(sj, sizeof(sj), "%d", j);
				snprintf(sr, sizeof(sr), "%d", r);
				snprintf(sn, sizeof(sn), "%d", jb->n);
				snprintf(sc, sizeof(sc), "%ld", chunk);
				sg_actor_create("rank", h, _rank, 5, args);
			}
		}
		simgrid_run();
		if (write(fd[1], _finish, js->n * sizeof(double)) !=
		    (ssize_t)(js->n * sizeof(double)))
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	{
		size_t want = js->n * sizeof(double), got = 0;
		char *buf = malloc(want ? want : 1);

		while (got < want) {
			ssize_t r = read(fd[0], buf + got, want - got);

			if (r <= 0)
				break;
			got += r;
		}
		close(fd[0]);
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) || got != want) {
			free(buf);
			_err("the SimGrid simulation failed");
			return -1;
		}
		for (int j = 0; j < js->n; j++)
			if (only < 0 || j == only)
				memcpy(&res[j], buf + j * sizeof(double),
				       sizeof(double));
		free(buf);
	}
	return 0;
}

/* ---- jobs ---------------------------------------------------------- */

static void _jobset_free(struct jobset *js)
{
	for (int i = 0; i < js->n; i++) {
		free(js->j[i].id);
		free(js->j[i].nodes);
	}
	free(js->j);
	js->j = NULL;
	js->n = 0;
}

static struct job *_job_add(struct jobset *js)
{
	struct job *p = realloc(js->j, (js->n + 1) * sizeof(*p));

	if (!p)
		return NULL;
	js->j = p;
	p = &js->j[js->n++];
	memset(p, 0, sizeof(*p));
	p->weight = 1;
	p->alone = -1;
	return p;
}

/* Nodes of a host list in the list's order; a node twice is an error. */
static int _hostlist_nodes(const topoml_topo_t *t, const char *list,
			   struct job *jb, const char *where)
{
	hostlist_t hl = slurm_hostlist_create(list);
	char *h;
	unsigned char *seen = calloc(t->nnodes, 1);
	int rc = 0;

	if (!hl || !seen) {
		_err("%s: bad host list '%s'", where, list);
		free(seen);
		return -1;
	}
	while ((h = slurm_hostlist_shift(hl))) {
		int n = topoml_node_by_name(t, h);

		if (n < 0 || seen[n]) {
			_err("%s: %s node '%s'", where,
			     n < 0 ? "unknown" : "repeated", h);
			free(h);
			rc = -1;
			break;
		}
		seen[n] = 1;
		free(h);
		int *p = realloc(jb->nodes, (jb->n + 1) * sizeof(int));

		if (!p) {
			rc = -1;
			break;
		}
		jb->nodes = p;
		jb->nodes[jb->n++] = n;
	}
	slurm_hostlist_destroy(hl);
	free(seen);
	if (!rc && !jb->n) {
		_err("%s: no nodes", where);
		rc = -1;
	}
	return rc;
}

static int _read_jobs(const topoml_topo_t *t, const char *path,
		      struct jobset *js)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char line[65536];
	int ln = 0, rc = 0;

	if (!f) {
		_err("%s: %s", path, strerror(errno));
		return -EX_USAGE;
	}
	while (!rc && fgets(line, sizeof(line), f)) {
		char *p = line, *eq, *list, *w, where[512];
		struct job *jb;

		ln++;
		p[strcspn(p, "\r\n")] = 0;
		for (size_t e = strlen(p); e && (p[e - 1] == ' ' ||
						 p[e - 1] == '\t'); e--)
			p[e - 1] = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		snprintf(where, sizeof(where), "%s:%d", path, ln);
		eq = strchr(p, '=');
		if (!eq || eq == p) {
			_err("%s: not ID=HOSTLIST [WEIGHT]", where);
			rc = -EX_INVALID;
			break;
		}
		*eq = 0;
		list = eq + 1;
		w = strpbrk(list, " \t");
		if (w)
			*w++ = 0;
		if (!(jb = _job_add(js)) || !(jb->id = strdup(p))) {
			rc = -EX_INVALID;
			break;
		}
		if (_hostlist_nodes(t, list, jb, where)) {
			rc = -EX_INVALID;
			break;
		}
		if (w) {
			char *end;

			while (*w == ' ' || *w == '\t')
				w++;
			jb->weight = strtod(w, &end);
			if (*w && (end == w || *end || !(jb->weight > 0))) {
				_err("%s: weight '%s' is not a positive "
				     "number", where, w);
				rc = -EX_INVALID;
			}
			if (!*w)
				jb->weight = 1;
		}
	}
	if (f != stdin)
		fclose(f);
	/* a node in two jobs: both would use it at once */
	if (!rc) {
		int *owner = malloc(t->nnodes * sizeof(int));

		for (int i = 0; i < t->nnodes; i++)
			owner[i] = -1;
		for (int j = 0; !rc && j < js->n; j++)
			for (int k = 0; k < js->j[j].n; k++) {
				int n = js->j[j].nodes[k];

				if (owner[n] >= 0) {
					_err("%s: node '%s' in jobs '%s' and "
					     "'%s'", path, t->nodes[n].name,
					     js->j[owner[n]].id, js->j[j].id);
					rc = -EX_INVALID;
					break;
				}
				owner[n] = j;
			}
		free(owner);
	}
	return rc;
}

/* ---- figures ------------------------------------------------------- */

static int _cmp_time(const void *a, const void *b)
{
	const struct job *x = *(struct job * const *)a;
	const struct job *y = *(struct job * const *)b;

	return (x->time > y->time) - (x->time < y->time);
}

/*
 * Run-weighted mean and p95 (nearest rank on the weights) over the
 * multi-node jobs (a one-node job has no network all-reduce).
 */
static int _stats(const struct jobset *js, double *mean, double *p95)
{
	const struct job **v = malloc((js->n + 1) * sizeof(*v));
	double wsum = 0, sum = 0, acc = 0;
	int m = 0;

	*mean = *p95 = 0;
	for (int i = 0; i < js->n; i++)
		if (js->j[i].n > 1) {
			v[m++] = &js->j[i];
			wsum += js->j[i].weight;
			sum += js->j[i].weight * js->j[i].time;
		}
	if (m) {
		qsort(v, m, sizeof(*v), _cmp_time);
		*mean = sum / wsum;
		for (int i = 0; i < m; i++) {
			acc += v[i]->weight;
			*p95 = v[i]->time;
			if (acc >= 0.95 * wsum)
				break;
		}
	}
	free(v);
	return m;
}

/*
 * Fat-tree parts with no common switch (Slurm accepts such files) have no
 * route between them, on which SimGrid gives up badly: refuse first.
 */
static int _routable(const topoml_topo_t *t, const struct jobset *js)
{
	if (t->family != TOPOML_FAT_TREE)
		return 0;	/* dragonfly and torus models are connected */
	for (int j = 0; j < js->n; j++) {
		const struct job *jb = &js->j[j];

		for (int r = 1; r < jb->n; r++)
			if (topoml_common_level(t, jb->nodes[0],
						jb->nodes[r]) >= t->nlevels) {
				_err("job %s: nodes %s and %s have no common "
				     "switch", jb->id,
				     t->nodes[jb->nodes[0]].name,
				     t->nodes[jb->nodes[r]].name);
				return -1;
			}
	}
	return 0;
}

static int _run_set(const topoml_topo_t *t, const char *platform,
		    struct jobset *js)
{
	double *res;

	if (_routable(t, js))
		return -1;
	res = calloc(js->n + 1, sizeof(double));

	if (_simulate(t, platform, js, -1, res)) {
		free(res);
		return -1;
	}
	for (int j = 0; j < js->n; j++)
		js->j[j].time = res[j];
	if (_o.alone)
		for (int j = 0; j < js->n; j++) {
			if (js->j[j].n < 2) {
				js->j[j].alone = 0;
				continue;
			}
			if (_simulate(t, platform, js, j, res)) {
				free(res);
				return -1;
			}
			js->j[j].alone = res[j];
		}
	free(res);
	return 0;
}

static void _print_set(const topoml_topo_t *t, const struct jobset *js)
{
	printf("%-10s %6s %12s%s  %s\n", "job", "nodes", "time_s",
	       _o.alone ? "      alone_s slowdown" : "", "ring");
	for (int j = 0; j < js->n; j++) {
		const struct job *jb = &js->j[j];
		char *hl = topoml_nodes_format(t, jb->nodes, jb->n);

		printf("%-10s %6d %12.6g", jb->id, jb->n, jb->time);
		if (_o.alone)
			printf(" %12.6g %8.4f", jb->alone,
			       jb->alone > 0 ? jb->time / jb->alone : 1.0);
		printf("  %s\n", hl ? hl : "?");
		free(hl);
	}
}

/* ---- jobs from the trace simulator --------------------------------- */

static int _snapshot(const topoml_topo_t *t, const struct topoml_trace *tr,
		     const struct topoml_sim_jobout *jo, double at,
		     struct jobset *js)
{
	for (int i = 0; i < tr->njobs; i++) {
		const struct topoml_job *tj = &tr->jobs[i];
		struct job *jb;
		char id[32];
		int k = 0, b;

		if (jo[i].start < 0 || jo[i].start > at ||
		    jo[i].start + tj->runtime <= at || !jo[i].nodes)
			continue;
		if (!(jb = _job_add(js)))
			return -1;
		snprintf(id, sizeof(id), "%u", tj->id);
		jb->id = strdup(id);
		/* once per snapshot: a job runs at a random time with a
		 * chance that grows with its run time, so the snapshots
		 * already weigh jobs by their run time */
		jb->weight = 1;
		jb->n = hwloc_bitmap_weight(jo[i].nodes);
		jb->nodes = malloc((jb->n + 1) * sizeof(int));
		if (!jb->id || !jb->nodes)
			return -1;
		hwloc_bitmap_foreach_begin(b, jo[i].nodes)
			jb->nodes[k++] = b;
		hwloc_bitmap_foreach_end();
		/* ranks along the network's ring for every policy, as
		 * --ml-rank-order=topology orders them */
		if (jb->n > 1)
			topoml_ring_order(t, jb->nodes, jb->n);
	}
	return 0;
}

static int _from_trace(const topoml_topo_t *t, const char *platform,
		       const char *trace, const struct topoml_trace_opts *to,
		       enum topoml_policy *pol, int npol, double *at, int nat)
{
	topoml_errors_t err = { 0 };
	struct topoml_trace *tr = topoml_trace_read(trace, to, &err);
	double mean[MAX_POL], p95[MAX_POL];
	int rc = 0, mj[MAX_POL];

	if (!tr) {
		topoml_errors_print(&err, stderr);
		topoml_errors_clear(&err);
		return EX_INVALID;
	}
	for (int p = 0; !rc && p < npol; p++) {
		struct topoml_sim_opts so = { .record_nodes = true,
					      .no_fragmentation = true };
		struct topoml_sim_metrics m;
		struct topoml_sim_jobout *jo = calloc(tr->njobs + 1,
						      sizeof(*jo));
		struct jobset all = { 0 };

		if (!jo || topoml_sim_run(t, tr, pol[p], &so, &m, jo, &err)) {
			topoml_errors_print(&err, stderr);
			topoml_errors_clear(&err);
			free(jo);
			rc = EX_INVALID;
			break;
		}
		/* the first policy's makespan sets the times for all */
		if (!nat) {
			nat = _o.snapshots;
			for (int a = 0; a < nat; a++)
				at[a] = m.makespan_s * (a + 1) / (nat + 1);
		}
		for (int a = 0; !rc && a < nat; a++) {
			struct jobset js = { 0 };
			double mn, pc;

			if (_snapshot(t, tr, jo, at[a], &js) ||
			    _run_set(t, platform, &js)) {
				rc = EX_INVALID;
			} else {
				int nm = _stats(&js, &mn, &pc);

				printf("== %s at %.0f s: %d jobs running, %d "
				       "multi-node; mean %.6g s, p95 %.6g s\n",
				       topoml_policy_name(pol[p]), at[a],
				       js.n, nm, mn, pc);
				_print_set(t, &js);
				/* gather every snapshot's jobs */
				for (int j = 0; j < js.n; j++) {
					struct job *d = _job_add(&all);

					if (!d) {
						rc = EX_INVALID;
						break;
					}
					*d = js.j[j];
					js.j[j].id = NULL;
					js.j[j].nodes = NULL;
				}
			}
			_jobset_free(&js);
		}
		mj[p] = _stats(&all, &mean[p], &p95[p]);
		_jobset_free(&all);
		topoml_sim_jobout_free(jo, tr->njobs);
		free(jo);
	}
	if (!rc) {
		printf("\n%-18s %6s %12s %12s %10s %10s\n", "policy", "jobs",
		       "mean_s", "p95_s", "mean/first", "p95/first");
		for (int p = 0; p < npol; p++)
			printf("%-18s %6d %12.6g %12.6g %10.4f %10.4f\n",
			       topoml_policy_name(pol[p]), mj[p], mean[p],
			       p95[p], mean[0] > 0 ? mean[p] / mean[0] : 1,
			       p95[0] > 0 ? p95[p] / p95[0] : 1);
	}
	topoml_trace_free(tr);
	return rc;
}

/* ---- main ---------------------------------------------------------- */

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "topology", required_argument, NULL, 't' },
		{ "jobs", required_argument, NULL, 'J' },
		{ "trace", required_argument, NULL, 'T' },
		{ "policy", required_argument, NULL, 'p' },
		{ "at", required_argument, NULL, 'A' },
		{ "scale", required_argument, NULL, 's' },
		{ "max-jobs", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 'm' },
		{ "bandwidth", required_argument, NULL, 'b' },
		{ "latency", required_argument, NULL, 'l' },
		{ "alone", no_argument, NULL, 'a' },
		{ "taper", required_argument, NULL, 'X' },
		{ "snapshots", required_argument, NULL, 'K' },
		{ "platform", required_argument, NULL, 'P' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *topo = NULL, *jobs = NULL, *trace = NULL, *plat = NULL;
	const char *polarg = NULL;
	struct topoml_trace_opts to = { 0 };
	enum topoml_policy pol[MAX_POL];
	double at[MAX_AT];
	int npol = 0, nat = 0, c, rc = 0;
	char tmpl[] = "/tmp/topoml-netsim.XXXXXX";
	topoml_errors_t err = { 0 };
	topoml_topo_t *t;
	FILE *f;

	_o.bw[0] = 200e9 / 8;
	_o.nbw = 1;
	_o.lat[0] = 1e-6;
	_o.nlat = 1;
	topoml_sim_register_baselines();
	while ((c = getopt_long(argc, argv, "t:J:T:p:s:n:m:b:l:qh", lo,
				NULL)) != -1) {
		char *end;

		switch (c) {
		case 't': topo = optarg; break;
		case 'J': jobs = optarg; break;
		case 'T': trace = optarg; break;
		case 'p': polarg = optarg; break;
		case 'P': plat = optarg; break;
		case 'a': _o.alone = true; break;
		case 'K':
			_o.snapshots = (int)strtol(optarg, &end, 10);
			if (end == optarg || *end || _o.snapshots < 1 ||
			    _o.snapshots > MAX_AT) {
				_err("--snapshots: '%s' is not 1 to %d",
				     optarg, MAX_AT);
				return EX_USAGE;
			}
			break;
		case 'X':
			_o.taper = strtod(optarg, &end);
			if (end == optarg || *end || !(_o.taper >= 1) ||
			    !isfinite(_o.taper)) {
				_err("--taper: '%s' is not a number >= 1",
				     optarg);
				return EX_USAGE;
			}
			break;
		case 'q': _o.quiet = true; break;
		case 'A':
			if (_parse_list(optarg, at, &nat, 1, "--at"))
				return EX_USAGE;
			break;
		case 's':
			if (!strcmp(optarg, "fit")) {
				to.scale_fit = true;
				break;
			}
			to.scale = strtod(optarg, &end);
			if (end == optarg || *end || !(to.scale > 0)) {
				_err("--scale: '%s' is not a positive number "
				     "or fit", optarg);
				return EX_USAGE;
			}
			break;
		case 'n':
			to.max_jobs = (int)strtol(optarg, &end, 10);
			if (end == optarg || *end || to.max_jobs < 1) {
				_err("--max-jobs: '%s'", optarg);
				return EX_USAGE;
			}
			break;
		case 'm':
			if (_parse_size(optarg, &_o.size))
				return EX_USAGE;
			break;
		case 'b':
			if (_parse_list(optarg, _o.bw, &_o.nbw, 1e9 / 8,
					"--bandwidth"))
				return EX_USAGE;
			break;
		case 'l':
			if (_parse_list(optarg, _o.lat, &_o.nlat, 1e-6,
					"--latency"))
				return EX_USAGE;
			break;
		case 'h':
			_usage(stdout);
			return 0;
		default:
			_usage(stderr);
			return EX_USAGE;
		}
	}
	if (optind < argc || !topo || !!jobs == !!trace) {
		_err("need --topology and one of --jobs or --trace");
		_usage(stderr);
		return EX_USAGE;
	}
	if (access(topo, R_OK) || (trace && access(trace, R_OK))) {
		_err("%s: %s", access(topo, R_OK) ? topo : trace,
		     strerror(errno));
		return EX_USAGE;
	}
	t = topoml_load(topo, TOPOML_FMT_AUTO, &err);
	if (!t) {
		topoml_errors_print(&err, stderr);
		topoml_errors_clear(&err);
		return EX_INVALID;
	}
	topoml_errors_clear(&err);
	if (polarg) {
		char *dup = strdup(polarg), *save = NULL, *tok;

		for (tok = strtok_r(dup, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			if (npol == MAX_POL ||
			    topoml_policy_parse(tok, &pol[npol])) {
				_err("--policy: '%s' unknown or too many",
				     tok);
				free(dup);
				topoml_free(t);
				return EX_USAGE;
			}
			npol++;
		}
		free(dup);
	} else {
		pol[npol++] = TOPOML_POLICY_TOPOML;
		pol[npol++] = t->family == TOPOML_FAT_TREE ?
			TOPOML_POLICY_SLURM_TREE :
			t->family == TOPOML_DRAGONFLY ?
			TOPOML_POLICY_SLURM_DRAGONFLY :
			TOPOML_POLICY_SLURM_HILBERT;
	}

	/* the platform: --platform's file, else a temporary one */
	if (plat) {
		f = fopen(plat, "w");
	} else {
		int fd = mkstemp(tmpl);

		f = fd >= 0 ? fdopen(fd, "w") : NULL;
	}
	if (!f || _write_platform(t, f) || fclose(f)) {
		_err("%s: cannot write the platform: %s", plat ? plat : tmpl,
		     strerror(errno));
		if (!plat)
			unlink(tmpl);
		topoml_free(t);
		return EX_USAGE;
	}
	printf("%s: %d nodes; all-reduce of %.0f bytes; links", topo,
	       t->nnodes, _o.size);
	for (int k = 0; k < (_o.nbw > _o.nlat ? _o.nbw : _o.nlat); k++)
		printf("%s %.4g Gbit/s %.4g us", k ? "," : "",
		       _bw(k) * 8 / 1e9, _lat(k) * 1e6);
	printf(" (by level; the last repeats)");
	if (t->family == TOPOML_FAT_TREE && _o.nbw < t->nlevels)
		printf("; uplinks from level %d: nodes below / %g", _o.nbw,
		       _o.taper);
	printf("\n");

	if (jobs) {
		struct jobset js = { 0 };
		double mean, p95;

		rc = _read_jobs(t, jobs, &js);
		if (rc < 0)
			rc = -rc;
		else if (_run_set(t, plat ? plat : tmpl, &js))
			rc = EX_INVALID;
		if (!rc) {
			int m = _stats(&js, &mean, &p95);

			_print_set(t, &js);
			printf("%d multi-node jobs: run-weighted mean %.6g s, "
			       "p95 %.6g s\n", m, mean, p95);
		}
		_jobset_free(&js);
	} else {
		rc = _from_trace(t, plat ? plat : tmpl, trace, &to, pol, npol,
				 at, nat);
	}
	if (!plat)
		unlink(tmpl);
	topoml_free(t);
	return rc;
}
