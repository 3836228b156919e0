/*
 * select/topoml's pure helpers (see job_req.h): no Slurm headers, so that
 * the unit tests link them without slurmctld.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "job_req.h"

uint32_t topoml_job_nodes_wanted(uint32_t min_nodes, uint32_t max_nodes,
				 uint32_t req_nodes, uint32_t min_cpus,
				 uint16_t max_cpus)
{
	uint32_t n = min_nodes > req_nodes ? min_nodes : req_nodes;

	if (min_cpus && max_cpus) {
		/* 64-bit: min_cpus near UINT32_MAX must not wrap */
		uint64_t c = ((uint64_t)min_cpus + max_cpus - 1) / max_cpus;

		if (c > n)
			n = (uint32_t)c;
	}
	if (n < 1)
		n = 1;
	if (max_nodes && n > max_nodes)
		n = max_nodes;
	return n;
}

enum topoml_hint topoml_job_hint(enum topoml_hint dflt,
				 const char *const *env, uint32_t n,
				 const char **bad)
{
	enum topoml_hint hint = dflt;

	if (bad)
		*bad = NULL;
	for (uint32_t i = 0; env && i < n; i++) {
		const char *v = topoml_comm_job_env(env[i]);

		if (v && topoml_hint_parse(v, &hint) && bad)
			*bad = v;
	}
	return hint;
}

static int _cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int64_t topoml_job_free_by(const int64_t *free_at, hwloc_const_bitmap_t avail,
			   int n, hwloc_bitmap_t out)
{
	int w = hwloc_bitmap_weight(avail), k = 0, v;
	int64_t *t, when;

	hwloc_bitmap_zero(out);
	if (n < 1 || w < n || !(t = malloc((size_t)w * sizeof(*t))))
		return -1;
	hwloc_bitmap_foreach_begin(v, avail)
		t[k++] = free_at[v];
	hwloc_bitmap_foreach_end();
	qsort(t, k, sizeof(*t), _cmp64);
	when = t[n - 1];
	free(t);
	hwloc_bitmap_foreach_begin(v, avail)
		if (free_at[v] <= when)
			hwloc_bitmap_set(out, v);
	hwloc_bitmap_foreach_end();
	return when;
}

struct _ends {
	int64_t at;
	int v;
};

