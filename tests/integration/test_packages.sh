#!/bin/bash
# The Debian packages, as a site installs them: dpkg-buildpackage on a
# copy of the source tree (one build), dpkg -i, then checks of what landed
# where and a job through the installed plugins on a local cluster (no
# build tree involved: PluginDir is Slurm's own, plugstack.conf includes
# the package's drop-in, the job imports the packaged Python module), then
# dpkg --purge.  Root only; TOPOML_DEBS=DIR uses .debs built before.
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
TOP_SRCDIR=${TOP_SRCDIR:-$(cd "$TESTS_DIR/.." && pwd)}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (dpkg -i)"; exit 77; }
for t in dpkg-buildpackage dh dh_python3 slurmctld slurmd munged; do
	command -v "$t" >/dev/null ||
		{ echo "SKIP: $t missing (apt-get install debhelper dh-python)"; exit 77; }
done
PKGS="slurm-wlm-topoml-select-plugin slurm-wlm-topoml-spank-plugin topoml
libtopoml-ckpt0 libtopoml-ckpt-dev python3-topoml-ckpt"
for p in $PKGS; do
	# Never purge what an admin installed.
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q installed; then
		echo "SKIP: $p is installed on this machine"
		exit 77
	fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-pkg.XXXXXX")
chmod 755 "$work"
had_run_dir=0
[ -d /run/topoml ] && had_run_dir=1
purge() {
	# shellcheck disable=SC2086
	dpkg --purge $PKGS >"$work/purge.log" 2>&1
}
cleanup() {
	[ -n "${CLUSTER_DIR:-}" ] && cluster_stop
	purge
	[ "$had_run_dir" = 0 ] && rm -rf /run/topoml
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# ---- build (the slow part: once) ----
ver=$(sed -n '1s/^topoml (\([^)]*\)).*/\1/p' "$TOP_SRCDIR/debian/changelog")
[ -n "$ver" ] || fail "no version in debian/changelog"
debs=${TOPOML_DEBS:-}
if [ -z "$debs" ]; then
	src=$work/src/topoml-$ver
	mkdir -p "$src"
	# The tree as it is, without build trees or earlier package builds.
	tar -C "$TOP_SRCDIR" --exclude=./.git --exclude='./build*' \
		--exclude=./autom4te.cache --exclude=./debian/build \
		--exclude=./debian/tmp --exclude=./debian/.debhelper \
		--exclude='*.o' --exclude='*.lo' --exclude=.libs --exclude=.deps \
		-cf - . | tar -C "$src" -xf - || fail "copy of the source tree"
	chmod -R u+w "$src"
	t0=$(date +%s)
	(cd "$src" && DEB_BUILD_OPTIONS="nocheck noddebs parallel=2" \
		dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 || {
		tail -40 "$work/build.log"
		fail "dpkg-buildpackage"
	}
	echo "built in $(($(date +%s) - t0)) s"
	debs=$work/src
fi
files=()
for p in $PKGS; do
	f=$(ls "$debs/${p}_${ver}_"*.deb 2>/dev/null | head -1)
	[ -n "$f" ] || fail "no package $p in $debs"
	files+=("$f")
done

# ---- the packages themselves ----
slurm_ver=$(dpkg-query -W -f='${Version}' slurm-wlm-basic-plugins)
for p in slurm-wlm-topoml-select-plugin slurm-wlm-topoml-spank-plugin; do
	dpkg-deb -f "$debs/${p}_${ver}_"*.deb Depends |
		grep -qF "slurm-wlm-basic-plugins (= $slurm_ver)" ||
		fail "$p does not depend on exactly Slurm $slurm_ver"
done
dpkg -i "${files[@]}" >"$work/install.log" 2>&1 ||
	{ cat "$work/install.log"; fail "dpkg -i"; }
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
plugdir=/usr/lib/$ma/slurm-wlm
for so in select_topoml.so topoml.so; do
	[ "$(stat -c %a "$plugdir/$so" 2>/dev/null)" = 644 ] ||
		fail "$plugdir/$so missing or not mode 0644"
done
# shellcheck disable=SC2086
dpkg -L $PKGS | grep -E '\.la$' && fail "libtool archives installed"
dpkg -L libtopoml-ckpt0 | grep -qx "/usr/lib/$ma/libtopoml-ckpt.so.0" ||
	fail "libtopoml-ckpt not in the multiarch libdir"
grep -qE '^optional +topoml\.so' /etc/slurm/plugstack.conf.d/topoml.conf ||
	fail "no plugstack.conf.d drop-in"
dpkg-query --showformat='${Conffiles}\n' -W slurm-wlm-topoml-spank-plugin |
	grep -q /etc/slurm/plugstack.conf.d/topoml.conf ||
	fail "the drop-in is not a conffile"
pyver=$(cd / && /usr/bin/python3 -c \
	'import topoml_ckpt; print(topoml_ckpt.__version__)') ||
	fail "import topoml_ckpt"
[ "$pyver" = "$ver" ] || fail "topoml_ckpt.__version__ $pyver, package $ver"
[ -f /usr/lib/python3/dist-packages/topoml_ckpt/py.typed ] ||
	fail "no py.typed"
man -w topoml topoml-ckpt topoml-spank topoml.conf >/dev/null ||
	fail "man pages"
[ -f /usr/share/doc/topoml/examples/slurm.conf ] || fail "examples"

# A C program built against the installed library through pkg-config.
cat >"$work/hook.c" <<'EOF'
#include <stdio.h>
#include <topoml_ckpt.h>
int main(int argc, char **argv)
{
	char err[256];
	topoml_ckpt_t *c = topoml_ckpt_open(argv[argc - 1], err, sizeof(err));

	if (!c || !topoml_ckpt_begin(c, 7) || topoml_ckpt_commit(c) != 0) {
		fprintf(stderr, "hook: %s\n", c ? "commit failed" : err);
		return 1;
	}
	printf("resume %ld\n", topoml_ckpt_resume_step(c));
	topoml_ckpt_close(c);
	return 0;
}
EOF
# shellcheck disable=SC2046
cc -o "$work/hook" "$work/hook.c" $(pkg-config --cflags --libs topoml-ckpt) ||
	fail "cc with pkg-config topoml-ckpt"
"$work/hook" "$work/hookck" >/dev/null || fail "hook program"
[ "$(readlink "$work/hookck/latest")" = step-000000000007 ] ||
	fail "hook program did not commit"

# ---- a job through the installed plugins ----
cat >"$work/topology.conf" <<'EOF'
SwitchName=l0 Nodes=n[1-2]
SwitchName=l1 Nodes=n[3-4]
SwitchName=s0 Switches=l[0-1]
EOF
printf 'TopologyFile=%s\n' "$work/topology.conf" >"$work/topoml.conf"
topoml check "$work/topology.conf" >/dev/null || fail "topoml check"
# Every rank saves its shard with the packaged module; the loop ends
# inside `with`, so the job is marked finished.
cat >"$work/train.py" <<'EOF'
import os
import topoml_ckpt
rank = int(os.environ["SLURM_PROCID"])
with topoml_ckpt.Checkpointer(shards=True, last_step=20) as ck:
    for step in range(1, 21):
        if ck.should_checkpoint(step):
            with ck.save(step) as d:
                with open(os.path.join(d, "shard-%d" % rank), "w") as f:
                    f.write("%d\n" % step)
print("rank %d MASTER_ADDR=%s RANK=%s" % (rank, os.environ.get("MASTER_ADDR"),
                                       os.environ.get("RANK")))
EOF
chmod 644 "$work/train.py" "$work/topology.conf" "$work/topoml.conf"

. "$TESTS_DIR/lib/cluster.sh"
# TOP_BUILDDIR pointing nowhere: nothing can come from a build tree.
TOP_BUILDDIR=$work/no-build-tree CLUSTER_INSTALLED=1 CLUSTER_SLURMD=4 \
	CLUSTER_SELECT=topoml CLUSTER_TOPOLOGY=$work/topology.conf \
	CLUSTER_TOPOML_CONF=$work/topoml.conf cluster_start pkg || exit $?
trap cleanup EXIT	# cluster_start set its own: stop it and purge
grep -q "^PluginDir=$plugdir\$" "$SLURM_CONF" || fail "PluginDir is not $plugdir"
scontrol show config | grep -q 'SelectType *= select/topoml' ||
	fail "SelectType is not select/topoml"
sinfo >/dev/null || fail "sinfo with select/topoml installed"

id=$(sbatch --parsable -N2 --ntasks-per-node=1 -o "$work/job.out" \
	--ml-nccl=auto --ml-rank-order=topology \
	--ml-ckpt="$work/ck,every=10" \
	--wrap "srun /usr/bin/python3 $work/train.py") || fail "sbatch --ml-*"
for _ in $(seq 1 600); do
	st=$(scontrol show job "$id" 2>/dev/null |
		sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
	case $st in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL) break ;; esac
	sleep 0.1
done
info=$(scontrol show job "$id")
echo "$info" | grep -q 'JobState=COMPLETED' || {
	cat "$work/job.out"
	fail "job $id: $(echo "$info" | grep -o 'JobState=[A-Z_]*')"
}
echo "$info" | grep -q 'SystemComment=topoml: placed=topoml' ||
	fail "not placed by the installed select/topoml: $info"
grep -Eq 'MASTER_ADDR=(n[0-9]|127\.)' "$work/job.out" ||
	fail "no MASTER_ADDR from the installed SPANK plugin: $(cat "$work/job.out")"
[ "$(readlink "$work/ck/$id/latest")" = step-000000000020 ] ||
	fail "no checkpoint step 20 in $work/ck/$id: $(ls -a "$work/ck/$id")"
for r in 0 1; do
	[ -f "$work/ck/$id/step-000000000020/shard-$r" ] ||
		fail "shard of rank $r missing"
done
cluster_stop
CLUSTER_DIR=

# ---- purge leaves nothing behind ----
purge || { cat "$work/purge.log"; fail "dpkg --purge"; }
for f in "$plugdir/select_topoml.so" "$plugdir/topoml.so" \
	/etc/slurm/plugstack.conf.d/topoml.conf /usr/bin/topoml \
	/usr/lib/python3/dist-packages/topoml_ckpt; do
	[ -e "$f" ] && fail "$f left after purge"
done
echo "PASS: packages $ver built, installed (Slurm $slurm_ver), job $id" \
	"placed by select/topoml with --ml-* from topoml.so, purged"
