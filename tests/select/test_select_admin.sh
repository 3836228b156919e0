#!/bin/bash
# select/topoml on the 8 real slurmd nodes (plus 256 emulated ones): real
# steps in its allocations, clients, SystemComment, --switches, --ml-comm
# and plugstack.conf's default_comm, slurmctld restart with running and
# pending jobs, scontrol reconfigure with
# a changed and with a broken topology file, broken files at start, and
# Slurm's own topology.conf as topoml's network (what Slurm runs with, it
# runs with; reconfigure takes the new file, a model or plain cons_tres).
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
sel_require_tools

work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-sel-admin.XXXXXX")
chmod 755 "$work"
# Two leaves of real nodes under one spine, 8 leaves of emulated nodes.
topo_a() {
	echo "SwitchName=r0 Nodes=n[1-4]"
	echo "SwitchName=r1 Nodes=n[5-8]"
	echo "SwitchName=rs Switches=r[0-1]"
	for l in $(seq 0 7); do
		echo "SwitchName=c$l Nodes=c[$((l * 32 + 1))-$((l * 32 + 32))]"
	done
	echo "SwitchName=cs Switches=c[0-7]"
	echo "SwitchName=root Switches=rs,cs"
}
# Slurm's topology/tree (kept for --switches) reads topology.conf; topoml
# reads its own copy, net.conf, so a broken topoml file leaves Slurm's intact.
topo_a >"$work/topology.conf"
topo_a >"$work/net.conf"
printf 'TopologyFile=%s\nDefaultHint=allreduce\n%s\n%s\n' "$work/net.conf" \
	"PartitionName=moe Hint=alltoall" "PartitionName=plain Placement=off" \
	>"$work/topoml.conf"

spank=0
if [ -f "$TOP_BUILDDIR/spank/.libs/topoml.so" ]; then
	spank=1
fi
CLUSTER_SLURMD=8 CLUSTER_CLOUD=256 CLUSTER_SELECT=topoml \
	CLUSTER_TOPOLOGY=$work/topology.conf \
	CLUSTER_TOPOML_CONF=$work/topoml.conf CLUSTER_SPANK=$spank \
	CLUSTER_CONF_EXTRA="PartitionName=real Nodes=n[1-8] MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
PartitionName=moe Nodes=n[1-8] MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
PartitionName=plain Nodes=n[1-8] MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
DebugFlags=SelectType" cluster_start sel-admin || exit $?
log=$CLUSTER_DIR/log/slurmctld.log
cloud="c[1-256]"	# not in partition real: never a candidate there

# ---- clients load the plugin and show the cluster ----
scontrol show config | grep -q 'SelectType *= select/topoml' ||
	cluster_fail "SelectType is not select/topoml"
[ "$(sinfo -h -p real -o '%D')" = 8 ] || cluster_fail "sinfo: $(sinfo)"
scontrol show node n1 | grep -q 'NodeName=n1' || cluster_fail "scontrol show node"
squeue >/dev/null || cluster_fail "squeue"
grep -q "select/topoml: .*net.conf" "$log" ||
	cluster_fail "no topology summary in the log"

submit() {	# submit ARGS...: job id
	sbatch --parsable -o /dev/null "$@" --wrap 'sleep 100000' ||
		cluster_fail "sbatch $*"
}

# ---- one job, then a 4-node job on the free leaf, as topoml place says ----
a=$(submit -p real -N1)
na=$(sel_wait_start "$a") || cluster_fail "job a did not start"
busy="$(cluster_nodes_allocated),$cloud"
# shellcheck disable=SC2046
want=$(sel_expected "$work/net.conf" 4 "$busy" allreduce $(sel_owners)) ||
	cluster_fail "engine failed"
cli=$(sel_cli_place "$work/net.conf" 4 "$busy") || cluster_fail "topoml place"
b=$(submit -p real -N4)
nb=$(sel_wait_start "$b") || cluster_fail "job b did not start"
sel_same_nodes "$nb" "$want" ||
	cluster_fail "job b on $nb, the engine says $want (a on $na)"
sel_same_nodes "$nb" "$cli" ||
	cluster_fail "job b on $nb, topoml place says $cli (a on $na)"
