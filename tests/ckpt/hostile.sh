#!/bin/bash
# What an unprivileged user can send to the root side of --ml-ckpt, on a
# real local cluster (issue: hardening), each case as that user:
#   fifo       DIR/epoch replaced by a FIFO: the job still ends on time
#   symlink    DIR/epoch a symlink to a root-only file: its content never
#              reaches the job, the file is unchanged
#   baddir     TOPOML_CKPT naming an unwritable DIR through --export (past
#              sbatch's check): the job fails with the reason in its
#              output, nothing is created there
#   badenv     TOPOML_NCCL=maybe through --export: the same
#   squat      another user cannot create, read or write the victim's
#              page or page directory
#   env        SLURM_JOB_USER and SLURM_RESTART_COUNT in the job's
#              environment decide nothing (%u is the passwd name, the
#              restart count is slurmctld's)
# and after all of them no node is drained and every file under the users'
# directories belongs to its user.
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
. "${TESTS_DIR:-$(dirname "$0")/..}/lib/cluster.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
so=$TOP_BUILDDIR/spank/.libs/topoml.so
[ -f "$so" ] || { echo "SKIP: $so missing"; exit 77; }

U1=topomlh1
U2=topomlh2
BASE=$(mktemp -d /tmp/topoml-hostile.XXXXXX)
chmod 755 "$BASE"
cleanup() {
	cluster_stop
	if [ -n "${CLUSTER_KEEP:-}" ]; then
		echo "kept $BASE"
	else
		rm -rf "$BASE"
	fi
}
CLUSTER_SLURMD=3
CLUSTER_SPANK=1
CLUSTER_SPANK_ARGS="cache_dir=$BASE/cache"
# Keep finished jobs visible long enough to read their state.
CLUSTER_CONF_EXTRA="MinJobAge=600"
cluster_start hostile
trap 'cleanup' EXIT
trap 'cleanup; exit 130' INT TERM
cluster_user "$U1"
cluster_user "$U2"
UID1=$(id -u "$U1")
for u in "$U1" "$U2"; do
	mkdir -p "$BASE/$u"
	chown "$u" "$BASE/$u"
done

fail() { cluster_fail "$*"; }

# as USER CMD...: run a client command as USER in USER's directory.
as() {
	local u=$1
	shift
	(cd "$BASE/$u" && runuser -u "$u" -- env SLURM_CONF="$SLURM_CONF" \
		"$@")
}

# state ID: the job's state (empty when slurmctld does not know it).
state() {
	scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' |
		cut -d= -f2
}

# wait_end ID SECONDS: until the job ended; prints its final state.
wait_end() {
	local i s
	for i in $(seq 1 $(($2 * 2))); do
		s=$(state "$1")
		case "$s" in
		COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | \
			OUT_OF_MEMORY | BOOT_FAIL | DEADLINE)
			echo "$s"
			return 0
			;;
		esac
		sleep 0.5
	done
	echo "${s:-gone}"
	return 1
}

no_drain() {
	local bad
	bad=$(sinfo -h -N -o '%N %t %E' | awk '$2 ~ /drain|drng|down/')
	[ -z "$bad" ] || fail "$1: nodes drained or down: $bad"
}

# 1. fifo: the timer thread reads DIR/epoch every 2 s as root's thread.
id=$(as "$U1" sbatch --parsable -N1 -o "$BASE/$U1/fifo.out" \
	--ml-ckpt="$BASE/$U1/ck,every=10" --wrap \
	'd=$TOPOML_CKPT_DIR; rm -f $d/epoch; mkfifo $d/epoch; sleep 5') ||
	fail "fifo: sbatch"
s=$(wait_end "$id" 60) || fail "fifo: job $id still $s after 60 s"
[ "$s" = COMPLETED ] || fail "fifo: job $id ended $s: $(cat "$BASE/$U1/fifo.out")"
no_drain fifo
echo "fifo: job $id $s"

# 2. symlink to a root-only file holding a number.
printf '424242\n' >"$BASE/secret"
chmod 600 "$BASE/secret"
sum=$(md5sum <"$BASE/secret")
id=$(as "$U1" sbatch --parsable -N1 -o "$BASE/$U1/symlink.out" \
	--ml-ckpt="$BASE/$U1/ck2,every=10" --wrap \
	"ln -sf $BASE/secret \$TOPOML_CKPT_DIR/epoch; sleep 6; echo done") ||
	fail "symlink: sbatch"
s=$(wait_end "$id" 60) || fail "symlink: job $id still $s"
out=$(cat "$BASE/$U1/symlink.out")
[ "$s" = COMPLETED ] || fail "symlink: job $id ended $s: $out"
case "$out" in *424242* | *stale*) fail "symlink: root read it: $out" ;; esac
grep -q "runs again elsewhere" "$CLUSTER_DIR"/log/slurmd-*.log &&
	fail "symlink: the timer believed the symlink's content"
[ "$(md5sum <"$BASE/secret")" = "$sum" ] || fail "symlink: secret changed"
[ "$(stat -c %u:%a "$BASE/secret")" = "0:600" ] ||
	fail "symlink: secret's owner or mode changed"
no_drain symlink
echo "symlink: job $id $s, nothing leaked"

# 3. baddir: past sbatch's own check through --export.
mkdir -p "$BASE/rootonly"
chmod 755 "$BASE/rootonly"
id=$(as "$U1" sbatch --parsable -N1 -o "$BASE/$U1/baddir.out" \
	--export=ALL,TOPOML_CKPT="$BASE/rootonly/x" --wrap 'echo RAN') ||
	fail "baddir: sbatch"
