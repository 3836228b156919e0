/*
 * Hands topoml_place() the Slurm baselines of libtopoml_sim: Slurm 22.05's
 * cons_tres with topology/tree and with TopologyParam=dragonfly
 * (place_slurm.c), 26.05's topology/torus3d (torus3d's own choice among
 * the boxes that ../place_torus3d.c finds) and topology/block
 * (slurm_block.c); Kueue's Topology Aware Scheduling (kueue_tas.c).  The
 * plugins link only the core, so select/topoml carries none of them.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <strings.h>

#include "sim.h"
#include "sim/baselines/baselines.h"

static int _baseline(const struct place_in *in, enum topoml_policy policy,
		     struct topoml_placement *out, char *why, size_t whylen)
{
	switch ((int)policy) {
	case TOPOML_POLICY_SLURM_TREE:
	case TOPOML_POLICY_SLURM_DRAGONFLY:
		if (in->t->family == TOPOML_TORUS) {
			snprintf(why, whylen,
				 "policy %s needs switches; a torus has none",
				 topoml_policy_name(policy));
			return -1;
		}
		return topoml__place_slurm_tree(in,
				policy == TOPOML_POLICY_SLURM_DRAGONFLY,
				out, why, whylen);
	case TOPOML_POLICY_SLURM_TORUS3D:
		return topoml__torus3d_boxes(in, false, out, why, whylen);
	case TOPOML_POLICY_SLURM_BLOCK:
		return topoml__place_slurm_block(in, out, why, whylen);
	case TOPOML_POLICY_KUEUE_BESTFIT:
		return topoml__place_kueue(in, TOPOML_KUEUE_BESTFIT, out, why,
					   whylen);
	case TOPOML_POLICY_KUEUE_LEASTFREE:
		return topoml__place_kueue(in, TOPOML_KUEUE_LEASTFREE, out,
					   why, whylen);
	case TOPOML_POLICY_KUEUE_BALANCED:
		return topoml__place_kueue(in, TOPOML_KUEUE_BALANCED, out, why,
					   whylen);
	case TOPOML_POLICY_VOLCANO:
		return topoml__place_volcano(in, out, why, whylen);
	default:
		snprintf(why, whylen, "policy %s is not a baseline",
			 topoml_policy_name(policy));
		return -1;
	}
}

static const char *const _names[] = {
	[TOPOML_POLICY_SLURM_TREE] = "slurm-tree",
	[TOPOML_POLICY_SLURM_DRAGONFLY] = "slurm-dragonfly",
	[TOPOML_POLICY_SLURM_TORUS3D] = "slurm-torus3d",
	[TOPOML_POLICY_SLURM_BLOCK] = "slurm-block",
	[TOPOML_POLICY_KUEUE_BESTFIT] = "kueue-bestfit",
	[TOPOML_POLICY_KUEUE_LEASTFREE] = "kueue-leastfree",
	[TOPOML_POLICY_KUEUE_BALANCED] = "kueue-balanced",
	[TOPOML_POLICY_VOLCANO] = "volcano",
};

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char *_name(enum topoml_policy p)
{
	return (int)p >= 0 && (int)p < NELEM(_names) ? _names[p] : NULL;
}

static int _parse(const char *s, enum topoml_policy *p)
{
	for (int i = 0; i < NELEM(_names); i++) {
		if (_names[i] && !strcasecmp(s, _names[i])) {
			*p = (enum topoml_policy)i;
			return 0;
		}
	}
	/* Slurm's own names for the same algorithms. */
	if (!strcasecmp(s, "tree") || !strcasecmp(s, "cons_tres")) {
		*p = TOPOML_POLICY_SLURM_TREE;
		return 0;
	}
	if (!strcasecmp(s, "dragonfly")) {
		*p = TOPOML_POLICY_SLURM_DRAGONFLY;
		return 0;
	}
	return -1;
}

static const struct topoml__baselines _baselines = {
	.place = _baseline,
	.name = _name,
	.parse = _parse,
};

void topoml_sim_register_baselines(void)
{
	topoml__register_baselines(&_baselines);
}
