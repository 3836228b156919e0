# shellcheck shell=bash
#
# Helpers of the tests that run select/topoml beside Slurm's own topology
# plugins (24.05+: tree, block; 25.05+: topology.yaml; 26.05: torus3d).
# Sourced after tests/lib/cluster.sh and tests/select/lib.sh.  Emulated
# nodes are c1..cN; a "unit" (leaf switch, base block) holds PER of them
# in name order, so c(k*PER+1)..c((k+1)*PER) is unit k.
#
# SPDX-License-Identifier: GPL-2.0-or-later

# topo_need MMmm WHAT: skip (77) on releases older than MMmm.
topo_need() {
	if [ "$CLUSTER_SLURM_VERSION" -lt "$1" ]; then
		echo "SKIP: $2 needs Slurm ${1:0:2}.${1:2:2}+" \
			"(this is $CLUSTER_SLURM_VERSION)"
		exit 77
	fi
}

# cluster.sh writes topology.conf only; topology.yaml (25.05+) is installed
# by wrapping its cluster_write_conf (cluster.sh stays untouched).
eval "$(declare -f cluster_write_conf | sed '1s/cluster_write_conf/_topo_orig_write_conf/')"
cluster_write_conf() {
	_topo_orig_write_conf
	rm -f "$CLUSTER_DIR/topology.yaml"
	if [ -n "${CLUSTER_TOPOLOGY_YAML:-}" ]; then
		cp -f "$CLUSTER_TOPOLOGY_YAML" "$CLUSTER_DIR/topology.yaml"
		chmod 644 "$CLUSTER_DIR/topology.yaml"
	fi
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

# topo_submit ARGS...: sbatch a sleeping job; prints its id.
topo_submit() {
	sbatch --parsable -o /dev/null "$@" --wrap 'sleep 100000'
}

# topo_reason JOBID: "STATE REASON" of a job.
topo_reason() {
	squeue -h -j "$1" -o '%T %r' 2>/dev/null
}

# topo_placed JOBID: "topoml" or "cons_tres" from the job's SystemComment
# (empty without one).
topo_placed() {
	sel_comment "$1" | sed -n 's/.*topoml: placed=\([a-z_]*\).*/\1/p'
}

# topo_sequence SEED COUNT NODES "SIZES" FILL: a job sequence like
# sel_sequence's (submits and cancellations, deterministic) drawn from
# SIZES, kept under FILL (a fraction) of NODES.
topo_sequence() {
	awk -v seed="$1" -v count="$2" -v max="$3" -v sizes="$4" \
	    -v fill="$5" 'BEGIN {
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
			n = sz[int(s / 13) % ns + 1]
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
