/*
 * topoml SPANK plugin: site configuration, option values, per-task
 * bindings and the environment they produce.  Everything here is pure C
 * (no SPANK calls), so the tests drive it without Slurm.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SPANK_ML_H
#define TOPOML_SPANK_ML_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw.h"
#include "topoml.h"

/* Option ids, also the index of each option in the option table. */
enum ml_opt {
	ML_OPT_GPU_BIND = 0,
	ML_OPT_NCCL,
	ML_OPT_RANK_ORDER,
	ML_OPT_COMM,
	ML_OPT_CKPT,
	ML_OPT_PARALLEL,	/* --ml-parallel: libtopoml parses it */
	ML_OPT_SPARES,		/* --ml-spares=K: the last K nodes wait */
	ML_OPT_PREFLIGHT,	/* --ml-preflight[=quick]: node checks */
	ML_OPT_COUNT
};

enum ml_gpu_bind { ML_GPU_BIND_NONE = 0, ML_GPU_BIND_AUTO, ML_GPU_BIND_NVLINK };
enum ml_nccl { ML_NCCL_OFF = 0, ML_NCCL_AUTO };
enum ml_rank_order { ML_RANK_SLURM = 0, ML_RANK_TOPOLOGY };
/* --ml-comm is select/topoml's placement hint: libtopoml's values. */
enum ml_comm {
	ML_COMM_ALLREDUCE = TOPOML_HINT_ALLREDUCE,
	ML_COMM_ALLTOALL = TOPOML_HINT_ALLTOALL,
	ML_COMM_ISOLATE = TOPOML_HINT_ISOLATE,
	ML_COMM_COUNT
};
enum ml_preflight { ML_PREFLIGHT_OFF = 0, ML_PREFLIGHT_QUICK,
		   ML_PREFLIGHT_FULL };
enum ml_nccl_topo { ML_TOPO_OFF = 0, ML_TOPO_AUTO, ML_TOPO_GENERATE,
		    ML_TOPO_FILE };

#define ML_MAX_DEFAULTS 32

#define ML_STRAGGLER_KEYS 4

struct ml_conf {
	char hwloc_xml[PATH_MAX];	/* admin override of discovery */
	char cache_dir[PATH_MAX];	/* model cache written by slurmd */
	char topology[PATH_MAX];	/* site topology for rank order */
	char nvml_lib[PATH_MAX];
	char rsmi_lib[PATH_MAX];	/* ROCm SMI, for xGMI islands */
	char sysfs_root[PATH_MAX];
	int port_lo, port_hi;		/* MASTER_PORT range */
	int def[ML_OPT_COUNT];		/* site defaults, -1 = none */
	unsigned allow[ML_OPT_COUNT];	/* bit per value allowed */
	char socket_ifname[256];	/* "" = from the task's HCA */
	int gid_index;			/* -1 auto, -2 off */
	int gdr_level;			/* -1 auto, 0 off, else enum hw_path */
	int nccl_topo;			/* enum ml_nccl_topo */
	char nccl_topo_file[PATH_MAX];
	bool bind_cpus;
	bool rails;			/* rail-optimised fabric: rails=yes */
	int max_spares;			/* --ml-spares limit, 0: refused */
	long pf_ib_rate;		/* preflight_ib_rate, Mb/s: -1 auto,
					 * 0 off */
	int pf_requeue;			/* preflight_requeue: most restarts
					 * for a requeue without the node */
	double pf_outlier;		/* preflight_outlier: full's limit
					 * against the job's median */
	double pf_ring_outlier;		/* preflight_ring_outlier: for the
					 * ring streams */
	int pf_ring_mb;			/* preflight_ring_mb: full's stream */
	/* straggler_every=, _threshold=, _window=, on_straggler=: the
	 * site's defaults for the job's TOPOML_STRAGGLER_* (the job's own
	 * values win), "NAME=VALUE" each, "" = none */
	char straggler_env[ML_STRAGGLER_KEYS][64];
	int ndefaults;			/* nccl_env=NAME=VALUE */
	char defaults[ML_MAX_DEFAULTS][512];
};

/*
 * conf.c: the option table (--ml-* names, values, TOPOML_* twins, --help
 * text, plugstack.conf keys) and the plugstack.conf parser that reads it.
 */
void ml_conf_init(struct ml_conf *c);
/* plugstack.conf arguments; unknown keys and bad values are errors. */
int ml_conf_parse(struct ml_conf *c, int ac, char **av, char *err,
		  size_t errlen);
const char *ml_opt_name(int opt);		/* "ml-gpu-bind" */
const char *ml_opt_env(int opt);		/* "TOPOML_GPU_BIND" */
const char *ml_opt_value_name(int opt, int val);
/* Parse one option value and check it against the site limits. */
int ml_opt_parse(const struct ml_conf *c, int opt, const char *arg,
		 int *val, char *err, size_t errlen);
