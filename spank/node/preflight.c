/*
 * --ml-preflight=quick: the node against what it should have.  See
 * preflight.h for the rules; what each reason line says is what the job's
 * output shows for a failing node.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preflight.h"

struct _why {
	char *buf;
	size_t len, off;
	int n;
};

static void __attribute__((format(printf, 2, 3)))
_add(struct _why *w, const char *fmt, ...)
{
	va_list ap;
	int k;

	w->n++;
	if (!w->len || w->off >= w->len)
		return;
	if (w->off && w->off + 2 < w->len) {
		memcpy(w->buf + w->off, "; ", 3);
		w->off += 2;
	}
	va_start(ap, fmt);
	k = vsnprintf(w->buf + w->off, w->len - w->off, fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	w->off += (size_t)k;
	if (w->off >= w->len) {
		w->off = w->len;
		if (w->len > 4)
			memcpy(w->buf + w->len - 4, "...", 4);
	}
}

const char *ml_pf_port_state(int state, char *buf, size_t len)
{
	static const char *const names[] = { NULL, "DOWN", "INIT", "ARMED",
					     "ACTIVE", "ACTIVE_DEFER" };

	if (state > 0 && state < (int)(sizeof(names) / sizeof(names[0])))
		return names[state];
	if (state == 0)
		return "unreadable";
	snprintf(buf, len, "state %d", state);
	return buf;
}

static const struct hw_gpu_health *_seen(const struct ml_pf_input *in,
					 const char *busid)
{
	for (int i = 0; i < in->ngpus; i++)
		if (in->gpus[i].busid[0] && !strcmp(in->gpus[i].busid, busid))
			return &in->gpus[i];
	return NULL;
}

static void _slowdown(struct _why *w, int g, const char *busid,
		      long long reasons)
{
	static const struct {
		unsigned long long bit;
		const char *name;
	} r[] = {
		{ HW_CLOCKS_HW_SLOWDOWN, "hardware slowdown" },
		{ HW_CLOCKS_SW_THERMAL, "software thermal slowdown" },
		{ HW_CLOCKS_HW_THERMAL, "hardware thermal slowdown" },
		{ HW_CLOCKS_HW_POWER_BRAKE, "power brake" },
	};
	char names[160] = "";
	size_t off = 0;

	if (reasons < 0)
		return;
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if ((unsigned long long)reasons & r[i].bit)
			off += snprintf(names + off, off < sizeof(names) ?
					sizeof(names) - off : 0, "%s%s",
					off ? ", " : "", r[i].name);
	if (off)
		_add(w, "GPU %d (%s) clocks held down (%s)", g, busid, names);
}

/* The GPUs to check: model indices, Slurm's for the step or all. */
static int _gpus(const struct ml_pf_input *in, struct _why *w, int *pick)
{
	int k = 0;

	if (in->slurm_gpus && *in->slurm_gpus) {
		k = ml_parse_gpu_list(in->node, in->slurm_gpus, pick,
				      in->node->ngpus);
		if (k < 0) {
			_add(w, "Slurm gave the step GPUs %s, the node has %d",
			     in->slurm_gpus, in->node->ngpus);
			return -1;
		}
		return k;
	}
	for (int g = 0; g < in->node->ngpus; g++)
		pick[k++] = g;
	return k;
}

static void _judge_gpus(const struct ml_pf_input *in, struct _why *w)
{
	int *pick, k, best = 0, nvidia = 0;

	for (int g = 0; g < in->node->ngpus; g++)
		nvidia += in->node->gpus[g].vendor != HW_VENDOR_AMD;
	if (!nvidia)
		return;		/* AMD GPUs or none: not NVML's */
	if (in->nvml_err) {
		_add(w, "NVML: %s: the node's %d GPUs cannot be used",
		     in->nvml_err, nvidia);
		return;
	}
	if (!(pick = malloc(sizeof(int) * (in->node->ngpus + 1)))) {
		_add(w, "out of memory");
		return;
	}
	if ((k = _gpus(in, w, pick)) < 0)
		goto out;
	for (int i = 0; i < in->ngpus; i++) {
		if (in->gpus[i].links_up > best)
			best = in->gpus[i].links_up;
		if (in->gpus[i].lost)
			_add(w, "NVML device %d: %s", in->gpus[i].index,
			     in->gpus[i].lost == 15 ? "GPU is lost" :
			     "not answering");
	}
	for (int i = 0; i < k; i++) {
		const struct hw_gpu *m = &in->node->gpus[pick[i]];
		const struct hw_gpu_health *h;
		int g = pick[i];

		if (m->vendor == HW_VENDOR_AMD)
			continue;
		if (!(h = _seen(in, m->busid))) {
			_add(w, "GPU %d (%s) missing: NVML sees %d of the "
			     "node's %d GPUs", g, m->busid, in->ngpus,
			     nvidia);
			continue;
		}
		if (h->ecc_unc > 0)
			_add(w, "GPU %d (%s) has %lld uncorrectable ECC "
			     "error%s", g, m->busid, h->ecc_unc,
			     h->ecc_unc > 1 ? "s" : "");
		if (h->retire_pending > 0)
			_add(w, "GPU %d (%s) has retired pages pending (GPU "
			     "reset needed)", g, m->busid);
		if (h->remap_failed > 0)
			_add(w, "GPU %d (%s) failed a row remapping", g,
			     m->busid);
		else if (h->remap_pending > 0)
			_add(w, "GPU %d (%s) has a row remapping pending (GPU "
			     "reset needed)", g, m->busid);
		_slowdown(w, g, m->busid, h->clocks);
		if (h->links_up < best)
			_add(w, "GPU %d (%s) has %d of %d NVLink links up "
			     "(the node's best GPU %d)", g, m->busid,
			     h->links_up, h->links, best);
	}
out:
	free(pick);
}

