#!/bin/bash
# Run one libFuzzer target for FUZZ_TIME seconds (default 60) from the
# tests build directory: seeds come from the committed corpus
# (fuzz/corpus/<name>), the project's fixtures and, when present, the shared
# real data (read in place, never copied into the repository); new inputs
# go to fuzz/work/<name> in the build tree.  Exit 0 only when the run ended
# with no crash, leak, timeout (-timeout=1: an input slower than 1 s is a
# failure) or out-of-memory (-rss_limit_mb=2048).
#
# usage: fuzz/run.sh fuzz/fuzz_NAME     (run by make fuzz)
# env:   FUZZ_TIME (seconds), FUZZ_RUNS (stop after N executions too),
#        FUZZ_SEED (libFuzzer's -seed: with FUZZ_RUNS, the same inputs on
#        every run, as CI wants),
#        FUZZ_MAX_LEN (bytes, 4096), TOP_SRCDIR, TESTS_DIR, REALDATA (set
#        by make)
set -uo pipefail
bin=$1
name=$(basename "$bin")
name=${name#fuzz_}
src=${TESTS_DIR:?}
top=${TOP_SRCDIR:?}
rd=${REALDATA:-}
[ -n "$rd" ] && [ -d "$rd" ] || rd=
time=${FUZZ_TIME:-60}
runs=${FUZZ_RUNS:--1}
# Larger inputs are slower and rarely reach new code: 4 KB by default.
max_len=${FUZZ_MAX_LEN:-4096}

work=fuzz/work/$name
seeds=fuzz/seeds/$name
art=fuzz/artifacts/$name
rm -rf "$seeds"
mkdir -p "$work" "$seeds" "$art"

# Existing paths only: libFuzzer reads each corpus directory recursively.
dirs=()
opts=()
leaks=1
add() { for d in "$@"; do [ -e "$d" ] && dirs+=("$d"); done; }
# Seeds that need a selector byte or splitting: generated here, at most
# 8 KB each so the fuzzer stays fast.
gen() {	# gen PREFIX-BYTE-OCTAL FILE...
	local b=$1 f; shift
	for f in "$@"; do
		[ -f "$f" ] || continue
		{ printf "\\$b"; head -c 8192 "$f"; } \
			>"$seeds/$b-$(basename "$f")"
	done
}

add "$src/fuzz/corpus/$name"
case $name in
conf)	add "$src/fixtures/loaders/conf"
	cp "$top/contrib/topologies/fat-tree.conf" "$seeds/"
	[ -n "$rd" ] && add "$rd/topology_conf" "$rd/test_suites" ;;
json)	add "$top/contrib/topologies" ;;
ibnet)	add "$src/fixtures/loaders/ib"
	[ -n "$rd" ] && add "$rd/ibnetdiscover" ;;
siteconf)
	cp "$top/contrib/examples/topoml.conf" "$seeds/" ;;
trace)	# First byte: format (0 auto, 1 SWF, 2 CSV, 3 MTech) and options.
	for b in 000 001 002 003 017 177; do
		gen $b "$src"/fixtures/sim/*
		[ -n "$rd" ] && gen $b "$rd"/swf/*
	done ;;
plugstack)
	# The arguments after the plugin path in the example plugstack.conf.
	grep -v '^#' "$top/contrib/examples/plugstack.conf" |
		awk 'NF > 2 { for (i = 3; i <= NF; i++) print $i }' \
		>"$seeds/example" ;;
mlopt)	# First byte: option (0 gpu-bind, 1 nccl, 2 rank-order, 3 comm).
	i=0
	for vals in "auto nvlink none" "auto off" "topology slurm" \
		    "allreduce alltoall isolate"; do
		for v in $vals; do
			printf "\\00$i%s" "$v" >"$seeds/$i-$v"
		done
		i=$((i + 1))
	done ;;
hostlist)
	# Checked against libslurm's parser, which leaks on what it refuses:
	# leaks are fuzz_nodeset's job.
	opts+=(-detect_leaks=0)
	leaks=0
	add "$src/fuzz/corpus/nodeset" ;;
esac
add "$seeds"

log=fuzz/$name.log
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=$leaks} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
"$bin" -max_total_time="$time" -runs="$runs" -max_len="$max_len" -timeout=1 \
	${FUZZ_SEED:+-seed=$FUZZ_SEED} \
	-rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$art/" "${opts[@]}" "$work" "${dirs[@]}" \
	>"$log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
secs=$(sed -n 's/.*Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" |
	tail -1)
corpus=$(find "$work" -type f | wc -l)
if [ $rc -eq 0 ] && ! grep -q 'ERROR: libFuzzer\|ERROR: \(Address\|Leak\)Sanitizer\|runtime error:' "$log"; then
	echo "fuzz $name: PASS ${execs:-?} executions in ${secs:-?} s," \
		"corpus $corpus files ($log)"
	exit 0
fi
echo "fuzz $name: FAIL (exit $rc), artifacts in $art/, log $log:"
grep -E 'ERROR|SUMMARY|runtime error|Test unit written|^    #[0-9] ' "$log" |
	head -30
exit 1
