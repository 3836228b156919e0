#!/bin/bash
# topoml sim --avoid (HealthPolicy=avoid in the simulator): under topoml
# no job gets an avoided node while it fits elsewhere, a job that needs
# them gets them, the baselines place as without it, and a name the
# topology lacks is a usage error.
set -u
topoml=${TOP_BUILDDIR:-../..}/contrib/topoml
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_sim_avoid.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 8 nodes, 2 leaves of 4.
printf 'SwitchName=l0 Nodes=c[1-4]\nSwitchName=l1 Nodes=c[5-8]\n' >"$tmp/t.conf"
printf 'SwitchName=top Switches=l[0-1]\n' >>"$tmp/t.conf"
cat >"$tmp/tr.csv" <<'CSV'
submit,nodes,runtime,walltime
0,4,100,100
1,2,10,10
200,8,10,10
300,4,10,10
CSV
run() {
	"$topoml" sim -q -t "$tmp/t.conf" -T "$tmp/tr.csv" "$@" --jobs - \
		>"$tmp/out" || fail "sim $*"
}
# job N's nodes under policy P
nodes() { awk -v p="$1" -v j="$2" '$1 == p && $2 == j { print $6 }' "$tmp/out"; }

run -p topoml
[ "$(nodes topoml 2)" = "c[1-4]" ] ||
	fail "without --avoid: job 2 on $(nodes topoml 2), want c[1-4]"
run -p topoml,slurm-tree --avoid 'c[1-2]'
for j in 2 3 5; do
	case "$(nodes topoml $j)" in
	*c1* | *c2* | *"c[1"* | "") fail "--avoid: job $j on $(nodes topoml $j)" ;;
	esac
done
[ "$(nodes topoml 4)" = "c[1-8]" ] ||
	fail "--avoid: the 8-node job on $(nodes topoml 4)"
cp "$tmp/out" "$tmp/avoid"
run -p slurm-tree
diff <(grep '^slurm-tree ' "$tmp/avoid") <(grep '^slurm-tree ' "$tmp/out") \
	>/dev/null ||
	fail "--avoid changed slurm-tree"
"$topoml" sim -q -t "$tmp/t.conf" -T "$tmp/tr.csv" --avoid 'x1' \
	>/dev/null 2>&1
[ $? = 2 ] || fail "--avoid x1: exit status not 2"
echo "PASS: sim --avoid: avoided nodes only for the job that needs them"
