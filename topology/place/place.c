/*
 * Placement: checks a request, dispatches it to the policy (topoml's own
 * engine per topology family, or one of Slurm's algorithms reproduced as a
 * baseline: those of libtopoml_sim through topoml__register_baselines()),
 * scores the result.  The helpers the engines share: common/.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "topoml.h"
#include "place/common/place_int.h"

static const char *const hint_names[] = {
	[TOPOML_HINT_ALLREDUCE] = "allreduce",
	[TOPOML_HINT_ALLTOALL] = "alltoall",
	[TOPOML_HINT_ISOLATE] = "isolate",
};

static const char *const policy_names[] = {
	[TOPOML_POLICY_TOPOML] = "topoml",
	[TOPOML_POLICY_SLURM_HILBERT] = "slurm-hilbert",
	[TOPOML_POLICY_LINEAR] = "linear",
};

/*
 * The Slurm baselines' engines and names live in libtopoml_sim, which the
 * plugins do not link; the CLI, the simulator and the tests register them.
 */
static const struct topoml__baselines *_baselines;

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

const char *topoml_hint_name(enum topoml_hint h)
{
	if ((int)h < 0 || (int)h >= NELEM(hint_names))
		return "unknown";
	return hint_names[h];
}

int topoml_hint_parse(const char *s, enum topoml_hint *h)
{
	for (int i = 0; s && i < NELEM(hint_names); i++) {
		if (!strcasecmp(s, hint_names[i])) {
			*h = (enum topoml_hint)i;
			return 0;
		}
	}
	return -1;
}

const char *topoml_policy_name(enum topoml_policy p)
{
	const char *name = NULL;

	if ((int)p >= 0 && (int)p < NELEM(policy_names))
		name = policy_names[p];
	if (!name && _baselines)
		name = _baselines->name(p);
	return name ? name : "unknown";
}

int topoml_policy_parse(const char *s, enum topoml_policy *p)
{
	for (int i = 0; s && i < NELEM(policy_names); i++) {
		if (policy_names[i] && !strcasecmp(s, policy_names[i])) {
			*p = (enum topoml_policy)i;
			return 0;
		}
	}
	/* Slurm's own name for the same algorithm. */
	if (s && !strcasecmp(s, "hilbert")) {
		*p = TOPOML_POLICY_SLURM_HILBERT;
		return 0;
	}
	return s && _baselines ? _baselines->parse(s, p) : -1;
}

/* ---- the entry point ------------------------------------------------ */

