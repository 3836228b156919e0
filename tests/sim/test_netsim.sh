#!/bin/bash
# topoml-netsim (SimGrid) on cases worked out by hand: one job alone on a
# leaf takes the analytic ring time, two rings sharing an uplink take
# longer than alone, two on disjoint leaves do not; a dragonfly, a
# torus, jobs from the trace simulator; --ml-parallel jobs' tensor,
# pipeline and data-parallel phases; the bounds; mistakes.  Skips without
# SimGrid.
set -u
netsim=${TOP_BUILDDIR:-../..}/contrib/topoml-netsim
if [ ! -x "$netsim" ]; then
	echo "SKIP: topoml-netsim not built (no SimGrid)"
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_netsim.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 8 nodes, two leaves of 4 under one top switch.
cat >"$tmp/ft.json" <<'JSON'
{ "family": "fat-tree", "switches": [
  { "name": "l1", "nodes": "c[1-4]" },
  { "name": "l2", "nodes": "c[5-8]" },
  { "name": "top", "switches": "l[1-2]" } ] }
JSON

# time of job $2 in output file $1 (column 3), alone (column 4)
col() { awk -v j="$2" -v c="$3" '$1 == j { print $c }' "$1"; }
# |a - b| <= tol * b
near() { awk -v a="$1" -v b="$2" -v t="$3" \
	'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t * b) }'; }
gt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }

# 1. one job of n=4 alone on leaf l1: 2(n-1) steps, each size/n over the
# node links at bw plus two link latencies (node up, node down).
printf 'a=c[1-4]\n' >"$tmp/one"
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/one" -m 1M -b 100 -l 1 \
	>"$tmp/out1" || fail "one job"
want=$(awk 'BEGIN { n = 4; s = 1048576; bw = 100e9 / 8; l = 1e-6;
	printf "%.12g", 2 * (n - 1) * (s / n / bw + 2 * l) }')
got=$(col "$tmp/out1" a 3)
near "$got" "$want" 0.001 || fail "one job: $got s, analytic $want s"
# the same with 4 us links and a 64 MiB message
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/one" -m 64M -b 400 -l 4 \
	>"$tmp/out1b" || fail "one job, 400 Gbit/s"
want=$(awk 'BEGIN { n = 4; s = 64 * 1048576; bw = 400e9 / 8; l = 4e-6;
	printf "%.12g", 2 * (n - 1) * (s / n / bw + 2 * l) }')
got=$(col "$tmp/out1b" a 3)
near "$got" "$want" 0.001 || fail "64M: $got s, analytic $want s"

# 2. two rings over both leaves: each crosses the l1-top uplink once up
# and once down, so the two share it.  Alone: four links a step.
printf 'a=c[1-2,5-6] 10\nb=c[3-4,7-8] 30\n' >"$tmp/share"
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/share" -m 1M -b 100,100 -l 1 \
	--alone >"$tmp/out2" || fail "shared uplink"
alone=$(col "$tmp/out2" a 4)
want=$(awk 'BEGIN { n = 4; s = 1048576; bw = 100e9 / 8; l = 1e-6;
	printf "%.12g", 2 * (n - 1) * (s / n / bw + 4 * l) }')
near "$alone" "$want" 0.001 || fail "across leaves alone: $alone, $want"
for j in a b; do
	t=$(col "$tmp/out2" $j 3)
	gt "$t" "$(awk -v a="$alone" 'BEGIN { print a * 1.2 }')" ||
		fail "job $j sharing the uplink: $t s, alone $alone s"
done
# each gets half the uplink: the transfer term doubles
want=$(awk 'BEGIN { n = 4; s = 1048576; bw = 100e9 / 8; l = 1e-6;
	printf "%.12g", 2 * (n - 1) * (2 * s / n / bw + 4 * l) }')
near "$(col "$tmp/out2" a 3)" "$want" 0.001 ||
	fail "shared: $(col "$tmp/out2" a 3) s, half bandwidth $want s"
