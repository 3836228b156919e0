# shellcheck shell=bash
#
# What only the select/topoml cluster tests use; it sources
# tests/lib/cluster.sh, which has the rest (jobs, states, users).  Jobs
# are submitted one at a time and each waits for its allocation, so a
# sequence leaves the same state on every run.  The topology generators
# (topo_*) build the same machine for select/topoml and for Slurm's own
# topology plugins (24.05+: tree, block; 25.05+: topology.yaml; 26.05:
# torus3d).  Emulated nodes are c1..cN; a "unit" (leaf switch, base block)
# holds PER of them in name order, so c(k*PER+1)..c((k+1)*PER) is unit k.
#
# SPDX-License-Identifier: GPL-2.0-or-later

. "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"
SEL_TOPOML=${TOP_BUILDDIR:-.}/contrib/topoml
SEL_SCORE=${TOP_BUILDDIR:-.}/tests/select_score

# sel_state JOBID: squeue's state (empty once the job ended).
sel_state() {
	squeue -h -j "$1" -o '%T' 2>/dev/null
}

sel_require_tools() {
	cluster_need_root
	[ -f "$TOP_BUILDDIR/select_plugin/.libs/select_topoml.so" ] ||
		{ echo "SKIP: select/topoml not built (no Slurm source)"; exit 77; }
	[ -x "$SEL_SCORE" ] || { echo "FAIL: $SEL_SCORE missing"; exit 1; }
	[ -x "$SEL_TOPOML" ] || { echo "FAIL: $SEL_TOPOML missing"; exit 1; }
}

# The names the select tests have used (now in tests/lib/cluster.sh).
sel_wait_start() { cluster_job_wait_start "$@"; }
sel_wait_gone() { cluster_job_wait_end "$1" 30 >/dev/null; }
sel_comment() { cluster_job_comment "$@"; }
sel_field() { cluster_field "$@"; }
sel_same_nodes() { cluster_same_nodes "$@"; }
topo_need() { cluster_need_release "$@"; }
# topo_plugin_need RELEASE WHAT: topology/topoml's tests need root, Slurm
# RELEASE (2411, 2605) or later and the plugin built against it.
topo_plugin_need() {
	cluster_need_root
	cluster_need_release "$@"
	[ -f "$TOP_BUILDDIR/select_plugin/.libs/topology_topoml.so" ] || {
		echo "SKIP: topology/topoml not built (needs a Slurm 24.11+" \
			"source)"
		exit 77
	}
	[ -x "$SEL_TOPOML" ] || { echo "FAIL: $SEL_TOPOML missing"; exit 1; }
}
topo_submit() { cluster_submit "$@"; }
topo_reason() { cluster_job_reason "$@"; }

# sel_expected TOPO N BUSY [HINT [JOBID=NODES ...]]: the engine's answer
# for the request select/topoml makes for an exclusive job: `topoml place`
# with the busy nodes and which job holds each (--job, as the plugin passes
# owners to the engine).
sel_expected() {
	local topo=$1 n=$2 busy=$3 hint=${4:-allreduce} j
	local -a jobs=()
	shift 4 2>/dev/null || shift $#
	for j in "$@"; do
		jobs+=(--job "$j")
	done
	"$SEL_TOPOML" place --topology "$topo" --nodes "$n" --hint "$hint" \
		${busy:+--busy "$busy"} "${jobs[@]}" | sed -n 's/^nodes: *//p' |
		grep .
}

# sel_cli_place TOPO N BUSY [HINT]: `topoml place`'s answer with the busy
# nodes only, no owners (what a user without squeue would ask).
sel_cli_place() {
	local topo=$1 n=$2 busy=$3 hint=${4:-allreduce}
	[ -x "$SEL_TOPOML" ] || return 1
	"$SEL_TOPOML" place --topology "$topo" --nodes "$n" --hint "$hint" \
		${busy:+--busy "$busy"} 2>/dev/null | sed -n 's/^nodes: *//p'
}

# sel_owners: "JOBID=NODES" for every job holding nodes.
sel_owners() {
	squeue -h -t R,CF -o '%i=%N' | grep -v '=$'
}

