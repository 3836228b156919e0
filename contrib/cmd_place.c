/*
 * topoml place: ask the placement engine (or one of Slurm's algorithms
 * reproduced as a baseline) where a job of N nodes would go.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "cli.h"

static void _usage(FILE *f)
{
	fprintf(f,
"usage: topoml place --topology FILE --nodes N [--busy HOSTLIST]\n"
"                    [--required HOSTLIST] [--hint allreduce|alltoall|isolate]\n"
"                    [--policy P] (P: %s)\n"
"                    [--switches K] [--spread] [--block-aligned]\n"
"                    [--attempt K]\n"
"                    [--torus-placement boxes|curve]\n"
"                    [--powered-down HOSTLIST] [--job ID=HOSTLIST]...\n"
"                    [--parallel tp=T,pp=P[,ep=E][,cp=C]\n"
"                     [--tasks-per-node K] [--weights tp=W,dp=W,...]]\n"
"                    [--json] [--svg FILE] [--progress|-q]\n"
"Place a job of N whole nodes on the free nodes of a topology (all but\n"
"--busy) and print the node list, the ring (rank) order and the score.\n"
"  --required HOSTLIST  nodes the job must include (srun -w)\n"
"  --switches K         at most K leaf switches (sbatch --switches)\n"
"  --spread             dragonfly: alltoall jobs spread over groups\n"
"  --block-aligned      blocks: only aligned groups of the job's level\n"
"                       (select/topoml under Slurm's topology/block)\n"
"  --torus-placement boxes|curve  torus: exact boxes (default), or every\n"
"                       job along the Hilbert curve (TorusPlacement=)\n"
"  --attempt K          the K-th best distinct placement (0 = best)\n"
"  --powered-down HOSTLIST  nodes Slurm would have to boot: the Slurm\n"
"                       baselines use them last, as slurmctld does\n"
"  --job ID=HOSTLIST    nodes busy with job ID (repeatable): the engine\n"
"                       keeps multi-leaf jobs apart and honours isolate\n"
"                       by job, as select/topoml does\n"
"  --svg FILE           draw the machine: the job, the busy nodes (by job)\n"
"  --parallel SPEC      a hybrid job (--ml-parallel): its ranks in Megatron's\n"
"                       order on the ring, K per node (--tasks-per-node,\n"
"                       default 8); prints per traffic kind (tp, cp, ep,\n"
"                       dp, pp) the transfers per step and those crossing\n"
"                       nodes, leaves, the top level, NVLink domains, and\n"
"                       the cost weighted by --weights (default\n"
"                       tp=16,cp=4,ep=4,dp=1,pp=2)\n"
"Exit status: 0 placed, 1 invalid topology, unknown node or cannot place,\n"
"2 usage error (a malformed host list too) or unreadable file.\n",
		cli_policy_list());
}

/*
 * Slurm reads "node[1-" as the host "node[1-]" (and the engine follows
 * it), which then shows up as an unknown node: brackets that do not pair
 * up are a typo in a host list, never a node name.
 */
static bool _brackets_pair(const char *list)
{
	int depth = 0;

	for (; *list; list++) {
		if (*list == '[' && depth++)
			return false;
		if (*list == ']' && --depth < 0)
			return false;
	}
	return !depth;
}

/* NULL with *rc 2 for a malformed host list, 1 for unknown nodes. */
static hwloc_bitmap_t _parse_set(const topoml_topo_t *t, const char *opt,
				 const char *list, int *rc)
{
	topoml_errors_t err = { 0 };
	hwloc_bitmap_t set;

	if (!_brackets_pair(list)) {
		cli_err("%s: malformed host list '%s' (unbalanced brackets)",
			opt, list);
		*rc = 2;
		return NULL;
	}
	set = topoml_nodeset_parse(t, list, &err);

	if (!set || err.n) {
		char what[64];

		snprintf(what, sizeof(what), "%s: ", opt);
		cli_errors(&err, what);
		if (!err.n)
			cli_err("%s: invalid host list '%s'", opt, list);
		topoml_errors_clear(&err);
		*rc = set ? 1 : 2;
		hwloc_bitmap_free(set);
		return NULL;
	}
	return set;
}

