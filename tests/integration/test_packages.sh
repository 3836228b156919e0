#!/bin/bash
# The Debian packages, as a site installs them: the source package
# (debian/make-orig.sh: orig tarball and Slurm's source as component,
# dpkg-source -b), unpacked and built once the way a clean chroot would:
# no network (unshare -n), /var/cache/topoml hidden, Build-Depends
# checked, in a git checkout that must stay clean; then dpkg -i, checks
# of what landed where and a job through the installed plugins on a
# local cluster (no build tree involved: PluginDir is Slurm's own,
# plugstack.conf includes the package's drop-in, the job imports the
# packaged Python module), dpkg -r of the SPANK package, dpkg --purge.
# Root only; TOPOML_DEBS=DIR uses .debs built before.
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
TOP_SRCDIR=${TOP_SRCDIR:-$(cd "$TESTS_DIR/.." && pwd)}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (dpkg -i)"; exit 77; }
for t in dpkg-buildpackage dh dh_python3 slurmctld slurmd munged unshare git; do
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
ver=$(dpkg-parsechangelog -l "$TOP_SRCDIR/debian/changelog" -S Version)
uver=${ver%-*}
[ -n "$uver" ] || fail "no version in debian/changelog"
slurm_ver=$(dpkg-query -W -f='${Version}' libslurm-dev)
slurm_up=$(echo "$slurm_ver" | sed 's/^[0-9]*://; s/-[^-]*$//')
debs=${TOPOML_DEBS:-}
if [ -z "$debs" ]; then
	t0=$(date +%s)
	src=$work/src/topoml-$uver
	mkdir -p "$src"
	# The tree as it is (tracked and untracked files, not ignored ones),
	# without build trees or earlier package builds.
	if git -C "$TOP_SRCDIR" rev-parse >/dev/null 2>&1; then
		git -C "$TOP_SRCDIR" ls-files -co --exclude-standard -z |
			tar -C "$TOP_SRCDIR" --null -T - -cf -
	else
		tar -C "$TOP_SRCDIR" --exclude=./.git --exclude='./build*' \
			--exclude=./autom4te.cache --exclude=./debian/build \
			--exclude=./debian/tmp --exclude=./debian/.debhelper \
			--exclude='*.o' --exclude='*.lo' --exclude=.libs \
			--exclude=.deps -cf - .
	fi | tar -C "$src" -xf - || fail "copy of the source tree"
	chmod -R u+w "$src"
	# The Slurm source of the component: the one install-deps.sh
	# prepared, else make-orig.sh fetches it (apt-get source).
	ssrc=${TOPOML_SLURM_SOURCE:-/var/cache/topoml/slurm-wlm-$slurm_up}
	[ -f "$ssrc/src/common/select.h" ] || ssrc=
	"$src/debian/make-orig.sh" ${ssrc:+--slurm-source "$ssrc"} --unpack \
		>"$work/orig.log" 2>&1 || { cat "$work/orig.log"; fail "make-orig"; }
	(cd "$work/src" && dpkg-source -b "topoml-$uver") >"$work/source.log" \
		2>&1 || { tail -20 "$work/source.log"; fail "dpkg-source -b"; }
	dsc=$work/src/topoml_$ver.dsc
	grep -q "topoml_$uver.orig-slurm.tar" "$dsc" ||
		fail "the .dsc carries no Slurm component: $(cat "$dsc")"
	# A fresh unpack of the .dsc alone, made a git checkout: the build
	# must leave no untracked or changed file in it.
	b=$work/build/topoml-$uver
	mkdir -p "$work/build"
	dpkg-source -x "$dsc" "$b" >"$work/unpack.log" 2>&1 ||
		{ cat "$work/unpack.log"; fail "dpkg-source -x"; }
	{ git -C "$b" init -q && git -C "$b" add -A &&
		git -C "$b" -c user.name=t -c user.email=t@t commit -qm t; } ||
		fail "git checkout of the unpacked source"
	# The closest to a clean chroot here: no network, nothing from
	# /var/cache/topoml (install-deps.sh's Slurm tree), only what
	# Build-Depends names (dpkg-checkbuilddeps, which dpkg-buildpackage
	# runs too, must pass).
	iso=1
	unshare -n -m true 2>/dev/null || {
		iso=0
		echo "note: no namespaces (unshare -n -m): the build sees the" \
			"network and /var/cache/topoml"
	}
	# shellcheck disable=SC2016
	(cd "$b" && DEB_BUILD_OPTIONS="nocheck noddebs parallel=2" ISO=$iso \
		$([ $iso = 1 ] && echo unshare -n -m) sh -ec '
		if [ "$ISO" = 1 ]; then
			[ "$(awk "NR > 2 && \$1 != \"lo:\"" /proc/net/dev)" = "" ]
			if [ -d /var/cache/topoml ]; then
				mount -t tmpfs -o size=1m none /var/cache/topoml
				[ -z "$(ls -A /var/cache/topoml)" ]
			fi
		fi
		dpkg-checkbuilddeps
		dpkg-buildpackage -us -uc -b') >"$work/build.log" 2>&1 || {
		tail -40 "$work/build.log"
		fail "offline dpkg-buildpackage of the .dsc"
	}
	grep -q 'dpkg-source --before-build' "$work/build.log" ||
		fail "dpkg-buildpackage did not run (build log: $work/build.log)"
	grep -q "select/topoml: will be built against $b/slurm\$" \
		"$work/build.log" ||
		fail "select/topoml not built against the .dsc's Slurm source"
	left=$(git -C "$b" status --porcelain --untracked-files=all)
	[ -z "$left" ] || fail "the build left files in the checkout: $left"
	echo "source package and offline build in $(($(date +%s) - t0)) s"
	debs=$work/build
