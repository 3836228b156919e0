#!/bin/bash
# The layers of topology/ (issue 30 item 3): its folders are layers, each
# using only those below it, and no files call each other in a circle.
#  1. every #include "..." of every .c and .h of topology/, resolved as
#     the compiler does (the file's folder, then topology/), must name a
#     file of the same layer or of a lower one: never a layer above, never
#     a sibling of the same rank, never spank/, select_plugin/ or contrib/
#     (they are above topology/); the public headers (topoml.h, topoml/*.h)
#     include only public ones, and the root holds no other header;
#  2. the calls between the built objects (nm: what each leaves undefined,
#     who defines it) follow the same order, and have no circle, in the
#     engine and in each of spank/, select_plugin/ and contrib/.
# Before that the checks are run on a planted copy (an include that points
# up, one sideways, one into spank/, a call circle) and must report each.
#
# usage: test_layers.sh [--self-test]   (only the planted checks)
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
src=${TOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
b=${TOP_BUILDDIR:-..}

# Lowest first, NAME:RANK.  A file's layer is the longest NAME that begins
# its path under topology/.  Same rank, other layer: siblings, which may
# not use each other.  topology/Makefile.am lists the same order.
LAYERS="util:10 model:20 load:30 cost:30 place/common:40 place:50
	hybrid:55 contract:60 policy:70 conf:75 plan:80 sim:100"
# Public headers at topology/'s root, NAME:RANK: topoml.h, the API's
# umbrella over topoml/*.h (the topic headers, rank 0 too: any layer may
# include them, they include nothing internal); sim.h, libtopoml_sim's.
PUBLIC_HEADERS="topoml.h:0 sim.h:100"
PUBLIC_DIR=topoml
# sed: the file of each #include "FILE".
INCLUDE_RE='s/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p'

# "NAME RANK" of a path under topology/, or nothing.
layer_of()
{
	local p=$1 l best=''
	for l in $PUBLIC_HEADERS; do
		[ "${l%%:*}" = "$p" ] && { echo "/ ${l##*:}"; return; }
	done
	case $p in
	"$PUBLIC_DIR"/*.h) echo "/ 0"; return ;;
	esac
	case $p in
	*/*) ;;
	*) return ;;
	esac
	for l in $LAYERS; do
		case $p/ in
		"${l%%:*}"/*)
			if [ ${#l} -gt ${#best} ]; then
				best=$l
			fi
			;;
		esac
	done
	[ -n "$best" ] && echo "${best%%:*} ${best##*:}"
}

# FROM_LAYER FROM_RANK TO_LAYER TO_RANK: 0 when FROM may use TO.
allowed()
{
	[ "$1" = "$3" ] && return 0
	[ "$3" = / ] && [ "$4" -le "$2" ] && return 0
	[ "$4" -lt "$2" ]
}

# Every quoted include of the .c and .h files under TOPO (a topology/
# tree); one FAIL line each for what breaks the order.  Status 1 then.
check_includes()
{
	local topo=$1 f d inc p lf lt rc=0
	while IFS= read -r f; do
		f=${f#./}
		d=$(dirname "$f")
		lf=$(layer_of "$f")
		if [ -z "$lf" ]; then
			case $f in
			*/*)
				echo "FAIL: topology/$f: in no layer (add" \
				     "its folder to LAYERS)"
				rc=1
				continue
				;;
			esac
			echo "FAIL: topology/$f: at the root, in no layer" \
			     "(move it into one, or a public header into" \
			     "$PUBLIC_DIR/)"
			rc=1
			continue
		fi
		while IFS= read -r inc; do
			if [ -f "$topo/$d/$inc" ]; then
				p=$(realpath -m --relative-to="$topo" \
					"$topo/$d/$inc")
			elif [ -f "$topo/$inc" ]; then
				p=$(realpath -m --relative-to="$topo" \
					"$topo/$inc")
			else
				case $inc in
				../*|*/../*)
					echo "FAIL: topology/$f: #include" \
					     "\"$inc\" leaves topology/"
					rc=1
					;;
				esac
				continue	# config.h, system, Slurm
			fi
			case $p in
			../*)
				echo "FAIL: topology/$f: #include \"$inc\"" \
				     "leaves topology/ (${p#../}: a layer" \
				     "above the engine)"
				rc=1
				continue
				;;
			esac
			lt=$(layer_of "$p")
			[ -n "$lt" ] || continue	# reported above
			# shellcheck disable=SC2086
			if ! allowed $lf $lt; then
				echo "FAIL: topology/$f: #include \"$inc\"" \
				     "points ${lt#* } >= ${lf#* }: layer" \
				     "'${lf% *}' may not use '${lt% *}'" \
				     "($p)"
				rc=1
			fi
		done < <(sed -n "$INCLUDE_RE" "$topo/$f")
	done < <(cd "$topo" && find . \( -name '*.c' -o -name '*.h' \) | sort)
	return $rc
}

# Edges "FROM TO" (paths under topology/ without .c) on stdin: FAIL for
# each that points up or sideways.
check_edges()
{
	local from to lf lt rc=0
	while read -r from to; do
		lf=$(layer_of "$from.c")
		lt=$(layer_of "$to.c")
		if [ -z "$lf" ] || [ -z "$lt" ]; then
			continue
		fi
		# shellcheck disable=SC2086
		if ! allowed $lf $lt; then
			echo "FAIL: topology/$from.c calls topology/$to.c:" \
			     "layer '${lf% *}' may not use '${lt% *}'"
			rc=1
		fi
	done
	return $rc
}

# Edges "FROM TO" on stdin: FAIL with the files of each circle.
check_circles()
{
	local what=$1 out
	out=$(tsort 2>&1 >/dev/null)
	[ -z "$out" ] && return 0
	awk -v what="$what" '
		/input contains a loop/ { if (n) print_loop(); n = 0; next }
		{ sub(/^tsort: /, ""); loop[n++] = $0 }
		function print_loop(  i, s) {
			s = loop[0]
			for (i = 1; i < n; i++)
				s = s " " loop[i]
			print "FAIL: " what ": call circle: " s
		}
		END { if (n) print_loop() }' <<<"$out"
	return 1
}

# "FROM TO" for every object file given (NAME=FILE.o), FROM needing a
# symbol that TO defines; kinds: the nm types of definitions counted.
edges_of()
{
	local kinds=$1 o
	shift
	for o; do
		nm "${o#*=}" 2>/dev/null | awk -v n="${o%%=*}" \
			-v k="$kinds" '
			NF == 3 && index(k, $2) { print "D", $3, n }
			NF == 2 && $1 == "U" { print "U", $2, n }'
	done | awk '
		$1 == "D" && !($2 in def) { def[$2] = $3 }
		$1 == "U" { use[++m] = $3 " " $2 }
		END {
			for (i = 1; i <= m; i++) {
				split(use[i], a, " ")
				if ((a[2] in def) && def[a[2]] != a[1])
					print a[1], def[a[2]]
			}
		}' | sort -u
}

self_test()
{
	local tmp rc=0 out
	tmp=$(mktemp -d) || return 1
	trap 'rm -rf "$tmp"' RETURN
	(cd "$src" && find topology \( -name '*.c' -o -name '*.h' \) \
		-exec cp --parents {} "$tmp" \;)
	mkdir -p "$tmp/spank" && : >"$tmp/spank/plugin.h"
	if ! out=$(check_includes "$tmp/topology"); then
		echo "FAIL: self-test: the unplanted copy fails:"
		echo "$out"
		return 1
	fi
	echo '#include "sim.h"' >>"$tmp/topology/util/errors.c"
	: >"$tmp/topology/load/sideways.h"
	echo '#include "load/sideways.h"' >>"$tmp/topology/cost/cost.c"
	echo '#include "../../spank/plugin.h"' >>"$tmp/topology/model/geom.c"
	echo '#include "model/model_int.h"' >>"$tmp/topology/topoml/place.h"
	: >"$tmp/topology/stray.c"
	: >"$tmp/topology/stray.h"
	out=$(check_includes "$tmp/topology") && rc=1
	for want in "util/errors.c: #include \"sim.h\" points" \
		    "stray.c: at the root" \
		    "stray.h: at the root" \
		    "cost/cost.c: #include \"load/sideways.h\" points" \
		    "model/geom.c: #include \"../../spank/plugin.h\" leaves" \
		    "topoml/place.h: #include \"model/model_int.h\" points"; do
		grep -qF "topology/$want" <<<"$out" ||
			{ echo "FAIL: self-test: not reported: $want"; rc=1; }
	done
	out=$(printf '%s\n' "model/model util/grow" "place/place model/geom" |
		check_edges) || { echo "FAIL: self-test: $out"; rc=1; }
	out=$(printf '%s\n' "util/errors model/model" | check_edges) &&
		{ echo "FAIL: self-test: an upward call passed"; rc=1; }
	out=$(printf '%s\n' "a b" "b c" "c a" "c d" | check_circles t) &&
		{ echo "FAIL: self-test: a circle passed"; rc=1; }
	grep -q 'call circle: .*a' <<<"$out" ||
		{ echo "FAIL: self-test: circle not named: $out"; rc=1; }
	out=$(printf '%s\n' "a b" "b c" "a c" | check_circles t) ||
		{ echo "FAIL: self-test: no circle, yet: $out"; rc=1; }
	[ $rc = 0 ] && echo "ok: self-test: planted includes, an upward" \
		"call and a circle are reported"
	return $rc
}

if ! command -v realpath >/dev/null || ! command -v tsort >/dev/null; then
	echo "SKIP: no realpath or tsort"
	exit 77
fi
self_test || exit 1
[ "${1:-}" = --self-test ] && exit 0

rc=0
check_includes "$src/topology" || rc=1
[ $rc = 0 ] && echo "ok: every include of topology/ points down its layers"

command -v nm >/dev/null || { echo "SKIP: no nm for the calls"; exit 77; }
objs=()
while IFS= read -r f; do
	f=${f#./}
	d=$(dirname "$f")
	base=$(basename "$f" .c)
	o=
	for lib in libtopoml_la libtopoml_sim_la; do
		for c in "$b/topology/$d/.libs/$lib-$base.o" \
			 "$b/topology/$d/$lib-$base.o"; do
			[ -f "$c" ] && { o=$c; break 2; }
		done
	done
	if [ -z "$o" ]; then
		echo "FAIL: topology/$f: no object in $b (not built?)"
		rc=1
		continue
	fi
	objs+=("${f%.c}=$o")
done < <(cd "$src/topology" && find . -name '*.c' | sort)
edges=$(edges_of TWDBRCV "${objs[@]}")
[ -n "$edges" ] || { echo "FAIL: no call between topology/'s objects"; rc=1; }
check_edges <<<"$edges" || rc=1
check_circles topology <<<"$edges" || rc=1
echo "ok: topology/: $(wc -l <<<"$edges") file-to-file uses checked"

# Above the engine, call circles only (functions; the plugins' state
# variables are read from everywhere).  ASan builds' plain copies aside.
for top in spank select_plugin contrib; do
	objs=()
	while IFS= read -r o; do
		objs+=("${o#"$b"/}=$o")
	done < <(find "$b/$top" -name '*.o' ! -name '*_plain_la-*' | sort)
	[ ${#objs[@]} -gt 0 ] || continue
	e=$(edges_of TW "${objs[@]}")
	if check_circles "$top" <<<"$e"; then
		echo "ok: $top/: no call circle (${#objs[@]} objects)"
	else
		rc=1
	fi
done
exit $rc