case "$(scontrol show hostnames "$nb" | paste -sd,)" in
n1,n2,n3,n4|n5,n6,n7,n8) ;;
*) cluster_fail "4-node job spans two leaves: $nb (a on $na)" ;;
esac
# A real step runs on the allocation.
out=$(timeout 60 srun --jobid="$b" -N4 -n4 hostname 2>&1) ||
	cluster_fail "srun in job b: $out"
[ "$(echo "$out" | wc -l)" = 4 ] || cluster_fail "srun output: $out"
cmt=$(sel_comment "$b")
case "$cmt" in
"topoml: placed=topoml hint=allreduce leaves=1/1 "*) ;;
*) cluster_fail "job b SystemComment: '$cmt'" ;;
esac
grep -q "select/topoml: JobId=$b .*placed=topoml" "$log" ||
	cluster_fail "no placement of job $b in the log (DebugFlags=SelectType)"
echo "ok: 4-node job on one leaf ($nb), comment: $cmt"

# ---- restart with a running and a pending job ----
p=$(submit -p real -N8)
sleep 1
[ "$(sel_state "$p")" = PENDING ] || cluster_fail "8-node job not pending"
cluster_restart_ctld
[ "$(sel_state "$b")" = RUNNING ] || cluster_fail "job b after restart: $(sel_state "$b")"
sel_same_nodes "$(squeue -h -j "$b" -o %N)" "$nb" || cluster_fail "job b moved"
[ "$(sel_comment "$b")" = "$cmt" ] || cluster_fail "comment lost: $(sel_comment "$b")"
[ "$(sel_state "$p")" = PENDING ] || cluster_fail "job p after restart: $(sel_state "$p")"
{ sinfo >/dev/null && squeue >/dev/null; } || cluster_fail "clients after restart"
scancel "$a" "$b"
np=$(sel_wait_start "$p" 200) || cluster_fail "job p did not start after restart"
sel_same_nodes "$np" "n[1-8]" || cluster_fail "job p on $np"
scancel "$p"
sel_wait_gone "$p"
echo "ok: restart kept running job $b and pending job $p"

# ---- --switches=1: no free leaf -> waits (Slurm's meaning); a leaf frees -> runs there
a=$(submit -p real -N1 -w n1)
c=$(submit -p real -N1 -w n5)
{ sel_wait_start "$a" >/dev/null && sel_wait_start "$c" >/dev/null; } ||
	cluster_fail "jobs on n1/n5 did not start"
s=$(submit -p real -N4 --switches=1@10:00)
sleep 2
[ "$(sel_state "$s")" = PENDING ] ||
	cluster_fail "--switches=1 job runs with no free leaf: $(squeue -h -j "$s" -o '%T %N')"
scancel "$c"
ns=$(sel_wait_start "$s" 200) || cluster_fail "--switches job did not start"
sel_same_nodes "$ns" "n[5-8]" || cluster_fail "--switches=1 job on $ns"
scancel "$s"
sel_wait_gone "$s"
echo "ok: --switches=1 waited for a free leaf and got $ns"