fi
files=()
for p in $PKGS; do
	f=$(ls "$debs/${p}_${ver}_"*.deb 2>/dev/null | head -1)
	[ -n "$f" ] || fail "no package $p in $debs"
	files+=("$f")
done
# ---- the packages themselves ----
# Slurm checks a select plugin's major.minor.micro and a SPANK plugin's
# major.minor: the plugins must accept any Debian revision of this
# release (security updates) and refuse the next one.
slurm_ver=$(dpkg-query -W -f='${Version}' slurm-wlm-basic-plugins)
epoch=$(echo "$slurm_ver" | sed -n 's/^\([0-9]*:\).*/\1/p')
next_micro=$(echo "$slurm_up" | awk -F. '{ printf "%s.%s.%d", $1, $2, $3 + 1 }')
next_minor=$(echo "$slurm_up" | awk -F. '{ printf "%s.%02d", $1, $2 + 1 }')
prev_minor=$(echo "$slurm_up" | awk -F. '{ printf "%s.%02d", $1, $2 - 1 }')
# satisfies DEB VERSION: VERSION meets every slurm-wlm-basic-plugins
# relation in DEB's Depends (and there is at least one).
satisfies() {
	local rels n=0 op v
	rels=$(dpkg-deb -f "$1" Depends | tr ',' '\n' |
		sed -n 's/^ *slurm-wlm-basic-plugins (\([<>=]*\) \(.*\))$/\1 \2/p')
	while read -r op v; do
		[ -n "$op" ] || continue
		n=$((n + 1))
		case $op in '<<') op=lt ;; '<=') op=le ;; '=') op=eq ;;
		'>=') op=ge ;; '>>') op=gt ;; esac
		dpkg --compare-versions "$2" "$op" "$v" || return 1
	done <<<"$rels"
	[ $n -gt 0 ]
}
sel=$(ls "$debs/slurm-wlm-topoml-select-plugin_${ver}_"*.deb)
spk=$(ls "$debs/slurm-wlm-topoml-spank-plugin_${ver}_"*.deb)
for v in "$slurm_ver" "$epoch$slurm_up-99" "$epoch$slurm_up-1+deb12u9"; do
	satisfies "$sel" "$v" || fail "select plugin refuses Slurm $v"
	satisfies "$spk" "$v" || fail "SPANK plugin refuses Slurm $v"
done
for v in "$epoch$next_micro-1" "$epoch$next_micro~rc1-1"; do
	satisfies "$sel" "$v" && fail "select plugin accepts Slurm $v"
	satisfies "$spk" "$v" || fail "SPANK plugin refuses Slurm $v"
done
for v in "$epoch$next_minor.0-1" "$epoch$next_minor.0~rc1-1" \
	"$epoch$prev_minor.99-1"; do
	satisfies "$sel" "$v" && fail "select plugin accepts Slurm $v"
	satisfies "$spk" "$v" && fail "SPANK plugin accepts Slurm $v"
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
[ "$pyver" = "$uver" ] || fail "topoml_ckpt.__version__ $pyver, package $ver"
[ -f /usr/lib/python3/dist-packages/topoml_ckpt/py.typed ] ||
	fail "no py.typed"
man -w topoml topoml-ckpt topoml-spank topoml.conf >/dev/null ||
	fail "man pages"
# Each example with the package that reads it; the sample networks with
# the topoml command, which reads them.
for f in slurm-wlm-topoml-select-plugin/examples/slurm.conf \
	slurm-wlm-topoml-select-plugin/examples/topoml.conf \
	slurm-wlm-topoml-spank-plugin/examples/plugstack.conf; do
	dpkg -L "${f%%/*}" | grep -qx "/usr/share/doc/$f" ||
		fail "$f not in package ${f%%/*}"
done
[ -d /usr/share/doc/topoml/examples ] && fail "examples in topoml"
for f in fat-tree.json dragonfly.json torus.json mesh.json fat-tree.conf; do
	topoml check "/usr/share/topoml/topologies/$f" >/dev/null ||
		fail "topoml check /usr/share/topoml/topologies/$f"
done
# Metadata: where the project lives, a copyright Source that is one.
for p in $PKGS; do
	dpkg-query -W -f='${Homepage}' "$p" | grep -q '^https://' ||
		fail "$p has no Homepage"
done
grep -q '^Source: https://' /usr/share/doc/topoml/copyright ||
	fail "copyright Source is not a URL"
