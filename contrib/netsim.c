/*
 * topoml-netsim: time, not hops.  Every job of a set runs one step's
 * communication at the same time on the shared links of a site's network,
 * simulated at flow level by SimGrid (S4U's C API: one actor per rank):
 * a ring all-reduce (2(n-1) steps of size/n to its ring neighbour), or
 * for a hybrid job its tensor groups' all-reduce, pipeline sends and
 * data-parallel all-reduce; prints each job's communication time per
 * step and the run-weighted mean and p95.
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
#include <signal.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/barrier.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/mailbox.h>

#include "topoml.h"
#include "sim.h"

#define PROG "topoml-netsim"
#define MAX_LEVELS 8
#define MAX_POL 16
#define MAX_AT 64

/* exit statuses as the topoml command's; 3: a run past its bound */
#define EX_INVALID 1
#define EX_USAGE 2
#define EX_BOUND 3

/* traffic kinds simulated: tensor, pipeline, data parallel */
enum { K_TP, K_PP, K_DP, K_N };

struct job {
	char *id;
	int n;
	int *nodes;		/* node indices, ring order */
	double weight;		/* run time (trace), or as given, or 1 */
	double time;		/* all-reduce time with the others */
	double alone;		/* alone, with --alone; else -1 */
	/* ranks: tpn a node (rank r on nodes[r / tpn]), shape par; a plain
	 * job is tpn 1, tp = pp = 1, dp = n: one ring of --size */
	int tpn;
	struct topoml_parallel par;
	double kt[K_N];		/* per kind: the longest rank's phase */
};

struct jobset {
	int n;
	struct job *j;
};

static struct {
	double bw[MAX_LEVELS];	/* bytes/s per link level */
	double lat[MAX_LEVELS];	/* s per link */
	int nbw, nlat;
	double size;		/* bytes all-reduced per step (DP) */
	double tp_size;		/* bytes a TP group all-reduces per step */
	double pp_size;		/* bytes each stage sends either way */
	double nvl_bw, nvl_lat;	/* within a node (SimGrid's loopback) */
	int hybrid, hybrid_tp;	/* --hybrid K, --hybrid-tp T */
	double time_limit;	/* s of wall time per SimGrid run, 0: none */
	double max_transfers;	/* per SimGrid run, 0: no bound */
	double taper;		/* fat-tree uplinks without --bandwidth */
	int snapshots;		/* --snapshots, without --at */
	double box_wait;	/* --box-wait: topoml's LocalityWait */
	double hybrid_wait;	/* --hybrid-wait: ... for hybrid jobs */
	bool no_backfill;
	bool alone;
	bool quiet;
} _o = { .size = 256.0 * 1024 * 1024, .taper = 1,
	.snapshots = 1, .tp_size = 64.0 * 1024 * 1024,
	.pp_size = 64.0 * 1024 * 1024, .nvl_bw = 3600e9 / 8,
	.nvl_lat = 1e-6, .time_limit = 600, .max_transfers = 2e7 };

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
"Simulate every job's ring all-reduce (or hybrid step) at once on the shared\n"
"links (SimGrid) and print each job's communication time per step.\n"
"  -t, --topology FILE     site topology (topology.conf, JSON, ibnetdiscover)\n"
"  -J, --jobs FILE         jobs, one a line: ID=HOSTLIST [WEIGHT]\n"
"                          [PARALLEL as tp=4,pp=2], nodes in ring order\n"
"                          ('-': stdin)\n"
"  -T, --trace FILE        or: replay this trace as topoml sim does and take\n"
"                          the jobs each policy has running at --at\n"
"  -p, --policy P1,...     with --trace: policies (default topoml and the\n"
"                          family's Slurm baseline)\n"
"      --at T1,T2,...      with --trace: up to 64 snapshot times (s)\n"
"      --snapshots K       without --at: K times evenly spaced over the\n"
"                          first policy's makespan (default 1: its middle)\n"
"  -s, --scale X|fit       with --trace: job sizes as topoml sim --scale\n"
"  -n, --max-jobs N        with --trace: the first N jobs only\n"
"  -N, --trace-nodes N     with --trace: as topoml sim\n"
"      --no-backfill       with --trace: plain FCFS\n"
"      --box-wait S        with --trace: topoml's locality wait (as topoml\n"
"                          sim --box-wait; default 0)\n"
"      --hybrid-wait S     with --trace and --hybrid: its wait for hybrid\n"
"                          jobs (as topoml sim --hybrid-wait; default 0)\n"
"      --hybrid K          hybrid jobs of K ranks a node: tp=K, pp 8, 4, 2\n"
"                          or 1 leaving dp >= 2, dp the rest (as topoml\n"
"                          sim --hybrid; topoml places them so)\n"
"      --hybrid-tp T       with --hybrid: tp=T\n"
"      --weights W         with --hybrid: topoml's weights per kind\n"
"  -m, --size BYTES        bytes all-reduced per step, by data-parallel\n"
"      --dp-size BYTES     groups (K, M, G suffixes, powers of 1024;\n"
"                          default 256M)\n"
"      --tp-size BYTES     a tensor group's all-reduce (default 64M)\n"
"      --pp-size BYTES     a pipeline stage's send each way (default 64M)\n"
"      --nvlink GBITS      between ranks of a node (default 3600)\n"
"      --nvlink-latency US  (default 1)\n"
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
"      --time-limit S      wall time per SimGrid run (default 600; 0: none)\n"
"      --max-transfers N   transfers per SimGrid run (default 2e7; 0: none)\n"
"  -q, --quiet             no SimGrid messages\n"
"  -h, --help\n"
"Exit 0, 1 for an invalid topology or job, 2 for a usage error, 3 past\n"
"--max-transfers or --time-limit.\n");
}

