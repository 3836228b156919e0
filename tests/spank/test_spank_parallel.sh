#!/bin/bash
# --ml-parallel with real PyTorch (gloo, CPU), as an unprivileged user: 8
# slurmd, 2 tasks each, tp=2,pp=4 (dp=2 is the rest).  The network puts
# n1,n5 | n2,n6 under spine1 and n3,n7 | n4,n8 under spine2, so Slurm's
# node order (n1, n2, ...) splits every pair of consecutive nodes across
# leaves.  tests/spank/hybrid_groups.py builds its tensor, data and
# pipeline groups with torch.distributed.new_group in Megatron-LM's order
# and reports, through an all_reduce in each group, the nodes each landed
# on.  Asserted: every TP group on one node, every DP group on one leaf
# (the fewest), pipeline neighbours under one spine except the one
# crossing 4 stages on 2 spines need; with --ml-rank-order=slurm the same
# job splits DP groups across leaves (so the check can fail); a size that
# does not divide the tasks fails the job with the reason, node not
# drained.  2. With NVLink domains of 2 nodes and tp=4 at 2 tasks a
# node, select/topoml keeps every tensor group in one domain for an
# --ml-parallel job (the engine's ring alone splits them).  3. Spines of
# 2, 4 and 2 nodes, tp=2,pp=2: order= (so RANK) is the stage order of
# topoml_hybrid_rank, where the ring straddles spines with both stages;
# with --ml-spares=2 the spares stay last in order=, and with n2 busy a
# -N6 job's choice is ranked on its workers (both stages in one spine).
#
# SPDX-License-Identifier: GPL-2.0-or-later
. "${TESTS_DIR:-$(dirname "$0")/..}/spank/spank_lib.sh"

U=topomlhybrid
PY=/usr/bin/python3
[ -x $PY ] || { echo "SKIP: no $PY"; exit 77; }
$PY -c 'import torch.distributed as d; assert d.is_gloo_available()' \
	2>/dev/null || { echo "SKIP: no python3-torch with gloo"; exit 77; }

work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-spank-parallel.XXXXXX")
chmod 755 "$work"
cp "${TESTS_DIR:-$(dirname "$0")/..}/fixtures/hybrid/spines-n8.conf" \
	"$work/net.conf"
