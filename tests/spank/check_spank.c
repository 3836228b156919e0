/*
 * Unit tests of the topoml SPANK plugin's pure parts (spank/node/):
 * plugstack.conf arguments, the option table and option values, hardware
 * model from hwloc XML of real and synthetic GPU servers (expected
 * bindings per machine, mpibind style), a fake NVML, a fake ROCm SMI, a
 * fake sysfs, the NCCL/torch environment, NCCL topology XML.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topoml/jobcomment.h"
#include "ml.h"
#include "sim.h"

static char _fixtures[2048], _realdata[2048], _fake[4096], _fake_nosym[4096];
static char _fake_rsmi[4096];
static char _sysfs[4096];

static void _paths(void)
{
	const char *t = getenv("TESTS_DIR"), *r = getenv("REALDATA");
	const char *b = getenv("TOP_BUILDDIR");

	snprintf(_fixtures, sizeof(_fixtures), "%s/fixtures/spank",
		 t ? t : ".");
	snprintf(_sysfs, sizeof(_sysfs), "%s/sysfs", _fixtures);
	snprintf(_realdata, sizeof(_realdata), "%s", r ? r : "");
	snprintf(_fake, sizeof(_fake), "%s/tests/spank/fakenvml.so",
		 b ? b : "..");
	snprintf(_fake_rsmi, sizeof(_fake_rsmi), "%s/tests/spank/fakersmi.so",
		 b ? b : "..");
	snprintf(_fake_nosym, sizeof(_fake_nosym),
		 "%s/tests/spank/fakenvml_nosym.so", b ? b : "..");
}

static char *_argv[32];

static int _parse(struct ml_conf *c, const char *line, char *err,
		  size_t len)
{
	static char buf[4096];
	int ac = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *tok = strtok(buf, " "); tok && ac < 32;
	     tok = strtok(NULL, " "))
		_argv[ac++] = tok;
	ml_conf_init(c);
	return ml_conf_parse(c, ac, _argv, err, len);
}

/* ---- plugstack.conf ------------------------------------------------ */

START_TEST(conf_defaults)
{
	struct ml_conf c;
	char err[512];

	ck_assert_int_eq(_parse(&c, "", err, sizeof(err)), 0);
	ck_assert_int_eq(c.def[ML_OPT_GPU_BIND], ML_GPU_BIND_NONE);
	ck_assert_int_eq(c.def[ML_OPT_NCCL], ML_NCCL_OFF);
	ck_assert_int_eq(c.def[ML_OPT_RANK_ORDER], ML_RANK_SLURM);
	ck_assert_int_eq(c.def[ML_OPT_COMM], -1);
	ck_assert_str_eq(c.cache_dir, "/run/topoml");
	ck_assert_int_eq(c.port_lo, 29500);
	ck_assert_int_eq(c.port_hi, 30499);
	ck_assert(c.bind_cpus);
}
END_TEST

START_TEST(conf_all_keys)
{
	struct ml_conf c;
	char err[512];

	ck_assert_msg(!_parse(&c, "hwloc_xml=/etc/x.xml cache_dir=/var/c "
			      "topology=/etc/slurm/topology.conf "
			      "master_port=20000-20009 default_gpu_bind=auto "
			      "default_nccl=auto allowed_gpu_bind=auto,none "
			      "default_comm=alltoall nccl_socket_ifname=^lo "
			      "nccl_ib_gid_index=3 nccl_net_gdr_level=PHB "
			      "nccl_topo_file=/etc/nccl.xml "
			      "nccl_env=NCCL_DEBUG=WARN bind_cpus=no "
			      "nvml_lib=/opt/libnvidia-ml.so.1 "
			      "rsmi_lib=/opt/rocm/lib/librocm_smi64.so "
			      "sysfs_root=/tmp/sys", err, sizeof(err)),
		      "%s", err);
	ck_assert_str_eq(c.hwloc_xml, "/etc/x.xml");
	ck_assert_str_eq(c.cache_dir, "/var/c");
	ck_assert_str_eq(c.rsmi_lib, "/opt/rocm/lib/librocm_smi64.so");
	ck_assert_str_eq(c.sysfs_root, "/tmp/sys");
	ck_assert_int_eq(c.port_lo, 20000);
	ck_assert_int_eq(c.port_hi, 20009);
	ck_assert_int_eq(c.def[ML_OPT_GPU_BIND], ML_GPU_BIND_AUTO);
	ck_assert_int_eq(c.def[ML_OPT_COMM], ML_COMM_ALLTOALL);
	ck_assert_uint_eq(c.allow[ML_OPT_GPU_BIND],
			  (1u << ML_GPU_BIND_AUTO) | (1u << ML_GPU_BIND_NONE));
	ck_assert_int_eq(c.gid_index, 3);
	ck_assert_int_eq(c.gdr_level, HW_PATH_PHB);
	ck_assert_int_eq(c.nccl_topo, ML_TOPO_FILE);
	ck_assert_str_eq(c.nccl_topo_file, "/etc/nccl.xml");
	ck_assert_int_eq(c.ndefaults, 1);
	ck_assert_str_eq(c.defaults[0], "NCCL_DEBUG=WARN");
	ck_assert(!c.bind_cpus);
	/* The straggler detector's site defaults, as the job's variables. */
	ck_assert_msg(!_parse(&c, "straggler_every=10 straggler_window=30 "
			      "straggler_threshold=1.5 on_straggler=replace",
			      err, sizeof(err)), "%s", err);
	ck_assert_str_eq(c.straggler_env[0], "TOPOML_STRAGGLER_EVERY=10");
	ck_assert_str_eq(c.straggler_env[1], "TOPOML_STRAGGLER_WINDOW=30");
	ck_assert_str_eq(c.straggler_env[2],
			 "TOPOML_STRAGGLER_THRESHOLD=1.5");
	ck_assert_str_eq(c.straggler_env[3], "TOPOML_ON_STRAGGLER=replace");
	ck_assert_msg(!_parse(&c, "straggler_every=0", err, sizeof(err)),
		      "%s", err);
	ck_assert_str_eq(c.straggler_env[0], "TOPOML_STRAGGLER_EVERY=0");
	ck_assert_str_eq(c.straggler_env[2], "");
}
END_TEST

static const struct {
	const char *args, *msg;
} _bad_conf[] = {
	{ "frobnicate=1", "unknown key 'frobnicate'" },
	{ "hwloc_xml", "'hwloc_xml': expected key=value" },
	{ "hwloc_xml=relative.xml", "not an absolute path" },
	{ "master_port=100-200", "not a port range" },
	{ "master_port=30000-29000", "not a port range" },
	{ "master_port=30000", "not a port range" },
	{ "max_spares=-1", "max_spares: invalid value '-1'" },
	{ "max_spares=1025", "max_spares: invalid value '1025'" },
	/* sscanf("%d") truncated 4294968320 to 1024 */
	{ "master_port=4294968320-65535", "not a port range" },
	{ "master_port=1024-4294967296", "not a port range" },
	{ "master_port=+2000-3000", "not a port range" },
	{ "default_gpu_bind=fast",
	  "default_gpu_bind: invalid value 'fast' (expected auto, nvlink or none)" },
	{ "allowed_nccl=auto,maybe", "not a comma list of auto or off" },
	{ "nccl_env=FOO=1", "nccl_env: 'FOO=1' is not NCCL_NAME=VALUE" },
	{ "nccl_ib_gid_index=300", "nccl_ib_gid_index: invalid value '300'" },
	{ "nccl_net_gdr_level=CLOSE", "invalid value 'CLOSE'" },
	{ "bind_cpus=perhaps", "bind_cpus: invalid value 'perhaps'" },
	{ "straggler_every=-1", "straggler_every: invalid value '-1'" },
	{ "straggler_window=0", "straggler_window: invalid value '0'" },
	{ "straggler_threshold=1", "straggler_threshold: invalid value '1'" },
	{ "straggler_threshold=nan",
	  "straggler_threshold: invalid value 'nan'" },
	{ "straggler_threshold=1.2x",
	  "straggler_threshold: invalid value '1.2x'" },
	{ "on_straggler=drain", "on_straggler: invalid value 'drain'" },
	{ "allowed_gpu_bind=auto,nvlink",
	  "default_gpu_bind=none is not in allowed_gpu_bind" },
};

START_TEST(conf_rejects)
{
	struct ml_conf c;
	char err[512] = "";

	ck_assert_int_eq(_parse(&c, _bad_conf[_i].args, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, _bad_conf[_i].msg), "'%s': got '%s'",
		      _bad_conf[_i].args, err);
}
END_TEST

START_TEST(opt_values)
{
	struct ml_conf c;
	char err[512];
	int v = -1;

	ml_conf_init(&c);
	ck_assert_int_eq(ml_opt_parse(&c, ML_OPT_GPU_BIND, "nvlink", &v, err,
				      sizeof(err)), 0);
	ck_assert_int_eq(v, ML_GPU_BIND_NVLINK);
	ck_assert_int_eq(ml_opt_parse(&c, ML_OPT_RANK_ORDER, "topology", &v,
				      err, sizeof(err)), 0);
	ck_assert_int_eq(v, ML_RANK_TOPOLOGY);
	ck_assert_int_eq(ml_opt_parse(&c, ML_OPT_COMM, "isolate", &v, err,
				      sizeof(err)), 0);
	ck_assert_int_eq(v, ML_COMM_ISOLATE);
	ck_assert_int_eq(ml_opt_parse(&c, ML_OPT_NCCL, "on", &v, err,
				      sizeof(err)), -1);
	ck_assert_str_eq(err, "invalid value 'on' (expected auto or off)");
	ck_assert_int_eq(ml_opt_parse(&c, ML_OPT_COMM, "", &v, err,
				      sizeof(err)), -1);
	ck_assert_str_eq(err, "invalid value '' (expected allreduce, "
			 "alltoall or isolate)");
	/* Site limits. */
	ck_assert_int_eq(_parse(&c, "allowed_gpu_bind=auto,none", err,
				sizeof(err)), 0);
	ck_assert_int_eq(ml_opt_parse(&c, ML_OPT_GPU_BIND, "nvlink", &v, err,
				      sizeof(err)), -1);
	ck_assert_str_eq(err, "'nvlink' is not allowed on this cluster "
			 "(allowed: auto or none)");
	ck_assert_str_eq(ml_opt_env(ML_OPT_GPU_BIND), "TOPOML_GPU_BIND");
	ck_assert_str_eq(ml_opt_name(ML_OPT_RANK_ORDER), "ml-rank-order");
}
END_TEST

/*
 * One option table: every value --help shows is accepted by the option,
 * by default_<key> and by allowed_<key>, and nothing else is; --ml-comm's
 * names are libtopoml's hint names (what select/topoml parses).
 */
