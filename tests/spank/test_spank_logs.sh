#!/bin/bash
# What a job can write into the daemons' logs (issue 28, defects 5 and 6),
# as an unprivileged user the test creates, on 2 slurmd with topoml.so and
# select/topoml:
#   env      a bad TOPOML_GPU_BIND through sbatch --export (past sbatch's
#            check), read by slurmstepd
#   option   a bad --ml-nccl value under the name Slurm gives the option
#            in the job's environment, past sbatch's check
#   spares   TOPOML_SPARE_NODES of a step refused on a spare
#   comm     a forged --ml-comm in the SPANK environment of 70 pending
#            jobs (the user's own SPANK plugin in sbatch), read by
#            slurmctld
# each value with a newline, a fake "slurmd: error:" line and an ESC
# sequence.  No forged line starts a line of slurmd's or slurmctld's log
# or of the job's output, no ESC byte is there, the escaped form is; and
# slurmctld's lines about the 70 jobs stay at 5 a minute (before, every
# job past the 64th was logged at every backfill pass, each second).
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
. "${TESTS_DIR:-$(dirname "$0")/..}/lib/cluster.sh"
cluster_need_root
so=$TOP_BUILDDIR/spank/.libs/topoml.so
sel=$TOP_BUILDDIR/select_plugin/.libs/select_topoml.so
forge=$TOP_BUILDDIR/tests/spank/forge_spank.so
cluster_need_files "$so" "$sel" "$forge"

