/*
 * One row of the node-sharing torus search's box sums mod 2^16
 * (place_shared.c), written once for two vector widths: included with
 * T_ROW_FN and T_PLANE_FN (the functions' names), T_V (a vector of T_L
 * uint16_t) and T_ATTR (their target) defined, which it undefines.
 *
 * The row of origin (y, z) of boxes of sides sd: S(x), the sum mod 2^16
 * of the cells before x in its slab of sides sd[1] x sd[2] (wrapped in y
 * and z: up to four parts, four reads each), so that the box at x of
 * side s = sd[0] is S(x + s) - S(x), or S(d[0]) - S(x) + S(x + s - d[0])
 * where it wraps round the torus' end.  Whether one of the row's first n
 * origins holds units with less than w spare, where its boxes hold fewer
 * than 2^16 units: u - units mod 2^16 is below w' = min(w, 2^16 - units)
 * iff units <= u and u - units < w (u < units wraps to 2^16 - units or
 * more).  Read from the sums (p16, padded by T_L) alone, a vector at a
 * time: a row of S stored then read at x + s would wait on its stores.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
T_ATTR static inline __attribute__((always_inline)) bool
T_ROW_FN(const struct topoml_psum *g, const uint16_t *p16,
	 int y, int z, const int sd[3], int n, long units, long w)
{
	const int *d = g->d;
	int lo[2][2], hi[2][2], nw[2] = { 1, 1 }, o[2] = { y, z }, np = 0;
	int s = sd[0], m = d[0] - s + 1 < n ? d[0] - s + 1 : n, x;
	const uint16_t *p[4][4];
	uint16_t un = (uint16_t)units, uw, end = 0;
	T_V any = { 0 }, vu, vw, vm, vn, ve, lane, a, b;
	uint64_t q[sizeof(T_V) / 8], hit = 0;

	for (int k = 0; k < 2; k++) {
		lo[k][0] = o[k];
		hi[k][0] = o[k] + sd[k + 1];
		if (hi[k][0] > d[k + 1]) {
			hi[k][0] = d[k + 1];
			lo[k][1] = 0;
			hi[k][1] = o[k] + sd[k + 1] - d[k + 1];
			nw[k] = 2;
		}
	}
	/* S(x) = p[.][0][x] - p[.][1][x] - p[.][2][x] + p[.][3][x] */
	for (int i = 0; i < nw[0]; i++)
		for (int j = 0; j < nw[1]; j++, np++) {
			p[np][0] = &p16[topoml__psum_at(g, 0, hi[0][i],
							hi[1][j])];
			p[np][1] = &p16[topoml__psum_at(g, 0, lo[0][i],
							hi[1][j])];
			p[np][2] = &p16[topoml__psum_at(g, 0, hi[0][i],
							lo[1][j])];
			p[np][3] = &p16[topoml__psum_at(g, 0, lo[0][i],
							lo[1][j])];
			end += p[np][0][d[0]] - p[np][1][d[0]] -
			       p[np][2][d[0]] + p[np][3][d[0]];
		}
/* r += S(x0 + lanes) x sign (one part: its pointers in registers) */
#define T_S1(r, x0, sign, k)						\
	do {								\
		memcpy(&a, p[k][0] + (x0), sizeof(a));			\
		memcpy(&b, p[k][1] + (x0), sizeof(b));			\
		r sign##= a - b;					\
		memcpy(&a, p[k][2] + (x0), sizeof(a));			\
		memcpy(&b, p[k][3] + (x0), sizeof(b));			\
		r sign##= b - a;					\
	} while (0)
#define T_S(r, x0, sign)						\
	do {								\
		T_S1(r, x0, sign, 0);					\
		for (int k = 1; k < np; k++)				\
			T_S1(r, x0, sign, k);				\
	} while (0)
	w = w < 65536 - units ? w : 65536 - units;
	uw = (uint16_t)(w > 65535 ? 65535 : w);
	vu = (T_V){ 0 } + un;
	vw = (T_V){ 0 } + uw;
	vm = (T_V){ 0 } + (uint16_t)m;
	vn = (T_V){ 0 } + (uint16_t)n;
	for (int k = 0; k < T_L; k++)
		lane[k] = (uint16_t)k;
	/* the boxes inside the row, the last vector's lanes from m masked */
	for (x = 0; x < m; x += T_L) {
		T_V u = -vu;

		T_S(u, x + s, +);
		T_S(u, x, -);
		u = (T_V)(u < vw);
		if (x + T_L > m)
			u &= (T_V)(lane + (uint16_t)x < vm);
		any |= u;
	}
	/* those that wrap round the end of the torus */
	ve = (T_V){ 0 } + end;
	for (x = m; x < n; x += T_L) {
		T_V u = ve - vu;

		T_S(u, x + s - d[0], +);
		T_S(u, x, -);
		any |= (T_V)(u < vw) & (T_V)(lane + (uint16_t)x < vn);
	}
#undef T_S
#undef T_S1
	memcpy(q, &any, sizeof(q));
	for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++)
		hit |= q[k];
	return hit;
}

/* Rows 0..ny - 1 of the plane z: hits, bit y set where row y holds such
 * a box (a call a plane, the row's constants made once). */
T_ATTR static void T_PLANE_FN(const struct topoml_psum *g,
			      const uint16_t *p16, int z, const int sd[3],
			      int n, int ny, long units, long w,
			      uint64_t *hits)
{
	memset(hits, 0, (size_t)(ny + 63) / 64 * sizeof(*hits));
	for (int y = 0; y < ny; y++)
		if (T_ROW_FN(g, p16, y, z, sd, n, units, w))
			hits[y / 64] |= 1ULL << (y % 64);
}

#undef T_ROW_FN
#undef T_PLANE_FN
#undef T_V
#undef T_L
#undef T_ATTR