START_TEST(opt_table)
{
	static const char *const conf[ML_OPT_COUNT] = {
		[ML_OPT_GPU_BIND] = "gpu_bind", [ML_OPT_NCCL] = "nccl",
		[ML_OPT_RANK_ORDER] = "rank_order", [ML_OPT_COMM] = "comm",
		[ML_OPT_PREFLIGHT] = "preflight" };
	struct ml_conf c;
	char err[512], buf[1024], arginfo[128], *tok, *save = NULL;
	int v, n;

	ck_assert_str_eq(ml_opt_arginfo(ML_OPT_GPU_BIND), "auto|nvlink|none");
	ck_assert_str_eq(ml_opt_arginfo(ML_OPT_NCCL), "auto|off");
	ck_assert_str_eq(ml_opt_arginfo(ML_OPT_RANK_ORDER), "topology|slurm");
	ck_assert_str_eq(ml_opt_arginfo(ML_OPT_COMM),
			 "allreduce|alltoall|isolate");
	ck_assert_ptr_nonnull(strstr(ml_opt_arginfo(ML_OPT_CKPT), "DIR"));
	ck_assert_str_eq(ml_opt_env(ML_OPT_CKPT), "TOPOML_CKPT");
	ck_assert_str_eq(ml_opt_name(ML_OPT_COUNT), "?");
	ck_assert_str_eq(ml_opt_value_name(ML_OPT_COMM, ML_COMM_COUNT), "?");
	for (int h = 0; h < ML_COMM_COUNT; h++) {
		enum topoml_hint th;

		ck_assert_str_eq(ml_opt_value_name(ML_OPT_COMM, h),
				 topoml_hint_name((enum topoml_hint)h));
		ck_assert_int_eq(topoml_hint_parse(ml_opt_value_name(
			ML_OPT_COMM, h), &th), 0);
		ck_assert_int_eq((int)th, h);
	}
	for (int o = 0; o < ML_OPT_COUNT; o++) {
		ck_assert_uint_gt(strlen(ml_opt_usage(o)), 10);
		ck_assert(strncmp(ml_opt_usage(o), "[topoml]", 8));
		if (o == ML_OPT_CKPT || o == ML_OPT_PARALLEL ||
		    o == ML_OPT_SPARES)
			continue;
		snprintf(arginfo, sizeof(arginfo), "%s", ml_opt_arginfo(o));
		n = 0;
		save = NULL;
		for (tok = strtok_r(arginfo, "|", &save); tok;
		     tok = strtok_r(NULL, "|", &save), n++) {
			ml_conf_init(&c);
			ck_assert_msg(!ml_opt_parse(&c, o, tok, &v, err,
						    sizeof(err)), "%s", err);
			ck_assert_str_eq(ml_opt_value_name(o, v), tok);
			snprintf(buf, sizeof(buf), "default_%s=%s "
				 "allowed_%s=%s", conf[o], tok, conf[o], tok);
			ck_assert_msg(!_parse(&c, buf, err, sizeof(err)),
				      "%s: %s", buf, err);
			ck_assert_int_eq(c.def[o], v);
			ck_assert_uint_eq(c.allow[o], 1u << v);
		}
		ck_assert_int_ge(n, 2);
		/* Exact names: the upper-case form is not a value. */
		ml_conf_init(&c);
		ck_assert_int_eq(ml_opt_parse(&c, o, "AUTO", &v, err,
					      sizeof(err)), -1);
		ck_assert_int_eq(ml_opt_parse(&c, o, "ALLTOALL", &v, err,
					      sizeof(err)), -1);
	}
	ck_assert_int_eq(ml_opt_parse(&c, ML_OPT_CKPT, "/tmp", &v, err,
				      sizeof(err)), -1);
	ck_assert_str_eq(err, "not a value option");
	ck_assert_int_eq(_parse(&c, "default_ckpt=/tmp", err, sizeof(err)),
			 -1);
	ck_assert_str_eq(err, "unknown key 'default_ckpt'");
}
END_TEST

START_TEST(parse_lists)
{
	int c[8], pool[8];
	struct hw_node n = { .ngpus = 4 };

	ck_assert_int_eq(ml_parse_tasks_per_node("4(x2),3", c, 8), 3);
	ck_assert_int_eq(c[0], 4);
	ck_assert_int_eq(c[1], 4);
	ck_assert_int_eq(c[2], 3);
	ck_assert_int_eq(ml_parse_tasks_per_node("2", c, 8), 1);
	ck_assert_int_eq(ml_parse_tasks_per_node("4(x", c, 8), -1);
	ck_assert_int_eq(ml_parse_tasks_per_node("a", c, 8), -1);
	ck_assert_int_eq(ml_parse_tasks_per_node("1(x9)", c, 8), -1);
	/*
	 * The job's environment (a user's own srun sends any): Slurm's
	 * counts are uint16_t, larger ones are not truncated into a
	 * different count (2^32 + 1 read as 1 before) nor summed past
	 * INT_MAX into the ranks root computes.
	 */
	ck_assert_int_eq(ml_parse_tasks_per_node("65535", c, 8), 1);
	ck_assert_int_eq(c[0], 65535);
	ck_assert_int_eq(ml_parse_tasks_per_node("65536", c, 8), -1);
	ck_assert_int_eq(ml_parse_tasks_per_node("4294967297", c, 8), -1);
	ck_assert_int_eq(ml_parse_tasks_per_node("2,4294967297(x2)", c, 8),
			 -1);
	ck_assert_int_eq(ml_parse_gpu_list(&n, "3,1", pool, 8), 2);
	ck_assert_int_eq(pool[0], 3);
	ck_assert_int_eq(pool[1], 1);
	ck_assert_int_eq(ml_parse_gpu_list(&n, "4", pool, 8), -1);
	ck_assert_int_eq(ml_parse_gpu_list(&n, "GPU-8a1b", pool, 8), -1);
}
END_TEST

/*
 * A host list from the job's environment (SLURM_STEP_NODELIST,
 * SLURM_JOB_NODELIST: a user's own srun sends anything) is expanded by
 * root in slurmstepd.  libslurm's parser expands bracket groups as a
 * product: "a[0-9]b[0-9]...h[0-9]" is 10^8 names, about 1 GB and seconds
 * (ten groups abort slurmstepd, or its node, out of memory).  Refused
 * without that: within a few MB.
 */
START_TEST(hosts_from_job_env)
{
	struct rusage ru0, ru1;
	char **h;
	int n = -1;

	h = ml_hosts("n[1-3],m2", 16, &n);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(n, 4);
	ck_assert_str_eq(h[0], "n1");
	ck_assert_str_eq(h[2], "n3");
	ck_assert_str_eq(h[3], "m2");
	ml_hosts_free(h, n);
	ck_assert_ptr_null(ml_hosts("n[1-17]", 16, &n));
	ck_assert_int_eq(n, 0);
	ck_assert_ptr_null(ml_hosts("", 16, &n));
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru0), 0);
	ck_assert_ptr_null(ml_hosts("a[0-9]b[0-9]c[0-9]d[0-9]e[0-9]f[0-9]"
				    "g[0-9]h[0-9]", 65536, &n));
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru1), 0);
	ck_assert_msg(ru1.ru_maxrss - ru0.ru_maxrss < 64 * 1024,
		      "%ld KB to refuse a host list", ru1.ru_maxrss -
		      ru0.ru_maxrss);
}
END_TEST

START_TEST(master_port)
{
	struct ml_conf c;
	char err[256];
	int seen[10];

	ck_assert_int_eq(_parse(&c, "master_port=20000-20009", err,
				sizeof(err)), 0);
	/* Step 0: the former per-job port, LO + job id mod SIZE. */
	ck_assert_int_eq(ml_master_port(&c, 0, 0, NULL), 20000);
	ck_assert_int_eq(ml_master_port(&c, 10, 0, ""), 20000);
	ck_assert_int_eq(ml_master_port(&c, 1234, 0, NULL), 20004);
	for (uint32_t j = 1; j < 5000; j += 7)
		for (uint32_t st = 0; st < 30; st += 3) {
			int p = ml_master_port(&c, j, st, NULL);

			ck_assert(p >= 20000 && p <= 20009);
			ck_assert_int_eq(p, ml_master_port(&c, j, st, NULL));
		}
	/* SIZE concurrent steps of one job: SIZE different ports. */
	for (uint32_t j = 0; j < 300; j++) {
		memset(seen, 0, sizeof(seen));
		for (uint32_t st = 0; st < 10; st++)
			ck_assert_int_eq(seen[ml_master_port(&c, j, st, NULL) -
					      20000]++, 0);
	}
	/* Step 0 of SIZE consecutive jobs: different ports. */
	memset(seen, 0, sizeof(seen));
	for (uint32_t j = 4711; j < 4721; j++)
		ck_assert_int_eq(seen[ml_master_port(&c, j, 0, NULL) -
				      20000]++, 0);
	/* Step 1 of a job is not step 0 of the next one. */
	for (uint32_t j = 0; j < 300; j++)
		ck_assert_int_ne(ml_master_port(&c, j, 1, NULL),
				 ml_master_port(&c, j + 1, 0, NULL));
	/* Slurm's reserved ports win, whatever the range. */
	ck_assert_int_eq(ml_master_port(&c, 7, 3, "12000-12004"), 12000);
	ck_assert_int_eq(ml_master_port(&c, 7, 3, "12007,12001-12002"),
			 12007);
	ck_assert_int_eq(ml_master_port(&c, 7, 3, "[13000-13001]"), 13000);
	ck_assert_int_eq(ml_master_port(&c, 7, 3, "65535"), 65535);
	/* Not a port list: the formula. */
	ck_assert_int_eq(ml_master_port(&c, 7, 0, "x12000"), 20007);
	ck_assert_int_eq(ml_master_port(&c, 7, 0, "0"), 20007);
	ck_assert_int_eq(ml_master_port(&c, 7, 0, "65536"), 20007);
	ck_assert_int_eq(ml_master_port(&c, 7, 0, "1200000"), 20007);
	ck_assert_int_eq(ml_master_port(&c, 7, 0, "12000x"), 20007);
	ck_assert_int_eq(ml_master_port(&c, 7, 0, "-5"), 20007);
	ck_assert_int_eq(ml_resv_port("29500-29503"), 29500);
	ck_assert_int_eq(ml_resv_port(NULL), -1);
	/* A one-port range. */
	ck_assert_int_eq(_parse(&c, "master_port=30000-30000", err,
				sizeof(err)), 0);
	ck_assert_int_eq(ml_master_port(&c, 99, 5, NULL), 30000);
	/* The default range: steps of one job still differ. */
	ck_assert_int_eq(_parse(&c, "cache_dir=/run/topoml", err,
				sizeof(err)), 0);
	ck_assert_int_eq(ml_master_port(&c, 1000, 0, NULL), 29500);
	ck_assert_int_ne(ml_master_port(&c, 1000, 1, NULL), 29500);
	ck_assert_int_ne(ml_master_port(&c, 1000, 1, NULL),
			 ml_master_port(&c, 1001, 0, NULL));
}
END_TEST

/* ---- hardware model ------------------------------------------------ */

static struct hw_node *_node(const char *xml, const char *sysfs)
{
	char err[1024];
	hwloc_topology_t topo = hw_hwloc_load(xml, err, sizeof(err));
	struct hw_node *n;

	ck_assert_msg(topo != NULL, "%s", err);
	n = hw_node_new();
	ck_assert_msg(!hw_node_from_hwloc(n, topo, err, sizeof(err)), "%s",
		      err);
	if (sysfs)
		hw_ib_sysfs(n, sysfs, err, sizeof(err));
	hw_ib_default_ports(n);
	hwloc_topology_destroy(topo);
	return n;
}

static char *_fixture(const char *name)
{
	static char p[4200];

	snprintf(p, sizeof(p), "%s/hwloc/%s", _fixtures, name);
	return p;
}

START_TEST(model_synthetic)
{
	struct hw_node *n = _node(_fixture("synth-2s8g4n.xml"), _sysfs);
	char buf[256];

	ck_assert_int_eq(n->ngpus, 8);
	ck_assert_int_eq(n->nnics, 5);
	ck_assert_int_eq(n->ncores, 16);
	ck_assert_str_eq(n->gpus[0].busid, "0000:12:00.0");
	ck_assert_str_eq(n->gpus[7].busid, "0000:53:00.0");
	hwloc_bitmap_list_snprintf(buf, sizeof(buf), n->gpus[5].cpuset);
	ck_assert_str_eq(buf, "16-31");
	ck_assert_str_eq(n->nics[2].netdev, "eth0");
	/* GPU 0 and mlx5_0 share a PCIe switch; mlx5_2 hangs off the
	 * root complex; mlx5_3 is on the other socket. */
	ck_assert_int_eq(n->path[0 * n->nnics + 0], HW_PATH_PIX);
	ck_assert_int_eq(n->path[0 * n->nnics + 1], HW_PATH_PHB);
	ck_assert_int_eq(n->path[0 * n->nnics + 2], HW_PATH_PHB);
	ck_assert_int_eq(n->path[0 * n->nnics + 3], HW_PATH_SYS);
	/* sysfs: port states, link layers, RoCE v2 IPv4 GID. */
	ck_assert_int_eq(n->nics[0].ports[0].state, 4);
	ck_assert_int_eq(n->nics[0].ports[0].link_layer, HW_LL_IB);
	ck_assert_int_eq(n->nics[1].nports, 2);
	ck_assert_int_eq(n->nics[1].ports[0].state, 1);
	ck_assert_int_eq(n->nics[2].ports[0].link_layer, HW_LL_ETH);
	ck_assert_int_eq(n->nics[2].ports[0].gid_index, 3);
	hw_node_free(n);
}
END_TEST

START_TEST(model_no_sysfs)
{
	struct hw_node *n = _node(_fixture("synth-2s8g4n.xml"),
				  "/nonexistent-sysfs");

	/* Nothing known: port 1, state unknown, still usable. */
	ck_assert_int_eq(n->nics[1].nports, 1);
	ck_assert_int_eq(n->nics[1].ports[0].num, 1);
	ck_assert_int_eq(n->nics[1].ports[0].state, 0);
	hw_node_free(n);
}
END_TEST

static char *_print(const struct hw_node *n, const struct ml_task_bind *b,
		    int ntasks)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	hw_node_print(n, f);
	if (b)
		ml_bind_print(n, b, ntasks, f);
	fclose(f);
	return buf;
}

