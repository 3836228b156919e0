#!/bin/bash
# Rewrite tests/fixtures/spank/expected/ from the current code (maintainers
# only: review every diff before committing -- these files are the spec).
#   tests/spank/regen_expected.sh BUILDDIR [REALDATA]
set -eu
B=${1:?build dir}
R=${2:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/realdata}
F=$(cd "$(dirname "$0")/../fixtures/spank" && pwd)
DUMP=$B/tests/spank/spank_dump
FAKE=$B/tests/spank/fakenvml.so
FAKER=$B/tests/spank/fakersmi.so
A8=0000:12:00.0,0000:13:00.0,0000:32:00.0,0000:33:00.0,0000:52:00.0,0000:53:00.0,0000:72:00.0,0000:73:00.0
B8=0000:12:00.0,0000:13:00.0,0000:22:00.0,0000:23:00.0,0000:42:00.0,0000:43:00.0,0000:52:00.0,0000:53:00.0
B4=0000:12:00.0,0000:13:00.0,0000:14:00.0,0000:15:00.0

# name xml tasks mode [sysfs|-] [nvml-mode|rsmi:MODE busids]
# (eas-tioga: 8 MI250X GCDs, xGMI peers recorded by hwloc, Slingshot
# NICs hsi0-3, each shared by the GCD pair of its host bridge; epyc-corona:
# 4 MI50 seen through OpenCL only, an IB HCA whose netdev is hsi0)
# Why a file expects what it does, where that is not obvious.
why() {
	case $1 in
	synth-2s8g4n.16.auto|real-eas-tioga.16.auto|synth-mi250x.16.auto|\
	real-coral-lassen.8.auto|real-epyc-corona.8.auto)
		echo "# why: more tasks than GPUs: blocks of consecutive local" \
			"ranks share a GPU and split its cores (as mpibind and" \
			"Slurm's --ntasks-per-gpu); on epyc-corona this is" \
			"mpibind's own answer" ;;
	real-eas-tioga.*)
		echo "# why: MI250X GCDs (class 0380, rsmiN with XGMIPeers: one" \
			"xGMI island) and Slingshot NICs hsi0-3 as cxi0-3, each" \
			"the NIC of the two GCDs on its host bridge;" \
			"ROCR_VISIBLE_DEVICES lists the step's GPUs in order" ;;
	real-epyc-corona.2.auto|real-epyc-corona.3.auto)
		echo "# why: fewer tasks than GPUs: a task also gets the" \
			"GPU-less NUMA domains of its GPUs' sockets, split" \
			"between the tasks there (mpibind's greedy mapping);" \
			"MI50s seen through OpenCL devices only" ;;
	real-epyc-corona.*)
		echo "# why: MI50s seen as AMD class 0300 devices with OpenCL" \
			"devices; hsi0 is the netdev of the IB HCA mlx5_0," \
			"not a Slingshot NIC" ;;
	real-pci-normalio.*)
		echo "# why: the AMD Radeon beside the Teslas is left out:" \
			"one GPU stack per node, NVIDIA's when there are both" ;;
	synth-mi250x.4.nvlink-rsmi-pairs)
		echo "# why: ROCm SMI (fake, xGMI in pairs) overrides the one" \
			"hive hwloc recorded: each task gets one pair" ;;
	synth-mi250x.*|synth-mi300x.*)
		echo "# why: AMD GPUs bound by PCI locality as NVIDIA's; the" \
			"NIC on a GPU's PCIe switch (Slingshot cxiN on MI250X," \
			"mlx5 on MI300X) is its NIC, GDR level PIX" ;;
	real-coral-lassen.4.auto)
		echo "# why: one task per GPU: its GPU, half of its socket's" \
			"cores (two GPUs per socket) and the HCA of its socket;" \
			"POWER9 has no PCIe switch between them, so GDR level PHB" ;;
	real-cts1-pascal.2.auto)
		echo "# why: both GPUs and the one HCA share a PCIe switch on" \
			"socket 0: each task gets a GPU, half of that socket's" \
			"cores (with SMT siblings) and the shared HCA, GDR PIX;" \
			"socket 1 has no GPU, its cores stay unbound" ;;
	real-g4dnmetal.4.auto)
		echo "# why: fewer tasks than GPUs: the two GPUs of one PCIe" \
			"switch per task with a quarter of the cores; the only" \
			"NIC (EFA rdmap197s0) is on socket 1, so socket 0's" \
			"tasks reach it through SYS, socket 1's through PHB" ;;
	real-g4dnmetal.8.auto)
		echo "# why: one task per GPU, cores split between the four" \
			"GPUs of each socket; the one EFA NIC is every task's," \
			"GDR SYS from socket 0, PHB from socket 1" ;;
	real-j3c053.2.auto)
		echo "# why: hwloc puts both GPUs on all cores, so the two" \
			"tasks split them in order (8 cores with SMT siblings" \
			"each); the one HCA is near GPU 0 (PHB), across the" \
			"sockets from GPU 1 (SYS)" ;;
	real-jrc0323.4.auto)
		echo "# why: one task per GPU: the cores of its GPU's NUMA" \
			"domain and the HCA on its PCIe switch (mlx5_N beside" \
			"GPU N), GDR PIX" ;;
	real-jrc0386.4.auto)
		echo "# why: as jrc0323, but the HCAs are numbered in another" \
			"order than the GPUs: the HCA follows PCI locality" \
			"(GPU 0 gets mlx5_1), not the index" ;;
	real-jwc09n003.2.auto)
		echo "# why: fewer tasks than GPUs: a task gets the two GPUs," \
			"the cores and the HCA of one socket" ;;
	real-jwc09n003.4.auto)
		echo "# why: one task per GPU: the two GPUs of a socket share" \
			"its HCA (PIX) and split its cores" ;;
	real-mel2001.4.auto)
		echo "# why: two HCAs for four GPUs: GPUs 1 and 2 have one on" \
			"their PCIe switch (PIX); GPUs 0 and 3 get the nearest" \
			"one, in another NUMA domain (SYS); cores from each" \
			"GPU's own NUMA domain" ;;
	real-nvidiaDGX2.16.auto)
		echo "# why: hwloc's DGX-2 test XML keeps 16 GPUs but only 4" \
			"cores and no HCA: four tasks per core, by the GPUs'" \
			"locality; no NIC, so no HCA and no GDR level" ;;
	real-power8gpudistances.4.auto)
		echo "# why: POWER8 with one GPU per NUMA node (hwloc's" \
			"distances test): each task gets its GPU's NUMA cores;" \
			"no HCA in the XML" ;;
	synth-1s4g0n.2.auto)
		echo "# why: no NVML and no HCA: GPUs in PCI order, two" \
			"neighbours per task, half of the cores each; compare" \
			"synth-1s4g0n.2.nvlink-pairs" ;;
	synth-1s4g0n.2.nvlink-pairs)
		echo "# why: NVML (fake, pairs4: NVLink pairs 0-2 and 1-3)" \
			"decides under nvlink: each task gets one NVLink pair," \
			"not the PCI neighbours auto gives" ;;
	synth-2s4g2n.4.auto)
		echo "# why: one core per socket, so two tasks share it;" \
			"mlx5_1's port 1 is down in the fake sysfs, so its" \
			"tasks use port 2 (mlx5_1:2)" ;;
	synth-2s8g4n.3.auto)
		echo "# why: 8 GPUs over 3 tasks: 3, 3 and 2 in PCI order;" \
			"task 1's GPUs span both sockets, so it gets all cores" \
			"and the HCAs of both its switches" ;;
	synth-2s8g4n.4.auto|synth-2s8g4n.8.auto)
		echo "# why: each task's GPUs on one PCIe switch with the IB" \
			"HCA there (GDR PIX; mlx5_1 by port 2, its port 1 is" \
			"down); mlx5_2, RoCE on the host bridge, is no GPU's" \
			"nearest" ;;
	synth-2s8g4n.4.nvlink-downlinks)
		echo "# why: NVML (fake, downlinks: every NVLink of GPUs 3" \
			"and 7 down) leaves one NVSwitch island of six GPUs;" \
			"tasks keep their GPUs inside an island, so 3 and 7" \
			"go together, and a task across sockets gets the cores" \
			"and HCAs of both sides" ;;
	esac
}

