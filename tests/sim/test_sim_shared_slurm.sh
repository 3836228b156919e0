#!/bin/bash
# The simulator's shared-node Slurm baselines (topoml sim --shared) against
# a real slurmctld with stock cons_tres, job for job (issue 18 item 4).
#
# One sequence of jobs that ask for cores (sbatch -n CORES, no --exclusive,
# nodes shared), with cancellations, on 32 emulated CLOUD nodes of 4 cores:
# a fat-tree of 8 leaves under topology/tree, the same nodes as a dragonfly
# (4 groups of 2 routers, TopologyParam=dragonfly), and without a topology
# (topology/none: cons_tres's _eval_nodes, policy linear).  Every job fits
# when submitted, so the queue plays no part: each job's nodes and the
# cores on each (scontrol show job -d) must be those of the simulator's
# slurm-tree / slurm-dragonfly / linear on the same sequence (job i
# submitted at time i, ended at the time of its cancellation), with
# --cloud-power: nodes used once are powered up and preferred, as
# slurmctld does with CLOUD nodes that never boot.  The three clusters run
# at once (own ports and directories): about 30 s.
#
# FAMILIES (ft df ln) picks the machines.  Opt-in, slow (about 1.5 minutes
# a machine): SIM_SHARED_REPLAY=1 also replays the accasim trace in cores
# through tests/select/replay_shared.sh's stock cluster and requires the
# simulator's mean wait within 15 % of it (and prints how many jobs start
# at the same time on the same nodes).
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
for d in slurmctld munged sbatch; do
	command -v "$d" >/dev/null ||
		{ echo "SKIP: $d not installed"; exit 77; }
done
topoml=${TOP_BUILDDIR:-../..}/contrib/topoml
[ -x "$topoml" ] || { echo "FAIL: $topoml missing"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/test_sim_shared.XXXXXX")
chmod 755 "$work"
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

# ---- machines ----------------------------------------------------------
: >"$work/ft.conf"
for l in 0 1 2 3 4 5 6 7; do
	echo "SwitchName=s$l Nodes=c[$((4 * l + 1))-$((4 * l + 4))]"
done >>"$work/ft.conf"
cp "$work/ft.conf" "$work/df.conf"
echo "SwitchName=top Switches=s[0-7]" >>"$work/ft.conf"
for g in 0 1 2 3; do
	echo "SwitchName=g$g Switches=s[$((2 * g))-$((2 * g + 1))]"
done >>"$work/df.conf"
echo "SwitchName=top Switches=g[0-3]" >>"$work/df.conf"
{
	echo '{ "family": "dragonfly", "global_links": "all-to-all", "groups": ['
	for g in 0 1 2 3; do
		[ "$g" -gt 0 ] && echo ','
		a=$((8 * g + 1))
		printf '{ "name": "g%d", "routers": [' "$g"
		printf '{"name": "s%d", "nodes": "c[%d-%d]"},' $((2 * g)) \
			"$a" $((a + 3))
		printf '{"name": "s%d", "nodes": "c[%d-%d]"}] }' \
			$((2 * g + 1)) $((a + 4)) $((a + 7))
	done
	echo '] }'
} >"$work/df.json"

# ---- the sequence: "s CORES" submits, "c K" cancels the K-th running job
# (fixed seed; at most 100 of the 128 cores in use, so every job starts)
awk 'BEGIN {
	srand(18); n = 0; used = 0; split("1 1 1 2 2 3 4 6 8 12 16", sz, " ")
	for (op = 0; op < 44; op++) {
		if (n > 2 && rand() < 0.35) {
			k = int(rand() * n) + 1
			print "c", k
			used -= c[k]; c[k] = c[n]; n--
			continue
		}
		x = sz[int(rand() * 11) + 1]
		if (used + x > 100) { op--; continue }
		print "s", x
		c[++n] = x; used += x
	}
}' >"$work/ops"