START_TEST(model_verbs)
{
	struct hw_node *n = _node(_fixture("synth-2s8g4n.xml"), NULL);
	char err[512];

	/* No RDMA here (ENOSYS) is no HCA port information, not an error;
	 * on a machine with HCAs only same-named ones are updated. */
	ck_assert_msg(!hw_ib_verbs(n, err, sizeof(err)), "%s", err);
	ck_assert_int_eq(n->nnics, 5);
	for (int j = 0; j < n->nnics; j++)
		ck_assert_int_ge(n->nics[j].nports, 1);
	hw_node_free(n);
}
END_TEST

START_TEST(model_cache_roundtrip)
{
	struct hw_node *n = _node(_fixture("synth-2s8g4n.xml"), _sysfs);
	struct hw_node *m = hw_node_new();
	char path[] = "/tmp/check_spank_model.XXXXXX", err[512];
	char *a, *b;
	int fd = mkstemp(path);

	ck_assert(fd >= 0);
	close(fd);
	n->gpus[2].island = 1;
	ck_assert_msg(!hw_node_save(n, path, err, sizeof(err)), "%s", err);
	ck_assert_msg(!hw_node_load(m, path, err, sizeof(err)), "%s", err);
	a = _print(n, NULL, 0);
	b = _print(m, NULL, 0);
	ck_assert_str_eq(a, b);
	for (int i = 0; i < n->ngpus * n->nnics; i++)
		ck_assert_int_eq(n->path[i], m->path[i]);
	ck_assert_int_eq(m->ncores, 16);
	free(a);
	free(b);
	unlink(path);
	hw_node_free(n);
	hw_node_free(m);
}
END_TEST

START_TEST(model_cache_errors)
{
	struct hw_node *m = hw_node_new();
	char path[] = "/tmp/check_spank_bad.XXXXXX", err[512];
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	fprintf(f, "version 1\ncpuset 0-3\ngpu 0000:12:00.0 zero 0-3\n");
	fclose(f);
	ck_assert_int_eq(hw_node_load(m, path, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, ":3: cannot parse 'gpu 0000:12:00.0"),
		      "%s", err);
	f = fopen(path, "w");
	fprintf(f, "cpuset 0-3\n");
	fclose(f);
	ck_assert_int_eq(hw_node_load(m, path, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "not a topoml node model"), "%s", err);
	unlink(path);
	ck_assert_int_eq(hw_node_load(m, "/nonexistent/x.model", err,
				      sizeof(err)), -1);
	ck_assert_msg(strstr(err, "No such file"), "%s", err);
	hw_node_free(m);
}
END_TEST

/* The cache is read as root: never through a symlink, never blocking on
 * a FIFO, never a file of another owner; saving replaces a planted
 * symlink instead of writing through it. */
START_TEST(model_cache_untrusted)
{
	struct hw_node *n = _node(_fixture("synth-2s4g2n.xml"), _sysfs);
	struct hw_node *m = hw_node_new();
	char dir[] = "/tmp/check_spank_cache.XXXXXX", p[4400], q[512];
	char err[512], buf[64] = "";
	hwloc_topology_t topo;
	struct stat st;
	FILE *f;
	int dfd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	/* A planted symlink at the model's name, to a private file. */
	snprintf(q, sizeof(q), "%s/secret", dir);
	f = fopen(q, "w");
	fputs("secret\n", f);
	fclose(f);
	chmod(q, 0600);
	ck_assert_int_eq(symlinkat("secret", dfd, "n1.model"), 0);
	ck_assert_int_eq(hw_node_loadat(m, dfd, "n1.model", geteuid(), err,
					sizeof(err)), -1);
	ck_assert_msg(strstr(err, "n1.model: Too many levels"), "%s", err);
	ck_assert_msg(!hw_node_saveat(n, dfd, "n1.model", err, sizeof(err)),
		      "%s", err);
	ck_assert_int_eq(fstatat(dfd, "n1.model", &st, AT_SYMLINK_NOFOLLOW),
			 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(st.st_mode & 07777, 0644);
	ck_assert_int_eq(stat(q, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	f = fopen(q, "r");
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_str_eq(buf, "secret\n");
	ck_assert_msg(!hw_node_loadat(m, dfd, "n1.model", geteuid(), err,
				      sizeof(err)), "%s", err);
	ck_assert_int_eq(m->ngpus, 4);
	/* Another owner's file is refused. */
	ck_assert_int_eq(hw_node_loadat(m, dfd, "n1.model", geteuid() + 1,
					err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "not a regular file of its owner"), "%s",
		      err);
	/* A FIFO: refused at once, no reader blocks (the test would hang). */
	ck_assert_int_eq(mkfifoat(dfd, "n2.model", 0644), 0);
	ck_assert_int_eq(hw_node_loadat(m, dfd, "n2.model", geteuid(), err,
					sizeof(err)), -1);
	ck_assert_int_eq(mkfifoat(dfd, "n2.xml", 0644), 0);
	ck_assert_ptr_null(hw_hwloc_loadat(dfd, "n2.xml", geteuid(), err,
					   sizeof(err)));
	/* hwloc XML through the directory fd. */
	snprintf(p, sizeof(p), "%s", _fixture("synth-2s4g2n.xml"));
	ck_assert_int_eq(symlinkat(p, dfd, "n3.xml"), 0);
	ck_assert_ptr_null(hw_hwloc_loadat(dfd, "n3.xml", geteuid(), err,
					   sizeof(err)));
	topo = hw_hwloc_loadat(AT_FDCWD, p, geteuid(), err, sizeof(err));
	ck_assert_msg(topo != NULL, "%s", err);
	hwloc_topology_destroy(topo);
	/* No temporary file is left behind. */
	{
		DIR *d = opendir(dir);
		struct dirent *e;

		while ((e = readdir(d)))
			ck_assert_msg(strncmp(e->d_name, ".n1", 3) &&
				      !strstr(e->d_name, "tmp"),
				      "left over: %s", e->d_name);
		closedir(d);
	}
	close(dfd);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(p), 0);
	hw_node_free(n);
	hw_node_free(m);
}
END_TEST

START_TEST(hwloc_bad_xml)
{
	char err[512];

	ck_assert(hw_hwloc_load("/nonexistent.xml", err, sizeof(err)) == NULL);
	ck_assert_msg(strstr(err, "/nonexistent.xml: No such file"), "%s",
		      err);
	ck_assert(hw_hwloc_load(_sysfs, err, sizeof(err)) == NULL);
}
END_TEST

/* ---- bindings ------------------------------------------------------ */

START_TEST(bind_pool_and_sharing)
{
	struct hw_node *n = _node(_fixture("synth-2s8g4n.xml"), _sysfs);
	struct ml_task_bind b[16];
	char err[256], buf[128];
	int pool[] = { 5, 1 };

	/* A GRES pool of two GPUs: PCI order, one each. */
	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_AUTO, 2, pool, 2, b, err,
				   sizeof(err)));
	ck_assert_int_eq(b[0].gpus[0], 1);
	ck_assert_int_eq(b[1].gpus[0], 5);
	ck_assert_str_eq(b[0].cuda_visible, "1,5");
	ck_assert_str_eq(b[1].local_gpus, "1");
	ml_bind_free(b, 2);

	/* 16 tasks on 8 GPUs: blocks (mpibind, --ntasks-per-gpu), task t
	 * uses GPU t / 2, so local ranks 8-15 stay on socket 1; cores
	 * split. */
	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_AUTO, 16, NULL, 0, b, err,
				   sizeof(err)));
	for (int t = 0; t < 16; t++)
		ck_assert_int_eq(b[t].gpus[0], t / 2);
	ck_assert_str_eq(b[9].local_gpus, "4");
	ck_assert_str_eq(b[9].cuda_visible, "0,1,2,3,4,5,6,7");
	for (int t = 0; t < 16; t++) {
		ck_assert_int_eq(hwloc_bitmap_weight(b[t].cpuset), 2);
		for (int u = 0; u < t; u++)
			ck_assert(!hwloc_bitmap_intersects(b[t].cpuset,
							   b[u].cpuset));
	}
	hwloc_bitmap_list_snprintf(buf, sizeof(buf), b[15].cpuset);
	ck_assert_str_eq(buf, "30-31");
	ml_bind_free(b, 16);

	/* none binds nothing; a bad pool is an error. */
	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_NONE, 4, NULL, 0, b, err,
				   sizeof(err)));
	ck_assert_int_eq(b[0].ngpus, 0);
	ck_assert(hwloc_bitmap_iszero(b[0].cpuset));
	ml_bind_free(b, 4);
	pool[0] = 9;
	ck_assert_int_eq(ml_bind_compute(n, ML_GPU_BIND_AUTO, 2, pool, 2, b,
					 err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GPU 9 is not on this node");
	hw_node_free(n);
}
END_TEST

START_TEST(bind_no_gpu)
{
	hwloc_topology_t topo;
	struct hw_node *n = hw_node_new();
	struct ml_task_bind b[2];
	struct ml_env e = { 0 };
	struct ml_conf c;
	char err[256];

	ck_assert(!hwloc_topology_init(&topo));
	ck_assert(!hwloc_topology_set_synthetic(topo, "pack:2 core:2 pu:1"));
	ck_assert(!hwloc_topology_load(topo));
	ck_assert(!hw_node_from_hwloc(n, topo, err, sizeof(err)));
	ck_assert_int_eq(n->ngpus, 0);
	ck_assert_int_eq(n->nnics, 0);
	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_AUTO, 2, NULL, 0, b, err,
				   sizeof(err)));
	ck_assert(hwloc_bitmap_iszero(b[1].cpuset));
	ml_conf_init(&c);
	ml_env_gpu(&b[0], &e);
	ml_env_nccl(&c, n, &b[0], false, NULL, &e);
	ck_assert_int_eq(e.n, 0);
	ml_bind_free(b, 2);
	hw_node_free(n);
	hwloc_topology_destroy(topo);
}
END_TEST

/*
 * Expected bindings per machine (tests/fixtures/spank/expected/NAME):
 * a header of "# key: value" lines (xml, tasks, mode, sysfs, nvml,
 * nvml_busids), then the output of hw_node_print + ml_bind_print.
 */
static int _expected_file(const char *path, char *why, size_t whylen)
{
	char line[4096], xml[8192] = "", sysfs[8192] = "", nvml[1024] = "";
	char busids[1024] = "", mode[1024] = "auto", err[1024];
	char rsmi[1024] = "", rbusids[1024] = "";
	char *want = NULL, *got;
	size_t wlen = 0;
	int ntasks = 1, m, rc = 1;
	FILE *f = fopen(path, "r"), *w;
	struct hw_node *n;
	struct ml_task_bind *b;
	struct ml_conf c;

	ck_assert_msg(f != NULL, "%s", path);
	w = open_memstream(&want, &wlen);
	while (fgets(line, sizeof(line), f)) {
		char k[64], v[1000];

		if (sscanf(line, "# %63[a-z_]: %999s", k, v) == 2) {
			if (!strcmp(k, "xml") && !strncmp(v, "realdata/", 9))
				snprintf(xml, sizeof(xml), "%s/%s", _realdata,
					 v + 9);
			else if (!strcmp(k, "xml"))
				snprintf(xml, sizeof(xml), "%s/%s", _fixtures, v);
			else if (!strcmp(k, "sysfs"))
				snprintf(sysfs, sizeof(sysfs), "%s/%s",
					 _fixtures, v);
			else if (!strcmp(k, "tasks"))
				ntasks = atoi(v);
			else if (!strcmp(k, "mode"))
				snprintf(mode, sizeof(mode), "%s", v);
			else if (!strcmp(k, "nvml"))
				snprintf(nvml, sizeof(nvml), "%s", v);
			else if (!strcmp(k, "nvml_busids"))
				snprintf(busids, sizeof(busids), "%s", v);
			else if (!strcmp(k, "rsmi"))
				snprintf(rsmi, sizeof(rsmi), "%s", v);
			else if (!strcmp(k, "rsmi_busids"))
				snprintf(rbusids, sizeof(rbusids), "%s", v);
			continue;
		}
		if (line[0] != '#')
			fputs(line, w);
	}
	fclose(f);
	fclose(w);
	if (!_realdata[0] && strstr(path, "real-") &&
	    access(xml, R_OK)) {
		snprintf(why, whylen, "SKIP %s: REALDATA not set", path);
		goto out;
	}
	if (access(xml, R_OK)) {
		if (strstr(path, "/real-")) {
			/* the return value used: a long path may be cut */
			if (snprintf(why, whylen, "SKIP %s: %s absent", path,
				     xml) >= (int)whylen)
				why[whylen - 1] = '\0';
			goto out;
		}
		ck_abort_msg("%s: fixture %s missing", path, xml);
	}
	ml_conf_init(&c);
	ck_assert(!ml_opt_parse(&c, ML_OPT_GPU_BIND, mode, &m, err,
				sizeof(err)));
	n = _node(xml, sysfs[0] ? sysfs : NULL);
	if (nvml[0]) {
		setenv("FAKE_NVML", nvml, 1);
		setenv("FAKE_NVML_BUSIDS", busids, 1);
		ck_assert_msg(!hw_nvml_islands(n, _fake, err, sizeof(err)),
			      "%s: %s", path, err);
	}
	if (rsmi[0]) {
		setenv("FAKE_RSMI", rsmi, 1);
		setenv("FAKE_RSMI_BUSIDS", rbusids, 1);
		ck_assert_msg(!hw_rsmi_islands(n, _fake_rsmi, err, sizeof(err)),
			      "%s: %s", path, err);
	}
	b = calloc(ntasks, sizeof(*b));
	ck_assert(!ml_bind_compute(n, m, ntasks, NULL, 0, b, err,
				   sizeof(err)));
	got = _print(n, b, ntasks);
	if (strcmp(got, want)) {
		const char *p = got, *q = want;
		int l = 1;

		while (*p && *p == *q) {
			if (*p == '\n')
				l++;
			p++;
			q++;
		}
		ck_abort_msg("%s: output differs at line %d of the bindings:\n"
			     "got:  %.160s\nwant: %.160s", path, l, p, q);
	}
	free(got);
	ml_bind_free(b, ntasks);
	free(b);
	hw_node_free(n);
	rc = 0;
out:
	free(want);
	return rc;
}

