/*
 * The candidate machinery every placement engine shares: node sets and
 * their weights, the sets already tried, a placement from a set (in ring
 * order), and the choice of the fewest leaves or groups that hold a job.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "place/common/place_int.h"

void topoml_placement_clear(struct topoml_placement *p)
{
	if (!p)
		return;
	free(p->nodes);
	memset(p, 0, sizeof(*p));
}

int topoml__and_weight(hwloc_const_bitmap_t a, hwloc_const_bitmap_t b)
{
	int la = hwloc_bitmap_last(a), lb = hwloc_bitmap_last(b);
	int last = la < lb ? la : lb, w = 0;

	if (last < 0)
		return 0;
	for (unsigned i = 0; i <= (unsigned)last / (8 * sizeof(long)); i++)
		w += __builtin_popcountl(hwloc_bitmap_to_ith_ulong(a, i) &
					 hwloc_bitmap_to_ith_ulong(b, i));
	return w;
}

bool topoml__seen_add(struct place_seen *s, hwloc_const_bitmap_t set)
{
	hwloc_bitmap_t *n;

	for (int i = 0; i < s->n; i++)
		if (hwloc_bitmap_isequal(s->sets[i], set))
			return false;
	n = realloc(s->sets, (s->n + 1) * sizeof(*n));
	if (!n)
		return true;
	s->sets = n;
	s->sets[s->n] = hwloc_bitmap_dup(set);
	if (s->sets[s->n])
		s->n++;
	return true;
}

void topoml__seen_clear(struct place_seen *s)
{
	for (int i = 0; i < s->n; i++)
		hwloc_bitmap_free(s->sets[i]);
	free(s->sets);
	s->sets = NULL;
	s->n = 0;
}

int topoml__placement_from_set(const topoml_topo_t *t,
			       hwloc_const_bitmap_t set,
			       struct topoml_placement *out)
{
	int n = hwloc_bitmap_weight(set), i = 0, v;

	free(out->nodes);
	out->nodes = malloc((n > 0 ? n : 1) * sizeof(int));
	out->n = 0;
	if (!out->nodes)
		return -1;
	hwloc_bitmap_foreach_begin(v, set)
		out->nodes[i++] = v;
	hwloc_bitmap_foreach_end();
	out->n = i;
	topoml_ring_order(t, out->nodes, out->n);
	return 0;
}

int topoml__tight_pick(const int *f, int n, int k, int need, int *take)
{
	int *prefix = malloc((n + 1) * sizeof(int));
	int m = k, r = need, rc = -1;

	if (!prefix)
		return -1;
	prefix[0] = 0;
	for (int i = 0; i < n; i++) {
		prefix[i + 1] = prefix[i] + f[i];
		take[i] = 0;
	}
	if (k > n || k < 1)
		goto out;
	/*
	 * Invariant: with m slots left, items 0..m-1 are unused (every pick
	 * so far sat at a position >= the slots then left), so the m-1
	 * largest unused items are 0..m-2.
	 */
	while (r > 0 && m > 0) {
		int thr = r - prefix[m - 1], lo = m - 1, hi = n - 1, p;

		if (f[m - 1] < thr)
			goto out;	/* the m largest cannot hold r */
		/* last position p >= m-1 with f[p] >= thr (f decreasing) */
		while (lo < hi) {
			int mid = lo + (hi - lo + 1) / 2;

			if (f[mid] >= thr)
				lo = mid;
			else
				hi = mid - 1;
		}
		p = lo;
		while (take[p])
			p--;
		take[p] = f[p] < r ? f[p] : r;
		r -= take[p];
		m--;
	}
	rc = r > 0 ? -1 : 0;
out:
	free(prefix);
	return rc;
}

