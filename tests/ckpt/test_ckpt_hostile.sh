#!/bin/bash
# What an unprivileged user can send to the root side of --ml-ckpt, on a
# real local cluster (issue: hardening), each case as that user:
#   fifo       DIR/epoch replaced by a FIFO: the job still ends on time
#   symlink    DIR/epoch a symlink to a root-only file: its content never
#              reaches the job, the file is unchanged
#   baddir     TOPOML_CKPT naming an unwritable DIR through --export (past
#              sbatch's check): the job fails with the reason in its
#              output, nothing is created there
#   badenv     TOPOML_GPU_BIND=fast through --export: the same; srun
#              with TOPOML_NCCL=maybe, --ml-ckpt on an unwritable DIR,
#              --ml-parallel=tp=3 on 4 tasks: srun or the step fails,
#              the reason once in its output (a path both nodes of a
#              step refuse: once per node, named); these under
#              plugstack.conf's keyword required and optional both
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
cluster_need_root
so=$TOP_BUILDDIR/spank/.libs/topoml.so
cluster_need_files "$so"

U1=topomlh1
U2=topomlh2
cluster_tmpdir BASE hostile
CLUSTER_SLURMD=3
CLUSTER_SPANK=1
CLUSTER_SPANK_ARGS="cache_dir=$BASE/cache"
# Keep finished jobs visible long enough to read their state.
CLUSTER_CONF_EXTRA="MinJobAge=600"
cluster_start hostile
cluster_user "$U1"
cluster_user "$U2"
UID1=$(id -u "$U1")
for u in "$U1" "$U2"; do
	mkdir -p "$BASE/$u"
	chown "$u" "$BASE/$u"
done

fail() { cluster_fail "$*"; }

# as USER CMD...: run a client command as USER in USER's directory.
as() { (cd "$BASE/$1" && cluster_as "$@"); }

# 1. fifo: the timer thread reads DIR/epoch every 2 s as root's thread.
id=$(as "$U1" sbatch --parsable -N1 -o "$BASE/$U1/fifo.out" \
	--ml-ckpt="$BASE/$U1/ck,every=10" --wrap \
	'd=$TOPOML_CKPT_DIR; rm -f $d/epoch; mkfifo $d/epoch; sleep 5') ||
	fail "fifo: sbatch"
s=$(cluster_job_wait_end "$id" 60) || fail "fifo: job $id still $s after 60 s"
[ "$s" = COMPLETED ] || fail "fifo: job $id ended $s: $(cat "$BASE/$U1/fifo.out")"
cluster_no_drain fifo
echo "fifo: job $id $s"

# 2. symlink to a root-only file holding a number.
printf '424242\n' >"$BASE/secret"
chmod 600 "$BASE/secret"
sum=$(md5sum <"$BASE/secret")
id=$(as "$U1" sbatch --parsable -N1 -o "$BASE/$U1/symlink.out" \
	--ml-ckpt="$BASE/$U1/ck2,every=10" --wrap \
	"ln -sf $BASE/secret \$TOPOML_CKPT_DIR/epoch; sleep 6; echo done") ||
	fail "symlink: sbatch"
s=$(cluster_job_wait_end "$id" 60) || fail "symlink: job $id still $s"
out=$(cat "$BASE/$U1/symlink.out")
[ "$s" = COMPLETED ] || fail "symlink: job $id ended $s: $out"
case "$out" in *424242* | *stale*) fail "symlink: root read it: $out" ;; esac
grep -q "runs again elsewhere" "$CLUSTER_DIR"/log/slurmd-*.log &&
	fail "symlink: the timer believed the symlink's content"
[ "$(md5sum <"$BASE/secret")" = "$sum" ] || fail "symlink: secret changed"
[ "$(stat -c %u:%a "$BASE/secret")" = "0:600" ] ||
	fail "symlink: secret's owner or mode changed"
cluster_no_drain symlink
echo "symlink: job $id $s, nothing leaked"

# once OUT TEXT: TEXT is the one line of OUT that names topoml, and no
# line is Slurm's about its plugin stack (the reason once, no noise).
once() {
	local n
	n=$(grep -c 'topoml:' <<<"$1")
	[ "$n" = 1 ] && grep -qF -- "$2" <<<"$1" ||
		fail "$kw: want '$2' once, got $n line(s): '$1'"
	case "$1" in *spank* | *"plugin stack"*) fail "$kw: noise: '$1'" ;; esac
}