START_TEST(expected_bindings)
{
	char dir[4200], path[8400], why[8600];
	struct dirent **list;
	int nent, checked = 0, skipped = 0, real = 0;

	snprintf(dir, sizeof(dir), "%s/expected", _fixtures);
	nent = scandir(dir, &list, NULL, alphasort);
	ck_assert_msg(nent > 0, "no expected files in %s", dir);
	for (int i = 0; i < nent; i++) {
		if (list[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir,
				 list[i]->d_name);
			if (_expected_file(path, why, sizeof(why))) {
				printf("%s\n", why);
				skipped++;
			} else {
				checked++;
				real += !strncmp(list[i]->d_name, "real-", 5);
			}
		}
		free(list[i]);
	}
	free(list);
	printf("expected bindings: %d machines checked (%d real), %d "
	       "skipped\n", checked, real, skipped);
	ck_assert_int_gt(checked, 0);
	if (!skipped)
		ck_assert_int_ge(real, 5);
}
END_TEST


/* ---- LLNL mpibind's expected mappings (issue 17 item 5) -------------- */

/* The i-th ';'-separated field of a quoted mapping line, as a bitmap. */
static hwloc_bitmap_t _mpibind_field(const char *line, int i)
{
	hwloc_bitmap_t s = hwloc_bitmap_alloc();
	const char *p = strchr(line, '"'), *end;
	char buf[4096];

	for (p = p ? p + 1 : line; i > 0 && p; i--)
		if ((p = strchr(p, ';')))
			p++;
	if (!p)
		return s;
	end = p + strcspn(p, ";\"");
	snprintf(buf, sizeof(buf), "%.*s", (int)(end - p), p);
	if (buf[0])
		hwloc_bitmap_list_sscanf(s, buf);
	return s;
}

/* The cores (model indices) a PU set touches. */
static hwloc_bitmap_t _cores_of(const struct hw_node *n, hwloc_const_bitmap_t pus)
{
	hwloc_bitmap_t c = hwloc_bitmap_alloc();

	for (int i = 0; i < n->ncores; i++)
		if (hwloc_bitmap_intersects(n->cores[i], pus))
			hwloc_bitmap_set(c, i);
	return c;
}

struct _agree {
	char key[128];		/* "coral-lassen 1" */
	char line[512];
	bool seen;
};

/*
 * Every case of mpibind's expected files with GPU optimisation, no
 * restriction and no thread count (the cases topoml has an equivalent
 * for) on the machines whose hwloc XML realdata has: topoml's GPUs and
 * cores per task against mpibind's.  What agrees and what does not, and
 * why, is tests/fixtures/spank/mpibind-agreement.txt; a change either way
 * fails here.
 */
START_TEST(mpibind_expected)
{
	char dir[4200], path[8400], xml[8400], line[8192], agreef[4200];
	static char maps[4][8192];
	char err[512];
	struct _agree *ag = calloc(256, sizeof(*ag));
	int nag = 0, compared = 0, machines = 0;
	struct dirent **list;
	FILE *f;
	int nent;

	snprintf(agreef, sizeof(agreef), "%s/mpibind-agreement.txt",
		 _fixtures);
	f = fopen(agreef, "r");
	ck_assert_msg(f != NULL, "%s", agreef);
	while (ag && nag < 256 && fgets(line, sizeof(line), f)) {
		char m[64];
		int c;

		if (line[0] == '#' || sscanf(line, "%63s %d", m, &c) != 2)
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(ag[nag].key, sizeof(ag[nag].key), "%s %d", m, c);
		snprintf(ag[nag++].line, sizeof(ag[0].line), "%.500s", line);
	}
	fclose(f);
	snprintf(dir, sizeof(dir), "%s/test_suites/mpibind_expected",
		 _realdata);
	if (!_realdata[0] || (nent = scandir(dir, &list, NULL,
					     alphasort)) < 0) {
		printf("SKIP mpibind_expected: no %s (REALDATA, ../shared "
		       "absent)\n", dir);
		free(ag);
		return;
	}
	for (int i = 0; i < nent; i++) {
		const char *mach = list[i]->d_name + 9;
		struct hw_node *n = NULL;
		int caseno = 0;

		if (strncmp(list[i]->d_name, "expected.", 9) ||
		    strstr(list[i]->d_name, ".v1")) {
			free(list[i]);
			continue;	/* .v1: the old format, no parameters */
		}
		snprintf(xml, sizeof(xml),
			 "%s/hwloc_xml/mpibind_topo-xml_%s.xml", _realdata,
			 mach);
		if (access(xml, R_OK)) {
			printf("mpibind %s: no hwloc XML in realdata, not "
			       "compared\n", mach);
			free(list[i]);
			continue;
		}
		machines++;
		n = _node(xml, NULL);
		snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name);
		f = fopen(path, "r");
		ck_assert_msg(f != NULL, "%s", path);
		while (fgets(line, sizeof(line), f)) {
			int ntasks = -1, nth = -1, optim = -1, k = 0, smt = 0;
			bool restr, gpus_ok = true, cores_ok = true;
			char *p, why[1024] = "", got[512], key[128];
			struct ml_task_bind *b;

			if (sscanf(line, "# %d:", &k) == 1)
				caseno = k;
			if (strncmp(line, "# {\"params\"", 11))
				continue;
			p = strstr(line, "\"ntasks\":");
			ntasks = p ? atoi(p + 9) : -1;
			p = strstr(line, "\"in_nthreads\":");
			nth = p ? atoi(p + 14) : -1;
			p = strstr(line, "\"gpu_optim\":");
			optim = p ? atoi(p + 12) : -1;
			p = strstr(line, "\"smt\":");
			smt = p ? atoi(p + 6) : 0;
			restr = !strstr(line, "\"restr_set\": null");
			/* description, threads, cpus, gpus */
			for (k = 0; k < 4 && fgets(maps[k], sizeof(maps[0]),
						   f);)
				if (maps[k][0] != '#' && maps[k][0] != '\n')
					k++;
			if (k < 4 || optim != 1 || nth != 0 || restr ||
			    ntasks < 1 || !n->ngpus)
				continue;
			b = calloc(ntasks, sizeof(*b));
			ck_assert(!ml_bind_compute(n, ML_GPU_BIND_AUTO, ntasks,
						   NULL, 0, b, err,
						   sizeof(err)));
			for (int t = 0; t < ntasks; t++) {
				hwloc_bitmap_t mg = _mpibind_field(maps[3], t);
				hwloc_bitmap_t mc = _mpibind_field(maps[2], t);
				hwloc_bitmap_t tg = hwloc_bitmap_alloc();
				hwloc_bitmap_t a = _cores_of(n, mc);
				hwloc_bitmap_t c = _cores_of(n, b[t].cpuset);

				for (int g = 0; g < b[t].ngpus; g++)
					hwloc_bitmap_set(tg, b[t].gpus[g]);
				if (gpus_ok && !hwloc_bitmap_isequal(mg, tg)) {
					gpus_ok = false;
					snprintf(why + strlen(why),
						 sizeof(why) - strlen(why),
						 " first GPU difference task %d",
						 t);
				}
				if (cores_ok && !hwloc_bitmap_isequal(a, c)) {
					char x[128], y[128];

					cores_ok = false;
					hwloc_bitmap_list_snprintf(x, sizeof(x),
								   a);
					hwloc_bitmap_list_snprintf(y, sizeof(y),
								   c);
					snprintf(why + strlen(why),
						 sizeof(why) - strlen(why),
						 " task %d cores mpibind %s "
						 "topoml %s", t, x, y);
				}
				hwloc_bitmap_free(mg);
				hwloc_bitmap_free(mc);
				hwloc_bitmap_free(tg);
				hwloc_bitmap_free(a);
				hwloc_bitmap_free(c);
			}
			ml_bind_free(b, ntasks);
			free(b);
			compared++;
			snprintf(key, sizeof(key), "%.64s %d", mach, caseno);
			snprintf(got, sizeof(got), "%.64s %d %s smt=%d gpus=%s "
				 "cores=%s", mach, caseno, ntasks < n->ngpus ?
				 "fewer" : ntasks == n->ngpus ? "one-each" :
				 "more", smt, gpus_ok ? "agree" : "differ",
				 cores_ok ? "agree" : "differ");
			printf("mpibind %s:%s\n", got, why);
			k = -1;
			for (int j = 0; j < nag; j++)
				if (!strcmp(ag[j].key, key))
					k = j;
			ck_assert_msg(k >= 0, "%s: case not in %s", got, agreef);
			ag[k].seen = true;
			ck_assert_msg(!strncmp(ag[k].line, got, strlen(got)) &&
				      (!ag[k].line[strlen(got)] ||
				       ag[k].line[strlen(got)] == ' '),
				      "mpibind agreement changed:\n got:  %s\n"
				      " want: %s\n%s", got, ag[k].line, why);
		}
		fclose(f);
		hw_node_free(n);
		free(list[i]);
	}
	free(list);
	for (int j = 0; j < nag; j++)
		ck_assert_msg(ag[j].seen, "%s: listed, not compared",
			      ag[j].line);
	printf("mpibind: %d cases compared on %d machines\n", compared,
	       machines);
	ck_assert_int_gt(compared, 0);
	free(ag);
}
END_TEST

/* ---- NVML ---------------------------------------------------------- */

static const char *_busids8 = "0000:12:00.0,0000:13:00.0,0000:22:00.0,"
	"0000:23:00.0,0000:42:00.0,0000:43:00.0,0000:52:00.0,0000:53:00.0";
static const char *_busids4 = "0000:12:00.0,0000:13:00.0,0000:14:00.0,"
	"0000:15:00.0";

START_TEST(nvml_nvswitch)
{
	struct hw_node *n = _node(_fixture("synth-2s8g4n.xml"), NULL);
	char err[512];

	setenv("FAKE_NVML", "nvswitch8", 1);
	setenv("FAKE_NVML_BUSIDS", _busids8, 1);
	ck_assert_msg(!hw_nvml_islands(n, _fake, err, sizeof(err)), "%s", err);
	ck_assert(n->nvml);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(n->gpus[i].island, 0);
	hw_node_free(n);
}
END_TEST

START_TEST(nvml_pairs)
{
	struct hw_node *n = _node(_fixture("synth-1s4g0n.xml"), NULL);
	struct ml_task_bind b[2];
	char err[512];

	setenv("FAKE_NVML", "pairs4", 1);
	setenv("FAKE_NVML_BUSIDS", _busids4, 1);
	ck_assert_msg(!hw_nvml_islands(n, _fake, err, sizeof(err)), "%s", err);
	ck_assert_int_eq(n->gpus[0].island, 0);
	ck_assert_int_eq(n->gpus[1].island, 1);
	ck_assert_int_eq(n->gpus[2].island, 0);
	ck_assert_int_eq(n->gpus[3].island, 1);
	/* nvlink keeps each task inside its pair; auto goes by PCI. */
	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_NVLINK, 2, NULL, 0, b, err,
				   sizeof(err)));
	ck_assert_int_eq(b[0].gpus[0], 0);
	ck_assert_int_eq(b[0].gpus[1], 2);
	ck_assert_int_eq(b[1].gpus[0], 1);
	ck_assert_int_eq(b[1].gpus[1], 3);
	ck_assert_str_eq(b[1].cuda_visible, "1,3,0,2");
	ck_assert_str_eq(b[1].local_gpus, "0,1");
	ml_bind_free(b, 2);
	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_AUTO, 2, NULL, 0, b, err,
				   sizeof(err)));
	ck_assert_int_eq(b[0].gpus[1], 1);
	ck_assert_str_eq(b[1].cuda_visible, "2,3,0,1");
	ml_bind_free(b, 2);
	hw_node_free(n);
}
END_TEST

