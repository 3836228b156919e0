/*
 * The volcano baseline (libtopoml_sim): Volcano's network-topology-aware
 * scheduling for a gang job of N pods that each take one whole node (a
 * Volcano Job of N replicas, minAvailable N, every pod requesting all of
 * its node's resources, no partitionPolicy), reimplemented from reading
 * volcano-sh/volcano at commit ed72c7c8 (v1.16.0-alpha.1-42, 2026-08-20),
 * not copied:
 *
 *   docs/design/Network Topology Aware Scheduling.md
 *   docs/user-guide/how_to_use_network_topology_aware_scheduling.md
 *   docs/user-guide/how_to_use_hypernode_auto_discovery.md (label tiers)
 *   pkg/scheduler/framework/session.go: addClusterTopHyperNode(),
 *     adjustNetworkTopologySpec(), convertSoftToHardTopology()
 *   pkg/scheduler/plugins/network-topology-aware/network_topology_aware.go:
 *     hyperNodeGradientFn(), isEligibleHyperNode(), HyperNodeOrderFn(),
 *     getSubJobHyperNodeBinPackingScore(),
 *     batchNodeOrderFnForNetworkAwarePods(), networkTopologyAwareScore()
 *   pkg/scheduler/actions/allocate/allocate.go: allocateForJob(),
 *     allocateForSubJob(), allocateResourcesForTasks(),
 *     getNewAllocatedHyperNode(), prioritizeNodes()
 *   pkg/scheduler/api/hyper_node_info.go: addChild() (one parent)
 *
 * HyperNodes.  Every switch of the tree is one, tier = its level + 1
 * (tier 1: the leaves, tier 2 their parents, ...), holding the nodes
 * below it.  A HyperNode has one parent (addChild() refuses a second):
 * a switch with several parents (a Clos) hangs under the first listed,
 * and an upper switch whose children all went elsewhere is empty.  On a
 * dragonfly, which HyperNodes cannot wire, routers are tier 1 and groups
 * tier 2, nothing above: the two node labels (router, group) the label
 * discoverer turns into HyperNodes bottom up.  Above them all the
 * scheduler adds the virtual <cluster-top-hypernode>, every node, tier
 * highest + 1.  A torus has no tree and Volcano's docs give it none: the
 * policy refuses it.
 *
 * The job's constraint, as this baseline's user sets it: mode hard with
 * highestTierAllowed the lowest tier that has a HyperNode of N nodes or
 * more on this machine, the tightest domain the job can ever get (the
 * user guide's example: a job sized to a tier 1 HyperNode, tier 1); the
 * job waits (stays Pending) until such a HyperNode has N free nodes.
 * When no real HyperNode is that large (a dragonfly job larger than a
 * group, a forest), no hard tier can hold it: mode soft, which the
 * session turns into hard at the cluster top's tier.
 *
 * Steps (allocateForJob(), with the job's one default subJob):
 *  1. Gradients: the HyperNodes of tier <= highestTierAllowed with at
 *     least N free nodes (isEligibleHyperNode(): idle >= the job's
 *     minimum), by tier, lowest first; the first tier with one wins.
 *     Inside the winner the subJob's own gradient holds only it (its
 *     lower HyperNodes were all too small or too full already).
 *  2. Among that tier's: the highest binpack score (used + request) /
 *     allocatable (getSubJobHyperNodeBinPackingScore()), i.e. (busy + N)
 *     / size in nodes: the fullest after placing.  Equal scores: Volcano
 *     picks at random (SelectBestHyperNodeAndScore()); here the first in
 *     topology file order.  Nodes not free count as used.
 *  3. Pods one at a time on the free nodes of that HyperNode
 *     (allocateResourcesForTasks()): the first anywhere (every node
 *     scores 0 while the job has no allocated HyperNode); then the nodes
 *     whose lowest HyperNode is the job's allocated one score highest,
 *     else the lower the tier of their lowest common ancestor with it
 *     the better; ties go to the lowest HyperNode with most of the job's
 *     pods (scoreWithTaskNum()); the allocated HyperNode becomes the
 *     common ancestor of itself and the node's (getNewAllocatedHyperNode).
 *     Remaining ties: Volcano picks at random (SelectBestNodeAndScore()),
 *     here the lowest node index.  Whole free nodes score the same in
 *     every other plugin (nodeorder, binpack), so these scores decide.
 *     Once a leaf wins it keeps winning until it is full (its pods count
 *     only grows, no other leaf's score rises), so the leaf is filled in
 *     node index order before the next is chosen.
 * The node list is in that order: the order the pods were allocated,
 * taken as their ranks.
 *
 * Not modelled: partitionPolicy (subgroups), jobs already running part
 * of their pods, futureIdle (nodes being released), preemption; Slurm's
 * node weights (the simulator's cloud_power) mean nothing to Volcano and
 * are ignored; required nodes (srun -w) have no Volcano counterpart for
 * a gang and are refused.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "sim/baselines/baselines.h"

struct vol {
	int nh;			/* HyperNodes, the cluster top last */
	int top;
	int *tier;
	int *parent;		/* -1 for the top */
	int *size;		/* nodes below (RealNodesSet) */
	int *nfree;		/* of those, free */
	int *lowest;		/* per node: its lowest HyperNode */
	int *mark;		/* scratch: ancestors of the allocated one */
	int *cnt;		/* the job's pods per HyperNode (lowest) */
};

