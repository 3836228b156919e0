/*
 * topoml sim: replay a job trace on a topology with one or more placement
 * policies side by side (topology/sim/sim.c), print the metrics as a table
 * or JSON, draw them as an SVG bar chart.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "cli.h"
#include "sim.h"
#include "util/util.h"	/* topoml__int_cmp */

#define SIM_MAX_POLICIES 16	/* every policy the library has */

struct sim_cli {
	const char *topology;
	const char *trace;
	const char *svg;
	const char *jobs;	/* --jobs FILE: per-job outcome */
	const char *torus3d;	/* --torus3d topology.yaml|every-size */
	bool torus3d_bound;	/* --torus3d-bound */
	bool json;
	int npol;
	enum topoml_policy pol[SIM_MAX_POLICIES];
	struct topoml_trace_opts topts;
	struct topoml_sim_opts sopts;
	int hybrid;		/* --hybrid K: tasks (GPUs) per node, 0 off */
	int hybrid_tp;		/* --hybrid-tp T, 0: K */
	bool *forced;		/* per job: its free nodes held no
				 * placement without a split TP group */
	long *dp_lb;		/* per job: the least DP traffic through
				 * the top that its free nodes allowed with
				 * no more tensor groups over the top nor
				 * split than topoml's placement */
	long *dp_lb_any;	/* the same, any number split
				 * (_hyb_dp_lb alone) */
	int *topdom;		/* per node: its domain below the top
				 * (fat-tree spine pod, dragonfly group) */
	int ntopdom;
	int njobs;
	double weights[TOPOML_KIND_COUNT];
	const char *avoid;	/* --avoid HOSTLIST */
	hwloc_bitmap_t avoid_set;
};

/*
 * --hybrid: every job gets a hybrid shape; topoml places it as
 * select/topoml places an --ml-parallel job (topoml_place_hybrid) and its
 * per-step traffic is counted on the nodes it ran on, in the rank order
 * its placement gives: topoml_hybrid_order for topoml (select/topoml's
 * SystemComment order=), Slurm's node order for the baselines.
 */
struct hyb_sum {
	struct topoml_kind_cost kind[TOPOML_KIND_COUNT];
	long tp_split_nvl;	/* TP groups over > 1 NVLink domain */
	long tp_split_forced;	/* of those: no free set allowed fewer */
	long dp_top_lb;		/* the least DP through the top that
				 * each job's free nodes allowed, summed */
	long dp_top_lb_any;	/* the same, any number of TP groups split */
	long tp_split_node;	/* TP groups over > 1 node */
	int jobs;
	double weighted;
};

static struct hyb_sum _hyb[SIM_MAX_POLICIES];

/* One metric: its JSON key, table label and value. */
struct metric {
	const char *key;
	const char *label;
	const char *fmt;
	double (*get)(const struct topoml_sim_metrics *m);
	bool in_svg;
};

#define GET(field) \
	static double _get_##field(const struct topoml_sim_metrics *m) \
	{ return m->field; }
GET(jobs)
GET(unplaced)
GET(mean_wait_s)
GET(p95_wait_s)
GET(max_wait_s)
GET(utilization)
GET(makespan_s)
GET(span_over_lower_bound)
GET(span_over_free_lower_bound)
GET(mean_span)
GET(ring_cost)
GET(ring_cost_over_lower_bound)
GET(ring_cost_over_free_lower_bound)
GET(global_ring_hops)
GET(mean_pair_hops)
GET(sharing)
GET(sharing_fraction)
GET(contiguous_isolated)
GET(box_possible)
GET(contiguous_isolated_when_possible)
GET(fragmentation)
GET(backfilled)
GET(cpu_s)
GET(placements)
#undef GET

static const struct metric _metrics[] = {
	{ "jobs", "jobs", "%.0f", _get_jobs, false },
	{ "unplaced", "unplaced", "%.0f", _get_unplaced, false },
	{ "backfilled", "backfilled", "%.0f", _get_backfilled, false },
	{ "mean_wait_s", "mean wait (s)", "%.1f", _get_mean_wait_s, true },
	{ "p95_wait_s", "p95 wait (s)", "%.1f", _get_p95_wait_s, true },
	{ "max_wait_s", "max wait (s)", "%.1f", _get_max_wait_s, false },
	{ "utilization", "utilization", "%.4f", _get_utilization, true },
	{ "makespan_s", "makespan (s)", "%.0f", _get_makespan_s, true },
	{ "span_over_lower_bound", "span / lower bound", "%.4f",
	  _get_span_over_lower_bound, true },
	{ "span_over_free_lower_bound", "span / bound on free nodes", "%.4f",
	  _get_span_over_free_lower_bound, false },
	{ "mean_span", "mean span", "%.3f", _get_mean_span, false },
	{ "ring_cost", "ring cost (hop.s)", "%.4g", _get_ring_cost, false },
	{ "ring_cost_over_lower_bound", "ring cost / lower bound", "%.4f",
	  _get_ring_cost_over_lower_bound, true },
	{ "ring_cost_over_free_lower_bound", "ring cost / bound on free",
	  "%.4f", _get_ring_cost_over_free_lower_bound, false },
	{ "global_ring_hops", "global ring hops (hop.s)", "%.4g",
	  _get_global_ring_hops, false },
	{ "mean_pair_hops", "mean pair hops", "%.3f", _get_mean_pair_hops,
	  false },
	{ "sharing", "sharing (node.h)", "%.1f", _get_sharing, true },
	{ "sharing_fraction", "sharing fraction", "%.4f",
	  _get_sharing_fraction, false },
	{ "contiguous_isolated", "isolated boxes", "%.4f",
	  _get_contiguous_isolated, false },
	{ "box_possible", "exact box was free", "%.0f", _get_box_possible,
	  false },
	{ "contiguous_isolated_when_possible", "isolated when possible",
	  "%.4f", _get_contiguous_isolated_when_possible, false },
	{ "fragmentation", "fragmentation", "%.4f", _get_fragmentation, true },
	{ "placements", "placement calls", "%.0f", _get_placements, false },
	{ "cpu_s", "simulation time (s)", "%.3f", _get_cpu_s, false },
};
#define NMETRICS (sizeof(_metrics) / sizeof(_metrics[0]))

