/*
 * Environment a task gets: GPU visibility, NCCL and torch.distributed.
 * Built as a list first; the remote context applies it without touching
 * any variable the user already set.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ml.h"
#include "util/util.h"	/* topoml__hostlist_foreach */

/* Add or replace. */
void ml_env_add(struct ml_env *e, const char *name, const char *fmt, ...)
{
	char *val = NULL, **nn, **nv;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&val, fmt, ap) < 0)
		val = NULL;
	va_end(ap);
	if (!val)
		return;
	for (int i = 0; i < e->n; i++)
		if (!strcmp(e->name[i], name)) {
			free(e->value[i]);
			e->value[i] = val;
			return;
		}
	nn = realloc(e->name, sizeof(char *) * (e->n + 1));
	if (nn)
		e->name = nn;
	nv = realloc(e->value, sizeof(char *) * (e->n + 1));
	if (nv)
		e->value = nv;
	if (!nn || !nv || !(e->name[e->n] = strdup(name))) {
		free(val);
		return;
	}
	e->value[e->n++] = val;
}

const char *ml_env_get(const struct ml_env *e, const char *name)
{
	for (int i = 0; i < e->n; i++)
		if (!strcmp(e->name[i], name))
			return e->value[i];
	return NULL;
}

void ml_env_clear(struct ml_env *e)
{
	for (int i = 0; i < e->n; i++) {
		free(e->name[i]);
		free(e->value[i]);
	}
	free(e->name);
	free(e->value);
	memset(e, 0, sizeof(*e));
}

int ml_resv_port(const char *resv)
{
	long v = 0;
	int digits = 0;

	if (!resv)
		return -1;
	if (*resv == '[')
		resv++;
	for (; *resv >= '0' && *resv <= '9' && digits < 6; resv++, digits++)
		v = v * 10 + (*resv - '0');
	if (!digits || v < 1 || v > 65535 ||
	    (*resv && *resv != ',' && *resv != '-' && *resv != ']'))
		return -1;
	return (int)v;
}

