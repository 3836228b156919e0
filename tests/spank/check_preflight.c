/*
 * --ml-preflight (issue 32 item 1): the judge of a node against
 * what it should have, on the synthetic 4-GPU, 2-HCA server of
 * tests/fixtures/spank (mlx5_1's port 1 down when slurmd described it);
 * the same end to end through the fake NVML and a copy of the fake sysfs
 * with each fault injected; sysfs's rate parser; the option and its
 * plugstack.conf keys; full's judge against the job's median and its
 * ring on loopback.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ml.h"
#include "preflight.h"

static char _fix[4096], _fake[4096];

static void _paths(void)
{
	const char *t = getenv("TESTS_DIR"), *b = getenv("TOP_BUILDDIR");

	snprintf(_fix, sizeof(_fix), "%s/fixtures/spank", t ? t : ".");
	snprintf(_fake, sizeof(_fake), "%s/tests/spank/fakenvml.so",
		 b ? b : "..");
}

/* The node as slurmd describes it: XML, then the fixture's ports. */
static struct hw_node *_node(void)
{
	char xml[4200], sys[4200], err[512];
	struct hw_node *n = hw_node_new();
	hwloc_topology_t t;

	snprintf(xml, sizeof(xml), "%s/hwloc/synth-2s4g2n.xml", _fix);
	snprintf(sys, sizeof(sys), "%s/sysfs", _fix);
	t = hw_hwloc_load(xml, err, sizeof(err));
	ck_assert_msg(t != NULL, "%s", err);
	ck_assert_int_eq(hw_node_from_hwloc(n, t, err, sizeof(err)), 0);
	hwloc_topology_destroy(t);
	hw_ib_sysfs(n, sys, err, sizeof(err));
	hw_ib_default_ports(n);
	ck_assert_int_eq(n->ngpus, 4);
	return n;
}

/* A healthy reading of that node: 4 GPUs, 12 links up each, its ports
 * active at 200 Gb/s (mlx5_1 port 1 down, as slurmd saw it). */
struct reading {
	struct hw_gpu_health g[4];
	struct hw_port_health p[3];
	struct ml_pf_input in;
	char why[1024];
};

static void _healthy(struct reading *r, const struct hw_node *n)
{
	static const char *const bus[] = { "0000:12:00.0", "0000:13:00.0",
					   "0000:22:00.0", "0000:23:00.0" };
	static const struct { const char *hca; int port, state; } p[] = {
		{ "mlx5_0", 1, 4 }, { "mlx5_1", 1, 1 }, { "mlx5_1", 2, 4 },
	};

	memset(r, 0, sizeof(*r));
	for (int i = 0; i < 4; i++) {
		snprintf(r->g[i].busid, sizeof(r->g[i].busid), "%s", bus[i]);
		r->g[i].index = i;
		r->g[i].retire_pending = -1;
		r->g[i].remap_pending = r->g[i].remap_failed = 0;
		r->g[i].clocks = 0x1;		/* idle */
		r->g[i].links = r->g[i].links_up = 12;
	}
	for (int i = 0; i < 3; i++) {
		snprintf(r->p[i].hca, sizeof(r->p[i].hca), "%s", p[i].hca);
		r->p[i].port = p[i].port;
		r->p[i].state = p[i].state;
		r->p[i].link_layer = HW_LL_IB;
		r->p[i].rate = 200000;
		snprintf(r->p[i].rate_text, sizeof(r->p[i].rate_text),
			 "200 Gb/sec (4X HDR)");
	}
	r->in = (struct ml_pf_input){ .node = n, .gpus = r->g, .ngpus = 4,
				      .ports = r->p, .nports = 3,
				      .ib_rate = -1 };
}

static int _judge(struct reading *r)
{
	return ml_preflight_judge(&r->in, r->why, sizeof(r->why));
}

#define WHY(r, s) ck_assert_msg(strstr((r)->why, s), "want '%s' in '%s'", \
				s, (r)->why)