printf 'TopologyFile=%s\n' "$work/net.conf" >"$work/topoml.conf"
chmod 644 "$work"/*
leaf() { echo $(( (${1#n} - 1) % 4 + 1 )); }
spine() { echo $(( ($(leaf "$1") + 1) / 2 )); }

CLUSTER_SLURMD=8 CLUSTER_SELECT=topoml CLUSTER_TOPOML_CONF=$work/topoml.conf \
	spank_start spank-parallel
trap 'cluster_stop; rm -rf "$SPANK_CACHE" "$work"' EXIT
cluster_user $U
cp "${TESTS_DIR:-$(dirname "$0")/..}/spank/hybrid_groups.py" \
	"$CLUSTER_DIR/hybrid_groups.py"
chmod 755 "$CLUSTER_DIR/hybrid_groups.py"
cd "$CLUSTER_DIR" || exit 1

as_user() {
	runuser -u $U -- env SLURM_CONF="$SLURM_CONF" GLOO_SOCKET_IFNAME=lo \
		"$@"
}

# run TAG SRUN-ARGS...: the groups of a 16-task job on n[1-8].
run() {
	local tag=$1
	shift
	as_user timeout 300 salloc -Q -N8 --ntasks-per-node=2 \
		srun "$@" $PY hybrid_groups.py >"$tag.out" 2>&1 ||
		cluster_fail "$tag: $(tail -20 "$tag.out")"
	grep '^GROUP ' "$tag.out" >"$tag.groups"
	[ "$(grep -c '^GROUP tp ' "$tag.groups")" = 8 ] &&
		[ "$(grep -c '^GROUP dp ' "$tag.groups")" = 8 ] &&
		[ "$(grep -c '^GROUP pp ' "$tag.groups")" = 4 ] ||
		cluster_fail "$tag: groups missing: $(cat "$tag.out")"
}

# leaves NODES: distinct leaves of a comma list of nodes.
leaves() {
	local n
	for n in ${1//,/ }; do leaf "$n"; done | sort -u | wc -l
}

run hybrid --ml-parallel=tp=2,pp=4
cat hybrid.groups
while read -r _ kind ranks nodes; do
	case $kind in
	tp)	[ "$(echo "${nodes//,/ }" | tr ' ' '\n' | sort -u | wc -l)" = 1 ] ||
			cluster_fail "TP group $ranks spans nodes $nodes" ;;
	dp)	[ "$(leaves "$nodes")" = 1 ] ||
			cluster_fail "DP group $ranks on nodes $nodes spans" \
				"$(leaves "$nodes") leaves" ;;
	pp)	set -- ${nodes//,/ }
		cross=0
		for ((i = 1; i < $#; i++)); do
			j=$((i + 1))
			[ "$(leaf "${!i}")" != "$(leaf "${!j}")" ] ||
				cluster_fail "PP group $ranks: stages $i and $j" \
					"on one leaf ($nodes)"
			[ "$(spine "${!i}")" = "$(spine "${!j}")" ] ||
				cross=$((cross + 1))
		done
		[ "$cross" = 1 ] ||
			cluster_fail "PP group $ranks ($nodes) crosses the" \
				"core $cross times, 1 is enough" ;;
	esac
done <hybrid.groups
echo "ok: 8 TP groups on one node each, 8 DP groups on one leaf each," \
	"4 pipelines crossing the core once"

# The control: Slurm's rank order on the same nodes splits DP groups.
run slurm --ml-parallel=tp=2,pp=4 --ml-rank-order=slurm
split=0
while read -r _ kind _ nodes; do
	[ "$kind" = dp ] && [ "$(leaves "$nodes")" -gt 1 ] && split=$((split + 1))
done <slurm.groups
[ "$split" -gt 0 ] ||
	cluster_fail "Slurm's order keeps DP groups in leaves too: no proof"
echo "ok: Slurm's order splits $split of 8 DP groups across leaves"

# A size that does not divide the tasks (env twin): the job fails with the
# reason, no node drained.
if as_user env TOPOML_PARALLEL=tp=3,pp=2 timeout 120 salloc -Q -N8 \
	--ntasks-per-node=2 srun true >bad.out 2>&1; then
	cluster_fail "tp=3 on 16 tasks ran"
fi
grep -q "does not divide the 16 tasks" bad.out ||
	cluster_fail "no reason in the job's output: $(cat bad.out)"
grep "does not divide" bad.out | head -1
# drain, down, fail: a state with a flag or another word than these
bad=$(sinfo -h -N -n 'n[1-8]' -o '%t' |
	awk '$1 !~ /^(idle|alloc|mix|comp(leting)?)$/' | wc -l)
[ "$bad" = 0 ] || cluster_fail "nodes left unusable: $(sinfo -N)"
echo "ok: tp=3 on 16 tasks refused in the job's output, nodes not drained"

# 3 tasks a node and tp=2: a tensor group straddles two nodes (two NVLink
# domains: no topology= here).  The job runs and its output has the
# verdict once, in either rank order.
verdict='^topoml: verdict on --ml-parallel=tp='
for ro in topology slurm; do
	as_user timeout 120 salloc -Q -N2 --ntasks-per-node=3 srun \
		--ml-parallel=tp=2,pp=1 --ml-rank-order=$ro true \
		>split.out 2>&1 || cluster_fail "tp=2 at 3 a node ($ro):" \
		"$(cat split.out)"
	[ "$(grep -c "${verdict}2,.*: tensor group of ranks 2-3 split over NVLink domains" \
		split.out)" = 1 ] || cluster_fail "tp=2 at 3 a node ($ro):" \
		"not one verdict: $(cat split.out)"
done
echo "ok: tensor groups across nodes: one verdict line, either rank order"

# --ml-parallel=auto,model=FILE (a relative FILE: from srun's directory,
# read as the user): the layout topoml plan prints for the same model on
# 8 nodes of 2 GPUs, exported exactly as the explicit option would.
cat >model.txt <<'MODEL'
# GPT 1.3B
layers = 24
hidden = 2048
heads = 16
seq = 2048
batch = 64
gpu = h100
MODEL
chmod 644 model.txt
"$TOP_BUILDDIR/contrib/topoml" plan --nodes 8 --gpus-per-node 2 \
	--model model.txt --top 1 >plan.out || cluster_fail "topoml plan:" \
	"$(cat plan.out)"
want=$(sed -n 's/^#1 tp=\([0-9]*\) pp=\([0-9]*\) dp=\([0-9]*\) cp=\([0-9]*\) ep=\([0-9]*\) .*/tp=\1,pp=\2,dp=\3,ep=\5,cp=\4/p' \
	plan.out)