/* Values for --help: "auto|nvlink|none". */
const char *ml_opt_arginfo(int opt);
/* --help text, without the "[topoml]" tag and the env twin. */
const char *ml_opt_usage(int opt);
/* --ml-spares=K against the site's max_spares.  0, or -1 with err. */
int ml_spares_parse(const struct ml_conf *c, const char *arg, int *k,
		    char *err, size_t errlen);

/* bind.c */
struct ml_task_bind {
	int ngpus;
	int *gpus;			/* model GPU indices, own first */
	bool amd;			/* ROCR_VISIBLE_DEVICES, not CUDA_ */
	char cuda_visible[1024];	/* CUDA_/ROCR_VISIBLE_DEVICES, "" = none */
	char local_gpus[256];		/* own devices within that list */
	hwloc_bitmap_t cpuset;		/* empty = do not bind */
	int nic;			/* primary HCA, -1 none */
	char ib_hca[1024];		/* NCCL_IB_HCA value */
	char cxi[256];			/* FI_CXI_DEVICE_NAME (Slingshot) */
	bool cxi_primary;		/* the primary NIC is Slingshot */
	int gdr_path;			/* GPU <-> primary HCA */
	char netdev[HW_NAME_LEN];
	bool roce;
	int gid_index;
};

/*
 * Bindings of ntasks local tasks.  pool: model GPU indices the step may
 * use (NULL = all GPUs of the node).  out has ntasks entries; free with
 * ml_bind_free.  0 or -1 + err.
 */
int ml_bind_compute(const struct hw_node *n, enum ml_gpu_bind mode,
		    int ntasks, const int *pool, int npool,
		    struct ml_task_bind *out, char *err, size_t errlen);
void ml_bind_free(struct ml_task_bind *b, int ntasks);
/* One line per task, the format of the expected-binding files. */
void ml_bind_print(const struct hw_node *n, const struct ml_task_bind *b,
		   int ntasks, FILE *f);

/* env.c */
struct ml_env {
	int n;
	char **name;
	char **value;
};

struct ml_job {
	uint32_t jobid;
	int node_rank;			/* in rank order */
	int nnodes;
	int local_rank, local_size;
	int rank, world_size;
	char master_addr[256];
	int master_port;
};