static void _usage(FILE *f)
{
	fprintf(f,
"usage: topoml sim --topology FILE --trace FILE [OPTIONS]\n"
"Replay a job trace (FCFS + EASY backfill) with each placement policy.\n"
"  -t, --topology FILE     site topology (topology.conf, JSON, ibnetdiscover)\n"
"  -T, --trace FILE        job trace: SWF, CSV or MTech JobLogs (gzip too)\n"
"  -p, --policy P1,P2,...  placement policies (default: those that fit\n"
"                          the topology family), of: %s\n"
"  -f, --format F          trace format: auto (default), swf, csv, mtech\n"
"  -c, --cores-per-node N  SWF processors per node (default 1)\n"
"      --shared            keep SWF jobs in cores: jobs smaller than a node\n"
"                          share nodes (N cores each), as they ran; without\n"
"                          it sizes are rounded up to whole nodes\n"
"      --cloud-power       Slurm baselines prefer nodes used before (never\n"
"                          used ones count as powered down), as slurmctld\n"
"                          does with CLOUD nodes\n"
"      --torus3d FILE      slurm-torus3d's box shapes: a Slurm 26.05\n"
"                          topology.yaml (torus3d), or every-size (default)\n"
"      --torus3d-bound     topoml on a torus as select/topoml beside\n"
"                          topology/torus3d: only those shapes, at their\n"
"                          anchors\n"
"      --box-wait SECONDS  topoml on a torus: a job without a free exact\n"
"                          box waits for one up to SECONDS from the first\n"
"                          time it could start (LocalityWait=; default 0);\n"
"                          on blocks, one outside Slurm's aligned group\n"
"                          waits for one\n"
"      --box-wait-span L   with --box-wait: only a placement spanning more\n"
"                          than L x its nodes waits (LocalityWaitSpan=;\n"
"                          default 1: any that is no box)\n"
"      --torus-placement boxes|curve\n"
"                          topoml on a torus: exact boxes (default), or\n"
"                          every job along the Hilbert curve\n"
"                          (TorusPlacement=; no --box-wait with curve)\n"
"      --jobs FILE         per job and policy: id, submit, start, cores,\n"
"                          nodes, cores per node, span, ring cost (one\n"
"                          line each; '-' for stdout)\n"
"  -s, --scale X|fit       multiply job sizes by X, or fit the largest job\n"
"                          to the machine\n"
"  -N, --trace-nodes N     the traced machine had N nodes: scale job sizes by\n"
"                          (topology nodes / N), keeping the offered load\n"
"  -n, --max-jobs N        replay the first N jobs only\n"
"      --no-backfill       plain FCFS\n"
"      --spread-alltoall   dragonfly: spread alltoall jobs over groups\n"
"      --no-fragmentation  skip the fragmentation metric (faster)\n"
"      --hybrid K          each job a hybrid-parallel job of K tasks per\n"
"                          node: tp=K, pp the largest of 8, 4, 2, 1 that\n"
"                          leaves dp >= 2, dp the rest, in Megatron's rank\n"
"                          order; prints per policy the traffic per kind\n"
"                          crossing leaves (groups), the top level and\n"
"                          NVLink domains\n"
"      --hybrid-tp T       with --hybrid: tp=T where T divides the job's\n"
"                          tasks (else K)\n"
"      --weights W         with --hybrid: the weighted cost's weights per\n"
"                          kind (default tp=16,cp=4,ep=4,dp=1,pp=2)\n"
"      --hybrid-wait SECONDS  with --hybrid: topoml holds a placement that\n"
"                          splits more tensor groups or sends more DP\n"
"                          traffic through the top than on a free machine\n"
"                          up to SECONDS (LocalityWait=; default 0)\n"
"      --avoid HOSTLIST    topoml offers these nodes last (reported\n"
"                          stragglers, HealthPolicy=avoid): a whole-node\n"
"                          job gets them only when it fits nowhere else\n"
"  -j, --json              print JSON\n"
"      --svg FILE          draw the metrics per policy (normalised bars)\n"
"      --progress          progress on stderr even when it is not a terminal\n"
"  -q, --quiet             no progress, no warnings\n"
"  -h, --help\n"
"Metrics are defined in topoml-sim(1).  Exit 0, 1 for an invalid topology\n"
"or trace, 2 for a usage error or a file that cannot be read or written.\n",
		cli_policy_list());
}

static int _default_policies(const topoml_topo_t *t, enum topoml_policy *p)
{
	int n = 0;

	p[n++] = TOPOML_POLICY_TOPOML;
	switch (t->family) {
	case TOPOML_FAT_TREE:
		p[n++] = TOPOML_POLICY_SLURM_TREE;
		/* Slurm's topology/block for a block topology.conf */
		if (t->nblocks > 0)
			p[n++] = TOPOML_POLICY_SLURM_BLOCK;
		break;
	case TOPOML_DRAGONFLY:
		p[n++] = TOPOML_POLICY_SLURM_DRAGONFLY;
		break;
	case TOPOML_TORUS:
		p[n++] = TOPOML_POLICY_SLURM_HILBERT;
		break;
	}
	p[n++] = TOPOML_POLICY_LINEAR;
	return n;
}

static int _parse_policies(struct sim_cli *c, const char *arg)
{
	char *dup = strdup(arg), *save = NULL;
	int rc = 0;

	if (!dup)
		return -1;
	c->npol = 0;
	for (char *tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		enum topoml_policy p;

		if (topoml_policy_parse(tok, &p)) {
			cli_err("--policy: unknown policy '%s' (%s)", tok,
				cli_policy_list());
			rc = -1;
			break;
		}
		if (c->npol == SIM_MAX_POLICIES) {
			cli_err("--policy: at most %d",
				SIM_MAX_POLICIES);
			rc = -1;
			break;
		}
		c->pol[c->npol++] = p;
	}
	if (!rc && !c->npol) {
		cli_err("--policy: empty list");
		rc = -1;
	}
	free(dup);
	return rc;
}

static int _parse_int(const char *opt, const char *s, int min, int *v)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(s, &end, 10);
	if (end == s || *end || errno || x < min || x > INT32_MAX) {
		cli_err("%s: '%s' is not a whole number "
			">= %d", opt, s, min);
		return -1;
	}
	*v = x;
	return 0;
}

