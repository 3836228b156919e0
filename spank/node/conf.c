/*
 * plugstack.conf arguments of topoml.so (key=value, unknown keys rejected)
 * and the values of the --ml-* options with their site limits.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/contract.h"	/* topoml_spares_parse, TOPOML_SPARES_MAX */
#include "ml.h"
#include "topoml.h"

/*
 * The one table of the --ml-* options: the SPANK option table of
 * options.c (name, --help text, env twin) and the plugstack.conf keys
 * below (default_<conf>, allowed_<conf>) are both built from it.
 */
struct _optdesc {
	const char *name;		/* without the leading -- */
	const char *env;		/* the TOPOML_* twin */
	const char *conf;		/* key stem in plugstack.conf, or NULL */
	const char *usage;		/* --help; options.c adds the twin */
	const char *arginfo;		/* NULL: the values in --help order */
	const char *values[4];		/* NULL-terminated, index = value */
	int order[4];			/* --help order of values, -1 ends */
	bool hint;			/* values: libtopoml's hint names */
};

static const struct _optdesc _opts[ML_OPT_COUNT] = {
	[ML_OPT_GPU_BIND] = {
		"ml-gpu-bind", "TOPOML_GPU_BIND", "gpu_bind",
		"GPUs, CPUs and NIC per task: auto (nearest), nvlink (keep "
		"each task's GPUs in one NVLink island), none", NULL,
		{ "none", "auto", "nvlink", NULL },
		{ ML_GPU_BIND_AUTO, ML_GPU_BIND_NVLINK, ML_GPU_BIND_NONE, -1 },
		false },
	[ML_OPT_NCCL] = {
		"ml-nccl", "TOPOML_NCCL", "nccl",
		"NCCL and torch.distributed environment (NCCL_IB_HCA, "
		"MASTER_ADDR, RANK, ...)", NULL,
		{ "off", "auto", NULL },
		{ ML_NCCL_AUTO, ML_NCCL_OFF, -1 }, false },
	[ML_OPT_RANK_ORDER] = {
		"ml-rank-order", "TOPOML_RANK_ORDER", "rank_order",
		"RANK follows the network ring (topology) or Slurm's task ids",
		NULL, { "slurm", "topology", NULL },
		{ ML_RANK_TOPOLOGY, ML_RANK_SLURM, -1 }, false },
	/* The hint select/topoml reads: its names are libtopoml's. */
	[ML_OPT_COMM] = {
		"ml-comm", "TOPOML_COMM", "comm",
		"communication pattern, a placement hint for select/topoml",
		NULL, { NULL },
		{ ML_COMM_ALLREDUCE, ML_COMM_ALLTOALL, ML_COMM_ISOLATE, -1 },
		true },
	[ML_OPT_CKPT] = {
		"ml-ckpt", "TOPOML_CKPT", NULL,
		"checkpoint directory and policy",
		"DIR[,every=STEPS][,interval=SECONDS][,keep=K][,lead=SECONDS]",
		{ NULL }, { -1 }, false },
	/* Sizes of a hybrid job: RANK in Megatron-LM's order (topoml.h). */
	[ML_OPT_PARALLEL] = {
		"ml-parallel", "TOPOML_PARALLEL", NULL,
		"hybrid-parallel group sizes (data parallel is the rest), or "
		"auto: the fastest that fits the model FILE (topoml plan); "
		"RANK in Megatron-LM's order on the placement",
		"auto|tp=T,pp=P[,ep=E][,cp=C][,model=FILE]",
		{ NULL }, { -1 }, false },
	/* Ask -N workers+K: the last K nodes of the ring order wait. */
	[ML_OPT_SPARES] = {
		"ml-spares", "TOPOML_SPARES", NULL,
		"the last K nodes of the job (ring order) are hot spares: no "
		"rank until topoml-run puts one in a failed node's place",
		"K", { NULL }, { -1 }, false },
	/* Given alone (--ml-preflight), quick: options.c. */
	[ML_OPT_PREFLIGHT] = {
		"ml-preflight", "TOPOML_PREFLIGHT", "preflight",
		"before the first task each node checks itself: its GPUs seen "
		"by NVML, no uncorrectable ECC error or pending page "
		"retirement, no thermal or power clock slowdown, NVLink links "
		"and HCA ports up at their speed; full adds a compute probe "
		"and a ring stream over the step's nodes against the job's "
		"median; a failing node fails the step, named in its output",
		NULL, { "off", "quick", "full", NULL },
		{ ML_PREFLIGHT_QUICK, ML_PREFLIGHT_FULL, ML_PREFLIGHT_OFF, -1 },
		false },
};