# 3-4. Every refusal fails the job or the step whatever plugstack.conf's
# keyword: under `optional` slurmstepd ignores a task_init error and
# srun/sbatch an init_post_opt error (issue 29 item 4).  slurmstepd,
# srun and sbatch read plugstack.conf at every start.
mkdir -p "$BASE/rootonly"
chmod 755 "$BASE/rootonly"
plugstack=$(sed -n 's/^PlugStackConfig=//p' "$SLURM_CONF")
for kw in required optional; do
	sed -i "s/^[a-z]* \(.*topoml.so\)/$kw \1/" "$plugstack"
	grep -q "^$kw .*topoml.so" "$plugstack" || fail "$kw: $plugstack"

	# baddir: past sbatch's own check through --export.
	id=$(as "$U1" sbatch --parsable -N1 -o "$BASE/$U1/baddir.out" \
		--export=ALL,TOPOML_CKPT="$BASE/rootonly/x" \
		--wrap 'echo RAN') ||
		fail "$kw baddir: sbatch"
	s=$(cluster_job_wait_end "$id" 60) ||
		fail "$kw baddir: job $id still $s"
	out=$(cat "$BASE/$U1/baddir.out" 2>/dev/null)
	[ "$s" = FAILED ] || fail "$kw baddir: job $id ended $s: $out"
	once "$out" "topoml: --ml-ckpt: cannot use $BASE/rootonly/x/$id"
	case "$out" in *RAN*) fail "$kw baddir: the script ran" ;; esac
	[ -z "$(ls -A "$BASE/rootonly")" ] ||
		fail "$kw baddir: created in rootonly"
	cluster_no_drain "$kw baddir"
	echo "$kw baddir: job $id $s: $out"

	# badenv: a bad value of an option's environment twin.
	id=$(as "$U1" sbatch --parsable -N1 -o "$BASE/$U1/badenv.out" \
		--export=ALL,TOPOML_GPU_BIND=fast --wrap 'echo RAN') ||
		fail "$kw badenv: sbatch"
	s=$(cluster_job_wait_end "$id" 60) ||
		fail "$kw badenv: job $id still $s"
	out=$(cat "$BASE/$U1/badenv.out" 2>/dev/null)
	[ "$s" = FAILED ] || fail "$kw badenv: job $id ended $s: $out"
	once "$out" "topoml: TOPOML_GPU_BIND: invalid value 'fast'"
	case "$out" in *RAN*) fail "$kw badenv: the script ran" ;; esac
	cluster_no_drain "$kw badenv"
	echo "$kw badenv: job $id $s: $out"
	# The same through srun (its own check), and a step inside a good
	# allocation: that step fails alone.
	out=$(as "$U1" env TOPOML_NCCL=maybe srun -N1 echo RAN 2>&1) &&
		fail "$kw badenv: srun accepted TOPOML_NCCL=maybe: $out"
	once "$out" "topoml: TOPOML_NCCL: invalid value 'maybe'"
	case "$out" in *RAN*) fail "$kw badenv: srun ran" ;; esac
	out=$(as "$U1" salloc -Q -N1 sh -c "TOPOML_NCCL=maybe srun echo RAN; \
echo step=\$?; srun echo OK" 2>&1)
	case "$out" in *RAN* | *step=0*) fail "$kw badenv step: '$out'" ;; esac
	grep -qx OK <<<"$out" || fail "$kw badenv step: next step: '$out'"
	cluster_no_drain "$kw badenv-srun"

	# Past srun's check (the job's environment only): a path each node
	# refuses by itself, so each says it, the second with its name.
	out=$(as "$U1" srun -N2 --export=ALL,TOPOML_CKPT="$BASE/rootonly/z" \
		echo RAN 2>&1) && fail "$kw 2 nodes baddir: srun ran: $out"
	[ "$(grep -c 'topoml:' <<<"$out")" = 2 ] &&
		grep -q "^topoml: --ml-ckpt: cannot use $BASE/rootonly/z/" \
			<<<"$out" &&
		grep -q "^topoml: node n[0-9]: --ml-ckpt: cannot use \
$BASE/rootonly/z/" <<<"$out" || fail "$kw 2 nodes baddir: '$out'"
	case "$out" in *RAN*) fail "$kw 2 nodes baddir: a task ran" ;; esac

	# An unwritable DIR on srun's command line: refused before launch.
	out=$(as "$U1" srun -N1 --ml-ckpt="$BASE/rootonly/y" echo RAN 2>&1) &&
		fail "$kw srun baddir: srun ran: $out"
	once "$out" "topoml: --ml-ckpt: $BASE/rootonly/y: cannot create"
	case "$out" in *RAN*) fail "$kw srun baddir: the task ran" ;; esac

	# --ml-parallel sizes that do not divide the step's tasks: refused
	# in the tasks of 2 nodes, printed once, never run without RANK.
	out=$(as "$U1" srun -N2 -n4 --ml-parallel=tp=3 \
		sh -c 'echo RAN RANK=$RANK' 2>&1) &&
		fail "$kw parallel: tp=3 on 4 tasks ran: $out"
	once "$out" "topoml: --ml-parallel=tp=3:"
	case "$out" in *RAN*) fail "$kw parallel: a task ran: $out" ;; esac
	cluster_no_drain "$kw parallel"
	echo "$kw: srun refusals: $(grep topoml <<<"$out")"
done
kw=required
sed -i "s/^[a-z]* \(.*topoml.so\)/$kw \1/" "$plugstack"

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
s=$(cluster_job_wait_end "$id" 60) || fail "squat: job $id still $s"
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
s=$(cluster_job_wait_end "$id" 60) || fail "env: job $id still $s"
out=$(cat "$BASE/$U1/env.out")
[ "$s" = COMPLETED ] || fail "env: job $id ended $s: $out"
echo "$out" | grep -qx "DIR=$BASE/$U1/$U1/ck R=0" ||
	fail "env: %u or restart count from the job's environment: $out"
echo "$out" | grep -qx "STEP=0" ||
	fail "env: the srun step took SLURM_RESTART_COUNT: $out"
[ ! -e "$BASE/evil" ] || fail "env: $BASE/evil created"
echo "env: $(echo "$out" | paste -sd' ')"

# Finally: no node drained, and root made nothing in the users' trees.
cluster_no_drain final
for u in "$U1" "$U2"; do
	bad=$(find "$BASE/$u" ! -user "$u" | head -3)
	[ -z "$bad" ] || fail "files under $BASE/$u not $u's: $bad"
done
echo "PASS: hostile inputs fail only their jobs"
