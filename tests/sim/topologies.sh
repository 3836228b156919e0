# Sourced by the sim tests and compare.sh: write the 4096-node machines of
# the issue's targets into directory $1.
#   fattree.conf   3-level fat-tree, 128 leaves of 32 nodes, 8 middle
#                  switches of 16 leaves, one root (Slurm topology.conf)
#   dragonfly.json 16 groups x 16 routers x 16 nodes, all-to-all groups
#   torus.json     16x16x16 3D torus, wrap-around
# Node names c1..c4096 in leaf / router / x-fastest order.
sim_topologies() {
	awk 'BEGIN {
		for (l = 0; l < 128; l++)
			printf "SwitchName=l%d Nodes=c[%d-%d]\n", l, 32*l+1, 32*l+32
		for (m = 0; m < 8; m++)
			printf "SwitchName=m%d Switches=l[%d-%d]\n", m, 16*m, 16*m+15
		print "SwitchName=root Switches=m[0-7]"
	}' >"$1/fattree.conf"
	awk 'BEGIN {
		print "{ \"family\": \"dragonfly\", \"global_links\": \"all-to-all\","
		print "  \"groups\": ["
		n = 1
		for (g = 0; g < 16; g++) {
			printf "    { \"name\": \"g%d\", \"routers\": [", g
			for (r = 0; r < 16; r++) {
				printf "%s{ \"name\": \"g%dr%d\", \"nodes\": \"c[%d-%d]\" }", \
					r ? ", " : "", g, r, n, n + 15
				n += 16
			}
			printf "] }%s\n", g < 15 ? "," : ""
		}
		print "  ] }"
	}' >"$1/dragonfly.json"
	cat >"$1/torus.json" <<'JSON'
{ "family": "torus", "dims": [16, 16, 16], "wrap": [true, true, true],
  "node_pattern": { "prefix": "c", "first": 1, "order": "xyz" } }
JSON
}