static int _parse_args(struct sim_cli *c, int argc, char **argv)
{
	enum { OPT_SVG = 256, OPT_NOBF, OPT_SPREAD, OPT_NOFRAG, OPT_SHARED,
	       OPT_CLOUD, OPT_JOBS, OPT_TORUS3D, OPT_BOXWAIT, OPT_BOXSPAN,
	       OPT_TPLACE, OPT_T3BOUND,
	       OPT_HYBRID, OPT_HYBRID_TP, OPT_WEIGHTS, OPT_HYBRID_WAIT,
	       OPT_AVOID };
	static const struct option longopts[] = {
		{ "topology", required_argument, NULL, 't' },
		{ "trace", required_argument, NULL, 'T' },
		{ "policy", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'f' },
		{ "cores-per-node", required_argument, NULL, 'c' },
		{ "scale", required_argument, NULL, 's' },
		{ "max-jobs", required_argument, NULL, 'n' },
		{ "trace-nodes", required_argument, NULL, 'N' },
		{ "json", no_argument, NULL, 'j' },
		{ "svg", required_argument, NULL, OPT_SVG },
		{ "no-backfill", no_argument, NULL, OPT_NOBF },
		{ "spread-alltoall", no_argument, NULL, OPT_SPREAD },
		{ "no-fragmentation", no_argument, NULL, OPT_NOFRAG },
		{ "shared", no_argument, NULL, OPT_SHARED },
		{ "cloud-power", no_argument, NULL, OPT_CLOUD },
		{ "jobs", required_argument, NULL, OPT_JOBS },
		{ "torus3d", required_argument, NULL, OPT_TORUS3D },
		{ "torus3d-bound", no_argument, NULL, OPT_T3BOUND },
		{ "box-wait", required_argument, NULL, OPT_BOXWAIT },
		{ "box-wait-span", required_argument, NULL, OPT_BOXSPAN },
		{ "torus-placement", required_argument, NULL, OPT_TPLACE },
		{ "hybrid", required_argument, NULL, OPT_HYBRID },
		{ "hybrid-tp", required_argument, NULL, OPT_HYBRID_TP },
		{ "hybrid-wait", required_argument, NULL, OPT_HYBRID_WAIT },
		{ "weights", required_argument, NULL, OPT_WEIGHTS },
		{ "avoid", required_argument, NULL, OPT_AVOID },
		{ "help", no_argument, NULL, 'h' },
		CLI_COMMON_OPTS,
		{ NULL, 0, NULL, 0 },
	};
	char werr[256];
	int opt;

	optind = 1;
	topoml_kind_weights_default(c->weights);
	while ((opt = getopt_long(argc, argv, "t:T:p:f:c:s:n:N:jqh", longopts,
				  NULL)) != -1) {
		if (cli_common_opt(opt))
			continue;
		switch (opt) {
		case 't':
			c->topology = optarg;
			break;
		case 'T':
			c->trace = optarg;
			break;
		case 'p':
			if (_parse_policies(c, optarg))
				return 2;
			break;
		case 'f':
			if (topoml_trace_format_parse(optarg,
						      &c->topts.format)) {
				cli_err("--format: '%s' "
					"is not auto, swf, csv or mtech",
					optarg);
				return 2;
			}
			break;
		case 'c':
			if (_parse_int("--cores-per-node", optarg, 1,
				       &c->topts.cores_per_node))
				return 2;
			break;
		case 's':
			if (!strcmp(optarg, "fit")) {
				c->topts.scale_fit = true;
			} else {
				char *end;

				errno = 0;
				c->topts.scale = strtod(optarg, &end);
				if (end == optarg || *end || errno ||
				    !(c->topts.scale > 0) ||
				    !isfinite(c->topts.scale)) {
					cli_err("--scale: "
						"'%s' is not 'fit' or a "
						"positive number", optarg);
					return 2;
				}
			}
			break;
		case 'n':
			if (_parse_int("--max-jobs", optarg, 1,
				       &c->topts.max_jobs))
				return 2;
			break;
		case 'N':
			if (_parse_int("--trace-nodes", optarg, 1,
				       &c->topts.trace_nodes))
				return 2;
			break;
		case 'j':
			c->json = true;
			break;
		case OPT_SVG:
			c->svg = optarg;
			break;
		case OPT_NOBF:
			c->sopts.no_backfill = true;
			break;
		case OPT_SPREAD:
			c->sopts.df_spread_alltoall = true;
			break;
		case OPT_NOFRAG:
			c->sopts.no_fragmentation = true;
			break;
		case OPT_SHARED:
			c->topts.shared = true;
			break;
		case OPT_CLOUD:
			c->sopts.cloud_power = true;
			break;
		case OPT_JOBS:
			c->jobs = optarg;
			c->sopts.record_nodes = true;
			break;
		case OPT_TORUS3D:
			c->torus3d = optarg;
			break;
		case OPT_T3BOUND:
			c->torus3d_bound = true;
			break;
		case OPT_BOXWAIT: {
			int w;

			if (_parse_int("--box-wait", optarg, 0, &w))
				return 2;
			c->sopts.box_wait = w;
			break;
		}
		case OPT_TPLACE:
			if (topoml_torus_placement_parse(optarg,
						&c->sopts.torus_curve)) {
				cli_err("--torus-placement: '%s' is not boxes "
					"or curve", optarg);
				return 2;
			}
			break;
		case OPT_BOXSPAN: {
			double *l = &c->sopts.box_wait_span;

			if (topoml_box_wait_span_parse(optarg, l)) {
				cli_err("--box-wait-span: '%s' is not a number "
					"from 1 to %d", optarg,
					TOPOML_BOX_WAIT_SPAN_MAX);
				return 2;
			}
			break;
		}
		case OPT_HYBRID:
			if (_parse_int("--hybrid", optarg, 1, &c->hybrid))
				return 2;
			c->sopts.record_nodes = true;
			break;
		case OPT_HYBRID_WAIT: {
			int w;

			if (_parse_int("--hybrid-wait", optarg, 0, &w))
				return 2;
			c->sopts.hold_wait = w;
			break;
		}
		case OPT_HYBRID_TP:
			if (_parse_int("--hybrid-tp", optarg, 1,
				       &c->hybrid_tp))
				return 2;
			break;
		case OPT_AVOID:
			c->avoid = optarg;
			break;
		case OPT_WEIGHTS:
			if (topoml_kind_weights_parse(optarg, c->weights, werr,
						      sizeof(werr))) {
				cli_err("--weights: %s", werr);
				return 2;
			}
			break;
		case 'h':
			_usage(stdout);
			return 0;
		default:
			_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		cli_err("unexpected argument '%s'",
			argv[optind]);
		return 2;
	}
	if (!c->topology || !c->trace) {
		cli_err("--topology and --trace are "
			"required");
		_usage(stderr);
		return 2;
	}
	if (c->topts.shared && c->topts.cores_per_node < 2) {
		cli_err("--shared needs --cores-per-node N with N >= 2 (the "
			"cores of a node that jobs share)");
		return 2;
	}
	if (c->sopts.torus_curve && c->sopts.box_wait > 0) {
		cli_err("--box-wait has no effect with --torus-placement "
			"curve (one discipline: no exact boxes to wait for)");
		return 2;
	}
	return -1;
}

static void _print_json(const struct sim_cli *c, const topoml_topo_t *t,
			const struct topoml_trace *tr,
			const struct topoml_sim_metrics *m)
{
	json_object *root = json_object_new_object();
	json_object *jt = json_object_new_object();
	json_object *pols = json_object_new_object();
	char summary[256];

	json_object_object_add(root, "topology", cli_topology_json(t));
	json_object_object_add(jt, "file", json_object_new_string(c->trace));
	json_object_object_add(jt, "format", json_object_new_string(
		topoml_trace_format_name(tr->format)));
	json_object_object_add(jt, "jobs", json_object_new_int(tr->njobs));
	json_object_object_add(jt, "skipped",
			       json_object_new_int(tr->nskipped));
	json_object_object_add(jt, "too_large",
			       json_object_new_int(tr->ntoo_large));
	snprintf(summary, sizeof(summary), "%.10g", tr->scale);
	json_object_object_add(jt, "scale",
			       json_object_new_double_s(tr->scale, summary));
	json_object_object_add(jt, "shared",
			       json_object_new_boolean(tr->shared));
	json_object_object_add(jt, "cores_per_node",
			       json_object_new_int(tr->cores_per_node));
	json_object_object_add(root, "trace", jt);
	for (int p = 0; p < c->npol; p++) {
		json_object *o = json_object_new_object();

		for (size_t i = 0; i < NMETRICS; i++) {
			double v = _metrics[i].get(&m[p]);
			json_object *jv;
			char txt[32];

			/* ten significant digits, not json-c's seventeen */
			snprintf(txt, sizeof(txt), "%.10g", v);
			jv = !strcmp(_metrics[i].fmt, "%.0f") ?
				json_object_new_int64(llround(v)) :
				json_object_new_double_s(v, txt);

			json_object_object_add(o, _metrics[i].key, jv);
		}
		json_object_object_add(pols, topoml_policy_name(c->pol[p]), o);
	}
	json_object_object_add(root, "policies", pols);
	puts(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
}

static void _print_table(const struct sim_cli *c, const topoml_topo_t *t,
			 const struct topoml_trace *tr,
			 const struct topoml_sim_metrics *m)
{
	char summary[256], v[64];

	topoml_summary(t, summary, sizeof(summary));
	printf("topology: %s\n", summary);
	printf("trace:    %s (%s), %d job%s, %d skipped, %d too large, "
	       "size scale %g%s\n", c->trace,
	       topoml_trace_format_name(tr->format), tr->njobs,
	       cli_plural(tr->njobs), tr->nskipped,
	       tr->ntoo_large, tr->scale,
	       tr->shared ? ", in cores (jobs share nodes)" : "");
	if (tr->shared)
		printf("          %d core%s per node; utilization in cores\n",
		       tr->cores_per_node, cli_plural(tr->cores_per_node));
	printf("\n");
	printf("%-26s", "");
	for (int p = 0; p < c->npol; p++)
		printf(" %16s", topoml_policy_name(c->pol[p]));
	printf("\n");
	for (size_t i = 0; i < NMETRICS; i++) {
		if ((!strcmp(_metrics[i].key, "contiguous_isolated") ||
		     !strcmp(_metrics[i].key, "box_possible") ||
		     !strcmp(_metrics[i].key,
			     "contiguous_isolated_when_possible")) &&
		    t->family != TOPOML_TORUS)
			continue;
		if (!strcmp(_metrics[i].key, "global_ring_hops") &&
		    t->family != TOPOML_DRAGONFLY)
			continue;
		printf("%-26s", _metrics[i].label);
		for (int p = 0; p < c->npol; p++) {
			snprintf(v, sizeof(v), _metrics[i].fmt,
				 _metrics[i].get(&m[p]));
			printf(" %16s", v);
		}
		printf("\n");
	}
	printf("%-26s", "jobs / s simulated");
	for (int p = 0; p < c->npol; p++) {
		snprintf(v, sizeof(v), "%.0f",
			 m[p].cpu_s > 0 ? m[p].jobs / m[p].cpu_s : 0);
		printf(" %16s", v);
	}
	printf("\n");
}

static const char *const _colors[] = {
	"#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02",
	"#a6761d", "#666666",
};

/* Metrics the picture shows for this family. */
static bool _in_svg(const struct metric *mt, const topoml_topo_t *t)
{
	if (!strcmp(mt->key, "global_ring_hops"))
		return t->family == TOPOML_DRAGONFLY;
	if (!strcmp(mt->key, "contiguous_isolated_when_possible"))
		return t->family == TOPOML_TORUS;
	return mt->in_svg;
}

static void _svg_text(FILE *f, const char *s)
{
	for (; *s; s++)
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else
			fputc(*s, f);
}

/*
 * Horizontal bars, one block per metric, each scaled to its largest
 * value: the labels and values are horizontal text beside the bars, so
 * nothing is rotated, clipped or drawn over the title.
 */
static int _write_svg(const struct sim_cli *c, FILE *f,
		      const topoml_topo_t *t, const struct topoml_trace *tr,
		      const struct topoml_sim_metrics *m)
{
	const int left = 230, barmax = 400, bh = 14, top = 92;
	const int block = c->npol * (bh + 3) + 16;
	const char *base = strrchr(c->trace, '/');
	int nm = 0, y, width = left + barmax + 110, lw = 10;
	char summary[256], sub[128];

	for (size_t i = 0; i < NMETRICS; i++)
		nm += _in_svg(&_metrics[i], t);
	topoml_summary(t, summary, sizeof(summary));
	/* the trace by its file name (the path is its tooltip), on a line
	 * of its own: a long path no longer runs off the picture */
	base = base && base[1] ? base + 1 : c->trace;
	snprintf(sub, sizeof(sub), " (%d job%s); each metric's bars are "
		 "scaled to its largest value", tr->njobs,
		 cli_plural(tr->njobs));
	for (int p = 0; p < c->npol; p++)
		lw += 16 + cli_text_w(topoml_policy_name(c->pol[p]), 11) + 20;
	width = fmax(width, 10 + cli_text_w("topoml sim: ", 14) * 1.1 +
		     cli_text_w(summary, 14) * 1.1 + 10);
	width = fmax(width, 10 + cli_text_w("trace ", 11) +
		     cli_text_w(base, 11) + cli_text_w(sub, 11) + 10);
	width = fmax(width, lw);
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"sans-serif\" font-size=\"11\">\n",
		width, top + nm * block + 10, width, top + nm * block + 10);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f, "<text x=\"10\" y=\"20\" font-size=\"14\" "
		"font-weight=\"bold\">topoml sim: ");
	_svg_text(f, summary);
	fprintf(f, "</text>\n<text x=\"10\" y=\"38\">trace ");
	_svg_text(f, base);
	_svg_text(f, sub);
	fprintf(f, "<title>");
	_svg_text(f, c->trace);
	fprintf(f, "</title></text>\n");
	for (int p = 0, x = 10; p < c->npol; p++) {
		const char *name = topoml_policy_name(c->pol[p]);

		fprintf(f, "<rect x=\"%d\" y=\"56\" width=\"12\" "
			"height=\"12\" fill=\"%s\"/>\n<text x=\"%d\" "
			"y=\"66\">%s</text>\n", x, _colors[p % 8], x + 16,
			name);
		x += 16 + cli_text_w(name, 11) + 20;
	}
	y = top;
	for (size_t i = 0; i < NMETRICS; i++) {
		const struct metric *mt = &_metrics[i];
		double max = 0;

		if (!_in_svg(mt, t))
			continue;
		for (int p = 0; p < c->npol; p++)
			max = fmax(max, fabs(mt->get(&m[p])));
		fprintf(f, "<text x=\"10\" y=\"%d\" font-size=\"12\">",
			y + 12);
		_svg_text(f, mt->label);
		fprintf(f, "</text>\n<text x=\"10\" y=\"%d\" fill=\"#777\" "
			"font-size=\"10\">%s is better</text>\n", y + 25,
			!strcmp(mt->key, "utilization") ||
			!strcmp(mt->key, "contiguous_isolated_when_possible") ?
			"higher" : "lower");
		for (int p = 0; p < c->npol; p++) {
			double v = mt->get(&m[p]);
			int w = max > 0 ? (int)lround(barmax * fabs(v) / max) : 0;
			int by = y + p * (bh + 3);
			char label[64];

			snprintf(label, sizeof(label), mt->fmt, v);
			fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" "
				"height=\"%d\" fill=\"%s\"><title>%s: %s"
				"</title></rect>\n", left, by, w, bh,
				_colors[p % 8], topoml_policy_name(c->pol[p]),
				label);
			fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n",
				left + w + 4, by + bh - 3, label);
		}
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
			"stroke=\"#999\"/>\n", left, y - 2, left,
			y + c->npol * (bh + 3) - 1);
		y += block;
	}
	fprintf(f, "</svg>\n");
	return cli_out_close(f, c->svg, true);
}

