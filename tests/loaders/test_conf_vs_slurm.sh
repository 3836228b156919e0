#!/bin/bash
# topoml reads topology.conf as Slurm 22.05 does: every file of the
# fixture table (tests/fixtures/loaders/conf) and every real site file is
# given to a real slurmctld (topology/tree) and to `topoml check`; both must
# accept it or both reject it.  A fixture saying "# slurm: accepts" is one
# Slurm runs with (logging an error) while topoml has no model of it (the
# loader says so: check_loaders; select/topoml then runs with plain
# cons_tres: test_select_admin.sh), "# slurm: skip" one Slurm cannot judge
# quickly (a missing include: 60 s of retries).
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
TOPOML=$TOP_BUILDDIR/contrib/topoml
[ -x "$TOPOML" ] || { echo "FAIL: $TOPOML not built"; exit 1; }
fixtures=$TESTS_DIR/fixtures/loaders/conf

files=("$fixtures"/*.conf)
if [ -n "${REALDATA:-}" ] && [ -d "$REALDATA/topology_conf" ]; then
	while IFS= read -r f; do
		files+=("$f")
	done < <(find "$REALDATA/topology_conf" "$REALDATA/test_suites" \
		-name '*.conf' | sort)
else
	echo "REALDATA absent: fixtures only"
	skipped_realdata=1
fi

# Slurm alone must judge: no topoml plugin in the cluster's PluginDir
# (select/topoml, loaded by slurmctld whatever SelectType says, reads
# topology.conf through the same loader).
noplugins=$(mktemp -d /tmp/noplugins.XXXXXX)
TOP_BUILDDIR=$noplugins

CLUSTER_SLURMD=0 CLUSTER_CLOUD=8 CLUSTER_TOPOLOGY=$fixtures/good-syntax.conf \
	cluster_start confslurm

# Restart slurmctld on the topology.conf in place: "up" or "down" (a
# fatal, or a slurmctld that died: 22.05 crashes on Switches="").
_slurm_verdict() {
	local log=$CLUSTER_DIR/log/slurmctld.log i pid
	_cluster_kill_pidfile "$CLUSTER_DIR/run/slurmctld.pid"
	rm -rf "${CLUSTER_DIR:?}"/state/*
	: >"$log"
	slurmctld -f "$SLURM_CONF" -c >>"$CLUSTER_DIR/log/slurmctld.out" 2>&1
	for i in $(seq 1 150); do
		if grep -q "fatal" "$log"; then
			echo down
			return
		fi
		pid=$(cat "$CLUSTER_DIR/run/slurmctld.pid" 2>/dev/null)
		if [ -n "$pid" ] && ! _cluster_alive "$pid"; then
			echo down
			return
		fi
		if scontrol ping 2>/dev/null | grep -q "is UP"; then
			echo up
			return
		fi
		sleep 0.1
	done
	echo timeout
}

n=0
bad=0
for f in "${files[@]}"; do
	name=${f#"$TESTS_DIR/"}
	name=${name#"${REALDATA:-/nonexistent}/"}
	grep -q '^# slurm: skip' "$f" && { echo "skip: $name"; continue; }
	# Block files are topology/block's (24.05+), which 22.05 lacks:
	# tests/place/test_block_slurm.sh judges them on a 24.05+ slurmctld.
	if [ "$CLUSTER_SLURM_VERSION" -lt 2405 ] &&
	   grep -qiE '^[[:space:]]*Block(Name|Sizes)[[:space:]]*=' "$f" &&
	   ! grep -qiE '^[[:space:]]*SwitchName' "$f"; then
		echo "skip: $name (topology/block, Slurm 24.05+)"
		continue
	fi
	cp "$f" "$CLUSTER_DIR/topology.conf"
	for extra in $(sed -n 's/^# files: //p' "$f"); do
		cp "$(dirname "$f")/$extra" "$CLUSTER_DIR/"
	done
	if "$TOPOML" check "$f" >/dev/null 2>&1; then
		want=up
	else
		want=down
		grep -q '^# slurm: accepts' "$f" && want=up
	fi
	got=$(_slurm_verdict)
	if [ "$got" != "$want" ]; then
		echo "FAIL: $name: slurmctld $got, topoml says $want" >&2
		grep -E "fatal|error" "$CLUSTER_DIR/log/slurmctld.log" | tail -3 >&2
		bad=$((bad + 1))
	else
		why=$(grep -m1 -o "fatal: .*" "$CLUSTER_DIR/log/slurmctld.log")
		echo "ok: $name: slurmctld $got${why:+ ($why)}"
	fi
	# Slurm puts each node where topoml does: its first leaf in file
	# order (the fixtures use the CLOUD nodes c[1-8]).
	while read -r node leaf; do
		[ "$got" = up ] || break
		first=$(scontrol show topology | grep ' Level=0 ' |
			while read -r sw _ _ nodes; do
				scontrol show hostnames "${nodes#Nodes=}" |
					grep -qx "$node" &&
					{ echo "${sw#SwitchName=}"; break; }
			done)
		if [ "$first" != "$leaf" ]; then
			echo "FAIL: $name: Slurm puts $node on '$first'," \
				"topoml on $leaf" >&2
			bad=$((bad + 1))
		fi
	done < <(sed -n 's/^# expect-leaf: //p' "$f")
	n=$((n + 1))
done
rmdir "$noplugins"
[ "$bad" = 0 ] || cluster_fail "$bad of $n files judged unlike Slurm"
echo "PASS: $n topology.conf files judged as slurmctld judges them"
# The local files passed; without the real data the test is incomplete.
[ -n "${skipped_realdata:-}" ] && { echo "SKIP: REALDATA absent"; exit 77; }
exit 0
