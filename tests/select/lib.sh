# shellcheck shell=bash
#
# Helpers of the select/topoml integration tests (sourced after
# tests/lib/cluster.sh).  Jobs are submitted one at a time and each waits for
# its allocation, so a sequence leaves the same state on every run.
#
# SPDX-License-Identifier: GPL-2.0-or-later

SEL_TOPOML=${TOP_BUILDDIR:-.}/contrib/topoml
SEL_SCORE=${TOP_BUILDDIR:-.}/tests/select_score

sel_require_tools() {
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
	[ -f "$TOP_BUILDDIR/select_plugin/.libs/select_topoml.so" ] ||
		{ echo "SKIP: select/topoml not built (no Slurm source)"; exit 77; }
	[ -x "$SEL_SCORE" ] || { echo "FAIL: $SEL_SCORE missing"; exit 1; }
	[ -x "$SEL_TOPOML" ] || { echo "FAIL: $SEL_TOPOML missing"; exit 1; }
}

# sel_wait_start JOBID [TENTHS]: wait until the job holds nodes; prints them.
sel_wait_start() {
	local id=$1 nl st
	for _ in $(seq 1 "${2:-300}"); do
		read -r st nl < <(squeue -h -j "$id" -o '%T %N' 2>/dev/null)
		case "$st" in
		RUNNING|CONFIGURING)
			[ -n "$nl" ] && { echo "$nl"; return 0; } ;;
		esac
		sleep 0.1
	done
	return 1
}

# sel_state JOBID: squeue state (empty when gone).
sel_state() {
	squeue -h -j "$1" -o '%T' 2>/dev/null
}

# sel_wait_gone JOBID: wait until the job no longer holds nodes.
sel_wait_gone() {
	local st
	for _ in $(seq 1 300); do
		st=$(sel_state "$1")
		case "$st" in
		""|COMPLETED|CANCELLED|FAILED) return 0 ;;
		esac
		sleep 0.1
	done
	return 1
}

# sel_comment JOBID: the job's SystemComment.
sel_comment() {
	scontrol show job "$1" | sed -n 's/^ *SystemComment=//p'
}

# sel_field KEY LINE: value of KEY=VALUE in LINE.
sel_field() {
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -1
}

# Same set of nodes?  (host lists in any order or compression)
sel_same_nodes() {
	local a b
	a=$(scontrol show hostnames "$1" | sort | paste -sd,)
	b=$(scontrol show hostnames "$2" | sort | paste -sd,)
	[ "$a" = "$b" ]
}

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
sel_sequence() {
	awk -v seed="$1" -v count="$2" -v max="$3" 'BEGIN {
		split("1 2 4 8 16 32 3 6 12 24 48 64 96 5 128", sz, " ")
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
			# sizes scale with the machine (x4 at 4096 nodes)
			n = sz[int(s / 13) % 15 + 1] * (max >= 2048 ? int(max / 1024) : 1)
			if (n > max) n = max
			# keep the machine under 90% full: every job fits
			while (live > 0 && total + n > max * 0.9) {
				printf "cancel %s\n", name[1]
				total -= size[1]
				name[1] = name[live]; size[1] = size[live]; live--
			}
			live++; name[live] = "j" i; size[live] = n; total += n
			printf "submit j%d %d\n", i, n
		}
	}'
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