/* ---- options ------------------------------------------------------- */

/* Up to max positive numbers, comma-separated, each times unit. */
static int _parse_list(const char *arg, double *v, int *n, int max,
		       double unit, const char *what)
{
	char *dup = strdup(arg), *save = NULL, *tok;

	*n = 0;
	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *end;
		double x = strtod(tok, &end);

		if (end == tok || *end || !(x > 0) || !isfinite(x) ||
		    *n == max) {
			_err("%s: '%s' is not a list of up to %d positive "
			     "numbers", what, arg, max);
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
		/* a block topology.conf's largest blocks need not share a
		 * parent, yet Slurm's nodes all reach each other: a root */
		if (t->nblocks > 0)
			fputs("<router id=\"#root\"/>\n", f);
	}
	/* links first (the DTD wants them before the routes) */
	for (i = 0; i < t->nnodes; i++) {
		snprintf(id, sizeof(id), "n%d", i);
		_link(f, id, 0);
		/* a node's port on its NVLink domain's switch */
		if (t->nnvl > 0 && t->nodes[i].nvl >= 0)
			fprintf(f, "<link id=\"v%d\" bandwidth=\"%.17gBps\" "
				"latency=\"%.17gs\" sharing_policy=\"SPLIT"
				"DUPLEX\"/>\n", i, _o.nvl_bw, _o.nvl_lat / 2);
	}
	if (t->family == TOPOML_FAT_TREE) {
		for (i = 0; t->nblocks > 0 && i < t->nswitches; i++) {
			const struct topoml_switch *s = &t->switches[i];

			/* a top block's link to the root: its nodes' speed */
			if (!s->nparents)
				fprintf(f, "<link id=\"s%d-root\" bandwidth="
					"\"%.17gBps\" latency=\"%.17gs\" "
					"sharing_policy=\"SPLITDUPLEX\"/>\n", i,
					_bw(0) * hwloc_bitmap_weight(s->desc) /
					_o.taper, _lat(s->level + 1));
		}
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
			if (t->nblocks > 0 && !s->nparents) {
				snprintf(id, sizeof(id), "s%d-root", i);
				snprintf(a, sizeof(a), "#s%d", i);
				_route(f, a, false, "#root", id);
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
	/* nodes of one multi-node NVLink domain (an NVL72 rack, a block):
	 * one direct edge each way through both ports, shorter than any
	 * path through the network, so that they talk over NVLink */
	for (i = 0; t->nnvl > 0 && i < t->nnodes; i++)
		for (k = i + 1; k < t->nnodes; k++) {
			if (t->nodes[i].nvl < 0 ||
			    t->nodes[i].nvl != t->nodes[k].nvl)
				continue;
			for (int d = 0; d < 2; d++) {
				int x = d ? k : i, y = d ? i : k;

				fputs("<route src=\"", f);
				_xml_str(f, t->nodes[x].name);
				fputs("\" dst=\"", f);
				_xml_str(f, t->nodes[y].name);
				fprintf(f, "\" symmetrical=\"NO\"><link_ctn id="
					"\"v%d\" direction=\"UP\"/><link_ctn "
					"id=\"v%d\" direction=\"DOWN\"/></route>"
					"\n", x, y);
			}
		}
	fputs("</zone>\n</platform>\n", f);
	return ferror(f) ? -1 : 0;
}

/* ---- one simulation (in a child process) --------------------------- */

/* per job: latest rank end, then each kind's longest phase */
#define NRES (1 + K_N)
static double *_res;
static const struct jobset *_js;
/* per job and rank, the route latency to: TP next, PP next, PP previous,
 * DP next (paid by the sender before each transfer, see _simulate) */
enum { L_TP, L_PF, L_PB, L_DP, L_N };
static const topoml_topo_t *_topo;
static sg_bar_t _bar;		/* every rank of the run */
static unsigned _arrived, _nranks;
static int _dummy;		/* S4U wants a payload */

static sg_mailbox_t _mbox(int j, int r, char kind)
{
	char name[64];

	snprintf(name, sizeof(name), "j%d-r%d-%c", j, r, kind);
	return sg_mailbox_by_name(name);
}

/* A ring all-reduce of size bytes over the n ranks of a group: reduce-
 * scatter then all-gather, 2(n-1) steps of size/n to the next rank. */
static void _ring(int j, int self, int next, int n, double size, char kind,
		  double lat)
{
	sg_mailbox_t out = _mbox(j, next, kind), in = _mbox(j, self, kind);
	long chunk = (long)ceil(size / n);

	for (int s = 0; s < 2 * (n - 1); s++) {
		sg_comm_t c;

		sg_actor_sleep_for(lat);
		c = sg_mailbox_put_async(out, &_dummy, chunk);

		sg_mailbox_get(in);
		sg_comm_wait(c);
	}
}

static void _phase_end(int j, int k, double t0)
{
	double d = simgrid_get_clock() - t0;

	if (d > _res[j * NRES + 1 + k])
		_res[j * NRES + 1 + k] = d;
}

static int _ranks(const struct job *jb)
{
	return jb->n * jb->tpn;
}

/* Whether the job has any traffic to simulate. */
static bool _busy(const struct job *jb)
{
	return jb->par.tp > 1 || jb->par.pp > 1 || jb->par.dp > 1;
}

static double _route_lat(const struct job *jb, int a, int b)
{
	int x = jb->nodes[a / jb->tpn], y = jb->nodes[b / jb->tpn];

	if (x == y)
		return _o.nvl_lat;
	return sg_host_get_route_latency(
		sg_host_by_name(_topo->nodes[x].name),
		sg_host_by_name(_topo->nodes[y].name));
}

/*
 * argv: name job rank.  One training step's communication in Megatron's
 * order, each phase once the rank's previous one is done: the tensor
 * group's all-reduce, the pipeline's point-to-point (the activation to
 * the next stage and the gradient to the previous one, at once, as in
 * 1F1B's steady state), the data-parallel all-reduce.
 */
static void _rank(int argc, char **argv)
{
	int j = atoi(argv[1]), r = atoi(argv[2]);
	const struct job *jb = &_js->j[j];
	const struct topoml_parallel *p = &jb->par;
	double lat[L_N] = { 0 };
	int ti, ci, di, pi;
	double t0;

	(void)argc;
	topoml_parallel_coords(p, r, &ti, &ci, &di, &pi);
	/*
	 * Latency apart from bandwidth sharing: SimGrid's CM02 shares a link
	 * between flows in inverse proportion to their route's latency (TCP's
	 * RTT unfairness), which InfiniBand's and NVLink's arbitration do
	 * not.  So each rank reads its routes' latencies at time 0, then
	 * every link's is set to 0 (flows share fairly), and each sender
	 * waits its route's latency before each transfer.
	 */
	if (p->tp > 1)
		lat[L_TP] = _route_lat(jb, r, topoml_parallel_rank(p,
					(ti + 1) % p->tp, ci, di, pi));
	if (pi + 1 < p->pp)
		lat[L_PF] = _route_lat(jb, r, topoml_parallel_rank(p, ti, ci,
							di, pi + 1));
	if (pi > 0)
		lat[L_PB] = _route_lat(jb, r, topoml_parallel_rank(p, ti, ci,
							di, pi - 1));
	if (p->dp > 1)
		lat[L_DP] = _route_lat(jb, r, topoml_parallel_rank(p, ti, ci,
						(di + 1) % p->dp, pi));
	/* the last rank to get here (actors run one at a time) */
	if (++_arrived == _nranks) {
		sg_link_t *links = sg_link_list();

		for (size_t i = 0; links && i < sg_link_count(); i++)
			sg_link_set_latency(links[i], 0);
		free(links);
	}
	sg_barrier_wait(_bar);
	t0 = simgrid_get_clock();
	if (p->tp > 1)
		_ring(j, r, topoml_parallel_rank(p, (ti + 1) % p->tp, ci, di,
						 pi), p->tp, _o.tp_size, 't',
		      lat[L_TP]);
	_phase_end(j, K_TP, t0);
	t0 = simgrid_get_clock();
	if (p->pp > 1) {
		sg_comm_t c[4];
		void *data[2];
		int nc = 0;

		/* both sends after the longer latency: equal in a leaf */
		sg_actor_sleep_for(lat[L_PF] > lat[L_PB] ? lat[L_PF] :
				   lat[L_PB]);
		if (pi + 1 < p->pp)
			c[nc++] = sg_mailbox_put_async(
				_mbox(j, topoml_parallel_rank(p, ti, ci, di,
							      pi + 1), 'f'),
				&_dummy, (long)_o.pp_size);
		if (pi > 0)
			c[nc++] = sg_mailbox_put_async(
				_mbox(j, topoml_parallel_rank(p, ti, ci, di,
							      pi - 1), 'b'),
				&_dummy, (long)_o.pp_size);
		/* both receives posted at once: a transfer starts when
		 * its receive is posted */
		if (pi > 0)
			c[nc++] = sg_mailbox_get_async(_mbox(j, r, 'f'),
						       &data[0]);
		if (pi + 1 < p->pp)
			c[nc++] = sg_mailbox_get_async(_mbox(j, r, 'b'),
						       &data[1]);
		sg_comm_wait_all(c, nc);
	}
	_phase_end(j, K_PP, t0);
	t0 = simgrid_get_clock();
	if (p->dp > 1)
		_ring(j, r, topoml_parallel_rank(p, ti, ci, (di + 1) % p->dp,
						 pi), p->dp, _o.size, 'd',
		      lat[L_DP]);
	_phase_end(j, K_DP, t0);
	if (simgrid_get_clock() > _res[j * NRES])
		_res[j * NRES] = simgrid_get_clock();
}

/* Transfers a step of the job takes: the event count SimGrid handles. */
static double _transfers(const struct job *jb)
{
	const struct topoml_parallel *p = &jb->par;
	double r = _ranks(jb);

	return r * (2.0 * (p->tp - 1) + 2.0 * (p->dp - 1)) +
		2.0 * (p->pp - 1) * (r / p->pp);
}

static const char *_exceeded;	/* why the last run stopped, or NULL */
static double _w[TOPOML_KIND_COUNT];	/* --weights (topoml's placement) */

/*
 * Time the jobs of js selected by `only' (-1: all together) on the
 * platform; times into res[] (NRES per job; unselected ones untouched).
 * Past --max-transfers or --time-limit: -EX_BOUND, _exceeded says which.
 */
static int _simulate(const topoml_topo_t *t, const char *platform,
		     const struct jobset *js, int only, double *res)
{
	int fd[2], status;
	double events = 0;
	pid_t pid;

	_exceeded = NULL;
	for (int j = 0; j < js->n; j++)
		if (only < 0 || j == only)
			events += _transfers(&js->j[j]);
	if (_o.max_transfers > 0 && events > _o.max_transfers) {
		_err("%.0f transfers in one SimGrid run, more than "
		     "--max-transfers %.0f", events, _o.max_transfers);
		_exceeded = "--max-transfers";
		return -EX_BOUND;
	}
	fflush(NULL);
	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char bw[64];
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
			/* within a node (NVLink): the loopback link, at
			 * full speed for every pair of ranks */
			bw, "--cfg=network/loopback-lat:0", NULL };
		int ac = 10;

		close(fd[0]);
		/* no simulation outlives the command */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(1);
		if (_o.time_limit > 0) {
			struct itimerval it = { { 0, 0 }, {
				(time_t)_o.time_limit,
				(suseconds_t)((_o.time_limit -
					       floor(_o.time_limit)) * 1e6) } };

			if (!it.it_value.tv_sec && !it.it_value.tv_usec)
				it.it_value.tv_usec = 1;
			setitimer(ITIMER_REAL, &it, NULL);
		}
		snprintf(bw, sizeof(bw), "--cfg=network/loopback-bw:%.17g",
			 _o.nvl_bw);
		simgrid_init(&ac, av);
		simgrid_load_platform(platform);
		_res = calloc((size_t)js->n * NRES + 1, sizeof(double));
		_js = js;
		_topo = t;
		{
			unsigned na = 0;

			for (int j = 0; j < js->n; j++)
				if ((only < 0 || j == only) &&
				    _busy(&js->j[j]))
					na += _ranks(&js->j[j]);
			_nranks = na;
			_bar = sg_barrier_init(na ? na : 1);
		}
		for (int j = 0; j < js->n; j++) {
			const struct job *jb = &js->j[j];

			if ((only >= 0 && j != only) || !_busy(jb))
				continue;
			for (int r = 0; r < _ranks(jb); r++) {
				char sj[16], sr[16];
				char *args[] = { "rank", sj, sr };
				sg_host_t h = sg_host_by_name(
					t->nodes[jb->nodes[r / jb->tpn]].name);

				snprintf(sj, sizeof(sj), "%d", j);
				snprintf(sr, sizeof(sr), "%d", r);
				sg_actor_create("rank", h, _rank, 3, args);
			}
		}
		simgrid_run();
		{
			size_t want = (size_t)js->n * NRES * sizeof(double);

			if (write(fd[1], _res, want) != (ssize_t)want)
				_exit(1);
		}
		_exit(0);
	}
	close(fd[1]);
	{
		size_t want = (size_t)js->n * NRES * sizeof(double), got = 0;
		char *buf = malloc(want ? want : 1);

		while (got < want) {
			ssize_t r = read(fd[0], buf + got, want - got);

			if (r <= 0)
				break;
			got += r;
		}
		close(fd[0]);
		if (waitpid(pid, &status, 0) < 0)
			status = -1;
		if (status != -1 && WIFSIGNALED(status) &&
		    WTERMSIG(status) == SIGALRM) {
			free(buf);
			_err("a SimGrid run of %.0f transfers took more than "
			     "--time-limit %g s of wall time: stopped",
			     events, _o.time_limit);
			_exceeded = "--time-limit";
			return -EX_BOUND;
		}
		if (status == -1 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) || got != want) {
			free(buf);
			_err("the SimGrid simulation failed");
			return -1;
		}
		for (int j = 0; j < js->n; j++)
			if (only < 0 || j == only)
				memcpy(&res[j * NRES], buf + j * NRES *
				       sizeof(double), NRES * sizeof(double));
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

/*
 * The job's ranks once its nodes are known: spec (--ml-parallel's syntax)
 * or, with --hybrid K, topoml sim --hybrid's shape, K ranks a node; else
 * one rank a node in one ring of --size.  0, or -1 with a message.
 */
static int _job_shape(struct job *jb, const char *spec, const char *where)
{
	char err[256];

	jb->par = (struct topoml_parallel){ 1, 1, jb->n, 1, 1 };
	jb->tpn = 1;
	if (spec) {
		jb->tpn = _o.hybrid ? _o.hybrid : 1;
		if (topoml_parallel_parse(spec, &jb->par, err, sizeof(err)) ||
		    topoml_parallel_resolve(&jb->par, _ranks(jb), err,
					    sizeof(err))) {
			_err("%s: '%s': %s", where, spec, err);
			return -1;
		}
		if (jb->par.cp > 1 || jb->par.ep > 1) {
			_err("%s: '%s': cp and ep are not simulated", where,
			     spec);
			return -1;
		}
	} else if (_o.hybrid && topoml_sim_hybrid_shape(jb->n, _o.hybrid,
			_o.hybrid_tp ? _o.hybrid_tp : _o.hybrid, &jb->par)) {
		jb->tpn = _o.hybrid;
	} else {
		jb->par = (struct topoml_parallel){ 1, 1, jb->n, 1, 1 };
	}
	return 0;
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
		char *p = line, *eq, *list, *w, *spec, where[512];
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
		/* [WEIGHT] [PARALLEL]: the one with '=' is the shape */
		spec = NULL;
		if (w) {
			char *sp;

			while (*w == ' ' || *w == '\t')
				w++;
			sp = strpbrk(w, " \t");
			if (strchr(w, '=') && (!sp || sp > strchr(w, '='))) {
				spec = w;
				w = NULL;
				if (sp)
					*sp = 0;
			} else if (sp) {
				*sp++ = 0;
				while (*sp == ' ' || *sp == '\t')
					sp++;
				spec = *sp ? sp : NULL;
			}
		}
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
		if (!rc && _job_shape(jb, spec, where))
			rc = -EX_INVALID;
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

/* Run-weighted mean of each kind's phase over the multi-node jobs. */
static void _kind_means(const struct jobset *js, double km[K_N])
{
	double wsum = 0;

	memset(km, 0, K_N * sizeof(double));
	for (int i = 0; i < js->n; i++)
		if (js->j[i].n > 1) {
			wsum += js->j[i].weight;
			for (int k = 0; k < K_N; k++)
				km[k] += js->j[i].weight * js->j[i].kt[k];
		}
	for (int k = 0; wsum > 0 && k < K_N; k++)
		km[k] /= wsum;
}

/*
 * Fat-tree parts with no common switch (Slurm accepts such files) have no
 * route between them, on which SimGrid gives up badly: refuse first.
 */
static int _routable(const topoml_topo_t *t, const struct jobset *js)
{
	if (t->family != TOPOML_FAT_TREE || t->nblocks > 0)
		return 0;	/* dragonfly, torus, block: connected */
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

/* 0, -1 on an error, -EX_BOUND past a bound. */
static int _run_set(const topoml_topo_t *t, const char *platform,
		    struct jobset *js)
{
	double *res;
	int rc;

	if (_routable(t, js))
		return -1;
	res = calloc((size_t)js->n * NRES + 1, sizeof(double));
	if (!res)
		return -1;
	if ((rc = _simulate(t, platform, js, -1, res))) {
		free(res);
		return rc;
	}
	for (int j = 0; j < js->n; j++) {
		js->j[j].time = res[j * NRES];
		for (int k = 0; k < K_N; k++)
			js->j[j].kt[k] = res[j * NRES + 1 + k];
	}
	if (_o.alone)
		for (int j = 0; j < js->n; j++) {
			if (!_busy(&js->j[j])) {
				js->j[j].alone = 0;
				continue;
			}
			if ((rc = _simulate(t, platform, js, j, res))) {
				free(res);
				return rc;
			}
			js->j[j].alone = res[j * NRES];
		}
	free(res);
	return 0;
}

/* Whether a job of the set has more than one plain ring. */
static bool _hybrid_set(const struct jobset *js)
{
	for (int j = 0; j < js->n; j++)
		if (js->j[j].tpn > 1 || js->j[j].par.tp > 1 ||
		    js->j[j].par.pp > 1)
			return true;
	return false;
}

static void _print_set(const topoml_topo_t *t, const struct jobset *js)
{
	bool hyb = _hybrid_set(js);

	printf("%-10s %6s %12s%s%s  %s\n", "job", "nodes", "time_s",
	       _o.alone ? "      alone_s slowdown" : "",
	       hyb ? "         tp_s         pp_s         dp_s shape" : "",
	       "ring");
	for (int j = 0; j < js->n; j++) {
		const struct job *jb = &js->j[j];
		char *hl = topoml_nodes_format(t, jb->nodes, jb->n);

		printf("%-10s %6d %12.6g", jb->id, jb->n, jb->time);
		if (_o.alone)
			printf(" %12.6g %8.4f", jb->alone,
			       jb->alone > 0 ? jb->time / jb->alone : 1.0);
		if (hyb)
			printf(" %12.6g %12.6g %12.6g %dx%d,%d,%d",
			       jb->kt[K_TP], jb->kt[K_PP], jb->kt[K_DP],
			       jb->n, jb->tpn, jb->par.tp, jb->par.pp);
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
		if (_job_shape(jb, NULL, id))
			return -1;
		/* ranks in the order topoml gives them, for every policy
		 * (--ml-rank-order=topology): the network's ring, or a
		 * hybrid job's stages and groups (select/topoml's order=),
		 * so that only the placements differ */
		if (jb->n > 1 && jb->tpn == _o.hybrid && _o.hybrid)
			(void)topoml_hybrid_order(t, jb->nodes, jb->n,
						  jb->tpn, &jb->par, _w);
		else if (jb->n > 1)
			topoml_ring_order(t, jb->nodes, jb->n);
	}
	return 0;
}

/*
 * Why a policy cannot express the fabric, as `topoml place --nodes 2'
 * says it (peers-report.sh's n/a), into why; false when it places.
 */
static bool _refuses(const topoml_topo_t *t, enum topoml_policy pol,
		     char *why, size_t len)
{
	hwloc_bitmap_t all = hwloc_bitmap_alloc();
	struct topoml_place_req req = { .nnodes = t->nnodes < 2 ? 1 : 2 };
	struct topoml_placement out = { 0 };
	bool no;

	hwloc_bitmap_set_range(all, 0, t->nnodes - 1);
	req.avail = all;
	why[0] = 0;
	no = topoml_place(t, pol, &req, &out, why, len) != 0;
	topoml_placement_clear(&out);
	hwloc_bitmap_free(all);
	if (no && !why[0])
		snprintf(why, len, "places no job");
	return no;
}

/* --hybrid: topoml places a job as select/topoml places an --ml-parallel
 * job of that shape (topoml sim --hybrid's placement). */
static int _hyb_place(void *arg, const topoml_topo_t *t, int job,
		      const struct topoml_place_req *req,
		      struct topoml_placement *out, char *why, size_t whylen)
{
	struct topoml_parallel p;

	(void)arg;
	(void)job;
	if (!topoml_sim_hybrid_shape(req->nnodes, _o.hybrid, _o.hybrid_tp ?
				     _o.hybrid_tp : _o.hybrid, &p))
		return topoml_place(t, TOPOML_POLICY_TOPOML, req, out, why,
				    whylen);
	return topoml_place_hybrid(t, req, &p, _o.hybrid, _w, out, NULL, why,
				   whylen);
}

/* --hybrid-wait: the shape the locality wait holds a job for. */
static bool _hyb_wait_job(void *arg, int n, struct topoml_parallel *p,
			  int *tasks_per_node)
{
	(void)arg;
	*tasks_per_node = _o.hybrid;
	return topoml_sim_hybrid_shape(n, _o.hybrid, _o.hybrid_tp ?
				       _o.hybrid_tp : _o.hybrid, p);
}

static int _from_trace(const topoml_topo_t *t, const char *platform,
		       const char *trace, const struct topoml_trace_opts *to,
		       enum topoml_policy *pol, int npol, double *at, int nat)
{
	topoml_errors_t err = { 0 };
	struct topoml_trace *tr = topoml_trace_read(trace, to, &err);
	double mean[MAX_POL], p95[MAX_POL], km[MAX_POL][K_N];
	int rc = 0, mj[MAX_POL];
	bool na[MAX_POL] = { false };
	char nawhy[MAX_POL][160] = { { 0 } };
	bool hyb = _o.hybrid > 0;

	if (!tr) {
		topoml_errors_print(&err, stderr);
		topoml_errors_clear(&err);
		return EX_INVALID;
	}
	for (int p = 0; !rc && p < npol; p++) {
		struct topoml_sim_opts so = { .record_nodes = true,
					      .no_fragmentation = true,
					      .no_backfill = _o.no_backfill,
					      .box_wait = _o.box_wait };
		struct topoml_sim_metrics m;
		struct topoml_sim_jobout *jo = calloc(tr->njobs + 1,
						      sizeof(*jo));
		struct jobset all = { 0 };

		if (p && _refuses(t, pol[p], nawhy[p], sizeof(nawhy[p]))) {
			na[p] = true;
			free(jo);
			continue;
		}
		if (_o.hybrid) {
			so.place = _hyb_place;
			so.hybrid_weights = _w;
			so.wait_job = _hyb_wait_job;
			so.hold_wait = _o.hybrid_wait;
		}
		if (!jo || topoml_sim_run(t, tr, pol[p], &so, &m, jo, &err)) {
			/* a peer that cannot express the fabric: n/a */
			fprintf(stderr, PROG ": %s: ",
				topoml_policy_name(pol[p]));
			topoml_errors_print(&err, stderr);
			topoml_errors_clear(&err);
			if (jo)
				topoml_sim_jobout_free(jo, tr->njobs);
			free(jo);
			na[p] = true;
			if (!p)
				rc = EX_INVALID;
			continue;
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
				rc = _exceeded ? EX_BOUND : EX_INVALID;
				if (_exceeded)
					_err("%s at %.0f s: %d jobs running: "
					     "past %s (fewer jobs: --max-jobs, "
					     "a smaller --scale; or raise it)",
					     topoml_policy_name(pol[p]), at[a],
					     js.n, _exceeded);
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
		_kind_means(&all, km[p]);
		_jobset_free(&all);
		topoml_sim_jobout_free(jo, tr->njobs);
		free(jo);
	}
	if (!rc) {
		printf("\n%-18s %6s %12s %12s %10s %10s%s\n", "policy",
		       "jobs", "mean_s", "p95_s", "mean/first", "p95/first",
		       hyb ? "    tp_mean_s    pp_mean_s    dp_mean_s" : "");
		for (int p = 0; p < npol; p++) {
			if (na[p]) {
				printf("%-18s n/a (%s)\n",
				       topoml_policy_name(pol[p]), nawhy[p][0] ?
				       nawhy[p] : "its replay failed");
				continue;
			}
			printf("%-18s %6d %12.6g %12.6g %10.4f %10.4f",
			       topoml_policy_name(pol[p]), mj[p], mean[p],
			       p95[p], mean[0] > 0 ? mean[p] / mean[0] : 1,
			       p95[0] > 0 ? p95[p] / p95[0] : 1);
			for (int k = 0; hyb && k < K_N; k++)
				printf(" %12.6g", km[p][k]);
			printf("\n");
		}
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
		{ "dp-size", required_argument, NULL, 'm' },
		{ "tp-size", required_argument, NULL, 'O' },
		{ "pp-size", required_argument, NULL, 'Q' },
		{ "nvlink", required_argument, NULL, 'V' },
		{ "nvlink-latency", required_argument, NULL, 'W' },
		{ "hybrid", required_argument, NULL, 'H' },
		{ "hybrid-tp", required_argument, NULL, 'Y' },
		{ "weights", required_argument, NULL, 'w' },
		{ "trace-nodes", required_argument, NULL, 'N' },
		{ "no-backfill", no_argument, NULL, 'B' },
		{ "box-wait", required_argument, NULL, 'R' },
		{ "hybrid-wait", required_argument, NULL, 'G' },
		{ "time-limit", required_argument, NULL, 'L' },
		{ "max-transfers", required_argument, NULL, 'M' },
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
	struct topoml_torus3d *t3d = NULL;
	topoml_topo_t *t;
	FILE *f;

	_o.bw[0] = 200e9 / 8;
	_o.nbw = 1;
	_o.lat[0] = 1e-6;
	_o.nlat = 1;
	topoml_sim_register_baselines();
	topoml_kind_weights_default(_w);
	while ((c = getopt_long(argc, argv, "t:J:T:p:s:n:N:m:b:l:qh", lo,
				NULL)) != -1) {
		char *end;

		switch (c) {
		case 't': topo = optarg; break;
		case 'J': jobs = optarg; break;
		case 'T': trace = optarg; break;
		case 'p': polarg = optarg; break;
		case 'P': plat = optarg; break;
		case 'a': _o.alone = true; break;
		case 'R':
		case 'G': {
			double *w = c == 'R' ? &_o.box_wait : &_o.hybrid_wait;

			*w = strtod(optarg, &end);
			if (end == optarg || *end || !(*w >= 0) ||
			    *w > 31536000) {
				_err("--%s: '%s' is not 0 to 31536000 "
				     "seconds", c == 'R' ? "box-wait" :
				     "hybrid-wait", optarg);
				return EX_USAGE;
			}
			break;
		}
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
		case 'B': _o.no_backfill = true; break;
		case 'O':
			if (_parse_size(optarg, &_o.tp_size))
				return EX_USAGE;
			break;
		case 'Q':
			if (_parse_size(optarg, &_o.pp_size))
				return EX_USAGE;
			break;
		case 'V':
		case 'W':
		case 'L':
		case 'M': {
			double x = strtod(optarg, &end);

			if (end == optarg || *end || !isfinite(x) ||
			    !(c == 'V' ? x > 0 : x >= 0)) {
				_err("--%s: '%s' is not a %s number",
				     c == 'V' ? "nvlink" : c == 'W' ?
				     "nvlink-latency" : c == 'L' ?
				     "time-limit" : "max-transfers", optarg,
				     c == 'V' ? "positive" : "non-negative");
				return EX_USAGE;
			}
			if (c == 'V')
				_o.nvl_bw = x * 1e9 / 8;
			else if (c == 'W')
				_o.nvl_lat = x * 1e-6;
			else if (c == 'L')
				_o.time_limit = x;
			else
				_o.max_transfers = x;
			break;
		}
		case 'H':
		case 'Y': {
			long x = strtol(optarg, &end, 10);

			if (end == optarg || *end || x < 1 || x > 4096) {
				_err("--%s: '%s' is not 1 to 4096",
				     c == 'H' ? "hybrid" : "hybrid-tp",
				     optarg);
				return EX_USAGE;
			}
			if (c == 'H')
				_o.hybrid = (int)x;
			else
				_o.hybrid_tp = (int)x;
			break;
		}
		case 'w': {
			char e[256];

			if (topoml_kind_weights_parse(optarg, _w, e,
						      sizeof(e))) {
				_err("--weights: %s", e);
				return EX_USAGE;
			}
			break;
		}
		case 'N':
			to.trace_nodes = (int)strtol(optarg, &end, 10);
			if (end == optarg || *end || to.trace_nodes < 1) {
				_err("--trace-nodes: '%s'", optarg);
				return EX_USAGE;
			}
			break;
		case 'A':
			if (_parse_list(optarg, at, &nat, MAX_AT, 1, "--at"))
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
			if (_parse_list(optarg, _o.bw, &_o.nbw, MAX_LEVELS,
					1e9 / 8, "--bandwidth"))
				return EX_USAGE;
			break;
		case 'l':
			if (_parse_list(optarg, _o.lat, &_o.nlat, MAX_LEVELS,
					1e-6, "--latency"))
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
	/* -N scales job sizes by this machine's nodes, as topoml sim */
	to.machine_nodes = t->nnodes;
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

	/* slurm-torus3d's shapes on a torus: a box of every size the torus
	 * has, topoml sim's default */
	for (int p = 0; p < npol && !t3d && t->family == TOPOML_TORUS; p++)
		if (pol[p] == TOPOML_POLICY_SLURM_TORUS3D) {
			t3d = topoml_torus3d_every_size(t);
			t->torus3d = t3d;
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
	printf(" (by level; the last repeats); NVLink (within a node%s) "
	       "%.4g Gbit/s %.4g us", t->nnvl > 0 ? " or domain" : "",
	       _o.nvl_bw * 8 / 1e9, _o.nvl_lat * 1e6);
	if (_o.hybrid)
		printf("; --hybrid %d, tp=%d, tp all-reduce %.0f bytes, pp "
		       "send %.0f bytes", _o.hybrid, _o.hybrid_tp ?
		       _o.hybrid_tp : _o.hybrid, _o.tp_size, _o.pp_size);
	else
		printf("; tp all-reduce %.0f bytes, pp send %.0f bytes "
		       "(jobs with a shape)", _o.tp_size, _o.pp_size);
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
			rc = _exceeded ? EX_BOUND : EX_INVALID;
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
	if (t3d)
		topoml_torus3d_free(t3d);
	return rc;
}
