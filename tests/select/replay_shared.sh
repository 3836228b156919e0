#!/bin/bash
# Replay a real SWF trace in cores (jobs ask for processors, small jobs share
# nodes) through a real slurmctld, under stock cons_tres (with Slurm's own
# topology support) and under select/topoml, on the same emulated machine
# (issue 18 item 5).  Time is virtual: the driver submits each job at its
# trace time, cancels it at start + run time, and between events lets
# slurmctld settle; slurmctld decides what starts and where.
#
#   replay_shared.sh [TRACE]   (default: ../shared/realdata/swf/accasim...)
#
# Environment: FAMILY=fat-tree|dragonfly (fat-tree), SLURM_TOPO=tree|none
# (Slurm's topology plugin under select/topoml too, or not), NODES (32), CPN cores
# per node (4), PER_LEAF nodes per leaf / router (4), SUBMIT_SCALE and
# RUN_SCALE divide the trace's submit gaps and run times (1: as traced;
# larger SUBMIT_SCALE than RUN_SCALE raises the load), MAX_JOBS (all),
# STOCK_ONLY=1 (stock cons_tres only), TOPOML_ONLY=1 (select/topoml only),
# TOPO_PLUGIN=1 (also topology/topoml beside select/cons_tres: Slurm
# 24.11+ with the plugin built, e.g. through contrib/test-release.sh's
# CLUSTER_SLURM_PREFIX and TOP_BUILDDIR), KEEP=1 (keep the work directory).
# Prints per policy: jobs, mean and max wait, utilisation (core-seconds /
# cores x makespan), multi-node jobs, their mean span (leaves or groups),
# jobs above the span lower bound for their cores, summed ring cost.
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
sel_require_tools

TRACE=${1:-${REALDATA:-$TESTS_DIR/../../shared/realdata}/swf/accasim_tests_data_workload.swf}
[ -r "$TRACE" ] || { echo "SKIP: no trace $TRACE"; exit 77; }
FAMILY=${FAMILY:-fat-tree}
NODES=${NODES:-32}
CPN=${CPN:-4}
PER_LEAF=${PER_LEAF:-4}
SUBMIT_SCALE=${SUBMIT_SCALE:-1}
RUN_SCALE=${RUN_SCALE:-1}
MAX_JOBS=${MAX_JOBS:-0}
work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-replay.XXXXXX")
chmod 755 "$work"

# ---- the machine: leaves (fat-tree) or routers in groups of 2 (dragonfly)
leaves=$((NODES / PER_LEAF))
k=1
: >"$work/stock.conf"
for l in $(seq 0 $((leaves - 1))); do
	echo "SwitchName=s$l Nodes=c[$k-$((k + PER_LEAF - 1))]" >>"$work/stock.conf"
	k=$((k + PER_LEAF))
done
case "$FAMILY" in
fat-tree)
	echo "SwitchName=top Switches=s[0-$((leaves - 1))]" >>"$work/stock.conf"
	cp "$work/stock.conf" "$work/topo"
	stock_param=""
	;;
dragonfly)
	# groups of two routers, all-to-all global links
	for g in $(seq 0 $((leaves / 2 - 1))); do
		echo "SwitchName=g$g Switches=s[$((2 * g))-$((2 * g + 1))]"
	done >>"$work/stock.conf"
	echo "SwitchName=top Switches=g[0-$((leaves / 2 - 1))]" >>"$work/stock.conf"
	stock_param=dragonfly
	{
		echo '{ "family": "dragonfly", "global_links": "all-to-all", "groups": ['
		k=1
		for g in $(seq 0 $((leaves / 2 - 1))); do
			[ "$g" -gt 0 ] && echo ','
			printf '{ "name": "g%d", "routers": [' "$g"
			for r in 0 1; do
				[ "$r" = 1 ] && printf ','
				printf '{"name": "s%d", "nodes": "c[%d-%d]"}' \
					$((2 * g + r)) "$k" $((k + PER_LEAF - 1))
				k=$((k + PER_LEAF))
			done
			printf '] }'
		done
		echo '] }'
	} >"$work/topo"
	;;
*) echo "FAIL: FAMILY=$FAMILY"; exit 1 ;;
esac
printf 'TopologyFile=%s\n' "$work/topo" >"$work/topoml.conf"

# ---- the trace: id submit run procs walltime, in virtual seconds --------
awk -v ss="$SUBMIT_SCALE" -v rs="$RUN_SCALE" -v max="$MAX_JOBS" \
    -v cores=$((NODES * CPN)) '
	/^;/ || NF < 9 { next }
	{
		p = $8 > 0 ? $8 : $5; run = $4; wall = $9
		if (p <= 0 || run <= 0 || p > cores) next
		if (t0 == "") t0 = $2
		n++
		sub_t = int(($2 - t0) / ss)
		r = int(run / rs); if (r < 1) r = 1
		w = wall > 0 ? int(wall / rs) : r; if (w < r) w = r
		printf "%d %d %d %d %d\n", n, sub_t, r, p, w
		if (max && n >= max) exit
	}' "$TRACE" | sort -k2,2n -k1,1n >"$work/jobs"
