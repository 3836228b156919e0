/*
 * bench_plan: the whole `topoml plan` search (placement, pricing of every
 * shape, memory and time of every layout) for 1024 nodes of 8 GPUs, per
 * topology family, for a dense and a mixture-of-experts model.  Target
 * (issue 34 item 4): under 1 s each, CPU time; exit 1 above it.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topoml/plan.h"
#include "sim.h"

static double _cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	struct {
		const char *name;
		topoml_topo_t *t;
	} topo[] = {
		{ "fat-tree", topoml_gen_fat_tree(NULL, 1024, 32, 32, 0) },
		{ "dragonfly", topoml_gen_dragonfly(NULL, 16, 16, 4,
						    TOPOML_DF_ALL_TO_ALL) },
		{ "torus", topoml_gen_torus(NULL, 8, 8, 16, true) },
	};
	struct topoml_plan_model dense, moe;
	struct topoml_plan_machine mc;
	int fails = 0;

	topoml_plan_model_init(&dense);
	dense.layers = 96;		/* GPT-3 175B */
	dense.hidden = 12288;
	dense.heads = 96;
	dense.ffn = 4 * 12288;
	dense.vocab = 51200;
	dense.seq = 2048;
	dense.batch = 2048;
	topoml_plan_model_init(&moe);
	moe.layers = 60;		/* 256 experts, 8 a token */
	moe.hidden = 7168;
	moe.heads = 128;
	moe.ffn = 2048;
	moe.vocab = 129280;
	moe.seq = 4096;
	moe.batch = 4096;
	moe.experts = 256;
	moe.topk = 8;
	if (topoml_plan_machine_init(&mc, "dgx-h100"))
		return 1;
	for (size_t i = 0; i < sizeof(topo) / sizeof(topo[0]); i++) {
		for (int k = 0; k < 2; k++) {
			const struct topoml_plan_model *m = k ? &moe : &dense;
			struct topoml_plan best[5];
			struct topoml_plan_ctx *c;
			char why[256];
			double a = _cpu_s(), s;
			long ev = 0;
			int n = -1;

			if (!topo[i].t) {
				printf("%s: cannot generate\n", topo[i].name);
				return 1;
			}
			c = topoml_plan_new(topo[i].t, 1024, &mc, why,
					    sizeof(why));
			if (c)
				n = topoml_plan_search(c, m, NULL, best, 5, &ev,
						       why, sizeof(why));
			s = _cpu_s() - a;
			if (n < 1) {
				printf("%s %s: no plan: %s\n", topo[i].name,
				       k ? "moe" : "dense", why);
				fails++;
			}
			printf("plan 1024 nodes %-9s %-5s %6ld layouts priced "
			       "%.3f s CPU (target < 1 s)\n", topo[i].name,
			       k ? "moe" : "dense", ev, s);
			if (s >= 1)
				fails++;
			topoml_plan_free(c);
		}
		topoml_free(topo[i].t);
	}
	return fails ? 1 : 0;
}