START_TEST(nvml_down_links)
{
	struct hw_node *n = _node(_fixture("synth-2s8g4n.xml"), NULL);
	char err[512];

	setenv("FAKE_NVML", "downlinks", 1);
	setenv("FAKE_NVML_BUSIDS", _busids8, 1);
	ck_assert_msg(!hw_nvml_islands(n, _fake, err, sizeof(err)), "%s", err);
	ck_assert_int_eq(n->gpus[0].island, 0);
	ck_assert_int_eq(n->gpus[6].island, 0);
	ck_assert_int_ne(n->gpus[3].island, 0);
	ck_assert_int_ne(n->gpus[7].island, 0);
	ck_assert_int_ne(n->gpus[3].island, n->gpus[7].island);
	hw_node_free(n);
}
END_TEST

START_TEST(nvml_failures)
{
	struct hw_node *n = _node(_fixture("synth-2s8g4n.xml"), NULL);
	char err[512];

	setenv("FAKE_NVML", "nodriver", 1);
	ck_assert_int_eq(hw_nvml_islands(n, _fake, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "driver not loaded"), "%s", err);
	setenv("FAKE_NVML", "nvswitch8", 1);
	ck_assert_int_eq(hw_nvml_islands(n, _fake_nosym, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "symbol nvmlDeviceGetNvLinkRemotePciInfo_v2 "
			      "missing"), "%s", err);
	ck_assert_int_eq(hw_nvml_islands(n, "/nonexistent/libnvidia-ml.so.1",
					 err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "NVML not available"), "%s", err);
	/* Unusable NVML leaves islands unknown: nvlink = PCI order. */
	ck_assert(!n->nvml);
	for (int i = 0; i < n->ngpus; i++)
		ck_assert_int_eq(n->gpus[i].island, -1);
	hw_node_free(n);
}
END_TEST


/* ---- AMD GPUs, xGMI, Slingshot (issue 17) --------------------------- */

START_TEST(amd_model)
{
	struct hw_node *n = _node(_fixture("synth-mi250x.xml"), NULL);
	struct hw_node *m = hw_node_new();
	char path[] = "/tmp/check_spank_amd.XXXXXX", err[512], buf[64];
	char *a, *b;
	int fd = mkstemp(path);

	/* 8 GCDs of class 0380, one xGMI hive from hwloc's XGMIPeers. */
	ck_assert_int_eq(n->ngpus, 8);
	ck_assert(hw_node_amd(n));
	ck_assert(n->nvml);
	for (int i = 0; i < 8; i++) {
		ck_assert_int_eq(n->gpus[i].vendor, HW_VENDOR_AMD);
		ck_assert_int_eq(n->gpus[i].island, 0);
	}
	/* Slingshot: hsnN network devices are the NICs cxiN, on the GCDs'
	 * PCIe switch. */
	ck_assert_int_eq(n->nnics, 4);
	ck_assert_str_eq(n->nics[3].name, "cxi3");
	ck_assert_str_eq(n->nics[3].netdev, "hsn3");
	ck_assert_int_eq(n->nics[3].kind, HW_NIC_CXI);
	ck_assert_int_eq(n->path[7 * 4 + 3], HW_PATH_PIX);
	hwloc_bitmap_list_snprintf(buf, sizeof(buf), n->gpus[7].cpuset);
	ck_assert_str_eq(buf, "48-63");

	/* Vendor and NIC kind survive the cache file. */
	ck_assert(fd >= 0);
	close(fd);
	ck_assert_msg(!hw_node_save(n, path, err, sizeof(err)), "%s", err);
	ck_assert_msg(!hw_node_load(m, path, err, sizeof(err)), "%s", err);
	a = _print(n, NULL, 0);
	b = _print(m, NULL, 0);
	ck_assert_str_eq(a, b);
	ck_assert(hw_node_amd(m));
	ck_assert_int_eq(m->nics[0].kind, HW_NIC_CXI);
	free(a);
	free(b);
	unlink(path);
	hw_node_free(n);
	hw_node_free(m);

	/* MI300X: class 1200, verbs HCAs. */
	n = _node(_fixture("synth-mi300x.xml"), NULL);
	ck_assert_int_eq(n->ngpus, 8);
	ck_assert(hw_node_amd(n));
	ck_assert_int_eq(n->nnics, 8);
	ck_assert_int_eq(n->nics[0].kind, HW_NIC_VERBS);
	hw_node_free(n);

	/* An NVIDIA node is not AMD's. */
	n = _node(_fixture("synth-2s8g4n.xml"), NULL);
	ck_assert(!hw_node_amd(n));
	ck_assert_int_eq(n->gpus[0].vendor, HW_VENDOR_NVIDIA);
	hw_node_free(n);
}
END_TEST

START_TEST(amd_rsmi)
{
	struct hw_node *n = _node(_fixture("synth-mi250x.xml"), NULL);
	struct ml_task_bind b[4];
	char err[512];

	setenv("FAKE_RSMI_BUSIDS", "0000:12:00.0,0000:13:00.0,0000:32:00.0,"
	       "0000:33:00.0,0000:52:00.0,0000:53:00.0,0000:72:00.0,"
	       "0000:73:00.0", 1);
	/* ROCm SMI overrides hwloc's hive: xGMI within pairs only. */
	setenv("FAKE_RSMI", "pairs", 1);
	ck_assert_msg(!hw_rsmi_islands(n, _fake_rsmi, err, sizeof(err)), "%s",
		      err);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(n->gpus[i].island, i / 2);
	/* nvlink mode keeps a task's GPUs in one xGMI island. */
	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_NVLINK, 4, NULL, 0, b, err,
				   sizeof(err)));
	for (int t = 0; t < 4; t++)
		ck_assert_int_eq(n->gpus[b[t].gpus[0]].island,
				 n->gpus[b[t].gpus[1]].island);
	ml_bind_free(b, 4);
	setenv("FAKE_RSMI", "hive8", 1);
	ck_assert(!hw_rsmi_islands(n, _fake_rsmi, err, sizeof(err)));
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(n->gpus[i].island, 0);
	setenv("FAKE_RSMI", "pcie", 1);
	ck_assert(!hw_rsmi_islands(n, _fake_rsmi, err, sizeof(err)));
	ck_assert_int_eq(n->gpus[7].island, 7);
	/* Failures leave the islands as they were. */
	setenv("FAKE_RSMI", "noinit", 1);
	ck_assert_int_eq(hw_rsmi_islands(n, _fake_rsmi, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "rsmi_init: RSMI_STATUS_INIT_ERROR"), "%s",
		      err);
	ck_assert_int_eq(hw_rsmi_islands(n, "/nonexistent/librocm_smi64.so",
					 err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "ROCm SMI not available"), "%s", err);
	ck_assert_int_eq(hw_rsmi_islands(n, _fake, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "symbol rsmi_init missing"), "%s", err);
	ck_assert_int_eq(n->gpus[7].island, 7);
	hw_node_free(n);
}
END_TEST

START_TEST(amd_env)
{
	struct hw_node *n = _node(_fixture("synth-mi250x.xml"), NULL);
	struct ml_task_bind b[16];
	struct ml_env e = { 0 };
	struct ml_conf c;
	char err[512];

	ml_conf_init(&c);
	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_AUTO, 4, NULL, 0, b, err,
				   sizeof(err)));
	ml_env_gpu(&b[1], &e);
	ml_env_nccl(&c, n, &b[1], true, NULL, &e);
	/* ROCm: ROCR_VISIBLE_DEVICES in order, own ones by position; no
	 * CUDA_ or HIP_VISIBLE_DEVICES (HIP would index a second time). */
	ck_assert_str_eq(ml_env_get(&e, "ROCR_VISIBLE_DEVICES"),
			 "0,1,2,3,4,5,6,7");
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_LOCAL_GPUS"), "2,3");
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_DEVICE"), "2");
	ck_assert_ptr_null(ml_env_get(&e, "CUDA_VISIBLE_DEVICES"));
	ck_assert_ptr_null(ml_env_get(&e, "HIP_VISIBLE_DEVICES"));
	ck_assert_ptr_null(ml_env_get(&e, "CUDA_DEVICE_ORDER"));
	/* Slingshot through libfabric: cxi provider, the task's NIC, its
	 * hsn interface for bootstrap, GDR on the shared switch; no
	 * verbs variables. */
	ck_assert_str_eq(ml_env_get(&e, "FI_PROVIDER"), "cxi");
	ck_assert_str_eq(ml_env_get(&e, "FI_CXI_DEVICE_NAME"), "cxi1");
	ck_assert_str_eq(ml_env_get(&e, "NCCL_SOCKET_IFNAME"), "=hsn1");
	ck_assert_str_eq(ml_env_get(&e, "NCCL_NET_GDR_LEVEL"), "PIX");
	ck_assert_ptr_null(ml_env_get(&e, "NCCL_IB_HCA"));
	ml_env_clear(&e);
	ml_bind_free(b, 4);

	/* Two GCDs per task across NICs: one NIC each, in GPU order. */
	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_AUTO, 3, NULL, 0, b, err,
				   sizeof(err)));
	ml_env_nccl(&c, n, &b[0], true, NULL, &e);
	ck_assert_str_eq(ml_env_get(&e, "FI_CXI_DEVICE_NAME"), "cxi0,cxi1");
	ml_env_clear(&e);
	ml_bind_free(b, 3);

	/* 16 tasks on 8 GCDs: blocks; TOPOML_DEVICE is the index. */
	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_AUTO, 16, NULL, 0, b, err,
				   sizeof(err)));
	ml_env_gpu(&b[11], &e);
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_DEVICE"), "5");
	ml_env_clear(&e);
	ml_bind_free(b, 16);

	/* A site's NCCL_SOCKET_IFNAME wins over the hsn interface, and
	 * libfabric tunables come from nccl_env=. */
	ck_assert(!_parse(&c, "nccl_socket_ifname=hsn nccl_env=FI_CXI_ATS=0 "
			  "nccl_env=OFI_NCCL_NIC_DUP_CONNS=2", err,
			  sizeof(err)));
	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_AUTO, 8, NULL, 0, b, err,
				   sizeof(err)));
	ml_env_nccl(&c, n, &b[0], true, NULL, &e);
	ck_assert_str_eq(ml_env_get(&e, "NCCL_SOCKET_IFNAME"), "hsn");
	ck_assert_str_eq(ml_env_get(&e, "FI_CXI_ATS"), "0");
	ck_assert_str_eq(ml_env_get(&e, "OFI_NCCL_NIC_DUP_CONNS"), "2");
	ml_env_clear(&e);
	ck_assert_int_eq(_parse(&c, "nccl_env=LD_PRELOAD=/x.so", err,
				sizeof(err)), -1);
	ml_bind_free(b, 8);
	hw_node_free(n);
}
END_TEST

/* Blocks when tasks outnumber GPUs: the first T % G GPUs get one more. */
START_TEST(bind_blocks_uneven)
{
	struct hw_node *n = _node(_fixture("synth-1s4g0n.xml"), NULL);
	struct ml_task_bind b[10];
	int want[10] = { 0, 0, 0, 1, 1, 1, 2, 2, 3, 3 };
	char err[256];

	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_AUTO, 10, NULL, 0, b, err,
				   sizeof(err)));
	for (int t = 0; t < 10; t++) {
		char d[8];

		ck_assert_int_eq(b[t].gpus[0], want[t]);
		snprintf(d, sizeof(d), "%d", want[t]);
		ck_assert_str_eq(b[t].local_gpus, d);
	}
	ml_bind_free(b, 10);
	hw_node_free(n);
}
END_TEST