grep -q "run-weighted mean" "$tmp/out2" || fail "no mean line"
# an uplink twice as fast carries both at full speed, and so does one
# of the leaf's 4 nodes' bandwidth with a taper of 2 (the default uplink)
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/share" -m 1M -b 100 -l 1 \
	--taper 2 >"$tmp/out2c" || fail "taper 2"
near "$(col "$tmp/out2c" a 3)" "$alone" 0.001 ||
	fail "taper 2: $(col "$tmp/out2c" a 3) s, alone $alone s"
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/share" -m 1M -b 100 -l 1 \
	--taper 4 >"$tmp/out2d" || fail "taper 4"
near "$(col "$tmp/out2d" a 3)" "$(col "$tmp/out2" a 3)" 0.001 ||
	fail "taper 4: $(col "$tmp/out2d" a 3) s, not as -b 100,100"
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/share" -m 1M -b 100,200 -l 1 \
	>"$tmp/out2b" || fail "fast uplink"
near "$(col "$tmp/out2b" a 3)" "$alone" 0.001 ||
	fail "fast uplink: $(col "$tmp/out2b" a 3) s, alone $alone s"

# 3. disjoint leaves: no shared link, each as fast as alone.
printf 'a=c[1-4]\nb=c[5-8]\n' >"$tmp/dis"
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/dis" -m 1M -b 100 -l 1 \
	--alone >"$tmp/out3" || fail "disjoint"
for j in a b; do
	near "$(col "$tmp/out3" $j 3)" "$(col "$tmp/out3" $j 4)" 0.001 ||
		fail "disjoint job $j: $(col "$tmp/out3" $j 3) s vs alone"
done

# 4. run-weighted mean and p95 (nearest rank on the weights): a (4 ranks)
# is slower than b (2 ranks); with b 99% of the weight p95 is b's time,
# with 90% it is a's.
stat() { awk '/run-weighted mean/ { print $(NF - 4), $(NF - 1) }' "$1"; }
for wb in 99 90; do
	printf 'a=c[1-4] %d\nb=c[5-6] %d\n' $((100 - wb)) $wb >"$tmp/w"
	"$netsim" -q -t "$tmp/ft.json" -J "$tmp/w" -m 1M >"$tmp/out4" ||
		fail "weights"
	ta=$(col "$tmp/out4" a 3) tb=$(col "$tmp/out4" b 3)
	gt "$ta" "$tb" || fail "4 ranks not slower than 2"
	read -r mean p95 <<<"$(stat "$tmp/out4")"
	near "$mean" "$(awk -v a="$ta" -v b="$tb" -v w="$wb" \
		'BEGIN { print (a * (100 - w) + b * w) / 100 }')" 0.0001 ||
		fail "weighted mean $mean ($wb)"
	[ "$wb" = 99 ] && want=$tb || want=$ta
	near "$p95" "$want" 0.0001 || fail "p95 $p95, want $want ($wb)"
done

# 5. dragonfly and torus: a job inside a router is faster than one
# spread over two groups; the platform file is SimGrid XML.
cat >"$tmp/df.json" <<'JSON'
{ "family": "dragonfly", "groups": [
  { "name": "g0", "routers": [
    { "name": "g0r0", "nodes": "d[1-4]" },
    { "name": "g0r1", "nodes": "d[5-8]" } ] },
  { "name": "g1", "routers": [
    { "name": "g1r0", "nodes": "d[9-12]" },
    { "name": "g1r1", "nodes": "d[13-16]" } ] } ] }
JSON
printf 'in=d[1-4]\nacross=d[5-6,9-10]\n' >"$tmp/dfj"
"$netsim" -q -t "$tmp/df.json" -J "$tmp/dfj" -m 1M \
	--platform "$tmp/df.xml" >"$tmp/out5" || fail "dragonfly"
gt "$(col "$tmp/out5" across 3)" "$(col "$tmp/out5" in 3)" ||
	fail "dragonfly: across groups not slower"
grep -q 'routing="DijkstraCache"' "$tmp/df.xml" || fail "platform file"
# torus 4x4 (wrapped): the ring t1..t4 along x is one torus link a step,
# t4 -> t1 the wrap-around one, so three links a step.
printf '{ "family": "torus", "dims": [4, 4, 1], "node_pattern": %s }\n' \
	'{ "prefix": "t" }' >"$tmp/torus.json"