njobs=$(wc -l <"$work/jobs")
echo "trace $(basename "$TRACE"): $njobs jobs, $NODES nodes x $CPN cores," \
	"$FAMILY of $leaves ${PER_LEAF}-node leaves"

# settle: wait until slurmctld has looked at every pending job and nothing
# changes for three polls in a row (backfill included).
settle() {
	local prev="" cur same=0
	for _ in $(seq 1 200); do
		sleep 0.7
		cur=$(squeue -h -o '%i %T %r %N' | sort)
		if grep -q ' PENDING None' <<<"$cur"; then
			same=0
		elif [ "$cur" = "$prev" ]; then
			same=$((same + 1))
			[ $same -ge 2 ] && return 0
		else
			same=0
		fi
		prev=$cur
	done
	return 1
}

# replay LABEL: one run on the current cluster; writes $work/LABEL.out:
# name procs submit start run nodes
replay() {
	local label=$1 vt=0 next_sub id name p sub run wall st nl
	declare -A jid=() endt=() started=()
	local -a queue
	mapfile -t queue <"$work/jobs"
	local qi=0 done_jobs=0
	: >"$work/$label.out"
	while [ $done_jobs -lt "$njobs" ]; do
		# the next event: a submission or the earliest end
		next_sub=-1
		[ $qi -lt "$njobs" ] && read -r _ next_sub _ <<<"${queue[$qi]}"
		local tend=-1
		for name in "${!endt[@]}"; do
			[ $tend -lt 0 ] || [ "${endt[$name]}" -lt $tend ] &&
				tend=${endt[$name]}
		done
		if [ $next_sub -ge 0 ] && { [ $tend -lt 0 ] || [ $next_sub -le $tend ]; }; then
			vt=$next_sub
		elif [ $tend -ge 0 ]; then
			vt=$tend
		else
			cluster_fail "$label: jobs pending with nothing running: $(squeue -h -o '%i %T %r' | head -3)"
		fi
		for name in "${!endt[@]}"; do
			if [ "${endt[$name]}" -le $vt ]; then
				# a job gone before its virtual end ran out of
				# its real --time: the replay is then wrong
				case $(sel_state "${jid[$name]}") in
				RUNNING|CONFIGURING) ;;
				*) cluster_fail "$label: j$name ended before its virtual end" ;;
				esac
				scancel "${jid[$name]}"
				sel_wait_gone "${jid[$name]}" ||
					cluster_fail "$label: $name does not end"
				unset "endt[$name]"
				done_jobs=$((done_jobs + 1))
			fi
		done
		while [ $qi -lt "$njobs" ]; do
			read -r name sub run p wall <<<"${queue[$qi]}"
			[ "$sub" -le $vt ] || break
			id=$(sbatch --parsable -p main -n "$p" -J "j$name" \
				--time=$(((wall + 59) / 60)) -o /dev/null \
				--wrap 'sleep 1000000') ||
				cluster_fail "$label: sbatch j$name"
			jid[$name]=$id
			echo "$name $p $sub $run" >"$work/$label.meta.$name"
			qi=$((qi + 1))
		done
		settle || cluster_fail "$label: slurmctld does not settle"
		for name in "${!jid[@]}"; do
			[ -n "${started[$name]:-}" ] && continue
			read -r st nl < <(squeue -h -j "${jid[$name]}" -o '%T %N')
			case "$st" in
			RUNNING|CONFIGURING) ;;
			*) continue ;;
			esac
			started[$name]=$vt
			read -r _ p sub run <"$work/$label.meta.$name"
			endt[$name]=$((vt + run))
			echo "$name $p $sub $vt $run $nl" >>"$work/$label.out"
		done
	done
}