# ---- --ml-comm (the SPANK plugin's option) reaches the plugin ----
if [ "$spank" = 1 ] && sbatch --help 2>&1 | grep -q -- '--ml-comm'; then
	m=$(submit -p real -N2 --ml-comm=alltoall)
	sel_wait_start "$m" >/dev/null || cluster_fail "--ml-comm job"
	case "$(sel_comment "$m")" in
	*hint=alltoall*) ;;
	*) cluster_fail "--ml-comm=alltoall not seen: $(sel_comment "$m")" ;;
	esac
	scancel "$m"
	sel_wait_gone "$m"
	# The environment twin, through spank_job_control_setenv.
	m=$(TOPOML_COMM=isolate submit -p real -N2)
	sel_wait_start "$m" >/dev/null || cluster_fail "TOPOML_COMM job"
	case "$(sel_comment "$m")" in
	*hint=isolate*) ;;
	*) cluster_fail "TOPOML_COMM=isolate not seen: $(sel_comment "$m")" ;;
	esac
	scancel "$m"
	sel_wait_gone "$m"
	echo "ok: --ml-comm=alltoall and TOPOML_COMM=isolate reached select/topoml"
	# plugstack.conf's default_comm reaches it as --ml-comm would, for
	# a job without a hint of its own (sbatch reads plugstack.conf at
	# every start: the other checks keep the file as it was).
	ps=$(dirname "$SLURM_CONF")/plugstack.conf
	cp "$ps" "$work/plugstack.orig"
	sed -i 's|topoml\.so.*|& default_comm=isolate|' "$ps"
	m=$(submit -p real -N2)
	o=$(submit -p real -N2 --ml-comm=alltoall)
	# --ml-parallel without --ml-comm stays select/topoml's allreduce
	h=$(submit -p real -N2 --ntasks-per-node=2 --ml-parallel=tp=2,pp=1)
	cp "$work/plugstack.orig" "$ps"
	for j in "$m:isolate" "$o:alltoall" "$h:allreduce"; do
		sel_wait_start "${j%%:*}" >/dev/null ||
			cluster_fail "default_comm: job ${j%%:*} did not start"
		case "$(sel_comment "${j%%:*}")" in
		*"hint=${j#*:} "*) ;;
		*) cluster_fail "default_comm=isolate: job ${j%%:*} wants" \
			"hint=${j#*:}: $(sel_comment "${j%%:*}")" ;;
		esac
		scancel "${j%%:*}"
		sel_wait_gone "${j%%:*}"
	done
	echo "ok: default_comm=isolate reached select/topoml, --ml-comm and" \
		"--ml-parallel still win"
else
	echo "note: SPANK plugin with --ml-comm not built; hint test skipped"
fi

# ---- per-partition overrides in topoml.conf ----
m=$(submit -p moe -N2)
sel_wait_start "$m" >/dev/null || cluster_fail "moe job"
case "$(sel_comment "$m")" in
*placed=topoml\ hint=alltoall*) ;;
*) cluster_fail "partition moe (Hint=alltoall): $(sel_comment "$m")" ;;
esac
scancel "$m"
sel_wait_gone "$m"
m=$(submit -p plain -N2)
sel_wait_start "$m" >/dev/null || cluster_fail "plain job"
case "$(sel_comment "$m")" in
"topoml: placed=cons_tres "*) ;;
*) cluster_fail "partition plain (Placement=off): $(sel_comment "$m")" ;;
esac
grep -q "JobId=$m .*fallback: placement off for partition plain" "$log" ||
	cluster_fail "Placement=off reason not logged"
scancel "$m"
sel_wait_gone "$m"
echo "ok: partition overrides (Hint=alltoall, Placement=off)"

# ---- a job sized by tasks (-n 8, no -N) on 4-CPU nodes: 2 nodes, one leaf
t=$(submit -p real -n8)
nt=$(sel_wait_start "$t") || cluster_fail "-n8 job did not start"
[ "$(scontrol show hostnames "$nt" | wc -l)" = 2 ] || cluster_fail "-n8 on $nt"
case "$(sel_comment "$t")" in
"topoml: placed=topoml hint=allreduce leaves=1/1 "*) ;;
*) cluster_fail "-n8 job: $(sel_comment "$t")" ;;
esac
scancel "$t"
sel_wait_gone "$t"
echo "ok: -n8 job placed by the engine on $nt"

# ---- reconfigure with a changed topology file ----
# n1 busy; leaves now {n1,n2,n5,n6} and {n3,n4,n7,n8}: a 4-node job moves.
topo_a | sed -e 's/^SwitchName=r0 .*/SwitchName=r0 Nodes=n[1-2,5-6]/' \
	-e 's/^SwitchName=r1 .*/SwitchName=r1 Nodes=n[3-4,7-8]/' \
	>"$work/net.conf"
cp "$work/net.conf" "$CLUSTER_DIR/topology.conf"
scontrol reconfigure || cluster_fail "scontrol reconfigure"
sleep 2
r=$(submit -p real -N4)
nr=$(sel_wait_start "$r") || cluster_fail "job after reconfigure"
sel_same_nodes "$nr" "n[3-4,7-8]" ||
	cluster_fail "after reconfigure the 4-node job is on $nr, want n[3-4,7-8]"
