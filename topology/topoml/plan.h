/*
 * topoml plan (issue 34): the layouts (TP, PP, DP, CP, EP, micro-batch,
 * activation recomputation) of a transformer training on a machine, by
 * memory per GPU and estimated step time.  Memory: Megatron mixed
 * precision (weights, fp32 gradients, Adam states; ZeRO-1 optional) and
 * activations after Korthikanti et al. 2022.  Time: the model's FLOPs at
 * an achievable fraction of the GPU's peak, the pipeline bubble
 * (p - 1) / m, and each group's collectives at the bandwidth of the
 * highest link level its ranks cross on the fabric, which the placement
 * cost model (topoml_hybrid_cost) finds on the engine's placement.
 * Pure C, part of libtopoml.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_PLAN_H
#define TOPOML_PLAN_H

#include <stdbool.h>
#include "topoml/model.h"
#include "topoml/hybrid.h"

struct topoml_plan_model {
	int layers, hidden, heads, ffn, vocab, seq;
	int batch;		/* global batch, sequences */
	int experts, topk;	/* experts <= 1: dense */
	int param_bytes;	/* 2 (bf16/fp16) or 4 */
	int grad_bytes;		/* 4: fp32 accumulation as Megatron */
	int opt_bytes;		/* Adam: 12 (fp32 copy, m, v); SGD 8 */
	bool zero1;		/* optimizer states sharded over DP */
	bool seq_parallel;	/* Megatron sequence parallelism */
	bool flash;		/* no s x s attention scores kept */
};

/* Link levels a group's collective may cross. */
enum topoml_plan_level {
	TOPOML_PLAN_NVLINK = 0,	/* within a node or NVLink domain */
	TOPOML_PLAN_LEAF,	/* nodes of one leaf / dragonfly group */
	TOPOML_PLAN_SPINE,	/* between fat-tree leaves */
	TOPOML_PLAN_GLOBAL,	/* between dragonfly groups */
	TOPOML_PLAN_TORUS,	/* torus links (per hop) */
	TOPOML_PLAN_LEVELS
};

struct topoml_plan_machine {
	const char *gpu;	/* name, for output */
	double mem_gib;		/* per GPU */
	double tflops;		/* dense 16-bit peak per GPU */
	int gpus_per_node;
	/* GB/s per GPU and direction at each level */
	double bw[TOPOML_PLAN_LEVELS];
	double efficiency;	/* achievable fraction of peak, (0, 1] */
	double reserve;		/* fraction of memory kept back */
};

struct topoml_plan_gpu_info {
	const char *name;
	double mem_gib, tflops;
};

struct topoml_plan_node_info {
	const char *name, *gpu;
	int gpus_per_node;
	double nvlink_gbs, nic_gbs;	/* per GPU, one direction */
};

/* Built-in tables, NULL-terminated. */
extern const struct topoml_plan_gpu_info topoml_plan_gpus[];
extern const struct topoml_plan_node_info topoml_plan_nodes[];
const struct topoml_plan_gpu_info *topoml_plan_gpu(const char *name);
const struct topoml_plan_node_info *topoml_plan_node(const char *name);
/* Fill m from a node model: its GPU, bandwidths (leaf, spine, torus the
 * NIC's, dragonfly global half of it), efficiency 0.6, reserve 0.1. */
int topoml_plan_machine_init(struct topoml_plan_machine *m,
			     const char *node_model);
/*
 * What the site file says of its links: on a fat tree whose leaves and
 * upper switches all give LinkSpeed, a slower upper level scales
 * bw[TOPOML_PLAN_SPINE] by the ratio of the slowest upper switch's speed
 * to the slowest leaf's (a faster one cannot beat the NICs).  Returns the
 * factor applied (1: none).
 */
double topoml_plan_site_bw(const topoml_topo_t *t,
			   struct topoml_plan_machine *m);
/* Model defaults: bf16, Adam, fp32 gradients, sequence parallel, flash. */
void topoml_plan_model_init(struct topoml_plan_model *m);
const char *topoml_plan_level_name(enum topoml_plan_level l);
/* "nvlink=300,leaf=25": GB/s per level into bw.  0, or -1 with err. */
int topoml_plan_bw_parse(const char *s, double bw[TOPOML_PLAN_LEVELS],
			 char *err, size_t errlen);