# report LABEL: the metrics of one run.
report() {
	local label=$1 f=$work/$1.out
	local cores=$((NODES * CPN)) unit=$((PER_LEAF * CPN))
	# the span unit's cores: a leaf, or a group of two routers
	[ "$FAMILY" = dragonfly ] && unit=$((2 * PER_LEAF * CPN))
	# span of each multi-node job and its lower bound for its cores
	: >"$work/$label.span"
	while read -r name p sub st run nl; do
		local n l lb sc ring
		n=$(scontrol show hostnames "$nl" | wc -l)
		[ "$n" -ge 2 ] || continue
		sc=$("$SEL_SCORE" "$work/topo" "$nl" "") ||
			cluster_fail "select_score $nl"
		l=$(sel_field span "$sc")
		ring=$(sel_field ring "$sc")
		lb=$(((p + unit - 1) / unit))
		echo "$name $n $l $lb $ring" >>"$work/$label.span"
	done <"$f"
	awk -v cores=$cores -v label="$label" -v spanf="$work/$label.span" '
		{ w = $4 - $3; sw += w; if (w > mw) mw = w; n++
		  cs += $2 * $5; e = $4 + $5; if (e > end) end = e
		  if (first == "" || $3 < first) first = $3 }
		END {
			while ((getline line < spanf) > 0) {
				split(line, a, " "); m++; sp += a[3]
				if (a[3] > a[4]) above++; ring += a[5]
			}
			printf "%-7s jobs %d  mean wait %.1f s  max wait %d s  utilisation %.3f  multi-node %d  mean span %.2f  above span bound %d  ring %d\n",
				label, n, n ? sw / n : 0, mw,
				cs / (cores * (end - first)), m,
				m ? sp / m : 0, above + 0, ring + 0
		}' "$f"
	# the same jobs under every policy: those whose cores need more than
	# one node (stock also spreads jobs of one node's cores or fewer over
	# several nodes, which changes the set above), and the wait of the
	# jobs that fit on one node
	awk -v cpn="$CPN" -v label="$label" -v spanf="$work/$label.span" '
		{ p[$1] = $2; w = $4 - $3
		  if ($2 <= cpn) { ns++; ws += w } }
		END {
			while ((getline line < spanf) > 0) {
				split(line, a, " ")
				if (p[a[1]] <= cpn) continue
				m++; sp += a[3]; if (a[3] > a[4]) above++
				ring += a[5]
			}
			printf "%-7s jobs over one node (%d cores): %d  mean span %.2f  above span bound %d  ring %d;  jobs of one node or less: %d  mean wait %.1f s\n",
				label, cpn, m, m ? sp / m : 0, above + 0,
				ring + 0, ns, ns ? ws / ns : 0
		}' "$f"
}

# TOPOML_ONLY=1: the select/topoml half alone (stock cons_tres does not
# change with this project's code: compare with an earlier stock half).
if [ "${TOPOML_ONLY:-0}" != 1 ]; then
CLUSTER_SLURMD=0 CLUSTER_CLOUD=$NODES CLUSTER_CPUS=$CPN \
	CLUSTER_SELECT=cons_tres CLUSTER_TOPOLOGY=$work/stock.conf \
	CLUSTER_TOPOLOGY_PARAM=$stock_param CLUSTER_PARTITION_EXTRA="" \
	cluster_start replay-stock || exit $?
t0=$(date +%s)
replay stock
echo "stock: replayed in $(($(date +%s) - t0)) s"
# STOCK_ONLY=1: the stock half alone (tests/sim/test_sim_shared_slurm.sh
# compares it with the simulator's Slurm baseline); report needs scontrol
if [ "${STOCK_ONLY:-0}" = 1 ]; then
	report stock
	cluster_stop
	if [ -n "${KEEP:-}" ]; then
		echo "kept: $work"
	else
		rm -rf "$work"
	fi
	exit 0
fi
cluster_stop
fi

# select/topoml with Slurm's topology plugin kept, as the admin guide advises
# (backfill's will-run estimates are cons_tres's own); SLURM_TOPO=none
# drops it.
if [ "${SLURM_TOPO:-tree}" = none ]; then
	topoml_topology='' topoml_param=''
else
	topoml_topology=$work/stock.conf topoml_param=$stock_param
fi
CLUSTER_SLURMD=0 CLUSTER_CLOUD=$NODES CLUSTER_CPUS=$CPN \
	CLUSTER_SELECT=topoml CLUSTER_TOPOLOGY=$topoml_topology \
	CLUSTER_TOPOLOGY_PARAM=$topoml_param \
	CLUSTER_TOPOML_CONF=$work/topoml.conf CLUSTER_PARTITION_EXTRA="" \
	cluster_start replay-topoml || exit $?
t0=$(date +%s)
replay topoml
echo "topoml: replayed in $(($(date +%s) - t0)) s"

# topology/topoml wrapping Slurm's tree plugin for the same topology.conf,
# the engine's network from topoml.conf (a dragonfly too).  The reports
# below run on whichever cluster is up (scontrol show hostnames).
if [ "${TOPO_PLUGIN:-0}" = 1 ]; then
	cluster_stop
	CLUSTER_SLURMD=0 CLUSTER_CLOUD=$NODES CLUSTER_CPUS=$CPN \
		CLUSTER_SELECT=cons_tres CLUSTER_TOPOLOGY=$work/stock.conf \
		CLUSTER_TOPOLOGY_PLUGIN=topology/topoml \
		CLUSTER_TOPOML_CONF=$work/topoml.conf \
		CLUSTER_PARTITION_EXTRA="" \
		cluster_start replay-topo || exit $?
	t0=$(date +%s)
	replay topo
	echo "topo: replayed in $(($(date +%s) - t0)) s"
fi
[ "${TOPOML_ONLY:-0}" = 1 ] || report stock
report topoml
[ "${TOPO_PLUGIN:-0}" = 1 ] && report topo
cluster_stop
if [ -n "${KEEP:-}" ]; then
	echo "kept: $work"
else
	rm -rf "$work"
fi