# sel_run_sequence SEQFILE OUTFILE EXTRA_SBATCH_ARGS TOPO CHECK_ENGINE
# SEQFILE lines: "submit NAME SIZE" or "cancel NAME".  OUTFILE gets one line
# per placed job: NAME SIZE NODES BUSY(before) SCORE...
# With CHECK_ENGINE=1 every allocation must equal `topoml place`'s answer.
sel_run_sequence() {
	local seq=$1 out=$2 extra=$3 topo=$4 check=${5:-0}
	local op name size id nodes busy want sc cli
	declare -A ids=()
	SEL_CLI_DIFF=0
	: >"$out"
	while read -r op name size; do
		case "$op" in
		submit)
			busy=$(cluster_nodes_allocated)
			if [ "$check" = 1 ]; then
				# shellcheck disable=SC2046
				want=$(sel_expected "$topo" "$size" "$busy" \
					allreduce $(sel_owners)) || want=NONE
				cli=$(sel_cli_place "$topo" "$size" "$busy")
				sel_same_nodes "$want" "$cli" ||
					SEL_CLI_DIFF=$((SEL_CLI_DIFF + 1))
			fi
			# shellcheck disable=SC2086
			id=$(sbatch --parsable -N "$size" $extra -J "$name" \
				-o /dev/null --wrap 'sleep 100000') ||
				cluster_fail "sbatch $name"
			ids[$name]=$id
			nodes=$(sel_wait_start "$id") ||
				cluster_fail "$name ($size nodes) did not start: $(squeue -h -j "$id" -o '%T %r')"
			if [ "$check" = 1 ] && ! sel_same_nodes "$nodes" "$want"
			then
				cluster_fail "$name: slurmctld gave $nodes, topoml place says $want (busy: $busy)"
			fi
			sc=$("$SEL_SCORE" "$topo" "$nodes" "$busy") ||
				cluster_fail "select_score $nodes"
			echo "$name $size $nodes ${busy:--} $sc" >>"$out"
			;;
		cancel)
			scancel "${ids[$name]}"
			sel_wait_gone "${ids[$name]}" ||
				cluster_fail "$name not cancelled"
			;;
		esac
	done <"$seq"
}

# sel_totals OUTFILE: "jobs span ring span_at_lb ring_at_lb" summed.
sel_totals() {
	awk '{
		for (i = 5; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		n++; span += v["span"]; ring += v["ring"]
		if (v["span"] == v["span_lb"]) slb++
		if (v["ring"] == v["ring_lb"]) rlb++
		gh += v["global_hops"]
	} END { printf "%d %d %d %d %d %d\n", n, span, ring, slb, rlb, gh }' "$1"
}

# sel_sequence SEED COUNT NODES: a mixed job sequence with cancellations
# (holes) that keeps NODES under 90% full.  Deterministic: an LCG on SEED.
# Sizes scale with the machine (x4 at 4096 nodes).
sel_sequence() {
	topo_sequence "$1" "$2" "$3" "1 2 4 8 16 32 3 6 12 24 48 64 96 5 128" \
		0.9 $(($3 >= 2048 ? $3 / 1024 : 1))
}

# sel_plan JOBID: backfill's planned nodes of a pending job (squeue %Y),
# waited for up to 30 s; prints them sorted, one line with a space after
# each (empty when no plan came).
sel_plan() {
	local plan=
	for _ in $(seq 1 300); do
		plan=$(squeue -h -j "$1" -o '%T %Y' 2>/dev/null)
		case "$plan" in "PENDING "?*) [ "${plan#PENDING }" != "(null)" ] &&
			break ;; esac
		sleep 0.1
	done
	scontrol show hostnames "${plan#PENDING }" 2>/dev/null | sort |
		tr '\n' ' '
}

# topo_gen_tree UNITS PER [PREFIX]: topology.conf, UNITS leaves of PER
# nodes, 4 leaves per spine, one root.
topo_gen_tree() {
	local u=$1 per=$2 p=${3:-leaf} l s
	for l in $(seq 0 $((u - 1))); do
		echo "SwitchName=$p$l Nodes=c[$((l * per + 1))-$(((l + 1) * per))]"
	done
	for s in $(seq 0 $(((u + 3) / 4 - 1))); do
		local last=$((s * 4 + 3))
		[ $last -ge "$u" ] && last=$((u - 1))
		echo "SwitchName=${p}spine$s Switches=${p}[$((s * 4))-$last]"
	done
	echo "SwitchName=${p}root Switches=${p}spine[0-$(((u + 3) / 4 - 1))]"
}

# topo_gen_block UNITS PER SIZES: topology.conf of topology/block, UNITS
# base blocks of PER nodes, BlockSizes=SIZES (comma list).
topo_gen_block() {
	local u=$1 per=$2 l
	for l in $(seq 0 $((u - 1))); do
		echo "BlockName=b$l Nodes=c[$((l * per + 1))-$(((l + 1) * per))]"
	done
	echo "BlockSizes=$3"
}

