#!/bin/bash
# A longer shared-node sequence for issue 18 item 5: COUNT jobs of an MTech
# JobLogs excerpt (ANL Theta or Mira, "Job_name Submit Runtime Nodes Comment
# Perc"), from job FIRST on, written as SWF with each job's node count read
# as processors: processors = ceil(nodes / K).  With K=4 and nodes of 4
# cores a Theta job of 1-8 nodes asks for 1-2 cores (shares a node), 16
# nodes one whole node's cores, 64 nodes 16 cores, 512 nodes the 128 cores
# of the replay machines.  The logs give no requested time: the SWF's
# requested time is the run time (replay_shared.sh turns it into --time in
# whole minutes).  Output goes to stdout; it is derived from the log and is
# not to be stored in the project.
#
#   theta_cores.sh JOBLOG FIRST COUNT [K]   (K = 4)
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -eu
[ $# -ge 3 ] || { echo "usage: $0 JOBLOG FIRST COUNT [K]" >&2; exit 2; }
log=$1 first=$2 count=$3 k=${4:-4}
[ -r "$log" ] || { echo "$0: cannot read $log" >&2; exit 1; }
echo "; derived from $(basename "$log"): jobs $first to $((first + count - 1)), processors = ceil(nodes / $k), requested time = run time"
awk -v first="$first" -v count="$count" -v k="$k" -v f="$log" '
	NR == 1 {
		if ($1 != "Job_name" || $4 != "Nodes") {
			printf "%s:1: not an MTech JobLogs header\n", f > "/dev/stderr"
			exit 1
		}
		next
	}
	{
		if (NF != 6 || $2 !~ /^[0-9]+$/ || $3 !~ /^[0-9]+$/ ||
		    $4 !~ /^[0-9]+$/) {
			printf "%s:%d: expected six fields: name submit runtime nodes comment perc\n", f, NR > "/dev/stderr"
			bad = 1
			exit 1
		}
		i++
		if (i < first) next
		if (i >= first + count) exit
		p = int(($4 + k - 1) / k)
		n++
		printf "%d %d -1 %d %d -1 -1 %d %d -1 1 -1 -1 -1 -1 -1 -1 -1\n",
			n, $2, $3, p, p, $3
	}
	END { if (bad) exit 1 }' "$log"
