#!/bin/bash
# Node health (issue 32): a straggler a job names in its checkpoint
# directory reaches select/topoml and the next job's placement, on one
# real cluster (4 slurmd, select/topoml, topoml.so), every job submitted
# by an unprivileged user:
#   record   user A's job names n1 (its own) and n4 (not its own) in
#            DIR/health.jsonl, with garbage lines: AdminComment gets
#            "topoml-health: straggler=n1" (root's, at the step's end),
#            select/topoml takes it at job end and SystemComment shows
#            the action; n4 and the garbage are logged and ignored; A
#            cannot write AdminComment itself
#   avoid    HealthPolicy=avoid: a 3-node job with all 4 free does not
#            get n1; a 4-node job still does
#   forged   a garbage-only file, a file over 64 KiB, a symlink to user
#            B's file: nothing recorded, each logged
#   avoid2   B reports n1 too: avoided, never drained under avoid
#   report   HealthPolicy=report: the 3-node job gets n1 again
#   drain    HealthPolicy=drain: A reporting n3 twice does not drain it;
#            B reporting it too drains it
#   srun     a job without a batch script: the step's first node reads
#   restart  slurmctld restarted: the records are kept (still avoided)
#   cli      topoml health (text and --json) shows who saw what and what
#            was done; the records are SlurmUser's alone (0600)
#   preflight  HealthPolicy=drain: A's --ml-preflight step on n4, whose
#            fake NVML (n4's slurmd in a mount namespace of its own) has
#            uncorrectable ECC errors, drains n4 on root's finding alone,
#            the reason naming the check; topoml health shows it as
#            root-side; A's health.jsonl cannot carry such a finding
#            (one user's straggler report alone never drains: drain)
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
sel_require_tools
cluster_need_root
fake=$TOP_BUILDDIR/tests/spank/fakenvml.so
cluster_need_files "$TOP_BUILDDIR/spank/.libs/topoml.so" \
	"$TOP_BUILDDIR/contrib/topoml" "$fake"
unshare -m --propagation private true 2>/dev/null ||
	{ echo "SKIP: no mount namespaces (unshare -m)"; exit 77; }
t0=$(date +%s)