/* --jobs: one line per job: policy id submit start cores nodes units span
 * ring. */
static int _write_jobs(FILE *f, const topoml_topo_t *t,
		       const struct topoml_trace *tr, enum topoml_policy pol,
		       const struct topoml_sim_jobout *jo)
{
	for (int i = 0; i < tr->njobs; i++) {
		const struct topoml_job *j = &tr->jobs[i];
		char *names = jo[i].nodes ?
			topoml_nodeset_format(t, jo[i].nodes) : NULL;

		fprintf(f, "%s %u %.0f %.0f %d %s", topoml_policy_name(pol),
			j->id, j->submit, jo[i].start,
			j->cores > 0 ? j->cores : j->nodes *
			(tr->shared ? tr->cores_per_node : 1),
			names ? names : "-");
		for (int k = 0; jo[i].units && k < jo[i].nnodes; k++)
			fprintf(f, "%c%d", k ? ',' : ' ', jo[i].units[k]);
		if (!jo[i].units || !jo[i].nnodes)
			fputs(" -", f);
		fprintf(f, " %d %.10g\n", jo[i].span, jo[i].ring_cost);
		free(names);
	}
	return ferror(f) ? -1 : 0;
}

/* A job's shape: tp from --hybrid(-tp), pp by size, dp the rest. */
static bool _hyb_shape(const struct sim_cli *c, int nodes,
		       struct topoml_parallel *p)
{
	return topoml_sim_hybrid_shape(nodes, c->hybrid, c->hybrid_tp ?
				       c->hybrid_tp : c->hybrid, p);
}

