# shellcheck shell=bash
#
# A real local Slurm cluster for topoml's tests, benchmarks and quick-start:
# munged, slurmctld and N slurmd (multiple-slurmd on localhost) plus M
# emulated CLOUD nodes that never boot, all in one private directory with
# the project's freshly built plugins first in PluginDir.
#
#   . tests/lib/cluster.sh
#   CLUSTER_SLURMD=8 CLUSTER_CLOUD=1024 cluster_start mytest
#   srun -N8 hostname          # SLURM_CONF is exported
#   cluster_stop               # also runs on EXIT, INT and TERM
#
# Parameters (environment, read by cluster_start):
#   CLUSTER_SLURMD        real slurmd nodes n[1-N] (default 8)
#   CLUSTER_CLOUD         emulated CLOUD nodes c[1-M] (default 0)
#   CLUSTER_CPUS          CPUs of every node (default 4)
#   CLUSTER_NODE_EXTRA    extra NodeName= parameters of the real nodes
#   CLUSTER_TOPOLOGY      topology.conf to install beside slurm.conf
#   CLUSTER_TOPOLOGY_PLUGIN  default topology/tree with a topology file,
#                         topology/none without
#   CLUSTER_TOPOLOGY_PARAM   TopologyParam= (e.g. dragonfly)
#   CLUSTER_SELECT        cons_tres (default) or topoml
#   CLUSTER_SELECT_PARAMS SelectTypeParameters= (default CR_Core)
#   CLUSTER_TOPOML_CONF   file copied to topoml.conf beside slurm.conf
#   CLUSTER_SPANK         1: load topoml.so through plugstack.conf
#   CLUSTER_SPANK_ARGS    arguments of topoml.so in plugstack.conf
#   CLUSTER_CONF_EXTRA    extra slurm.conf lines (later lines win)
#   CLUSTER_PARTITION_EXTRA  parameters of partition main (default
#                         OverSubscribe=EXCLUSIVE; empty: nodes are shared)
#   CLUSTER_GRES_CONF     gres.conf content
#   TOP_BUILDDIR          build tree whose plugins are used
#   CLUSTER_SLURM_PREFIX  another Slurm release (contrib/slurm-release.sh
#                         prints its prefix): its daemons, clients and
#                         plugins instead of the installed ones
#   CLUSTER_INSTALLED     1: the installed plugins only (packages): no copy
#                         from TOP_BUILDDIR, PluginDir is Slurm's own and
#                         plugstack.conf includes /etc/slurm/plugstack.conf.d
#   CLUSTER_TOPOLOGY_YAML topology.yaml to install beside slurm.conf (25.05+)
# Sets: CLUSTER_DIR, SLURM_CONF (exported), CLUSTER_PLUGINDIR, CLUSTER_PORT,
#   CLUSTER_SLURM_VERSION (MMmm of the daemons: 2205, 2605 ...).
#
# The one helper library of the cluster tests (tests/README.md); only what
# one feature alone uses lives beside its tests (select/lib.sh,
# spank/spank_lib.sh).
#   The cluster: cluster_start, cluster_stop, cluster_wait_idle,
#     cluster_restart_ctld, cluster_slurmd_stop NODE, cluster_slurmd_start
#     NODE, cluster_write_conf (rewrite slurm.conf from the parameters),
#     cluster_nodes_allocated (host list of nodes in use), cluster_settle.
#   What a test needs (exit 77 without): cluster_need_root,
#     cluster_need_files FILE..., cluster_need_release MMmm WHAT.
#   Users and files: cluster_user NAME (an unprivileged user), cluster_as
#     USER CMD... (a client command as USER), cluster_tmpdir VAR NAME (a
#     scratch directory removed with the cluster).
#   Jobs: cluster_submit ARGS... (a sleeping batch job), cluster_job_state,
#     cluster_job_reason, cluster_job_comment (SystemComment),
#     cluster_job_wait_start, cluster_job_wait_end, cluster_job_wait_gone,
#     cluster_cancel_all (every job, until the queue is empty).
#   Checks: cluster_fail MSG, cluster_no_drain WHAT, cluster_same_nodes A B,
#     cluster_field KEY LINE.
#
# SPDX-License-Identifier: GPL-2.0-or-later

