#!/bin/bash
# --ml-spares=K on a real local cluster with select/topoml and topoml.so
# (issue 13 item 1): 12 nodes on three leaves of 4.
#   - a job of -N6 --ml-spares=2: the engine places the 6 together (two
#     leaves), SystemComment says spares=2 and its order= puts 2 nodes of
#     the leaf holding 4 of the job last; the batch script gets
#     TOPOML_SPARES=2 and TOPOML_SPARE_NODES = those 2; a step with
#     --ml-nccl=auto on all 6 nodes is refused with the reason, the same
#     step on the 4 workers gets RANK 0-3 and WORLD_SIZE 4, a plain step
#     on all 6 runs;
#   - TOPOML_SPARES=1 (the twin) reaches select/topoml too (spares=1);
#   - --ml-spares=3 on -N3 fails the job with the reason, sbatch refuses
#     --ml-spares=x and a value above the site's max_spares.
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
[ -f "$TOP_BUILDDIR/select_plugin/.libs/select_topoml.so" ] ||
	{ echo "SKIP: select/topoml not built (no Slurm source)"; exit 77; }
[ -e "$TOP_BUILDDIR/spank/.libs/topoml.so" ] ||
	{ echo "SKIP: topoml.so missing"; exit 77; }

work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-spares-place.XXXXXX")
chmod 755 "$work"
printf '%s\n' 'SwitchName=r0 Nodes=n[1-4]' 'SwitchName=r1 Nodes=n[5-8]' \
	'SwitchName=r2 Nodes=n[9-12]' 'SwitchName=top Switches=r[0-2]' \
	>"$work/net.conf"
printf 'TopologyFile=%s\n' "$work/net.conf" >"$work/topoml.conf"
CLUSTER_SLURMD=12 CLUSTER_CLOUD=0 CLUSTER_SELECT=topoml \
	CLUSTER_TOPOML_CONF=$work/topoml.conf CLUSTER_SPANK=1 \
	CLUSTER_SPANK_ARGS="cache_dir=$work/cache max_spares=4" \
	cluster_start spares-place || exit $?
trap 'cluster_stop; rm -rf "$work"' EXIT
fail() { cluster_fail "$*"; }
leaf() { echo $(((${1#n} - 1) / 4)); }

# wait_done ID: the job has ended.
wait_done() {
	cluster_job_wait_end "$1" >/dev/null ||
		fail "job $1 did not end: $(squeue)"
}

cat >"$work/job.sh" <<'EOF'
#!/bin/bash
echo "batch TOPOML_SPARES=${TOPOML_SPARES:-}" \
	"SPARE_NODES=${TOPOML_SPARE_NODES:-}"
w=$(scontrol show hostnames "$SLURM_JOB_NODELIST" |
	grep -vxF -f <(tr , '\n' <<<"$TOPOML_SPARE_NODES") | paste -sd,)
echo "workers $w"
srun -N6 --ml-nccl=auto true && echo "all6 wired: ran"
srun -N4 -w "$w" --ml-nccl=auto bash -c \
	'echo "rank $RANK world $WORLD_SIZE spares $TOPOML_SPARES"'
srun -N6 printenv SLURMD_NODENAME | sort | paste -sd, | sed 's/^/plain /'
EOF
chmod 755 "$work/job.sh"

id=$(sbatch --parsable -N6 --ml-spares=2 -o "$work/out" "$work/job.sh") ||
	fail "sbatch -N6 --ml-spares=2"
wait_done "$id"
out=$(cat "$work/out")
c=$(cluster_job_comment "$id")
case "$c" in
"topoml: placed=topoml "*" spares=2 order="*) ;;
*) fail "SystemComment '$c'" ;;
esac
order=$(scontrol show hostnames "$(sed 's/.* order=\([^ ]*\).*/\1/' <<<"$c")")
[ "$(wc -l <<<"$order")" = 6 ] || fail "order of 6 nodes: $order"
spares=$(tail -2 <<<"$order" | paste -sd,)
# The leaf with most of the job's nodes holds both spares.
full=$(for h in $order; do leaf "$h"; done | sort | uniq -c | sort -rn |
	awk 'NR == 1 { print $2 }')
for h in $(tr , ' ' <<<"$spares"); do
	[ "$(leaf "$h")" = "$full" ] ||
		fail "spare $h is not on leaf r$full: order $order"
done
[ "$(for h in $order; do leaf "$h"; done | sort -u | wc -l)" = 2 ] ||
	fail "6 nodes on more than two leaves: $order"
grep -qxF "batch TOPOML_SPARES=2 SPARE_NODES=$spares" <<<"$out" ||
	fail "batch environment (want spares $spares): $out"
msg="of this step is a spare of the job (TOPOML_SPARE_NODES=$spares)"
grep -q "topoml: --ml-spares=2: node n[0-9]* $msg and would get a RANK" \
	<<<"$out" || fail "wired step on all 6 nodes not refused: $out"
grep -q "all6 wired: ran" <<<"$out" && fail "wired step on spares ran: $out"
[ "$(grep -c '^rank [0-3] world 4 spares 2$' <<<"$out")" = 4 ] ||
	fail "workers' step: $out"
grep -q "^plain \(n[0-9]*,\)\{5\}n[0-9]*$" <<<"$out" ||
	fail "plain step on all 6 nodes: $out"
echo "ok: -N6 --ml-spares=2: $c; spares $spares on leaf r$full"

# The twin: TOPOML_SPARES=1 reaches select/topoml through the job.
id=$(TOPOML_SPARES=1 sbatch --parsable -N3 -o "$work/out2" \
	--wrap 'echo "twin $TOPOML_SPARES $TOPOML_SPARE_NODES"') ||
	fail "TOPOML_SPARES=1 sbatch"
wait_done "$id"
c=$(cluster_job_comment "$id")
grep -q " spares=1 order=" <<<"$c" || fail "twin: SystemComment '$c'"
last=$(scontrol show hostnames "$(sed 's/.* order=\([^ ]*\).*/\1/' <<<"$c")" |
	tail -1)
grep -qx "twin 1 $last" "$work/out2" ||
	fail "twin: $(cat "$work/out2") (last of the order: $last)"
echo "ok: TOPOML_SPARES=1: $c"

# As many spares as nodes: the job fails with the reason.
id=$(sbatch --parsable -N3 --ml-spares=3 -o "$work/out3" --wrap true) ||
	fail "sbatch --ml-spares=3"
wait_done "$id"
grep -q "topoml: --ml-spares=3: the job has 3 node(s): ask -N workers+3" \
	"$work/out3" || fail "--ml-spares=3 on 3 nodes: $(cat "$work/out3")"
# Bad values stop sbatch with the reason.
e=$(sbatch -N2 --ml-spares=x --wrap true 2>&1) &&
	fail "sbatch --ml-spares=x accepted"
grep -q "ml-spares: invalid value 'x'" <<<"$e" || fail "--ml-spares=x: $e"
e=$(sbatch -N6 --ml-spares=5 --wrap true 2>&1) &&
	fail "sbatch --ml-spares=5 accepted (max_spares=4)"
grep -q "5 spares: at most 4 on this cluster" <<<"$e" ||
	fail "--ml-spares=5: $e"
echo "PASS: --ml-spares: spares last in order= on the fullest leaf," \
	"exported, wired steps on spares refused, twin, limits"