[ -n "$want" ] || cluster_fail "no layout in topoml plan: $(cat plan.out)"
# exports TAG ARGS: each task's TOPOML_* group variables, sorted
exports() {
	local tag=$1
	shift
	as_user timeout 120 salloc -Q -N8 --ntasks-per-node=2 srun "$@" \
		bash -c 'env | grep -E "^TOPOML_(TP|PP|DP|EP|CP)" |
			sed "s/^/$SLURM_PROCID /"' >"$tag.out" 2>&1 ||
		cluster_fail "$tag: $(tail -20 "$tag.out")"
	grep -E '^[0-9]+ TOPOML_' "$tag.out" | sort >"$tag.env"
	[ "$(cut -d' ' -f1 "$tag.env" | sort -u | wc -l)" = 16 ] ||
		cluster_fail "$tag: not 16 tasks' exports: $(cat "$tag.out")"
}
exports auto --ml-parallel=auto,model=model.txt
exports explicit --ml-parallel="$want"
cmp -s auto.env explicit.env || cluster_fail "auto exports differ from" \
	"--ml-parallel=$want: $(diff auto.env explicit.env | head)"
[ "$(grep -c "^topoml: --ml-parallel=auto: $want micro-batch=.*GiB a GPU of .*s a step" \
	auto.out)" = 1 ] || cluster_fail "auto: not one line with the" \
	"layout $want: $(grep -v '^[0-9]' auto.out)"
! grep -q "$verdict" auto.out explicit.out ||
	cluster_fail "a verdict on a layout that fits: $(cat auto.out)"
grep '^topoml: --ml-parallel=auto' auto.out
echo "ok: --ml-parallel=auto,model=model.txt exports topoml plan's $want"

# A mistake in the model file fails the job with the file and line; the
# nodes stay up.  auto without a model says what it needs.
printf 'layers = 24\nheads = sixteen\n' >badmodel.txt
chmod 644 badmodel.txt
if as_user timeout 120 salloc -Q -N2 --ntasks-per-node=2 srun \
	--ml-parallel=auto,model=badmodel.txt true >badmodel.out 2>&1; then
	cluster_fail "a bad model file ran"
fi
grep -q "badmodel.txt:2: heads: 'sixteen' is not a number" badmodel.out ||
	cluster_fail "no file and line: $(cat badmodel.out)"
if as_user env TOPOML_PARALLEL=auto timeout 120 salloc -Q -N2 \
	--ntasks-per-node=2 srun true >nomodel.out 2>&1; then
	cluster_fail "auto without a model ran"
fi
grep -q "the planner needs the model: --ml-parallel=auto,model=FILE" \
	nomodel.out || cluster_fail "auto without model: $(cat nomodel.out)"
bad=$(sinfo -h -N -n 'n[1-8]' -o '%t' |
	awk '$1 !~ /^(idle|alloc|mix|comp(leting)?)$/' | wc -l)
[ "$bad" = 0 ] || cluster_fail "nodes left unusable: $(sinfo -N)"
echo "ok: bad model file and auto without model refused with the reason," \
	"nodes not drained"

# Another user cannot redirect the model a job reads: slurmstepd walks
# the path as the job's user, and a symlink (here in /tmp, which every
# user writes) or a directory of a third user on the way is refused; the
# user's own symlink is followed.
E=topomlevil
cluster_user $E
evdir=$(runuser -u $E -- mktemp -d /tmp/topoml-evil.XXXXXX)
evlink=$(runuser -u $E -- mktemp -u /tmp/topoml-evlink.XXXXXX)
mydir=$(runuser -u $U -- mktemp -d /tmp/topoml-mine.XXXXXX)
mylink=$(runuser -u $U -- mktemp -u /tmp/topoml-mylink.XXXXXX)
trap 'cluster_stop; rm -rf "$SPANK_CACHE" "$work" "$evdir" "$evlink" \
	"$mydir" "$mylink"' EXIT