printf 'x=t[1-4]\n' >"$tmp/tj"
"$netsim" -q -t "$tmp/torus.json" -J "$tmp/tj" -m 1M -b 100 -l 1 \
	>"$tmp/out6" || fail "torus"
want=$(awk 'BEGIN { n = 4; s = 1048576; bw = 100e9 / 8; l = 1e-6;
	printf "%.12g", 2 * (n - 1) * (s / n / bw + 3 * l) }')
near "$(col "$tmp/out6" x 3)" "$want" 0.001 ||
	fail "torus: $(col "$tmp/out6" x 3) s, analytic $want s"

# 6. from the trace simulator: at 5 s a job of 4 nodes and one of 3 run
# (topoml: one leaf each), equal run times, so the mean is the mean of
# their analytic times; one summary row per policy.
cat >"$tmp/bf.csv" <<'CSV'
submit,nodes,runtime,walltime
0,4,100,100
1,3,100,100
2,2,50,50
CSV
"$netsim" -q -t "$tmp/ft.json" -T "$tmp/bf.csv" -p topoml,slurm-tree \
	--at 5 -m 1M -b 100 -l 1 >"$tmp/out7" || fail "--trace"
want=$(awk 'BEGIN { s = 1048576; bw = 100e9 / 8; l = 1e-6;
	a = 6 * (s / 4 / bw + 2 * l); b = 4 * (s / 3 / bw + 2 * l);
	printf "%.12g", (a + b) / 2 }')
got=$(awk '$1 == "topoml" && NF == 6 { print $3 }' "$tmp/out7")
near "$got" "$want" 0.001 || fail "--trace: topoml mean $got, want $want"
grep -q '^slurm-tree  *2 ' "$tmp/out7" || fail "--trace: no slurm-tree row"
# -N as topoml sim: a trace of a 16-node machine on 8 nodes halves the
# jobs (4 -> 2, 3 -> 2, 2 -> 1 node)
"$netsim" -q -t "$tmp/ft.json" -T "$tmp/bf.csv" -p topoml --at 5 -N 16 \
	-m 1M >"$tmp/out7c" || fail "-N"
[ "$(awk '$2 == 2 && NF == 4' "$tmp/out7c" | wc -l)" = 2 ] ||
	fail "-N 16: not two 2-node jobs: $(cat "$tmp/out7c")"
# slurm-torus3d on a torus: topoml sim's every-size shapes
"$netsim" -q -t "$tmp/torus.json" -T "$tmp/bf.csv" \
	-p topoml,slurm-torus3d --at 5 -m 1M >"$tmp/out7d" ||
	fail "slurm-torus3d"
grep -q '^slurm-torus3d  *3 ' "$tmp/out7d" ||
	fail "slurm-torus3d placed no job: $(tail -1 "$tmp/out7d")"
# a policy that cannot express the fabric is n/a, with topoml place's why
"$netsim" -q -t "$tmp/ft.json" -T "$tmp/bf.csv" -p topoml,slurm-hilbert \
	--at 5 -m 1M >"$tmp/out7b" || fail "--trace n/a"
grep -q '^slurm-hilbert  *n/a (.*torus' "$tmp/out7b" ||
	fail "no n/a row: $(tail -1 "$tmp/out7b")"
# --at takes as many times as --snapshots: 64, not one more
at=$(seq -s, 1 64)
"$netsim" -q -t "$tmp/ft.json" -T "$tmp/bf.csv" -p topoml --at "$at" \
	-m 1M >"$tmp/out7e" || fail "--at of 64 times"
[ "$(grep -c '^== topoml at ' "$tmp/out7e")" = 64 ] ||
	fail "--at of 64 times: not 64 snapshots"
"$netsim" -q -t "$tmp/ft.json" -T "$tmp/bf.csv" -p topoml --at "$at,65" \
	-m 1M >/dev/null 2>"$tmp/err"