/* Was the port up when slurmd described the node (or not known)? */
static bool _expected_up(const struct hw_node *n, const char *hca, int port)
{
	int j = hw_nic_index(n, hca);

	if (j < 0)
		return false;
	for (int q = 0; q < n->nics[j].nports; q++)
		if (n->nics[j].ports[q].num == port)
			return n->nics[j].ports[q].state == 0 ||
				n->nics[j].ports[q].state == 4;
	return false;
}

static void _judge_ports(const struct ml_pf_input *in, struct _why *w)
{
	long fastest = 0;
	char sb[32];

	for (int i = 0; i < in->nports; i++) {
		const struct hw_port_health *p = &in->ports[i];

		if (p->state == 4 && p->link_layer == HW_LL_IB &&
		    p->rate > fastest &&
		    _expected_up(in->node, p->hca, p->port))
			fastest = p->rate;
	}
	for (int i = 0; i < in->nports; i++) {
		const struct hw_port_health *p = &in->ports[i];
		long want = in->ib_rate > 0 ? in->ib_rate :
			in->ib_rate < 0 && p->link_layer == HW_LL_IB ?
			fastest : 0;

		if (!_expected_up(in->node, p->hca, p->port))
			continue;
		if (p->state != 4) {
			_add(w, "HCA %s port %d is %s", p->hca, p->port,
			     ml_pf_port_state(p->state, sb, sizeof(sb)));
			continue;
		}
		if (p->rate > 0 && p->rate < want)
			_add(w, "HCA %s port %d runs at %s, below %g Gb/s",
			     p->hca, p->port, p->rate_text, want / 1000.0);
	}
}

int ml_preflight_judge(const struct ml_pf_input *in, char *why,
		       size_t whylen)
{
	struct _why w = { .buf = why, .len = whylen };

	if (whylen)
		why[0] = '\0';
	_judge_gpus(in, &w);
	_judge_ports(in, &w);
	return w.n;
}

unsigned ml_preflight_root_faults(const struct ml_pf_input *in)
{
	unsigned bits = 0;

	/* Every GPU of the model NVML sees, whatever the job's GPUs: its
	 * driver's counters, which no job can set.  A GPU NVML does not
	 * see, or NVML failing, is left out: the step's device cgroup may
	 * hide GPUs from slurmstepd. */
	for (int g = 0; !in->nvml_err && g < in->node->ngpus; g++) {
		const struct hw_gpu *m = &in->node->gpus[g];
		const struct hw_gpu_health *h;

		if (m->vendor == HW_VENDOR_AMD || !(h = _seen(in, m->busid)))
			continue;
		if (h->ecc_unc > 0)
			bits |= ML_PF_ROOT_ECC;
		if (h->retire_pending > 0 || h->remap_failed > 0 ||
		    h->remap_pending > 0)
			bits |= ML_PF_ROOT_PAGES;
	}
	/* A port of the model that was up and is DOWN now (not one in
	 * training, not its rate: those may pass). */
	for (int i = 0; i < in->nports; i++)
		if (in->ports[i].state == 1 &&
		    _expected_up(in->node, in->ports[i].hca, in->ports[i].port))
			bits |= ML_PF_ROOT_PORT;
	return bits;
}

int ml_preflight_quick(const struct ml_conf *c, const struct hw_node *node,
		       const char *slurm_gpus, char *why, size_t whylen)
{
	return ml_preflight_quick_root(c, node, slurm_gpus, why, whylen,
				       NULL);
}

int ml_preflight_quick_root(const struct ml_conf *c,
			    const struct hw_node *node,
			    const char *slurm_gpus, char *why, size_t whylen,
			    unsigned *root)
{
	struct hw_gpu_health *g = calloc(HW_MAX_GPUS, sizeof(*g));
	struct hw_port_health *p = NULL;
	struct ml_pf_input in = {
		.node = node, .slurm_gpus = slurm_gpus, .gpus = g,
		.ib_rate = c->pf_ib_rate,
	};
	char err[512];
	int maxp = 0, rc;

	for (int j = 0; j < node->nnics; j++)
		maxp += node->nics[j].nports;
	p = calloc(maxp + 1, sizeof(*p));
	if (!g || !p) {
		free(g);
		free(p);
		snprintf(why, whylen, "out of memory");
		return 1;
	}
	if (node->ngpus && hw_nvml_health(c->nvml_lib, g, HW_MAX_GPUS,
					  &in.ngpus, err, sizeof(err)))
		in.nvml_err = err;
	in.ports = p;
	in.nports = hw_ib_port_health(node, c->sysfs_root, p, maxp);
	rc = ml_preflight_judge(&in, why, whylen);
	if (root)
		*root = rc ? ml_preflight_root_faults(&in) : 0;
	free(g);
	free(p);
	return rc;
}