/* Fewer tasks than GPUs: GPU-less cores of a package go to its tasks. */
START_TEST(bind_greedy)
{
	struct hw_node *n = _node(_fixture("synth-2s8g4n.xml"), NULL);
	struct hw_node *m = hw_node_new();
	char path[] = "/tmp/check_spank_pkg.XXXXXX", err[256], buf[64];
	struct ml_task_bind b[8];
	int fd = mkstemp(path);

	ck_assert_int_eq(n->npkgs, 2);
	/* GPUs 0-3 local to cores 0-3 (PUs 0-7) only: 8-15 are GPU-less. */
	for (int i = 0; i < 4; i++)
		hwloc_bitmap_list_sscanf(n->gpus[i].cpuset, "0-7");
	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_AUTO, 2, NULL, 0, b, err,
				   sizeof(err)));
	hwloc_bitmap_list_snprintf(buf, sizeof(buf), b[0].cpuset);
	ck_assert_str_eq(buf, "0-15");
	hwloc_bitmap_list_snprintf(buf, sizeof(buf), b[1].cpuset);
	ck_assert_str_eq(buf, "16-31");
	ml_bind_free(b, 2);
	/* Four tasks: two on package 0 split its spare cores. */
	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_AUTO, 4, NULL, 0, b, err,
				   sizeof(err)));
	hwloc_bitmap_list_snprintf(buf, sizeof(buf), b[0].cpuset);
	ck_assert_str_eq(buf, "0-3,8-11");
	hwloc_bitmap_list_snprintf(buf, sizeof(buf), b[1].cpuset);
	ck_assert_str_eq(buf, "4-7,12-15");
	ml_bind_free(b, 4);
	/* One GPU per task: GPU-local cores only. */
	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_AUTO, 8, NULL, 0, b, err,
				   sizeof(err)));
	for (int t = 0; t < 4; t++)
		ck_assert(hwloc_bitmap_isincluded(b[t].cpuset,
						  n->gpus[0].cpuset));
	ml_bind_free(b, 8);
	/* Packages survive the cache file. */
	ck_assert(fd >= 0);
	close(fd);
	ck_assert_msg(!hw_node_save(n, path, err, sizeof(err)), "%s", err);
	ck_assert_msg(!hw_node_load(m, path, err, sizeof(err)), "%s", err);
	ck_assert_int_eq(m->npkgs, 2);
	ck_assert(hwloc_bitmap_isequal(m->pkgs[1], n->pkgs[1]));
	unlink(path);
	hw_node_free(m);
	hw_node_free(n);
}
END_TEST

/*
 * Issue 15.7: one device index right in every case.  Slurm's GRES
 * (--gres=gpu:4 -n2) gives both tasks CUDA_VISIBLE_DEVICES=0,1,2,3 and
 * task 1 owns 2,3: LOCAL_RANK=1 would be task 0's GPU, TOPOML_DEVICE=2
 * is its own.
 */
START_TEST(device_index)
{
	struct hw_node *n = _node(_fixture("synth-2s8g4n.xml"), NULL);
	struct ml_task_bind b[8];
	struct ml_env e = { 0 };
	int pool[4] = { 0, 1, 2, 3 }, pool2[4] = { 4, 5, 6, 7 };
	char err[256], own[64];

	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_AUTO, 2, pool, 4, b, err,
				   sizeof(err)));
	/* The plugin's own list: own GPUs first, device 0. */
	ml_env_gpu(&b[1], &e);
	ck_assert_str_eq(ml_env_get(&e, "CUDA_VISIBLE_DEVICES"), "2,3,0,1");
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_DEVICE"), "0");
	ml_env_clear(&e);
	/* Slurm's list (SLURM_STEP_GPUS=0,1,2,3). */
	ck_assert(!ml_own_in_visible(n, &b[1], "0,1,2,3", pool, 4, true, own,
				     sizeof(own)));
	ck_assert_str_eq(own, "2,3");
	ml_env_device(own, &e);
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_DEVICE"), "2");
	ml_env_clear(&e);
	ck_assert(!ml_own_in_visible(n, &b[0], "0,1,2,3", pool, 4, true, own,
				     sizeof(own)));
	ck_assert_str_eq(own, "0,1");
	ml_bind_free(b, 2);

	/* ConstrainDevices: SLURM_STEP_GPUS=4,5,6,7 but the task sees
	 * 0,1,2,3 (renumbered): by position. */
	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_AUTO, 4, pool2, 4, b, err,
				   sizeof(err)));
	ck_assert(!ml_own_in_visible(n, &b[3], "0,1,2,3", pool2, 4, true, own,
				     sizeof(own)));
	ck_assert_str_eq(own, "3");
	/* Not renumbered: by value. */
	ck_assert(!ml_own_in_visible(n, &b[3], "4,5,6,7", pool2, 4, true, own,
				     sizeof(own)));
	ck_assert_str_eq(own, "3");
	/* The user's own order: by value. */
	ck_assert(!ml_own_in_visible(n, &b[3], "7,6,5,4", pool2, 4, false,
				     own, sizeof(own)));
	ck_assert_str_eq(own, "0");
	/* One device only (Slurm's --gpu-bind): entry 0 whatever it is. */
	ck_assert(!ml_own_in_visible(n, &b[2], "0", pool2, 4, true, own,
				     sizeof(own)));
	ck_assert_str_eq(own, "0");
	/* A list without the task's GPU says nothing. */
	ck_assert_int_eq(ml_own_in_visible(n, &b[3], "4,5", pool2, 4, true,
					   own, sizeof(own)), -1);
	ck_assert_str_eq(own, "");
	ck_assert_int_eq(ml_own_in_visible(n, &b[3], "x", pool2, 4, true, own,
					   sizeof(own)), -1);
	ml_env_device(own, &e);
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_DEVICE"), "");
	ml_env_clear(&e);
	ml_bind_free(b, 4);

	/* One GPU per task, the plugin's list: LOCAL_RANK and TOPOML_DEVICE
	 * agree. */
	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_AUTO, 8, NULL, 0, b, err,
				   sizeof(err)));
	for (int t = 0; t < 8; t++) {
		char d[12];	/* any int: gcc -O1 cannot see t < 8 */

		ml_env_gpu(&b[t], &e);
		snprintf(d, sizeof(d), "%d", t);
		ck_assert_str_eq(ml_env_get(&e, "TOPOML_DEVICE"), d);
		ml_env_clear(&e);
	}
	ml_bind_free(b, 8);
	hw_node_free(n);
}
END_TEST

/* ---- environment --------------------------------------------------- */

START_TEST(env_nccl)
{
	struct hw_node *n = _node(_fixture("synth-2s8g4n.xml"), _sysfs);
	struct ml_task_bind b[4], roce = { .nic = 2, .roce = true,
					   .gid_index = 3,
					   .gdr_path = HW_PATH_PHB,
					   .netdev = "eth0" };
	struct ml_env e = { 0 };
	struct ml_conf c;
	char err[512];

	ml_conf_init(&c);
	ck_assert(!ml_bind_compute(n, ML_GPU_BIND_AUTO, 4, NULL, 0, b, err,
				   sizeof(err)));
	ml_env_gpu(&b[1], &e);
	ml_env_nccl(&c, n, &b[1], true, "/run/topoml/n1.nccl_topo.xml", &e);
	ck_assert_str_eq(ml_env_get(&e, "CUDA_VISIBLE_DEVICES"),
			 "2,3,0,1,4,5,6,7");
	ck_assert_str_eq(ml_env_get(&e, "CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_LOCAL_GPUS"), "0,1");
	/* mlx5_1 port 1 is down: only port 2. */
	ck_assert_str_eq(ml_env_get(&e, "NCCL_IB_HCA"), "=mlx5_1:2");
	ck_assert_str_eq(ml_env_get(&e, "NCCL_NET_GDR_LEVEL"), "PIX");
	ck_assert_str_eq(ml_env_get(&e, "NCCL_IGNORE_CPU_AFFINITY"), "1");
	ck_assert_str_eq(ml_env_get(&e, "NCCL_TOPO_FILE"),
			 "/run/topoml/n1.nccl_topo.xml");
	ck_assert_ptr_null(ml_env_get(&e, "NCCL_IB_GID_INDEX"));
	ck_assert_ptr_null(ml_env_get(&e, "NCCL_SOCKET_IFNAME"));
	ml_env_clear(&e);

	/* RoCE: GID index and the HCA's netdev; PHB: no GDR level. */
	ml_env_nccl(&c, n, &roce, false, NULL, &e);
	ck_assert_str_eq(ml_env_get(&e, "NCCL_IB_GID_INDEX"), "3");
	ck_assert_str_eq(ml_env_get(&e, "NCCL_SOCKET_IFNAME"), "=eth0");
	ck_assert_ptr_null(ml_env_get(&e, "NCCL_NET_GDR_LEVEL"));
	ck_assert_ptr_null(ml_env_get(&e, "NCCL_IGNORE_CPU_AFFINITY"));
	ml_env_clear(&e);

	/* Site settings win. */
	ck_assert(!_parse(&c, "nccl_ib_gid_index=5 nccl_net_gdr_level=SYS "
			  "nccl_socket_ifname=bond0 "
			  "nccl_env=NCCL_IB_HCA=mlx5_9", err, sizeof(err)));
	ml_env_nccl(&c, n, &roce, false, NULL, &e);
	ck_assert_str_eq(ml_env_get(&e, "NCCL_IB_GID_INDEX"), "5");
	ck_assert_str_eq(ml_env_get(&e, "NCCL_NET_GDR_LEVEL"), "SYS");
	ck_assert_str_eq(ml_env_get(&e, "NCCL_SOCKET_IFNAME"), "bond0");
	ck_assert_str_eq(ml_env_get(&e, "NCCL_IB_HCA"), "mlx5_9");
	ml_env_clear(&e);
	ck_assert(!_parse(&c, "nccl_ib_gid_index=off nccl_net_gdr_level=off",
			  err, sizeof(err)));
	ml_env_nccl(&c, n, &roce, false, NULL, &e);
	ck_assert_ptr_null(ml_env_get(&e, "NCCL_IB_GID_INDEX"));
	ck_assert_ptr_null(ml_env_get(&e, "NCCL_NET_GDR_LEVEL"));
	ml_env_clear(&e);
	ml_bind_free(b, 4);
	hw_node_free(n);
}
END_TEST

START_TEST(env_torch)
{
	struct ml_job j = { .jobid = 42, .node_rank = 1, .nnodes = 2,
			    .local_rank = 3, .local_size = 4, .rank = 7,
			    .world_size = 8, .master_addr = "n1",
			    .master_port = 29542 };
	struct ml_env e = { 0 };

	ml_env_torch(&j, &e);
	ck_assert_str_eq(ml_env_get(&e, "MASTER_ADDR"), "n1");
	ck_assert_str_eq(ml_env_get(&e, "MASTER_PORT"), "29542");
	ck_assert_str_eq(ml_env_get(&e, "WORLD_SIZE"), "8");
	ck_assert_str_eq(ml_env_get(&e, "RANK"), "7");
	ck_assert_str_eq(ml_env_get(&e, "LOCAL_RANK"), "3");
	ck_assert_str_eq(ml_env_get(&e, "LOCAL_WORLD_SIZE"), "4");
	ck_assert_str_eq(ml_env_get(&e, "NODE_RANK"), "1");
	ck_assert_str_eq(ml_env_get(&e, "GROUP_RANK"), "1");
	ml_env_add(&e, "RANK", "%d", 9);
	ck_assert_str_eq(ml_env_get(&e, "RANK"), "9");
	ck_assert_int_eq(e.n, 8);
	ml_env_clear(&e);
}
END_TEST

/* ---- --ml-parallel (issue 14) -------------------------------------- */