static bool _valid(int opt)
{
	return opt >= 0 && opt < ML_OPT_COUNT;
}

/* Name of value VAL of option OPT, NULL when there is none. */
static const char *_vname(int opt, int val)
{
	if (val < 0 || val >= 4)
		return NULL;
	if (_opts[opt].hint)
		return val < ML_COMM_COUNT ?
			topoml_hint_name((enum topoml_hint)val) : NULL;
	return _opts[opt].values[val];
}

const char *ml_opt_name(int opt)
{
	return _valid(opt) ? _opts[opt].name : "?";
}

const char *ml_opt_env(int opt)
{
	return _valid(opt) ? _opts[opt].env : "?";
}

const char *ml_opt_usage(int opt)
{
	return _valid(opt) ? _opts[opt].usage : "?";
}

const char *ml_opt_arginfo(int opt)
{
	/* Joined once: the pointer goes into Slurm's option table. */
	static char buf[ML_OPT_COUNT][128];

	if (!_valid(opt))
		return "?";
	if (_opts[opt].arginfo)
		return _opts[opt].arginfo;
	if (!buf[opt][0]) {
		size_t off = 0;

		for (int k = 0; k < 4 && _opts[opt].order[k] >= 0; k++)
			off += snprintf(buf[opt] + off,
					off < sizeof(buf[opt]) ?
					sizeof(buf[opt]) - off : 0, "%s%s",
					k ? "|" : "",
					_vname(opt, _opts[opt].order[k]));
	}
	return buf[opt];
}

const char *ml_opt_value_name(int opt, int val)
{
	const char *s = _valid(opt) ? _vname(opt, val) : NULL;

	return s ? s : "?";
}

/* Exact names only: "ALLTOALL" is refused like before (srun, sbatch). */
static int _value(int opt, const char *s)
{
	for (int v = 0; v < 4 && _vname(opt, v); v++)
		if (!strcmp(s, _vname(opt, v)))
			return v;
	return -1;
}

/* "auto, nvlink or none": the allowed values, in the --help order. */
static void _expected(int opt, unsigned allow, char *buf, size_t len)
{
	const char *names[4];
	int n = 0;
	size_t off = 0;

	buf[0] = '\0';
	for (int k = 0; k < 4 && _opts[opt].order[k] >= 0; k++) {
		int v = _opts[opt].order[k];

		if (allow & (1u << v))
			names[n++] = _vname(opt, v);
	}
	for (int k = 0; k < n; k++)
		off += snprintf(buf + off, off < len ? len - off : 0, "%s%s",
				k == 0 ? "" : k == n - 1 ? " or " : ", ",
				names[k]);
}

int ml_opt_parse(const struct ml_conf *c, int opt, const char *arg,
		 int *val, char *err, size_t errlen)
{
	char exp[128];
	int v;

	if (!_valid(opt) || _opts[opt].order[0] < 0) {
		snprintf(err, errlen, "not a value option");
		return -1;
	}
	v = arg ? _value(opt, arg) : -1;
	if (v < 0) {
		_expected(opt, ~0u, exp, sizeof(exp));
		snprintf(err, errlen, "invalid value '%s' (expected %s)",
			 arg ? arg : "", exp);
		return -1;
	}
	if (c && !(c->allow[opt] & (1u << v))) {
		_expected(opt, c->allow[opt], exp, sizeof(exp));
		snprintf(err, errlen, "'%s' is not allowed on this cluster "
			 "(allowed: %s)", arg, exp);
		return -1;
	}
	*val = v;
	return 0;
}