static void _why(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void _why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

/* Engines that fill a ranked list of distinct placements in one call. */
static bool _ranked_engine(const topoml_topo_t *t, enum topoml_policy policy,
			   bool shared)
{
	return policy == TOPOML_POLICY_TOPOML && !shared &&
	       (t->nblocks > 0 || t->family == TOPOML_FAT_TREE ||
		t->family == TOPOML_DRAGONFLY ||
		(t->family == TOPOML_TORUS && t->torus3d &&
		 t->torus3d_only));
}

void topoml__register_baselines(const struct topoml__baselines *b)
{
	_baselines = b;
}

/*
 * One call of the policy's engine: ranked engines fill out[0..in->k) and
 * return the count; the others give in->req->attempt's choice (0 or -1).
 */
static int _dispatch(struct place_in *in, enum topoml_policy policy,
		     bool shared, struct topoml_placement *out, char *why,
		     size_t whylen)
{
	const topoml_topo_t *t = in->t;
	int rc = -1;

	switch (policy) {
	case TOPOML_POLICY_TOPOML:
		if (shared)
			return topoml__place_shared(in, out, why, whylen);
		if (t->nblocks > 0)
			return topoml__place_block(in, out, why, whylen);
		switch (t->family) {
		case TOPOML_FAT_TREE:
			return topoml__place_fat_tree(in, out, why, whylen);
		case TOPOML_DRAGONFLY:
			return topoml__place_dragonfly(in, out, why, whylen);
		case TOPOML_TORUS:
			/* slurmctld's topology/torus3d takes only its boxes */
			if (t->torus3d && t->torus3d_only)
				return topoml__place_torus3d_topoml(in, out,
								    why,
								    whylen);
			return topoml__place_torus(in, out, why, whylen);
		}
		break;
	case TOPOML_POLICY_SLURM_HILBERT:
		if (t->family != TOPOML_TORUS) {
			_why(why, whylen,
			     "policy slurm-hilbert needs a 3D torus");
			break;
		}
		rc = topoml__place_slurm_linear(in, true, out, why, whylen);
		break;
	case TOPOML_POLICY_LINEAR:
		rc = topoml__place_slurm_linear(in, false, out, why, whylen);
		break;
	default:
		/* the Slurm baselines: libtopoml_sim's ids */
		if (!_baselines) {
			_why(why, whylen, "policy %d: not the core's; the "
			     "Slurm baselines of libtopoml_sim are not "
			     "registered in this program "
			     "(topoml_sim_register_baselines())", (int)policy);
			break;
		}
		rc = _baselines->place(in, policy, out, why, whylen);
		break;
	}
	return rc;
}

/*
 * The common part of topoml_place and topoml_place_ranked: check and
 * normalise the request, then fill out[0..k) best first.  attempt >= 0
 * (topoml_place): only out[0] is wanted, the attempt-th distinct choice.
 * Returns the number of placements, or -1 with why.
 */
static int _place(const topoml_topo_t *t, enum topoml_policy policy,
		  const struct topoml_place_req *req, int k, int attempt,
		  struct topoml_placement *out, char *why, size_t whylen)
{
	struct place_in in = { .t = t, .req = req, .k = 1 };
	struct topoml_place_req areq;
	hwloc_bitmap_t avail = NULL, required = NULL;
	int rc = -1, navail, n = 0;
	bool shared;

	if (why && whylen)
		why[0] = '\0';
	if (!out || k < 1)
		return -1;
	memset(out, 0, (size_t)k * sizeof(*out));
	if (!t || !req || !req->avail) {
		_why(why, whylen, "no topology or no set of free nodes");
		return -1;
	}
	if (req->nnodes < 1) {
		_why(why, whylen, "invalid node count %d", req->nnodes);
		return -1;
	}
	if (req->nnodes > t->nnodes) {
		_why(why, whylen, "%d node%s wanted, the topology has %d",
		     req->nnodes, req->nnodes == 1 ? "" : "s", t->nnodes);
		return -1;
	}
	avail = hwloc_bitmap_dup(req->avail);
	required = req->required ? hwloc_bitmap_dup(req->required)
				 : hwloc_bitmap_alloc();
	if (!avail || !required) {
		_why(why, whylen, "out of memory");
		goto out;
	}
	/* Ignore indices beyond the topology (a caller's larger bitmap). */
	if (hwloc_bitmap_last(avail) >= t->nnodes)
		hwloc_bitmap_clr_range(avail, t->nnodes, -1);
	if (hwloc_bitmap_last(required) >= t->nnodes) {
		_why(why, whylen, "required node index %d outside the topology",
		     hwloc_bitmap_last(required));
		goto out;
	}
	if (!hwloc_bitmap_isincluded(required, avail)) {
		hwloc_bitmap_t miss = hwloc_bitmap_alloc();
		char *names;

		hwloc_bitmap_andnot(miss, required, avail);
		names = topoml_nodeset_format(t, miss);
		_why(why, whylen, "required nodes %s are not free",
		     names ? names : "?");
		free(names);
		hwloc_bitmap_free(miss);
		goto out;
	}
	in.avail = avail;
	in.required = required;
	in.nreq = hwloc_bitmap_weight(required);
	in.n = req->nnodes;
	if (in.nreq > in.n) {
		_why(why, whylen, "%d required nodes but only %d wanted",
		     in.nreq, in.n);
		goto out;
	}
	navail = hwloc_bitmap_weight(avail);
	if (navail < in.n) {
		_why(why, whylen, "%d node%s wanted, %d free", in.n,
		     in.n == 1 ? "" : "s", navail);
		goto out;
	}

	/* Jobs that share nodes: by free units, not whole nodes. */
	shared = req->units > 0 && req->free_units && in.nreq == 0;
	areq = *req;
	in.req = &areq;
	if (_ranked_engine(t, policy, shared)) {
		struct topoml_placement *all = out;

		/* One pass over the candidates: the first attempt+1 (or k)
		 * distinct placements, best first. */
		in.k = attempt >= 0 ? attempt + 1 : k;
		if (attempt > 0 && !(all = calloc(in.k, sizeof(*all)))) {
			_why(why, whylen, "out of memory");
			goto out;
		}
		rc = _dispatch(&in, policy, false, all, why, whylen);
		if (attempt >= 0 && rc >= 0 && rc <= attempt) {
			_why(why, whylen, "no candidate placement left "
			     "(attempt %d, %d distinct%s)", attempt, rc,
			     req->max_leaves > 0 && !t->nblocks &&
			     t->family == TOPOML_DRAGONFLY ?
			     ", within --switches" : "");
			rc = -1;
		}
		if (attempt > 0) {
			if (rc > attempt) {
				out[0] = all[attempt];
				memset(&all[attempt], 0, sizeof(*all));
			}
			for (int i = 0; i < in.k; i++)
				topoml_placement_clear(&all[i]);
			free(all);
		}
		n = rc < 0 ? 0 : attempt >= 0 ? 1 : rc;
	} else {
		/*
		 * Engines without a ranked list (torus, shared nodes, the
		 * Slurm baselines) give the attempt-th choice per call.
		 */
		char later[256];

		for (int i = 0; i < (attempt >= 0 ? 1 : k); i++) {
			areq.attempt = attempt >= 0 ? attempt : i;
			rc = _dispatch(&in, policy, shared, &out[i],
				       i ? later : why,
				       i ? sizeof(later) : whylen);
			if (rc)
				break;
			n++;
		}
	}
	for (int i = 0; i < n; i++) {
		if (shared ? out[i].n < in.n : out[i].n != in.n) {
			_why(why, whylen,
			     "internal error: %d nodes placed, %d wanted",
			     out[i].n, in.n);
			n = 0;
			break;
		}
		if (req->unscored)
			continue;
		topoml_score(t, req->avail, &out[i]);
		out[i].score.idle_leaves_broken = topoml_idle_leaves_broken(t,
				req->avail, req->partial, out[i].nodes,
				out[i].n);
	}
out:
	for (int i = n; i < k; i++)
		topoml_placement_clear(&out[i]);
	hwloc_bitmap_free(avail);
	hwloc_bitmap_free(required);
	return n > 0 ? n : -1;
}

int topoml_place(const topoml_topo_t *t, enum topoml_policy policy,
		 const struct topoml_place_req *req,
		 struct topoml_placement *out, char *why, size_t whylen)
{
	int attempt = req && req->attempt > 0 ? req->attempt : 0;

	return _place(t, policy, req, 1, attempt, out, why, whylen) > 0 ?
	       0 : -1;
}

int topoml_place_ranked(const topoml_topo_t *t, enum topoml_policy policy,
			const struct topoml_place_req *req, int k,
			struct topoml_placement *out, char *why,
			size_t whylen)
{
	return _place(t, policy, req, k, -1, out, why, whylen);
}
