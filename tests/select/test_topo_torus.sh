#!/bin/bash
# topology/topoml on a network Slurm has no topology.conf for (24.11+): a
# 3-D torus from topoml.conf's JSON.  It wraps Slurm's flat plugin
# (topology/default on 24.11, topology/flat from 25.11); whole-node jobs
# are the engine's boxes (exactly `topoml place`'s answer), and scontrol
# show topology prints the engine's model: each node's coordinates, the
# fragmentation.  Then the same nodes as a dragonfly (slurmctld restarted):
# its groups, their routers, nodes and global links, and backfill's
# bf_topopt asking the engine for the fragmentation of its node space map.
#
# 64 emulated nodes c1..c64 on a 4x4x4 torus, x fastest, and c65, which
# the model lacks: a job that needs it gets Slurm's own evaluation.
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
topo_plugin_need 2411 "topology/topoml"

work=""
cluster_tmpdir work topo-torus
cat >"$work/topoml.json" <<'JSON'
{ "family": "torus", "dims": [4, 4, 4], "wrap": [true, true, true],
  "node_pattern": { "prefix": "c", "first": 1, "digits": 0, "order": "xyz" } }
JSON
printf 'TopologyFile=%s\nDebug=1\n' "$work/topoml.json" >"$work/topoml.conf"

CLUSTER_SLURMD=0 CLUSTER_CLOUD=65 CLUSTER_TOPOLOGY_PLUGIN=topology/topoml \
	CLUSTER_TOPOML_CONF=$work/topoml.conf \
	cluster_start topo-torus || exit $?
log=$CLUSTER_DIR/log/slurmctld.log
pid=$(cat "$CLUSTER_DIR/run/slurmctld.pid")
grep -q "topology/topoml: wraps topology/\(default\|flat\)" "$log" ||
	cluster_fail "not wrapping Slurm's flat plugin: $(grep -i topo "$log" | tail -5)"

for spec in "a 8" "b 4" "c 8" "d 2"; do
	# shellcheck disable=SC2086 # two words
	set -- $spec
	busy=$(cluster_nodes_allocated)
	# shellcheck disable=SC2046
	want=$(sel_expected "$work/topoml.json" "$2" "$busy" allreduce \
		$(sel_owners)) || cluster_fail "$1: topoml place failed"
	id=$(cluster_submit -N "$2" -J "$1") || cluster_fail "$1: sbatch"
	nodes=$(cluster_job_wait_start "$id") ||
		cluster_fail "$1 did not start: $(cluster_job_reason "$id")"
	sel_same_nodes "$nodes" "$want" ||
		cluster_fail "$1: slurmctld gave $nodes, topoml place says $want (busy: ${busy:-none})"
	grep -q "eval_nodes JobId=$id rc=0 attempt=0 " "$log" ||
		cluster_fail "$1: not placed by the engine: $(grep "JobId=$id" "$log" | tail -3)"
	echo "$1 $2 -> $nodes"
done
id=$(cluster_submit -N 2 -w c65 -J e) || cluster_fail "e: sbatch"
nodes=$(cluster_job_wait_start "$id") ||
	cluster_fail "e (-w c65) did not start: $(cluster_job_reason "$id")"
grep -q "eval_nodes JobId=$id rc=0 attempt=-1 .*fallback: " "$log" ||
	cluster_fail "e: no fallback: $(grep "JobId=$id" "$log" | tail -3)"
why=$(grep -o "JobId=$id rc=0 attempt=-1 .*" "$log" | head -1)
echo "e 2 -w c65 -> $nodes (${why#*fallback: })"
topo=$(scontrol show topology 2>&1)
echo "$topo" | grep -q "^topoml model: torus" ||
	cluster_fail "scontrol show topology shows no model: $topo"
echo "$topo" | grep "topoml model"
_cluster_alive "$pid" || cluster_fail "slurmctld died"