static int _cmp_ends(const void *a, const void *b)
{
	const struct _ends *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

int64_t topoml_job_units_free_by(const int64_t *free_at, const uint32_t *cap,
				 uint32_t *fu, hwloc_const_bitmap_t avail,
				 uint64_t units, hwloc_bitmap_t idle_then)
{
	int w = hwloc_bitmap_weight(avail), k = 0, v;
	uint64_t have = 0;
	int64_t when = -1;
	struct _ends *e;

	hwloc_bitmap_zero(idle_then);
	if (w <= 0)
		return -1;
	hwloc_bitmap_foreach_begin(v, avail)
		have += fu[v];
	hwloc_bitmap_foreach_end();
	if (have >= units)
		return 0;
	if (!(e = malloc((size_t)w * sizeof(*e))))
		return -1;
	hwloc_bitmap_foreach_begin(v, avail)
		if (free_at[v] > 0)
			e[k++] = (struct _ends){ free_at[v], v };
	hwloc_bitmap_foreach_end();
	qsort(e, k, sizeof(*e), _cmp_ends);
	for (int i = 0; i < k && have < units; i++) {
		if (cap[e[i].v] > fu[e[i].v])
			have += cap[e[i].v] - fu[e[i].v];
		when = e[i].at;
	}
	free(e);
	if (have < units)
		return -1;
	hwloc_bitmap_foreach_begin(v, avail)
		if (free_at[v] > 0 && free_at[v] <= when) {
			fu[v] = cap[v];
			hwloc_bitmap_set(idle_then, v);
		}
	hwloc_bitmap_foreach_end();
	return when;
}

static unsigned _box_hash(const struct topoml_box_waits *w, uint32_t job)
{
	return (unsigned)((job * 2654435761u) & (unsigned)(w->nidx - 1));
}

static int _box_wait_find(const struct topoml_box_waits *w, uint32_t job)
{
	if (!w->nidx)
		return -1;
	for (unsigned h = _box_hash(w, job);; h = (h + 1) & (w->nidx - 1)) {
		int i = w->idx[h] - 1;

		if (i < 0)
			return -1;
		if (w->job[i] == job)
			return i;
	}
}

/* The index cell holding slot i (which is in the index). */
static unsigned _box_cell(const struct topoml_box_waits *w, int i)
{
	unsigned h = _box_hash(w, w->job[i]);

	while (w->idx[h] != i + 1)
		h = (h + 1) & (w->nidx - 1);
	return h;
}

/* Empty cell h, moving back the run after it (linear probing). */
static void _box_unindex(struct topoml_box_waits *w, unsigned h)
{
	unsigned mask = w->nidx - 1, j = h;

	w->idx[h] = 0;
	for (;;) {
		unsigned home;

		j = (j + 1) & mask;
		if (!w->idx[j])
			return;
		home = _box_hash(w, w->job[w->idx[j] - 1]);
		/* j's entry stays if its home lies cyclically in (h, j] */
		if (((j - home) & mask) < ((j - h) & mask))
			continue;
		w->idx[h] = w->idx[j];
		w->idx[j] = 0;
		h = j;
	}
}

static void _box_index(struct topoml_box_waits *w, int i)
{
	unsigned h = _box_hash(w, w->job[i]);

	while (w->idx[h])
		h = (h + 1) & (w->nidx - 1);
	w->idx[h] = i + 1;
}

static void _box_wait_drop(struct topoml_box_waits *w, int i)
{
	_box_unindex(w, _box_cell(w, i));
	w->n--;
	if (i == w->n)
		return;
	/* the last slot moves into i */
	w->idx[_box_cell(w, w->n)] = i + 1;
	w->job[i] = w->job[w->n];
	w->since[i] = w->since[w->n];
	memmove(&w->verdict[i * TOPOML_WAIT_SLOTS],
	       &w->verdict[w->n * TOPOML_WAIT_SLOTS],
	       TOPOML_WAIT_SLOTS * sizeof(*w->verdict));
}

/* Room for one more clock: capacity and index doubled as needed. */
static int _box_grow(struct topoml_box_waits *w)
{
	int cap = w->cap ? 2 * w->cap : 16, nidx = 4 * cap, *idx;
	uint32_t *j;
	int64_t *s;
	struct topoml_wait_verdict *v;

	if (w->n < w->cap)
		return 0;
	if (cap > (1 << 24))
		return -1;	/* more clocks than slurmctld has jobs */
	if (!(j = realloc(w->job, cap * sizeof(*j))))
		return -1;
	w->job = j;
	if (!(s = realloc(w->since, cap * sizeof(*s))))
		return -1;
	w->since = s;
	if (!(v = realloc(w->verdict,
			  cap * TOPOML_WAIT_SLOTS * sizeof(*v))))
		return -1;
	w->verdict = v;
	if (!(idx = calloc(nidx, sizeof(*idx))))
		return -1;
	free(w->idx);
	w->idx = idx;
	w->nidx = nidx;
	w->cap = cap;
	for (int i = 0; i < w->n; i++)
		_box_index(w, i);
	return 0;
}

int64_t topoml_box_wait_left(struct topoml_box_waits *w, uint32_t job,
			     int64_t now, int64_t wait)
{
	int i;

	if (wait <= 0) {
		topoml_box_wait_forget(w, job);
		return 0;
	}
	/* clocks of jobs that went away while waiting, once a minute */
	if (!w->swept || now - w->swept >= 60 || now < w->swept) {
		w->swept = now;
		for (i = w->n - 1; i >= 0; i--)
			if (w->job[i] != job &&
			    now - w->since[i] > 2 * wait + 3600)
				_box_wait_drop(w, i);
	}
	i = _box_wait_find(w, job);
	if (i < 0) {
		if (_box_grow(w))
			return 0;	/* out of memory: do not wait */
		i = w->n++;
		w->job[i] = job;
		w->since[i] = now;
		memset(&w->verdict[i * TOPOML_WAIT_SLOTS], 0,
		       TOPOML_WAIT_SLOTS * sizeof(*w->verdict));
		_box_index(w, i);
	}
	if (now - w->since[i] >= wait) {
		_box_wait_drop(w, i);
		return 0;
	}
	return w->since[i] + wait - now;
}

int64_t topoml_box_wait_peek(const struct topoml_box_waits *w, uint32_t job,
			     int64_t now, int64_t wait)
{
	int i = _box_wait_find(w, job);

	if (wait <= 0)
		return 0;
	if (i < 0)
		return wait;
	return now - w->since[i] >= wait ? 0 : w->since[i] + wait - now;
}

int64_t topoml_box_wait_forget(struct topoml_box_waits *w, uint32_t job)
{
	int i = _box_wait_find(w, job);
	int64_t since;

	if (i < 0)
		return -1;
	since = w->since[i];
	_box_wait_drop(w, i);
	return since;
}

void topoml_box_waits_clear(struct topoml_box_waits *w)
{
	free(w->job);
	free(w->since);
	free(w->verdict);
	free(w->idx);
	memset(w, 0, sizeof(*w));
}

bool topoml_box_wait_verdict_get(const struct topoml_box_waits *w,
				 uint32_t job, int slot, uint64_t key,
				 int64_t val[TOPOML_WAIT_VALS])
{
	int i = _box_wait_find(w, job);
	const struct topoml_wait_verdict *v;

	if (i < 0 || !key || slot < 0 || slot >= TOPOML_WAIT_SLOTS)
		return false;
	v = &w->verdict[i * TOPOML_WAIT_SLOTS + slot];
	if (v->key != key)
		return false;
	memcpy(val, v->val, sizeof(v->val));
	return true;
}

bool topoml_box_wait_verdict_set(struct topoml_box_waits *w, uint32_t job,
				 int slot, uint64_t key,
				 const int64_t val[TOPOML_WAIT_VALS])
{
	int i = _box_wait_find(w, job);
	struct topoml_wait_verdict *v;

	if (i < 0 || !key || slot < 0 || slot >= TOPOML_WAIT_SLOTS)
		return false;
	v = &w->verdict[i * TOPOML_WAIT_SLOTS + slot];
	v->key = key;
	memcpy(v->val, val, sizeof(v->val));
	return true;
}

/* splitmix64's finaliser: every input bit moves every output bit */
static uint64_t _mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

uint64_t topoml_wait_key(const uint64_t *v, int n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL;

	for (int i = 0; i < n; i++)
		h = _mix64(h ^ v[i]) + 0x9e3779b97f4a7c15ULL;
	return h ? h : 1;
}