/*
 * Whether the free nodes hold n nodes as whole tensor groups of m nodes
 * in one NVLink domain each: if not, a split is forced.
 */
static bool _hyb_whole_fit(const topoml_topo_t *t, hwloc_const_bitmap_t avail,
			   int n, int m)
{
	int *fr = calloc(t->nnvl, sizeof(int)), v, groups = 0;

	if (!fr)
		return true;
	hwloc_bitmap_foreach_begin(v, avail)
		if (t->nodes[v].nvl >= 0 && ++fr[t->nodes[v].nvl] % m == 0)
			groups++;
	hwloc_bitmap_foreach_end();
	free(fr);
	return groups >= n / m;
}

/*
 * The domains below the top level, where DP traffic between them is
 * "through the top" (topoml_hybrid_cost): a fat tree's nodes whose
 * common level is below the top, a dragonfly's groups.  0: no top.
 */
static int _top_domains(struct sim_cli *c, const topoml_topo_t *t)
{
	int *rep, n = 0;

	if (t->family != TOPOML_FAT_TREE &&
	    t->family != TOPOML_DRAGONFLY)
		return 0;
	if (t->family == TOPOML_FAT_TREE && t->nlevels < 2)
		return 0;
	c->topdom = malloc(sizeof(int) * (t->nnodes + 1));
	rep = malloc(sizeof(int) * (t->nnodes + 1));
	if (!c->topdom || !rep) {
		free(rep);
		return -1;
	}
	for (int v = 0; v < t->nnodes; v++) {
		int d = 0;

		if (t->family == TOPOML_DRAGONFLY) {
			c->topdom[v] = t->nodes[v].group;
			n = t->nodes[v].group + 1 > n ? t->nodes[v].group + 1
						      : n;
			continue;
		}
		while (d < n && topoml_common_level(t, v, rep[d]) >=
		       t->nlevels - 1)
			d++;
		if (d == n)
			rep[n++] = v;
		c->topdom[v] = d;
	}
	free(rep);
	c->ntopdom = n;
	return n;
}

static int _long_desc(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x < y) - (x > y);
}

/*
 * Where the free nodes hold every tensor group of m = T / K nodes whole
 * in one NVLink domain (as topoml_place_hybrid then keeps them), each
 * top domain's ranks in such whole groups into fr[] (true); else false.
 */
static bool _hyb_nvl_slots(const struct sim_cli *c, const topoml_topo_t *t,
			   hwloc_const_bitmap_t avail, int n,
			   const struct topoml_parallel *p, long *fr)
{
	int m = p->tp / c->hybrid, v, *cnt, *dom, groups = 0;

	if (t->nnvl < 1 || p->tp <= c->hybrid || p->tp % c->hybrid)
		return false;
	cnt = calloc(t->nnvl, sizeof(int));
	dom = malloc(sizeof(int) * t->nnvl);
	if (!cnt || !dom) {
		free(cnt);
		free(dom);
		return false;
	}
	hwloc_bitmap_foreach_begin(v, avail)
		if (t->nodes[v].nvl >= 0) {
			cnt[t->nodes[v].nvl]++;
			dom[t->nodes[v].nvl] = c->topdom[v];
		}
	hwloc_bitmap_foreach_end();
	for (int d = 0; d < t->nnvl; d++)
		groups += cnt[d] / m;
	if (groups >= n / m)
		for (int d = 0; d < t->nnvl; d++)
			if (cnt[d] >= m && dom[d] >= 0)
				fr[dom[d]] += (long)(cnt[d] / m) * m *
					      c->hybrid;
	free(cnt);
	free(dom);
	return groups >= n / m;
}

/*
 * A lower bound on the data-parallel transfers through the top of any
 * placement of the shape on these free nodes that puts at most `over'
 * tensor groups over the top (topoml's placement's count, so that the
 * sum bounds topoml's).  A DP ring of a stage (D ranks T apart) touches
 * every node holding its tensor rank.
 *
 * No group over the top: a stage's T rings touch every domain holding
 * one of its groups.  Those stages in one domain below the top send
 * nothing through it; a domain of f free nodes holds at most
 * f * K / (stage's ranks) whole stages (counting only nodes that form
 * whole groups in NVLink domains where the free nodes allow every group
 * so, as topoml_place_hybrid then keeps them); every other stage lies in
 * at least as many domains as the fullest must be to hold it, and each
 * of its rings crosses the top at least once per domain it touches.
 *
 * Groups over the top (chunks of K ranks, one per node of the group's
 * m): a stage costs nothing only inside one domain or with every group
 * over the top (the chunks of each rank in one domain each); one whose
 * whole groups lie in one domain and the rest over the top sends at
 * least the K rings of each chunk with a node outside that domain out
 * and back; any other (whole groups in two domains or more) all T rings,
 * once per domain.  The first kind takes D groups over the top, the
 * second one at least and a domain of at least D - over whole groups.
 *
 * The last kind more exactly: say its groups not over the top lie in
 * the set X of domains (a >= 2 of them) and its nodes in J, at least
 * as many domains as the fewest whose free nodes hold a stage (jmin).
 * The K rings of chunk c touch every domain of X and that of chunk c of
 * each group over the top; a node in a domain of J outside X is a chunk
 * of such a group, so over the m chunks the rings touch at least
 * m * a + |J| - a domains, K rings each, a ring crossing the top once
 * per domain it touches: K * (m * a + max(jmin - a, 0)) at least, which
 * grows with a (m >= 1), so the least count of domains that hold the
 * stage's groups not over the top (k, at least 2) gives the bound.
 */
