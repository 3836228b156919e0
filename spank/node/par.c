/*
 * --ml-parallel=auto[,model=FILE] and the verdict on an explicit layout
 * (issue 34): the planner of topoml plan (topology/plan) run on the
 * step's allocation.  Every node runs it on the same inputs (the file,
 * the step's node and task counts from Slurm) and so chooses the same
 * layout; nothing here reads node-local state.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
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
#include "topoml/build.h"

/* nodes a leaf, as topoml plan --nodes without --topology */
#define PAR_PER_LEAF 32

int ml_par_parse(const char *arg, struct ml_par_opt *o, char *err,
		 size_t errlen)
{
	const char *m = NULL;
	char sizes[256];
	size_t n;

	memset(o, 0, sizeof(*o));
	o->par = (struct topoml_parallel){ 1, 1, 0, 1, 1 };
	if (!arg)
		arg = "";
	/* model=FILE comes last and takes the rest (a path may hold ',') */
	if (!strncmp(arg, "model=", 6))
		m = arg;
	else if ((m = strstr(arg, ",model=")))
		m++;
	n = m ? (size_t)(m - arg) : strlen(arg);
	if (m) {
		if (n)
			n--;	/* the ',' before model= */
		if (!m[6]) {
			snprintf(err, errlen, "model=: no file");
			return -1;
		}
		if (strlen(m + 6) >= sizeof(o->model)) {
			snprintf(err, errlen, "model=: path too long");
			return -1;
		}
		snprintf(o->model, sizeof(o->model), "%s", m + 6);
	}
	if (n >= sizeof(sizes)) {
		snprintf(err, errlen, "too long");
		return -1;
	}
	memcpy(sizes, arg, n);
	sizes[n] = '\0';
	if (!strcmp(sizes, "auto")) {
		o->automatic = true;
		return 0;
	}
	if (!n && m) {
		snprintf(err, errlen, "model= needs auto or tp=T,... before "
			 "it");
		return -1;
	}
	return topoml_parallel_parse(sizes, &o->par, err, errlen);
}

int ml_model_read(const char *path, const struct ml_cred *cred, char **text,
		  size_t *len, char *err, size_t errlen)
{
	struct ml_trust t = { .uid = cred->uid, .groups = cred, .read = true };
	char *buf = NULL;
	struct stat st;
	ssize_t r;
	size_t got = 0;
	int fd;

	*text = NULL;
	*len = 0;
	/* Every component walked as the user: nobody else can redirect
	 * the path or change the file (secure.h). */
	fd = ml_user_file_open(path, &t, err, errlen);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		snprintf(err, errlen, "%s", strerror(errno));
		goto fail;
	}
	if (st.st_size > TOPOML_PLAN_FILE_MAX) {
		snprintf(err, errlen, "larger than %d bytes",
			 TOPOML_PLAN_FILE_MAX);
		goto fail;
	}
	buf = malloc(TOPOML_PLAN_FILE_MAX + 2);
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* the size may change under us: read to the bound, no further */
	while (got <= TOPOML_PLAN_FILE_MAX &&
	       (r = read(fd, buf + got, TOPOML_PLAN_FILE_MAX + 1 - got)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "%s", strerror(errno));
			goto fail;
		}
		got += (size_t)r;
	}
	if (got > TOPOML_PLAN_FILE_MAX) {
		snprintf(err, errlen, "larger than %d bytes",
			 TOPOML_PLAN_FILE_MAX);
		goto fail;
	}
	close(fd);
	buf[got] = '\0';
	*text = buf;
	*len = got;
	return 0;
fail:
	free(buf);
	close(fd);
	return -1;
}

/* The fat tree topoml plan --nodes N generates: leaves of 32 nodes. */
static topoml_topo_t *_flat(int nnodes)
{
	topoml_topo_t *t = topoml_new(TOPOML_FAT_TREE, "generated");
	int nleaves = (nnodes + PAR_PER_LEAF - 1) / PAR_PER_LEAF;
	int first = 0, count, radix = PAR_PER_LEAF;
	char name[64];

	if (!t)
		return NULL;
	for (int i = 0; i < nleaves; i++) {
		int sw;

		snprintf(name, sizeof(name), "s0-%d", i);
		if ((sw = topoml_add_switch(t, name, 0, NULL)) < 0)
			goto fail;
		for (int k = i * PAR_PER_LEAF;
		     k < nnodes && k < (i + 1) * PAR_PER_LEAF; k++) {
			int nd;

			snprintf(name, sizeof(name), "node%d", k + 1);
			nd = topoml_add_node(t, name, 0, NULL);
			if (nd < 0 || topoml_attach_node(t, sw, nd, NULL))
				goto fail;
		}
	}
	count = nleaves;
	for (int level = 1; count > 1; level++) {
		int nup = (count + radix - 1) / radix, base = t->nswitches;

		for (int i = 0; i < nup; i++) {
			snprintf(name, sizeof(name), "s%d-%d", level, i);
			if (topoml_add_switch(t, name, 0, NULL) < 0)
				goto fail;
		}
		for (int i = 0; i < count; i++)
			topoml_link_switches(t, base + i / radix, first + i);
		first = base;
		count = nup;
	}
	if (topoml_finalize(t, NULL))
		goto fail;
	return t;
fail:
	topoml_free(t);
	return NULL;
}

