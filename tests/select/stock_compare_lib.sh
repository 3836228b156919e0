# shellcheck shell=bash
#
# One placement scenario on CLOUD_NODES emulated nodes (plus the 8 real
# slurmd nodes of the harness): the same job sequence (mixed sizes,
# cancellations making holes) runs under stock cons_tres (with the topology
# support Slurm has for that family) and under select/topoml.  Every
# select/topoml allocation must equal `topoml place`'s answer for the same
# busy nodes and their jobs; totals must match or beat stock.
#
#   FAMILY=fat-tree|dragonfly|torus . stock_compare_lib.sh
#
# SPDX-License-Identifier: GPL-2.0-or-later

set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
sel_require_tools

CLOUD_NODES=${CLOUD_NODES:-1024}
SEQ_LEN=${SEQ_LEN:-48}
work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-sel-$FAMILY.XXXXXX")
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT

# ---- topology files: engine's (TOPO) and stock Slurm's (STOCK_CONF) ----
gen_fat_tree() {	# 32 nodes per leaf, 8 leaves per spine, one root
	local l s per=32 leaves=$((CLOUD_NODES / 32))
	for l in $(seq 0 $((leaves - 1))); do
		echo "SwitchName=leaf$l Nodes=c[$((l * per + 1))-$(((l + 1) * per))]"
	done
	for s in $(seq 0 $(((leaves + 7) / 8 - 1))); do
		local last=$((s * 8 + 7))
		[ $last -ge "$leaves" ] && last=$((leaves - 1))
		echo "SwitchName=spine$s Switches=leaf[$((s * 8))-$last]"
	done
	echo "SwitchName=root Switches=spine[0-$(((leaves + 7) / 8 - 1))]"
}

gen_dragonfly_json() {	# 8 groups x 8 routers x (CLOUD_NODES/64) nodes
	local g r per=$((CLOUD_NODES / 64)) k=1 sep1="" sep2
	echo '{ "family": "dragonfly", "global_links": "all-to-all", "groups": ['
	for g in $(seq 0 7); do
		printf '%s { "name": "g%d", "routers": [' "$sep1" "$g"
		sep2=""
		for r in $(seq 0 7); do
			printf '%s {"name": "g%dr%d", "nodes": "c[%d-%d]"}' \
				"$sep2" "$g" "$r" "$k" $((k + per - 1))
			k=$((k + per))
			sep2=","
		done
		printf ' ] }\n'
		sep1=","
	done
	echo '] }'
}

gen_dragonfly_conf() {	# the same network as Slurm's TopologyParam=dragonfly sees it
	local g r per=$((CLOUD_NODES / 64)) k=1
	for g in $(seq 0 7); do
		for r in $(seq 0 7); do
			echo "SwitchName=g${g}r$r Nodes=c[$k-$((k + per - 1))]"
			k=$((k + per))
		done
		echo "SwitchName=g$g Switches=g${g}r[0-7]"
	done
	echo "SwitchName=top Switches=g[0-7]"
}

gen_torus_json() {	# x fastest: c1 at (0,0,0), c2 at (1,0,0)
	local z=$((CLOUD_NODES / 128))
	printf '{ "family": "torus", "dims": [16, 8, %d], "wrap": [true, true, true],\n' "$z"
	echo '  "node_pattern": { "prefix": "c", "first": 1, "digits": 0, "order": "xyz" } }'
}

stock_conf=""
stock_param=""
case "$FAMILY" in
fat-tree)
	gen_fat_tree >"$work/topology.conf"
	TOPO=$work/topology.conf
	stock_conf=$work/topology.conf
	;;
dragonfly)
	gen_dragonfly_json >"$work/topoml.json"
	gen_dragonfly_conf >"$work/topology.conf"
	TOPO=$work/topoml.json
	stock_conf=$work/topology.conf
	stock_param=dragonfly
	;;
torus)
	# Slurm 22.05's topology/3d_torus needs coordinate-encoded node
	# names; with c1..cN stock cons_tres places in node order.
	gen_torus_json >"$work/topoml.json"
	TOPO=$work/topoml.json
	;;
*)
	echo "FAIL: unknown FAMILY=$FAMILY"
	exit 1
	;;
esac
printf 'TopologyFile=%s\nDefaultHint=allreduce\n' "$TOPO" >"$work/topoml.conf"

sel_sequence 7 "$SEQ_LEN" "$CLOUD_NODES" >"$work/seq"
# A job that cannot fit anywhere is rejected, not placed.
part="PartitionName=cloud Nodes=c[1-$CLOUD_NODES] MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE"

# ---- stock cons_tres ----
CLUSTER_SLURMD=8 CLUSTER_CLOUD=$CLOUD_NODES CLUSTER_SELECT=cons_tres \
	CLUSTER_TOPOLOGY=$stock_conf CLUSTER_TOPOLOGY_PARAM=$stock_param \
	CLUSTER_CONF_EXTRA=$part cluster_start "stock-$FAMILY" ||
	exit $?