/* --parallel: the job's cost by traffic kind, NULL without. */
static const struct topoml_hybrid_cost *_hybrid;

static void _hybrid_text(void)
{
	for (int k = 0; _hybrid && k < TOPOML_KIND_COUNT; k++) {
		const struct topoml_kind_cost *c = &_hybrid->kind[k];

		printf("%s: transfers=%ld off_node=%ld cross_leaf=%ld "
		       "cross_top=%ld cross_nvl=%ld hops=%ld\n",
		       topoml_kind_name((enum topoml_kind)k), c->steps,
		       c->off_node, c->cross_leaf, c->cross_top, c->cross_nvl,
		       c->hops);
	}
	if (_hybrid)
		printf("hybrid cost per step: %g\n", _hybrid->weighted);
}

static void _hybrid_json(json_object *o)
{
	json_object *h;

	if (!_hybrid)
		return;
	h = json_object_new_object();
	for (int k = 0; k < TOPOML_KIND_COUNT; k++) {
		const struct topoml_kind_cost *c = &_hybrid->kind[k];
		json_object *e = json_object_new_object();

		json_object_object_add(e, "transfers",
				       json_object_new_int64(c->steps));
		json_object_object_add(e, "off_node",
				       json_object_new_int64(c->off_node));
		json_object_object_add(e, "cross_leaf",
				       json_object_new_int64(c->cross_leaf));
		json_object_object_add(e, "cross_top",
				       json_object_new_int64(c->cross_top));
		json_object_object_add(e, "cross_nvl",
				       json_object_new_int64(c->cross_nvl));
		json_object_object_add(e, "hops",
				       json_object_new_int64(c->hops));
		json_object_object_add(h, topoml_kind_name((enum topoml_kind)k),
				       e);
	}
	json_object_object_add(h, "weighted",
			       json_object_new_double(_hybrid->weighted));
	json_object_object_add(o, "hybrid", h);
}