static long _hyb_dp_lb(const struct sim_cli *c, const topoml_topo_t *t,
		       hwloc_const_bitmap_t avail, int n,
		       const struct topoml_parallel *p, long over)
{
	int m = p->tp > c->hybrid && p->tp % c->hybrid == 0 ?
		p->tp / c->hybrid : 1;
	long S = p->pp, fit = 0, have = 0, stage, zero, cheap, cap = 0, G, out;
	long jmin, a;
	long *fr = calloc(c->ntopdom + 1, sizeof(long));
	int v, k = 0;

	if (!fr || p->dp < 2) {
		free(fr);
		return 0;
	}
	G = (long)n / m / S;	/* groups per stage */
	if (over > 0 || !_hyb_nvl_slots(c, t, avail, n, p, fr))
		hwloc_bitmap_foreach_begin(v, avail)
			if (c->topdom[v] >= 0)
				fr[c->topdom[v]] += c->hybrid;
		hwloc_bitmap_foreach_end();
	stage = (long)n * c->hybrid / S;
	qsort(fr, c->ntopdom, sizeof(long), _long_desc);
	for (int d = 0; d < c->ntopdom; d++)
		fit += fr[d] / stage;
	while (k < c->ntopdom && have < stage)
		have += fr[k++];
	jmin = k;	/* domains a stage's nodes touch, at least */
	if (over <= 0) {
		free(fr);
		return fit >= S ? 0 : (S - fit) * (k > 2 ? k : 2) * p->tp;
	}
	zero = fit + over / G < S ? fit + over / G : S;
	if (G <= over) {	/* every group may be over the top */
		free(fr);
		return (S - zero) * 2 * c->hybrid;
	}
	for (int d = 0; d < c->ntopdom; d++)
		cap += fr[d] / ((long)m * c->hybrid) / (G - over);
	cheap = S - zero < over ? S - zero : over;
	cheap = cheap < cap ? cheap : cap;
	/* domains the whole groups of the last kind touch */
	k = 0;
	have = 0;
	while (k < c->ntopdom && have < G - over)
		have += fr[k++] / ((long)m * c->hybrid);
	/* chunks out of the domain: its nodes that no domain holds, in
	 * at most `over' groups */
	out = (long)n / S - fr[0] / c->hybrid;
	out = out > over ? (out + over - 1) / over : 1;
	free(fr);
	a = k > 2 ? k : 2;
	return cheap * 2 * c->hybrid * (out < m ? out : m) +
	       (S - zero - cheap) * (a * p->tp +
				     (jmin > a ? jmin - a : 0) * c->hybrid);
}

/*
 * A lower bound on the data-parallel transfers through the top of any
 * placement of the shape on these free nodes that splits at most `split'
 * tensor groups over NVLink domains (topoml's placement's count).  With
 * _hyb_dp_lb's bound (no more groups over the top) it bounds the
 * placements a user wants: tensor groups all-reduce every layer, so
 * fewer data-parallel transfers through the top are no gain where they
 * cost a group more off NVLink.
 *
 * Why it is a lower bound.  The job has N = n * K / T tensor groups, G
 * in each of its S stages, at least U = N - split of them whole in one
 * NVLink domain.  A domain below the top holds at most w of those (the
 * whole groups its NVLink domains' free nodes form; an NVLink domain
 * lies in one domain below the top, else this returns 0).  A stage
 * with its whole groups in a of those domains has each of its T rings
 * (one rank of every group) in all a of them: with a >= 2 each ring
 * crosses the top at least a times.  Its whole groups in one domain d
 * number at most min(G, w_d): the least count of (stage, domain) pairs
 * holding U whole groups, I, takes the largest of the values G, G, ..,
 * w_d mod G of every domain until they sum to U.  Say z stages have
 * a <= 1: they hold at most the z largest values, L_1 + .. + L_z, and
 * the other S - z at most G each, so z * G - (L_1 + .. + L_z) <= split;
 * the other stages have a >= 2 and sum of a at least I - z.  So the
 * transfers through the top are at least T * max(I - z, 2 * (S - z))
 * for the largest such z below S (0 when z = S is possible: every stage
 * in one domain, I <= S).
 */
static long _hyb_dp_lb_split(const struct sim_cli *c, const topoml_topo_t *t,
			     hwloc_const_bitmap_t avail, int n,
			     const struct topoml_parallel *p, long split)
{
	int K = c->hybrid, m, gpn, v;
	long S = p->pp, N, G, U, I = 0, z = 0, sum = 0, nitem = 0, nfull = 0;
	long lb = 0;
	int *cnt = NULL, *dom = NULL;
	long *w = NULL, *item = NULL;

	if (t->nnvl < 1 || c->ntopdom < 2 || p->dp < 2 || p->cp != 1 ||
	    S < 1 || split < 0)
		return 0;
	if (p->tp >= K && p->tp % K == 0) {
		m = p->tp / K;
		gpn = 1;
	} else if (p->tp < K && K % p->tp == 0) {
		m = 1;
		gpn = K / p->tp;
	} else {
		return 0;
	}
	N = (long)n * K / p->tp;
	if (N % S)
		return 0;
	G = N / S;
	U = N - split;
	cnt = calloc(t->nnvl, sizeof(int));
	dom = malloc(sizeof(int) * t->nnvl);
	w = calloc(c->ntopdom, sizeof(long));
	item = malloc(sizeof(long) * (N + c->ntopdom + 1));
	if (!cnt || !dom || !w || !item)
		goto out;
	for (int d = 0; d < t->nnvl; d++)
		dom[d] = -1;
	hwloc_bitmap_foreach_begin(v, avail)
		int d = t->nodes[v].nvl;

		if (d < 0)
			continue;
		if (c->topdom[v] < 0 ||
		    (dom[d] >= 0 && dom[d] != c->topdom[v]))
			goto out;	/* a domain over the top: no bound */
		dom[d] = c->topdom[v];
		cnt[d]++;
	hwloc_bitmap_foreach_end();
	for (int d = 0; d < t->nnvl; d++)
		if (dom[d] >= 0)
			w[dom[d]] += (long)(cnt[d] / m) * gpn;
	/* values of (stage, domain) pairs; more than N of G are never
	 * needed */
	for (int d = 0; d < c->ntopdom; d++) {
		for (long q = 0; q < w[d] / G && nfull < N; q++, nfull++)
			item[nitem++] = G;
		if (w[d] % G)
			item[nitem++] = w[d] % G;
	}
	qsort(item, nitem, sizeof(long), _long_desc);
	while (I < nitem && sum < U)
		sum += item[I++];
	if (sum < U)
		goto out;	/* not so few splits here: no bound */
	for (sum = 0; z < S; z++) {
		long Lz = z < nitem ? item[z] : 0;

		if ((z + 1) * G - (sum + Lz) > split)
			break;
		sum += Lz;
	}
	if (z == S && I <= S)
		goto out;
	if (z == S)
		z = S - 1;
	lb = (I - z > 2 * (S - z) ? I - z : 2 * (S - z)) * p->tp;
out:
	free(cnt);
	free(dom);
	free(w);
	free(item);
	return lb;
}

/* The simulator's placement of a --hybrid job under topoml. */
static int _hyb_place(void *arg, const topoml_topo_t *t, int job,
		      const struct topoml_place_req *req,
		      struct topoml_placement *out, char *why, size_t whylen)
{
	struct sim_cli *c = arg;
	struct topoml_parallel p;
	int rc;

	if (!_hyb_shape(c, req->nnodes, &p))
		return topoml_place(t, TOPOML_POLICY_TOPOML, req, out, why,
				    whylen);
	rc = topoml_place_hybrid(t, req, &p, c->hybrid, c->weights, out,
				 NULL, why, whylen);
	if (!rc && c->forced && t->nnvl > 0 && p.tp > c->hybrid)
		c->forced[job] = topoml_hybrid_tp_split(t, out->nodes, out->n,
							c->hybrid, &p) &&
			!_hyb_whole_fit(t, req->avail, out->n,
					p.tp / c->hybrid);
	if (!rc && c->dp_lb && c->ntopdom > 0) {
		/* the order _hyb_add prices: topoml_hybrid_order of the
		 * nodes in index order */
		int *nodes = malloc(sizeof(int) * (out->n + 1));
		long over = 0, split = 0, any = 0;
		bool counted = nodes != NULL;

		if (nodes) {
			memcpy(nodes, out->nodes, sizeof(int) * out->n);
			qsort(nodes, out->n, sizeof(int), topoml__int_cmp);
			(void)topoml_hybrid_order(t, nodes, out->n, c->hybrid,
						  &p, c->weights);
			over = topoml_hybrid_tp_over_top(t, nodes, out->n,
							 c->hybrid, &p);
			split = topoml_hybrid_tp_split(t, nodes, out->n,
						       c->hybrid, &p);
			free(nodes);
		}
		/* no memory to count topoml's: no bound (0) */
		if (counted)
			any = _hyb_dp_lb(c, t, req->avail, out->n, &p, over);
		c->dp_lb_any[job] = any;
		/* both bound the placements with no more over the top
		 * nor split than topoml's: the larger does */
		c->dp_lb[job] = counted ? _hyb_dp_lb_split(c, t, req->avail,
							   out->n, &p, split) :
				0;
		c->dp_lb[job] = c->dp_lb[job] > any ? c->dp_lb[job] : any;
	}
	return rc;
}

