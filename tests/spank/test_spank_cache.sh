#!/bin/bash
# topoml.so runs as root in slurmd and slurmstepd: its cache_dir must be
# root's, and nothing a user controls may steer what root writes or reads.
#  1. symlinks planted at <cache_dir>/n1.{xml,nccl_topo.xml,model}, to
#     root-only files: slurmd replaces the links, the files are unchanged;
#     a FIFO there never blocks a step;
#  2. a user's SLURMD_NODENAME, and SLURM_STEP_NODELIST sent by a user's own
#     client, do not choose the model slurmstepd reads;
#  3. a cache_dir owned by a user, writable by others, or below a user's
#     directory is refused (slurmd's log says why), nothing is written
#     there, slurmd keeps running and jobs run unbound, node not drained;
#  4. slurmd without -N: the model is named by slurm.conf's node name.
# Jobs run as an unprivileged user the test creates.
. "${TESTS_DIR:-$(dirname "$0")/..}/spank/spank_lib.sh"

U=topomlcache
spank_start spank-cache
cluster_user $U
out=$CLUSTER_DIR/out
log1=$CLUSTER_DIR/log/slurmd-n1.log
cd "$CLUSTER_DIR" || exit 1

as_user() {
	runuser -u $U -- env SLURM_CONF="$SLURM_CONF" "$@"
}

# Node NODE is in service (not drained, not down).
node_ok() {
	local st
	st=$(sinfo -h -N -n "$1" -o '%t' | head -n 1)
	case $st in
	idle | mix | alloc | comp) return 0 ;;
	esac
	cluster_fail "node $1 is '$st' after $2: $(scontrol show node "$1" |
		grep -i reason)"
}

restart_n1() {
	cluster_slurmd_stop n1
	: >"$log1"
	cluster_slurmd_start n1
	cluster_wait_idle
}

# Root-only files a link may point at (content and mode are checked).
sec=$CLUSTER_DIR/secret
mkdir -m 700 "$sec"
for f in xml nccl model; do
	echo "root only $f $RANDOM" >"$sec/$f"
	chmod 600 "$sec/$f"
done
sec_sum=$(cd "$sec" && md5sum xml nccl model)
secret_unchanged() {
	[ "$(cd "$sec" && md5sum xml nccl model)" = "$sec_sum" ] ||
		cluster_fail "$1: a root-only file was written"
	for f in xml nccl model; do
		[ "$(stat -c '%a %U' "$sec/$f")" = "600 root" ] ||
			cluster_fail "$1: $sec/$f is now $(stat -c '%a %U' \
				"$sec/$f")"
	done
}

# 1. Links planted in the (root's) cache_dir before slurmd starts.
cluster_slurmd_stop n1
ln -sfn "$sec/xml" "$SPANK_CACHE/n1.xml"
ln -sfn "$sec/nccl" "$SPANK_CACHE/n1.nccl_topo.xml"
ln -sfn "$sec/model" "$SPANK_CACHE/n1.model"
: >"$log1"
cluster_slurmd_start n1
cluster_wait_idle
for i in $(seq 1 300); do
	[ -f "$SPANK_CACHE/n1.model" ] && [ ! -L "$SPANK_CACHE/n1.model" ] &&
		break
	sleep 0.1
done
secret_unchanged "slurmd start over planted symlinks"
for f in n1.xml n1.nccl_topo.xml n1.model; do
	[ -f "$SPANK_CACHE/$f" ] && [ ! -L "$SPANK_CACHE/$f" ] &&
		[ "$(stat -c '%a %U' "$SPANK_CACHE/$f")" = "644 root" ] ||
		cluster_fail "$f: not a 0644 root file: $(ls -l "$SPANK_CACHE")"
done
grep -q '<topology' "$SPANK_CACHE/n1.xml" &&
	grep -q '<system version="1">' "$SPANK_CACHE/n1.nccl_topo.xml" &&
	grep -qx 'version 1' "$SPANK_CACHE/n1.model" ||
	cluster_fail "cache files not written: $(ls -l "$SPANK_CACHE")"