s=$(wait_end "$id" 60) || fail "baddir: job $id still $s"
out=$(cat "$BASE/$U1/baddir.out" 2>/dev/null)
[ "$s" = FAILED ] || fail "baddir: job $id ended $s: $out"
echo "$out" | grep -q "topoml: --ml-ckpt: cannot use $BASE/rootonly/x/$id" ||
	fail "baddir: no reason in the job's output: '$out'"
case "$out" in *RAN*) fail "baddir: the script ran" ;; esac
[ -z "$(ls -A "$BASE/rootonly")" ] || fail "baddir: created in rootonly"
no_drain baddir
echo "baddir: job $id $s: $(echo "$out" | head -1)"

# 4. badenv: a bad value of an option's environment twin.
id=$(as "$U1" sbatch --parsable -N1 -o "$BASE/$U1/badenv.out" \
	--export=ALL,TOPOML_NCCL=maybe --wrap 'echo RAN') ||
	fail "badenv: sbatch"
s=$(wait_end "$id" 60) || fail "badenv: job $id still $s"
out=$(cat "$BASE/$U1/badenv.out" 2>/dev/null)
[ "$s" = FAILED ] || fail "badenv: job $id ended $s: $out"
echo "$out" | grep -q "topoml: TOPOML_NCCL: invalid value 'maybe'" ||
	fail "badenv: no reason in the job's output: '$out'"
no_drain badenv
echo "badenv: job $id $s: $(echo "$out" | head -1)"
# The same through srun inside a good allocation: that step fails alone.
out=$(as "$U1" env TOPOML_NCCL=maybe srun -N1 true 2>&1) &&
	fail "badenv: srun accepted TOPOML_NCCL=maybe"
no_drain badenv-srun

# 5. squat: the victim's page directory and page are out of reach.
id=$(as "$U1" sbatch --parsable -N1 -o "$BASE/$U1/squat.out" \
	--ml-ckpt="$BASE/$U1/ck3,every=10" --wrap \
	'echo PAGE=$TOPOML_CKPT_PAGE; sleep 8') || fail "squat: sbatch"
for i in $(seq 1 60); do
	page=$(ls "$BASE/cache/ckpt/$UID1/job.$id".* 2>/dev/null | head -1)
	[ -n "$page" ] && break
	sleep 0.5
done
[ -n "$page" ] || fail "squat: no page for job $id"
[ "$(stat -c %u:%a "$BASE/cache/ckpt/$UID1")" = "$UID1:700" ] ||
	fail "squat: page directory is $(stat -c %u:%a "$BASE/cache/ckpt/$UID1")"
[ "$(stat -c %u:%a "$BASE/cache/ckpt")" = "0:755" ] ||
	fail "squat: $BASE/cache/ckpt is not root's"
as "$U2" sh -c "cat '$page'" >/dev/null 2>&1 &&
	fail "squat: $U2 read $U1's page"
as "$U2" sh -c "echo x >'$page'" 2>/dev/null &&
	fail "squat: $U2 wrote $U1's page"
as "$U2" sh -c "touch '$BASE/cache/ckpt/$UID1/job.$((id + 1)).0.x.0'" \
	2>/dev/null && fail "squat: $U2 created a page for $U1"
as "$U2" sh -c "mkdir '$BASE/cache/ckpt/$(id -u "$U2")x'" 2>/dev/null &&
	fail "squat: $U2 created a directory in cache_dir"
s=$(wait_end "$id" 60) || fail "squat: job $id still $s"
[ "$s" = COMPLETED ] || fail "squat: job $id ended $s"
grep -q "PAGE=$page" "$BASE/$U1/squat.out" ||
	fail "squat: the job had another page: $(cat "$BASE/$U1/squat.out")"
echo "squat: $U2 cannot touch $U1's page $page"

# 6. env: %u and the restart count come from Slurm.
id=$(as "$U1" sbatch --parsable -N1 -o "$BASE/$U1/env.out" \
	--export=ALL,SLURM_JOB_USER=../evil,SLURM_RESTART_COUNT=7 \
	--ml-ckpt="$BASE/$U1/%u/ck,every=10" --wrap \
	'echo DIR=$TOPOML_CKPT_DIR R=$TOPOML_RESTART_COUNT
	 SLURM_RESTART_COUNT=5 srun -n1 sh -c "echo STEP=\$TOPOML_RESTART_COUNT"') ||
	fail "env: sbatch"
s=$(wait_end "$id" 60) || fail "env: job $id still $s"
out=$(cat "$BASE/$U1/env.out")
[ "$s" = COMPLETED ] || fail "env: job $id ended $s: $out"
echo "$out" | grep -qx "DIR=$BASE/$U1/$U1/ck R=0" ||
	fail "env: %u or restart count from the job's environment: $out"
echo "$out" | grep -qx "STEP=0" ||
	fail "env: the srun step took SLURM_RESTART_COUNT: $out"
[ ! -e "$BASE/evil" ] || fail "env: $BASE/evil created"
echo "env: $(echo "$out" | paste -sd' ')"

# Finally: no node drained, and root made nothing in the users' trees.
no_drain final
for u in "$U1" "$U2"; do
	bad=$(find "$BASE/$u" ! -user "$u" | head -3)
	[ -z "$bad" ] || fail "files under $BASE/$u not $u's: $bad"
done
echo "PASS: hostile inputs fail only their jobs"
