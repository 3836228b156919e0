#!/bin/bash
# Another user's symlink or directory on the way to a path root or the
# job uses (issue 28, defects 2 and 3), on a real local cluster, with an
# attacker and a victim the test creates.  Each world-writable directory
# here is made for the test: WW (0777, no sticky bit: fs.protected_symlinks
# does not cover it) and ST (1777, like /tmp).
#   ww       the attacker's link WW/ck -> their own directory; the victim's
#            --ml-ckpt=WW/ck/%u fails with the reason, nothing of the
#            victim's lands in the attacker's directory
#   sticky   the same link in ST: not followed (not root's, not the
#            victim's)
#   theirs   a (sticky) directory of the attacker's on the way: refused
#   mine     the victim's own link in ST works; the job gets the path
#            without the link (TOPOML_CKPT_DIR)
#   cache    cache_dir=WW/cache, then ST/cache, each the attacker's link
#            to a root directory: root writes nothing there, slurmd's log
#            says why once, jobs fail with the reason or run unbound, no
#            node drained
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
. "${TESTS_DIR:-$(dirname "$0")/..}/lib/cluster.sh"
cluster_need_root
so=$TOP_BUILDDIR/spank/.libs/topoml.so
cluster_need_files "$so"

A=topomlsa	# the attacker
V=topomlsv	# the victim
cluster_tmpdir BASE symlink
cluster_tmpdir WW ww
cluster_tmpdir ST st
chmod 0777 "$WW"
chmod 1777 "$ST"
CLUSTER_SLURMD=1
CLUSTER_SPANK=1
# (and the site's straggler defaults, checked in case 4)
CLUSTER_SPANK_ARGS="cache_dir=$BASE/cache straggler_threshold=1.5"
CLUSTER_SPANK_ARGS="$CLUSTER_SPANK_ARGS on_straggler=replace"
CLUSTER_CONF_EXTRA="MinJobAge=600"
cluster_start symlink
cluster_user "$A"
cluster_user "$V"
UIDA=$(id -u "$A")
UIDV=$(id -u "$V")
for u in "$A" "$V"; do
	mkdir -p "$BASE/$u"
	chown "$u" "$BASE/$u"
done
log=$CLUSTER_DIR/log/slurmd-n1.log

fail() { cluster_fail "$*"; }

# as USER CMD...: run a command as USER in USER's directory.
as() { (cd "$BASE/$1" && cluster_as "$@"); }

# empty DIR CASE: nothing in DIR.
empty() {
	[ -z "$(ls -A "$1")" ] || fail "$2: in $1: $(ls -lA "$1")"
}

# refused CASE DIR WHY: the victim's job with --ml-ckpt=DIR fails with
# WHY in its output, before its script runs.
refused() {
	local id s out
	id=$(as "$V" sbatch --parsable -N1 -o "$BASE/$V/$1.out" \
		--ml-ckpt="$2,every=10" --wrap \
		'echo RAN; echo weights >$TOPOML_CKPT_DIR/model.pt') ||
		fail "$1: sbatch"
	s=$(cluster_job_wait_end "$id" 60) ||
		fail "$1: job $id still $s after 60 s"
	out=$(cat "$BASE/$V/$1.out" 2>/dev/null)
	[ "$s" = FAILED ] || fail "$1: job $id ended $s: $out"
	echo "$out" | grep -qF "topoml: --ml-ckpt: $3" ||
		fail "$1: not '$3' in the job's output: '$out'"
	case "$out" in *RAN*) fail "$1: the script ran" ;; esac
	cluster_no_drain "$1"
	echo "$1: job $id $s: $(echo "$out" | head -1)"
}

# The attacker's directory where the victim's checkpoints would land
# (sticky: the victim may make a directory of its own there).
as "$A" mkdir -m 1777 "$BASE/$A/loot"

# 1. ww: the attacker's link in a world-writable directory.
as "$A" ln -s "$BASE/$A/loot" "$WW/ck"
refused ww "$WW/ck/%u" \
	"$WW/ck/$V refused: $WW is writable by anybody (no sticky bit)"
empty "$BASE/$A/loot" ww

# 2. sticky: the same link in a /tmp-like directory.
as "$A" ln -s "$BASE/$A/loot" "$ST/ck"
refused sticky "$ST/ck/%u" \
	"$ST/ck/$V refused: $ST/ck is a symlink of another user (uid $UIDA)"
empty "$BASE/$A/loot" sticky