static void _free(struct vol *v)
{
	free(v->tier);
	free(v->parent);
	free(v->size);
	free(v->nfree);
	free(v->lowest);
	free(v->mark);
	free(v->cnt);
}

/* The HyperNode tree of t (see the top of this file); 0 or -1. */
static int _build(const topoml_topo_t *t, hwloc_const_bitmap_t avail,
		  struct vol *v)
{
	int ns = t->nswitches;
	int ng = t->family == TOPOML_DRAGONFLY ? t->ngroups : 0;
	int maxtier = 0;

	v->nh = ns + ng + 1;
	v->top = v->nh - 1;
	v->tier = calloc(v->nh, sizeof(int));
	v->parent = calloc(v->nh, sizeof(int));
	v->size = calloc(v->nh, sizeof(int));
	v->nfree = calloc(v->nh, sizeof(int));
	v->mark = calloc(v->nh, sizeof(int));
	v->cnt = calloc(v->nh, sizeof(int));
	v->lowest = calloc(t->nnodes > 0 ? t->nnodes : 1, sizeof(int));
	if (!v->tier || !v->parent || !v->size || !v->nfree || !v->mark ||
	    !v->cnt || !v->lowest)
		return -1;
	for (int i = 0; i < ns; i++) {
		const struct topoml_switch *sw = &t->switches[i];

		if (ng) {
			v->tier[i] = 1;
			v->parent[i] = sw->group >= 0 && sw->group < ng ?
				       ns + sw->group : v->top;
		} else {
			v->tier[i] = sw->level + 1;
			v->parent[i] = sw->nparents > 0 ? sw->parents[0]
							: v->top;
		}
	}
	for (int g = 0; g < ng; g++) {
		v->tier[ns + g] = 2;
		v->parent[ns + g] = v->top;
	}
	for (int h = 0; h < v->top; h++)
		if (v->tier[h] > maxtier)
			maxtier = v->tier[h];
	v->tier[v->top] = maxtier + 1;
	v->parent[v->top] = -1;
	for (int x = 0; x < t->nnodes; x++) {
		int h = t->nodes[x].leaf;
		bool f = hwloc_bitmap_isset(avail, x);

		/* a node on no switch belongs to the top alone */
		v->lowest[x] = h >= 0 && h < ns ? h : v->top;
		for (h = v->lowest[x]; h >= 0; h = v->parent[h]) {
			v->size[h]++;
			v->nfree[h] += f;
		}
	}
	return 0;
}

/* Is HyperNode a at or below b? */
static bool _below(const struct vol *v, int a, int b)
{
	for (; a >= 0; a = v->parent[a])
		if (a == b)
			return true;
	return false;
}

/*
 * The pods' node score against the allocated HyperNode al, as a rank
 * (lower is better): 0 when the node's lowest HyperNode is al, else the
 * tier of their lowest common ancestor (v->mark: al's ancestors, stamp).
 */
static int _rank(const struct vol *v, int lowest, int al, int stamp)
{
	if (lowest == al)
		return 0;
	while (lowest >= 0 && v->mark[lowest] != stamp)
		lowest = v->parent[lowest];
	return lowest >= 0 ? v->tier[lowest] : v->tier[v->top];
}

int topoml__volcano_tier(const topoml_topo_t *t, int n, bool *hard)
{
	struct vol v = { 0 };
	hwloc_bitmap_t none = hwloc_bitmap_alloc();
	int best = -1;

	*hard = false;
	if (!none || _build(t, none, &v)) {
		hwloc_bitmap_free(none);
		_free(&v);
		return -1;
	}
	for (int h = 0; h < v.top; h++)
		if (v.size[h] >= n && (best < 0 || v.tier[h] < best))
			best = v.tier[h];
	*hard = best >= 0;
	if (best < 0)
		best = v.tier[v.top];
	hwloc_bitmap_free(none);
	_free(&v);
	return best;
}

