/*
 * topoml plan (issue 34): the fastest layouts of a transformer training
 * on a machine (topology/topoml/plan.h), with the sbatch lines that ask for them.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "cli.h"
#include "topoml/plan.h"
#include "sim.h"

/* nodes a leaf of the fat tree --nodes makes without --topology */
#define PLAN_PER_LEAF 32

/* The built-in node models (1) or GPUs (0), comma separated. */
static const char *_names(int nodes)
{
	static char buf[2][512];
	char *b = buf[nodes ? 1 : 0];
	size_t at = 0;

	b[0] = '\0';
	if (nodes) {
		for (const struct topoml_plan_node_info *n = topoml_plan_nodes;
		     n->name && at < 500; n++)
			at += snprintf(b + at, 512 - at, "%s%s",
				       at ? ", " : "", n->name);
	} else {
		for (const struct topoml_plan_gpu_info *g = topoml_plan_gpus;
		     g->name && at < 500; g++)
			at += snprintf(b + at, 512 - at, "%s%s",
				       at ? ", " : "", g->name);
	}
	return b;
}

static void _usage(FILE *f)
{
	fprintf(f,
"usage: topoml plan (--topology FILE [--nodes N] | --nodes N)\n"
"                   [--model FILE]\n"
"                   [--node-model M] [--gpu G] [--gpu-mem GIB]\n"
"                   [--gpu-tflops T] [--gpus-per-node K]\n"
"                   [--bw LEVEL=GB/s,...] [--efficiency F]\n"
"                   --layers L --hidden H --heads A [--ffn F] [--vocab V]\n"
"                   --seq S --batch B [--experts E --top-k K]\n"
"                   [--precision bf16|fp16|fp32] [--optimizer adam|sgd]\n"
"                   [--zero1] [--no-seq-parallel] [--no-flash]\n"
"                   [--tp T] [--pp P] [--cp C] [--ep E] [--micro-batch M]\n"
"                   [--recompute on|off] [--top K] [--json] [--progress|-q]\n"
"The fastest layouts (tensor, pipeline, data, context, expert parallel\n"
"sizes, micro-batch, activation recomputation) of a transformer training\n"
"on N nodes: memory per GPU, estimated step time split into compute,\n"
"tensor, context, expert, pipeline (bubble included) and data-parallel\n"
"communication at the bandwidth of the links each group crosses on the\n"
"engine's placement, and the sbatch options asking for the layout.\n"
"  --topology FILE      a site file (N of its nodes, default all); without\n"
"                       it, a fat tree of N nodes, %d a leaf\n"
"  --model FILE         the model (and machine) from a description file,\n"
"                       one KEY = VALUE a line, KEY an option below\n"
"                       (topoml-plan(1)); the options given win\n"
"  --node-model M       GPUs and bandwidths of a node (default dgx-h100):\n"
"                       %s\n"
"  --gpu G              its GPU instead: %s\n"
"  --gpu-mem, --gpu-tflops  GiB and dense 16-bit TFLOP/s per GPU\n"
"  --bw LEVEL=GB/s,...  per GPU and direction: nvlink (node, NVLink\n"
"                       domain), leaf, spine, global (dragonfly), torus\n"
"  --efficiency F       achievable fraction of peak (default 0.6)\n"
"  --ffn F              MLP size (default 4 x hidden); --vocab default 51200\n"
"  --experts E --top-k K  mixture of experts (E experts a layer, K a token)\n"
"  --zero1              optimizer states sharded over data parallel\n"
"  --no-seq-parallel, --no-flash  activations as without Megatron's\n"
"                       sequence parallelism, with attention scores kept\n"
"  --tp, --pp, --cp, --ep, --micro-batch, --recompute  fix a dimension\n"
"  --top K              layouts to print (default 5)\n"
"Exit status: 0 a layout fits, 1 none fits or invalid topology, 2 usage\n"
"error or unreadable file.\n",
		PLAN_PER_LEAF, _names(1), _names(0));
}