# Temporary files are renamed or removed: nothing else in the directory.
extra=$(ls -A "$SPANK_CACHE" | grep -v '^n[12]\.\(xml\|nccl_topo\.xml\|model\)$')
[ -z "$extra" ] || cluster_fail "left in cache_dir: $extra"
as_user timeout 60 srun -l -w n1 -N1 -n2 --ml-gpu-bind=auto --ml-nccl=auto \
	bash -c "$SPANK_TASK" >"$out" 2>"$out.err" ||
	cluster_fail "srun after the links: $(cat "$out.err")"
[ "$(spank_var "$out" 0 CUDA_VISIBLE_DEVICES)" = 0,1,2,3 ] ||
	cluster_fail "task not bound after slurmd rewrote the cache"
echo "ok: planted symlinks replaced, root-only files unchanged"

# A FIFO in place of a cache file (root's here; a user's mistake reads the
# same) blocks no step: the admin's hwloc_xml still describes the node.
rm -f "$SPANK_CACHE/n2.model" "$SPANK_CACHE/n2.xml"
mkfifo -m 644 "$SPANK_CACHE/n2.model" "$SPANK_CACHE/n2.xml"
as_user timeout 60 srun -l -w n2 -N1 -n1 --ml-gpu-bind=auto --ml-nccl=auto \
	bash -c "$SPANK_TASK" >"$out" 2>"$out.err" ||
	cluster_fail "srun with FIFOs in cache_dir: $(cat "$out.err")"
[ "$(spank_var "$out" 0 CUDA_VISIBLE_DEVICES)" = 0,1,2,3 ] ||
	cluster_fail "FIFO: the admin's XML was not used"
node_ok n2 "FIFOs in cache_dir"
echo "ok: FIFOs in cache_dir block nothing"

# 2. A decoy model (no HCA) root owns: a user's SLURMD_NODENAME, and a
# SLURM_STEP_NODELIST a modified client sends, must not make slurmstepd
# read it, nor a path outside cache_dir.
forge=$TOP_BUILDDIR/tests/spank/forge_env.so
[ -f "$forge" ] || cluster_fail "$forge not built"
cp "$forge" "$CLUSTER_DIR/forge_env.so"
chmod 755 "$CLUSTER_DIR/forge_env.so"
sed -e '/^nic /d' -e 's/^path.*/path/' "$SPANK_CACHE/n1.model" \
	>"$SPANK_CACHE/decoy.model"
mkdir -p "$CLUSTER_DIR/up"
cp "$SPANK_CACHE/decoy.model" "$CLUSTER_DIR/up/x.model"
for name in decoy ../up/x; do
	: >"$out.err"
	as_user env SLURMD_NODENAME=$name \
		FORGE_ENV="SLURM_STEP_NODELIST=$name|SLURMD_NODENAME=$name" \
		LD_PRELOAD="$CLUSTER_DIR/forge_env.so" timeout 60 \
		srun -l -w n1 -N1 -n1 --ml-gpu-bind=auto --ml-nccl=auto \
		bash -c "$SPANK_TASK" >"$out" 2>"$out.err" ||
		cluster_fail "srun with forged names: $(cat "$out.err")"
	grep -q "forge_env: SLURM_STEP_NODELIST=$name" "$out.err" ||
		cluster_fail "the shim did not forge the step's environment"
	# The forged list did reach slurmstepd: it names MASTER_ADDR, which
	# is the job's own business.
	[ "$(spank_var "$out" 0 MASTER_ADDR)" = "$name" ] ||
		cluster_fail "forged SLURM_STEP_NODELIST not seen by slurmstepd"
	# The real n1 model has HCAs (one task: all GPUs, both HCAs); the
	# decoy has none, so no NCCL_IB_HCA.
	[ "$(spank_var "$out" 0 NCCL_IB_HCA)" = "=mlx5_0:1,mlx5_1:2" ] ||
		cluster_fail "SLURMD_NODENAME/SLURM_STEP_NODELIST=$name chose the model: $(grep 'NCCL\|CUDA' "$out")"
done
echo "ok: the job's SLURMD_NODENAME / SLURM_STEP_NODELIST choose no path"