int topoml__place_volcano(const struct place_in *in,
			  struct topoml_placement *out, char *why,
			  size_t whylen)
{
	const topoml_topo_t *t = in->t;
	struct vol v = { 0 };
	hwloc_bitmap_t cand = NULL;
	int n = in->n, hi, hn = -1, rem, k = 0, al = -1, stamp = 0, rc = -1;
	long bu = 0, bs = 1;
	bool hard;

	if (t->family == TOPOML_TORUS) {
		snprintf(why, whylen, "policy volcano needs a tree of "
			 "HyperNodes; a torus has none and Volcano's docs "
			 "give it no mapping");
		return -1;
	}
	if (in->req->attempt > 0) {
		snprintf(why, whylen, "volcano has no alternative placements");
		return -1;
	}
	if (in->nreq > 0) {
		snprintf(why, whylen, "policy volcano takes no required nodes "
			 "(a Volcano gang has no srun -w)");
		return -1;
	}
	hi = topoml__volcano_tier(t, n, &hard);
	cand = hwloc_bitmap_alloc();
	out->nodes = malloc(n * sizeof(int));
	if (hi < 0 || !cand || !out->nodes || _build(t, in->avail, &v)) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}

	/* 1, 2: the first tier with an eligible HyperNode, the fullest */
	for (int tr = 1; tr <= hi && hn < 0; tr++)
		for (int h = 0; h < v.nh; h++) {
			long u = v.size[h] - v.nfree[h] + n;

			if (v.tier[h] != tr || v.nfree[h] < n)
				continue;
			if (hn < 0 || u * bs > bu * v.size[h]) {
				hn = h;
				bu = u;
				bs = v.size[h];
			}
		}
	if (hn < 0) {
		if (hard)
			snprintf(why, whylen, "no HyperNode of tier <= %d has "
				 "%d free nodes (Volcano, mode hard, "
				 "highestTierAllowed %d: the job stays "
				 "Pending)", hi, n, hi);
		else
			snprintf(why, whylen, "fewer than %d free nodes "
				 "(Volcano, mode soft)", n);
		goto out;
	}
	{
		int x;

		hwloc_bitmap_foreach_begin(x, in->avail) {
			if (x < t->nnodes && _below(&v, v.lowest[x], hn))
				hwloc_bitmap_set(cand, x);
		} hwloc_bitmap_foreach_end();
	}

	/* 3: the best leaf by the pods' node score, filled in index order */
	for (rem = n; rem > 0;) {
		int best = -1, brank = 0, bcnt = 0, x;

		hwloc_bitmap_foreach_begin(x, cand) {
			int lo = v.lowest[x];
			int r = al < 0 ? 0 : _rank(&v, lo, al, stamp);

			if (best < 0 || r < brank ||
			    (r == brank && v.cnt[lo] > bcnt)) {
				best = x;
				brank = r;
				bcnt = v.cnt[lo];
			}
		} hwloc_bitmap_foreach_end();
		if (best < 0)
			break;
		{
			int lo = v.lowest[best];

			hwloc_bitmap_foreach_begin(x, cand) {
				if (rem == 0)
					break;
				if (v.lowest[x] != lo)
					continue;
				out->nodes[k++] = x;
				hwloc_bitmap_clr(cand, x);
				v.cnt[lo]++;
				rem--;
			} hwloc_bitmap_foreach_end();
			/* the new allocated HyperNode: LCA(al, lo) */
			if (al < 0) {
				al = lo;
			} else {
				stamp++;
				for (int h = al; h >= 0; h = v.parent[h])
					v.mark[h] = stamp;
				while (lo >= 0 && v.mark[lo] != stamp)
					lo = v.parent[lo];
				al = lo >= 0 ? lo : v.top;
			}
			stamp++;
			for (int h = al; h >= 0; h = v.parent[h])
				v.mark[h] = stamp;
		}
	}
	if (rem > 0) {
		snprintf(why, whylen, "internal error: HyperNode short of "
			 "nodes");
		goto out;
	}
	out->n = k;
	rc = 0;
out:
	if (rc) {
		free(out->nodes);
		out->nodes = NULL;
		out->n = 0;
	}
	hwloc_bitmap_free(cand);
	_free(&v);
	return rc;
}