START_TEST(judge_healthy)
{
	struct hw_node *n = _node();
	struct reading r;

	_healthy(&r, n);
	ck_assert_msg(_judge(&r) == 0, "%s", r.why);
	ck_assert_str_eq(r.why, "");
	/* unknown counters (no ECC, no page retirement) are no fault */
	r.g[1].ecc_unc = -1;
	r.g[1].clocks = -1;
	r.g[1].remap_pending = -1;
	ck_assert_msg(_judge(&r) == 0, "%s", r.why);
	/* no NVLink at all (PCIe cards): no fault either */
	for (int i = 0; i < 4; i++)
		r.g[i].links = r.g[i].links_up = 0;
	ck_assert_msg(_judge(&r) == 0, "%s", r.why);
	hw_node_free(n);
}
END_TEST

/* The root-side faults: node-wide, whatever the job's GPUs; none of
 * what load, the job or a hidden GPU can make. */
START_TEST(root_faults)
{
	struct hw_node *n = _node();
	struct reading r;

	_healthy(&r, n);
	ck_assert_uint_eq(ml_preflight_root_faults(&r.in), 0);
	/* a fault on a GPU the step was not given still counts */
	r.in.slurm_gpus = "0";
	r.g[3].ecc_unc = 2;
	ck_assert_int_eq(_judge(&r), 0);
	ck_assert_uint_eq(ml_preflight_root_faults(&r.in), ML_PF_ROOT_ECC);
	r.in.slurm_gpus = NULL;
	r.g[1].retire_pending = 1;
	ck_assert_uint_eq(ml_preflight_root_faults(&r.in),
			  ML_PF_ROOT_ECC | ML_PF_ROOT_PAGES);
	/* NVML failing: nothing of the GPUs counts */
	r.in.nvml_err = "not loaded";
	ck_assert_uint_eq(ml_preflight_root_faults(&r.in), 0);
	_healthy(&r, n);
	r.g[0].remap_failed = 1;
	ck_assert_uint_eq(ml_preflight_root_faults(&r.in), ML_PF_ROOT_PAGES);
	/* thermal clocks, fewer NVLink links, a GPU NVML does not see:
	 * failing, but not root-side */
	_healthy(&r, n);
	r.g[0].clocks = HW_CLOCKS_HW_THERMAL;
	r.g[1].links_up = 4;
	r.g[2] = r.g[3];
	r.in.ngpus = 3;
	ck_assert_int_ge(_judge(&r), 3);
	ck_assert_uint_eq(ml_preflight_root_faults(&r.in), 0);
	/* ports: one up at slurmd's look now DOWN counts; one training, a
	 * slow one, or one already down when slurmd looked do not */
	_healthy(&r, n);
	r.p[0].state = 1;
	ck_assert_uint_eq(ml_preflight_root_faults(&r.in), ML_PF_ROOT_PORT);
	r.p[0].state = 2;
	r.p[2].rate = 100000;
	ck_assert_int_ge(_judge(&r), 1);
	ck_assert_uint_eq(ml_preflight_root_faults(&r.in), 0);
	_healthy(&r, n);
	r.p[1].state = 1;
	ck_assert_uint_eq(ml_preflight_root_faults(&r.in), 0);
	hw_node_free(n);
}
END_TEST