static uint32_t _gcd(uint32_t a, uint32_t b)
{
	while (b) {
		uint32_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * Slurm's reserved ports are the only guarantee: slurmctld hands each srun
 * step ports that no other running step holds on any of its nodes (every
 * step gets them once slurm.conf sets MpiParams=ports=LO-HI), so steps and
 * jobs sharing a master node never meet.  Without them, with SIZE ports:
 *	LO + (job id + step id * STRIDE) mod SIZE,
 * STRIDE coprime with SIZE, near SIZE * 0.618.  Step 0 keeps the former
 * per-job port (LO + job id mod SIZE), so the first step of jobs whose ids
 * differ by less than SIZE never collide, and neither do up to SIZE steps
 * of one job.  What remains: job ids that differ by a multiple of SIZE, or
 * step s of job j against step t of job k when j - k = (t - s) * STRIDE
 * mod SIZE; the golden-ratio stride puts those pairs far apart in job id.
 */
int ml_master_port(const struct ml_conf *c, uint32_t jobid, uint32_t stepid,
		   const char *resv)
{
	uint32_t size = (uint32_t)(c->port_hi - c->port_lo + 1), stride;
	int port = ml_resv_port(resv);

	if (port > 0)
		return port;
	if (c->port_hi < c->port_lo)
		return c->port_lo;
	stride = (uint32_t)(size * 0.6180339887);
	if (!stride)
		stride = 1;
	while (_gcd(stride, size) != 1)
		stride++;
	return c->port_lo + (int)(((uint64_t)(jobid % size) +
				   (uint64_t)(stepid % size) * stride) % size);
}

void ml_env_torch(const struct ml_job *j, struct ml_env *e)
{
	if (j->master_addr[0])
		ml_env_add(e, "MASTER_ADDR", "%s", j->master_addr);
	ml_env_add(e, "MASTER_PORT", "%d", j->master_port);
	ml_env_add(e, "WORLD_SIZE", "%d", j->world_size);
	ml_env_add(e, "RANK", "%d", j->rank);
	ml_env_add(e, "LOCAL_RANK", "%d", j->local_rank);
	ml_env_add(e, "LOCAL_WORLD_SIZE", "%d", j->local_size);
	ml_env_add(e, "NODE_RANK", "%d", j->node_rank);
	ml_env_add(e, "GROUP_RANK", "%d", j->node_rank);
}

void ml_env_parallel(const struct topoml_parallel *p, int rank,
		     struct ml_env *e)
{
	int tp, cp, dp, pp;

	topoml_parallel_coords(p, rank, &tp, &cp, &dp, &pp);
	ml_env_add(e, "TOPOML_TP", "%d", p->tp);
	ml_env_add(e, "TOPOML_PP", "%d", p->pp);
	ml_env_add(e, "TOPOML_DP", "%d", p->dp);
	ml_env_add(e, "TOPOML_EP", "%d", p->ep);
	ml_env_add(e, "TOPOML_CP", "%d", p->cp);
	ml_env_add(e, "TOPOML_TP_RANK", "%d", tp);
	ml_env_add(e, "TOPOML_CP_RANK", "%d", cp);
	ml_env_add(e, "TOPOML_DP_RANK", "%d", dp);
	ml_env_add(e, "TOPOML_PP_RANK", "%d", pp);
	/* Expert groups: ep consecutive (cp, dp) slots of a stage. */
	ml_env_add(e, "TOPOML_EP_RANK", "%d", (cp + p->cp * dp) % p->ep);
}

const char *ml_visible_var(const struct ml_task_bind *b)
{
	return b->amd ? "ROCR_VISIBLE_DEVICES" : "CUDA_VISIBLE_DEVICES";
}

/*
 * TOPOML_DEVICE: the one index that is right in every case (issue 15.7):
 * with Slurm's GRES list (--gres=gpu:4 -n2: task 1 sees 0,1,2,3 and owns
 * entries 2,3) LOCAL_RANK is not, nor with more tasks than GPUs.
 */
void ml_env_device(const char *local_gpus, struct ml_env *e)
{
	char *end;
	long v = local_gpus ? strtol(local_gpus, &end, 10) : -1;

	if (local_gpus && end != local_gpus && v >= 0 &&
	    (*end == ',' || !*end))
		ml_env_add(e, "TOPOML_DEVICE", "%ld", v);
	else
		ml_env_add(e, "TOPOML_DEVICE", "%s", "");
}

void ml_env_gpu(const struct ml_task_bind *b, struct ml_env *e)
{
	if (!b->cuda_visible[0])
		return;
	/*
	 * ROCm: ROCR_VISIBLE_DEVICES only, as Slurm's GRES with
	 * Flags=amd_gpu_env; HIP_VISIBLE_DEVICES (and HIP's reading of
	 * CUDA_VISIBLE_DEVICES) would index a second time into what ROCr
	 * left visible.
	 */
	ml_env_add(e, ml_visible_var(b), "%s", b->cuda_visible);
	/* Our indices are PCI bus order, as NVML's. */
	if (!b->amd)
		ml_env_add(e, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
	ml_env_add(e, "TOPOML_LOCAL_GPUS", "%s", b->local_gpus);
	ml_env_device(b->local_gpus, e);
}

/* "0,1,3" -> list; -1 when it is not a plain list of indices. */
static int _int_list(const char *s, int *list, int max)
{
	int n = 0;

	while (*s) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s || v < 0 || v > 1 << 20 || n >= max ||
		    (*end && *end != ','))
			return -1;
		list[n++] = (int)v;
		s = *end ? end + 1 : end;
	}
	return n;
}

int ml_own_in_visible(const struct hw_node *n, const struct ml_task_bind *b,
		      const char *visible, const int *pool, int npool,
		      bool from_slurm, char *own, size_t ownlen)
{
	int list[256], nl, *sorted = NULL, rc = -1;
	bool same = true, by_pos;
	size_t off = 0;

	own[0] = '\0';
	nl = _int_list(visible, list, 256);
	if (nl <= 0 || !b->ngpus)
		return -1;
	/*
	 * Slurm lists the step's GPUs (SLURM_STEP_GPUS, global indices) and
	 * the task's visible devices in the same order; with
	 * ConstrainDevices the latter are renumbered from 0.  So when the
	 * visible list is not the step's indices themselves, entry i is
	 * the step's i-th GPU.
	 */
	if (from_slurm && npool == nl) {
		sorted = malloc(sizeof(int) * npool);
		if (!sorted)
			return -1;
		memcpy(sorted, pool, sizeof(int) * npool);
		for (int i = 1; i < npool; i++)
			for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
				int t = sorted[j];

				sorted[j] = sorted[j - 1];
				sorted[j - 1] = t;
			}
		for (int i = 0; i < nl; i++) {
			bool found = false;

			for (int j = 0; j < npool; j++)
				found |= n->gpus[sorted[j]].index == list[i];
			same &= found;
		}
	}
	by_pos = sorted && !same;
	for (int k = 0; k < b->ngpus; k++) {
		int pos = -1, want = n->gpus[b->gpus[k]].index;

		for (int i = 0; i < nl && pos < 0; i++)
			if (by_pos ? sorted[i] == b->gpus[k] : list[i] == want)
				pos = i;
		if (pos < 0 && nl == 1 && !k) {
			/* One device only (Slurm's --gpu-bind, or the
			 * user's choice): whatever it is, it is entry 0. */
			snprintf(own, ownlen, "0");
			rc = 0;
			goto out_keep;
		}
		if (pos < 0)
			goto out;
		off += snprintf(own + off, off < ownlen ? ownlen - off : 0,
				"%s%d", k ? "," : "", pos);
	}
	rc = off < ownlen ? 0 : -1;
out:
	if (rc)
		own[0] = '\0';
out_keep:
	free(sorted);
	return rc;
}