chmod 755 "$evdir" "$mydir"
runuser -u $E -- cp model.txt "$evdir/model.txt"
runuser -u $E -- ln -s "$evdir" "$evlink"
runuser -u $U -- cp model.txt "$mydir/model.txt"
runuser -u $U -- ln -s "$mydir" "$mylink"
evuid=$(id -u $E)
for m in "$evlink/model.txt" "$evdir/model.txt"; do
	if as_user timeout 120 salloc -Q -N2 --ntasks-per-node=2 srun \
		--ml-parallel=auto,model="$m" true >evil.out 2>&1; then
		cluster_fail "model=$m of another user was read"
	fi
	grep -q "model=$m: .*\(symlink of another user\|another user's\).* (uid $evuid)" \
		evil.out || cluster_fail "model=$m: no reason: $(cat evil.out)"
	grep "model=$m" evil.out | head -1
done
as_user timeout 120 salloc -Q -N2 --ntasks-per-node=2 srun \
	--ml-parallel=auto,model="$mylink/model.txt" true >mine.out 2>&1 ||
	cluster_fail "the user's own symlink: $(cat mine.out)"
grep -q '^topoml: --ml-parallel=auto: ' mine.out ||
	cluster_fail "the user's own symlink: no layout: $(cat mine.out)"
bad=$(sinfo -h -N -n 'n[1-8]' -o '%t' |
	awk '$1 !~ /^(idle|alloc|mix|comp(leting)?)$/' | wc -l)
[ "$bad" = 0 ] || cluster_fail "nodes left unusable: $(sinfo -N)"
echo "ok: a model path another user could redirect is refused with the" \
	"reason; the user's own symlink is followed; nodes not drained"

# An explicit layout with model=: tp=4 at 2 tasks a node splits its tensor
# groups over nodes and GPT-175B does not fit 16 GPUs: one verdict line
# with both.
printf 'layers=96\nhidden=12288\nheads=96\nseq=2048\nbatch=1536\n' \
	>gpt175.txt
chmod 644 gpt175.txt
as_user timeout 120 salloc -Q -N8 --ntasks-per-node=2 srun \
	--ml-parallel=tp=4,pp=1,model="$CLUSTER_DIR/gpt175.txt" true \
	>mem.out 2>&1 || cluster_fail "tp=4 with gpt175: $(cat mem.out)"
[ "$(grep -c "${verdict}4,pp=1,dp=4: tensor group of ranks 0-3 split over NVLink domains .*; does not fit memory by the estimate for $CLUSTER_DIR/gpt175.txt" \
	mem.out)" = 1 ] || cluster_fail "tp=4 with gpt175: not one verdict" \
	"line with both: $(cat mem.out)"
grep "$verdict" mem.out
echo "ok: an explicit layout over domains and memory: one verdict line"
cd / && cluster_stop
rm -rf "$SPANK_CACHE"

# 2. NVLink domains of 2 nodes (n1,n2 | n3,n4 | n5,n6 | n7,n8) on two leaves,
# n1 busy, a 6-node job of tp=4 at 2 tasks a node: a tensor group is two
# nodes and stays in a domain only with an even count in each.  The
# engine's ring alone takes n[2-7] (every group split); with --ml-parallel
# select/topoml ranks its choices by the job's traffic (topoml_hybrid_rank)
# and takes n[3-8].
cat >"$work/nvl.json" <<'TOPO'
{ "family": "fat-tree", "switches": [
  { "name": "l1", "nodes": "n[1-4]" }, { "name": "l2", "nodes": "n[5-8]" },
  { "name": "s", "switches": "l[1-2]" } ],
  "nvlink_domains": [
  { "name": "d1", "nodes": "n[1-2]" }, { "name": "d2", "nodes": "n[3-4]" },
  { "name": "d3", "nodes": "n[5-6]" }, { "name": "d4", "nodes": "n[7-8]" } ] }