# topo_gen_block_as_tree UNITS PER SIZES: the same blocks as a fat-tree
# (base blocks are leaves, each larger BlockSize one switch level above),
# for the engine and for scoring: a leaf is a base block, a common switch
# is the smallest aggregated block that holds both nodes.
topo_gen_block_as_tree() {
	local u=$1 per=$2 lvl=0 size prev=$2 k n kids
	for k in $(seq 0 $((u - 1))); do
		echo "SwitchName=bl0s$k Nodes=c[$((k * per + 1))-$(((k + 1) * per))]"
	done
	n=$u
	for size in $(echo "$3" | tr , ' ') top; do
		[ "$size" = top ] && size=$((u * per * 2))
		[ "$size" -le "$per" ] && continue
		kids=$((size / prev))
		[ "$kids" -lt 2 ] && continue
		lvl=$((lvl + 1))
		local m=$(((n + kids - 1) / kids))
		[ "$m" -lt 1 ] && m=1
		for k in $(seq 0 $((m - 1))); do
			local last=$((k * kids + kids - 1))
			[ $last -ge "$n" ] && last=$((n - 1))
			echo "SwitchName=bl${lvl}s$k Switches=bl$((lvl - 1))s[$((k * kids))-$last]"
		done
		n=$m
		prev=$size
		[ "$n" = 1 ] && break
	done
}

# topo_units NODES PER: the sorted unit numbers (leaf, base block) of a
# host list, one per node ("0 0 1 3 ...").
topo_units() {
	scontrol show hostnames "$1" | sed 's/^c//' |
		awk -v per="$2" '{ print int(($1 - 1) / per) }' | sort -n
}

# topo_unit_count NODES PER: how many units the nodes touch.
topo_unit_count() {
	topo_units "$1" "$2" | uniq | wc -l
}

# topo_placed JOBID: "topoml" or "cons_tres" from the job's SystemComment
# (empty without one).
topo_placed() {
	cluster_job_comment "$1" |
		sed -n 's/.*topoml: placed=\([a-z_]*\).*/\1/p'
}

# topo_sequence SEED COUNT NODES "SIZES" FILL [SCALE]: submits and
# cancellations (deterministic: an LCG on SEED) of jobs drawn from SIZES
# (each times SCALE, at most NODES), kept under FILL (a fraction) of NODES.
topo_sequence() {
	awk -v seed="$1" -v count="$2" -v max="$3" -v sizes="$4" \
	    -v fill="$5" -v scale="${6:-1}" 'BEGIN {
		ns = split(sizes, sz, " ")
		s = seed; live = 0; total = 0
		for (i = 1; i <= count; i++) {
			s = (s * 1103515245 + 12345) % 2147483648
			if (live > 2 && (s % 4) == 0) {
				s = (s * 1103515245 + 12345) % 2147483648
				k = int(s / 7) % live + 1
				printf "cancel %s\n", name[k]
				total -= size[k]
				name[k] = name[live]; size[k] = size[live]; live--
				continue
			}
			n = sz[int(s / 13) % ns + 1] * scale
			if (n > max) n = max
			while (live > 0 && total + n > max * fill) {
				printf "cancel %s\n", name[1]
				total -= size[1]
				name[1] = name[live]; size[1] = size[live]; live--
			}
			live++; name[live] = "j" i; size[live] = n; total += n
			printf "submit j%d %d\n", i, n
		}
	}'
}

# topo_gen_torus_json X Y Z: topoml's torus, c1 at (0,0,0), x fastest
# (the node order of a torus3d "nodes:" list).
topo_gen_torus_json() {
	printf '{ "family": "torus", "dims": [%d, %d, %d], "wrap": [true, true, true],\n' "$1" "$2" "$3"
	echo '  "node_pattern": { "prefix": "c", "first": 1, "digits": 0, "order": "xyz" } }'
}

# topo_gen_torus3d_yaml X Y Z "AxBxC ...": topology.yaml of one torus3d
# torus over c[1-X*Y*Z] with the listed placement shapes (default anchors:
# spaced at the shape).
topo_gen_torus3d_yaml() {
	local shape
	echo "- topology: t3d"
	echo "  cluster_default: true"
	echo "  torus3d:"
	echo "    toruses:"
	echo "      - name: pod1"
	echo "        dims: {x: $1, y: $2, z: $3}"
	echo "        nodes: c[1-$(($1 * $2 * $3))]"
	echo "        placements:"
	for shape in $4; do
		echo "$shape" | awk -F x '{ printf "          - dims: {x: %d, y: %d, z: %d}\n", $1, $2, $3 }'
	done
}