/*
 * --avoid: as select/topoml under HealthPolicy=avoid, the job is placed
 * without the avoided nodes first, and with them only when it does not
 * fit so (whole-node jobs of the topoml policy).
 */
static int _avoid_place(void *arg, const topoml_topo_t *t, int job,
			const struct topoml_place_req *req,
			struct topoml_placement *out, char *why, size_t whylen)
{
	struct sim_cli *c = arg;
	struct topoml_place_req pref = *req;
	hwloc_bitmap_t cand = hwloc_bitmap_alloc();
	int rc = -1;

	if (cand && req->avail &&
	    hwloc_bitmap_intersects(req->avail, c->avoid_set)) {
		hwloc_bitmap_andnot(cand, req->avail, c->avoid_set);
		if (hwloc_bitmap_weight(cand) >= (int)req->nnodes) {
			pref.avail = cand;
			rc = c->hybrid ? _hyb_place(arg, t, job, &pref, out,
						    why, whylen) :
			     topoml_place(t, TOPOML_POLICY_TOPOML, &pref, out,
					  why, whylen);
			if (rc)
				topoml_placement_clear(out);
		}
	}
	if (cand)
		hwloc_bitmap_free(cand);
	if (!rc)
		return 0;
	return c->hybrid ? _hyb_place(arg, t, job, req, out, why, whylen) :
	       topoml_place(t, TOPOML_POLICY_TOPOML, req, out, why, whylen);
}

/*
 * --hybrid-wait: the job's shape for the locality wait (topoml/wait.h),
 * which holds a placement that falls short of what the shape gets on the
 * free machine (LocalityWait= in select/topoml).
 */
static bool _hyb_wait_job(void *arg, int n, struct topoml_parallel *p,
			  int *tasks_per_node)
{
	struct sim_cli *c = arg;

	*tasks_per_node = c->hybrid;
	return _hyb_shape(c, n, p);
}

static void _hyb_add(const struct sim_cli *c, const topoml_topo_t *t,
		     const struct topoml_trace *tr, enum topoml_policy pol,
		     const struct topoml_sim_jobout *jo, struct hyb_sum *h)
{
	for (int i = 0; i < tr->njobs; i++) {
		struct topoml_parallel p;
		struct topoml_hybrid_cost hc;
		int *nodes, n = 0, v;

		if (!jo[i].nodes || jo[i].start < 0 ||
		    !_hyb_shape(c, hwloc_bitmap_weight(jo[i].nodes), &p))
			continue;
		nodes = malloc(sizeof(int) * (hwloc_bitmap_weight(
					jo[i].nodes) + 1));
		if (!nodes)
			continue;
		/* Slurm: tasks in node list (index) order */
		hwloc_bitmap_foreach_begin(v, jo[i].nodes)
			nodes[n++] = v;
		hwloc_bitmap_foreach_end();
		if (pol == TOPOML_POLICY_TOPOML)
			(void)topoml_hybrid_order(t, nodes, n, c->hybrid, &p,
						  c->weights);
		if (!topoml_hybrid_cost(t, nodes, n, c->hybrid, &p, c->weights,
					&hc)) {
			for (int k = 0; k < TOPOML_KIND_COUNT; k++) {
				struct topoml_kind_cost *a = &h->kind[k];
				const struct topoml_kind_cost *b = &hc.kind[k];

				a->steps += b->steps;
				a->off_node += b->off_node;
				a->cross_leaf += b->cross_leaf;
				a->cross_top += b->cross_top;
				a->cross_nvl += b->cross_nvl;
				a->hops += b->hops;
			}
			h->weighted += hc.weighted;
			h->jobs++;
			if (pol == TOPOML_POLICY_TOPOML && c->dp_lb) {
				h->dp_top_lb += c->dp_lb[i];
				h->dp_top_lb_any += c->dp_lb_any[i];
			}
			/* whole TP groups: on one node, in one domain */
			for (int g = 0; g < n * c->hybrid / p.tp; g++) {
				int r0 = g * p.tp, r1 = r0 + p.tp - 1;
				int a = nodes[r0 / c->hybrid];
				int b = nodes[r1 / c->hybrid];
				bool split = false;

				for (int r = r0; r <= r1; r++) {
					int x = nodes[r / c->hybrid];

					if (t->nnvl > 0 && (t->nodes[x].nvl < 0 ||
					    t->nodes[x].nvl != t->nodes[a].nvl))
						split = true;
				}
				h->tp_split_node += a != b;
				h->tp_split_nvl += split;
				h->tp_split_forced += split &&
					pol == TOPOML_POLICY_TOPOML &&
					c->forced && c->forced[i];
			}
		}
		free(nodes);
	}
}

static void _hyb_print(const struct sim_cli *c)
{
	static const char *const rows[] = { "transfers", "off node",
		"cross leaf/router", "cross top/group", "cross NVLink dom",
		"hops" };
	char v[64];

	printf("\nhybrid jobs (%d task%s per node, tp=%d, pp 1-8 by size, "
	       "Megatron order), per step, summed over jobs\n", c->hybrid,
	       cli_plural(c->hybrid), c->hybrid_tp ? c->hybrid_tp : c->hybrid);
	printf("%-26s", "jobs counted");
	for (int p = 0; p < c->npol; p++)
		printf(" %16d", _hyb[p].jobs);
	printf("\n");
	for (int k = 0; k < TOPOML_KIND_COUNT; k++) {
		if (k == TOPOML_KIND_CP || k == TOPOML_KIND_EP)
			continue;	/* --hybrid shapes have neither */
		for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
			const struct topoml_kind_cost *x;
			long val;

			printf("%s %-23s", topoml_kind_name((enum topoml_kind)k),
			       rows[r]);
			for (int p = 0; p < c->npol; p++) {
				x = &_hyb[p].kind[k];
				val = r == 0 ? x->steps : r == 1 ? x->off_node :
				      r == 2 ? x->cross_leaf : r == 3 ?
				      x->cross_top : r == 4 ? x->cross_nvl :
				      x->hops;
				printf(" %16ld", val);
			}
			printf("\n");
		}
	}
	printf("%-26s", "TP groups split nodes");
	for (int p = 0; p < c->npol; p++)
		printf(" %16ld", _hyb[p].tp_split_node);
	printf("\n%-26s", "TP groups split NVL dom");
	for (int p = 0; p < c->npol; p++)
		printf(" %16ld", _hyb[p].tp_split_nvl);
	printf("\n%-26s", "  of those forced");
	for (int p = 0; p < c->npol; p++) {
		snprintf(v, sizeof(v), "%ld", _hyb[p].tp_split_forced);
		printf(" %16s", c->pol[p] == TOPOML_POLICY_TOPOML ? v : "-");
	}
	printf("\n%-26s", "dp cross top: free bound");
	for (int p = 0; p < c->npol; p++) {
		snprintf(v, sizeof(v), "%ld", _hyb[p].dp_top_lb);
		printf(" %16s", c->pol[p] == TOPOML_POLICY_TOPOML &&
		       c->ntopdom > 0 ? v : "-");
	}
	printf("\n%-26s", "  more TP split allowed");
	for (int p = 0; p < c->npol; p++) {
		snprintf(v, sizeof(v), "%ld", _hyb[p].dp_top_lb_any);
		printf(" %16s", c->pol[p] == TOPOML_POLICY_TOPOML &&
		       c->ntopdom > 0 ? v : "-");
	}
	printf("\n%-26s", "weighted cost");
	for (int p = 0; p < c->npol; p++) {
		snprintf(v, sizeof(v), "%.0f", _hyb[p].weighted);
		printf(" %16s", v);
	}
	printf("\n");
}

