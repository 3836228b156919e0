#!/bin/bash
# select/topoml owns only its "topoml: ..." part of the SystemComment: a
# requeued job that starts again gets that part replaced, not repeated
# (other plugins' parts are kept: check_comment; Slurm 22.05 offers no
# admin command that writes a SystemComment, only slurmctld plugins do).
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
sel_require_tools

work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-sel-cmt.XXXXXX")
chmod 755 "$work"
printf 'SwitchName=r0 Nodes=n[1-4]\nSwitchName=r1 Nodes=n[5-8]\nSwitchName=top Switches=r[0-1]\n' \
	>"$work/net.conf"
printf 'TopologyFile=%s\n' "$work/net.conf" >"$work/topoml.conf"
CLUSTER_SLURMD=8 CLUSTER_CLOUD=0 CLUSTER_SELECT=topoml \
	CLUSTER_TOPOML_CONF=$work/topoml.conf \
	cluster_start sel-comment || exit $?

id=$(sbatch --parsable -N2 --requeue -o /dev/null --wrap 'sleep 100000') ||
	cluster_fail "sbatch"
sel_wait_start "$id" >/dev/null || cluster_fail "job did not start"
c1=$(sel_comment "$id")
case "$c1" in
"topoml: placed=topoml "*) ;;
*) cluster_fail "first start: SystemComment '$c1'" ;;
esac
for round in 1 2; do
	scontrol requeue "$id" || cluster_fail "requeue $round"
	for _ in $(seq 1 600); do
		[ "$(sel_state "$id")" = PENDING ] && break
		sleep 0.1
	done
	[ "$(sel_state "$id")" = PENDING ] ||
		cluster_fail "requeue $round: state $(sel_state "$id")"
	# A requeued job waits for its old credential to expire: not here.
	# slurmd refuses a credential made in the same second as the
	# revocation ("Job credential revoked"): let that second pass.
	sleep 2
	scontrol update jobid="$id" StartTime=now ||
		cluster_fail "requeue $round: StartTime=now"
	sel_wait_start "$id" 600 >/dev/null ||
		cluster_fail "requeue $round: not restarted: $(squeue -h -j "$id" -o '%T %r')"
	c=$(sel_comment "$id")
	[ "$(grep -o 'topoml: ' <<<"$c" | wc -l)" = 1 ] ||
		cluster_fail "requeue $round: SystemComment '$c'"
	case "$c" in
	"topoml: placed="*) ;;
	*) cluster_fail "requeue $round: SystemComment '$c'" ;;
	esac
	echo "ok: requeue $round: $c"
done
scancel "$id"
sel_wait_gone "$id"
cluster_stop
rm -rf "$work"
echo "PASS: SystemComment holds one topoml part after requeues"