void ml_env_add(struct ml_env *e, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *ml_env_get(const struct ml_env *e, const char *name);
void ml_env_clear(struct ml_env *e);
/*
 * MASTER_PORT of a step: the first of Slurm's reserved ports (RESV, the
 * step's SLURM_STEP_RESV_PORTS, with MpiParams=ports= in slurm.conf) when
 * it holds one, else from job and step id within the site range.
 */
int ml_master_port(const struct ml_conf *c, uint32_t jobid, uint32_t stepid,
		   const char *resv);
/* The first port of a reserved-port list ("12000-12003,12010"), or -1. */
int ml_resv_port(const char *resv);
/* Rank of each node and the first task of each, for --ml-rank-order. */
void ml_env_torch(const struct ml_job *j, struct ml_env *e);
void ml_env_gpu(const struct ml_task_bind *b, struct ml_env *e);
/*
 * --ml-parallel: the group sizes (TOPOML_TP, _PP, _DP, _EP, _CP) and this
 * rank's place in them (TOPOML_TP_RANK, ...), Megatron-LM's order.
 */
void ml_env_parallel(const struct topoml_parallel *p, int rank,
		     struct ml_env *e);
/* The variable that lists a task's devices on this node. */
const char *ml_visible_var(const struct ml_task_bind *b);
/* TOPOML_DEVICE from a TOPOML_LOCAL_GPUS value: its first entry. */
void ml_env_device(const char *local_gpus, struct ml_env *e);
/*
 * Own GPUs of a task within a visible-devices list someone else set
 * (Slurm's GRES or the user): VISIBLE as found in the task's environment,
 * POOL/NPOOL the step's GPUs (model indices, from SLURM_STEP_GPUS etc.;
 * FROM_SLURM when they came from Slurm's lists).  Writes "2,3" to OWN.
 * 0, or -1 when the list does not say where the task's GPUs are.
 */
int ml_own_in_visible(const struct hw_node *n, const struct ml_task_bind *b,
		      const char *visible, const int *pool, int npool,
		      bool from_slurm, char *own, size_t ownlen);
void ml_env_nccl(const struct ml_conf *c, const struct hw_node *n,
		 const struct ml_task_bind *b, bool cpus_bound,
		 const char *topo_file, struct ml_env *e);
/* Slurm's compressed task counts "4(x2),3" -> counts[]; -1 on error. */
int ml_parse_tasks_per_node(const char *s, int *counts, int max);
/* A plain list of GPU indices "0,2,3" -> model indices; -1 on error. */
int ml_parse_gpu_list(const struct hw_node *n, const char *s, int *pool,
		      int max);
/*
 * The host names of a Slurm host list from the job's environment
 * (SLURM_STEP_NODELIST...: the user's to set), at most MAX of them, in
 * order; NULL (*n = 0) when LIST is not a host list or holds more.
 * Free with ml_hosts_free.
 */
char **ml_hosts(const char *list, int max, int *n);
void ml_hosts_free(char **names, int n);

/*
 * One task per node that starts its own workers (torchrun
 * --nproc_per_node): what each local worker would get with
 * --ntasks-per-node=nworkers, for topoml-worker(1) to apply.  All
 * ';'-separated, one entry per local rank: TOPOML_WORKER_GPUS (own GPUs
 * as positions in the task's visible list, as TOPOML_LOCAL_GPUS),
 * TOPOML_WORKER_CPUS (CPU lists), TOPOML_WORKER_HCAS (NCCL_IB_HCA
 * values), TOPOML_WORKER_CXI (FI_CXI_DEVICE_NAME values); and torchrun's
 * PET_* defaults for a static rendezvous in ring order.
 */
#define ML_MAX_WORKERS 1024
/* The task's environment: true (value in buf) when NAME is set. */
typedef bool (*ml_getenv_fn)(void *arg, const char *name, char *buf,
			     size_t len);
struct ml_workers {
	const struct hw_node *node;
	enum ml_gpu_bind mode;
	const struct ml_task_bind *task;	/* NULL: no GPU maps */
	const struct ml_job *job;		/* NULL: no PET_* */
	int nworkers;			/* default: its GPUs, or 0 */
	const char *visible;		/* the task's visible list */
	const int *pool;		/* step GPUs (ml_own_in_visible) */
	int npool;
	bool from_slurm;
	bool cpus;			/* the task was bound to its CPUs */
	bool net;			/* --ml-nccl=auto chose its NICs */
	ml_getenv_fn get;		/* TOPOML_WORKERS, NCCL_IB_HCA set? */
	void *arg;
};
/* 0, or -1 (out of memory, or a worker's GPU not in the visible list). */
int ml_env_workers(const struct ml_workers *w, struct ml_env *e);

/* ---- par.c: --ml-parallel=auto and the layout's verdict ------------ */

/* "auto[,model=FILE]" or "tp=T,...[,model=FILE]" (FILE the rest). */
struct ml_par_opt {
	struct topoml_parallel par;	/* tp=...: as given */
	bool automatic;			/* auto: the planner chooses */
	char model[PATH_MAX];		/* "": none */
};
int ml_par_parse(const char *arg, struct ml_par_opt *o, char *err,
		 size_t errlen);
/*
 * The model file PATH (absolute) with the calling thread's file-system
 * identity (ml_cred_enter first), opened by ml_user_file_open with CRED
 * (the user and the job's groups) trusted: no component another user
 * could redirect, a regular file of root or the user, of at most
 * TOPOML_PLAN_FILE_MAX bytes.  Its text (malloc'd, NUL-terminated) and
 * length, or -1 with why.
 */
struct ml_cred;
int ml_model_read(const char *path, const struct ml_cred *cred, char **text,
		  size_t *len, char *err, size_t errlen);
/*
 * The layout the planner chooses for the model file's text on NNODES
 * nodes of GPN GPUs each (one task a GPU; a flat fat tree as topoml plan
 * --nodes builds): 0 with *par resolved and a line for the job's output
 * in NOTE, or -1 with why (with the file's name and line).
 */
int ml_par_auto(const char *text, size_t len, const char *name, int nnodes,
		int gpn, struct topoml_parallel *par, char *note,
		size_t notelen, char *err, size_t errlen);
/*
 * An explicit layout by the model's estimate: 1 when it does not fit
 * memory (NOTE says how much it needs), 0 when it fits, -1 with why.
 */
int ml_par_mem(const char *text, size_t len, const char *name, int nnodes,
	       int gpn, const struct topoml_parallel *par, char *note,
	       size_t notelen, char *err, size_t errlen);
/*
 * The first tensor group over two NVLink domains: COUNTS[i] tasks on the
 * i-th node in rank order, DOM[i] its NVLink domain (-1 or DOM NULL: the
 * node alone).  Its first rank and the two nodes' positions, or -1 when
 * every group stays in one domain.
 */
int ml_tp_split(const int *counts, const int *dom, int n, int tp, int *a,
		int *b);

#endif