U=topomllog1
NJOBS=70
cluster_tmpdir BASE logusers
printf 'SwitchName=s1 Nodes=n[1-2]\n' >"$BASE/net.conf"
printf 'TopologyFile=%s\n' "$BASE/net.conf" >"$BASE/topoml.conf"
chmod 644 "$BASE"/*.conf
CLUSTER_SLURMD=2
CLUSTER_SELECT=topoml
CLUSTER_TOPOML_CONF=$BASE/topoml.conf
CLUSTER_SPANK=1
CLUSTER_SPANK_ARGS="cache_dir=$BASE/cache"
CLUSTER_CONF_EXTRA="MinJobAge=600"
cluster_start logs || exit $?
cluster_user "$U"
mkdir -p "$BASE/$U"
chown "$U" "$BASE/$U"
LOGS=("$CLUSTER_DIR"/log/slurmd-*.log "$CLUSTER_DIR/log/slurmctld.log")

fail() { cluster_fail "$*"; }

# as CMD...: a client command as the user, in the user's directory.
as() {
	(cd "$BASE/$U" && runuser -u "$U" -- \
		env SLURM_CONF="${CONF:-$SLURM_CONF}" "$@")
}

# clean WHAT FILE...: no forged line at a line's start, no ESC byte.
clean() {
	local what=$1 f
	shift
	for f in "$@"; do
		LC_ALL=C grep -a -n '^slurm[a-z]*: error: FORGED' "$f" &&
			fail "$what: a forged line in $f"
		LC_ALL=C grep -a -q -P '\x1b' "$f" &&
			fail "$what: an ESC byte in $f: $(LC_ALL=C \
				grep -a -n -P '\x1b' "$f" | cat -v | head -3)"
	done
	return 0
}

# has WHAT TEXT FILE...: the escaped form is in one of the files.
has() {
	local what=$1 text=$2
	shift 2
	cat "$@" 2>/dev/null | grep -a -q -F -- "$text" ||
		fail "$what: no '$text' in $*: $(cat "$@" |
			grep -a FORGED | cat -v | head -5)"
}

# 1. env: a TOPOML_* twin past sbatch's check.
v=$'auto\nslurmd: error: FORGED-env \e[31mred\e[0m \xff'
id=$(as sbatch --parsable -N1 -o "$BASE/$U/env.out" \
	--export=ALL,TOPOML_GPU_BIND="$v" --wrap 'echo RAN') ||
	fail "env: sbatch"
s=$(cluster_job_wait_end "$id") || fail "env: job $id still $s"
[ "$s" = FAILED ] || fail "env: job $id ended $s: $(cat -v "$BASE/$U/env.out")"
esc='TOPOML_GPU_BIND: invalid value '\''auto\x0aslurmd: error: FORGED-env \x1b[31mred\x1b[0m \xff'\'
has env "$esc" "$CLUSTER_DIR"/log/slurmd-*.log
has env "topoml: $esc" "$BASE/$U/env.out"
clean env "${LOGS[@]}" "$BASE/$U/env.out"
cluster_no_drain env
echo "ok: env: job $id $s, escaped in slurmd's log and the job's output"

# 2. option: an --ml-nccl value as Slurm hands options to slurmstepd.
v=$'x\nslurmd: error: FORGED-opt \e]0;owned\a'
id=$(as sbatch --parsable -N1 -o "$BASE/$U/opt.out" \
	--export=ALL,_SLURM_SPANK_OPTION_topoml_ml_nccl="$v" \
	--wrap 'echo RAN') || fail "option: sbatch"
s=$(cluster_job_wait_end "$id") || fail "option: job $id still $s"
[ "$s" = FAILED ] || fail "option: job $id ended $s: $(cat -v "$BASE/$U/opt.out")"
esc='--ml-nccl: invalid value '\''x\x0aslurmd: error: FORGED-opt \x1b]0;owned\x07'\'
has option "$esc" "$CLUSTER_DIR"/log/slurmd-*.log
has option "$esc" "$BASE/$U/opt.out"
clean option "${LOGS[@]}" "$BASE/$U/opt.out"
cluster_no_drain option
echo "ok: option: job $id $s, escaped"

# 3. spares: a wired step on a node the job's TOPOML_SPARE_NODES names.
cat >"$BASE/$U/spares.sh" <<'EOF'
#!/bin/bash
export TOPOML_SPARE_NODES=$'n1,n2,x\nslurmd: error: FORGED-spares \e[2J'
srun -N1 -w n1 --ml-nccl=auto true
echo "SRUN=$?"
EOF
chown "$U" "$BASE/$U/spares.sh"
id=$(as sbatch --parsable -N2 --ml-spares=1 -o "$BASE/$U/spares.out" \
	spares.sh) || fail "spares: sbatch"
s=$(cluster_job_wait_end "$id") || fail "spares: job $id still $s"
grep -q '^SRUN=[1-9]' "$BASE/$U/spares.out" ||
	fail "spares: the step ran: $(cat -v "$BASE/$U/spares.out")"
esc='(TOPOML_SPARE_NODES=n1,n2,x\x0aslurmd: error: FORGED-spares \x1b[2J)'
has spares "$esc" "$CLUSTER_DIR"/log/slurmd-*.log
has spares "$esc" "$BASE/$U/spares.out"
clean spares "${LOGS[@]}" "$BASE/$U/spares.out"
cluster_no_drain spares
echo "ok: spares: job $id, escaped"

# 4. comm: the user's own SPANK plugin in sbatch (a slurm.conf copy of
# the user's) forges --ml-comm for NJOBS jobs that wait behind a job
# holding both nodes: backfill tests each of them every second.
cp "$forge" "$BASE/$U/forge.so"
echo "required $BASE/$U/forge.so" >"$BASE/$U/plugstack.conf"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$BASE/$U/plugstack.conf|" \
	"$SLURM_CONF" >"$BASE/$U/slurm.conf"
chown "$U" "$BASE/$U"/{forge.so,plugstack.conf,slurm.conf}
block=$(as sbatch --parsable -N2 -o /dev/null --wrap 'sleep 300') ||
	fail "comm: blocker"
for _ in $(seq 1 100); do
	[ "$(cluster_job_state "$block")" = RUNNING ] && break
	sleep 0.2
done
s=$(cluster_job_state "$block")
[ "$s" = RUNNING ] || fail "comm: blocker $s"
t0=$(date +%s)
v=$'x\nslurmctld: error: FORGED-comm \e[31m'
for i in $(seq 1 "$NJOBS"); do
	CONF=$BASE/$U/slurm.conf as env FORGE_ML_COMM="$v" \
		sbatch --parsable -N1 -o /dev/null --wrap true >/dev/null ||
		fail "comm: sbatch $i"
done
# Past the 64th job the old code logged every job at every pass.
sleep 15
n=$(grep -a -c 'unknown --ml-comm value' "$CLUSTER_DIR/log/slurmctld.log")
mins=$((($(date +%s) - t0) / 60 + 1))
echo "comm: $n lines in $(($(date +%s) - t0)) s for $NJOBS jobs"
[ "$n" -ge 1 ] || fail "comm: the forged --ml-comm never reached slurmctld"
[ "$n" -le $((5 * mins + 1)) ] ||
	fail "comm: $n lines about $NJOBS jobs in $mins minute(s): $(grep -a \
		'unknown --ml-comm' "$CLUSTER_DIR/log/slurmctld.log" | tail -3 |
		cat -v)"
has comm 'value '\''x\x0aslurmctld: error: FORGED-comm \x1b[31m'\' \
	"$CLUSTER_DIR/log/slurmctld.log"
clean comm "${LOGS[@]}"
scancel -u "$U"
cluster_no_drain comm
echo "ok: comm: $n lines, escaped"
echo "PASS: no forged log line, job-caused errors bounded"
