/*
 * Hardware model of one node for the topoml SPANK plugin: GPUs (NVIDIA,
 * AMD), HCAs and Slingshot NICs and their ports, CPU locality and PCI
 * distance.  Pure C (hwloc, no Slurm), so the tests drive it with hwloc
 * XML of real machines, a fake NVML, a fake ROCm SMI and a fake sysfs
 * tree.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SPANK_HW_H
#define TOPOML_SPANK_HW_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdio.h>
#include <hwloc.h>

#define HW_BUSID_LEN	16	/* "dddd:bb:dd.f" + NUL */
#define HW_NAME_LEN	64
#define HW_MAX_PORTS	4

/* PCI path between two devices, NCCL's names and order. */
enum hw_path {
	HW_PATH_UNKNOWN = 0,
	HW_PATH_PIX,		/* one PCI switch / bridge between them */
	HW_PATH_PXB,		/* several bridges, no host bridge */
	HW_PATH_PHB,		/* through a host bridge (same CPU/NUMA) */
	HW_PATH_SYS,		/* across the CPU interconnect */
};

enum hw_link_layer { HW_LL_UNKNOWN = 0, HW_LL_IB, HW_LL_ETH };

/* What drives a NIC: verbs (IB/RoCE HCA, NCCL_IB_HCA) or HPE Slingshot
 * through libfabric's cxi provider (RCCL/NCCL's OFI plugin). */
enum hw_nic_kind { HW_NIC_VERBS = 0, HW_NIC_CXI };

#define HW_VENDOR_NVIDIA	0x10de
#define HW_VENDOR_AMD		0x1002

struct hw_port {
	int num;
	int state;		/* 4 = ACTIVE as in sysfs / ibverbs, 0 = unknown */
	int link_layer;		/* enum hw_link_layer */
	int gid_index;		/* RoCE v2 IPv4 GID, -1 unknown */
};

struct hw_nic {
	char name[HW_NAME_LEN];		/* mlx5_0, cxi0 */
	char netdev[HW_NAME_LEN];	/* ib0 / eth2 / hsn0, "" if none */
	int kind;			/* enum hw_nic_kind */
	char busid[HW_BUSID_LEN];
	hwloc_bitmap_t cpuset;		/* CPUs local to it */
	int nports;
	struct hw_port ports[HW_MAX_PORTS];
};

struct hw_gpu {
	char busid[HW_BUSID_LEN];
	int index;			/* PCI bus order = NVML/CUDA PCI_BUS_ID
					 * order = ROCm's (KFD) order */
	hwloc_bitmap_t cpuset;		/* CPUs local to it */
	int island;			/* NVLink / xGMI island, -1 unknown */
	int vendor;			/* HW_VENDOR_NVIDIA or HW_VENDOR_AMD */
};

struct hw_node {
	int ngpus;
	struct hw_gpu *gpus;
	int nnics;
	struct hw_nic *nics;
	int *path;			/* ngpus x nnics enum hw_path */
	hwloc_bitmap_t cpuset;		/* every PU of the node */
	hwloc_bitmap_t *cores;		/* ncores PU sets, in order */
	int ncores;
	hwloc_bitmap_t *pkgs;		/* npkgs PU sets of the packages */
	int npkgs;
	bool nvml;			/* islands came from NVML or ROCm SMI */
	char source[256];		/* where the model came from */
};

/* hw_topo.c */
struct hw_node *hw_node_new(void);
void hw_node_free(struct hw_node *n);
/* Build from a loaded hwloc topology (I/O objects kept).  0 or -1 + err. */
int hw_node_from_hwloc(struct hw_node *n, hwloc_topology_t topo,
		       char *err, size_t errlen);
/* Load hwloc from an XML file (NULL: discover this machine) with every
 * I/O object kept.  NULL + err on failure. */
hwloc_topology_t hw_hwloc_load(const char *xml, char *err, size_t errlen);
/* The same from NAME in DIRFD, a regular file owned by OWNER, opened
 * without following a symlink or blocking (ml_open_owned). */
hwloc_topology_t hw_hwloc_loadat(int dirfd, const char *name, uid_t owner,
				 char *err, size_t errlen);
/* The model as a small text file and back (the task launch path reads it;
 * no hwloc parsing there).  0 or -1 + err ("FILE:LINE: ...").
 * hw_node_write is an ml_write_atomic fill callback (ARG: the node);
 * saving replaces the file atomically (random temporary name, rename).
 * Loading opens only a regular file owned by OWNER (hw_node_load: by the
 * caller), never a symlink, FIFO or device. */
int hw_node_write(FILE *f, void *node);
int hw_node_saveat(const struct hw_node *n, int dirfd, const char *name,
		   char *err, size_t errlen);
int hw_node_save(const struct hw_node *n, const char *path, char *err,
		 size_t errlen);
int hw_node_loadat(struct hw_node *n, int dirfd, const char *path,
		   uid_t owner, char *err, size_t errlen);
int hw_node_load(struct hw_node *n, const char *path, char *err,
		 size_t errlen);