# 3. theirs: the attacker's own sticky directory on the way.
as "$A" mkdir -m 1777 "$BASE/$A/pub"
refused theirs "$BASE/$A/pub/ck" "$BASE/$A/pub/ck/"
grep -qF "refused: $BASE/$A is another user's directory (uid $UIDA)" \
	"$BASE/$V/theirs.out" || fail "theirs: $(cat "$BASE/$V/theirs.out")"
empty "$BASE/$A/pub" theirs

# 4. mine: the victim's own link in ST is followed; the job sees where.
as "$V" ln -s "$BASE/$V/ck" "$ST/mine"
# Also the site's straggler defaults: the job's own value wins.
id=$(as "$V" env TOPOML_ON_STRAGGLER=report sbatch --parsable -N1 \
	-o "$BASE/$V/mine.out" --ml-ckpt="$ST/mine,every=10" --wrap \
	'echo DIR=$TOPOML_CKPT_DIR; echo "TH=$TOPOML_STRAGGLER_THRESHOLD ON=$TOPOML_ON_STRAGGLER"') ||
	fail "mine: sbatch"
s=$(cluster_job_wait_end "$id" 60) || fail "mine: job $id still $s"
out=$(cat "$BASE/$V/mine.out")
[ "$s" = COMPLETED ] || fail "mine: job $id ended $s: $out"
echo "$out" | grep -qx "DIR=$BASE/$V/ck/$id" ||
	fail "mine: TOPOML_CKPT_DIR is not the path without the link: $out"
echo "$out" | grep -qx "TH=1.5 ON=report" ||
	fail "mine: site straggler defaults (1.5, the job's report): $out"
[ "$(stat -c %U "$BASE/$V/ck/$id")" = "$V" ] ||
	fail "mine: $BASE/$V/ck/$id is not $V's"
echo "mine: job $id $s, $(echo "$out" | head -1)"

# 5. cache: cache_dir through the attacker's link, to a root directory
# (any: /etc, another node's cache) root would write in.
mkdir -m 755 "$BASE/rootdir"
cp "$CLUSTER_DIR/plugstack.conf" "$BASE/plugstack.good"
as "$A" ln -s "$BASE/rootdir" "$WW/cache"
as "$A" ln -s "$BASE/rootdir" "$ST/cache"
for c in "ww:$WW/cache:$WW is writable by anybody (no sticky bit)" \
	"st:$ST/cache:$ST/cache is a symlink of another user (uid $UIDA)"; do
	name=${c%%:*}
	c=${c#*:}
	dir=${c%%:*}
	why=${c#*:}
	cluster_slurmd_stop n1
	sed "s|cache_dir=[^ ]*|cache_dir=$dir|" "$BASE/plugstack.good" \
		>"$CLUSTER_DIR/plugstack.conf"
	: >"$log"
	cluster_slurmd_start n1
	cluster_wait_idle
	for i in $(seq 1 100); do
		grep -q "topoml: cache_dir refused" "$log" && break
		sleep 0.1
	done
	grep -qF "topoml: cache_dir refused: $dir: $why" "$log" ||
		fail "cache $name: slurmd's log does not say '$why':" \
			"$(grep topoml "$log")"
	# A checkpoint job (root would make ckpt/UID there) and a bound
	# step (slurmstepd reads the cache): the first fails with the
	# reason, the second runs unbound.
	refused "cache-$name" "$BASE/$V/ck-$name" \
		"page directory $dir/ckpt/$UIDV: $why"
	out=$(as "$V" timeout 60 srun -N1 -n1 --ml-gpu-bind=auto \
		echo STEP 2>&1) || fail "cache $name: srun: $out"
	echo "$out" | grep -qx STEP || fail "cache $name: srun: $out"
	empty "$BASE/rootdir" "cache $name"
	n=$(grep -c "topoml: cache_dir refused" "$log")
	[ "$n" = 1 ] || fail "cache $name: slurmd said it $n times"
	cluster_no_drain "cache $name"
	echo "cache $name: refused once: $why"
done
cp "$BASE/plugstack.good" "$CLUSTER_DIR/plugstack.conf"

# Finally: root made nothing in the users' trees.
for u in "$A" "$V"; do
	bad=$(find "$BASE/$u" ! -user "$u" | head -3)
	[ -z "$bad" ] || fail "files under $BASE/$u not $u's: $bad"
done
echo "PASS: no symlink or directory of another user on the way is followed"