int topoml__choose(const int *f, const int *reqc, const unsigned char *ok,
		   int n, int need, int maxv, int *take)
{
	int k = 0, fx = 0, rem, m = 0, ke, rc = -1;
	int *hist = NULL, *idx = NULL, *sf = NULL, *tk = NULL;

	for (int i = 0; i < n; i++) {
		if (take)
			take[i] = reqc ? reqc[i] : 0;
		if (reqc && reqc[i] > 0) {
			k++;
			fx += f[i] - reqc[i];
		}
	}
	if (fx >= need) {
		int r = need;

		for (int i = 0; take && r > 0 && i < n; i++) {
			int t;

			if (!reqc || reqc[i] <= 0)
				continue;
			t = f[i] - reqc[i] < r ? f[i] - reqc[i] : r;
			take[i] += t;
			r -= t;
		}
		return k;
	}
	rem = need - fx;
	if (maxv < 1)
		return -1;
	hist = calloc(maxv + 2, sizeof(int));
	idx = malloc((n ? n : 1) * sizeof(int));
	sf = malloc((n ? n : 1) * sizeof(int));
	tk = malloc((n ? n : 1) * sizeof(int));
	if (!hist || !idx || !sf || !tk)
		goto out;
	for (int i = 0; i < n; i++) {
		if (take && reqc && reqc[i] > 0)
			take[i] = f[i];
		if ((reqc && reqc[i] > 0) || f[i] <= 0 || (ok && !ok[i]))
			continue;
		hist[f[i] > maxv ? maxv : f[i]]++;
		m++;
	}
	/* Counting sort, decreasing free; among equals the preferred items
	 * (ok 2) last, then the higher index first, so the tight pick (which
	 * takes the last fitting position) prefers them, then the lowest
	 * index. */
	for (int v = maxv, pos = 0; v >= 1; v--) {
		int c = hist[v];

		hist[v] = pos;
		pos += c;
	}
	for (int pass = 0; pass < 2; pass++)
		for (int i = n - 1; i >= 0; i--) {
			int v;

			if ((reqc && reqc[i] > 0) || f[i] <= 0 ||
			    (ok && !ok[i]))
				continue;
			if ((ok && ok[i] == 2) != (pass == 1))
				continue;
			v = f[i] > maxv ? maxv : f[i];
			idx[hist[v]] = i;
			sf[hist[v]++] = f[i];
		}
	ke = topoml__min_items(sf, m, rem);
	if (ke < 0)
		goto out;
	rc = k + ke;
	if (!take)
		goto out;
	if (topoml__tight_pick(sf, m, ke, rem, tk)) {
		rc = -1;
		goto out;
	}
	for (int j = 0; j < m; j++)
		take[idx[j]] += tk[j];
out:
	free(hist);
	free(idx);
	free(sf);
	free(tk);
	return rc;
}

int topoml__take_switch(const struct place_in *in, int sw, int want,
			hwloc_bitmap_t set)
{
	const struct topoml_switch *s = &in->t->switches[sw];

	for (int k = 0; k < s->nnodes && want > 0; k++) {
		int v = s->nodes[k];

		if (!hwloc_bitmap_isset(in->avail, v) ||
		    hwloc_bitmap_isset(set, v))
			continue;
		hwloc_bitmap_set(set, v);
		want--;
	}
	return want;
}

int topoml__mark_multi_unit(const struct topoml_job_unit *p, int np,
			    unsigned char *mark, unsigned char bit)
{
	struct {
		uint32_t job;
		int unit;	/* first unit seen */
		bool multi;	/* seen on another unit too */
	} *h;
	size_t cap = 16, mask;

	if (np <= 0)
		return 0;
	while (cap < 2 * (size_t)np)
		cap <<= 1;
	mask = cap - 1;
	if (!(h = calloc(cap, sizeof(*h))))
		return -1;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < np; i++) {
			size_t k = (p[i].job * 2654435761u) & mask;

			while (h[k].job && h[k].job != p[i].job)
				k = (k + 1) & mask;
			if (pass) {
				if (h[k].multi)
					mark[p[i].unit] |= bit;
			} else if (!h[k].job) {
				h[k].job = p[i].job;
				h[k].unit = p[i].unit;
			} else if (h[k].unit != p[i].unit) {
				h[k].multi = true;
			}
		}
	free(h);
	return 0;
}