void hw_node_print(const struct hw_node *n, FILE *f);
const char *hw_path_name(enum hw_path p);
int hw_path_parse(const char *s);
int hw_nic_index(const struct hw_node *n, const char *name);
int hw_gpu_by_busid(const struct hw_node *n, const char *busid);
/* "0000:07:00.0" from NVML's "00000000:07:00.0" etc; 0 or -1. */
int hw_busid_normalize(const char *in, char *out, size_t outlen);

/* hw_nvml.c: NVLink islands through dlopen(libnvidia-ml.so.1).  Returns 0
 * when islands were set, -1 + err when NVML is absent or unusable (islands
 * stay -1: the caller degrades to PCI locality). */
/*
 * GPU islands by union-find: up[] holds a parent per GPU (and per extra
 * slot a caller needs, e.g. an NVSwitch), each its own at first; unions
 * keep the lowest index as root, so hw_islands_number() can number the
 * islands densely in GPU order.  Shared by hwloc, NVML and ROCm SMI.
 */
int hw_uf_find(int *up, int x);
void hw_uf_union(int *up, int a, int b);
void hw_islands_number(struct hw_node *n, int *up);
int hw_nvml_islands(struct hw_node *n, const char *libpath, char *err,
		    size_t errlen);

/*
 * hw_nvml.c: what NVML says now of each GPU it sees, for --ml-preflight
 * (preflight.c judges it).  Counters NVML cannot give (no ECC on the
 * board, no page retirement on Ampere and newer) stay -1.
 */
#define HW_MAX_GPUS	64
/* Clocks event (throttle) reasons that hold a GPU down: NVML's bits. */
#define HW_CLOCKS_HW_SLOWDOWN		0x8ULL
#define HW_CLOCKS_SW_THERMAL		0x20ULL
#define HW_CLOCKS_HW_THERMAL		0x40ULL
#define HW_CLOCKS_HW_POWER_BRAKE	0x80ULL
struct hw_gpu_health {
	char busid[HW_BUSID_LEN];	/* normalized, "" when lost */
	int index;			/* NVML's index */
	int lost;			/* NVML's error for the device, 0 ok */
	long long ecc_unc;		/* uncorrectable ECC errors (volatile) */
	int retire_pending;		/* retired pages pending: 1, 0, -1 */
	int remap_pending;		/* row remapping pending: 1, 0, -1 */
	int remap_failed;		/* row remapping failed: 1, 0, -1 */
	long long clocks;		/* clocks event reasons, -1 unknown */
	int links, links_up;		/* NVLink links that answer, up */
};
/* 0 with *n GPUs in out (at most max), or -1 + err (no NVML, no driver). */
int hw_nvml_health(const char *libpath, struct hw_gpu_health *out, int max,
		   int *n, char *err, size_t errlen);

/* All GPUs are AMD's: the node speaks ROCm (ROCR_VISIBLE_DEVICES). */
bool hw_node_amd(const struct hw_node *n);

/* hw_rsmi.c: xGMI islands of AMD GPUs through dlopen(librocm_smi64.so),
 * as hw_nvml_islands (GPUs linked by xGMI share an island). */
int hw_rsmi_islands(struct hw_node *n, const char *libpath, char *err,
		    size_t errlen);

/* hw_ib.c: HCA ports.  hw_ib_sysfs reads ROOT/class/infiniband/<hca>/ports
 * (ROOT is /sys normally, a fake tree in tests); hw_ib_verbs asks
 * libibverbs and returns 0 with no change when it has no devices (ENOSYS).
 * Ports nobody knows about stay "port 1, state unknown". */
int hw_ib_sysfs(struct hw_node *n, const char *root, char *err,
		size_t errlen);
int hw_ib_verbs(struct hw_node *n, char *err, size_t errlen);
void hw_ib_default_ports(struct hw_node *n);
/*
 * HCA ports now, for --ml-preflight: state and rate of each port of the
 * model's verbs NICs as ROOT/class/infiniband/<hca>/ports/<n> says.  A
 * port whose directory is gone has state 0.  Returns the count (at most
 * max).
 */
struct hw_port_health {
	char hca[HW_NAME_LEN];
	int port;
	int state;		/* 4 ACTIVE, 0 unreadable */
	int link_layer;		/* enum hw_link_layer */
	long rate;		/* Mb/s, 0 unknown */
	char rate_text[48];	/* sysfs's words: "200 Gb/sec (4X HDR)" */
};
int hw_ib_port_health(const struct hw_node *n, const char *root,
		      struct hw_port_health *out, int max);
/* sysfs's rate ("100 Gb/sec (4X EDR)", "53.125 Gb/sec (1X HDR)") in
 * Mb/s: 0, or -1 when s is not one. */
int hw_ib_rate_parse(const char *s, long *mbps);

/* nccl_topo.c: NCCL topology XML (NCCL_TOPO_FILE) from hwloc. */
int hw_write_nccl_topo(hwloc_topology_t topo, const struct hw_node *n,
		       FILE *f);

#endif