[ $? = 2 ] || fail "--at of 65 times: not exit 2"
grep -q "is not a list of up to 64 positive numbers" "$tmp/err" ||
	fail "message: $(cat "$tmp/err")"

# 7. --ml-parallel jobs (tensor, pipeline, data parallel), by hand.
# Columns without --alone: 3 time, 4 tp_s, 5 pp_s, 6 dp_s, 7 shape.
# A pipeline of two stages on two nodes of a leaf: the activation one way
# and the gradient the other at once (split duplex): size/bw + 2 links'
# latency.
printf 'p=c[1-2] pp=2\n' >"$tmp/pp"
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/pp" -b 100 -l 1 --pp-size 8M \
	>"$tmp/out8" || fail "pp"
want=$(awk 'BEGIN { printf "%.12g", 8 * 1048576 / (100e9 / 8) + 2e-6 }')
near "$(col "$tmp/out8" p 3)" "$want" 0.001 ||
	fail "pp alone: $(col "$tmp/out8" p 3) s, analytic $want s"
near "$(col "$tmp/out8" p 5)" "$want" 0.001 || fail "pp_s column"
# three stages: the middle node sends both ways, its link carries two
# flows up: twice the transfer.
printf 'q=c[1-3] pp=3\n' >"$tmp/pp3"
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/pp3" -b 100 -l 1 --pp-size 8M \
	>"$tmp/out8b" || fail "pp=3"
want=$(awk 'BEGIN { printf "%.12g", 2 * 8 * 1048576 / (100e9 / 8) + 2e-6 }')
near "$(col "$tmp/out8b" q 3)" "$want" 0.001 ||
	fail "pp=3: $(col "$tmp/out8b" q 3) s, analytic $want s"
# flows share a link equally, whatever their route's latency: 40 nodes x
# 4 ranks, tp=4, pp=5 over two leaves of 24; a middle stage's node sends
# 8 activations and gradients, two stages' pairs cross the leaves.  Each
# node link carries 8 flows at once: 8 x 64 MiB at 200 Gbit/s, plus the
# longest route's 4 us (SimGrid's own TCP-like sharing took 9/8 of it).
printf '{ "family": "fat-tree", "switches": [ %s, %s, %s ] }\n' \
	'{ "name": "l1", "nodes": "c[1-24]" }' \
	'{ "name": "l2", "nodes": "c[25-48]" }' \
	'{ "name": "top", "switches": "l[1-2]" }' >"$tmp/ft48.json"
printf 'a=c[1-40] tp=4,pp=5\n' >"$tmp/fair"
"$netsim" -q -t "$tmp/ft48.json" -J "$tmp/fair" --hybrid 4 -m 1K \
	--tp-size 1K >"$tmp/out8c" || fail "fair sharing"
want=$(awk 'BEGIN { printf "%.12g", 8 * 64 * 1048576 / 25e9 + 4e-6 }')
near "$(col "$tmp/out8c" a 5)" "$want" 0.001 ||
	fail "fair sharing: pp $(col "$tmp/out8c" a 5) s, analytic $want s"
# a tensor group of 4 inside a node: a ring on the node's NVLink
# (--nvlink, --nvlink-latency), no network.
printf 't=c1 tp=4\n' >"$tmp/tp"
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/tp" --hybrid 4 --tp-size 8M \
	--nvlink 1000 --nvlink-latency 2 >"$tmp/out9" || fail "tp"
want=$(awk 'BEGIN { n = 4; s = 8 * 1048576; bw = 1000e9 / 8; l = 2e-6;
	printf "%.12g", 2 * (n - 1) * (s / n / bw + l) }')
near "$(col "$tmp/out9" t 3)" "$want" 0.001 ||
	fail "tp in a node: $(col "$tmp/out9" t 3) s, analytic $want s"
# 2 nodes x 2 ranks, tp=2 in each node, dp=2: two data-parallel rings
# share each node link (half the bandwidth each), after the tensor phase.
printf 'd=c[1-2] 3 tp=2\n' >"$tmp/dp"
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/dp" --hybrid 2 --tp-size 8M \
	-m 4M -b 100 -l 1 --nvlink 1000 --nvlink-latency 2 >"$tmp/out10" ||
	fail "tp+dp"