# 3. cache_dir that root must not trust.
cp "$CLUSTER_DIR/plugstack.conf" "$out.plugstack"
mkdir -m 755 "$CLUSTER_DIR/ucache" "$CLUSTER_DIR/wcache" "$CLUSTER_DIR/udir"
chown $U "$CLUSTER_DIR/ucache" "$CLUSTER_DIR/udir"
chmod 777 "$CLUSTER_DIR/wcache"
mkdir -m 755 "$CLUSTER_DIR/udir/cache"
for bad in "ucache:$CLUSTER_DIR/ucache is not owned by root (uid $(id -u $U))" \
	"wcache:$CLUSTER_DIR/wcache is writable by anybody" \
	"udir/cache:$CLUSTER_DIR/udir is not owned by root"; do
	dir=$CLUSTER_DIR/${bad%%:*}
	why=${bad#*:}
	# The issue's attack: the user plants links to root-only files.
	[ "$(stat -c %U "$dir")" = $U ] &&
		as_user ln -s "$sec/xml" "$dir/n1.xml"
	[ "$(stat -c %U "$dir")" = root ] && ln -s "$sec/xml" "$dir/n1.xml"
	# Without hwloc_xml= a binding could only come from the cache.
	sed -e "s|cache_dir=[^ ]*|cache_dir=$dir|" -e "s|hwloc_xml=[^ ]*||" \
		"$out.plugstack" >"$CLUSTER_DIR/plugstack.conf"
	restart_n1
	for i in $(seq 1 100); do
		grep -q "topoml: cache_dir refused" "$log1" && break
		sleep 0.1
	done
	grep -qF "topoml: cache_dir refused: $dir: $why" "$log1" ||
		cluster_fail "$dir: slurmd's log does not say '$why': $(grep topoml "$log1")"
	secret_unchanged "cache_dir $dir"
	[ "$(ls -A "$dir")" = n1.xml ] && [ -L "$dir/n1.xml" ] ||
		cluster_fail "something was written in $dir: $(ls -lA "$dir")"
	as_user timeout 60 srun -l -w n1 -N1 -n2 --ml-gpu-bind=auto \
		--ml-nccl=auto bash -c "$SPANK_TASK" >"$out" 2>"$out.err" ||
		cluster_fail "srun with cache_dir $dir: $(cat "$out.err")"
	! grep -q "^ *[01]: CUDA_VISIBLE_DEVICES=" "$out" ||
		cluster_fail "tasks bound from an untrusted cache_dir"
	[ "$(spank_var "$out" 1 RANK)" = 1 ] ||
		cluster_fail "no torch variables with cache_dir $dir"
	grep -qF "topoml: cache_dir not used: $dir: $why" "$log1" ||
		cluster_fail "slurmstepd did not say why: $(grep topoml "$log1")"
	[ "$(ls -A "$dir")" = n1.xml ] ||
		cluster_fail "slurmstepd wrote in $dir: $(ls -lA "$dir")"
	node_ok n1 "cache_dir $dir"
	rm -f "$dir/n1.xml"
	echo "ok: cache_dir $dir refused ($why)"
done
cp "$out.plugstack" "$CLUSTER_DIR/plugstack.conf"
restart_n1
[ -f "$SPANK_CACHE/n1.model" ] || cluster_fail "no model after restore"

# 4. slurmd without -N names itself from slurm.conf (NodeHostname=localhost
# here: the first such node, n1); the model gets that name, not the host's.
cluster_slurmd_stop n1
rm -f "$SPANK_CACHE/n1.model"
slurmd -f "$SLURM_CONF" >>"$CLUSTER_DIR/log/slurmd.out" 2>&1 ||
	cluster_fail "slurmd without -N did not start"
cluster_wait_idle
for i in $(seq 1 100); do
	[ -s "$SPANK_CACHE/n1.model" ] && break
	sleep 0.1
done
[ -s "$SPANK_CACHE/n1.model" ] ||
	cluster_fail "slurmd without -N: no n1.model: $(ls "$SPANK_CACHE")"
[ ! -e "$SPANK_CACHE/$(hostname -s).model" ] ||
	cluster_fail "slurmd without -N: model named after the host"
as_user timeout 60 srun -l -w n1 -N1 -n1 --ml-gpu-bind=auto bash -c \
	"$SPANK_TASK" >"$out" 2>"$out.err" ||
	cluster_fail "srun on slurmd without -N: $(cat "$out.err")"
[ "$(spank_var "$out" 0 CUDA_VISIBLE_DEVICES)" = 0,1,2,3 ] ||
	cluster_fail "slurmd without -N: task not bound"
echo "ok: slurmd without -N: the model has slurm.conf's node name"
echo "PASS: cache_dir and the node name are root's"