/* HCAs NCCL's IB transport can use: verbs devices with a port active
 * or of unknown state (as bind.c counts them). */
static int _verbs_nics(const struct hw_node *n)
{
	int k = 0;

	for (int j = 0; j < n->nnics; j++) {
		bool up = false;

		for (int p = 0; p < n->nics[j].nports; p++)
			up |= n->nics[j].ports[p].state == 0 ||
			      n->nics[j].ports[p].state == 4;
		k += n->nics[j].kind == HW_NIC_VERBS && up;
	}
	return k;
}

void ml_env_nccl(const struct ml_conf *c, const struct hw_node *n,
		 const struct ml_task_bind *b, bool cpus_bound,
		 const char *topo_file, struct ml_env *e)
{
	if (b->ib_hca[0])
		ml_env_add(e, "NCCL_IB_HCA", "=%s", b->ib_hca);
	/*
	 * Slingshot: RCCL/NCCL reach it through the OFI (libfabric) net
	 * plugin: the cxi provider, restricted to the NICs nearest to the
	 * task's GPUs (one per GPU, as NCCL_IB_HCA for verbs); its hsn
	 * interface carries NCCL's bootstrap.  GPUDirect RDMA through the
	 * host bridge is what HPE and AMD recommend (PHB).
	 */
	if (b->cxi[0]) {
		ml_env_add(e, "FI_PROVIDER", "cxi");
		ml_env_add(e, "FI_CXI_DEVICE_NAME", "%s", b->cxi);
	}
	if (c->socket_ifname[0])
		ml_env_add(e, "NCCL_SOCKET_IFNAME", "%s", c->socket_ifname);
	else if ((b->roce || b->cxi_primary) && b->netdev[0])
		ml_env_add(e, "NCCL_SOCKET_IFNAME", "=%s", b->netdev);
	if (c->gdr_level > 0)
		ml_env_add(e, "NCCL_NET_GDR_LEVEL", "%s",
			   hw_path_name(c->gdr_level));
	else if (c->gdr_level < 0 && b->nic >= 0 &&
		 (b->gdr_path == HW_PATH_PIX || b->gdr_path == HW_PATH_PXB ||
		  (b->cxi_primary && b->gdr_path == HW_PATH_PHB)))
		ml_env_add(e, "NCCL_NET_GDR_LEVEL", "%s",
			   hw_path_name(b->gdr_path));
	/*
	 * Rail-optimised fabric (plugstack rails=yes; topoml import-ib
	 * reports its units): HCA r of every host sits on rail leaf r, and
	 * only same-rail pairs meet below the spines.  NCCL_CROSS_NIC=0
	 * makes NCCL use the same NIC at both ends of each ring and tree
	 * channel, so its inter-node traffic stays on one rail (the default,
	 * 2, may cross rails when it expects that to be faster).  With one
	 * HCA on the node there is no other rail to cross.
	 */
	if (c->rails && b->ib_hca[0] && _verbs_nics(n) > 1)
		ml_env_add(e, "NCCL_CROSS_NIC", "0");
	if (b->roce && c->gid_index >= 0)
		ml_env_add(e, "NCCL_IB_GID_INDEX", "%d", c->gid_index);
	else if (b->roce && c->gid_index == -1 && b->gid_index >= 0)
		ml_env_add(e, "NCCL_IB_GID_INDEX", "%d", b->gid_index);
	if (topo_file && *topo_file)
		ml_env_add(e, "NCCL_TOPO_FILE", "%s", topo_file);
	if (cpus_bound)
		ml_env_add(e, "NCCL_IGNORE_CPU_AFFINITY", "1");
	/* Site defaults from plugstack.conf win over what we derived. */
	for (int i = 0; i < c->ndefaults; i++) {
		const char *eq = strchr(c->defaults[i], '=');
		char name[256];

		snprintf(name, sizeof(name), "%.*s",
			 (int)(eq - c->defaults[i]), c->defaults[i]);
		ml_env_add(e, name, "%s", eq + 1);
	}
}