t0=$(date +%s)
sel_run_sequence "$work/seq" "$work/stock.out" "-p cloud" "$TOPO" 0
echo "stock: $(wc -l <"$work/stock.out") jobs in $(($(date +%s) - t0)) s"
cluster_stop

# ---- select/topoml ----
CLUSTER_SLURMD=8 CLUSTER_CLOUD=$CLOUD_NODES CLUSTER_SELECT=topoml \
	CLUSTER_TOPOLOGY='' CLUSTER_TOPOLOGY_PARAM='' \
	CLUSTER_TOPOML_CONF=$work/topoml.conf \
	CLUSTER_CONF_EXTRA="$part
DebugFlags=SelectType" cluster_start "topoml-$FAMILY" || exit $?
t0=$(date +%s)
sel_run_sequence "$work/seq" "$work/topoml.out" "-p cloud" "$TOPO" 1
echo "topoml: $(wc -l <"$work/topoml.out") jobs in $(($(date +%s) - t0)) s," \
	"all as the engine says; $SEL_CLI_DIFF differ from \`topoml place\`" \
	"(which knows busy nodes, not which job holds them)"

# The plugin's own score is what users see.
last=$(squeue -h -t R,CF -o '%i' | sort -n | tail -1)
cmt=$(sel_comment "$last")
case "$cmt" in
"topoml: placed=topoml"*) ;;
*) cluster_fail "job $last: SystemComment '$cmt'" ;;
esac

# Too large for the partition: pends for ever (PartitionNodeLimit), as with
# stock Slurm; slurmctld unharmed.
huge=$(sbatch --parsable -p cloud -N $((CLOUD_NODES + 1)) -o /dev/null \
	--wrap true 2>/dev/null)
if [ -n "$huge" ]; then
	sleep 2
	r=$(squeue -h -j "$huge" -o '%T %r')
	[ "$r" = "PENDING PartitionNodeLimit" ] ||
		cluster_fail "job of $((CLOUD_NODES + 1)) nodes: $r"
	scancel "$huge"
fi
# Larger than the free nodes: pends (Resources), the rest keeps running.
free=$((CLOUD_NODES - $(scontrol show hostnames \
	"$(cluster_nodes_allocated)" 2>/dev/null | grep -c '^c')))
big=$(sbatch --parsable -p cloud -N $((free + 1)) -o /dev/null --wrap true)
sleep 2
[ "$(sel_state "$big")" = PENDING ] ||
	cluster_fail "job of $((free + 1)) nodes with $free free: $(sel_state "$big")"
scontrol ping | grep -q UP || cluster_fail "slurmctld down"
scancel "$big"

# Every allocation equals the engine's answer with owners (checked above)
# and, on these sequences, `topoml place`'s answer from busy nodes alone.
[ "$SEL_CLI_DIFF" = 0 ] ||
	cluster_fail "$SEL_CLI_DIFF allocations differ from topoml place"

# ---- compare ----
read -r sn sspan sring sslb srlb sgh <<<"$(sel_totals "$work/stock.out")"
read -r tn tspan tring tslb trlb tgh <<<"$(sel_totals "$work/topoml.out")"
sshare=$(awk '{for(i=5;i<=NF;i++) if ($i ~ /^shared=/) {split($i,a,"="); s+=a[2]}} END{print s+0}' "$work/stock.out")
tshare=$(awk '{for(i=5;i<=NF;i++) if ($i ~ /^shared=/) {split($i,a,"="); s+=a[2]}} END{print s+0}' "$work/topoml.out")
echo "$FAMILY, $CLOUD_NODES nodes, $tn jobs:"
echo "  stock:  span $sspan (at lower bound $sslb/$sn) ring $sring (at lb $srlb) global_hops $sgh shared $sshare"
echo "  topoml: span $tspan (at lower bound $tslb/$tn) ring $tring (at lb $trlb) global_hops $tgh shared $tshare"
[ "$sn" = "$tn" ] || cluster_fail "stock placed $sn jobs, topoml $tn"
[ "$tspan" -le "$sspan" ] || cluster_fail "topoml span $tspan > stock $sspan"
[ "$tring" -le "$sring" ] || cluster_fail "topoml ring $tring > stock $sring"
[ "$tshare" -le "$sshare" ] ||
	cluster_fail "topoml shares $tshare leaves/links, stock $sshare"
case "$FAMILY" in
fat-tree|torus)
	# Span (leaves, box volume) at the lower bound whenever free
	# nodes allow it: the lower bound is computed for the free nodes.
	[ "$tslb" = "$tn" ] ||
		cluster_fail "only $tslb of $tn jobs at the span lower bound"
	;;
dragonfly)
	[ "$tring" -lt "$sring" ] ||
		cluster_fail "dragonfly: ring $tring not below stock $sring"
	[ "$tgh" -le "$sgh" ] ||
		cluster_fail "dragonfly: global hops $tgh > stock $sgh"
	;;
esac
cluster_stop
rm -rf "$work"
echo "PASS: $FAMILY"