# The same sequence as an SWF trace: job i submitted at its op number,
# run time up to its cancellation (1e6: still running at the end).
awk '
	$1 == "s" { j++; sub_t[j] = NR; cores[j] = $2; run[j] = 0
		    r[++n] = j }
	$1 == "c" { k = r[$2]; run[k] = NR - sub_t[k]; r[$2] = r[n]; n-- }
	END { for (i = 1; i <= j; i++)
		printf "%d %d -1 %d %d -1 -1 %d 1000000 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
			i, sub_t[i], run[i] ? run[i] : 1000000, cores[i],
			cores[i] }' "$work/ops" >"$work/seq.swf"

# scontrol show job -d: the CPUs on each node, in node order ("4,2,1")
cores_py='
import re, subprocess, sys
per = {}
for m in re.finditer(r"Nodes=(\S+) CPU_IDs=(\S+)", sys.stdin.read()):
    n = 0
    for r in m.group(2).split(","):
        a, _, b = r.partition("-")
        n += int(b) - int(a) + 1 if b else 1
    hosts = subprocess.run(["scontrol", "show", "hostnames", m.group(1)],
                           capture_output=True, text=True).stdout.split()
    for h in hosts:
        per[int(h.lstrip("c"))] = n
print(",".join(str(per[k]) for k in sorted(per)))
'