int ml_parse_tasks_per_node(const char *s, int *counts, int max)
{
	int n = 0;

	while (s && *s) {
		char *end;
		long v = strtol(s, &end, 10), rep = 1;

		/* Slurm's counts are uint16_t; the rest is the job's
		 * environment (the user's) and would wrap in an int. */
		if (end == s || v < 0 || v > UINT16_MAX)
			return -1;
		s = end;
		if (!strncmp(s, "(x", 2)) {
			rep = strtol(s + 2, &end, 10);
			if (end == s + 2 || *end != ')' || rep < 1)
				return -1;
			s = end + 1;
		}
		while (rep-- > 0) {
			if (n >= max)
				return -1;
			counts[n++] = (int)v;
		}
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return n;
}

int ml_parse_gpu_list(const struct hw_node *n, const char *s, int *pool,
		      int max)
{
	int k = 0;

	while (s && *s) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s || v < 0 || v >= n->ngpus || k >= max)
			return -1;
		pool[k++] = (int)v;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return k;
}

struct _hosts {
	char **v;
	int n, max;
};

static int _host(const char *host, void *arg)
{
	struct _hosts *h = arg;

	if (h->n >= h->max || !(h->v[h->n] = strdup(host)))
		return -1;
	h->n++;
	return 0;
}

/*
 * Not libslurm's parser on the string as is: it expands bracket groups as
 * a product ("a[0-9]b[0-9]..." is 10^k names) and may call fatal(), as
 * root in slurmstepd.  topology/model/nodeset.c's walk checks the list
 * and its size first, in linear time, then hands Slurm one checked token
 * at a time.
 */
char **ml_hosts(const char *list, int max, int *n)
{
	struct _hosts h = { .max = max };
	struct topoml_hl_budget b;

	*n = 0;
	if (!list || !*list || max < 1 ||
	    !(h.v = calloc((size_t)max, sizeof(char *))))
		return NULL;
	topoml__hl_budget_init(&b);
	if (b.hosts > max)
		b.hosts = max;
	if (topoml__hostlist_foreach(list, &b, _host, &h) || !h.n) {
		ml_hosts_free(h.v, h.n);
		return NULL;
	}
	*n = h.n;
	return h.v;
}

