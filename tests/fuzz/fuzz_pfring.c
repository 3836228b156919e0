/*
 * libFuzzer target: the stream a node of --ml-preflight=full receives
 * from its predecessor in the ring (ml_pf_rx_feed, spank/node/
 * preflight_ring.c), which root reads in slurmstepd.  Bytes 0-2: the
 * ring's size (1-16), this node's place, the size of the pieces the rest
 * comes in.  Whatever comes: each other node's record is taken once at
 * most, never this node's, nothing after a refusal; the header and the
 * bulk are each complete once, the header first.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"	/* first: _GNU_SOURCE */

#include <limits.h>

#include "preflight.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ml_pf_rec recs[16];
	int order[16], seen_hdr = 0, seen_bulk = 0;
	struct ml_pf_rx x;
	size_t piece;

	if (size < 3)
		return 0;
	memset(recs, 0, sizeof(recs));
	memset(&x, 0, sizeof(x));
	x.n = 1 + data[0] % 16;
	x.me = data[1] % x.n;
	x.from = (x.me + x.n - 1) % x.n;
	x.jobid = 7;
	x.stepid = 3;
	x.bytes = 64;
	x.recs = recs;
	x.order = order;
	piece = 1 + data[2] % 40;
	data += 3;
	size -= 3;
	while (size) {
		size_t k = piece < size ? piece : size;
		int got = x.got, ev;
		bool bad = x.bad;
		size_t off = x.off;

		ev = ml_pf_rx_feed(&x, data, k);
		if (bad && (x.got != got || x.off != off || ev))
			abort();	/* nothing after a refusal */
		if ((ev & ML_PF_RX_HDR) && seen_hdr++)
			abort();
		if ((ev & ML_PF_RX_BULK) && (seen_bulk++ || !seen_hdr))
			abort();
		data += k;
		size -= k;
	}
	if (x.got < 0 || x.got > x.n - 1 || x.off > 20 + x.bytes)
		abort();
	for (int i = 0, known = 0; i < x.n; i++) {
		known += recs[i].known;
		if (recs[i].known && (i == x.me || recs[i].probe_us < 0 ||
				      recs[i].probe_us > INT32_MAX ||
				      recs[i].bw_kbs < 0 ||
				      recs[i].bw_kbs > INT32_MAX))
			abort();
		if (i == x.n - 1 && known != x.got)
			abort();
	}
	for (int k = 0; k < x.got; k++)
		for (int j = 0; j < k; j++)
			if (order[j] == order[k] || !recs[order[k]].known)
				abort();
	return 0;
}