UA=topomlha
UB=topomlhb
cluster_tmpdir BASE health
printf 'SwitchName=s0 Nodes=n[1-4]\n' >"$BASE/net.conf"
# conf POLICY: topoml.conf (the cluster's copy once it runs)
conf() {
	printf 'TopologyFile=%s\nHealthPolicy=%s\nHealthAvoidTime=600\n' \
		"$BASE/net.conf" "$1" >"${CLUSTER_DIR:-$BASE}/topoml.conf"
}
conf avoid
# The nodes' GPUs and HCAs for --ml-preflight (preflight section): a fake
# NVML with no faults, the fixture's sysfs; n4 gets its own copy later.
FIX=$TESTS_DIR/fixtures/spank
SYS=$BASE/sys
mkdir -p "$SYS"
cp -r "$FIX/sysfs/." "$SYS/"
for p in "$SYS"/class/infiniband/*/ports/*; do
	echo "200 Gb/sec (4X HDR)" >"$p/rate"
done
: >"$SYS/nvml-faults"
export FAKE_NVML=nvswitch8 FAKE_NVML_FAULTS_FILE=$SYS/nvml-faults
unset FAKE_NVML_BUSIDS FAKE_NVML_FAULTS
CLUSTER_SLURMD=4
CLUSTER_CLOUD=0 CLUSTER_SELECT=topoml \
	CLUSTER_TOPOML_CONF=$BASE/topoml.conf CLUSTER_SPANK=1 \
	CLUSTER_SPANK_ARGS="cache_dir=$BASE/cache \
hwloc_xml=$FIX/hwloc/synth-2s4g2n.xml sysfs_root=$SYS nvml_lib=$fake" \
	CLUSTER_CONF_EXTRA="MinJobAge=600" \
	cluster_start sel-health || exit $?
cluster_user "$UA"
cluster_user "$UB"
for u in "$UA" "$UB"; do
	mkdir -p "$BASE/$u"
	chown "$u" "$BASE/$u"
done
state=$CLUSTER_DIR/state/topoml_health.state
fail() { cluster_fail "$*"; }
logs() { cat "$CLUSTER_DIR"/log/slurmd-*.log; }
admin_comment() {
	scontrol show job "$1" | sed -n 's/^ *AdminComment=\(.*[^ ]\) *$/\1/p'
}
# recorded JOB: a topoml-health part in its AdminComment or SystemComment
recorded() {
	scontrol show job "$1" | grep -q 'topoml-health: '
}

# job USER NAME SBATCH-ARGS... <<<BODY: USER's batch job with --ml-ckpt
# running BODY ($D: its checkpoint directory); waits for its end, prints
# its id.
job() {
	local u=$1 name=$2 id s
	shift 2
	{ echo '#!/bin/sh'; echo 'D=$TOPOML_CKPT_DIR'; cat; } \
		>"$BASE/$u/$name.sh"
	chown "$u" "$BASE/$u/$name.sh"
	id=$(cd "$BASE/$u" && cluster_as "$u" sbatch --parsable \
		-o "$BASE/$u/$name.out" --ml-ckpt="$BASE/$u/ck" "$@" \
		"$BASE/$u/$name.sh") || fail "$name: sbatch"
	s=$(cluster_job_wait_end "$id" 60) || fail "$name: job $id still $s"
	[ "$s" = COMPLETED ] ||
		fail "$name: job $id $s: $(cat "$BASE/$u/$name.out")"
	echo "$id"
}

# nodes_of USER ARGS...: where a sleeping job of USER lands (cancelled).
nodes_of() {
	local u=$1 id nl
	shift
	id=$(cluster_as "$u" sbatch --parsable -o /dev/null "$@" \
		--wrap 'sleep 1000') || fail "sbatch $*"
	nl=$(cluster_job_wait_start "$id") || fail "job $id did not start"
	scancel "$id"
	cluster_job_wait_end "$id" 30 >/dev/null
	scontrol show hostnames "$nl" | paste -sd,
}

has() { case ",$1," in *",$2,"*) return 0 ;; esac; return 1; }

# ---- record
id=$(job "$UA" rec -N2 -w 'n[1-2]' <<'EOF2'
printf '{"event": "straggler", "node": "n1", "ratio": 1.5}\n' >>$D/health.jsonl
printf '{"event": "straggler", "node": "n4"}\n' >>$D/health.jsonl
printf 'garbage\n{"event": "straggler", "node": "../x"}\n' >>$D/health.jsonl
EOF2
)
# root's record, as slurmctld got it (before the job ended), then taken
# out of AdminComment by select/topoml at the job's end
grep -q "setting admin_comment to topoml-health: straggler=n1 for JobId=$id\$" \
	"$CLUSTER_DIR/log/slurmctld.log" ||
	fail "record: no AdminComment from root: $(grep admin_comment \
		"$CLUSTER_DIR/log/slurmctld.log")"
ac=$(admin_comment "$id")
[ -z "$ac" ] || fail "record: AdminComment left '$ac'"
sc=$(cluster_job_comment "$id")
case "$sc" in
*"topoml-health: straggler=n1 policy=avoid action=avoid"*) ;;
*) fail "record: SystemComment '$sc'" ;;
esac
logs | grep -q "job $id: node n4 is not the job's, ignored" ||
	fail "record: n4 not refused in the log"
logs | grep -q "job $id: .*health.jsonl: 2 bad lines ignored" ||
	fail "record: garbage not reported in the log"
grep -q '^node=n1 action=avoid' "$state" || fail "record: state: $(cat "$state")"
grep -q 'node=n4' "$state" && fail "record: n4 recorded"
# A user cannot forge the root-side record.
cluster_as "$UA" scontrol update jobid="$id" \
	AdminComment="topoml-health: straggler=n2" 2>/dev/null &&
	fail "record: $UA set AdminComment"
id2=$(cluster_as "$UA" sbatch --parsable -o /dev/null --hold --wrap true)
cluster_as "$UA" scontrol update jobid="$id2" \
	AdminComment="topoml-health: straggler=n2" 2>/dev/null &&
	fail "record: $UA set a pending job's AdminComment"
scancel "$id2"
echo "ok: record: job $id: $sc"

# ---- avoid
nl=$(nodes_of "$UB" -N3)
has "$nl" n1 && fail "avoid: 3 nodes with 4 free got n1: $nl"
nl4=$(nodes_of "$UB" -N4)
has "$nl4" n1 || fail "avoid: 4 nodes did not get n1: $nl4"
echo "ok: avoid: -N3 got $nl, -N4 got $nl4"

# ---- forged
id=$(job "$UA" garbage -N1 -w n2 <<'EOF2'
printf 'not json\n{"event": 3}\n{"node": "n2"}\n' >$D/health.jsonl
EOF2
)
recorded "$id" && fail "garbage: recorded: $(scontrol show job "$id")"
logs | grep -q "job $id: .*3 bad lines ignored" || fail "garbage: no message"
id=$(job "$UA" huge -N1 -w n2 <<'EOF2'
i=0
while [ $i -lt 2000 ]; do
	printf '{"event": "straggler", "node": "n2", "pad": "%s"}\n' \
		xxxxxxxxxxxxxxxxxxxx
	i=$((i + 1))
done >$D/health.jsonl
EOF2
)
recorded "$id" && fail "huge: recorded: $(scontrol show job "$id")"
logs | grep -q "job $id: .*ignored: over 65536 bytes" || fail "huge: no message"
printf '{"event": "straggler", "node": "n2"}\n' >"$BASE/$UB/h.jsonl"
chown "$UB" "$BASE/$UB/h.jsonl"
id=$(job "$UA" symlink -N1 -w n2 <<EOF2
ln -s $BASE/$UB/h.jsonl \$D/health.jsonl
EOF2
)
recorded "$id" && fail "symlink: recorded: $(scontrol show job "$id")"
logs | grep -q "job $id: .*ignored: a symlink" || fail "symlink: no message"
grep -q 'node=n2' "$state" && fail "forged: n2 recorded: $(cat "$state")"
cluster_no_drain forged
echo "ok: forged: garbage, over 64 KiB, symlink: nothing recorded"

# ---- avoid2: a second user under avoid: still no drain
id=$(job "$UB" rec2 -N1 -w n1 <<'EOF2'
printf '{"event": "straggler", "node": "n1"}\n' >>$D/health.jsonl
EOF2
)
case "$(cluster_job_comment "$id")" in
*"straggler=n1 policy=avoid action=avoid"*) ;;
*) fail "avoid2: SystemComment '$(cluster_job_comment "$id")'" ;;
esac
cluster_no_drain avoid2
echo "ok: avoid2: two users, policy avoid: not drained"

# ---- report
conf report
scontrol reconfigure || fail "reconfigure"
sleep 1
nl=$(nodes_of "$UB" -N3)
has "$nl" n1 || fail "report: 3 nodes with 4 free did not get n1: $nl"
echo "ok: report: -N3 got $nl"

# ---- srun: a job without a batch script (the step's first node reads)
out=$(cd "$BASE/$UB" && cluster_as "$UB" srun -N2 -w 'n[2-3]' \
	--ml-ckpt="$BASE/$UB/ck" sh -c '[ "$SLURM_NODEID" != 0 ] ||
	printf "{\"event\": \"straggler\", \"node\": \"n2\"}\n" \
	>>$TOPOML_CKPT_DIR/health.jsonl; echo $SLURM_JOB_ID' 2>&1) ||
	fail "srun: $out"
id=$(grep -m1 -x "[0-9][0-9]*" <<<"$out")
case "$(cluster_job_comment "$id")" in
*"straggler=n2 policy=report action=none"*) ;;
*) fail "srun: job $id: $(cluster_job_comment "$id") ($out)" ;;
esac
grep -q '^node=n2 action=none at=[0-9]* until=0 ' "$state" ||
	fail "srun: state: $(cat "$state")"
echo "ok: srun: job $id recorded n2, report only"

# ---- drain
conf drain
scontrol reconfigure || fail "reconfigure"
sleep 1
for k in 1 2; do
	id=$(job "$UA" d$k -N1 -w n3 <<'EOF2'
printf '{"event": "straggler", "node": "n3"}\n' >>$D/health.jsonl
EOF2
)
	case "$(cluster_job_comment "$id")" in
	*"straggler=n3 policy=drain action=avoid"*) ;;
	*) fail "drain: $UA's report $k: $(cluster_job_comment "$id")" ;;
	esac
	cluster_no_drain "drain: $UA's report $k"
done
id=$(job "$UB" d3 -N1 -w n3 <<'EOF2'
printf '{"event": "straggler", "node": "n3"}\n' >>$D/health.jsonl
EOF2
)
case "$(cluster_job_comment "$id")" in
*"straggler=n3 policy=drain action=drain"*) ;;
*) fail "drain: $UB's report: $(cluster_job_comment "$id")" ;;
esac
st=$(sinfo -h -n n3 -o '%t %E')
case "$st" in
drain*"topoml: straggler"*) ;;
*) fail "drain: n3 is '$st'" ;;
esac
bad=$(sinfo -h -N -o '%N %t' | awk '$1 != "n3" && $2 ~ /drain|drng|down/')
[ -z "$bad" ] || fail "drain: others drained: $bad"
echo "ok: drain: $UA twice: not drained; $UB too: $st"

# ---- restart: the table is slurmctld's state (n1 and n3 avoided)
[ "$(stat -c %a "$state")" = 600 ] ||
	fail "state file mode $(stat -c %a "$state")"
cluster_as "$UA" "$TOP_BUILDDIR/contrib/topoml" health --state "$state" \
	>/dev/null 2>&1 && fail "$UA read the health records"
scontrol update nodename=n3 state=resume
cluster_restart_ctld
cluster_wait_idle
nl=$(nodes_of "$UB" -N2)
[ "$nl" = n2,n4 ] || fail "restart: -N2 got $nl, want n2,n4"
echo "ok: restart: the records kept, -N2 got $nl"

# ---- cli
out=$("$TOP_BUILDDIR/contrib/topoml" health --slurm-conf "$SLURM_CONF") ||
	fail "cli: topoml health: $out"
echo "$out"
grep -q "^n1: action=avoid" <<<"$out" || fail "cli: n1"
grep -q "^n3: action=drain" <<<"$out" || fail "cli: n3"
[ "$(grep -c "reported by job .* of $UA(" <<<"$out")" = 3 ] ||
	fail "cli: want 3 of $UA's jobs"
[ "$(grep -c "reported by job .* of $UB(" <<<"$out")" = 3 ] ||
	fail "cli: want 3 of $UB's jobs"
"$TOP_BUILDDIR/contrib/topoml" health --state "$state" --node n3 --json |
	python3 -c '
import json, sys
d = json.load(sys.stdin)
n = d["nodes"]
assert len(n) == 1 and n[0]["node"] == "n3", n
assert n[0]["action"] == "drain" and len(n[0]["seen"]) == 3, n
assert len({s["uid"] for s in n[0]["seen"]}) == 2, n
' || fail "cli: --json"
# ---- preflight: root's node-wide finding drains on its own
t1=$(date +%s)
# A's report cannot carry one: not a straggler event, not a node name.
before=$(cat "$state")
id=$(job "$UA" forgepf -N1 -w n2 <<'EOF2'
printf '{"event": "preflight", "node": "n2", "check": "ecc"}\n' >$D/health.jsonl
printf '{"event": "straggler", "node": "n2 preflight=n2:ecc"}\n' >>$D/health.jsonl
printf '{"event": "straggler", "node": "n2:ecc"}\n' >>$D/health.jsonl
EOF2
)
recorded "$id" && fail "forgepf: recorded: $(scontrol show job "$id")"
[ "$(cat "$state")" = "$before" ] || fail "forgepf: recorded: $(cat "$state")"
logs | grep -q "job $id: .*health.jsonl: 2 bad lines ignored" ||
	fail "forgepf: the bad names not reported in the log"
# n4's slurmd again, seeing its own tree at $SYS: ECC errors on GPU 1.
mkdir -p "$BASE/sys-n4"
cp -r "$SYS/." "$BASE/sys-n4/"
echo "ecc=1:3" >"$BASE/sys-n4/nvml-faults"
cluster_slurmd_stop n4
unshare -m --propagation private sh -c \
	'mount --bind "$1" "$2" && exec slurmd -N n4 -f "$SLURM_CONF"' \
	sh "$BASE/sys-n4" "$SYS" >>"$CLUSTER_DIR/log/slurmd.out" 2>&1 ||
	fail "slurmd n4 in its own mount namespace"
cluster_wait_idle
out=$(cd "$BASE/$UA" && cluster_as "$UA" timeout 60 srun -N1 -w n4 \
	--ml-preflight sh -c 'echo ran $SLURM_JOB_ID' 2>&1) &&
	fail "preflight: the step on n4 passed: $out"
grep -q "^topoml: --ml-preflight: node n4: .*uncorrectable ECC" <<<"$out" ||
	fail "preflight: $out"
grep -q "^ran " <<<"$out" && fail "preflight: a task ran: $out"
for _ in $(seq 1 50); do
	st=$(sinfo -h -n n4 -o '%t %E')
	case "$st" in drain*) break ;; esac
	sleep 0.2
done
case "$st" in
drain*"topoml: preflight: root-side preflight: ecc"*) ;;
*) fail "preflight: n4 is '$st': $(grep -h 'health' \
	"$CLUSTER_DIR/log/slurmctld.log" | tail -5)" ;;
esac
grep -q '^node=n4 action=drain .* pf=[0-9]*/[0-9]*/ecc why=' "$state" ||
	fail "preflight: state: $(cat "$state")"
bad=$(sinfo -h -N -o '%N %t' | awk '$1 != "n4" && $2 ~ /drain|drng|down/')
[ -z "$bad" ] || fail "preflight: others drained: $bad"
out=$("$TOP_BUILDDIR/contrib/topoml" health --state "$state" --node n4) ||
	fail "preflight: topoml health: $out"
grep -q "^  root-side preflight failed (ecc) in job [0-9]* at " <<<"$out" ||
	fail "preflight: topoml health: $out"
"$TOP_BUILDDIR/contrib/topoml" health --state "$state" --node n4 --json |
	python3 -c '
import json, sys
n = json.load(sys.stdin)["nodes"][0]
assert n["action"] == "drain" and n["root_side"]["checks"] == "ecc", n
assert n["seen"] == [], n
' || fail "preflight: --json"
echo "ok: preflight: one job's root-side ECC finding drained n4: $st" \
	"($(($(date +%s) - t1)) s)"

cluster_stop
echo "PASS: straggler reports reach placement: avoided, drained only when" \
	"two users agree or root's preflight finds a fault, forged reports" \
	"ignored ($(($(date +%s) - t0)) s)"