void ml_hosts_free(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The task's environment: a variable the job or Slurm already set. */
static bool _isset(ml_getenv_fn get, void *arg, const char *name)
{
	char buf[16];

	return get && get(arg, name, buf, sizeof(buf));
}

/* Append one ';'-separated entry to a growing string. */
static int _entry(char **s, size_t *len, int i, const char *v)
{
	size_t add = strlen(v) + 2;
	char *p = realloc(*s, *len + add);

	if (!p)
		return -1;
	*s = p;
	snprintf(p + *len, add, "%s%s", i ? ";" : "", v);
	*len += strlen(p + *len);
	return 0;
}

int ml_env_workers(const struct ml_workers *w, struct ml_env *e)
{
	struct ml_task_bind *wb = NULL;
	char *gpus = NULL, *cpus = NULL, *hcas = NULL, *cxi = NULL;
	size_t lg = 0, lc = 0, lh = 0, lx = 0;
	char buf[1024], hca[1100], err[256];
	bool with_hca, with_cxi;
	int nw = w->nworkers, rc = -1;

	/* The user's count (TOPOML_WORKERS: the job's, so bounded). */
	if (w->get && w->get(w->arg, "TOPOML_WORKERS", buf, sizeof(buf))) {
		char *end;
		long v = strtol(buf, &end, 10);

		nw = end != buf && !*end && v >= 1 && v <= ML_MAX_WORKERS ?
			(int)v : -1;
	} else if (nw > 0) {
		ml_env_add(e, "TOPOML_WORKERS", "%d", nw);
	}
	/* torchrun's defaults (its PET_* variables): a static rendezvous
	 * with this node's ring position, only with one task per node. */
	if (w->job && w->job->world_size == w->job->nnodes) {
		const struct ml_job *j = w->job;

		ml_env_add(e, "PET_NNODES", "%d", j->nnodes);
		ml_env_add(e, "PET_NODE_RANK", "%d", j->node_rank);
		if (j->master_addr[0])
			ml_env_add(e, "PET_MASTER_ADDR", "%s", j->master_addr);
		ml_env_add(e, "PET_MASTER_PORT", "%d", j->master_port);
		if (nw > 0)
			ml_env_add(e, "PET_NPROC_PER_NODE", "%d", nw);
	}
	if (!w->task || !w->task->ngpus || nw < 1 || !w->visible ||
	    !w->visible[0])
		return 0;
	wb = calloc((size_t)nw, sizeof(*wb));
	if (!wb)
		return -1;
	/* As --ntasks-per-node=nw would bind them, on the task's GPUs. */
	if (ml_bind_compute(w->node, w->mode, nw, w->task->gpus,
			    w->task->ngpus, wb, err, sizeof(err))) {
		free(wb);
		return -1;
	}
	with_hca = w->net && !_isset(w->get, w->arg, "NCCL_IB_HCA");
	with_cxi = w->net && !_isset(w->get, w->arg, "FI_CXI_DEVICE_NAME");
	for (int i = 0; i < nw; i++) {
		char own[256];

		/* Own devices as positions in the task's list, which stays
		 * whole (peers visible, as for tasks: bind.c). */
		if (ml_own_in_visible(w->node, &wb[i], w->visible, w->pool,
				      w->npool, w->from_slurm, own,
				      sizeof(own)))
			goto out;
		if (_entry(&gpus, &lg, i, own))
			goto out;
		if (hwloc_bitmap_iszero(wb[i].cpuset))
			buf[0] = '\0';
		else if (hwloc_bitmap_list_snprintf(buf, sizeof(buf),
						    wb[i].cpuset) >=
			 (int)sizeof(buf))
			goto out;
		if (_entry(&cpus, &lc, i, buf))
			goto out;
		/* "=": NCCL's exact-name match, as for tasks. */
		snprintf(hca, sizeof(hca), "%s%s", wb[i].ib_hca[0] ? "=" : "",
			 wb[i].ib_hca);
		if (_entry(&hcas, &lh, i, hca) ||
		    _entry(&cxi, &lx, i, wb[i].cxi))
			goto out;
	}
	ml_env_add(e, "TOPOML_WORKER_GPUS", "%s", gpus);
	if (w->cpus && strspn(cpus, ";") < lc)
		ml_env_add(e, "TOPOML_WORKER_CPUS", "%s", cpus);
	if (with_hca && strspn(hcas, ";") < lh)
		ml_env_add(e, "TOPOML_WORKER_HCAS", "%s", hcas);
	if (with_cxi && strspn(cxi, ";") < lx)
		ml_env_add(e, "TOPOML_WORKER_CXI", "%s", cxi);
	rc = 0;
out:
	ml_bind_free(wb, nw);
	free(wb);
	free(gpus);
	free(cpus);
	free(hcas);
	free(cxi);
	return rc;
}