scancel "$r"
sel_wait_gone "$r"
echo "ok: reconfigure with a new topology: $nr"

# ---- reconfigure with a broken topology file: logged, old one kept ----
# (topoml's own net.conf, which Slurm does not read; a duplicate switch)
cp "$work/net.conf" "$work/good.conf"
printf 'SwitchName=r0 Nodes=n[1-2,5-6]\nSwitchName=r0 Nodes=n[3-4,7-8]\n' \
	>"$work/net.conf"
scontrol reconfigure
sleep 2
scontrol ping | grep -q UP || cluster_fail "slurmctld died on a broken file"
grep -q "net.conf:2" "$log" ||
	cluster_fail "no file:line error for the broken topology: $(grep topoml "$log" | tail -3)"
grep -q "select/topoml: keeping the previous configuration" "$log" ||
	cluster_fail "previous configuration not kept"
r=$(submit -p real -N4)
nr=$(sel_wait_start "$r") || cluster_fail "job after broken reconfigure"
sel_same_nodes "$nr" "n[3-4,7-8]" || cluster_fail "old topology not kept: $nr"
scancel "$r" "$a"
sel_wait_gone "$r"
echo "ok: broken file at reconfigure logged, previous topology kept"

# ---- broken files at start: slurmctld refuses, naming file and line ----
start_fails() {	# start_fails PATTERN: slurmctld must exit and log PATTERN
	local i pid
	_cluster_kill_pidfile "$CLUSTER_DIR/run/slurmctld.pid"
	: >"$log"
	slurmctld -f "$SLURM_CONF" >>"$CLUSTER_DIR/log/slurmctld.out" 2>&1
	for i in $(seq 1 100); do
		pid=$(cat "$CLUSTER_DIR/run/slurmctld.pid" 2>/dev/null)
		[ -n "$pid" ] && ! _cluster_alive "$pid" && break
		[ -z "$pid" ] && [ "$i" -gt 20 ] && break
		sleep 0.1
	done
	[ -n "$pid" ] && _cluster_alive "$pid" &&
		cluster_fail "slurmctld started with a broken file ($1)"
	grep -q "$1" "$log" || cluster_fail "no '$1' in the log: $(tail -5 "$log")"
}
start_fails "net.conf:2"
cp "$work/good.conf" "$work/net.conf"
cp "$CLUSTER_DIR/topoml.conf" "$work/topoml.good"
printf 'TopologyFile=%s\nDefaultHint=ring\n' "$work/net.conf" \
	>"$CLUSTER_DIR/topoml.conf"
start_fails "topoml.conf:2:1: DefaultHint=ring"
# slurmctld loads select_topoml.so even when another select plugin is
# configured: then the same broken topoml.conf must not matter.
sed -i 's|^SelectType=.*|SelectType=select/cons_tres|' "$SLURM_CONF"
_cluster_kill_pidfile "$CLUSTER_DIR/run/slurmctld.pid"
: >"$log"
_cluster_start_ctld
grep -q "topoml.conf" "$log" &&
	cluster_fail "select/topoml read topoml.conf while not configured"
echo "ok: a broken topoml.conf does not affect SelectType=select/cons_tres"
sed -i 's|^SelectType=.*|SelectType=select/topoml|' "$SLURM_CONF"
cp "$work/topoml.good" "$CLUSTER_DIR/topoml.conf"
_cluster_kill_pidfile "$CLUSTER_DIR/run/slurmctld.pid"
_cluster_start_ctld
echo "ok: broken topology.conf and topoml.conf stop slurmctld's start"