START_TEST(judge_gpu_faults)
{
	struct hw_node *n = _node();
	struct reading r;

	_healthy(&r, n);
	r.g[2] = r.g[3];		/* GPU 2 fell off the bus */
	r.in.ngpus = 3;
	ck_assert_int_eq(_judge(&r), 1);
	WHY(&r, "GPU 2 (0000:22:00.0) missing: NVML sees 3 of the node's 4 "
	    "GPUs");

	_healthy(&r, n);
	r.g[1].ecc_unc = 3;
	ck_assert_int_eq(_judge(&r), 1);
	ck_assert_str_eq(r.why, "GPU 1 (0000:13:00.0) has 3 uncorrectable "
			 "ECC errors");

	_healthy(&r, n);
	r.g[0].retire_pending = 1;
	r.g[3].remap_pending = 1;
	ck_assert_int_eq(_judge(&r), 2);
	WHY(&r, "GPU 0 (0000:12:00.0) has retired pages pending");
	WHY(&r, "; GPU 3 (0000:23:00.0) has a row remapping pending");

	_healthy(&r, n);
	r.g[3].clocks = 0x1 | HW_CLOCKS_HW_THERMAL | HW_CLOCKS_HW_POWER_BRAKE;
	ck_assert_int_eq(_judge(&r), 1);
	ck_assert_str_eq(r.why, "GPU 3 (0000:23:00.0) clocks held down "
			 "(hardware thermal slowdown, power brake)");
	/* a power cap or application clocks are the site's choice */
	r.g[3].clocks = 0x1 | 0x2 | 0x4;
	ck_assert_msg(_judge(&r) == 0, "%s", r.why);

	_healthy(&r, n);
	r.g[3].links_up = 0;
	ck_assert_int_eq(_judge(&r), 1);
	ck_assert_str_eq(r.why, "GPU 3 (0000:23:00.0) has 0 of 12 NVLink "
			 "links up (the node's best GPU 12)");

	_healthy(&r, n);
	r.in.nvml_err = "nvmlInit: Driver Not Loaded (driver not loaded)";
	ck_assert_int_eq(_judge(&r), 1);
	WHY(&r, "NVML: nvmlInit: Driver Not Loaded");

	_healthy(&r, n);
	r.g[3].lost = 15;
	r.g[3].busid[0] = '\0';
	ck_assert_int_eq(_judge(&r), 2);
	WHY(&r, "NVML device 3: GPU is lost");
	WHY(&r, "GPU 3 (0000:23:00.0) missing");
	hw_node_free(n);
}
END_TEST

/* Slurm's GPUs for the step: only they are checked, and must exist. */
START_TEST(judge_slurm_gpus)
{
	struct hw_node *n = _node();
	struct reading r;

	_healthy(&r, n);
	r.g[3].ecc_unc = 1;
	r.in.slurm_gpus = "0,1";
	ck_assert_msg(_judge(&r) == 0, "%s", r.why);
	r.in.slurm_gpus = "2,3";
	ck_assert_int_eq(_judge(&r), 1);
	WHY(&r, "GPU 3 (0000:23:00.0) has 1 uncorrectable ECC error");
	r.in.slurm_gpus = "0,1,2,3,4";
	ck_assert_int_eq(_judge(&r), 1);
	ck_assert_str_eq(r.why, "Slurm gave the step GPUs 0,1,2,3,4, the "
			 "node has 4");
	hw_node_free(n);
}
END_TEST

START_TEST(judge_ports)
{
	struct hw_node *n = _node();
	struct reading r;

	_healthy(&r, n);
	r.p[0].state = 1;
	ck_assert_int_eq(_judge(&r), 1);
	ck_assert_str_eq(r.why, "HCA mlx5_0 port 1 is DOWN");

	/* auto: below the node's fastest InfiniBand port */
	_healthy(&r, n);
	r.p[2].rate = 100000;
	snprintf(r.p[2].rate_text, sizeof(r.p[2].rate_text),
		 "100 Gb/sec (4X EDR)");
	ck_assert_int_eq(_judge(&r), 1);
	ck_assert_str_eq(r.why, "HCA mlx5_1 port 2 runs at 100 Gb/sec (4X "
			 "EDR), below 200 Gb/s");
	/* the site's floor instead, and off */
	r.in.ib_rate = 100000;
	ck_assert_msg(_judge(&r) == 0, "%s", r.why);
	r.in.ib_rate = 400000;
	ck_assert_int_eq(_judge(&r), 2);
	WHY(&r, "HCA mlx5_0 port 1 runs at 200 Gb/sec (4X HDR), below 400 "
	    "Gb/s");
	r.in.ib_rate = 0;
	ck_assert_msg(_judge(&r) == 0, "%s", r.why);

	/* a port down when slurmd started (not cabled) is not expected */
	_healthy(&r, n);
	r.p[1].state = 2;
	ck_assert_msg(_judge(&r) == 0, "%s", r.why);
	/* an HCA gone from sysfs: its ports unreadable */
	r.p[2].state = 0;
	ck_assert_int_eq(_judge(&r), 1);
	ck_assert_str_eq(r.why, "HCA mlx5_1 port 2 is unreadable");
	hw_node_free(n);
}
END_TEST

