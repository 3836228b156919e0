/*
 * --ml-parallel=auto[,model=FILE] (issue 34 item 2), without Slurm: the
 * model file's parser (file:line errors), the option's value, reading a
 * user's file (no symlink, no FIFO, bounded), the planner's choice on a
 * step's allocation against topoml plan's own search, the memory and
 * NVLink-domain verdicts.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ml.h"
#include "secure.h"
#include "topoml/plan.h"
#include "sim.h"

static const char small[] =
	"# a 1.3B GPT\n"
	"layers = 24\n"
	"hidden=2048\n"
	"  heads = 16   # attention heads\n"
	"\n"
	"seq = 2048\n"
	"batch = 64\n"
	"gpu = h100\n";
static const char gpt175[] = "layers=96\nhidden=12288\nheads=96\n"
			     "seq=2048\nbatch=1536\n";

/* the parse of text as file "m.txt": 0, or -1 with why */
static int _parse(const char *text, struct topoml_plan_spec *s, char *why,
		  size_t whylen)
{
	topoml_plan_spec_init(s);
	return topoml_plan_spec_parse(s, text, strlen(text), "m.txt", why,
				      whylen);
}

START_TEST(spec_file)
{
	struct topoml_plan_spec s;
	struct topoml_plan_machine mc;
	char why[512];

	ck_assert_int_eq(_parse(small, &s, why, sizeof(why)), 0);
	ck_assert_int_eq(s.model.layers, 24);
	ck_assert_int_eq(s.model.hidden, 2048);
	ck_assert_int_eq(s.model.heads, 16);
	ck_assert_str_eq(s.gpu, "h100");
	ck_assert_int_eq(topoml_plan_spec_finish(&s, &mc, why, sizeof(why)),
			 0);
	ck_assert_int_eq(s.model.ffn, 4 * 2048);
	ck_assert_int_eq(s.model.param_bytes, 2);
	ck_assert_int_eq(s.model.opt_bytes, 12);

	/* every mistake names the file and the line */
	ck_assert_int_eq(_parse("layers = 2\nfoo = 3\n", &s, why,
				sizeof(why)), -1);
	ck_assert_str_eq(why, "m.txt:2: unknown key 'foo'");
	ck_assert_int_eq(_parse("layers = 2\n\n# c\nhidden = x1\n", &s, why,
				sizeof(why)), -1);
	ck_assert_msg(!strncmp(why, "m.txt:4: hidden: 'x1' is not", 28), "%s",
		      why);
	ck_assert_int_eq(_parse("layers = 2\nlayers = 3\n", &s, why,
				sizeof(why)), -1);
	ck_assert_str_eq(why, "m.txt:2: layers given twice");
	ck_assert_int_eq(_parse("layers 2\n", &s, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "m.txt:1: 'layers 2': expected key = value");
	ck_assert_int_eq(_parse("layers =\n", &s, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "m.txt:1: expected key = value");
	ck_assert_int_eq(_parse("x = 1\x1b[2J\n", &s, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "m.txt:1: a control or non-ASCII character");
	ck_assert_int_eq(_parse("zero1 = maybe\n", &s, why, sizeof(why)),
			 -1);
	ck_assert_str_eq(why, "m.txt:1: zero1: 'maybe' is not yes or no");
	ck_assert_int_eq(_parse("precision = fp8\n", &s, why, sizeof(why)),
			 -1);
	ck_assert_int_eq(_parse("bw = nvlink=0\n", &s, why, sizeof(why)), -1);
	ck_assert_msg(!strncmp(why, "m.txt:1: nvlink:", 16), "%s", why);
	ck_assert_int_eq(topoml_plan_spec_parse(&s, "\0", 1, "m.txt", why,
						sizeof(why)), -1);
	ck_assert_str_eq(why, "m.txt:1: a NUL byte");

	/* a file that parses but is no model */
	ck_assert_int_eq(_parse("layers = 2\n", &s, why, sizeof(why)), 0);
	ck_assert_int_eq(topoml_plan_spec_finish(&s, &mc, why, sizeof(why)),
			 -1);
	ck_assert_str_eq(why, "layers, hidden, heads, seq and batch are "
			 "required");
	ck_assert_int_eq(_parse("layers=2\nhidden=100\nheads=3\nseq=8\n"
				"batch=8\n", &s, why, sizeof(why)), 0);
	ck_assert_int_eq(topoml_plan_spec_finish(&s, &mc, why, sizeof(why)),
			 -1);
	ck_assert_str_eq(why, "hidden 100 is not a multiple of heads 3");
	ck_assert_int_eq(_parse("layers=2\nhidden=96\nheads=3\nseq=8\n"
				"batch=8\ngpu=tpu\n", &s, why, sizeof(why)),
			 0);
	ck_assert_int_eq(topoml_plan_spec_finish(&s, &mc, why, sizeof(why)),
			 -1);
	ck_assert_str_eq(why, "gpu: unknown 'tpu'");
}
END_TEST

START_TEST(option_value)
{
	struct ml_par_opt o;
	char err[256];

	ck_assert_int_eq(ml_par_parse("auto", &o, err, sizeof(err)), 0);
	ck_assert(o.automatic);
	ck_assert_str_eq(o.model, "");
	ck_assert_int_eq(ml_par_parse("auto,model=/p/a,b.txt", &o, err,
				      sizeof(err)), 0);
	ck_assert(o.automatic);
	ck_assert_str_eq(o.model, "/p/a,b.txt");
	ck_assert_int_eq(ml_par_parse("tp=2,pp=4,model=m.txt", &o, err,
				      sizeof(err)), 0);
	ck_assert(!o.automatic);
	ck_assert_int_eq(o.par.tp, 2);
	ck_assert_int_eq(o.par.pp, 4);
	ck_assert_str_eq(o.model, "m.txt");
	ck_assert_int_eq(ml_par_parse("tp=2", &o, err, sizeof(err)), 0);
	ck_assert_str_eq(o.model, "");
	ck_assert_int_eq(ml_par_parse("model=m.txt", &o, err, sizeof(err)),
			 -1);
	ck_assert_int_eq(ml_par_parse("auto,model=", &o, err, sizeof(err)),
			 -1);
	ck_assert_int_eq(ml_par_parse("auto,tp=2", &o, err, sizeof(err)), -1);
	ck_assert_int_eq(ml_par_parse("automatic", &o, err, sizeof(err)), -1);
}
END_TEST

START_TEST(model_read)
{
	char dir[] = "/tmp/check_par.XXXXXX", p[256], q[256], err[256];
	struct ml_cred me = { .uid = geteuid(), .gid = getegid(), .ngids = 1,
			      .gids = { getegid() } };
	char *text, *big;
	size_t len;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/m.txt", dir);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, small, strlen(small)), (int)strlen(small));
	close(fd);
	ck_assert_int_eq(ml_model_read(p, &me, &text, &len, err, sizeof(err)), 0);
	ck_assert_uint_eq(len, strlen(small));
	ck_assert_str_eq(text, small);
	free(text);
	/* a symlink is not followed (root reads what the user points at) */
	snprintf(q, sizeof(q), "%s/link", dir);
	ck_assert_int_eq(symlink(p, q), 0);
	ck_assert_int_eq(ml_model_read(q, &me, &text, &len, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "a symbolic link (not followed)");
	unlink(q);
	/* a FIFO: refused, not waited on */
	ck_assert_int_eq(mkfifo(q, 0600), 0);
	ck_assert_int_eq(ml_model_read(q, &me, &text, &len, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "not a regular file");
	unlink(q);
	ck_assert_int_eq(ml_model_read(dir, &me, &text, &len, err, sizeof(err)),
			 -1);
	/* bounded */
	big = calloc(1, TOPOML_PLAN_FILE_MAX + 1);
	ck_assert_ptr_nonnull(big);
	memset(big, '#', TOPOML_PLAN_FILE_MAX + 1);
	fd = open(q, O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_eq(write(fd, big, TOPOML_PLAN_FILE_MAX + 1),
			 TOPOML_PLAN_FILE_MAX + 1);
	close(fd);
	free(big);
	ck_assert_int_eq(ml_model_read(q, &me, &text, &len, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "larger than"), "%s", err);
	unlink(q);
	snprintf(q, sizeof(q), "%s/none", dir);
	ck_assert_int_eq(ml_model_read(q, &me, &text, &len, err, sizeof(err)), -1);
	ck_assert_str_eq(err, strerror(ENOENT));
	unlink(p);
	rmdir(dir);
}
END_TEST

/* topoml plan's own choice: --nodes N --gpus-per-node G --model small */
static struct topoml_parallel _cli_choice(int nnodes, int gpn)
{
	struct topoml_plan_spec s;
	struct topoml_plan_machine mc;
	struct topoml_plan best;
	struct topoml_plan_ctx *c;
	topoml_topo_t *t;
	char why[512];

	ck_assert_int_eq(_parse(small, &s, why, sizeof(why)), 0);
	ck_assert_int_eq(topoml_plan_spec_finish(&s, &mc, why, sizeof(why)),
			 0);
	mc.gpus_per_node = gpn;
	t = topoml_gen_fat_tree(NULL, nnodes, 32, 0, 0);
	ck_assert_ptr_nonnull(t);
	c = topoml_plan_new(t, nnodes, &mc, why, sizeof(why));
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(topoml_plan_search(c, &s.model, &s.fix, &best, 1,
					    NULL, why, sizeof(why)), 1);
	topoml_plan_free(c);
	topoml_free(t);
	return best.par;
}

START_TEST(auto_layout)
{
	static const int shapes[][2] = { { 8, 2 }, { 1, 8 }, { 4, 8 },
					 { 48, 8 } };
	struct topoml_parallel p, q, want;
	char note[512], err[512];

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		int n = shapes[i][0], g = shapes[i][1];

		ck_assert_msg(!ml_par_auto(small, strlen(small), "m.txt", n,
					   g, &p, note, sizeof(note), err,
					   sizeof(err)), "%s", err);
		want = _cli_choice(n, g);
		ck_assert_int_eq(p.tp, want.tp);
		ck_assert_int_eq(p.pp, want.pp);
		ck_assert_int_eq(p.dp, want.dp);
		ck_assert_int_eq(p.cp, want.cp);
		ck_assert_int_eq(p.ep, want.ep);
		ck_assert_int_eq((long)p.tp * p.pp * p.dp * p.cp, (long)n * g);
		ck_assert_msg(!strncmp(note, "--ml-parallel=auto: tp=", 23) &&
			      strstr(note, "GiB a GPU of") &&
			      strstr(note, "s a step"), "%s", note);
		/* the same inputs on every node: the same layout */
		ck_assert(!ml_par_auto(small, strlen(small), "m.txt", n, g,
				       &q, note, sizeof(note), err,
				       sizeof(err)));
		ck_assert(!memcmp(&p, &q, sizeof(p)));
	}
	/* the file's mistake, with its line */
	ck_assert_int_eq(ml_par_auto("layers = 24\nheads = x\n", 22, "m.txt",
				     2, 2, &p, note, sizeof(note), err,
				     sizeof(err)), -1);
	ck_assert_msg(!strncmp(err, "m.txt:2: heads:", 15), "%s", err);
	/* nothing fits: a 175B model on one 8-GPU node */
	ck_assert_int_eq(ml_par_auto(gpt175, strlen(gpt175), "big.txt", 1, 8,
				     &p, note, sizeof(note), err,
				     sizeof(err)), -1);
	ck_assert_msg(strstr(err, "big.txt: no layout fits"), "%s", err);
}
END_TEST

START_TEST(mem_verdict)
{
	struct topoml_parallel p = { 8, 1, 0, 1, 1 };
	char note[512] = "", err[512];

	/* GPT-175B on 16 GPUs: tp=8 over 2 nodes does not fit 80 GB */
	ck_assert(!topoml_parallel_resolve(&p, 16, err, sizeof(err)));
	ck_assert_int_eq(ml_par_mem(gpt175, strlen(gpt175), "big.txt", 2, 8, &p,
				    note, sizeof(note), err, sizeof(err)), 1);
	ck_assert_msg(strstr(note, "does not fit memory by the estimate for "
			     "big.txt"), "%s", note);
	/* the 1.3B one fits tp=2,pp=8 on 8 x 2 */
	p = (struct topoml_parallel){ 2, 8, 0, 1, 1 };
	ck_assert(!topoml_parallel_resolve(&p, 16, err, sizeof(err)));
	note[0] = '\0';
	ck_assert_int_eq(ml_par_mem(small, strlen(small), "m.txt", 8, 2, &p,
				    note, sizeof(note), err, sizeof(err)), 0);
	ck_assert_str_eq(note, "");
}
END_TEST

START_TEST(tp_split)
{
	const int two[] = { 2, 2, 2, 2 }, three[] = { 3, 3 };
	const int pairs[] = { 0, 0, 1, 1 }, apart[] = { 0, 1, 1, 2 };
	int a, b;

	ck_assert_int_eq(ml_tp_split(two, NULL, 4, 2, &a, &b), -1);
	ck_assert_int_eq(ml_tp_split(two, NULL, 4, 1, &a, &b), -1);
	/* tp=4 at 2 a node: every group on two nodes */
	ck_assert_int_eq(ml_tp_split(two, NULL, 4, 4, &a, &b), 0);
	ck_assert_int_eq(a, 0);
	ck_assert_int_eq(b, 1);
	/* ... in one NVLink domain of two nodes: none split */
	ck_assert_int_eq(ml_tp_split(two, pairs, 4, 4, &a, &b), -1);
	/* domains n1 | n2,n3 | n4: the first group splits */
	ck_assert_int_eq(ml_tp_split(two, apart, 4, 4, &a, &b), 0);
	/* 3 a node, tp=2: ranks 2-3 on both nodes */
	ck_assert_int_eq(ml_tp_split(three, NULL, 2, 2, &a, &b), 2);
	ck_assert_int_eq(a, 0);
	ck_assert_int_eq(b, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("par");
	TCase *t = tcase_create("par");
	SRunner *r;
	int failed;

	tcase_set_timeout(t, 120);
	tcase_add_test(t, spec_file);
	tcase_add_test(t, option_value);
	tcase_add_test(t, model_read);
	tcase_add_test(t, auto_layout);
	tcase_add_test(t, mem_verdict);
	tcase_add_test(t, tp_split);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