TOPO
printf 'TopologyFile=%s\n' "$work/nvl.json" >"$work/topoml.conf"
chmod 644 "$work"/*
CLUSTER_SLURMD=8 CLUSTER_SELECT=topoml CLUSTER_TOPOML_CONF=$work/topoml.conf \
	spank_start spank-parallel-nvl "topology=$work/nvl.json"
trap 'cluster_stop; rm -rf "$SPANK_CACHE" "$work"' EXIT
cp "${TESTS_DIR:-$(dirname "$0")/..}/spank/hybrid_groups.py" \
	"$CLUSTER_DIR/hybrid_groups.py"
chmod 755 "$CLUSTER_DIR/hybrid_groups.py"
cd "$CLUSTER_DIR" || exit 1
busy=$(sbatch --parsable -w n1 -N1 -o /dev/null --wrap 'sleep 300') ||
	cluster_fail "sbatch on n1"
for _ in $(seq 1 300); do
	[ "$(squeue -h -j "$busy" -o %T)" = RUNNING ] && break
	sleep 0.1
done
dom() { echo $(( (${1#n} + 1) / 2 )); }
# nvl TAG SALLOC-ARGS...: TP groups split over domains, in $tag.split
nvl() {
	local tag=$1 split=0 n d
	shift
	as_user timeout 300 salloc -Q -N6 --ntasks-per-node=2 "$@" \
		srun --ml-parallel=tp=4 $PY hybrid_groups.py >"$tag.out" 2>&1 ||
		cluster_fail "$tag: $(tail -20 "$tag.out")"
	[ "$(grep -c '^GROUP tp ' "$tag.out")" = 3 ] ||
		cluster_fail "$tag: $(cat "$tag.out")"
	while read -r _ _ _ nodes; do
		d=
		for n in ${nodes//,/ }; do
			[ -z "$d" ] && d=$(dom "$n")
			[ "$(dom "$n")" = "$d" ] || { split=$((split + 1)); break; }
		done
	done < <(grep '^GROUP tp ' "$tag.out")
	echo "$split" >"$tag.split"
	grep '^GROUP tp ' "$tag.out"
	# the verdict (domains from the plugin's topology=) iff a split
	[ "$(grep -c '^topoml: verdict on --ml-parallel=tp=4,.* split over NVLink domains' \
		"$tag.out")" = $((split > 0)) ] || cluster_fail "$tag:" \
		"$split groups split, verdict: $(grep verdict "$tag.out")"
}
nvl nvl-hybrid --ml-parallel=tp=4
[ "$(cat nvl-hybrid.split)" = 0 ] ||
	cluster_fail "--ml-parallel: $(cat nvl-hybrid.split) TP groups split over NVLink domains"
nvl nvl-plain
[ "$(cat nvl-plain.split)" -gt 0 ] ||
	cluster_fail "without --ml-parallel at allocation no TP group splits: no proof"
echo "ok: tp=4 over 2-node NVLink domains: 0 groups split with" \
	"--ml-parallel, $(cat nvl-plain.split) of 3 without"
scancel "$busy"
cd / && cluster_stop
rm -rf "$SPANK_CACHE"

# 3. Pipeline stages that runs of the ring would split: spines of 2, 4
# and 2 nodes (n1,n8 | n2,n6,n3,n7 | n4,n5); tp=2,pp=2 at 2 tasks a node
# makes stages of 4 nodes.  The ring puts each stage over two spines; for
# a job that asked --ml-parallel at allocation select/topoml publishes
# the order topoml_hybrid_rank gives (spine2's 4 nodes one stage), so
# RANK follows it and only one stage's DP groups cross the core.  The
# same job without --ml-parallel at allocation gets the ring in order=
# (the control: there both stages cross).
cat >"$work/net3.conf" <<'TOPO'
SwitchName=leaf1 Nodes=n1,n8
SwitchName=leaf2 Nodes=n2,n6
SwitchName=leaf3 Nodes=n3,n7
SwitchName=leaf4 Nodes=n4,n5
SwitchName=spine1 Switches=leaf1
SwitchName=spine2 Switches=leaf[2-3]
SwitchName=spine3 Switches=leaf4
SwitchName=core Switches=spine[1-3]
TOPO
printf 'TopologyFile=%s\n' "$work/net3.conf" >"$work/topoml.conf"
chmod 644 "$work"/*
CLUSTER_SLURMD=8 CLUSTER_SELECT=topoml CLUSTER_TOPOML_CONF=$work/topoml.conf \
	spank_start spank-parallel-stages
trap 'cluster_stop; rm -rf "$SPANK_CACHE" "$work"' EXIT
cp "${TESTS_DIR:-$(dirname "$0")/..}/spank/hybrid_groups.py" \
	"$CLUSTER_DIR/hybrid_groups.py"
chmod 755 "$CLUSTER_DIR/hybrid_groups.py"
cd "$CLUSTER_DIR" || exit 1
sp3() { case $1 in n1|n8) echo 1 ;; n4|n5) echo 3 ;; *) echo 2 ;; esac; }
# spines NODE...: distinct spines of the nodes
spines() {
	local n
	for n in "$@"; do sp3 "$n"; done | sort -u | wc -l
}
# stages TAG SALLOC-ARGS...: $tag.order (order= of the job, one node a
# line), $tag.stages (stages of order= over 2+ spines), $tag.dp (DP
# groups over 2+ spines)
stages() {
	local tag=$1 cross=0 order
	shift
	as_user timeout 300 salloc -Q -N8 --ntasks-per-node=2 "$@" bash -c \
		'scontrol show job $SLURM_JOB_ID | sed -n "s/^ *SystemComment=/COMMENT /p"
		srun --ml-parallel=tp=2,pp=2 '"$PY"' hybrid_groups.py' \
		>"$tag.out" 2>&1 || cluster_fail "$tag: $(tail -20 "$tag.out")"
	order=$(sed -n 's/^COMMENT //p' "$tag.out" | tr ' ' '\n' |
		sed -n 's/^order=//p')
	[ -n "$order" ] || cluster_fail "$tag: no order=: $(cat "$tag.out")"
	scontrol show hostnames "$order" >"$tag.order"
	[ "$(wc -l <"$tag.order")" = 8 ] ||
		cluster_fail "$tag: order=$order is not 8 nodes"
	[ "$(spines $(sed -n 1,4p "$tag.order"))" -gt 1 ] && cross=$((cross + 1))
	[ "$(spines $(sed -n 5,8p "$tag.order"))" -gt 1 ] && cross=$((cross + 1))
	echo "$cross" >"$tag.stages"
	[ "$(grep -c '^GROUP dp ' "$tag.out")" = 4 ] ||
		cluster_fail "$tag: DP groups missing: $(cat "$tag.out")"
	cross=0
	while read -r _ _ _ nodes; do
		[ "$(spines ${nodes//,/ })" -gt 1 ] && cross=$((cross + 1))
	done < <(grep '^GROUP dp ' "$tag.out")
	echo "$cross" >"$tag.dp"
	echo "$tag: order=$order, $(cat "$tag.stages") of 2 stages and" \
		"$(cat "$tag.dp") of 4 DP groups over 2+ spines"
}
stages stages-hybrid --ml-parallel=tp=2,pp=2
stages stages-ring
[ "$(cat stages-ring.stages)" = 2 ] ||
	cluster_fail "the ring keeps a stage in one spine: no proof"
[ "$(cat stages-hybrid.stages)" = 1 ] ||
	cluster_fail "--ml-parallel: order= is not the stage order" \
		"($(cat stages-hybrid.stages) of 2 stages over spines)"
[ "$(spines $(sed -n 1,4p stages-hybrid.order))" = 1 ] ||
	cluster_fail "--ml-parallel: the first stage is not spine2's nodes"
[ "$(cat stages-hybrid.dp)" = 2 ] && [ "$(cat stages-ring.dp)" = 4 ] ||
	cluster_fail "DP groups over spines: $(cat stages-hybrid.dp) of 4" \
		"(want 2), ring $(cat stages-ring.dp) (want 4)"
echo "ok: stage order in order= and RANK: 2 of 4 DP groups cross the" \
	"core, 4 of 4 in ring order"

# Spares stay last (topoml_spares_last, then the workers ordered): -N8
# with --ml-spares=2 and tp=2,pp=3 on the 6 workers: spares=2, the last
# two of order= one leaf (the spares), the workers 3 stages of 2 nodes,
# each inside one spine.
lf3() { case $1 in n1|n8) echo 1 ;; n2|n6) echo 2 ;; n3|n7) echo 3 ;;
	*) echo 4 ;; esac; }
as_user timeout 120 salloc -Q -N8 --ntasks-per-node=2 --ml-spares=2 \
	--ml-parallel=tp=2,pp=3 bash -c \
	'scontrol show job $SLURM_JOB_ID | sed -n "s/^ *SystemComment=//p"' \
	>spares.out 2>&1 || cluster_fail "spares: $(cat spares.out)"
tr ' ' '\n' <spares.out >spares.kv
[ "$(sed -n 's/^spares=//p' spares.kv)" = 2 ] ||
	cluster_fail "spares: no spares=2 in $(cat spares.out)"
scontrol show hostnames "$(sed -n 's/^order=//p' spares.kv)" >spares.order
mapfile -t o <spares.order
[ "${#o[@]}" = 8 ] || cluster_fail "spares: order= $(cat spares.out)"
[ "$(lf3 "${o[6]}")" = "$(lf3 "${o[7]}")" ] ||
	cluster_fail "spares: last two of order= ${o[*]} not one leaf"
for s in 0 2 4; do
	[ "$(spines "${o[s]}" "${o[s + 1]}")" = 1 ] ||
		cluster_fail "spares: stage $((s / 2)) of ${o[*]} over spines"
done
echo "ok: --ml-spares=2 with --ml-parallel: order=${o[*]}, spares" \
	"${o[6]},${o[7]} last, 3 worker stages each in one spine"

# The engine's choices ranked on the workers: n2 busy, -N6 --ml-spares=2
# with tp=2,pp=2 (4 workers, stages of 2 nodes).  Ranked as if the
# spares were workers (dp=3, stages of 3: select/topoml before d13a71f)
# the job got order=n6 n3 n4 n7 n1 n8, a worker stage over spines 2 and
# 3; priced on the workers _publish keeps: n3 n7 | n4 n5, spares n1 n8.
sbusy=$(sbatch --parsable -w n2 -N1 -o /dev/null --wrap 'sleep 300') ||
	cluster_fail "sbatch on n2"
for _ in $(seq 1 300); do
	[ "$(squeue -h -j "$sbusy" -o %T)" = RUNNING ] && break
	sleep 0.1
done
as_user timeout 120 salloc -Q -N6 --ntasks-per-node=2 --ml-spares=2 \
	--ml-parallel=tp=2,pp=2 bash -c \
	'scontrol show job $SLURM_JOB_ID | sed -n "s/^ *SystemComment=//p"' \
	>spares6.out 2>&1 || cluster_fail "spares -N6: $(cat spares6.out)"
scancel "$sbusy"
tr ' ' '\n' <spares6.out >spares6.kv
[ "$(sed -n 's/^spares=//p' spares6.kv)" = 2 ] ||
	cluster_fail "spares -N6: no spares=2 in $(cat spares6.out)"
scontrol show hostnames "$(sed -n 's/^order=//p' spares6.kv)" >spares6.order
mapfile -t o <spares6.order
[ "${#o[@]}" = 6 ] || cluster_fail "spares -N6: order= $(cat spares6.out)"
[ "$(lf3 "${o[4]}")" = "$(lf3 "${o[5]}")" ] ||
	cluster_fail "spares -N6: last two of order= ${o[*]} not one leaf"
for s in 0 2; do
	[ "$(spines "${o[s]}" "${o[s + 1]}")" = 1 ] ||
		cluster_fail "spares -N6: worker stage $((s / 2)) of ${o[*]}" \
			"over spines (choice ranked with the spares as workers)"
done
echo "ok: -N6 --ml-spares=2, n2 busy: order=${o[*]}, both worker stages" \
	"each in one spine"
echo "PASS: --ml-parallel with PyTorch groups"
