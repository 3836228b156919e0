/*
 * A training-like program for the checkpoint tests: a deterministic state
 * advanced once per step (xorshift + a running sum), checkpointed through
 * libtopoml-ckpt, resumed from TOPOML_RESUME's checkpoint.
 *
 *   train_c STEPS SLEEP_MS [RESULT_DIR]
 *
 * Prints "final steps=N state=HEX" and writes it to RESULT_DIR/result.R
 * (R = TOPOML_RESTART_COUNT); appends "restart R from S" to
 * RESULT_DIR/runs.  Without TOPOML_CKPT_DIR it just runs (the reference).
 * The same state function is in train_py.py.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../contrib/ckpt/topoml_ckpt.h"

struct state {
	uint64_t x, sum;
};

static void _advance(struct state *s, long step)
{
	s->x ^= s->x << 13;
	s->x ^= s->x >> 7;
	s->x ^= s->x << 17;
	s->x += (uint64_t)step;
	s->sum = (uint64_t)(((unsigned __int128)s->sum * 31 + (s->x >> 40)) %
			    2305843009213693951ULL);
}

static void _append(const char *dir, const char *name, const char *line)
{
	char p[4096];
	FILE *f;

	if (!dir)
		return;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if ((f = fopen(p, "a"))) {
		fputs(line, f);
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	struct state st = { 0x9E3779B97F4A7C15ULL, 0 };
	const char *rdir = argc > 3 ? argv[3] : NULL;
	const char *restart = getenv("TOPOML_RESTART_COUNT");
	topoml_ckpt_t *ck = NULL;
	char err[512], line[256], p[4096];
	long steps, step = 0, ms;
	struct timespec ts;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: train_c STEPS SLEEP_MS [RESULT_DIR]\n");
		return 2;
	}
	steps = atol(argv[1]);
	ms = atol(argv[2]);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	restart = restart ? restart : "0";
	if (getenv("TOPOML_CKPT_DIR")) {
		if (!(ck = topoml_ckpt_open(NULL, err, sizeof(err)))) {
			fprintf(stderr, "train_c: %s\n", err);
			return 1;
		}
		if (topoml_ckpt_resume_step(ck) >= 0) {
			snprintf(p, sizeof(p), "%s/state",
				 topoml_ckpt_resume_path(ck));
			if (!(f = fopen(p, "r")) ||
			    fscanf(f, "%ld %" SCNx64 " %" SCNx64, &step, &st.x,
				   &st.sum) != 3) {
				fprintf(stderr, "train_c: bad checkpoint %s\n",
					p);
				return 1;
			}
			fclose(f);
		}
	}
	snprintf(line, sizeof(line), "restart %s from %ld\n", restart, step);
	_append(rdir, "runs", line);
	printf("start %s", line);
	fflush(stdout);
	while (step < steps) {
		step++;
		_advance(&st, step);
		if (ms)
			nanosleep(&ts, NULL);
		if (ck && topoml_ckpt_should_checkpoint(ck, step)) {
			const char *d = topoml_ckpt_begin(ck, step);
			int rc;

			if (!d) {
				perror("train_c: begin");
				return 1;
			}
			snprintf(p, sizeof(p), "%s/state", d);
			if (!(f = fopen(p, "w")))
				return 1;
			fprintf(f, "%ld %" PRIx64 " %" PRIx64 "\n", step, st.x,
				st.sum);
			fclose(f);
			rc = topoml_ckpt_commit(ck);
			if (rc < 0) {
				fprintf(stderr, "train_c: commit step %ld: "
					"%s\n", step, strerror(errno));
				return 3;
			}
			printf("ckpt step=%ld%s\n", step,
			       rc == TOPOML_CKPT_STOP ? " stop" : "");
			fflush(stdout);
			if (rc == TOPOML_CKPT_STOP) {
				snprintf(line, sizeof(line), "stop %s at %ld\n",
					 restart, step);
				_append(rdir, "runs", line);
				return 0;
			}
		}
	}
	snprintf(line, sizeof(line), "final steps=%ld state=%016" PRIx64
		 "%016" PRIx64 "\n", step, st.x, st.sum);
	printf("%s", line);
	if (rdir) {
		snprintf(p, sizeof(p), "result.%s", restart);
		_append(rdir, p, line);
	}
	topoml_ckpt_close(ck);
	return 0;
}