# real LABEL: run the sequence; LABEL.real: job nodes cores-per-node
real() {
	local label=$1 op arg id nl det k
	local -a run=()
	: >"$work/$label.real"
	local j=0
	while read -r op arg; do
		if [ "$op" = c ]; then
			id=${run[$((arg - 1))]}
			scancel "$id"
			for _ in $(seq 1 100); do
				[ -z "$(squeue -h -j "$id" -o %T 2>/dev/null)" ] && break
				sleep 0.1
			done
			run[$((arg - 1))]=${run[$((${#run[@]} - 1))]}
			unset "run[$((${#run[@]} - 1))]"
			continue
		fi
		j=$((j + 1))
		id=$(sbatch --parsable -p main -n "$arg" -o /dev/null \
			--wrap 'sleep 1000000') || cluster_fail "sbatch $j"
		run+=("$id")
		nl=""
		for _ in $(seq 1 100); do
			read -r st nl < <(squeue -h -j "$id" -o '%T %N')
			case "$st" in RUNNING|CONFIGURING) [ -n "$nl" ] && break ;; esac
			nl=""
			sleep 0.1
		done
		[ -n "$nl" ] || cluster_fail "$label: job $j (-n $arg) did not start"
		# cores per node, in node order: "Nodes=c5 CPU_IDs=0-1 ..."
		det=$(scontrol show job -d "$id" | python3 -c "$cores_py")
		echo "$j $nl $det" >>"$work/$label.real"
	done <"$work/ops"
}

# sim LABEL TOPO POLICY: LABEL.sim in the same form
sim() {
	"$topoml" sim -q -t "$2" -T "$work/seq.swf" -c 4 --shared \
		--cloud-power -p "$3" --no-fragmentation \
		--jobs "$work/$1.jobs" >/dev/null ||
		cluster_fail "topoml sim $3"
	awk '{ print $2, $6, $7 }' "$work/$1.jobs" >"$work/$1.sim"
}

# family FAM: the real run and the simulator's, compared; both families
# at once, each cluster in its own subshell (own ports and directory)
family() {
	local fam=$1 param topo pol conf n same r
	case $fam in
	ft) param="" topo=$work/ft.conf pol=slurm-tree conf=$work/ft.conf ;;
	df) param=dragonfly topo=$work/df.json pol=slurm-dragonfly
	    conf=$work/df.conf ;;
	*) param="" topo=$work/ft.conf pol=linear conf="" ;;
	esac
	CLUSTER_SLURMD=0 CLUSTER_CLOUD=32 CLUSTER_CPUS=4 \
		CLUSTER_SELECT=cons_tres CLUSTER_TOPOLOGY=$conf \
		CLUSTER_TOPOLOGY_PARAM=$param CLUSTER_PARTITION_EXTRA="" \
		cluster_start "simshared-$fam" >"$work/$fam.log" 2>&1
	r=$?
	[ $r = 0 ] || { cat "$work/$fam.log"; [ $r = 77 ] && return 77; return 1; }
	real "$fam"
	cluster_stop
	sim "$fam" "$topo" "$pol"
	n=$(wc -l <"$work/$fam.real")
	same=$(join <(sort "$work/$fam.real") <(sort "$work/$fam.sim") |
		awk '$2 == $4 && $3 == $5' | wc -l)
	echo "$fam ($pol): $same of $n jobs on the same nodes with the same cores"
	if [ "$same" != "$n" ] || [ "$n" -lt 20 ]; then
		echo "FAIL: $fam: real slurmctld vs topoml sim $pol (job nodes cores):"
		diff <(sort -n "$work/$fam.real") <(sort -n "$work/$fam.sim")
		return 1
	fi
	return 0
}

rc=0
pids=()
for fam in ${FAMILIES:-ft df ln}; do
	( family "$fam" ) >"$work/$fam.out" 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do
	wait "$p" || { r=$?; [ $r = 77 ] && [ $rc = 0 ] && rc=77
		[ $r != 77 ] && rc=1; }
done
for fam in ${FAMILIES:-ft df ln}; do
	cat "$work/$fam.out"
done
# no cluster here (cluster.sh says why): skip
[ $rc = 77 ] && { echo "SKIP: no cluster"; exit 77; }

if [ "${SIM_SHARED_REPLAY:-0}" = 1 ]; then
	for f in ${FAMILIES:-ft df}; do
		case $f in ft) fam=fat-tree ;; df) fam=dragonfly ;; *) continue ;; esac
		out=$(TOP_BUILDDIR=${TOP_BUILDDIR:-../..} KEEP=1 FAMILY=$fam SUBMIT_SCALE=100000 RUN_SCALE=100 \
			STOCK_ONLY=1 "$TESTS_DIR/select/replay_shared.sh" 2>&1) ||
			{ echo "$out"; echo "FAIL: replay_shared.sh $fam"; rc=1; continue; }
		echo "$out" | grep -E '^(stock|trace)'
		kept=$(echo "$out" | sed -n 's/^kept: //p')
		[ $fam = fat-tree ] && t=ft.conf p=slurm-tree || t=df.json p=slurm-dragonfly
		# the replay's own trace (its job numbers, scaled times)
		awk '{ printf "%d %d -1 %d %d -1 -1 %d %d -1 1 -1 -1 -1 -1 -1 -1 -1\n",
			$1, $2, $3, $4, $4, int(($5 + 59) / 60) * 60 }' \
			"$kept/jobs" >"$work/replay.swf"
		"$topoml" sim -q -t "$work/$t" -T "$work/replay.swf" -c 4 --shared \
			--cloud-power -p $p --jobs "$work/replay.jobs" >/dev/null
		python3 - "$kept/stock.out" "$work/replay.jobs" <<'PY' || rc=1
import sys
real = {}
for l in open(sys.argv[1]):
    name, p, sub, st, run, nl = l.split()
    real[name] = (int(st), int(sub), nl)
sim = {}
for l in open(sys.argv[2]):
    f = l.split()
    sim[f[1]] = (int(f[3]), int(f[2]), f[5])
same_start = [j for j in real if real[j][0] == sim[j][0]]
same_nodes = [j for j in same_start if real[j][2] == sim[j][2]]
wr = sum(real[j][0] - real[j][1] for j in real) / len(real)
ws = sum(sim[j][0] - sim[j][1] for j in sim) / len(sim)
print("replay: %d of %d jobs start at the same time, %d of those on the "
      "same nodes; mean wait real %.1f s, sim %.1f s" %
      (len(same_start), len(real), len(same_nodes), wr, ws))
# The driver cancels jobs one by one and slurmctld may schedule between
# two cancellations, and backfill runs on real seconds: node choices drift
# apart after the first such instant, so the wait is what must agree.
ok = abs(ws - wr) <= 0.15 * wr
sys.exit(0 if ok else 1)
PY
		rm -rf "$kept"
	done
fi
exit $rc