# ---- Slurm's topology.conf as topoml's network (no TopologyFile=) ----
topo=$CLUSTER_DIR/topology.conf
printf 'DefaultHint=allreduce\n' >"$CLUSTER_DIR/topoml.conf"
placed() {	# placed N WANT: an N-node job's comment starts "topoml: WANT"
	local j nj	# (WANT "cons_tres": no model, no comment, logged)
	j=$(submit -p real -N"$1")
	nj=$(sel_wait_start "$j") || cluster_fail "$1-node job did not start"
	case "$2:$(sel_comment "$j")" in
	cons_tres:)
		grep -q "JobId=$j .*fallback: no topology loaded" "$log" ||
			cluster_fail "job $j: no cons_tres fallback logged" ;;
	cons_tres:*) cluster_fail "job $j: comment $(sel_comment "$j")" ;;
	"$2:topoml: $2"*) ;;
	*) cluster_fail "$1-node job on $nj: $(sel_comment "$j"), want $2" ;;
	esac
	scancel "$j"
	sel_wait_gone "$j"
	echo "$nj"
}
# Stock Slurm runs with "n[9-" (libslurm's host "n]", no node's name) and
# only warns; so does select/topoml, which builds the same leaves.
topo_a | sed 's/^SwitchName=r0 .*/SwitchName=r0 Nodes=n[1-4],n[9-/' >"$topo"
: >"$log"
cluster_restart_ctld
grep -q "Invalid hostnames in switch configuration" "$log" ||
	cluster_fail "Slurm did not warn about n[9-"
w="select/topoml: warning: $topo:1:21: switch r0: Nodes=n[1-4],n[9- gives"
grep -qF "$w 1 name" "$log" ||
	cluster_fail "no FILE:LINE:COL warning: $(grep topoml "$log" | tail -3)"
nx=$(placed 4 "placed=topoml hint=allreduce leaves=1/1 ") || exit 1
case "$(scontrol show hostnames "$nx" | paste -sd,)" in
n1,n2,n3,n4|n5,n6,n7,n8) ;;
*) cluster_fail "4-node job across leaves with n[9-: $nx" ;;
esac
echo "ok: a topology.conf Slurm warns about starts select/topoml ($nx)"
# A file Slurm runs with, topoml has no model of (a switch name it cannot
# hold): at reconfigure Slurm takes it, topoml drops its old model loudly.
topo_a | sed 's/^SwitchName=root .*/SwitchName=root] Switches=rs,cs/' >"$topo"
scontrol reconfigure || cluster_fail "scontrol reconfigure"
sleep 2
scontrol ping | grep -q UP || cluster_fail "slurmctld died at reconfigure"
scontrol show topology | grep -q "SwitchName=root] " ||
	cluster_fail "Slurm did not take the new topology.conf"
grep -qF "$topo:13:12: switch name 'root]'" "$log" ||
	cluster_fail "no FILE:LINE:COL error: $(grep topoml "$log" | tail -3)"
grep -q "topoml cannot model its network" "$log" ||
	cluster_fail "fallback to cons_tres not logged"
placed 4 cons_tres >/dev/null
# The same file at start: slurmctld starts (as stock does), cons_tres.
: >"$log"
cluster_restart_ctld
grep -q "topoml cannot model its network" "$log" ||
	cluster_fail "fallback at start not logged"
placed 4 cons_tres >/dev/null
echo "ok: a topology.conf topoml cannot model: slurmctld runs, cons_tres"
# A new file Slurm warns about at reconfigure: Slurm and topoml take it.
topo_a | sed -e 's/^SwitchName=r0 .*/SwitchName=r0 Nodes=n[1-2,5-6],n[9-/' \
	-e 's/^SwitchName=r1 .*/SwitchName=r1 Nodes=n[3-4,7-8]/' >"$topo"
scontrol reconfigure || cluster_fail "scontrol reconfigure"
sleep 2
grep -qF "warning: $topo:1:21: switch r0: Nodes=n[1-2,5-6],n[9- gives" \
	"$log" || cluster_fail "no warning at reconfigure"
scontrol show topology r0 | grep -q "Nodes=n\[1-2,5-6\]" ||
	cluster_fail "Slurm: $(scontrol show topology r0)"
a=$(submit -p real -N1 -w n1)
sel_wait_start "$a" >/dev/null || cluster_fail "job on n1"
nr=$(placed 4 "placed=topoml ") || exit 1
sel_same_nodes "$nr" "n[3-4,7-8]" ||
	cluster_fail "after reconfigure the 4-node job is on $nr"
scancel "$a"
echo "ok: reconfigure to a topology.conf Slurm warns about: both on it ($nr)"

cluster_stop
rm -rf "$work"
echo "PASS: select/topoml admin scenario"
