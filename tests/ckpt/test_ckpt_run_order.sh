#!/bin/bash
# topoml-run takes the ring order from select/topoml's part of the job's
# SystemComment only (issue 28 defect 7), on a real local cluster with
# select/topoml: a job of an unprivileged user whose name and comment
# say order= (the reverse of the real ring) launches its step on the
# workers in the SystemComment's order.  `scontrol show job -o` holds
# the name, the comment, the command and the working directory on the
# same line: a grep over it took the user's order=.
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
TOP_SRCDIR=${TOP_SRCDIR:-$(cd "$TESTS_DIR/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
[ -f "$TOP_BUILDDIR/select_plugin/.libs/select_topoml.so" ] ||
	{ echo "SKIP: select/topoml not built (no Slurm source)"; exit 77; }
U=topomlorder

work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-run-order.XXXXXX")
chmod 755 "$work"
printf '%s\n' 'SwitchName=r0 Nodes=n[1-2]' 'SwitchName=r1 Nodes=n[3-4]' \
	'SwitchName=top Switches=r[0-1]' >"$work/net.conf"
printf 'TopologyFile=%s\n' "$work/net.conf" >"$work/topoml.conf"
CLUSTER_SLURMD=4 CLUSTER_CLOUD=0 CLUSTER_SELECT=topoml \
	CLUSTER_TOPOML_CONF=$work/topoml.conf \
	cluster_start run-order || exit $?
trap 'cluster_stop; rm -rf "$work"' EXIT
cluster_user "$U"
fail() { cluster_fail "$*"; }

mkdir -p "$work/u"
cp "$TOP_SRCDIR/contrib/topoml-run" "$work/"
chmod 755 "$work/topoml-run"
# The batch script waits for the test's go, then runs topoml-run.
cat >"$work/u/job.sh" <<EOF
#!/bin/bash
for _ in \$(seq 1 300); do [ -e "$work/u/go" ] && break; sleep 0.1; done
exec "$work/topoml-run" -- true
EOF
chmod 755 "$work/u/job.sh"
chown -R "$U" "$work/u"
as_user() {
	su -s /bin/bash "$U" -c "cd $work/u && SLURM_CONF=$SLURM_CONF $*"
}
id=$(as_user sbatch --parsable -N4 -o out "'--job-name=order=n4,n3,n2,n1'" \
	"'--comment=order=n4,n3,n2,n1'" job.sh) || fail "sbatch"
cluster_job_wait_start "$id" >/dev/null || fail "job $id did not start"
c=$(cluster_job_comment "$id")
case "$c" in
"topoml: placed=topoml "*" order="*) ;;
*) fail "SystemComment '$c'" ;;
esac
ring=$(scontrol show hostnames "$(sed 's/.* order=\([^ ]*\).*/\1/' <<<"$c")" |
	paste -sd,)
# The user's order=: the reverse of the real ring, in the job's name and
# comment (the user may change both while the job runs).
rev=$(tr , '\n' <<<"$ring" | tac | paste -sd,)
as_user scontrol update jobid="$id" "'name=x order=$rev'" \
	"'comment=order=$rev'" || fail "scontrol update name, comment"
scontrol show job -o "$id" | grep -q "JobName=x order=$rev " ||
	fail "name not updated: $(scontrol show job -o "$id")"
touch "$work/u/go"
cluster_job_wait_end "$id" 30 >/dev/null || fail "job $id did not end"
out=$(cat "$work/u/out")
got=$(sed -n 's/^topoml-run: step on 4 workers (\([^)]*\)).*/\1/p' <<<"$out")
[ "$got" = "$ring" ] ||
	fail "workers '$got', SystemComment's ring $ring (user's order=$rev):" \
		"$out"
echo "PASS: topoml-run used order=$ring of the SystemComment, not the" \
	"name's and comment's order=$rev"