/* The model and a planner for nnodes x gpn: the context, or NULL. */
static struct topoml_plan_ctx *
_ctx(const char *text, size_t len, const char *name, int nnodes, int gpn,
     struct topoml_plan_spec *s, struct topoml_plan_machine *mc,
     topoml_topo_t **t, char *err, size_t errlen)
{
	struct topoml_plan_ctx *c;
	char why[512];

	*t = NULL;
	topoml_plan_spec_init(s);
	if (topoml_plan_spec_parse(s, text, len, name, err, errlen))
		return NULL;
	if (topoml_plan_spec_finish(s, mc, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s", name, why);
		return NULL;
	}
	if (nnodes < 1 || gpn < 1 || (long)nnodes * gpn > 65536L * 16) {
		snprintf(err, errlen, "%d nodes of %d tasks: no layout to "
			 "plan", nnodes, gpn);
		return NULL;
	}
	/* one task a GPU: the step's tasks per node, whatever the file */
	mc->gpus_per_node = gpn;
	if (!(*t = _flat(nnodes))) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c = topoml_plan_new(*t, nnodes, mc, why, sizeof(why));
	if (!c) {
		snprintf(err, errlen, "%s", why);
		topoml_free(*t);
		*t = NULL;
	}
	return c;
}

int ml_par_auto(const char *text, size_t len, const char *name, int nnodes,
		int gpn, struct topoml_parallel *par, char *note,
		size_t notelen, char *err, size_t errlen)
{
	struct topoml_plan_spec s;
	struct topoml_plan_machine mc;
	struct topoml_plan best;
	topoml_topo_t *t;
	struct topoml_plan_ctx *c;
	char why[512];
	int n;

	c = _ctx(text, len, name, nnodes, gpn, &s, &mc, &t, err, errlen);
	if (!c)
		return -1;
	n = topoml_plan_search(c, &s.model, &s.fix, &best, 1, NULL, why,
			       sizeof(why));
	topoml_plan_free(c);
	topoml_free(t);
	if (n < 0) {
		snprintf(err, errlen, "%s: %s", name, why);
		return -1;
	}
	if (n == 0) {
		snprintf(err, errlen, "%s: no layout fits in %.1f GiB a GPU "
			 "(%s) on %d node%s of %d", name, mc.mem_gib, mc.gpu,
			 nnodes, nnodes == 1 ? "" : "s", gpn);
		return -1;
	}
	*par = best.par;
	snprintf(note, notelen, "--ml-parallel=auto: tp=%d,pp=%d,dp=%d,"
		 "ep=%d,cp=%d micro-batch=%d recompute=%s; estimate %.1f GiB "
		 "a GPU of %.1f (%s), %.3f s a step", par->tp, par->pp,
		 par->dp, par->ep, par->cp, best.mb,
		 best.recompute ? "on" : "off", best.mem_gib,
		 mc.mem_gib * (1 - mc.reserve), mc.gpu, best.t_step);
	return 0;
}

int ml_par_mem(const char *text, size_t len, const char *name, int nnodes,
	       int gpn, const struct topoml_parallel *par, char *note,
	       size_t notelen, char *err, size_t errlen)
{
	struct topoml_plan_spec s;
	struct topoml_plan_machine mc;
	struct topoml_plan p, least = { .mem_gib = -1 };
	topoml_topo_t *t;
	struct topoml_plan_ctx *c;
	char why[512] = "";
	int rc = -1;

	c = _ctx(text, len, name, nnodes, gpn, &s, &mc, &t, err, errlen);
	if (!c)
		return -1;
	/* recomputation free: the layout fits if it fits either way */
	for (int r = 0; r < 2; r++) {
		if (s.fix.recompute >= 0 && r != s.fix.recompute)
			continue;
		if (topoml_plan_eval(c, &s.model, par, s.fix.mb ? s.fix.mb : 1,
				     r, &p, why, sizeof(why)))
			continue;
		if (topoml_plan_fits(c, &p)) {
			rc = 0;
			goto out;
		}
		if (least.mem_gib < 0 || p.mem_gib < least.mem_gib)
			least = p;
	}
	if (least.mem_gib < 0) {
		snprintf(note, notelen, "the model %s: %s", name, why);
	} else {
		snprintf(note, notelen, "does not fit memory by the estimate "
			 "for %s: %.1f GiB a GPU of %.1f (%s)", name,
			 least.mem_gib, mc.mem_gib * (1 - mc.reserve), mc.gpu);
	}
	rc = 1;
out:
	topoml_plan_free(c);
	topoml_free(t);
	return rc;
}

int ml_tp_split(const int *counts, const int *dom, int n, int tp, int *a,
		int *b)
{
	long total = 0;
	int node = 0, left;

	for (int i = 0; i < n; i++)
		total += counts[i] > 0 ? counts[i] : 0;
	if (tp < 2 || n < 1)
		return -1;
	left = counts[0];
	/* ranks node by node; each group's nodes from its first rank on */
	for (long g = 0; g + tp <= total; g += tp) {
		int first, need = tp;

		while (left <= 0 && node + 1 < n)
			left = counts[++node];
		first = node;
		while (need > 0 && node < n) {
			int take = need < left ? need : left;

			need -= take;
			left -= take;
			if (need > 0 && node + 1 < n)
				left = counts[++node];
			else if (need > 0)
				break;
			if (node != first && (!dom || dom[first] < 0 ||
					      dom[node] != dom[first])) {
				*a = first;
				*b = node;
				return (int)g;
			}
		}
	}
	return -1;
}