tpw=$(awk 'BEGIN { printf "%.12g", 2 * (8 * 1048576 / 2 / 125e9 + 2e-6) }')
dpw=$(awk 'BEGIN { s = 4 * 1048576; bw = 100e9 / 8;
	printf "%.12g", 2 * (2 * (s / 2) / bw + 2e-6) }')
near "$(col "$tmp/out10" d 4)" "$tpw" 0.001 || fail "tp_s $tpw"
near "$(col "$tmp/out10" d 6)" "$dpw" 0.001 || fail "dp_s $dpw"
near "$(col "$tmp/out10" d 3)" "$(awk -v a="$tpw" -v b="$dpw" \
	'BEGIN { print a + b }')" 0.001 || fail "tp then dp"
[ "$(col "$tmp/out10" d 7)" = 2x2,2,1 ] || fail "shape column"
# from the trace with --hybrid 2 (topoml sim --hybrid's shapes): the
# 3-node job alone on leaf l2 under topoml is tp=2, dp=3; its two
# data-parallel rings share each node link.
"$netsim" -q -t "$tmp/ft.json" -T "$tmp/bf.csv" -p topoml,slurm-tree \
	--at 5 -m 1M -b 100 -l 1 --hybrid 2 >"$tmp/out11" ||
	fail "--trace --hybrid"