# Man pages: a date mandoc parses, the package's version in the footer.
# shellcheck disable=SC2086
for m in $(dpkg -L $PKGS | grep '^/usr/share/man/man./.*\.gz$'); do
	th=$(zcat "$m" | grep -m1 '^\.TH')
	echo "$th" | grep -Eq '"[0-9]{4}-[0-9]{2}-[0-9]{2}" "topoml '"$uver"'"' ||
		fail "$m: .TH needs an ISO date and \"topoml $uver\": $th"
	if command -v mandoc >/dev/null; then
		mandoc -T lint -W warning "$m" 2>&1 | grep -i 'date' &&
			fail "$m: mandoc cannot parse its date"
	fi
done

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
# The installed topoml-run starts the step; every rank saves its shard
# with the packaged module; the loop ends
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
	--wrap "topoml-run -- /usr/bin/python3 $work/train.py") ||
	fail "sbatch --ml-*"
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
# ---- the drop-in: topoml.so loaded once, set aside on dpkg -r ----
# The cluster's plugstack.conf is Debian's: it includes the drop-in.
dropin=/etc/slurm/plugstack.conf.d/topoml.conf
pstack=$(sed -n 's/^PlugStackConfig=//p' "$SLURM_CONF")
help=$(srun --help 2>&1)
echo "$help" | grep 'provided by both' &&
	fail "topoml.so loaded twice with the package's drop-in alone"
[ "$(echo "$help" | grep -c -- '--ml-nccl')" = 1 ] ||
	fail "--ml-nccl not listed once by srun --help: $help"
# The README's plugstack.conf line is for source installs: with the
# drop-in too, Slurm says so on every command (this check sees it) and
# the README must say that the package already loads the plugin.
three=$(sed -n '/^### The three lines/,/^### [^T]/p' "$TOP_SRCDIR/README.md")
line=$(echo "$three" | sed -n 's/^    \(\(required\|optional\) .*topoml\.so.*\)/\1/p' |
	head -1)
[ -n "$line" ] || fail "no plugstack.conf line in the README's three lines"
echo "$three" | grep -q 'plugstack\.conf\.d/topoml\.conf' ||
	fail "the README's three lines do not say the package's drop-in loads it"
echo "$three" | grep -B3 -F "    $line" | grep -qi 'source install only' ||
	fail "the README gives '$line' without saying: from a source install only"
cp "$pstack" "$work/plugstack.pkg"
echo "$line" >>"$pstack"
srun --help 2>&1 | grep -q 'provided by both' ||
	fail "README line + drop-in: no 'provided by both' (check broken?)"
cp "$work/plugstack.pkg" "$pstack"
# An admin's edit of the drop-in survives dpkg -r and a reinstall; in
# between no client tries to load the removed topoml.so.
echo "# site edit $$" >>"$dropin"
dpkg -r slurm-wlm-topoml-spank-plugin >"$work/remove.log" 2>&1 ||
	{ cat "$work/remove.log"; fail "dpkg -r slurm-wlm-topoml-spank-plugin"; }
[ -e "$plugdir/topoml.so" ] && fail "topoml.so left after dpkg -r"
for f in /etc/slurm/plugstack.conf.d/*.conf; do
	[ -e "$f" ] && fail "$f is still included after dpkg -r"
done
grep -q "site edit $$" "$dropin.removed" ||
	fail "the drop-in was not set aside with the admin's edit"
out=$(srun --help 2>&1 >/dev/null)
[ -z "$out" ] || fail "srun --help after dpkg -r: $out"
out=$(srun -N1 true 2>&1) || fail "srun after dpkg -r: $out"
[ -z "$out" ] || fail "srun after dpkg -r printed: $out"
dpkg -i "$spk" </dev/null >"$work/reinstall.log" 2>&1 ||
	{ cat "$work/reinstall.log"; fail "dpkg -i after dpkg -r"; }
grep -q "site edit $$" "$dropin" ||
	fail "reinstall did not bring the admin's drop-in back"
[ -e "$dropin.removed" ] && fail "$dropin.removed left after reinstall"
[ "$(srun --help 2>&1 | grep -c -- '--ml-nccl')" = 1 ] ||
	fail "--ml-* options not back after reinstall"
cluster_stop
CLUSTER_DIR=

# ---- purge (the SPANK package from removed) leaves nothing behind ----
dpkg -r slurm-wlm-topoml-spank-plugin >"$work/remove.log" 2>&1 ||
	{ cat "$work/remove.log"; fail "dpkg -r slurm-wlm-topoml-spank-plugin"; }
purge || { cat "$work/purge.log"; fail "dpkg --purge"; }
for f in "$plugdir/select_topoml.so" "$plugdir/topoml.so" \
	"$dropin" "$dropin.removed" /usr/bin/topoml \
	/usr/lib/python3/dist-packages/topoml_ckpt; do
	[ -e "$f" ] && fail "$f left after purge"
done
how="built offline from the .dsc"
[ -n "${TOPOML_DEBS:-}" ] && how="from $TOPOML_DEBS"
echo "PASS: packages $ver $how, installed (Slurm" \
	"$slurm_ver), job $id placed by select/topoml with --ml-* from" \
	"topoml.so, drop-in set aside on remove and back on reinstall, purged"