# Sourced once (select/lib.sh and spank/spank_lib.sh source it too).
[ -z "${_CLUSTER_SH_LOADED:-}" ] || return 0
_CLUSTER_SH_LOADED=1
if [ -n "${CLUSTER_SLURM_PREFIX:-}" ]; then
	export PATH=$CLUSTER_SLURM_PREFIX/bin:$CLUSTER_SLURM_PREFIX/sbin:$PATH
	CLUSTER_SLURM_PLUGINDIR=${CLUSTER_SLURM_PLUGINDIR:-$CLUSTER_SLURM_PREFIX/lib/slurm}
fi
CLUSTER_SLURM_PLUGINDIR=${CLUSTER_SLURM_PLUGINDIR:-/usr/lib/$(gcc \
	-print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/slurm-wlm}
# The running release as MMmm (2205, 2411, 2605): slurm.conf differs.
CLUSTER_SLURM_VERSION=$(slurmctld -V 2>/dev/null |
	awk '{ split($2, v, "."); printf "%d%02d", v[1], v[2] }')
: "${CLUSTER_SLURM_VERSION:=2205}"
_cluster_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${TOP_BUILDDIR:=$(cd "$_cluster_lib_dir/../.." && pwd)}"

cluster_log() { echo "cluster: $*" >&2; }

cluster_fail() {
	echo "FAIL: $*" >&2
	if [ -n "${CLUSTER_DIR:-}" ] && [ -d "$CLUSTER_DIR/log" ]; then
		echo "--- slurmctld.log (tail)" >&2
		tail -n 30 "$CLUSTER_DIR/log/slurmctld.log" >&2 2>/dev/null
	fi
	exit 1
}

# An unprivileged user for user-facing tests, created when missing; the
# cluster directory is made traversable so that its clients find the conf.
cluster_user() {
	local u=$1
	if ! id "$u" >/dev/null 2>&1; then
		useradd -M -d /nonexistent -s /bin/sh "$u" 2>/dev/null ||
			id "$u" >/dev/null 2>&1 ||
			{ echo "SKIP: useradd $u failed" >&2; exit 77; }
	fi
	[ -n "${CLUSTER_DIR:-}" ] && chmod 755 "$CLUSTER_DIR"
	return 0
}

# Wait until no process of the pid file runs (or it is only a zombie).
_cluster_kill_pidfile() {
	local f=$1 pid i
	[ -f "$f" ] || return 0
	pid=$(cat "$f" 2>/dev/null)
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for i in $(seq 1 100); do
		_cluster_alive "$pid" || break
		[ "$i" = 50 ] && { kill -KILL "$pid" 2>/dev/null || true; }
		sleep 0.1
	done
	rm -f "$f"
}

_cluster_alive() {
	local st
	[ -r "/proc/$1/stat" ] || return 1
	st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
	[ -n "$st" ] && [ "$st" != Z ]
}

# All descendants of a process (slurmstepd and the tasks of a slurmd).
_cluster_descendants() {
	local p c
	for p in "$@"; do
		for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do
			echo "$c"
			_cluster_descendants "$c"
		done
	done
	return 0
}

_cluster_port_free() {
	! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# A base port with CLUSTER_SLURMD + 1 free ports above it.  Clusters that
# start at the same time each claim a slot of 64 ports with an atomic mkdir
# (released by cluster_stop; a slot whose owner died is taken over).  Slots
# lie below the kernel's ephemeral range: srun and slurmstepd listen on
# ephemeral ports, and one of them on a slurmd's port keeps that node down.
CLUSTER_SLOTS=${CLUSTER_SLOTS:-/tmp/topoml-cluster-slots}
_cluster_pick_port() {
	local slot base p ok owner eph nslots
	mkdir -p "$CLUSTER_SLOTS"
	[ "$CLUSTER_SLURMD" -le 62 ] || cluster_fail "CLUSTER_SLURMD > 62"
	eph=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
	[ "${eph:-0}" -gt 12000 ] 2>/dev/null || eph=32768
	nslots=$(((eph - 10000) / 64))
	for slot in $(seq $(($$ % nslots)) $((nslots - 1))) \
		$(seq 0 $(($$ % nslots))); do
		base=$((10000 + slot * 64))
		# Not torch's MASTER_PORT range (topoml's default 29500-29599).
		[ $base -le 29599 ] && [ $((base + 63)) -ge 29500 ] && continue
		if ! mkdir "$CLUSTER_SLOTS/$slot" 2>/dev/null; then
			owner=$(cat "$CLUSTER_SLOTS/$slot/pid" 2>/dev/null)
			# No pid yet: just claimed by a cluster starting now.
			[ -z "$owner" ] || _cluster_alive "$owner" && continue
			rm -rf "$CLUSTER_SLOTS/$slot"
			mkdir "$CLUSTER_SLOTS/$slot" 2>/dev/null || continue
		fi
		echo $$ >"$CLUSTER_SLOTS/$slot/pid"
		ok=1
		for p in $(seq "$base" $((base + CLUSTER_SLURMD + 1))); do
			_cluster_port_free "$p" || { ok=0; break; }
		done
		if [ $ok = 1 ]; then
			CLUSTER_SLOT=$CLUSTER_SLOTS/$slot
			CLUSTER_PORT=$base
			return 0
		fi
		rm -rf "$CLUSTER_SLOTS/$slot"
	done
	return 1
}

_cluster_install_plugins() {
	local so
	mkdir -p "$CLUSTER_PLUGINDIR"
	[ "${CLUSTER_INSTALLED:-0}" = 1 ] && return 0
	for so in select_plugin/.libs/select_topoml.so \
		select_plugin/.libs/topology_topoml.so spank/.libs/topoml.so; do
		if [ -f "$TOP_BUILDDIR/$so" ]; then
			cp -f "$TOP_BUILDDIR/$so" "$CLUSTER_PLUGINDIR/"
		fi
	done
}

cluster_write_conf() {
	local d=$CLUSTER_DIR host topo_plugin n
	host=$(hostname -s)
	topo_plugin=${CLUSTER_TOPOLOGY_PLUGIN:-topology/none}
	if [ -n "${CLUSTER_TOPOLOGY:-}" ]; then
		cp -f "$CLUSTER_TOPOLOGY" "$d/topology.conf"
		topo_plugin=${CLUSTER_TOPOLOGY_PLUGIN:-topology/tree}
	fi
	if [ -n "${CLUSTER_TOPOML_CONF:-}" ]; then
		cp -f "$CLUSTER_TOPOML_CONF" "$d/topoml.conf"
	fi
	rm -f "$d/topology.yaml"
	if [ -n "${CLUSTER_TOPOLOGY_YAML:-}" ]; then
		cp -f "$CLUSTER_TOPOLOGY_YAML" "$d/topology.yaml"
		chmod 644 "$d/topology.yaml"
	fi
	cat >"$d/slurm.conf" <<EOF
# Generated by tests/lib/cluster.sh
ClusterName=topoml
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$CLUSTER_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.socket
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmdPidFile=$d/run/slurmd-%n.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
PluginDir=$([ "${CLUSTER_INSTALLED:-0}" = 1 ] || echo "$CLUSTER_PLUGINDIR:")$CLUSTER_SLURM_PLUGINDIR
PlugStackConfig=$d/plugstack.conf
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
$([ "$CLUSTER_SLURM_VERSION" -lt 2411 ] &&
	echo JobAcctGatherType=jobacct_gather/none)
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=default_queue_depth=10000,sched_interval=1,sched_min_interval=0,bf_interval=1
SelectType=select/${CLUSTER_SELECT:-cons_tres}
SelectTypeParameters=${CLUSTER_SELECT_PARAMS:-CR_Core}
TopologyPlugin=$topo_plugin
${CLUSTER_TOPOLOGY_PARAM:+TopologyParam=$CLUSTER_TOPOLOGY_PARAM}
MaxJobCount=100000
MinJobAge=2
KillWait=2
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=30
MessageTimeout=20
SuspendProgram=/bin/true
ResumeProgram=/bin/true
SuspendTime=600
SuspendTimeout=1
ResumeTimeout=65000
ResumeRate=0
SuspendRate=0
SlurmctldParameters=power_save_interval=1,power_save_min_interval=0
PrivateData=cloud
EOF
	# Power saving is for the emulated nodes: ResumeProgram=/bin/true
	# never wakes a real slurmd, so a --keep cluster's real nodes would
	# sleep after SuspendTime and the next job hang in CONFIGURING.
	[ "$CLUSTER_SLURMD" -gt 0 ] &&
		echo "SuspendExcNodes=n[1-$CLUSTER_SLURMD]" >>"$d/slurm.conf"
	if [ "$CLUSTER_SLURMD" -gt 0 ]; then
		# Node nI listens on 127.0.0.I: one loopback address each,
		# so a node's address tells which node it is.
		echo "NodeName=n[1-$CLUSTER_SLURMD] NodeHostname=localhost" \
			"NodeAddr=127.0.0.[1-$CLUSTER_SLURMD]" \
			"Port=[$((CLUSTER_PORT + 1))-$((CLUSTER_PORT + CLUSTER_SLURMD))]" \
			"CPUs=${CLUSTER_CPUS:-4} ${CLUSTER_NODE_EXTRA:-}" \
			"State=UNKNOWN" >>"$d/slurm.conf"
	fi
	if [ "${CLUSTER_CLOUD:-0}" -gt 0 ]; then
		echo "NodeName=c[1-$CLUSTER_CLOUD] NodeHostname=localhost" \
			"NodeAddr=127.0.0.1 Port=9 CPUs=${CLUSTER_CPUS:-4}" \
			"State=CLOUD" >>"$d/slurm.conf"
	fi
	n=""
	[ "$CLUSTER_SLURMD" -gt 0 ] && n="n[1-$CLUSTER_SLURMD]"
	if [ "${CLUSTER_CLOUD:-0}" -gt 0 ]; then
		n="${n:+$n,}c[1-$CLUSTER_CLOUD]"
	fi
	echo "PartitionName=main Nodes=$n Default=YES MaxTime=INFINITE" \
		"State=UP ${CLUSTER_PARTITION_EXTRA-OverSubscribe=EXCLUSIVE}" \
		>>"$d/slurm.conf"
	[ -n "${CLUSTER_CONF_EXTRA:-}" ] &&
		printf '%s\n' "$CLUSTER_CONF_EXTRA" >>"$d/slurm.conf"
	[ -n "${CLUSTER_GRES_CONF:-}" ] &&
		printf '%s\n' "$CLUSTER_GRES_CONF" >"$d/gres.conf"
	# 24.11+ start cgroup plugins in slurmd even with proctrack/linuxproc;
	# this host's cgroup v1 tree does not suit them.
	[ "$CLUSTER_SLURM_VERSION" -ge 2411 ] &&
		echo "CgroupPlugin=disabled" >"$d/cgroup.conf"
	: >"$d/plugstack.conf"
	if [ "${CLUSTER_INSTALLED:-0}" = 1 ]; then
		# What Debian's /etc/slurm/plugstack.conf says: the packages'
		# drop-ins.
		echo "include /etc/slurm/plugstack.conf.d/*.conf" \
			>"$d/plugstack.conf"
	elif [ "${CLUSTER_SPANK:-0}" = 1 ]; then
		echo "required $CLUSTER_PLUGINDIR/topoml.so ${CLUSTER_SPANK_ARGS:-}" \
			>"$d/plugstack.conf"
	fi
	chmod 644 "$d"/*.conf
}

_cluster_start_munge() {
	local d=$CLUSTER_DIR/munge i
	mkdir -p "$d"
	chmod 755 "$d"
	dd if=/dev/urandom of="$d/munge.key" bs=1024 count=1 2>/dev/null
	chmod 400 "$d/munge.key"
	munged --force --socket="$d/munge.socket" --key-file="$d/munge.key" \
		--pid-file="$d/munged.pid" --log-file="$d/munged.log" \
		--seed-file="$d/munged.seed" ||
		cluster_fail "munged did not start (see $d/munged.log)"
	for i in $(seq 1 50); do
		[ -S "$d/munge.socket" ] && break
		sleep 0.1
	done
	chmod 777 "$d/munge.socket" 2>/dev/null
}

_cluster_start_ctld() {
	local i
	slurmctld -f "$SLURM_CONF" ${1:-} >>"$CLUSTER_DIR/log/slurmctld.out" \
		2>&1 || cluster_fail "slurmctld did not start"
	for i in $(seq 1 300); do
		scontrol ping 2>/dev/null | grep -q "is UP" && return 0
		[ -f "$CLUSTER_DIR/run/slurmctld.pid" ] &&
			! _cluster_alive "$(cat "$CLUSTER_DIR/run/slurmctld.pid")" &&
			cluster_fail "slurmctld exited"
		sleep 0.1
	done
	cluster_fail "slurmctld did not answer"
}

cluster_slurmd_start() {
	mkdir -p "$CLUSTER_DIR/spool/$1"
	slurmd -N "$1" -f "$SLURM_CONF" >>"$CLUSTER_DIR/log/slurmd.out" 2>&1 ||
		cluster_fail "slurmd $1 did not start"
}

cluster_slurmd_stop() {
	_cluster_kill_pidfile "$CLUSTER_DIR/run/slurmd-$1.pid"
}

# Wait until every real node is idle (or allocated/mixed: in service).
cluster_wait_idle() {
	local i up
	for i in $(seq 1 ${1:-600}); do
		up=$(sinfo -h -N -n "n[1-$CLUSTER_SLURMD]" -o '%t' 2>/dev/null |
			grep -cE '^(idle|alloc|mix)$')
		[ "$up" -ge "$CLUSTER_SLURMD" ] && return 0
		sleep 0.1
	done
	sinfo -N >&2
	for i in $(sinfo -h -N -n "n[1-$CLUSTER_SLURMD]" -o '%N %t' |
		awk '$2 !~ /^(idle|alloc|mix)$/ { print $1 }' | sort -u); do
		echo "--- slurmd-$i.log (tail)" >&2
		tail -n 15 "$CLUSTER_DIR/log/slurmd-$i.log" >&2 2>/dev/null
	done
	cluster_fail "nodes not idle"
}

cluster_start() {
	local name=${1:-test} i
	CLUSTER_SLURMD=${CLUSTER_SLURMD:-8}
	CLUSTER_CLOUD=${CLUSTER_CLOUD:-0}
	[ "$(id -u)" = 0 ] || { echo "cluster: needs root" >&2; return 77; }
	CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/topoml-$name.XXXXXX")
	chmod 755 "$CLUSTER_DIR"
	mkdir -p "$CLUSTER_DIR"/{state,spool,run,log,plugins}
	CLUSTER_PLUGINDIR=$CLUSTER_DIR/plugins
	_cluster_pick_port || cluster_fail "no free ports"
	SLURM_CONF=$CLUSTER_DIR/slurm.conf
	export SLURM_CONF CLUSTER_DIR
	trap cluster_stop EXIT
	trap 'cluster_stop; exit 130' INT TERM
	_cluster_install_plugins
	cluster_write_conf
	_cluster_start_munge
	_cluster_start_ctld -c
	for i in $(seq 1 "$CLUSTER_SLURMD"); do
		cluster_slurmd_start "n$i"
	done
	[ "$CLUSTER_SLURMD" -gt 0 ] && cluster_wait_idle
	cluster_log "up in $CLUSTER_DIR: $CLUSTER_SLURMD slurmd," \
		"$CLUSTER_CLOUD cloud nodes, port $CLUSTER_PORT"
}

cluster_restart_ctld() {
	_cluster_kill_pidfile "$CLUSTER_DIR/run/slurmctld.pid"
	_cluster_start_ctld "${1:-}"
}

# Host list of the nodes running jobs now (for `topoml place --busy`).
cluster_nodes_allocated() {
	squeue -h -t R,CF -o '%N' | paste -sd, -
}

# slurmstepd processes of this cluster: slurmd detaches them (their parent
# is init), but each keeps the cluster's slurmd log open.
_cluster_stepds() {
	_cluster_procs_in "$1" slurmstepd
}

# Processes (named $2, or any of Slurm's and munge's daemons) holding a
# file under $1 open.
_cluster_procs_in() {
	local p
	for p in $(pgrep -x "${2:-slurmctld|slurmd|slurmstepd|slurmscriptd|munged}"); do
		ls -l "/proc/$p/fd" 2>/dev/null | grep -q " -> $1/" && echo "$p"
	done
	return 0	# callers may run under set -e
}

cluster_stop() {
	local d=${CLUSTER_DIR:-} f pids=""
	[ -n "$d" ] && [ -d "$d/run" ] || { _cluster_rm_tmpdirs; return 0; }
	trap - EXIT INT TERM
	for f in "$d"/run/slurmd-*.pid; do
		[ -f "$f" ] && pids="$pids $(cat "$f")"
	done
	# slurmstepd and tasks outlive slurmd: collect them first.  So does
	# slurmctld's slurmscriptd when slurmctld is killed (a slow stop).
	[ -f "$d/run/slurmctld.pid" ] &&
		pids="$pids $(cat "$d/run/slurmctld.pid")"
	pids="$(_cluster_stepds "$d") $pids"
	pids="$pids $(_cluster_descendants $pids)"
	for f in "$d"/run/slurmd-*.pid "$d/run/slurmctld.pid"; do
		_cluster_kill_pidfile "$f"
	done
	for f in $pids; do
		kill -KILL "$f" 2>/dev/null || true
	done
	# Last, whatever still holds a file of this cluster open (a daemon
	# restarted by the test whose pid file was overwritten).
	for f in $(_cluster_procs_in "$d"); do
		kill -KILL "$f" 2>/dev/null || true
	done
	_cluster_kill_pidfile "$d/munge/munged.pid"
	[ -n "${CLUSTER_SLOT:-}" ] && rm -rf "$CLUSTER_SLOT"
	if [ -n "${CLUSTER_KEEP:-}" ]; then
		cluster_log "kept $d"
	else
		rm -rf "$d"
	fi
	CLUSTER_DIR=
	_cluster_rm_tmpdirs
}

# ---- What a test needs: each skips the test (exit 77) without it.

cluster_need_root() {
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
}

# cluster_need_files FILE...: built plugins, programs, interpreters.
cluster_need_files() {
	local f
	for f in "$@"; do
		[ -e "$f" ] || { echo "SKIP: $f missing"; exit 77; }
	done
}

# cluster_need_release MMmm WHAT: daemons of Slurm MM.mm or newer.
cluster_need_release() {
	if [ "$CLUSTER_SLURM_VERSION" -lt "$1" ]; then
		echo "SKIP: $2 needs Slurm ${1:0:2}.${1:2:2}+" \
			"(this is $CLUSTER_SLURM_VERSION)"
		exit 77
	fi
}

# ---- Users and scratch files

# cluster_as USER CMD...: a client command as USER, on this cluster.
cluster_as() {
	local u=$1
	shift
	runuser -u "$u" -- env SLURM_CONF="$SLURM_CONF" "$@"
}

# cluster_tmpdir VAR NAME: a directory every user can read (/tmp/topoml-
# NAME.XXXXXX) in VAR, removed by cluster_stop (kept with CLUSTER_KEEP).
_CLUSTER_TMPDIRS=()
cluster_tmpdir() {
	local dir
	dir=$(mktemp -d "${TMPDIR:-/tmp}/topoml-$2.XXXXXX") ||
		cluster_fail "mktemp $2"
	chmod 755 "$dir"
	_CLUSTER_TMPDIRS+=("$dir")
	printf -v "$1" '%s' "$dir"
	# before cluster_start sets it (which keeps it)
	trap cluster_stop EXIT
}

_cluster_rm_tmpdirs() {
	[ ${#_CLUSTER_TMPDIRS[@]} -gt 0 ] || return 0
	if [ -n "${CLUSTER_KEEP:-}" ]; then
		cluster_log "kept ${_CLUSTER_TMPDIRS[*]}"
	else
		rm -rf "${_CLUSTER_TMPDIRS[@]}"
	fi
	_CLUSTER_TMPDIRS=()
}

# ---- Jobs

# cluster_submit ARGS...: sbatch a sleeping job; prints its id.
cluster_submit() {
	sbatch --parsable -o /dev/null "$@" --wrap 'sleep 100000'
}

# cluster_job_state ID: its state, COMPLETED and the like too until
# MinJobAge (empty once slurmctld forgot it; squeue -j shows no ended job).
cluster_job_state() {
	scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' |
		cut -d= -f2
}

# cluster_job_reason ID: "STATE REASON".
cluster_job_reason() {
	squeue -h -j "$1" -o '%T %r' 2>/dev/null
}

# cluster_job_comment ID: its SystemComment (select/topoml's part).
cluster_job_comment() {
	scontrol show job "$1" | sed -n 's/^ *SystemComment=//p'
}

# cluster_job_wait_start ID [TENTHS]: until the job holds nodes (30 s);
# prints them.
cluster_job_wait_start() {
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

# cluster_job_wait_end ID [SECONDS]: until the job ended and holds no node
# (60 s); prints its final state ("gone" once slurmctld forgot it).
cluster_job_wait_end() {
	local s
	for _ in $(seq 1 $((${2:-60} * 10))); do
		s=$(cluster_job_state "$1")
		case "$s" in
		"") echo gone; return 0 ;;
		COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | \
			OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED)
			echo "$s"
			return 0
			;;
		esac
		sleep 0.1
	done
	echo "$s"
	return 1
}

# cluster_job_wait_gone ID [SECONDS]: until the job left squeue (ended
# and purged after MinJobAge; 60 s).
cluster_job_wait_gone() {
	for _ in $(seq 1 $((${2:-60} * 10))); do
		[ -z "$(squeue -h -j "$1" -o %T 2>/dev/null)" ] && return 0
		sleep 0.1
	done
	return 1
}

# cluster_cancel_all [SECONDS]: cancel every job and wait until the queue
# is empty (30 s), so that the next check starts on an idle machine; fails
# the test naming the jobs left.
cluster_cancel_all() {
	local ids left
	ids=$(squeue -h -o %i 2>/dev/null)
	# shellcheck disable=SC2086
	[ -z "$ids" ] || scancel $ids 2>/dev/null
	for _ in $(seq 1 $((${1:-30} * 10))); do
		left=$(squeue -h -o '%i' 2>/dev/null)
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	left=$(squeue -h -o '%i %T %r' 2>/dev/null | paste -sd,)
	cluster_fail "cancel all: jobs left after ${1:-30} s: $left"
}

# ---- Checks

# cluster_no_drain WHAT: no node drained or down after WHAT.
cluster_no_drain() {
	local bad
	bad=$(sinfo -h -N -o '%N %t %E' | awk '$2 ~ /drain|drng|down/')
	[ -z "$bad" ] || cluster_fail "$1: nodes drained or down: $bad"
}

# cluster_same_nodes A B: the same nodes (host lists in any order or
# compression)?
cluster_same_nodes() {
	local a b
	a=$(scontrol show hostnames "$1" | sort | paste -sd,)
	b=$(scontrol show hostnames "$2" | sort | paste -sd,)
	[ "$a" = "$b" ]
}

# cluster_field KEY LINE: the value of KEY=VALUE in LINE.
cluster_field() {
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -1
}

# cluster_settle: until the nodes of ended jobs are back (no allocated or
# completing node outside the running jobs; 10 s).
cluster_settle() {
	local want have
	for _ in $(seq 1 100); do
		want=$(squeue -h -t R,CF -o '%D' |
			awk '{ s += $1 } END { print s + 0 }')
		have=$(sinfo -h -N -o '%N %t' | sort -u |
			awk '$2 !~ /^idle[~#]?$/' | wc -l)
		[ "$want" = "$have" ] && return 0
		sleep 0.1
	done
	cluster_fail "nodes did not settle: $have busy, $want allocated"
}
