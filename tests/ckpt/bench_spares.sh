#!/bin/bash
# make bench: the fault-injection benchmark of issue 13 (item 5) on the
# local cluster with real PyTorch (test_ckpt_spares.sh's jobs, run
# longer): 9 workers + 1 spare (--ml-spares=1), one node of the 10 (10 %)
# killed after checkpoint 20; the same failure on a --requeue job without
# spare (cred_expire=5); an uninterrupted job beside them.  Prints the recovery
# time (kill to training again) of each path, the steps trained again and
# each job's time to solution against the uninterrupted one's, measured
# in the same run.  SPARES_STEPS (default 800 steps of SPARES_MS=100 ms,
# about 100 s of training on this 2-core machine): a longer run lowers
# the ratio, as a real training run of hours would.  Root only; a skip
# is not a failure of make bench.
# SPDX-License-Identifier: GPL-2.0-or-later
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
export SPARES_WORKERS=${SPARES_WORKERS:-9} SPARES_STEPS=${SPARES_STEPS:-800}
export SPARES_TASKFAIL=${SPARES_TASKFAIL:-0}
export SPARES_SHRINK=${SPARES_SHRINK:-0}
bash "$TESTS_DIR/ckpt/test_ckpt_spares.sh"
rc=$?
[ "$rc" = 77 ] && { echo "bench_spares: skipped"; exit 0; }
exit "$rc"