struct topoml_plan {
	struct topoml_parallel par;	/* resolved */
	int mb;				/* micro-batch */
	int nmb;			/* micro-batches per step and pipe */
	bool recompute;			/* full activation recomputation */
	double mem_gib;			/* per GPU, the fullest stage */
	double mem_state_gib;		/* weights, gradients, optimizer */
	double mem_act_gib;		/* activations */
	/* seconds per step */
	double t_compute, t_bubble, t_tp, t_cp, t_ep, t_pp, t_dp, t_step;
	double tflops;			/* executed TFLOP/s per GPU */
	double tokens_per_s;
	enum topoml_plan_level level[TOPOML_KIND_COUNT];
};

/* Fix a dimension of the search (0 / -1: free). */
struct topoml_plan_fix {
	int tp, pp, cp, ep, mb;
	int recompute;			/* -1 free, 0 off, 1 on */
};

struct topoml_plan_ctx;

/*
 * A planner for nnodes nodes of t (the engine's placement of a job of
 * that size on the idle machine) with machine m.  NULL, with why.
 */
struct topoml_plan_ctx *topoml_plan_new(const topoml_topo_t *t, int nnodes,
					const struct topoml_plan_machine *m,
					char *why, size_t whylen);
void topoml_plan_free(struct topoml_plan_ctx *c);
/*
 * One layout: 0 with *out filled (out->mem_gib may exceed what the GPU
 * holds: topoml_plan_fits), or -1 when the layout is not one (sizes do
 * not divide) with why.
 */
int topoml_plan_eval(struct topoml_plan_ctx *c,
		     const struct topoml_plan_model *mod,
		     const struct topoml_parallel *par, int mb, bool recompute,
		     struct topoml_plan *out, char *why, size_t whylen);
bool topoml_plan_fits(const struct topoml_plan_ctx *c,
		      const struct topoml_plan *p);
/*
 * The k fastest layouts that fit, best first (fix may be NULL): how
 * many (0: none fits), or -1 with why (a model that is not one).
 * *evaluated (may be NULL): layouts looked at.
 */
int topoml_plan_search(struct topoml_plan_ctx *c,
		       const struct topoml_plan_model *mod,
		       const struct topoml_plan_fix *fix,
		       struct topoml_plan *out, int k, long *evaluated,
		       char *why, size_t whylen);
/* Parameters of the model (embedding included). */
double topoml_plan_params(const struct topoml_plan_model *mod);

/*
 * A model description file (topoml plan --model, --ml-parallel=auto,
 * model=FILE): one "key = value" a line, '#' starts a comment.  The keys
 * are topoml plan's long options: layers, hidden, heads, ffn, vocab, seq,
 * batch, experts, top-k, precision, optimizer, zero1, seq-parallel,
 * flash (yes|no), node-model, gpu, gpu-mem, gpu-tflops, gpus-per-node,
 * efficiency, bw, and tp, pp, cp, ep, micro-batch, recompute (fixed
 * dimensions).
 */
#define TOPOML_PLAN_FILE_MAX	65536	/* bytes */

struct topoml_plan_spec {
	struct topoml_plan_model model;	/* raw: topoml_plan_spec_finish */
	struct topoml_plan_fix fix;
	char node_model[32], gpu[32];	/* "": not given */
	char precision[8], optimizer[8];
	char bw[160];
	double gpu_mem, gpu_tflops, efficiency;	/* 0: not given */
	int gpus_per_node;			/* 0: not given */
};

void topoml_plan_spec_init(struct topoml_plan_spec *s);
/* One key: 0, or -1 with why (without file or line). */
int topoml_plan_spec_set(struct topoml_plan_spec *s, const char *key,
			 const char *val, char *why, size_t whylen);
/* text[0..len) of the file called name: 0, or -1 with "name:line: why". */
int topoml_plan_spec_parse(struct topoml_plan_spec *s, const char *text,
			   size_t len, const char *name, char *why,
			   size_t whylen);
/*
 * The model checked and completed (ffn, dense experts, bytes from
 * precision and optimizer) and the machine: the node model (default
 * dgx-h100), its GPU, the given values.  0, or -1 with why.
 */
int topoml_plan_spec_finish(struct topoml_plan_spec *s,
			    struct topoml_plan_machine *mc,
			    char *why, size_t whylen);

#endif