/* Many faults: the line is cut, never overrun. */
START_TEST(judge_cut)
{
	struct hw_node *n = _node();
	struct reading r;
	char small[40];

	_healthy(&r, n);
	for (int i = 0; i < 4; i++) {
		r.g[i].ecc_unc = 9;
		r.g[i].retire_pending = 1;
	}
	ck_assert_int_eq(ml_preflight_judge(&r.in, small, sizeof(small)), 8);
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
	ck_assert_str_eq(small + sizeof(small) - 4, "...");
	ck_assert_int_eq(ml_preflight_judge(&r.in, NULL, 0), 8);
	hw_node_free(n);
}
END_TEST

START_TEST(rate_parse)
{
	static const struct { const char *s; long v; } ok[] = {
		{ "200 Gb/sec (4X HDR)", 200000 }, { "2.5 Gb/sec (1X SDR)", 2500 },
		{ "53.125 Gb/sec (1X HDR)", 53125 }, { "400 Gb/sec", 400000 },
	};
	static const char *const bad[] = {
		"", "Gb/sec", "200", "200 Gb/s", "200 Gb/secx", ".5 Gb/sec",
		"2. Gb/sec", "1.0001 Gb/sec", "12345678 Gb/sec", "-1 Gb/sec",
		"200 Gb/sec(4X)",
	};
	long v;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ck_assert_msg(!hw_ib_rate_parse(ok[i].s, &v), "%s", ok[i].s);
		ck_assert_int_eq(v, ok[i].v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(hw_ib_rate_parse(bad[i], &v) == -1, "'%s'",
			      bad[i]);
	ck_assert_int_eq(hw_ib_rate_parse(NULL, &v), -1);
}
END_TEST

/* A copy of the fixture's sysfs with rate files, under a temp dir. */
static void _sysfs_copy(char *dir, size_t len)
{
	char cmd[9000];

	snprintf(dir, len, "/tmp/topoml-pf.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp -r '%s/sysfs/.' '%s' && for f in "
		 "'%s'/class/infiniband/*/ports/*; do echo '200 Gb/sec (4X "
		 "HDR)' >\"$f/rate\"; done", _fix, dir, dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void _put(const char *dir, const char *file, const char *text)
{
	char p[4400];
	FILE *f;

	snprintf(p, sizeof(p), "%s/class/infiniband/%s", dir, file);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fprintf(f, "%s\n", text);
	fclose(f);
}

/* ml_preflight_quick through the fake NVML and the sysfs copy. */
START_TEST(quick_end_to_end)
{
	static const struct { const char *fault, *why; } f[] = {
		{ "missing=2", "GPU 2 (0000:22:00.0) missing: NVML sees 3" },
		{ "ecc=1:2", "GPU 1 (0000:13:00.0) has 2 uncorrectable ECC "
		  "errors" },
		{ "retire=0", "GPU 0 (0000:12:00.0) has retired pages" },
		{ "remap=3", "GPU 3 (0000:23:00.0) has a row remapping" },
		{ "thermal=3", "GPU 3 (0000:23:00.0) clocks held down "
		  "(hardware thermal slowdown)" },
		{ "power=0", "clocks held down (power brake)" },
		{ "nvlink=1", "GPU 1 (0000:13:00.0) has 0 of 12 NVLink" },
		{ "lost=2", "NVML device 2: GPU is lost" },
	};
	struct hw_node *n = _node();
	char dir[64], why[1024], cmd[200];
	struct ml_conf c;

	if (access(_fake, R_OK)) {
		hw_node_free(n);
		return;		/* built with the tests: make check */
	}
	_sysfs_copy(dir, sizeof(dir));
	ml_conf_init(&c);
	snprintf(c.nvml_lib, sizeof(c.nvml_lib), "%s", _fake);
	snprintf(c.sysfs_root, sizeof(c.sysfs_root), "%s", dir);
	setenv("FAKE_NVML", "nvswitch8", 1);
	unsetenv("FAKE_NVML_BUSIDS");
	unsetenv("FAKE_NVML_FAULTS_FILE");
	unsetenv("FAKE_NVML_FAULTS");
	ck_assert_msg(ml_preflight_quick(&c, n, "", why, sizeof(why)) == 0,
		      "%s", why);
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		setenv("FAKE_NVML_FAULTS", f[i].fault, 1);
		ck_assert_int_ge(ml_preflight_quick(&c, n, NULL, why,
						    sizeof(why)), 1);
		ck_assert_msg(strstr(why, f[i].why), "%s: want '%s' in '%s'",
			      f[i].fault, f[i].why, why);
	}
	unsetenv("FAKE_NVML_FAULTS");
	_put(dir, "mlx5_0/ports/1/state", "1: DOWN");
	ck_assert_int_eq(ml_preflight_quick(&c, n, NULL, why, sizeof(why)), 1);
	ck_assert_str_eq(why, "HCA mlx5_0 port 1 is DOWN");
	_put(dir, "mlx5_0/ports/1/state", "4: ACTIVE");
	_put(dir, "mlx5_1/ports/2/rate", "100 Gb/sec (2X HDR)");
	ck_assert_int_eq(ml_preflight_quick(&c, n, NULL, why, sizeof(why)), 1);
	ck_assert_str_eq(why, "HCA mlx5_1 port 2 runs at 100 Gb/sec (2X HDR), "
			 "below 200 Gb/s");
	/* no NVML on a node with NVIDIA GPUs */
	snprintf(c.nvml_lib, sizeof(c.nvml_lib), "/nonexistent/libnvml.so");
	ck_assert_int_eq(ml_preflight_quick(&c, n, NULL, why, sizeof(why)), 2);
	ck_assert_ptr_nonnull(strstr(why, "NVML: NVML not available"));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	hw_node_free(n);
}
END_TEST

START_TEST(option_and_keys)
{
	char *av[4], err[512];
	struct ml_conf c;
	int v;

	ml_conf_init(&c);
	ck_assert_int_eq(c.def[ML_OPT_PREFLIGHT], ML_PREFLIGHT_OFF);
	ck_assert_int_eq(c.pf_ib_rate, -1);
	ck_assert_str_eq(ml_opt_name(ML_OPT_PREFLIGHT), "ml-preflight");
	ck_assert_str_eq(ml_opt_env(ML_OPT_PREFLIGHT), "TOPOML_PREFLIGHT");
	ck_assert_str_eq(ml_opt_arginfo(ML_OPT_PREFLIGHT), "quick|full|off");
	ck_assert_int_eq(ml_opt_parse(&c, ML_OPT_PREFLIGHT, "quick", &v, err,
				      sizeof(err)), 0);
	ck_assert_int_eq(v, ML_PREFLIGHT_QUICK);
	ck_assert_int_eq(ml_opt_parse(&c, ML_OPT_PREFLIGHT, "full", &v, err,
				      sizeof(err)), 0);
	ck_assert_int_eq(v, ML_PREFLIGHT_FULL);
	ck_assert_int_eq(ml_opt_parse(&c, ML_OPT_PREFLIGHT, "slow", &v, err,
				      sizeof(err)), -1);
	ck_assert_int_eq(c.pf_requeue, 2);
	ck_assert(c.pf_outlier == 1.3 && c.pf_ring_outlier == 2.0);
	ck_assert_int_eq(c.pf_ring_mb, 32);
	av[0] = "preflight_requeue=0";
	av[1] = "preflight_outlier=1.5";
	av[2] = "preflight_ring_outlier=3";
	av[3] = "preflight_ring_mb=8";
	ck_assert_msg(!ml_conf_parse(&c, 4, av, err, sizeof(err)), "%s", err);
	ck_assert_int_eq(c.pf_requeue, 0);
	ck_assert(c.pf_outlier == 1.5 && c.pf_ring_outlier == 3.0);
	ck_assert_int_eq(c.pf_ring_mb, 8);
	for (int i = 0; i < 7; i++) {
		static const char *const bad[] = {
			"preflight_outlier=1", "preflight_outlier=1.5x",
			"preflight_outlier=nan", "preflight_ring_outlier=",
			"preflight_ring_mb=0", "preflight_requeue=-1",
			"preflight_requeue=101",
		};

		av[0] = (char *)bad[i];
		ck_assert_msg(ml_conf_parse(&c, 1, av, err, sizeof(err)) == -1,
			      "%s accepted", bad[i]);
	}
	ml_conf_init(&c);

	av[0] = "default_preflight=quick";
	av[1] = "allowed_preflight=quick";
	av[2] = "preflight_ib_rate=200";
	ck_assert_msg(!ml_conf_parse(&c, 3, av, err, sizeof(err)), "%s", err);
	ck_assert_int_eq(c.def[ML_OPT_PREFLIGHT], ML_PREFLIGHT_QUICK);
	ck_assert_int_eq(c.pf_ib_rate, 200000);
	ck_assert_int_eq(ml_opt_parse(&c, ML_OPT_PREFLIGHT, "off", &v, err,
				      sizeof(err)), -1);
	ck_assert_str_eq(err, "'off' is not allowed on this cluster "
			 "(allowed: quick)");
	av[0] = "preflight_ib_rate=off";
	ck_assert_msg(!ml_conf_parse(&c, 1, av, err, sizeof(err)), "%s", err);
	ck_assert_int_eq(c.pf_ib_rate, 0);
	av[0] = "preflight_ib_rate=auto";
	ck_assert_msg(!ml_conf_parse(&c, 1, av, err, sizeof(err)), "%s", err);
	ck_assert_int_eq(c.pf_ib_rate, -1);
	av[0] = "preflight_ib_rate=0";
	ck_assert_int_eq(ml_conf_parse(&c, 1, av, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "preflight_ib_rate: invalid value '0'");
	av[0] = "default_preflight=full";
	ck_assert_int_eq(ml_conf_parse(&c, 1, av, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "default_preflight=full is not in "
			 "allowed_preflight");
	ml_conf_init(&c);
	av[0] = "default_preflight=quick";
	av[1] = "allowed_preflight=off";
	ck_assert_int_eq(ml_conf_parse(&c, 2, av, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "default_preflight=quick is not in "
			 "allowed_preflight");
}
END_TEST

/* --ml-preflight=full's judge: a node 1.5x slower than the job's median
 * is named with the default limit, one at 1.2x is not; its two ring
 * streams slow name it, one slow link does not; fewer than 3 nodes,
 * nothing to compare. */
START_TEST(ring_judge)
{
	static const char *const names[] = { "n1", "n2", "n3", "n4", "n5" };
	struct ml_pf_rec r[5];
	struct ml_conf c;
	char why[512];

	ml_conf_init(&c);
	for (int i = 0; i < 5; i++)
		r[i] = (struct ml_pf_rec){ 50000, 1000000, true };
	ck_assert_int_eq(ml_pf_ring_judge(r, 5, 2, names, c.pf_outlier,
					  c.pf_ring_outlier, why,
					  sizeof(why)), 0);
	r[2].probe_us = 75000;
	ck_assert_int_eq(ml_pf_ring_judge(r, 5, 2, names, c.pf_outlier,
					  c.pf_ring_outlier, why,
					  sizeof(why)), 1);
	ck_assert_str_eq(why, "compute probe 75.0 ms, 1.50x the job's median "
			 "50.0 ms");
	for (int i = 0; i < 5; i++)
		if (i != 2)
			ck_assert_int_eq(ml_pf_ring_judge(r, 5, i, names,
							  c.pf_outlier,
							  c.pf_ring_outlier,
							  why, sizeof(why)), 0);
	r[2].probe_us = 60000;
	ck_assert_int_eq(ml_pf_ring_judge(r, 5, 2, names, c.pf_outlier,
					  c.pf_ring_outlier, why,
					  sizeof(why)), 0);
	/* n3's streams in (from n2) and out (n4 receives it) slow */
	r[2].bw_kbs = 400000;
	ck_assert_int_eq(ml_pf_ring_judge(r, 5, 2, names, c.pf_outlier,
					  c.pf_ring_outlier, why,
					  sizeof(why)), 0);
	r[3].bw_kbs = 450000;
	ck_assert_int_eq(ml_pf_ring_judge(r, 5, 2, names, c.pf_outlier,
					  c.pf_ring_outlier, why,
					  sizeof(why)), 1);
	ck_assert_str_eq(why, "ring stream from n2 400 MB/s, to n4 450 MB/s, "
			 "the job's median 1000 MB/s");
	/* n4: one slow link in, a fast one out: not n4's */
	ck_assert_int_eq(ml_pf_ring_judge(r, 5, 3, names, c.pf_outlier,
					  c.pf_ring_outlier, why,
					  sizeof(why)), 0);
	r[2].probe_us = 200000;
	ck_assert_int_eq(ml_pf_ring_judge(r, 5, 2, names, c.pf_outlier,
					  c.pf_ring_outlier, why,
					  sizeof(why)), 2);
	ck_assert_int_eq(ml_pf_ring_judge(r, 2, 1, names, c.pf_outlier,
					  c.pf_ring_outlier, why,
					  sizeof(why)), 0);
	r[2].known = false;
	ck_assert_int_eq(ml_pf_ring_judge(r, 5, 2, names, c.pf_outlier,
					  c.pf_ring_outlier, why,
					  sizeof(why)), 0);
}
END_TEST

/*
 * The ring itself on loopback: N processes, node i on 127.0.0.(i+1), one
 * port.  Each gets every other node's probe and a stream rate.  With a
 * node missing, the others end at the timeout with what they have.
 */
static int _ring(int n, int absent, int port, int timeout_ms, int *ok)
{
	static const char *const names[] = { "a", "b", "c", "d", "e" };
	static const char *const addr[] = { "127.0.0.1", "127.0.0.2",
					    "127.0.0.3", "127.0.0.4",
					    "127.0.0.5" };
	pid_t pid[5];

	for (int i = 0; i < n; i++) {
		if (i == absent)
			continue;
		if ((pid[i] = fork()) == 0) {
			struct ml_pf_rec recs[5] = { { 0 } };
			struct ml_pf_ring r = {
				.n = n, .me = i, .names = names,
				.addr = addr, .port = port, .jobid = 7,
				.stepid = 3, .bytes = 1 << 20,
				.timeout_ms = timeout_ms,
				.privileged = geteuid() == 0,
			};
			char err[512];
			int k, good = 1;

			recs[i].probe_us = 1000 * (i + 1);
			k = ml_pf_ring_run(&r, recs, err, sizeof(err));
			for (int j = 0; j < n; j++)
				if (j != absent && (!recs[j].known ||
				    recs[j].probe_us != 1000 * (j + 1) ||
				    recs[j].bw_kbs <= 0))
					good = 0;
			if (absent >= 0)
				_exit(k < n - 1 && err[0] ? 0 : 1);
			_exit(k == n - 1 && good && !err[0] ? 0 : 1);
		}
	}
	*ok = 0;
	for (int i = 0; i < n; i++) {
		int st;

		if (i == absent)
			continue;
		waitpid(pid[i], &st, 0);
		*ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	return n - (absent >= 0);
}

START_TEST(ring_loopback)
{
	int port = 20000 + getpid() % 20000, ok, want;

	want = _ring(4, -1, port, 5000, &ok);
	ck_assert_int_eq(ok, want);
	want = _ring(3, -1, port + 1, 5000, &ok);
	ck_assert_int_eq(ok, want);
	want = _ring(4, 2, port + 2, 400, &ok);
	ck_assert_int_eq(ok, want);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("preflight");
	TCase *tc = tcase_create("quick");
	SRunner *sr;
	int nf;

	_paths();
	tcase_add_test(tc, judge_healthy);
	tcase_add_test(tc, judge_gpu_faults);
	tcase_add_test(tc, root_faults);
	tcase_add_test(tc, judge_slurm_gpus);
	tcase_add_test(tc, judge_ports);
	tcase_add_test(tc, judge_cut);
	tcase_add_test(tc, rate_parse);
	tcase_add_test(tc, quick_end_to_end);
	tcase_add_test(tc, option_and_keys);
	tcase_add_test(tc, ring_judge);
	tcase_add_test(tc, ring_loopback);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