while read -r name xml tasks mode sysfs nvml busids; do
	[ -n "$name" ] || continue
	case $xml in
	realdata/*) path=$R/${xml#realdata/} ;;
	*) path=$F/$xml ;;
	esac
	[ -r "$path" ] || { echo "skip $name: $path absent"; continue; }
	args=()
	[ "${sysfs:--}" != - ] && args+=(-s "$F/$sysfs")
	out=$F/expected/$name
	{
		echo "# Expected binding of $tasks local tasks, --ml-gpu-bind=$mode"
		echo "# xml: $xml"
		echo "# tasks: $tasks"
		echo "# mode: $mode"
		why "$name"
		[ "${sysfs:--}" != - ] && echo "# sysfs: $sysfs"
		rsmi=
		case ${nvml:-} in
		rsmi:*)
			rsmi=${nvml#rsmi:}
			nvml=
			echo "# rsmi: $rsmi"
			echo "# rsmi_busids: $busids"
			args+=(-r "$FAKER")
			;;
		?*)
			echo "# nvml: $nvml"
			echo "# nvml_busids: $busids"
			args+=(-n "$FAKE")
			;;
		esac
		FAKE_NVML=${nvml:-} FAKE_NVML_BUSIDS=${busids:-} \
		FAKE_RSMI=$rsmi FAKE_RSMI_BUSIDS=${busids:-} \
			"$DUMP" "${args[@]}" "$path" "$tasks" "$mode" | grep -v '^#'
	} >"$out"
	echo "wrote $out"
done <<LIST
real-coral-lassen.4.auto realdata/hwloc_xml/mpibind_topo-xml_coral-lassen.xml 4 auto
real-coral-lassen.8.auto realdata/hwloc_xml/mpibind_topo-xml_coral-lassen.xml 8 auto
real-cts1-pascal.2.auto realdata/hwloc_xml/mpibind_topo-xml_cts1-pascal.xml 2 auto
real-g4dnmetal.8.auto realdata/hwloc_xml/mpibind_topo-xml_g4dnmetal.xml 8 auto
real-g4dnmetal.4.auto realdata/hwloc_xml/mpibind_topo-xml_g4dnmetal.xml 4 auto
real-nvidiaDGX2.16.auto realdata/hwloc_xml/hwloc_tests_nvidiaDGX2.xml 16 auto
real-power8gpudistances.4.auto realdata/hwloc_xml/hwloc_tests_power8gpudistances.xml 4 auto
real-pci-normalio.2.auto realdata/hwloc_xml/hwloc_tests_32em64t-2n8c2t-pci-normalio.xml 2 auto
real-jrc0386.4.auto realdata/hwloc_xml/psmgmt_topo.jrc0386.xml 4 auto
real-jrc0323.4.auto realdata/hwloc_xml/psmgmt_topo.jrc0323.xml 4 auto
real-jwc09n003.4.auto realdata/hwloc_xml/psmgmt_topo.jwc09n003.xml 4 auto
real-jwc09n003.2.auto realdata/hwloc_xml/psmgmt_topo.jwc09n003.xml 2 auto
real-mel2001.4.auto realdata/hwloc_xml/psmgmt_topo.mel2001.xml 4 auto
real-eas-tioga.8.auto realdata/hwloc_xml/mpibind_topo-xml_eas-tioga.xml 8 auto
real-eas-tioga.4.nvlink realdata/hwloc_xml/mpibind_topo-xml_eas-tioga.xml 4 nvlink
real-eas-tioga.16.auto realdata/hwloc_xml/mpibind_topo-xml_eas-tioga.xml 16 auto
real-epyc-corona.4.auto realdata/hwloc_xml/mpibind_topo-xml_epyc-corona.xml 4 auto
real-epyc-corona.8.auto realdata/hwloc_xml/mpibind_topo-xml_epyc-corona.xml 8 auto
real-epyc-corona.2.auto realdata/hwloc_xml/mpibind_topo-xml_epyc-corona.xml 2 auto
real-epyc-corona.3.auto realdata/hwloc_xml/mpibind_topo-xml_epyc-corona.xml 3 auto
real-j3c053.2.auto realdata/hwloc_xml/psmgmt_topo.j3c053.xml 2 auto
synth-2s8g4n.8.auto hwloc/synth-2s8g4n.xml 8 auto sysfs
synth-2s8g4n.4.auto hwloc/synth-2s8g4n.xml 4 auto sysfs
synth-2s8g4n.3.auto hwloc/synth-2s8g4n.xml 3 auto sysfs
synth-2s8g4n.16.auto hwloc/synth-2s8g4n.xml 16 auto -
synth-2s8g4n.4.nvlink-downlinks hwloc/synth-2s8g4n.xml 4 nvlink sysfs downlinks $B8
synth-2s4g2n.4.auto hwloc/synth-2s4g2n.xml 4 auto sysfs
synth-1s4g0n.2.auto hwloc/synth-1s4g0n.xml 2 auto -
synth-1s4g0n.2.nvlink-pairs hwloc/synth-1s4g0n.xml 2 nvlink - pairs4 $B4
synth-mi250x.8.auto hwloc/synth-mi250x.xml 8 auto -
synth-mi250x.4.auto hwloc/synth-mi250x.xml 4 auto -
synth-mi250x.16.auto hwloc/synth-mi250x.xml 16 auto -
synth-mi250x.3.auto hwloc/synth-mi250x.xml 3 auto -
synth-mi250x.4.nvlink-rsmi-pairs hwloc/synth-mi250x.xml 4 nvlink - rsmi:pairs $A8
synth-mi300x.8.auto hwloc/synth-mi300x.xml 8 auto -
synth-mi300x.2.auto hwloc/synth-mi300x.xml 2 auto -
LIST