/* An integer option in [lo, hi]: 0, or -1 with a message. */
static int _int(const char *opt, const char *arg, long lo, long hi, int *v)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(arg, &end, 10);
	if (errno || end == arg || *end || x < lo || x > hi) {
		cli_err("--%s: '%s' is not a number from %ld to %ld", opt, arg,
			lo, hi);
		return -1;
	}
	*v = (int)x;
	return 0;
}

static int _dbl(const char *opt, const char *arg, double lo, double hi,
		double *v)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(arg, &end);
	if (errno || end == arg || *end || !(x >= lo) || x > hi) {
		cli_err("--%s: '%s' is not a number from %g to %g", opt, arg,
			lo, hi);
		return -1;
	}
	*v = x;
	return 0;
}

static void _sbatch(const struct topoml_plan *p, int nodes, int gpn,
		    char *buf, size_t len)
{
	snprintf(buf, len, "sbatch -N %d --gpus-per-node=%d "
		 "--ntasks-per-node=%d --ml-parallel=tp=%d,pp=%d,dp=%d",
		 nodes, gpn, gpn, p->par.tp, p->par.pp, p->par.dp);
	if (p->par.cp > 1 || p->par.ep > 1) {
		size_t at = strlen(buf);

		if (p->par.ep > 1)
			at += snprintf(buf + at, len - at, ",ep=%d",
				       p->par.ep);
		if (p->par.cp > 1 && at < len)
			snprintf(buf + at, len - at, ",cp=%d", p->par.cp);
	}
}

/* The level a kind's traffic crosses, "-" for a group of one. */
static const char *_level(const struct topoml_plan *p, enum topoml_kind k,
			  int size)
{
	return size > 1 ? topoml_plan_level_name(p->level[k]) : "-";
}

static void _text(const struct topoml_plan *p, int n, int nodes,
		  const struct topoml_plan_machine *mc)
{
	for (int i = 0; i < n; i++, p++) {
		char sb[256];

		printf("%s#%d tp=%d pp=%d dp=%d cp=%d ep=%d micro-batch=%d "
		       "(%d a step) recompute=%s\n", i ? "\n" : "", i + 1,
		       p->par.tp, p->par.pp, p->par.dp, p->par.cp, p->par.ep,
		       p->mb, p->nmb, p->recompute ? "on" : "off");
		printf("  memory  %.1f GiB a GPU (weights, gradients, "
		       "optimizer %.1f; activations %.1f) of %.1f usable\n",
		       p->mem_gib, p->mem_state_gib, p->mem_act_gib,
		       mc->mem_gib * (1 - mc->reserve));
		printf("  step    %.3f s: compute %.3f, tp %.3f (%s)",
		       p->t_step, p->t_compute, p->t_tp,
		       _level(p, TOPOML_KIND_TP, p->par.tp));
		if (p->par.cp > 1)
			printf(", cp %.3f (%s)", p->t_cp,
			       topoml_plan_level_name(
				       p->level[TOPOML_KIND_CP]));
		if (p->par.ep > 1)
			printf(", ep %.3f (%s)", p->t_ep,
			       topoml_plan_level_name(
				       p->level[TOPOML_KIND_EP]));
		printf(", pp %.3f (bubble %.3f; %s), dp %.3f (%s)\n",
		       p->t_bubble + p->t_pp, p->t_bubble,
		       _level(p, TOPOML_KIND_PP, p->par.pp), p->t_dp,
		       _level(p, TOPOML_KIND_DP, p->par.dp * p->par.cp));
		printf("  rate    %.1f TFLOP/s a GPU, %.0f tokens/s\n",
		       p->tflops, p->tokens_per_s);
		_sbatch(p, nodes, mc->gpus_per_node, sb, sizeof(sb));
		printf("  %s\n", sb);
	}
}

static void _d(json_object *o, const char *k, double v)
{
	json_object_object_add(o, k, json_object_new_double(v));
}

static void _i(json_object *o, const char *k, int v)
{
	json_object_object_add(o, k, json_object_new_int(v));
}