got=$(awk '/^== topoml/ { on = 1 } /^== slurm/ { on = 0 }
	on && $2 == 3 { print $6 }' "$tmp/out11")
want=$(awk 'BEGIN { c = 349526; bw = 100e9 / 8;
	printf "%.12g", 2 * 2 * (2 * c / bw + 2e-6) }')
near "$got" "$want" 0.001 || fail "--hybrid 3-node job dp $got, $want"
grep -q ' 4x2,2,2 ' "$tmp/out11" || fail "--hybrid: no tp=2,pp=2 job"
grep -q '^slurm-tree  *2 .* [0-9.e-]*  *[0-9.e-]*  *[0-9.e-]*$' \
	"$tmp/out11" || fail "--hybrid: no per-kind means"

# --hybrid-wait (topoml sim's): at 120 s the 6-node job of two stages of
# 3 has only c[3-8] free, a stage over both leaves: it runs at once
# without the wait and is held with it (its leaves free at 150 s).
printf 'submit,nodes,runtime,walltime\n0,4,100,100\n1,3,100,100\n%s\n' \
	'2,2,50,50' >"$tmp/hw.csv"
printf '3,6,100,100\n' >>"$tmp/hw.csv"
for w in 0 1000; do
	"$netsim" -q -t "$tmp/ft.json" -T "$tmp/hw.csv" -p topoml \
		--at 120 -m 1M -b 100 -l 1 --hybrid 2 --hybrid-wait $w \
		>"$tmp/hw$w" || fail "--hybrid-wait $w"
done
grep -q '^5  *6 .* c\[3-8\]$' "$tmp/hw0" || fail "no wait: job 5 not on c[3-8]"
grep -q '^5 ' "$tmp/hw1000" && fail "--hybrid-wait 1000: job 5 not held"

# NVLink blocks (a block topology.conf, each block a domain): a pipeline
# inside a block crosses both nodes' NVLink ports (1 us together),
# one between blocks the network's four links (node, block up, down, node).
printf 'BlockName=b1 Nodes=g[1-4]\nBlockName=b2 Nodes=g[5-8]\n%s\n' \
	'BlockSizes=4,8' >"$tmp/blk.conf"
printf 'in=g[1-2] pp=2\nout=g[4-5] pp=2\n' >"$tmp/bj"
"$netsim" -q -t "$tmp/blk.conf" -J "$tmp/bj" -b 100 -l 1 --pp-size 8M \
	--nvlink 1000 --nvlink-latency 3 >"$tmp/out12" || fail "blocks"
want=$(awk 'BEGIN { printf "%.12g", 8 * 1048576 / 125e9 + 3e-6 }')
near "$(col "$tmp/out12" in 3)" "$want" 0.001 ||
	fail "in a block: $(col "$tmp/out12" in 3) s, analytic $want s"
want=$(awk 'BEGIN { printf "%.12g", 8 * 1048576 / 12.5e9 + 4e-6 }')
near "$(col "$tmp/out12" out 3)" "$want" 0.001 ||
	fail "across blocks: $(col "$tmp/out12" out 3) s, analytic $want s"

# blocks with no common parent (BlockSizes of one block): Slurm's nodes
# still reach each other, through a root
printf 'BlockName=b1 Nodes=g[1-4]\nBlockName=b2 Nodes=g[5-8]\n%s\n' \
	'BlockSizes=4' >"$tmp/blk1.conf"
printf 'x=g[3-6]\n' >"$tmp/bj1"
"$netsim" -q -t "$tmp/blk1.conf" -J "$tmp/bj1" -m 1M >"$tmp/out12b" ||
	fail "blocks without a common parent"

# 8. the bounds: too many transfers before a run, too long a run.
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/one" --max-transfers 10 \
	>/dev/null 2>"$tmp/err"
[ $? = 3 ] || fail "--max-transfers: not exit 3"
grep -q "24 transfers in one SimGrid run, more than --max-transfers 10" \
	"$tmp/err" || fail "message: $(cat "$tmp/err")"
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/one" --time-limit 0.000001 \
	>/dev/null 2>"$tmp/err"
[ $? = 3 ] || fail "--time-limit: not exit 3"
grep -q "more than --time-limit 1e-06 s of wall time" "$tmp/err" ||
	fail "message: $(cat "$tmp/err")"

# 9. mistakes: usage 2, bad job 1.
printf 'a=c[1-2] tp=3\n' >"$tmp/bad3"
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/bad3" >/dev/null 2>"$tmp/err"
[ $? = 1 ] || fail "tp=3 on 2 ranks: not exit 1"
printf 'a=c[1-2] cp=2\n' >"$tmp/bad4"
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/bad4" >/dev/null 2>"$tmp/err"
[ $? = 1 ] || fail "cp=2: not exit 1"
grep -q "not simulated" "$tmp/err" || fail "message: $(cat "$tmp/err")"
"$netsim" -q -t "$tmp/ft.json" >/dev/null 2>&1
[ $? = 2 ] || fail "no jobs: not exit 2"
printf 'a=c[1-2,99]\n' >"$tmp/bad"
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/bad" >/dev/null 2>"$tmp/err"
[ $? = 1 ] || fail "unknown node: not exit 1"
grep -q "unknown node 'c99'" "$tmp/err" || fail "message: $(cat "$tmp/err")"
printf 'a=c[1-2]\nb=c[2-3]\n' >"$tmp/bad2"
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/bad2" >/dev/null 2>"$tmp/err"
[ $? = 1 ] || fail "node in two jobs: not exit 1"
printf '{ "family": "fat-tree", "switches": [ %s, %s ] }\n' \
	'{ "name": "l1", "nodes": "c[1-2]" }' \
	'{ "name": "l2", "nodes": "c[3-4]" }' >"$tmp/apart.json"
printf 'a=c[1-4]\n' >"$tmp/apart"
timeout 60 "$netsim" -q -t "$tmp/apart.json" -J "$tmp/apart" \
	>/dev/null 2>"$tmp/err"
[ $? = 1 ] || fail "no common switch: not exit 1"
grep -q "no common switch" "$tmp/err" || fail "message: $(cat "$tmp/err")"
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/one" -b 0 >/dev/null 2>&1
[ $? = 2 ] || fail "--bandwidth 0: not exit 2"
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/one" --box-wait -1 >/dev/null 2>&1
[ $? = 2 ] || fail "--box-wait -1: not exit 2"
"$netsim" -q -t "$tmp/ft.json" -J "$tmp/one" --hybrid-wait x >/dev/null 2>&1
[ $? = 2 ] || fail "--hybrid-wait x: not exit 2"
echo "PASS"