struct sim_progress {
	enum topoml_policy pol;
	int p, npol;
};

static void _progress(void *arg, int submitted, int queued, int njobs)
{
	const struct sim_progress *sp = arg;

	cli_progress("%s (%d/%d): %d of %d job%s submitted, %d waiting",
		     topoml_policy_name(sp->pol), sp->p + 1, sp->npol, submitted,
		     njobs, cli_plural(njobs), queued);
}

int cmd_sim(int argc, char **argv)
{
	struct sim_cli c = { 0 };
	topoml_errors_t err = { 0 };
	topoml_topo_t *t = NULL;
	struct topoml_trace *tr = NULL;
	struct topoml_sim_metrics *m = NULL;
	struct topoml_sim_jobout *jo = NULL;
	FILE *jf = NULL, *svgf = NULL;
	struct topoml_torus3d *t3d = NULL;
	int rc = _parse_args(&c, argc, argv);

	if (rc >= 0)
		return rc;
	if (cli_readable(c.trace) || (c.torus3d &&
	    strcmp(c.torus3d, "every-size") && cli_readable(c.torus3d)))
		return 2;
	t = cli_load_topology(c.topology, &rc);
	if (!t)
		goto out;
	if (c.avoid) {
		c.avoid_set = topoml_nodeset_parse(t, c.avoid, &err);
		if (!c.avoid_set || err.n) {
			cli_errors(&err, "--avoid: ");
			if (!err.n)
				cli_err("--avoid: invalid host list '%s'",
					c.avoid);
			rc = 2;
			goto out;
		}
	}
	/* an SVG that cannot be written fails before the simulation */
	rc = 2;
	if (c.svg && !(svgf = cli_out_open(c.svg)))
		goto out;
	rc = 1;
	if (!c.npol)
		c.npol = _default_policies(t, c.pol);
	/* slurm-torus3d's shapes: the admin's topology.yaml, or a box of
	 * every size the torus has (the default) */
	for (int p = 0; p < c.npol && !t3d && t->family == TOPOML_TORUS; p++)
		if (c.pol[p] == TOPOML_POLICY_SLURM_TORUS3D || c.torus3d ||
		    c.torus3d_bound) {
			t3d = c.torus3d && strcmp(c.torus3d, "every-size") ?
				topoml_torus3d_load(c.torus3d, &err) :
				topoml_torus3d_every_size(t);
			if (!t3d) {
				cli_errors(&err, NULL);
				goto out;
			}
			t->torus3d = t3d;
			t->torus3d_only = c.torus3d_bound;
		}
	c.topts.machine_nodes = t->nnodes;
	cli_progress_step("reading %s", c.trace);
	tr = topoml_trace_read(c.trace, &c.topts, &err);
	if (!tr) {
		cli_errors(&err, NULL);
		goto out;
	}
	m = calloc(c.npol, sizeof(*m));
	if (!m)
		goto out;
	if (c.hybrid && !c.jobs) {
		memset(_hyb, 0, sizeof(_hyb));
		jo = calloc(tr->njobs + 1, sizeof(*jo));
		if (!jo)
			goto out;
	}
	if (c.jobs) {
		memset(_hyb, 0, sizeof(_hyb));
		jo = calloc(tr->njobs + 1, sizeof(*jo));
		jf = strcmp(c.jobs, "-") ? fopen(c.jobs, "w") : stdout;
		if (!jo || !jf) {
			cli_err("%s: %s", c.jobs, strerror(errno));
			rc = 2;
			goto out;
		}
	}
	c.sopts.progress = _progress;
	if (c.hybrid) {
		c.sopts.place = _hyb_place;
		c.sopts.place_arg = &c;
		c.forced = calloc(tr->njobs + 1, sizeof(bool));
		c.njobs = tr->njobs;
		c.dp_lb = calloc(tr->njobs + 1, sizeof(long));
		c.dp_lb_any = calloc(tr->njobs + 1, sizeof(long));
		if (!c.forced || !c.dp_lb || !c.dp_lb_any ||
		    _top_domains(&c, t) < 0)
			goto out;
		c.sopts.wait_job = _hyb_wait_job;
		c.sopts.hybrid_weights = c.weights;
	}
	if (c.avoid_set) {
		c.sopts.place = _avoid_place;
		c.sopts.place_arg = &c;
	}
	for (int p = 0; p < c.npol; p++) {
		struct sim_progress sp = { c.pol[p], p, c.npol };

		c.sopts.progress_arg = &sp;
		cli_progress_step("%s (%d/%d): %d job%s", topoml_policy_name(
				  c.pol[p]), p + 1, c.npol, tr->njobs,
				  cli_plural(tr->njobs));
		if (topoml_sim_run(t, tr, c.pol[p], &c.sopts, &m[p], jo,
				   &err)) {
			cli_errors(&err, NULL);
			goto out;
		}
		if (jo && c.hybrid)
			_hyb_add(&c, t, tr, c.pol[p], jo, &_hyb[p]);
		if (jo) {
			int bad = jf ? _write_jobs(jf, t, tr, c.pol[p], jo) : 0;

			topoml_sim_jobout_free(jo, tr->njobs);
			if (bad) {
				cli_err("%s: write error", c.jobs);
				rc = 2;
				goto out;
			}
		}
	}
	cli_progress_end();
	if (c.json)
		_print_json(&c, t, tr, m);
	else
		_print_table(&c, t, tr, m);
	if (c.hybrid && !c.json)
		_hyb_print(&c);
	fflush(stdout);
	if (svgf) {
		FILE *f = svgf;

		svgf = NULL;
		if (_write_svg(&c, f, t, tr, m)) {
			rc = 2;
			goto out;
		}
	}
	rc = 0;
out:
	if (svgf)
		cli_out_close(svgf, c.svg, false);
	if (jf && jf != stdout && fclose(jf) && !rc) {
		cli_err("%s: %s", c.jobs, strerror(errno));
		rc = 2;
	}
	if (jo && tr)
		topoml_sim_jobout_free(jo, tr->njobs);
	free(jo);
	free(m);
	free(c.forced);
	free(c.dp_lb);
	free(c.dp_lb_any);
	free(c.topdom);
	if (c.avoid_set)
		hwloc_bitmap_free(c.avoid_set);
	topoml_trace_free(tr);
	topoml_free(t);
	topoml_torus3d_free(t3d);
	topoml_errors_clear(&err);
	return rc;
}