void ml_conf_init(struct ml_conf *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->cache_dir, sizeof(c->cache_dir), "/run/topoml");
	snprintf(c->nvml_lib, sizeof(c->nvml_lib), "libnvidia-ml.so.1");
	snprintf(c->rsmi_lib, sizeof(c->rsmi_lib), "librocm_smi64.so");
	snprintf(c->sysfs_root, sizeof(c->sysfs_root), "/sys");
	c->port_lo = 29500;
	c->port_hi = 30499;
	for (int i = 0; i < ML_OPT_COUNT; i++) {
		c->def[i] = -1;
		c->allow[i] = ~0u;
	}
	/* The plugin is invisible until a job asks for it. */
	c->def[ML_OPT_GPU_BIND] = ML_GPU_BIND_NONE;
	c->def[ML_OPT_NCCL] = ML_NCCL_OFF;
	c->def[ML_OPT_RANK_ORDER] = ML_RANK_SLURM;
	c->gid_index = -1;
	c->gdr_level = -1;
	c->nccl_topo = ML_TOPO_AUTO;
	c->bind_cpus = true;
	c->max_spares = 64;
	c->def[ML_OPT_PREFLIGHT] = ML_PREFLIGHT_OFF;
	c->pf_ib_rate = -1;
	c->pf_requeue = 2;
	c->pf_outlier = 1.3;
	c->pf_ring_outlier = 2.0;
	c->pf_ring_mb = 32;
}

int ml_spares_parse(const struct ml_conf *c, const char *arg, int *k,
		    char *err, size_t errlen)
{
	int v;

	/* The number select/topoml reads: topology/contract/contract.c
	 * parses both. */
	if (topoml_spares_parse(arg, &v)) {
		snprintf(err, errlen, "invalid value '%s' (expected a number "
			 "of nodes, 0-%d)", arg ? arg : "", TOPOML_SPARES_MAX);
		return -1;
	}
	if (c && v > c->max_spares) {
		snprintf(err, errlen, "%d spares: at most %d on this cluster "
			 "(max_spares in plugstack.conf)", v, c->max_spares);
		return -1;
	}
	*k = v;
	return 0;
}

static int _path(const char *key, const char *v, char *dst, size_t len,
		 char *err, size_t errlen)
{
	if (*v != '/') {
		snprintf(err, errlen, "%s: '%s' is not an absolute path", key, v);
		return -1;
	}
	if (strlen(v) >= len) {
		snprintf(err, errlen, "%s: path too long", key);
		return -1;
	}
	snprintf(dst, len, "%s", v);
	return 0;
}

static int _int(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int _bool(const char *s, bool *out)
{
	if (!strcmp(s, "yes") || !strcmp(s, "1") || !strcmp(s, "true"))
		*out = true;
	else if (!strcmp(s, "no") || !strcmp(s, "0") || !strcmp(s, "false"))
		*out = false;
	else
		return -1;
	return 0;
}

/* "auto,none" -> bit mask of option values. */
static int _allow(int opt, const char *s, unsigned *out)
{
	char *copy = strdup(s), *tok, *save = NULL;
	unsigned m = 0;
	int rc = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int v = _value(opt, tok);

		if (v < 0) {
			rc = -1;
			break;
		}
		m |= 1u << v;
	}
	free(copy);
	if (!m)
		rc = -1;
	*out = m;
	return rc;
}

