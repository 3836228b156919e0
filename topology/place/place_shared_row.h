/*
 * The rows of a plane of the node-sharing torus search's box sums mod
 * 2^16 (place_shared.c), written once for two vector widths: included
 * with T_PLANE_FN (the function's name), T_V (a vector of T_L uint16_t)
 * and T_ATTR (its target) defined, which it undefines.
 *
 * The boxes of sides sd whose origins are in the plane z: T(y, x), the
 * sum mod 2^16 of the cells before (x, y) in the slab z..z + sd[2]
 * (wrapped: two parts), U(y, x) = T(y, x + s) - T(y, x) that of the s =
 * sd[0] cells from x (or T(y, d[0]) - T(y, x) + T(y, x + s - d[0]) where
 * they wrap round the torus' end), each a vector at a time into u (room
 * for d[1] + 1 rows of d[0] + 1 + T_LANES; the rows the boxes of rows
 * 0..ny - 1 read), then the box at (x, y) U(y + sd[1], x) - U(y, x) (or
 * U(d[1], x) - U(y, x) + U(y + sd[1] - d[1], x)): a row's box sums made
 * once a plane, not once for each row of boxes that reads them, and no
 * sum read just after it is stored (such a read would wait on the
 * store).  hits: bit y set where
 * a box at one of the first n origins of row y < ny holds units with less
 * than w spare, where the boxes hold fewer than 2^16 units: u - units
 * mod 2^16 is below w' = min(w, 2^16 - units) iff units <= u and u -
 * units < w (u < units wraps to 2^16 - units or more).  p16: the sums,
 * topoml_psum's layout, padded by T_L.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
T_ATTR static void T_PLANE_FN(const struct topoml_psum *g,
			      const uint16_t *p16, int z, const int sd[3],
			      int n, int ny, long units, long w,
			      uint16_t *u, uint64_t *hits)
{
	const int *d = g->d;
	size_t wu = (size_t)d[0] + 1 + T_LANES;
	int s = sd[0], b = sd[1], m = d[0] - s + 1 < n ? d[0] - s + 1 : n;
	int zl[2] = { z, 0 }, zh[2] = { z + sd[2], 0 }, nz = 1, x;
	int top = ny - 1 + b < d[1] ? ny - 1 + b : d[1];
	uint16_t uw;
	T_V vu, vw, vn, lane, r, t, e;

	if (zh[0] > d[2]) {
		zh[0] = d[2];
		zh[1] = z + sd[2] - d[2];
		nz = 2;
	}
	for (int k = 0; k < T_L; k++)
		lane[k] = (uint16_t)k;
/* r += T(y, x0 + lanes) x sign: hi and lo, the planes' rows at y (one
 * plane's in registers, the other where the slab wraps) */
#define T_T1(r, x0, sign)						\
	do {								\
		memcpy(&t, hi0 + (x0), sizeof(t));			\
		r sign##= t;						\
		memcpy(&t, lo0 + (x0), sizeof(t));			\
		r sign##= -t;						\
	} while (0)
#define T_T2(r, x0, sign)						\
	do {								\
		T_T1(r, x0, sign);					\
		memcpy(&t, hi1 + (x0), sizeof(t));			\
		r sign##= t;						\
		memcpy(&t, lo1 + (x0), sizeof(t));			\
		r sign##= -t;						\
	} while (0)
/* U's row at y: lanes from m on the wrapped sums, stored after */
#define T_U(T)								\
	do {								\
		for (x = 0; x < m; x += T_L) {				\
			r = (T_V){ 0 };					\
			T(r, x + s, +);					\
			T(r, x, -);					\
			memcpy(uy + x, &r, sizeof(r));			\
		}							\
		for (x = m; x < n; x += T_L) {				\
			r = (T_V){ 0 } + end;				\
			T(r, x + s - d[0], +);				\
			T(r, x, -);					\
			memcpy(uy + x, &r, sizeof(r));			\
		}							\
	} while (0)
	/* the rows the boxes of rows 0..ny - 1 read */
	for (int y = 0; y <= top; y++) {
		const uint16_t *hi0, *lo0, *hi1, *lo1;
		uint16_t *uy = u + y * wu, end;

		hi0 = &p16[topoml__psum_at(g, 0, y, zh[0])];
		lo0 = &p16[topoml__psum_at(g, 0, y, zl[0])];
		end = hi0[d[0]] - lo0[d[0]];
		if (nz == 1) {
			T_U(T_T1);
			continue;
		}
		hi1 = &p16[topoml__psum_at(g, 0, y, zh[1])];
		lo1 = &p16[topoml__psum_at(g, 0, y, zl[1])];
		end += hi1[d[0]] - lo1[d[0]];
		T_U(T_T2);
	}
#undef T_U
#undef T_T2
#undef T_T1
	w = w < 65536 - units ? w : 65536 - units;
	uw = (uint16_t)(w > 65535 ? 65535 : w);
	vu = (T_V){ 0 } + (uint16_t)units;
	vw = (T_V){ 0 } + uw;
	vn = (T_V){ 0 } + (uint16_t)n;
	memset(hits, 0, (size_t)(ny + 63) / 64 * sizeof(*hits));
	for (int y = 0; y < ny; y++) {
		const uint16_t *u0 = u + y * wu, *u1, *u2 = NULL;
		T_V any = { 0 };
		uint64_t q[sizeof(T_V) / 8], hit = 0;

		if (y + b <= d[1]) {
			u1 = u + (y + b) * wu;
		} else {
			u1 = u + d[1] * wu;
			u2 = u + (y + b - d[1]) * wu;
		}
		for (x = 0; x < n; x += T_L) {
			memcpy(&r, u1 + x, sizeof(r));
			memcpy(&t, u0 + x, sizeof(t));
			r -= t + vu;
			if (u2) {
				memcpy(&e, u2 + x, sizeof(e));
				r += e;
			}
			r = (T_V)(r < vw);
			if (x + T_L > n)	/* lanes from n on */
				r &= (T_V)(lane + (uint16_t)x < vn);
			any |= r;
		}
		memcpy(q, &any, sizeof(q));
		for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++)
			hit |= q[k];
		if (hit)
			hits[y / 64] |= 1ULL << (y % 64);
	}
}

#undef T_PLANE_FN
#undef T_V
#undef T_L
#undef T_ATTR