START_TEST(parallel_spec)
{
	struct topoml_parallel p;
	char err[256];
	struct {
		const char *s, *msg;
	} bad[] = {
		{ "", "empty" }, { "tp=0,pp=2", "not a size" },
		{ "tp=2,tp=2", "given twice" }, { "xp=2", "unknown key 'xp'" },
		{ "tp=2,", "trailing" }, { "tp2", "expected KEY=SIZE" },
		{ "tp=2x", "not a size" }, { "pp=99999999999", "not a size" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ck_assert_int_eq(topoml_parallel_parse(bad[i].s, &p, err,
						       sizeof(err)), -1);
		ck_assert_msg(strstr(err, bad[i].msg), "'%s': %s", bad[i].s,
			      err);
	}
	ck_assert(!topoml_parallel_parse("tp=2,pp=4", &p, err, sizeof(err)));
	ck_assert_int_eq(p.dp, 0);
	ck_assert_int_eq(topoml_parallel_resolve(&p, 12, err, sizeof(err)),
			 -1);
	ck_assert_ptr_nonnull(strstr(err, "does not divide the 12 tasks"));
	ck_assert(!topoml_parallel_resolve(&p, 16, err, sizeof(err)));
	ck_assert_int_eq(p.dp, 2);
	/*
	 * Megatron-LM's own example (parallel_state.py,
	 * initialize_model_parallel docstring): 16 GPUs, tp=2, pp=4 give
	 * TP groups [g0, g1], [g2, g3] ...; DP groups [g0, g2], [g1, g3],
	 * [g4, g6] ...; PP groups [g0, g4, g8, g12], [g1, g5, g9, g13] ...
	 */
	for (int r = 0; r < 16; r++) {
		int tp, cp, dp, pp;

		topoml_parallel_coords(&p, r, &tp, &cp, &dp, &pp);
		ck_assert_int_eq(topoml_parallel_rank(&p, tp, cp, dp, pp), r);
	}
	{
		int tp, dp, pp;

		topoml_parallel_coords(&p, 1, &tp, NULL, &dp, &pp);
		ck_assert(tp == 1 && dp == 0 && pp == 0);
		/* g3 and g1 share a DP group: same tp, pp */
		topoml_parallel_coords(&p, 3, &tp, NULL, &dp, &pp);
		ck_assert(tp == 1 && dp == 1 && pp == 0);
		/* g12 is the last stage of g0's pipeline */
		topoml_parallel_coords(&p, 12, &tp, NULL, &dp, &pp);
		ck_assert(tp == 0 && dp == 0 && pp == 3);
	}
	/* an explicit dp must match, ep must divide cp x dp */
	ck_assert(!topoml_parallel_parse("tp=2,pp=1,dp=3", &p, err,
					 sizeof(err)));
	ck_assert_int_eq(topoml_parallel_resolve(&p, 8, err, sizeof(err)),
			 -1);
	ck_assert(!topoml_parallel_parse("tp=2,ep=3", &p, err, sizeof(err)));
	ck_assert_int_eq(topoml_parallel_resolve(&p, 8, err, sizeof(err)),
			 -1);
	ck_assert_ptr_nonnull(strstr(err, "ep=3"));
	/* select/topoml reads the sizes of tp=..,model=FILE (a path may
	 * hold ','), and there are none in model=FILE or auto */
	ck_assert(!topoml_parallel_parse("tp=4,pp=2,model=/m,o.txt", &p, err,
					 sizeof(err)));
	ck_assert(p.tp == 4 && p.pp == 2);
	ck_assert_int_eq(topoml_parallel_parse("model=/m.txt", &p, err,
					       sizeof(err)), -1);
	ck_assert_int_eq(topoml_parallel_parse("auto,model=/m.txt", &p, err,
					       sizeof(err)), -1);
	ck_assert_str_eq(topoml_parallel_job_env(
		"SPANK__SLURM_SPANK_OPTION_topoml_ml_parallel=tp=8"), "tp=8");
	ck_assert_ptr_null(topoml_parallel_job_env(
		"_SLURM_SPANK_OPTION_topoml_ml_comm=alltoall"));
}
END_TEST

START_TEST(env_parallel)
{
	struct topoml_parallel p;
	struct ml_env e = { 0 };
	char err[128];

	ck_assert(!topoml_parallel_parse("tp=2,pp=2,ep=2", &p, err,
					 sizeof(err)));
	ck_assert(!topoml_parallel_resolve(&p, 16, err, sizeof(err)));
	/* rank 13 = tp 1 + 2 * (dp 2 + 4 * pp 1) */
	ml_env_parallel(&p, 13, &e);
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_TP"), "2");
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_PP"), "2");
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_DP"), "4");
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_EP"), "2");
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_TP_RANK"), "1");
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_DP_RANK"), "2");
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_PP_RANK"), "1");
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_EP_RANK"), "0");
	ml_env_clear(&e);
}
END_TEST

/*
 * --ml-spares=K: a number within the site's max_spares (the parser
 * select/topoml uses too), its name in the job's SPANK environment, and
 * where select/topoml puts the spares in the ring order.
 */
START_TEST(spares_opt)
{
	struct ml_conf c;
	char err[512];
	int k = -1;

	ml_conf_init(&c);
	ck_assert_str_eq(ml_opt_name(ML_OPT_SPARES), "ml-spares");
	ck_assert_str_eq(ml_opt_env(ML_OPT_SPARES), "TOPOML_SPARES");
	ck_assert_str_eq(ml_opt_arginfo(ML_OPT_SPARES), "K");
	ck_assert_int_eq(ml_spares_parse(&c, "2", &k, err, sizeof(err)), 0);
	ck_assert_int_eq(k, 2);
	ck_assert_int_eq(ml_spares_parse(&c, "0", &k, err, sizeof(err)), 0);
	ck_assert_int_eq(k, 0);
	for (int i = 0; i < 5; i++) {
		static const char *const bad[] = { "", "-1", "1x", "two",
						   "1025" };

		ck_assert_int_eq(ml_spares_parse(&c, bad[i], &k, err,
						 sizeof(err)), -1);
		ck_assert_ptr_nonnull(strstr(err, "expected a number of "
					     "nodes, 0-1024"));
	}
	ck_assert_int_eq(ml_spares_parse(&c, "65", &k, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "65 spares: at most 64 on this cluster "
			 "(max_spares in plugstack.conf)");
	ck_assert_msg(!_parse(&c, "max_spares=0", err, sizeof(err)), "%s",
		      err);
	ck_assert_int_eq(ml_spares_parse(&c, "1", &k, err, sizeof(err)), -1);
	ck_assert_int_eq(ml_spares_parse(&c, "0", &k, err, sizeof(err)), 0);
	ck_assert_ptr_null(topoml_spares_job_env("TOPOML_SPARES=1"));
	ck_assert_str_eq(topoml_spares_job_env(
		"_SLURM_SPANK_OPTION_topoml_ml_spares=3"), "3");
	ck_assert_str_eq(topoml_spares_job_env(
		"SPANK__SLURM_SPANK_OPTION_topoml_ml_spares=1"), "1");
}
END_TEST

/*
 * Spares last in the ring: from the leaf with most of the job's nodes,
 * latest in the ring first; the workers keep their order.  16 nodes, 4
 * per leaf; the job: 3 nodes of leaf 0, 2 of leaf 1, 1 of leaf 2.
 */
START_TEST(spares_last)
{
	topoml_topo_t *t = topoml_gen_fat_tree("n", 16, 4, 2, 0);
	int job[6] = { 0, 1, 2, 4, 5, 8 }, v[6];
	struct topoml_comment c;
	char err[128];

	ck_assert_ptr_nonnull(t);
	memcpy(v, job, sizeof(v));
	ck_assert_int_eq(topoml_spares_last(t, v, 6, 1), 1);
	ck_assert_int_eq(v[5], 2);	/* leaf 0's last in the ring */
	ck_assert_int_eq(v[0], 0);
	ck_assert_int_eq(v[1], 1);
	ck_assert_int_eq(v[2], 4);
	ck_assert_int_eq(v[4], 8);
	memcpy(v, job, sizeof(v));
	/* Leaf 0 holds 3 spares, the fourth is leaf 1's last. */
	ck_assert_int_eq(topoml_spares_last(t, v, 6, 4), 4);
	ck_assert_int_eq(v[0], 4);
	ck_assert_int_eq(v[1], 8);
	ck_assert_int_eq(v[2], 0);
	ck_assert_int_eq(v[3], 1);
	ck_assert_int_eq(v[4], 2);
	ck_assert_int_eq(v[5], 5);
	/* Nothing to keep: k >= n or k < 1 leaves the order. */
	memcpy(v, job, sizeof(v));
	ck_assert_int_eq(topoml_spares_last(t, v, 6, 6), 0);
	ck_assert_int_eq(topoml_spares_last(t, v, 6, 0), 0);
	ck_assert(!memcmp(v, job, sizeof(v)));
	topoml_free(t);
	/* SystemComment: spares= written and read back, junk refused. */
	memset(&c, 0, sizeof(c));
	c.placed = "topoml";
	c.global_hops = -1;
	c.spares = 2;
	c.order = (char *)"n[1-6]";
	{
		char *s = topoml_comment_write(&c);

		ck_assert_ptr_nonnull(strstr(s, " spares=2 order=n[1-6]"));
		ck_assert_int_eq(topoml_comment_parse(s, &c, err,
						      sizeof(err)), 0);
		ck_assert_int_eq(c.spares, 2);
		topoml_comment_clear(&c);
		free(s);
	}
	ck_assert_int_eq(topoml_comment_parse("topoml: placed=topoml "
					      "spares=x", &c, err,
					      sizeof(err)), -1);
	ck_assert_str_eq(err, "spares: not 0-1024");
}
END_TEST

/* Cost by kind on a generated fat tree: 16 nodes, 4 per leaf. */
START_TEST(hybrid_cost)
{
	topoml_topo_t *t = topoml_gen_fat_tree("n", 16, 4, 2, 0);
	struct topoml_parallel p;
	struct topoml_hybrid_cost c;
	double w[TOPOML_KIND_COUNT];
	int nodes[16], rev[16];
	char err[128];

	ck_assert_ptr_nonnull(t);
	for (int i = 0; i < 16; i++) {
		nodes[i] = i;
		rev[i] = (i % 4) * 4 + i / 4;	/* one node per leaf in turn */
	}
	topoml_kind_weights_default(w);
	ck_assert(!topoml_kind_weights_parse("dp=2,pp=0.5", w, err,
					     sizeof(err)));
	ck_assert(w[TOPOML_KIND_DP] == 2 && w[TOPOML_KIND_TP] == 16);
	ck_assert_int_eq(topoml_kind_weights_parse("zz=1", w, err,
						   sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown kind 'zz'"));
	/* 64 ranks, 4 a node: tp=4 fills a node, pp=4 a leaf each stage */
	ck_assert(!topoml_parallel_parse("tp=4,pp=4", &p, err, sizeof(err)));
	ck_assert(!topoml_parallel_resolve(&p, 64, err, sizeof(err)));
	ck_assert(!topoml_hybrid_cost(t, nodes, 16, 4, &p, w, &c));
	ck_assert_int_eq(c.kind[TOPOML_KIND_TP].steps, 64);
	ck_assert_int_eq(c.kind[TOPOML_KIND_TP].off_node, 0);
	/* DP rings of 4 nodes stay in their stage's leaf */
	ck_assert_int_eq(c.kind[TOPOML_KIND_DP].steps, 64);
	ck_assert_int_eq(c.kind[TOPOML_KIND_DP].off_node, 64);
	ck_assert_int_eq(c.kind[TOPOML_KIND_DP].cross_leaf, 0);
	/* 3 stage boundaries x 16 pairs, each between two leaves */
	ck_assert_int_eq(c.kind[TOPOML_KIND_PP].steps, 48);
	ck_assert_int_eq(c.kind[TOPOML_KIND_PP].cross_leaf, 48);
	/* the same job with the nodes spread over the leaves: DP crosses */
	ck_assert(!topoml_hybrid_cost(t, rev, 16, 4, &p, w, &c));
	ck_assert_int_eq(c.kind[TOPOML_KIND_TP].off_node, 0);
	ck_assert_int_eq(c.kind[TOPOML_KIND_DP].cross_leaf, 64);
	/* 2 tasks a node: every TP group spans two nodes */
	ck_assert(!topoml_parallel_parse("tp=4,pp=2", &p, err, sizeof(err)));
	ck_assert(!topoml_parallel_resolve(&p, 32, err, sizeof(err)));
	ck_assert(!topoml_hybrid_cost(t, nodes, 16, 2, &p, w, &c));
	ck_assert_int_eq(c.kind[TOPOML_KIND_TP].off_node, 16);
	ck_assert_int_eq(topoml_hybrid_cost(t, nodes, 16, 3, &p, w, &c), -1);
	/*
	 * 16 ranks, 4 a node, tp=2,cp=2,ep=2: dp=4.  CP rings of 2 per
	 * (tp, dp): 2 x 4 x 2 transfers; EP: for each tp, 8 (cp, dp) slots in
	 * 4 groups of 2, one pair each: 2 x 4; no PP.
	 */
	ck_assert(!topoml_parallel_parse("tp=2,cp=2,ep=2", &p, err,
					 sizeof(err)));
	ck_assert(!topoml_parallel_resolve(&p, 16, err, sizeof(err)));
	ck_assert_int_eq(p.dp, 4);
	ck_assert(!topoml_hybrid_cost(t, nodes, 4, 4, &p, w, &c));
	ck_assert_int_eq(c.kind[TOPOML_KIND_CP].steps, 16);
	ck_assert_int_eq(c.kind[TOPOML_KIND_EP].steps, 8);
	ck_assert_int_eq(c.kind[TOPOML_KIND_PP].steps, 0);
	/* ranks 0-3 on node 0: tp 0..1 x cp 0..1 of dp 0 stay there */
	ck_assert_int_eq(c.kind[TOPOML_KIND_CP].off_node, 0);
	/* EP slots 2k, 2k+1 = (cp 0/1, dp k): one node each */
	ck_assert_int_eq(c.kind[TOPOML_KIND_EP].off_node, 0);
	ck_assert_int_eq(c.kind[TOPOML_KIND_DP].off_node, 16);
	topoml_free(t);
}
END_TEST

/*
 * topoml_place_hybrid: 3 leaves of 4 nodes, each leaf one NVLink domain,
 * n1 busy.  A 6-node job with tensor groups of 2 nodes (tp=8, 4 tasks a
 * node) needs an even count in each domain it uses.
 */
START_TEST(place_hybrid_domains)
{
	static const char json[] =
		"{ \"family\": \"fat-tree\", \"switches\": ["
		"{ \"name\": \"l1\", \"nodes\": \"n[1-4]\", "
		"\"nvlink_domain\": \"d1\" },"
		"{ \"name\": \"l2\", \"nodes\": \"n[5-8]\", "
		"\"nvlink_domain\": \"d2\" },"
		"{ \"name\": \"l3\", \"nodes\": \"n[9-12]\", "
		"\"nvlink_domain\": \"d3\" },"
		"{ \"name\": \"s\", \"switches\": \"l[1-3]\" } ] }";
	char path[] = "/tmp/topoml-hyb-XXXXXX", why[256];
	topoml_errors_t err = { 0 };
	struct topoml_place_req req = { .nnodes = 6 };
	struct topoml_placement plain = { 0 }, hyb = { 0 };
	struct topoml_hybrid_cost hc;
	struct topoml_parallel p;
	double w[TOPOML_KIND_COUNT];
	hwloc_bitmap_t avail = hwloc_bitmap_alloc(), seen;
	topoml_topo_t *t;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert(write(fd, json, sizeof(json) - 1) ==
		  (ssize_t)(sizeof(json) - 1));
	close(fd);
	t = topoml_load(path, TOPOML_FMT_AUTO, &err);
	unlink(path);
	ck_assert_msg(t != NULL, "%s", err.n ? err.msg[0] : "?");
	ck_assert_int_eq(t->nnvl, 3);
	hwloc_bitmap_set_range(avail, 1, 11);	/* n1 busy */
	req.avail = avail;
	topoml_kind_weights_default(w);
	ck_assert(!topoml_parallel_parse("tp=8", &p, why, sizeof(why)));
	ck_assert(!topoml_parallel_resolve(&p, 24, why, sizeof(why)));
	ck_assert(!topoml_place(t, TOPOML_POLICY_TOPOML, &req, &plain, why,
				sizeof(why)));
	ck_assert_msg(!topoml_place_hybrid(t, &req, &p, 4, w, &hyb, &hc, why,
					   sizeof(why)), "%s", why);
	ck_assert_int_eq(hyb.n, 6);
	seen = hwloc_bitmap_alloc();
	for (int i = 0; i < hyb.n; i++) {
		ck_assert(hwloc_bitmap_isset(avail, hyb.nodes[i]));
		ck_assert(!hwloc_bitmap_isset(seen, hyb.nodes[i]));
		hwloc_bitmap_set(seen, hyb.nodes[i]);
	}
	/* no tensor group across domains, still 2 leaves */
	ck_assert_int_eq(topoml_hybrid_tp_split(t, hyb.nodes, hyb.n, 4, &p),
			 0);
	ck_assert_int_eq(hc.kind[TOPOML_KIND_TP].cross_nvl, 0);
	ck_assert_int_eq(hyb.score.span, 2);
	fprintf(stderr, "place_hybrid_domains: engine alone splits %ld "
		"tensor groups, hybrid 0\n", topoml_hybrid_tp_split(
		t, plain.nodes, plain.n, 4, &p));
	/* sizes that do not fit the job are refused */
	topoml_placement_clear(&hyb);	/* an output: reset by the call */
	ck_assert(!topoml_parallel_parse("tp=8", &p, why, sizeof(why)));
	ck_assert(!topoml_parallel_resolve(&p, 16, why, sizeof(why)));
	ck_assert_int_eq(topoml_place_hybrid(t, &req, &p, 4, w, &hyb, NULL,
					     why, sizeof(why)), -1);
	topoml_placement_clear(&plain);
	topoml_placement_clear(&hyb);
	hwloc_bitmap_free(seen);
	hwloc_bitmap_free(avail);
	topoml_errors_clear(&err);
	topoml_free(t);
}
END_TEST

/* ---- NCCL topology XML --------------------------------------------- */

static int _count(const char *s, const char *needle)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static char *_nccl_xml(const char *xml, struct hw_node **np)
{
	char err[512], *buf = NULL;
	size_t len = 0;
	hwloc_topology_t topo = hw_hwloc_load(xml, err, sizeof(err));
	struct hw_node *n = hw_node_new();
	FILE *f = open_memstream(&buf, &len);

	ck_assert_msg(topo != NULL, "%s", err);
	ck_assert(!hw_node_from_hwloc(n, topo, err, sizeof(err)));
	ck_assert(!hw_write_nccl_topo(topo, n, f));
	fclose(f);
	hwloc_topology_destroy(topo);
	*np = n;
	return buf;
}

START_TEST(nccl_topo_synthetic)
{
	struct hw_node *n;
	char *x = _nccl_xml(_fixture("synth-2s8g4n.xml"), &n);

	ck_assert_msg(!strncmp(x, "<system version=\"1\">\n", 21), "%s", x);
	ck_assert_int_eq(_count(x, "<cpu numaid="), 2);
	ck_assert_int_eq(_count(x, "</cpu>"), 2);
	ck_assert_int_eq(_count(x, "class=\"0x030200\""), 8);
	ck_assert_int_eq(_count(x, "class=\"0x020700\""), 5);
	/* Each PCIe switch is one <pci> holding its GPUs and HCA. */
	ck_assert_int_eq(_count(x, "class=\"0x060400\""), 4);
	ck_assert_int_eq(_count(x, "<pci "), _count(x, "/>") +
			 _count(x, "</pci>"));
	ck_assert_msg(strstr(x, "<cpu numaid=\"1\" affinity=\"ffff0000\""),
		      "%s", x);
	ck_assert(strstr(x, "busid=\"0000:53:00.0\" class=\"0x030200\" "
			 "vendor=\"0x10de\""));
	ck_assert(strstr(x, "link_speed=\"16 GT/s\" link_width=\"16\""));
	free(x);
	hw_node_free(n);

	/* RCCL reads the same file: AMD GCDs and Slingshot NICs in it. */
	x = _nccl_xml(_fixture("synth-mi250x.xml"), &n);
	ck_assert_int_eq(_count(x, "<cpu numaid="), 4);
	ck_assert_int_eq(_count(x, "class=\"0x038000\" vendor=\"0x1002\""),
			 8);
	ck_assert_int_eq(_count(x, "class=\"0x020000\" vendor=\"0x17db\""),
			 4);
	free(x);
	hw_node_free(n);
}
END_TEST

START_TEST(nccl_topo_real)
{
	char xml[4200];
	struct hw_node *n;
	char *x;

	snprintf(xml, sizeof(xml), "%s/hwloc_xml/psmgmt_topo.jrc0386.xml",
		 _realdata);
	if (!_realdata[0] || access(xml, R_OK)) {
		printf("SKIP nccl_topo_real: %s absent\n", xml);
		return;
	}
	x = _nccl_xml(xml, &n);
	ck_assert_int_eq(_count(x, "class=\"0x030200\""), 4);
	ck_assert_int_eq(_count(x, "class=\"0x020700\""), 4);
	ck_assert_int_eq(_count(x, "<cpu numaid="), _count(x, "</cpu>"));
	ck_assert_int_eq(_count(x, "<pci "), _count(x, "/>") +
			 _count(x, "</pci>"));
	ck_assert(strstr(x, "vendor=\"AuthenticAMD\""));
	free(x);
	hw_node_free(n);
}
END_TEST

/* Every (element, attribute) of the XML text, as "elem.attr" lines. */
static void _vocabulary(const char *x, char ***out, int *n)
{
	for (const char *p = x; (p = strchr(p, '<')); ) {
		char elem[64];
		int len = 0;

		p++;
		if (sscanf(p, "%63[a-z]%n", elem, &len) != 1) {
			continue;
		}
		p += len;
		while (*p && *p != '>') {
			char attr[64];
			int l2 = 0;

			if (sscanf(p, " %63[a-z_]=\"%n", attr, &l2) == 1 && l2) {
				*out = realloc(*out, sizeof(char *) * (*n + 1));
				if (asprintf(&(*out)[*n], "%s.%s", elem, attr) > 0)
					(*n)++;
				p += l2;
				p = strchr(p, '"');
				if (!p)
					return;
			}
			p++;
		}
	}
}

static char *_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* What we write uses only elements and attributes NCCL's own topology
 * files use (../shared/realdata/nccl_topo_xml). */
START_TEST(nccl_topo_vocabulary)
{
	char dir[4200], path[8400];
	char **known = NULL, **ours = NULL;
	int nk = 0, no = 0, files = 0;
	struct dirent *de;
	struct hw_node *n;
	DIR *d;
	char *x;

	snprintf(dir, sizeof(dir), "%s/nccl_topo_xml", _realdata);
	if (!_realdata[0] || !(d = opendir(dir))) {
		printf("SKIP nccl_topo_vocabulary: %s absent\n", dir);
		return;
	}
	while ((de = readdir(d))) {
		char *text;

		if (!strstr(de->d_name, ".xml"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if ((text = _slurp(path))) {
			_vocabulary(text, &known, &nk);
			files++;
			free(text);
		}
	}
	closedir(d);
	ck_assert_int_gt(files, 0);
	x = _nccl_xml(_fixture("synth-2s8g4n.xml"), &n);
	_vocabulary(x, &ours, &no);
	ck_assert_int_gt(no, 10);
	for (int i = 0; i < no; i++) {
		bool found = false;

		for (int k = 0; k < nk && !found; k++)
			found = !strcmp(ours[i], known[k]);
		ck_assert_msg(found, "%s is in no NCCL topology file of %s",
			      ours[i], dir);
	}
	for (int i = 0; i < no; i++)
		free(ours[i]);
	for (int k = 0; k < nk; k++)
		free(known[k]);
	free(ours);
	free(known);
	free(x);
	hw_node_free(n);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("spank");
	TCase *t = tcase_create("conf");

	tcase_add_test(t, conf_defaults);
	tcase_add_test(t, conf_all_keys);
	tcase_add_loop_test(t, conf_rejects, 0,
			    sizeof(_bad_conf) / sizeof(_bad_conf[0]));
	tcase_add_test(t, opt_values);
	tcase_add_test(t, opt_table);
	tcase_add_test(t, parse_lists);
	tcase_add_test(t, master_port);
	tcase_add_test(t, hosts_from_job_env);
	tcase_add_test(t, spares_opt);
	tcase_add_test(t, spares_last);
	suite_add_tcase(s, t);

	t = tcase_create("hw");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, model_synthetic);
	tcase_add_test(t, model_no_sysfs);
	tcase_add_test(t, model_verbs);
	tcase_add_test(t, model_cache_roundtrip);
	tcase_add_test(t, model_cache_errors);
	tcase_add_test(t, model_cache_untrusted);
	tcase_add_test(t, hwloc_bad_xml);
	tcase_add_test(t, bind_pool_and_sharing);
	tcase_add_test(t, bind_no_gpu);
	tcase_add_test(t, expected_bindings);
	tcase_add_test(t, nvml_nvswitch);
	tcase_add_test(t, nvml_pairs);
	tcase_add_test(t, nvml_down_links);
	tcase_add_test(t, nvml_failures);
	tcase_add_test(t, mpibind_expected);
	tcase_add_test(t, amd_model);
	tcase_add_test(t, amd_rsmi);
	tcase_add_test(t, amd_env);
	tcase_add_test(t, bind_blocks_uneven);
	tcase_add_test(t, bind_greedy);
	tcase_add_test(t, device_index);
	tcase_add_test(t, env_nccl);
	tcase_add_test(t, env_torch);
	tcase_add_test(t, parallel_spec);
	tcase_add_test(t, env_parallel);
	tcase_add_test(t, hybrid_cost);
	tcase_add_test(t, place_hybrid_domains);
	tcase_add_test(t, nccl_topo_synthetic);
	tcase_add_test(t, nccl_topo_real);
	tcase_add_test(t, nccl_topo_vocabulary);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(_suite());
	int failed;

	_paths();
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