static int _one(struct ml_conf *c, const char *arg, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	char key[64], exp[128];
	const char *v;
	long n;

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(key)) {
		snprintf(err, errlen, "'%s': expected key=value", arg);
		return -1;
	}
	snprintf(key, sizeof(key), "%.*s", (int)(eq - arg), arg);
	v = eq + 1;

	if (!strcmp(key, "hwloc_xml"))
		return _path(key, v, c->hwloc_xml, sizeof(c->hwloc_xml), err,
			     errlen);
	if (!strcmp(key, "cache_dir"))
		return _path(key, v, c->cache_dir, sizeof(c->cache_dir), err,
			     errlen);
	if (!strcmp(key, "topology"))
		return _path(key, v, c->topology, sizeof(c->topology), err,
			     errlen);
	if (!strcmp(key, "sysfs_root"))
		return _path(key, v, c->sysfs_root, sizeof(c->sysfs_root),
			     err, errlen);
	if (!strcmp(key, "nvml_lib")) {
		if (!*v || strlen(v) >= sizeof(c->nvml_lib))
			goto bad;
		snprintf(c->nvml_lib, sizeof(c->nvml_lib), "%s", v);
		return 0;
	}
	if (!strcmp(key, "rsmi_lib")) {
		if (!*v || strlen(v) >= sizeof(c->rsmi_lib))
			goto bad;
		snprintf(c->rsmi_lib, sizeof(c->rsmi_lib), "%s", v);
		return 0;
	}
	if (!strcmp(key, "master_port")) {
		long lo, hi;
		char *end;

		/*
		 * strtol, not sscanf("%d"): that truncates to int, so
		 * "4294968320-65535" read as 1024-65535.
		 */
		errno = 0;
		lo = isdigit((unsigned char)*v) ? strtol(v, &end, 10) : -1;
		if (lo >= 0 && *end == '-' && isdigit((unsigned char)end[1]))
			hi = strtol(end + 1, &end, 10);
		else
			hi = -1;
		if (errno || hi < 0 || *end || lo < 1024 || hi > 65535 ||
		    lo > hi) {
			snprintf(err, errlen, "master_port: '%s' is not a port "
				 "range LO-HI within 1024-65535", v);
			return -1;
		}
		c->port_lo = (int)lo;
		c->port_hi = (int)hi;
		return 0;
	}
	for (int o = 0; o < ML_OPT_COUNT; o++) {
		char k[64];

		if (!_opts[o].conf)
			continue;
		snprintf(k, sizeof(k), "default_%s", _opts[o].conf);
		if (!strcmp(key, k)) {
			int val = _value(o, v);

			if (val < 0) {
				_expected(o, ~0u, exp, sizeof(exp));
				snprintf(err, errlen, "%s: invalid value '%s' "
					 "(expected %s)", key, v, exp);
				return -1;
			}
			c->def[o] = val;
			return 0;
		}
		snprintf(k, sizeof(k), "allowed_%s", _opts[o].conf);
		if (!strcmp(key, k)) {
			if (_allow(o, v, &c->allow[o])) {
				_expected(o, ~0u, exp, sizeof(exp));
				snprintf(err, errlen, "%s: '%s' is not a comma "
					 "list of %s", key, v, exp);
				return -1;
			}
			return 0;
		}
	}
	if (!strcmp(key, "nccl_socket_ifname")) {
		if (strlen(v) >= sizeof(c->socket_ifname))
			goto bad;
		snprintf(c->socket_ifname, sizeof(c->socket_ifname), "%s", v);
		return 0;
	}
	if (!strcmp(key, "nccl_ib_gid_index")) {
		if (!strcmp(v, "auto"))
			c->gid_index = -1;
		else if (!strcmp(v, "off"))
			c->gid_index = -2;
		else if (_int(v, 0, 255, &n))
			goto bad;
		else
			c->gid_index = (int)n;
		return 0;
	}
	if (!strcmp(key, "nccl_net_gdr_level")) {
		int p;

		if (!strcmp(v, "auto"))
			c->gdr_level = -1;
		else if (!strcmp(v, "off"))
			c->gdr_level = 0;
		else if ((p = hw_path_parse(v)) > 0)
			c->gdr_level = p;
		else
			goto bad;
		return 0;
	}
	if (!strcmp(key, "nccl_topo_file")) {
		if (!strcmp(v, "auto"))
			c->nccl_topo = ML_TOPO_AUTO;
		else if (!strcmp(v, "off"))
			c->nccl_topo = ML_TOPO_OFF;
		else if (!strcmp(v, "generate"))
			c->nccl_topo = ML_TOPO_GENERATE;
		else if (_path(key, v, c->nccl_topo_file,
			       sizeof(c->nccl_topo_file), err, errlen))
			return -1;
		else
			c->nccl_topo = ML_TOPO_FILE;
		return 0;
	}
	if (!strcmp(key, "nccl_env")) {
		const char *e2 = strchr(v, '=');

		/* NCCL's (and RCCL's) variables, and on Slingshot those of
		 * libfabric and of its NCCL/RCCL net plugin. */
		if (!e2 || e2 == v || (strncmp(v, "NCCL_", 5) &&
				       strncmp(v, "FI_", 3) &&
				       strncmp(v, "OFI_NCCL_", 9)) ||
		    c->ndefaults >= ML_MAX_DEFAULTS ||
		    strlen(v) >= sizeof(c->defaults[0])) {
			snprintf(err, errlen, "nccl_env: '%s' is not "
				 "NCCL_NAME=VALUE, FI_NAME=VALUE or "
				 "OFI_NCCL_NAME=VALUE (at most %d)", v,
				 ML_MAX_DEFAULTS);
			return -1;
		}
		snprintf(c->defaults[c->ndefaults++], sizeof(c->defaults[0]),
			 "%s", v);
		return 0;
	}
	if (!strcmp(key, "max_spares")) {
		if (_int(v, 0, TOPOML_SPARES_MAX, &n))
			goto bad;
		c->max_spares = (int)n;
		return 0;
	}
	if (!strcmp(key, "preflight_ib_rate")) {
		/* Gb/s, as sysfs and ibstat give it (HDR: 200). */
		if (!strcmp(v, "auto"))
			c->pf_ib_rate = -1;
		else if (!strcmp(v, "off"))
			c->pf_ib_rate = 0;
		else if (_int(v, 1, 100000, &n))
			goto bad;
		else
			c->pf_ib_rate = n * 1000;
		return 0;
	}
	if (!strcmp(key, "preflight_outlier") ||
	    !strcmp(key, "preflight_ring_outlier")) {
		char *end;
		double f;

		errno = 0;
		f = strtod(v, &end);
		if (errno || end == v || *end || !(f >= 1.05 && f <= 100))
			goto bad;
		if (!strcmp(key, "preflight_ring_outlier"))
			c->pf_ring_outlier = f;
		else
			c->pf_outlier = f;
		return 0;
	}
	if (!strcmp(key, "preflight_ring_mb")) {
		if (_int(v, 1, 1024, &n))
			goto bad;
		c->pf_ring_mb = (int)n;
		return 0;
	}
	if (!strcmp(key, "straggler_every") ||
	    !strcmp(key, "straggler_window") ||
	    !strcmp(key, "straggler_threshold") ||
	    !strcmp(key, "on_straggler")) {
		/* Checked as topoml_ckpt checks them, so that a site value
		 * never makes every job's helper refuse to start. */
		static const char *const keys[ML_STRAGGLER_KEYS] = {
			"straggler_every", "straggler_window",
			"straggler_threshold", "on_straggler" };
		static const char *const envs[ML_STRAGGLER_KEYS] = {
			"TOPOML_STRAGGLER_EVERY", "TOPOML_STRAGGLER_WINDOW",
			"TOPOML_STRAGGLER_THRESHOLD", "TOPOML_ON_STRAGGLER" };
		int k = 0;

		while (strcmp(keys[k], key))
			k++;
		if (k == 0 && _int(v, 0, 1L << 30, &n))
			goto bad;
		if (k == 1 && _int(v, 1, 1L << 30, &n))
			goto bad;
		if (k == 2) {
			char *end;
			double f;

			errno = 0;
			f = strtod(v, &end);
			if (errno || end == v || *end || !(f > 1.0 && f <= 100))
				goto bad;
		}
		if (k == 3 && strcmp(v, "report") && strcmp(v, "replace"))
			goto bad;
		snprintf(c->straggler_env[k], sizeof(c->straggler_env[k]),
			 "%s=%s", envs[k], v);
		return 0;
	}
	if (!strcmp(key, "preflight_requeue")) {
		if (_int(v, 0, 100, &n))
			goto bad;
		c->pf_requeue = (int)n;
		return 0;
	}
	if (!strcmp(key, "rails")) {
		if (_bool(v, &c->rails))
			goto bad;
		return 0;
	}
	if (!strcmp(key, "bind_cpus")) {
		if (_bool(v, &c->bind_cpus))
			goto bad;
		return 0;
	}
	snprintf(err, errlen, "unknown key '%s'", key);
	return -1;
bad:
	snprintf(err, errlen, "%s: invalid value '%s'", key, v);
	return -1;
}

int ml_conf_parse(struct ml_conf *c, int ac, char **av, char *err,
		  size_t errlen)
{
	for (int i = 0; i < ac; i++)
		if (_one(c, av[i], err, errlen))
			return -1;
	for (int o = 0; o < ML_OPT_COUNT; o++)
		if (c->def[o] >= 0 && !(c->allow[o] & (1u << c->def[o]))) {
			snprintf(err, errlen, "default_%s=%s is not in "
				 "allowed_%s", _opts[o].conf,
				 ml_opt_value_name(o, c->def[o]),
				 _opts[o].conf);
			return -1;
		}
	return 0;
}