# scontrol show topology, made in slurmctld and printed by scontrol
# (topo_show.c): every node of the torus once, at the coordinates the
# JSON's node_pattern gives it (x fastest from c1); a node list narrows
# it to those nodes (25.11+: nodes=, the bare word names a topology).
command -v python3 >/dev/null ||
	{ echo "PASS (no python3: scontrol show topology not checked)"; exit 0; }
narrow() {
	if [ "$CLUSTER_SLURM_VERSION" -ge 2511 ]; then
		scontrol show topology "${2:-nodes}=$1" 2>&1
	else
		scontrol show topology "$1" 2>&1
	fi
}
# torus_check.py JSON: the Coords= lines of stdin against the JSON
cat >"$work/torus_check.py" <<'PY'
import json, subprocess, sys
t = json.load(open(sys.argv[1]))
X, Y, Z = t["dims"]
pre, first = t["node_pattern"]["prefix"], t["node_pattern"]["first"]
want = {f"{pre}{first + x + X * (y + Y * z)}": (x, y, z)
        for z in range(Z) for y in range(Y) for x in range(X)}
got = {}
for line in sys.stdin:
    if not line.startswith("Coords="):
        continue
    c, nodes = line.split()
    rng = []
    for r in c[len("Coords="):].split(","):
        lo, _, hi = r.partition("-")
        rng.append((int(lo), int(hi or lo) - int(lo) + 1))
    names = subprocess.run(["scontrol", "show", "hostnames",
                            nodes[len("Nodes="):]], capture_output=True,
                           text=True).stdout.split()
    for k, h in enumerate(names):
        xyz = (rng[0][0] + k % rng[0][1],
               rng[1][0] + (k // rng[0][1]) % rng[1][1],
               rng[2][0] + k // (rng[0][1] * rng[1][1]))
        if h in got:
            sys.exit(f"{h} listed twice")
        got[h] = xyz
if got != want:
    bad = sorted(set(got.items()) ^ set(want.items()))[:4]
    sys.exit(f"{len(got)} nodes listed, {len(want)} in the torus; "
             f"differ: {bad}")
print(f"ok: {len(got)} nodes at their coordinates")
PY
echo "$topo" | python3 "$work/torus_check.py" "$work/topoml.json" ||
	cluster_fail "scontrol show topology: torus coordinates: $topo"
IFS=' ' read -r X Y _ < <(sed -n 's/.*"dims": \[\([0-9]*\), *\([0-9]*\), *\([0-9]*\)\].*/\1 \2 \3/p' \
	"$work/topoml.json")
k=$((X * Y + X + 1))	# c(k+1) at 1,1,1
one=$(narrow "c$((k + 1))")
if [ "$(echo "$one" | grep -c .)" != 1 ] ||
   ! echo "$one" | grep -qx "NodeName=c$((k + 1)) Coords=1,1,1"; then
	cluster_fail "scontrol show topology c$((k + 1)): '$one'"
fi
echo "ok: $one"

# The engine's fragmentation: the model's nodes the largest all-idle box
# cannot have.  One busy node c1: the largest box is the torus less the
# plane through c1 (X x Y x (Z-1) or the like), found here by trying every
# box of the torus, wrapping in every dimension.
cluster_cancel_all
id=$(cluster_submit -N 1 -w c1 -J f) || cluster_fail "f: sbatch"
cluster_job_wait_start "$id" >/dev/null ||
	cluster_fail "f (-w c1) did not start: $(cluster_job_reason "$id")"
largest=$(python3 - "$work/topoml.json" c1 <<'PY'
import itertools, json, sys
t = json.load(open(sys.argv[1]))
X, Y, Z = t["dims"]
pre, first = t["node_pattern"]["prefix"], t["node_pattern"]["first"]
busy = {int(h[len(pre):]) - first for h in sys.argv[2:]}
best = 0
for a, b, c in itertools.product(range(1, X + 1), range(1, Y + 1),
                                  range(1, Z + 1)):
    if a * b * c <= best:
        continue
    for x0, y0, z0 in itertools.product(range(X), range(Y), range(Z)):
        if all((x0 + i) % X + X * ((y0 + j) % Y + Y * ((z0 + l) % Z))
               not in busy for i in range(a) for j in range(b)
               for l in range(c)):
            best = a * b * c
            break
print(best)
PY
)
nodes=$((X * Y * $(sed -n 's/.*"dims": \[[0-9]*, *[0-9]*, *\([0-9]*\)\].*/\1/p' \
	"$work/topoml.json")))
want="topoml fragmentation: $((nodes - largest)) ($nodes nodes, $((nodes - 1)) idle, the largest job in one box: $largest)"
got=$(scontrol show topology | grep "^topoml fragmentation")
[ "$got" = "$want" ] || cluster_fail "c1 busy: '$got', want '$want'"
echo "ok: $got"

# The same nodes as a dragonfly: 4 groups of 4 routers of 4 nodes, global
# links listed one by one.  topoml.conf names it and slurmctld restarts
# (job f keeps c1), now with backfill's bf_topopt, which asks the topology
# plugin for the fragmentation of each stretch of its node space map
# (DebugFlags=Backfill,BackfillMap log it at verbose: Slurm's own view
# of the figure).
{
	echo '{ "family": "dragonfly", "groups": ['
	k=1
	for g in 0 1 2 3; do
		[ $g = 0 ] || echo ','
		printf ' { "name": "g%d", "routers": [' $g
		for r in 0 1 2 3; do
			[ $r = 0 ] || printf ','
			printf ' { "name": "g%dr%d", "nodes": "c[%d-%d]" }' \
				$g $r $k $((k + 3))
			k=$((k + 4))
		done
		printf ' ] }'
	done
	echo '], "global_links": [["g0", "g1", 2], ["g1", "g2", 1],'
	echo '  ["g2", "g3", 1], ["g3", "g0", 3], ["g0", "g2", 1]] }'
} >"$work/df.json"
printf 'TopologyFile=%s\nDebug=1\n' "$work/df.json" >"$work/topoml.conf"
CLUSTER_SLURMD=0 CLUSTER_CLOUD=65 CLUSTER_TOPOLOGY_PLUGIN=topology/topoml \
	CLUSTER_TOPOML_CONF=$work/topoml.conf \
	CLUSTER_CONF_EXTRA="SchedulerParameters=default_queue_depth=10000,sched_interval=1,sched_min_interval=0,bf_interval=1,bf_topopt_enable,bf_running_job_reserve
SlurmctldDebug=verbose
DebugFlags=Backfill,BackfillMap" cluster_write_conf
cluster_restart_ctld
pid=$(cat "$CLUSTER_DIR/run/slurmctld.pid")
# df_check.py JSON lines|frag FREE...|map: the dragonfly's group lines on
# stdin; the expected fragmentation line with FREE idle; BackfillMap's
# lines on stdin.  Fragmentation: the model's nodes the largest job on
# its fewest groups cannot have: the largest F(k) (the k groups with most
# free nodes) above S(k-1) (the k-1 largest groups).
cat >"$work/df_check.py" <<'PY'
import json, re, subprocess, sys
def hosts(h):
    return subprocess.run(["scontrol", "show", "hostnames", h],
                          capture_output=True, text=True).stdout.split()
t = json.load(open(sys.argv[1]))
grp = {g["name"]: ({r["name"] for r in g["routers"]},
                   {n for r in g["routers"] for n in hosts(r["nodes"])})
       for g in t["groups"]}
links = {}
for a, b, c in t["global_links"]:
    for x, y in ((a, b), (b, a)):
        links.setdefault(x, {})
        links[x][y] = max(links[x].get(y, 0), c)
nodes = set().union(*(n for _, n in grp.values()))
def frag(free):
    f = sorted((len(n & free) for _, n in grp.values()), reverse=True)
    s = sorted((len(n) for _, n in grp.values()), reverse=True)
    F = S = best = 0
    for fk, sk in zip(f, s):
        F += fk
        if not fk:
            break
        if F > S:
            best = max(best, F)
        S += sk
    return len(nodes) - best, best
if sys.argv[2] == "lines":
    seen = set()
    for line in sys.stdin:
        if not line.startswith("GroupName="):
            continue
        kv = dict(w.split("=", 1) for w in line.split())
        g = kv["GroupName"]
        peers = dict((p.split(":")[0], int(p.split(":")[1]))
                     for p in kv["Peers"].split(","))
        if (set(hosts(kv["Routers"])), set(hosts(kv["Nodes"]))) != grp[g]:
            sys.exit(f"{g}: routers or nodes differ: {line}")
        if peers != links[g] or int(kv["GlobalLinks"]) != sum(peers.values()):
            sys.exit(f"{g}: global links {links[g]}: {line}")
        seen.add(g)
    if seen != set(grp):
        sys.exit(f"groups listed: {sorted(seen)}, in the file: {sorted(grp)}")
    print(f"ok: {len(seen)} groups, their routers, nodes and global links")
elif sys.argv[2] == "frag":
    free = set(hosts(sys.argv[3])) & nodes
    f, l = frag(free)
    print(f"topoml fragmentation: {f} ({len(nodes)} nodes, {len(free)} idle,"
          f" the largest job in its fewest groups: {l})")
else:
    n = 0
    for line in sys.stdin:
        m = re.search(r" Nodes:(\S+) .*Fragmentation:(\d+)", line)
        if not m:
            continue
        want = frag(set(hosts(m.group(1))) & nodes)[0]
        if int(m.group(2)) != want:
            sys.exit(f"want Fragmentation:{want}: {line}")
        n += 1
    if not n:
        sys.exit("no Fragmentation: in slurmctld's log")
    print(f"ok: backfill's map ({n} stretch{'es' if n > 1 else ''}): the engine's fragmentation")
PY
topo=$(scontrol show topology 2>&1)
echo "$topo" | grep -q "^topoml model: dragonfly: 64 nodes, 4 groups" ||
	cluster_fail "dragonfly: scontrol show topology: $topo"
echo "$topo" | python3 "$work/df_check.py" "$work/df.json" lines ||
	cluster_fail "dragonfly: scontrol show topology: $topo"
# Half of g2 and g3 busy (nodes no job had: the cancelled ones are still
# powering down): g3's 8 free nodes cannot join a job on the fewest groups.
id=$(cluster_submit -N 16 -w "c[33-40,49-56]" -J h) ||
	cluster_fail "h: sbatch"
cluster_job_wait_start "$id" >/dev/null ||
	cluster_fail "h did not start: $(cluster_job_reason "$id")"
want=$(python3 "$work/df_check.py" "$work/df.json" frag \
	"$(sinfo -h -N -t idle -o %N | paste -sd, -)")
got=$(scontrol show topology | grep "^topoml fragmentation")
[ "$got" = "$want" ] || cluster_fail "dragonfly: '$got', want '$want'"
echo "ok: $got"
one=$(narrow c5)
if [ "$(echo "$one" | grep -c .)" != 1 ] ||
   ! echo "$one" | grep -q "^GroupName=g0 "; then
	cluster_fail "scontrol show topology c5: '$one'"
fi
if [ "$CLUSTER_SLURM_VERSION" -ge 2511 ]; then
	one=$(narrow g2r1 unit)
	echo "$one" | grep -q "^GroupName=g2 " ||
		cluster_fail "scontrol show topology unit=g2r1: '$one'"
fi
echo "ok: narrowed: ${one%% Nodes=*}"
# A job no stretch can hold keeps backfill mapping.
id=$(cluster_submit -N 65 -J g) || cluster_fail "g: sbatch"
for _ in $(seq 1 100); do	# a whole map, then the cycle's end
	awk '/Fragmentation:/ { m = 1 } m && /completed testing/ { ok = 1 }
		END { exit !ok }' "$log" && break
	sleep 0.1
done
grep "Fragmentation:" "$log" | python3 "$work/df_check.py" \
	"$work/df.json" map || cluster_fail "backfill's fragmentation"
_cluster_alive "$pid" || cluster_fail "slurmctld died"
echo "PASS: topology/topoml places on a torus from topoml.conf"