static void _print_json(const topoml_topo_t *t, enum topoml_policy pol,
			enum topoml_hint hint,
			const struct topoml_placement *p)
{
	json_object *o = json_object_new_object(), *ring, *sc;
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	char *list;

	for (int i = 0; i < p->n; i++)
		hwloc_bitmap_set(set, p->nodes[i]);
	list = topoml_nodeset_format(t, set);
	json_object_object_add(o, "policy",
			       json_object_new_string(topoml_policy_name(pol)));
	json_object_object_add(o, "hint",
			       json_object_new_string(topoml_hint_name(hint)));
	json_object_object_add(o, "nodes",
			       json_object_new_string(list ? list : ""));
	ring = json_object_new_array();
	for (int i = 0; i < p->n; i++)
		json_object_array_add(ring, json_object_new_string(
					t->nodes[p->nodes[i]].name));
	json_object_object_add(o, "ring", ring);
	sc = json_object_new_object();
	json_object_object_add(sc, "ring_cost",
			       json_object_new_double(p->score.ring_cost));
	json_object_object_add(sc, "ring_lower_bound",
			json_object_new_double(p->score.ring_lower_bound));
	json_object_object_add(sc, "span", json_object_new_int(p->score.span));
	json_object_object_add(sc, "span_lower_bound",
			json_object_new_int(p->score.span_lower_bound));
	json_object_object_add(sc, "ring_lower_bound_free",
			json_object_new_double(p->score.ring_lower_bound_free));
	json_object_object_add(sc, "span_lower_bound_free",
			json_object_new_int(p->score.span_lower_bound_free));
	json_object_object_add(sc, "global_hops",
			       json_object_new_int(p->score.global_hops));
	json_object_object_add(sc, "mean_pair_hops",
			json_object_new_double(p->score.mean_pair_hops));
	json_object_object_add(sc, "largest_free_after",
			json_object_new_int(p->score.largest_free_after));
	json_object_object_add(o, "score", sc);
	_hybrid_json(o);
	printf("%s\n", json_object_to_json_string_ext(o,
					JSON_C_TO_STRING_PRETTY |
					JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	hwloc_bitmap_free(set);
	free(list);
}

static void _print_text(const topoml_topo_t *t,
			const struct topoml_placement *p)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	char *list, *ring;

	for (int i = 0; i < p->n; i++)
		hwloc_bitmap_set(set, p->nodes[i]);
	list = topoml_nodeset_format(t, set);
	ring = topoml_nodes_format(t, p->nodes, p->n);
	printf("nodes: %s\n", list ? list : "");
	printf("ring:  %s\n", ring ? ring : "");
	printf("score: ring_cost=%g (lower bound %g, %g on the free nodes) "
	       "span=%d (lower bound %d, %d on the free nodes) "
	       "global_hops=%d mean_pair_hops=%.3f largest_free_after=%d\n",
	       p->score.ring_cost, p->score.ring_lower_bound,
	       p->score.ring_lower_bound_free, p->score.span,
	       p->score.span_lower_bound, p->score.span_lower_bound_free,
	       p->score.global_hops, p->score.mean_pair_hops,
	       p->score.largest_free_after);
	_hybrid_text();
	free(list);
	free(ring);
	hwloc_bitmap_free(set);
}

/*
 * --job ID=HOSTLIST: owner[node] = ID and the nodes leave avail.  Nodes
 * busy through --busy alone belong to an unknown job (UINT32_MAX).
 */
static int _parse_jobs(const topoml_topo_t *t, char **jobs, int njobs,
		       hwloc_bitmap_t avail, uint32_t **owner_out, int *rc)
{
	uint32_t *owner = calloc(t->nnodes, sizeof(*owner));
	int v;

	if (!owner)
		return -1;
	for (v = 0; v < t->nnodes; v++)
		if (!hwloc_bitmap_isset(avail, v))
			owner[v] = UINT32_MAX;
	for (int j = 0; j < njobs; j++) {
		char *eq = strchr(jobs[j], '='), *end;
		unsigned long id = eq ? strtoul(jobs[j], &end, 10) : 0;
		hwloc_bitmap_t set;

		if (!eq || end != eq || !id || id >= UINT32_MAX) {
			cli_err("--job: '%s' is not ID=HOSTLIST with a job id > 0",
				jobs[j]);
			*rc = 2;
			free(owner);
			return -1;
		}
		if (!(set = _parse_set(t, "--job", eq + 1, rc))) {
			free(owner);
			return -1;
		}
		hwloc_bitmap_foreach_begin(v, set)
			owner[v] = (uint32_t)id;
		hwloc_bitmap_foreach_end();
		hwloc_bitmap_andnot(avail, avail, set);
		hwloc_bitmap_free(set);
	}
	*owner_out = owner;
	return 0;
}

/* --svg: the machine with the new job, the busy nodes by job, the free. */
static int _write_svg(const topoml_topo_t *t, hwloc_const_bitmap_t avail,
		      const uint32_t *owner, const struct topoml_placement *p,
		      enum topoml_policy pol, FILE *f, const char *path)
{
	uint32_t *job = calloc(t->nnodes ? t->nnodes : 1, sizeof(*job));
	char title[256];
	int rc = 0;

	if (!job) {
		cli_out_close(f, path, false);
		return 1;
	}
	for (int v = 0; v < t->nnodes; v++)
		if (!hwloc_bitmap_isset(avail, v))
			job[v] = owner && owner[v] ? owner[v] : CLI_JOB_BUSY;
	for (int i = 0; i < p->n; i++)
		job[p->nodes[i]] = CLI_JOB_NEW;
	snprintf(title, sizeof(title), "%d-node job placed by %s: span %d "
		 "(lower bound %d), ring cost %g (lower bound %g)", p->n,
		 topoml_policy_name(pol), p->score.span,
		 p->score.span_lower_bound, p->score.ring_cost,
		 p->score.ring_lower_bound);
	if (cli_write_svg_titled(t, f, job, title)) {
		cli_err("%s: cannot draw this topology", path);
		cli_out_close(f, path, false);
		rc = 1;
	} else if (cli_out_close(f, path, true)) {
		rc = 2;
	}
	free(job);
	return rc;
}

int cmd_place(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "topology", required_argument, NULL, 't' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "busy", required_argument, NULL, 'b' },
		{ "required", required_argument, NULL, 'w' },
		{ "hint", required_argument, NULL, 'H' },
		{ "policy", required_argument, NULL, 'p' },
		{ "switches", required_argument, NULL, 's' },
		{ "spread", no_argument, NULL, 'S' },
		{ "block-aligned", no_argument, NULL, 'A' },
		{ "torus-placement", required_argument, NULL, 'T' },
		{ "attempt", required_argument, NULL, 'a' },
		{ "powered-down", required_argument, NULL, 'P' },
		{ "job", required_argument, NULL, 'J' },
		{ "json", no_argument, NULL, 'j' },
		{ "svg", required_argument, NULL, 'G' },
		{ "parallel", required_argument, NULL, 'X' },
		{ "tasks-per-node", required_argument, NULL, 'K' },
		{ "weights", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		CLI_COMMON_OPTS,
		{ NULL, 0, NULL, 0 },
	};
	const char *svg = NULL, *par = NULL;
	struct topoml_parallel spec;
	struct topoml_hybrid_cost hc;
	double w[TOPOML_KIND_COUNT];
	int tpn = 8;
	char **jobs = NULL;
	int njobs = 0;
	uint32_t *owner = NULL;
	const char *topo = NULL, *busy = NULL, *required = NULL, *down = NULL;
	struct topoml_place_req req = { 0 };
	enum topoml_policy pol = TOPOML_POLICY_TOPOML;
	struct topoml_placement p = { 0 };
	topoml_topo_t *t = NULL;
	FILE *svgf = NULL;
	hwloc_bitmap_t avail = NULL, bset = NULL, rset = NULL, dset = NULL;
	uint64_t *weight = NULL;
	bool json = false;
	char why[512], *end;
	int c, rc = 2;

	optind = 1;
	_hybrid = NULL;
	topoml_kind_weights_default(w);
	while ((c = getopt_long(argc, argv, "t:N:b:w:H:p:s:Sa:P:J:jqh", opts,
				NULL)) != -1) {
		if (cli_common_opt(c))
			continue;
		switch (c) {
		case 'G':
			svg = optarg;
			break;
		case 'X':
			par = optarg;
			if (topoml_parallel_parse(par, &spec, why,
						  sizeof(why))) {
				cli_err("--parallel: %s", why);
				return 2;
			}
			break;
		case 'K':
			tpn = (int)strtol(optarg, &end, 10);
			if (*end || tpn < 1 || tpn > 4096) {
				cli_err("--tasks-per-node: '%s' is not 1..4096",
					optarg);
				return 2;
			}
			break;
		case 'W':
			if (topoml_kind_weights_parse(optarg, w, why,
						      sizeof(why))) {
				cli_err("--weights: %s", why);
				return 2;
			}
			break;
		case 'J': {
			char **n = realloc(jobs, (njobs + 1) * sizeof(*jobs));

			if (!n)
				goto out;
			jobs = n;
			jobs[njobs++] = optarg;
			break;
		}
		case 't':
			topo = optarg;
			break;
		case 'N':
			req.nnodes = (int)strtol(optarg, &end, 10);
			if (*end || req.nnodes < 1) {
				cli_err("--nodes: '%s' is not a positive number",
					optarg);
				return 2;
			}
			break;
		case 'b':
			busy = optarg;
			break;
		case 'w':
			required = optarg;
			break;
		case 'H':
			if (topoml_hint_parse(optarg, &req.hint)) {
				cli_err("--hint: unknown hint '%s' (allreduce, alltoall, isolate)",
					optarg);
				return 2;
			}
			break;
		case 'p':
			if (topoml_policy_parse(optarg, &pol)) {
				cli_err("--policy: unknown policy '%s' (%s)",
					optarg, cli_policy_list());
				return 2;
			}
			break;
		case 's':
			req.max_leaves = (int)strtol(optarg, &end, 10);
			if (*end || req.max_leaves < 0) {
				cli_err("--switches: '%s' is not a number",
					optarg);
				return 2;
			}
			break;
		case 'A':
			req.block_aligned = true;
			break;
		case 'S':
			req.df_spread_alltoall = true;
			break;
		case 'T':
			if (topoml_torus_placement_parse(optarg,
							 &req.torus_curve)) {
				cli_err("--torus-placement: '%s' is not boxes "
					"or curve", optarg);
				return 2;
			}
			break;
		case 'a':
			req.attempt = (int)strtol(optarg, &end, 10);
			if (*end || req.attempt < 0) {
				cli_err("--attempt: '%s' is not a number",
					optarg);
				return 2;
			}
			break;
		case 'P':
			down = optarg;
			break;
		case 'j':
			json = true;
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
		_usage(stderr);
		return 2;
	}
	if (par && req.nnodes &&
	    topoml_parallel_resolve(&spec, req.nnodes * tpn, why,
				    sizeof(why))) {
		cli_err("--parallel: %s", why);
		return 2;
	}
	if (!topo || !req.nnodes) {
		cli_err("--topology and --nodes are required");
		_usage(stderr);
		return 2;
	}
	t = cli_load_topology(topo, &rc);
	if (!t)
		goto out;
	rc = 2;
	/* an SVG that cannot be written fails before the answer */
	if (svg && !(svgf = cli_out_open(svg)))
		goto out;
	avail = hwloc_bitmap_alloc();
	if (!avail)
		goto out;
	hwloc_bitmap_set_range(avail, 0, t->nnodes - 1);
	if (busy) {
		bset = _parse_set(t, "--busy", busy, &rc);
		if (!bset)
			goto out;
		hwloc_bitmap_andnot(avail, avail, bset);
	}
	if (njobs && _parse_jobs(t, jobs, njobs, avail, &owner, &rc))
		goto out;
	req.owner = owner;
	if (required) {
		rset = _parse_set(t, "--required", required, &rc);
		if (!rset)
			goto out;
		req.required = rset;
	}
	if (down) {
		int v;

		dset = _parse_set(t, "--powered-down", down, &rc);
		if (!dset)
			goto out;
		weight = calloc(t->nnodes, sizeof(*weight));
		if (!weight)
			goto out;
		/* slurmctld's _set_sched_weight(): boot required */
		hwloc_bitmap_foreach_begin(v, dset)
			weight[v] = 0x20000000000ULL;
		hwloc_bitmap_foreach_end();
		req.weight = weight;
	}
	req.avail = avail;
	cli_progress_step("placing %d node%s on %d", req.nnodes,
			  cli_plural(req.nnodes), t->nnodes);
	/* a hybrid job: the engine's candidates priced by traffic kind */
	if (par && pol == TOPOML_POLICY_TOPOML && !req.attempt)
		rc = topoml_place_hybrid(t, &req, &spec, tpn, w, &p, NULL, why,
					 sizeof(why));
	else
		rc = topoml_place(t, pol, &req, &p, why, sizeof(why));
	cli_progress_end();	/* before the answer on a terminal's stdout */
	if (rc) {
		cli_err("cannot place %d node%s: %s", req.nnodes,
			cli_plural(req.nnodes), why);
		rc = 1;
		goto out;
	}
	if (par && !topoml_hybrid_cost(t, p.nodes, p.n, tpn, &spec, w, &hc))
		_hybrid = &hc;
	if (json)
		_print_json(t, pol, req.hint, &p);
	else
		_print_text(t, &p);
	fflush(stdout);
	rc = svgf ? _write_svg(t, avail, owner, &p, pol, svgf, svg) : 0;
	svgf = NULL;
out:
	if (svgf)
		cli_out_close(svgf, svg, false);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(avail);
	hwloc_bitmap_free(bset);
	hwloc_bitmap_free(rset);
	hwloc_bitmap_free(dset);
	free(weight);
	free(owner);
	free(jobs);
	topoml_free(t);
	return rc;
}