static void _json(const struct topoml_plan *p, int n, int nodes,
		  const struct topoml_plan_machine *mc,
		  const struct topoml_plan_model *m, long evaluated)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	json_object *mo = json_object_new_object();

	json_object_object_add(mo, "gpu", json_object_new_string(mc->gpu));
	_i(mo, "nodes", nodes);
	_i(mo, "gpus_per_node", mc->gpus_per_node);
	_d(mo, "mem_gib", mc->mem_gib);
	_d(mo, "tflops", mc->tflops);
	_d(mo, "efficiency", mc->efficiency);
	for (int l = 0; l < TOPOML_PLAN_LEVELS; l++)
		json_object_object_add(mo, topoml_plan_level_name(l),
				       json_object_new_double(mc->bw[l]));
	json_object_object_add(o, "machine", mo);
	_d(o, "parameters", topoml_plan_params(m));
	json_object_object_add(o, "evaluated",
			       json_object_new_int64(evaluated));
	for (int i = 0; i < n; i++, p++) {
		json_object *e = json_object_new_object();
		json_object *t = json_object_new_object();
		json_object *lv = json_object_new_object();
		char sb[256];

		_i(e, "tp", p->par.tp);
		_i(e, "pp", p->par.pp);
		_i(e, "dp", p->par.dp);
		_i(e, "cp", p->par.cp);
		_i(e, "ep", p->par.ep);
		_i(e, "micro_batch", p->mb);
		_i(e, "micro_batches", p->nmb);
		json_object_object_add(e, "recompute",
				       json_object_new_boolean(p->recompute));
		_d(e, "mem_gib", p->mem_gib);
		_d(e, "mem_state_gib", p->mem_state_gib);
		_d(e, "mem_act_gib", p->mem_act_gib);
		_d(t, "step", p->t_step);
		_d(t, "compute", p->t_compute);
		_d(t, "bubble", p->t_bubble);
		_d(t, "tp", p->t_tp);
		_d(t, "cp", p->t_cp);
		_d(t, "ep", p->t_ep);
		_d(t, "pp", p->t_pp);
		_d(t, "dp", p->t_dp);
		json_object_object_add(e, "seconds", t);
		for (int k = 0; k < TOPOML_KIND_COUNT; k++)
			json_object_object_add(lv, topoml_kind_name(k),
				json_object_new_string(
					topoml_plan_level_name(p->level[k])));
		json_object_object_add(e, "levels", lv);
		_d(e, "tflops", p->tflops);
		_d(e, "tokens_per_s", p->tokens_per_s);
		_sbatch(p, nodes, mc->gpus_per_node, sb, sizeof(sb));
		json_object_object_add(e, "sbatch", json_object_new_string(sb));
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "plans", a);
	printf("%s\n", json_object_to_json_string_ext(o,
		JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

/* --model FILE into s: 0, or -1 with a message (file and line). */
static int _model_file(const char *path, struct topoml_plan_spec *s)
{
	char *buf = malloc(TOPOML_PLAN_FILE_MAX + 1), why[512];
	FILE *f = fopen(path, "re");
	size_t n = 0;
	int rc = -1;

	if (!f || !buf) {
		cli_err("--model: %s: %s", path, strerror(errno));
		goto out;
	}
	n = fread(buf, 1, TOPOML_PLAN_FILE_MAX + 1, f);
	if (ferror(f)) {
		cli_err("--model: %s: %s", path, strerror(errno));
		goto out;
	}
	topoml_plan_spec_init(s);
	if (topoml_plan_spec_parse(s, buf, n, path, why, sizeof(why))) {
		cli_err("%s", why);
		goto out;
	}
	rc = 0;
out:
	if (f)
		fclose(f);
	free(buf);
	return rc;
}

int cmd_plan(int argc, char **argv)
{
	enum {
		O_MODEL = 0x100, O_GPU, O_MEM, O_TFLOPS, O_GPN, O_BW, O_EFF,
		O_LAYERS, O_HIDDEN, O_HEADS, O_FFN, O_VOCAB, O_SEQ, O_BATCH,
		O_EXPERTS, O_TOPK, O_PREC, O_OPT, O_ZERO1, O_NOSP, O_NOFLASH,
		O_TP, O_PP, O_CP, O_EP, O_MB, O_RC, O_TOP, O_FILE,
	};
	static const struct option opts[] = {
		{ "topology", required_argument, NULL, 't' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "node-model", required_argument, NULL, O_MODEL },
		{ "gpu", required_argument, NULL, O_GPU },
		{ "gpu-mem", required_argument, NULL, O_MEM },
		{ "gpu-tflops", required_argument, NULL, O_TFLOPS },
		{ "gpus-per-node", required_argument, NULL, O_GPN },
		{ "bw", required_argument, NULL, O_BW },
		{ "efficiency", required_argument, NULL, O_EFF },
		{ "layers", required_argument, NULL, O_LAYERS },
		{ "hidden", required_argument, NULL, O_HIDDEN },
		{ "heads", required_argument, NULL, O_HEADS },
		{ "ffn", required_argument, NULL, O_FFN },
		{ "vocab", required_argument, NULL, O_VOCAB },
		{ "seq", required_argument, NULL, O_SEQ },
		{ "batch", required_argument, NULL, O_BATCH },
		{ "experts", required_argument, NULL, O_EXPERTS },
		{ "top-k", required_argument, NULL, O_TOPK },
		{ "precision", required_argument, NULL, O_PREC },
		{ "optimizer", required_argument, NULL, O_OPT },
		{ "zero1", no_argument, NULL, O_ZERO1 },
		{ "no-seq-parallel", no_argument, NULL, O_NOSP },
		{ "no-flash", no_argument, NULL, O_NOFLASH },
		{ "tp", required_argument, NULL, O_TP },
		{ "pp", required_argument, NULL, O_PP },
		{ "cp", required_argument, NULL, O_CP },
		{ "ep", required_argument, NULL, O_EP },
		{ "micro-batch", required_argument, NULL, O_MB },
		{ "recompute", required_argument, NULL, O_RC },
		{ "top", required_argument, NULL, O_TOP },
		{ "model", required_argument, NULL, O_FILE },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		CLI_COMMON_OPTS,
		{ NULL, 0, NULL, 0 },
	};
	const char *topo = NULL, *model = "dgx-h100", *gpu = NULL;
	const char *bw = NULL, *prec = "bf16", *optim = "adam";
	struct topoml_plan_fix fix = { 0, 0, 0, 0, 0, -1 };
	struct topoml_plan_model m;
	struct topoml_plan_spec spec;
	struct topoml_plan_machine mc;
	struct topoml_plan_ctx *ctx = NULL;
	struct topoml_plan *best = NULL;
	double mem = 0, tflops = 0, eff = 0;
	int nodes = 0, gpn = 0, top = 5, n, c, rc = 2;
	topoml_topo_t *t = NULL;
	bool json = false;
	char why[512];
	long ev = 0;
	int *iv;

	optind = 1;
	topoml_plan_model_init(&m);
	m.vocab = 51200;
	m.experts = 0;
	m.topk = 0;
	/* --model first, wherever it is: the other options override it */
	topoml_plan_spec_init(&spec);
	opterr = 0;
	while ((c = getopt_long(argc, argv, "t:N:jqh", opts, NULL)) != -1)
		if (c == O_FILE && _model_file(optarg, &spec))
			return 2;
	opterr = 1;
	optind = 1;
	m = spec.model;		/* the defaults above without a file */
	fix = spec.fix;
	if (spec.node_model[0])
		model = spec.node_model;
	if (spec.gpu[0])
		gpu = spec.gpu;
	if (spec.precision[0])
		prec = spec.precision;
	if (spec.optimizer[0])
		optim = spec.optimizer;
	mem = spec.gpu_mem;
	tflops = spec.gpu_tflops;
	eff = spec.efficiency;
	gpn = spec.gpus_per_node;
	while ((c = getopt_long(argc, argv, "t:N:jqh", opts, NULL)) != -1) {
		const char *on = NULL;
		long hi = 1L << 24;

		if (cli_common_opt(c))
			continue;
		iv = NULL;
		switch (c) {
		case 't':
			topo = optarg;
			continue;
		case 'N':
			iv = &nodes, on = "nodes", hi = 1 << 20;
			break;
		case O_MODEL:
			model = optarg;
			continue;
		case O_GPU:
			gpu = optarg;
			continue;
		case O_MEM:
			if (_dbl("gpu-mem", optarg, 0.001, 1e6, &mem))
				return 2;
			continue;
		case O_TFLOPS:
			if (_dbl("gpu-tflops", optarg, 0.001, 1e7, &tflops))
				return 2;
			continue;
		case O_EFF:
			if (_dbl("efficiency", optarg, 0.01, 1, &eff))
				return 2;
			continue;
		case O_BW:
			bw = optarg;
			continue;
		case O_GPN:
			iv = &gpn, on = "gpus-per-node", hi = 1024;
			break;
		case O_LAYERS:
			iv = &m.layers, on = "layers", hi = 100000;
			break;
		case O_HIDDEN:
			iv = &m.hidden, on = "hidden";
			break;
		case O_HEADS:
			iv = &m.heads, on = "heads", hi = 65536;
			break;
		case O_FFN:
			iv = &m.ffn, on = "ffn";
			break;
		case O_VOCAB:
			iv = &m.vocab, on = "vocab";
			break;
		case O_SEQ:
			iv = &m.seq, on = "seq";
			break;
		case O_BATCH:
			iv = &m.batch, on = "batch";
			break;
		case O_EXPERTS:
			iv = &m.experts, on = "experts", hi = 65536;
			break;
		case O_TOPK:
			iv = &m.topk, on = "top-k", hi = 65536;
			break;
		case O_TP:
			iv = &fix.tp, on = "tp", hi = 65536;
			break;
		case O_PP:
			iv = &fix.pp, on = "pp", hi = 65536;
			break;
		case O_CP:
			iv = &fix.cp, on = "cp", hi = 65536;
			break;
		case O_EP:
			iv = &fix.ep, on = "ep", hi = 65536;
			break;
		case O_MB:
			iv = &fix.mb, on = "micro-batch", hi = 65536;
			break;
		case O_TOP:
			iv = &top, on = "top", hi = 1000;
			break;
		case O_PREC:
			prec = optarg;
			continue;
		case O_OPT:
			optim = optarg;
			continue;
		case O_ZERO1:
			m.zero1 = true;
			continue;
		case O_NOSP:
			m.seq_parallel = false;
			continue;
		case O_NOFLASH:
			m.flash = false;
			continue;
		case O_RC:
			if (!strcmp(optarg, "on")) {
				fix.recompute = 1;
			} else if (!strcmp(optarg, "off")) {
				fix.recompute = 0;
			} else {
				cli_err("--recompute: '%s' is not on or off",
					optarg);
				return 2;
			}
			continue;
		case 'j':
			json = true;
			continue;
		case O_FILE:
			continue;
		case 'h':
			_usage(stdout);
			return 0;
		default:
			_usage(stderr);
			return 2;
		}
		if (_int(on, optarg, 1, hi, iv))
			return 2;
	}
	if (optind < argc) {
		cli_err("unexpected argument '%s'", argv[optind]);
		_usage(stderr);
		return 2;
	}
	if (!topo && !nodes) {
		cli_err("--topology or --nodes is required");
		_usage(stderr);
		return 2;
	}
	if (!m.layers || !m.hidden || !m.heads || !m.seq || !m.batch) {
		cli_err("--layers, --hidden, --heads, --seq and --batch are "
			"required");
		return 2;
	}
	if (!m.ffn)
		m.ffn = 4 * m.hidden;
	if ((m.experts > 1) != (m.topk > 0) || m.topk > m.experts) {
		cli_err("--experts E (2 or more) and --top-k K (1 to E) go "
			"together");
		return 2;
	}
	if (m.experts <= 1) {
		m.experts = 1;
		m.topk = 1;
	}
	if (m.hidden % m.heads) {
		cli_err("--hidden %d is not a multiple of --heads %d",
			m.hidden, m.heads);
		return 2;
	}
	if (!strcmp(prec, "bf16") || !strcmp(prec, "fp16")) {
		m.param_bytes = 2;
	} else if (!strcmp(prec, "fp32")) {
		m.param_bytes = 4;
	} else {
		cli_err("--precision: '%s' is not bf16, fp16 or fp32", prec);
		return 2;
	}
	if (!strcmp(optim, "adam")) {
		/* fp32 master copy (mixed precision), first and second
		 * moments */
		m.opt_bytes = m.param_bytes == 4 ? 8 : 12;
	} else if (!strcmp(optim, "sgd")) {
		m.opt_bytes = m.param_bytes == 4 ? 4 : 8;
	} else {
		cli_err("--optimizer: '%s' is not adam or sgd", optim);
		return 2;
	}
	if (topoml_plan_machine_init(&mc, model)) {
		cli_err("--node-model: unknown '%s' (%s)", model, _names(1));
		return 2;
	}
	if (gpu) {
		const struct topoml_plan_gpu_info *g = topoml_plan_gpu(gpu);

		if (!g) {
			cli_err("--gpu: unknown '%s' (%s)", gpu, _names(0));
			return 2;
		}
		mc.gpu = g->name;
		mc.mem_gib = g->mem_gib;
		mc.tflops = g->tflops;
	}
	if (mem)
		mc.mem_gib = mem;
	if (tflops)
		mc.tflops = tflops;
	if (eff)
		mc.efficiency = eff;
	if (gpn)
		mc.gpus_per_node = gpn;
	if (spec.bw[0] &&
	    topoml_plan_bw_parse(spec.bw, mc.bw, why, sizeof(why))) {
		cli_err("bw: %s", why);
		return 2;
	}
	if (bw && topoml_plan_bw_parse(bw, mc.bw, why, sizeof(why))) {
		cli_err("--bw: %s", why);
		return 2;
	}
	if (topo) {
		double spine = mc.bw[TOPOML_PLAN_SPINE];

		t = cli_load_topology(topo, &rc);
		if (!t)
			goto out;
		/* the site file's LinkSpeed, unless --bw names the level */
		topoml_plan_site_bw(t, &mc);
		if (bw && strstr(bw, "spine="))
			mc.bw[TOPOML_PLAN_SPINE] = spine;
		if (!nodes)
			nodes = t->nnodes;
		if (nodes > t->nnodes) {
			cli_err("--nodes %d: %s has %d", nodes, topo,
				t->nnodes);
			rc = 1;
			goto out;
		}
	} else {
		t = topoml_gen_fat_tree(NULL, nodes, PLAN_PER_LEAF, 0, 0);
		if (!t)
			goto out;
	}
	rc = 1;
	if ((long)nodes * mc.gpus_per_node > 65536 * 16) {
		cli_err("%d nodes of %d GPUs: too many", nodes,
			mc.gpus_per_node);
		goto out;
	}
	cli_progress_step("planning on %d node%s", nodes, cli_plural(nodes));
	ctx = topoml_plan_new(t, nodes, &mc, why, sizeof(why));
	if (!ctx) {
		cli_err("%s", why);
		goto out;
	}
	best = calloc(top, sizeof(*best));
	if (!best)
		goto out;
	n = topoml_plan_search(ctx, &m, &fix, best, top, &ev, why,
			       sizeof(why));
	cli_progress_end();
	if (n < 0) {
		cli_err("%s", why);
		rc = 2;
		goto out;
	}
	if (json)
		_json(best, n, nodes, &mc, &m, ev);
	else if (n)
		_text(best, n, nodes, &mc);
	if (!n) {
		cli_err("no layout fits in %.0f GiB a GPU on %d node%s",
			mc.mem_gib, nodes, cli_plural(nodes));
		goto out;
	}
	rc = 0;
out:
	free(best);
	topoml_plan_free(ctx);
	topoml_free(t);
	return rc;
}
