/*
 * Node hardware model from hwloc (discovery or an XML export), and its
 * small text cache read in the task launch path.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw.h"
#include "secure.h"

#define HW_XML_MAX	(64L << 20)	/* larger is no hwloc export */

static const char *const _path_names[] = { "UNKNOWN", "PIX", "PXB", "PHB",
					   "SYS" };

const char *hw_path_name(enum hw_path p)
{
	if ((int)p < 0 || p > HW_PATH_SYS)
		return "UNKNOWN";
	return _path_names[p];
}

int hw_path_parse(const char *s)
{
	for (int i = 0; i <= HW_PATH_SYS; i++)
		if (!strcasecmp(s, _path_names[i]))
			return i;
	return -1;
}

struct hw_node *hw_node_new(void)
{
	struct hw_node *n = calloc(1, sizeof(*n));

	if (n)
		n->cpuset = hwloc_bitmap_alloc();
	return n;
}

static void _node_clear(struct hw_node *n)
{
	for (int i = 0; i < n->ngpus; i++)
		hwloc_bitmap_free(n->gpus[i].cpuset);
	for (int i = 0; i < n->nnics; i++)
		hwloc_bitmap_free(n->nics[i].cpuset);
	for (int i = 0; i < n->ncores; i++)
		hwloc_bitmap_free(n->cores[i]);
	for (int i = 0; i < n->npkgs; i++)
		hwloc_bitmap_free(n->pkgs[i]);
	free(n->pkgs);
	n->pkgs = NULL;
	n->npkgs = 0;
	free(n->gpus);
	free(n->nics);
	free(n->cores);
	free(n->path);
	n->gpus = NULL;
	n->nics = NULL;
	n->cores = NULL;
	n->path = NULL;
	n->ngpus = n->nnics = n->ncores = 0;
	hwloc_bitmap_zero(n->cpuset);
	n->nvml = false;
	n->source[0] = '\0';
}

void hw_node_free(struct hw_node *n)
{
	if (!n)
		return;
	_node_clear(n);
	hwloc_bitmap_free(n->cpuset);
	free(n);
}

int hw_busid_normalize(const char *in, char *out, size_t outlen)
{
	unsigned int dom, bus, dev, fn;

	if (sscanf(in, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4 ||
	    dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7)
		return -1;
	snprintf(out, outlen, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return 0;
}

int hw_nic_index(const struct hw_node *n, const char *name)
{
	for (int i = 0; i < n->nnics; i++)
		if (!strcmp(n->nics[i].name, name))
			return i;
	return -1;
}

int hw_gpu_by_busid(const struct hw_node *n, const char *busid)
{
	char norm[HW_BUSID_LEN];

	if (hw_busid_normalize(busid, norm, sizeof(norm)))
		return -1;
	for (int i = 0; i < n->ngpus; i++)
		if (!strcmp(n->gpus[i].busid, norm))
			return i;
	return -1;
}

/*
 * hwloc 3.x exports say version="3.0", which hwloc 2.x refuses although it
 * reads the rest: retry such a buffer as "2.0".  BUF is NUL-terminated.
 */
static int _load_v3_buf(hwloc_topology_t topo, char *buf, size_t len)
{
	static const char v3[] = "<topology version=\"3.0\">";
	char *p = strstr(buf, v3);

	if (!p)
		return -1;
	p[sizeof(v3) - 6] = '2';	/* the "3" of "3.0" */
	if (hwloc_topology_set_xmlbuffer(topo, buf, (int)len + 1) ||
	    hwloc_topology_load(topo))
		return -1;
	return 0;
}

/* The whole of FD (at most HW_XML_MAX), NUL-terminated; NULL + errno. */
static char *_read_all(int fd, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap), *nb;
	ssize_t r;

	while (buf) {
		if (n + 1 >= cap) {
			if (cap >= (size_t)HW_XML_MAX) {
				free(buf);
				errno = EFBIG;
				return NULL;
			}
			cap *= 2;
			if (!(nb = realloc(buf, cap)))
				break;
			buf = nb;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (r == 0) {
			buf[n] = '\0';
			*len = n;
			return buf;
		}
		n += (size_t)r;
	}
	free(buf);
	return NULL;
}

static int _load_v3(hwloc_topology_t topo, const char *xml)
{
	int fd = open(xml, O_RDONLY | O_CLOEXEC | O_NONBLOCK), rc = -1;
	size_t len;
	char *buf;

	if (fd < 0)
		return -1;
	if ((buf = _read_all(fd, &len)))
		rc = _load_v3_buf(topo, buf, len);
	close(fd);
	free(buf);
	return rc;
}

hwloc_topology_t hw_hwloc_load(const char *xml, char *err, size_t errlen)
{
	hwloc_topology_t topo = NULL;

	if (hwloc_topology_init(&topo)) {
		snprintf(err, errlen, "hwloc_topology_init: %s",
			 strerror(errno));
		return NULL;
	}
	hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (xml && access(xml, R_OK)) {
		snprintf(err, errlen, "%s: %s", xml, strerror(errno));
		goto fail;
	}
	if (xml && hwloc_topology_set_xml(topo, xml)) {
		snprintf(err, errlen, "%s: not a usable hwloc XML file (%s)",
			 xml, strerror(errno));
		goto fail;
	}
	if (hwloc_topology_load(topo)) {
		int e = errno;

		if (xml) {
			hwloc_topology_destroy(topo);
			if (hwloc_topology_init(&topo))
				return NULL;
			hwloc_topology_set_io_types_filter(topo,
				HWLOC_TYPE_FILTER_KEEP_ALL);
			if (!_load_v3(topo, xml))
				return topo;
		}
		snprintf(err, errlen, "%s: hwloc could not load it (%s)",
			 xml ? xml : "this machine", strerror(e));
		goto fail;
	}
	return topo;
fail:
	hwloc_topology_destroy(topo);
	return NULL;
}

hwloc_topology_t hw_hwloc_loadat(int dirfd, const char *name, uid_t owner,
				 char *err, size_t errlen)
{
	hwloc_topology_t topo = NULL;
	char *buf = NULL;
	size_t len = 0;
	int fd, e;

	fd = ml_open_owned(dirfd, name, O_RDONLY, 0, owner);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", name, errno == EPERM ?
			 "not a regular file of its owner" : strerror(errno));
		return NULL;
	}
	buf = _read_all(fd, &len);
	e = errno;
	close(fd);
	if (!buf) {
		snprintf(err, errlen, "%s: %s", name, strerror(e));
		return NULL;
	}
	if (hwloc_topology_init(&topo)) {
		snprintf(err, errlen, "hwloc_topology_init: %s",
			 strerror(errno));
		free(buf);
		return NULL;
	}
	hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (!hwloc_topology_set_xmlbuffer(topo, buf, (int)len + 1) &&
	    !hwloc_topology_load(topo))
		goto out;
	hwloc_topology_destroy(topo);
	if (hwloc_topology_init(&topo)) {
		topo = NULL;
		goto out;
	}
	hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (_load_v3_buf(topo, buf, len)) {
		snprintf(err, errlen, "%s: hwloc could not load it", name);
		hwloc_topology_destroy(topo);
		topo = NULL;
	}
out:
	free(buf);
	return topo;
}

static void _busid(hwloc_obj_t pci, char *out, size_t len)
{
	snprintf(out, len, "%04x:%02x:%02x.%x", pci->attr->pcidev.domain,
		 pci->attr->pcidev.bus, pci->attr->pcidev.dev,
		 pci->attr->pcidev.func);
}

static hwloc_bitmap_t _local_cpus(hwloc_topology_t topo, hwloc_obj_t o)
{
	hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(topo, o);
	hwloc_bitmap_t s = hwloc_bitmap_dup(a && a->cpuset ? a->cpuset :
				hwloc_topology_get_topology_cpuset(topo));

	hwloc_bitmap_and(s, s, hwloc_topology_get_topology_cpuset(topo));
	return s;
}

/* Bridges strictly between o and its ancestor top. */
static int _bridges_below(hwloc_obj_t o, hwloc_obj_t top)
{
	int n = 0;

	for (o = o->parent; o && o != top; o = o->parent)
		if (o->type == HWLOC_OBJ_BRIDGE)
			n++;
	return n;
}

/*
 * NCCL's path type between two PCI objects.  Walk parents by hand:
 * hwloc_get_common_ancestor_obj() does not handle I/O objects.
 */
static enum hw_path _pci_path(hwloc_topology_t topo, hwloc_obj_t a,
			      hwloc_obj_t b)
{
	hwloc_obj_t x, y, lca = NULL;

	for (x = a; x && !lca; x = x->parent)
		for (y = b; y; y = y->parent)
			if (x == y) {
				lca = x;
				break;
			}
	if (!lca)
		return HW_PATH_SYS;
	if (lca->type == HWLOC_OBJ_PCI_DEVICE)
		return HW_PATH_PIX;
	if (lca->type == HWLOC_OBJ_BRIDGE) {
		if (lca->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST)
			return HW_PATH_PHB;
		/* A switch shows as an upstream port with one downstream
		 * port per device: that is still NCCL's single switch. */
		if (_bridges_below(a, lca) <= 1 && _bridges_below(b, lca) <= 1)
			return HW_PATH_PIX;
		return HW_PATH_PXB;
	}
	if (hwloc_get_non_io_ancestor_obj(topo, a) == lca &&
	    hwloc_get_non_io_ancestor_obj(topo, b) == lca &&
	    hwloc_bitmap_weight(lca->nodeset) <= 1)
		return HW_PATH_PHB;
	return HW_PATH_SYS;
}

static int _cmp_gpu(const void *a, const void *b)
{
	return strcmp(((const struct hw_gpu *)a)->busid,
		      ((const struct hw_gpu *)b)->busid);
}

static int _cmp_nic(const void *a, const void *b)
{
	return strverscmp(((const struct hw_nic *)a)->name,
			  ((const struct hw_nic *)b)->name);
}

bool hw_node_amd(const struct hw_node *n)
{
	for (int i = 0; i < n->ngpus; i++)
		if (n->gpus[i].vendor != HW_VENDOR_AMD)
			return false;
	return n->ngpus > 0;
}

/* An OS device ROCm or OpenCL made for an AMD GPU (rsmiN, openclXdY). */
static bool _amd_gpu_osdev(hwloc_obj_t pci)
{
	for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE && c->name &&
		    (!strncmp(c->name, "rsmi", 4) ||
		     !strncmp(c->name, "opencl", 6)))
			return true;
	return false;
}

/*
 * A GPU: NVIDIA's VGA/3D controllers; AMD's VGA/3D/display controllers
 * (MI250X GCDs are class 0x0380) and processing accelerators (MI300X,
 * 0x1200), or any AMD device ROCm or OpenCL lists.
 */
static int _gpu_vendor(hwloc_obj_t o)
{
	unsigned cls = o->attr->pcidev.class_id;

	if (o->attr->pcidev.vendor_id == HW_VENDOR_NVIDIA &&
	    (cls == 0x0302 || cls == 0x0300))
		return HW_VENDOR_NVIDIA;
	if (o->attr->pcidev.vendor_id == HW_VENDOR_AMD &&
	    (cls == 0x0300 || cls == 0x0302 || cls == 0x0380 ||
	     cls == 0x1200 || _amd_gpu_osdev(o)))
		return HW_VENDOR_AMD;
	return 0;
}

static bool _has_openfabrics(hwloc_obj_t pci)
{
	for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE &&
		    c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS)
			return true;
	return false;
}

static bool _slingshot_netdev(const char *name)
{
	return !strncmp(name, "hsn", 3) || !strncmp(name, "hsi", 3) ||
	       !strncmp(name, "cxi", 3);
}

/*
 * The NIC an OS device stands for, or false.  Verbs HCAs are OpenFabrics
 * devices (mlx5_0; hwloc names Slingshot's cxiN so too, subtype
 * "Slingshot").  Without the cxi device, a Slingshot NIC is its network
 * device hsnN (hsiN at LLNL) on a PCI device with no verbs device (an
 * IPoIB interface may be called hsi0 too): its libfabric domain is cxiN,
 * the cxi driver numbering both alike.
 */
static bool _nic_of(hwloc_obj_t o, struct hw_nic *c)
{
	const char *sub;

	if (!o->name)
		return false;
	memset(c, 0, sizeof(*c));
	if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) {
		sub = hwloc_obj_get_info_by_name(o, "Subtype");
		if (!sub)
			sub = o->subtype;
		c->kind = !strncmp(o->name, "cxi", 3) ||
			  (sub && !strcasecmp(sub, "Slingshot")) ?
			  HW_NIC_CXI : HW_NIC_VERBS;
		snprintf(c->name, sizeof(c->name), "%s", o->name);
		return true;
	}
	if (o->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK ||
	    !_slingshot_netdev(o->name) || !o->parent ||
	    o->parent->type != HWLOC_OBJ_PCI_DEVICE ||
	    _has_openfabrics(o->parent))
		return false;
	c->kind = HW_NIC_CXI;
	snprintf(c->name, sizeof(c->name), "cxi%s",
		 o->name + strcspn(o->name, "0123456789"));
	snprintf(c->netdev, sizeof(c->netdev), "%s", o->name);
	return true;
}

int hw_uf_find(int *up, int x)
{
	while (up[x] != x)
		x = up[x] = up[up[x]];
	return x;
}

void hw_uf_union(int *up, int a, int b)
{
	a = hw_uf_find(up, a);
	b = hw_uf_find(up, b);
	if (a != b)
		up[a > b ? a : b] = a < b ? a : b;
}

void hw_islands_number(struct hw_node *n, int *up)
{
	for (int i = 0, next = 0; i < n->ngpus; i++) {
		int r = hw_uf_find(up, i);

		n->gpus[i].island = r == i ? next++ : n->gpus[r].island;
	}
}

/*
 * xGMI islands from what hwloc's RSMI backend recorded (XGMIPeers of each
 * rsmiN device): GPUs that are xGMI peers share an island.  Without that
 * information islands stay unknown (ROCm SMI may still tell at slurmd).
 */
static void _xgmi_islands(struct hw_node *n, hwloc_obj_t *gobj)
{
	int *up = malloc(sizeof(int) * (n->ngpus + 1)), seen = 0;
	char rsmi[64][16];
	int nr = n->ngpus < 64 ? n->ngpus : 64;

	if (!up)
		return;
	for (int i = 0; i < n->ngpus; i++) {
		up[i] = i;
		if (i < nr)
			rsmi[i][0] = '\0';
		for (hwloc_obj_t c = gobj[i]->io_first_child; c && i < nr;
		     c = c->next_sibling)
			if (c->type == HWLOC_OBJ_OS_DEVICE && c->name &&
			    !strncmp(c->name, "rsmi", 4))
				snprintf(rsmi[i], sizeof(rsmi[i]), "%s",
					 c->name);
	}
	for (int i = 0; i < nr; i++) {
		const char *peers = NULL;
		char buf[1024], *tok, *save = NULL;

		for (hwloc_obj_t c = gobj[i]->io_first_child; c;
		     c = c->next_sibling)
			if (c->type == HWLOC_OBJ_OS_DEVICE && c->name &&
			    !strcmp(c->name, rsmi[i]))
				peers = hwloc_obj_get_info_by_name(c,
								   "XGMIPeers");
		if (!rsmi[i][0] || !peers)
			continue;
		seen++;
		snprintf(buf, sizeof(buf), "%s", peers);
		for (tok = strtok_r(buf, " ", &save); tok;
		     tok = strtok_r(NULL, " ", &save))
			for (int j = 0; j < nr; j++)
				if (!strcmp(rsmi[j], tok)) {
					hw_uf_union(up, i, j);
				}
	}
	if (seen) {
		hw_islands_number(n, up);
		n->nvml = true;
	}
	free(up);
}

int hw_node_from_hwloc(struct hw_node *n, hwloc_topology_t topo,
		       char *err, size_t errlen)
{
	hwloc_obj_t o, *gobj = NULL, *nobj = NULL;
	int depth, ng = 0, nn = 0, rc = -1, nv = 0, k = 0;

	_node_clear(n);
	hwloc_bitmap_copy(n->cpuset, hwloc_topology_get_topology_cpuset(topo));
	depth = hwloc_get_type_depth(topo, HWLOC_OBJ_CORE);
	if (depth < 0)
		depth = hwloc_get_type_depth(topo, HWLOC_OBJ_PU);
	n->ncores = hwloc_get_nbobjs_by_depth(topo, depth);
	n->cores = calloc(n->ncores ? n->ncores : 1, sizeof(*n->cores));
	if (!n->cores)
		goto nomem;
	for (int i = 0; i < n->ncores; i++)
		n->cores[i] = hwloc_bitmap_dup(
			hwloc_get_obj_by_depth(topo, depth, i)->cpuset);
	n->npkgs = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
	if (n->npkgs < 0)
		n->npkgs = 0;
	n->pkgs = calloc(n->npkgs + 1, sizeof(*n->pkgs));
	if (!n->pkgs)
		goto nomem;
	for (int i = 0; i < n->npkgs; i++)
		n->pkgs[i] = hwloc_bitmap_dup(hwloc_get_obj_by_type(topo,
					HWLOC_OBJ_PACKAGE, i)->cpuset);

	for (o = NULL; (o = hwloc_get_next_pcidev(topo, o));)
		ng++;
	for (o = NULL; (o = hwloc_get_next_osdev(topo, o));)
		nn++;
	n->gpus = calloc(ng ? ng : 1, sizeof(*n->gpus));
	n->nics = calloc(nn ? nn : 1, sizeof(*n->nics));
	if (!n->gpus || !n->nics)
		goto nomem;

	for (o = NULL; (o = hwloc_get_next_pcidev(topo, o));) {
		int vendor = _gpu_vendor(o);
		struct hw_gpu *g;

		if (!vendor)
			continue;
		g = &n->gpus[n->ngpus++];
		_busid(o, g->busid, sizeof(g->busid));
		g->island = -1;
		g->vendor = vendor;
	}
	/* One stack per node: beside NVIDIA GPUs an AMD one is a display
	 * card CUDA cannot use (and the reverse); keep NVIDIA's. */
	for (int i = 0; i < n->ngpus; i++)
		nv += n->gpus[i].vendor == HW_VENDOR_NVIDIA;
	for (int i = 0; i < n->ngpus; i++)
		if (!nv || n->gpus[i].vendor == HW_VENDOR_NVIDIA)
			n->gpus[k++] = n->gpus[i];
	n->ngpus = k;
	qsort(n->gpus, n->ngpus, sizeof(*n->gpus), _cmp_gpu);

	for (o = NULL; (o = hwloc_get_next_osdev(topo, o));) {
		struct hw_nic nic, *c;
		hwloc_obj_t sib;

		if (!_nic_of(o, &nic) || hw_nic_index(n, nic.name) >= 0)
			continue;
		c = &n->nics[n->nnics++];
		*c = nic;
		if (o->parent && o->parent->type == HWLOC_OBJ_PCI_DEVICE) {
			_busid(o->parent, c->busid, sizeof(c->busid));
			for (sib = o->parent->io_first_child;
			     sib && !c->netdev[0]; sib = sib->next_sibling)
				if (sib->type == HWLOC_OBJ_OS_DEVICE &&
				    sib->attr->osdev.type ==
					HWLOC_OBJ_OSDEV_NETWORK && sib->name) {
					snprintf(c->netdev, sizeof(c->netdev),
						 "%s", sib->name);
					break;
				}
		}
	}
	qsort(n->nics, n->nnics, sizeof(*n->nics), _cmp_nic);

	/* Objects in model order, for locality and paths. */
	gobj = calloc(n->ngpus + 1, sizeof(*gobj));
	nobj = calloc(n->nnics + 1, sizeof(*nobj));
	n->path = calloc((size_t)n->ngpus * n->nnics + 1, sizeof(int));
	if (!gobj || !nobj || !n->path)
		goto nomem;
	for (o = NULL; (o = hwloc_get_next_pcidev(topo, o));) {
		char b[HW_BUSID_LEN];
		int i;

		_busid(o, b, sizeof(b));
		if ((i = hw_gpu_by_busid(n, b)) >= 0 && !gobj[i])
			gobj[i] = o;
	}
	for (o = NULL; (o = hwloc_get_next_osdev(topo, o));) {
		struct hw_nic nic;
		int i;

		if (_nic_of(o, &nic) && (i = hw_nic_index(n, nic.name)) >= 0 &&
		    !nobj[i])
			nobj[i] = o;
	}
	for (int i = 0; i < n->ngpus; i++) {
		n->gpus[i].index = i;
		n->gpus[i].cpuset = _local_cpus(topo, gobj[i]);
	}
	for (int j = 0; j < n->nnics; j++) {
		n->nics[j].cpuset = _local_cpus(topo, nobj[j]);
		n->nics[j].nports = 1;
		n->nics[j].ports[0].num = 1;
		n->nics[j].ports[0].gid_index = -1;
	}
	for (int i = 0; i < n->ngpus; i++)
		for (int j = 0; j < n->nnics; j++)
			n->path[i * n->nnics + j] = _pci_path(topo, gobj[i],
				nobj[j]->parent ? nobj[j]->parent : nobj[j]);
	if (hw_node_amd(n))
		_xgmi_islands(n, gobj);
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	free(gobj);
	free(nobj);
	return rc;
}

/* ---- cache file ---------------------------------------------------- */

static void _list(hwloc_const_bitmap_t s, char *buf, size_t len)
{
	if (hwloc_bitmap_iszero(s))
		snprintf(buf, len, "-");
	else
		hwloc_bitmap_list_snprintf(buf, len, s);
}

int hw_node_write(FILE *f, void *node)
{
	const struct hw_node *n = node;
	char buf[8192];

	fprintf(f, "# topoml node model, written by the slurmd context\n");
	fprintf(f, "version 1\nsource %s\nnvml %d\n",
		n->source[0] ? n->source : "-", n->nvml);
	_list(n->cpuset, buf, sizeof(buf));
	fprintf(f, "cpuset %s\n", buf);
	for (int i = 0; i < n->ncores; i++) {
		_list(n->cores[i], buf, sizeof(buf));
		fprintf(f, "core %s\n", buf);
	}
	for (int i = 0; i < n->npkgs; i++) {
		_list(n->pkgs[i], buf, sizeof(buf));
		fprintf(f, "package %s\n", buf);
	}
	for (int i = 0; i < n->ngpus; i++) {
		_list(n->gpus[i].cpuset, buf, sizeof(buf));
		fprintf(f, "gpu %s %d %s%s\n", n->gpus[i].busid,
			n->gpus[i].island, buf,
			n->gpus[i].vendor == HW_VENDOR_AMD ? " amd" : "");
	}
	for (int j = 0; j < n->nnics; j++) {
		const struct hw_nic *c = &n->nics[j];

		_list(c->cpuset, buf, sizeof(buf));
		fprintf(f, "nic %s %s %s %s", c->name,
			c->netdev[0] ? c->netdev : "-",
			c->busid[0] ? c->busid : "-", buf);
		for (int p = 0; p < c->nports; p++)
			fprintf(f, " %d:%d:%d:%d", c->ports[p].num,
				c->ports[p].state, c->ports[p].link_layer,
				c->ports[p].gid_index);
		fprintf(f, "%s\n", c->kind == HW_NIC_CXI ? " cxi" : "");
	}
	for (int i = 0; i < n->ngpus; i++) {
		fprintf(f, "path");
		for (int j = 0; j < n->nnics; j++)
			fprintf(f, " %s", hw_path_name(n->path[i * n->nnics + j]));
		fprintf(f, "\n");
	}
	return ferror(f) ? -1 : 0;
}

int hw_node_saveat(const struct hw_node *n, int dirfd, const char *name,
		   char *err, size_t errlen)
{
	if (ml_write_atomic(dirfd, name, 0644, hw_node_write, (void *)n)) {
		snprintf(err, errlen, "%s: %s", name, strerror(errno));
		return -1;
	}
	return 0;
}

/* PATH's directory is the caller's (tools, tests): no ownership check. */
int hw_node_save(const struct hw_node *n, const char *path, char *err,
		 size_t errlen)
{
	char d[PATH_MAX], b[PATH_MAX];
	int dfd, rc;

	if (snprintf(d, sizeof(d), "%s", path) >= (int)sizeof(d)) {
		snprintf(err, errlen, "%.200s: path too long", path);
		return -1;
	}
	snprintf(b, sizeof(b), "%s", path);
	dfd = open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		snprintf(err, errlen, "%s: %s", d, strerror(errno));
		return -1;
	}
	rc = hw_node_saveat(n, dfd, basename(b), err, errlen);
	close(dfd);
	return rc;
}

static int _grow(void **arr, int n, size_t sz)
{
	void *p = realloc(*arr, (n + 1) * sz);

	if (!p)
		return -1;
	memset((char *)p + n * sz, 0, sz);
	*arr = p;
	return 0;
}

static int _parse_set(const char *s, hwloc_bitmap_t *out)
{
	*out = hwloc_bitmap_alloc();
	if (!*out)
		return -1;
	if (!strcmp(s, "-"))
		return 0;
	return hwloc_bitmap_list_sscanf(*out, s);
}

int hw_node_load(struct hw_node *n, const char *path, char *err,
		 size_t errlen)
{
	return hw_node_loadat(n, AT_FDCWD, path, geteuid(), err, errlen);
}

int hw_node_loadat(struct hw_node *n, int dirfd, const char *path,
		   uid_t owner, char *err, size_t errlen)
{
	char line[16384], a[256], b[256], c[256], d[8192];
	FILE *f;
	int lineno = 0, rc = -1, prow = 0, version = 0, fd;

	_node_clear(n);
	/* Never a symlink, FIFO or device, and only the owner's file. */
	fd = ml_open_owned(dirfd, path, O_RDONLY, 0, owner);
	if (fd < 0 || !(f = fdopen(fd, "r"))) {
		snprintf(err, errlen, "%s: %s", path, errno == EPERM ?
			 "not a regular file of its owner" : strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *tok, *save = NULL;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (!*p || *p == '#')
			continue;
		if (sscanf(p, "version %d", &version) == 1)
			continue;
		if (!strncmp(p, "source ", 7)) {
			snprintf(n->source, sizeof(n->source), "%.255s", p + 7);
		} else if (!strncmp(p, "nvml ", 5)) {
			n->nvml = atoi(p + 5) != 0;
		} else if (sscanf(p, "cpuset %8191s", d) == 1) {
			hwloc_bitmap_free(n->cpuset);
			if (_parse_set(d, &n->cpuset))
				goto bad;
		} else if (sscanf(p, "core %8191s", d) == 1) {
			if (_grow((void **)&n->cores, n->ncores,
				  sizeof(*n->cores)) ||
			    _parse_set(d, &n->cores[n->ncores++]))
				goto bad;
		} else if (sscanf(p, "package %8191s", d) == 1) {
			if (_grow((void **)&n->pkgs, n->npkgs,
				  sizeof(*n->pkgs)) ||
			    _parse_set(d, &n->pkgs[n->npkgs++]))
				goto bad;
		} else if (!strncmp(p, "gpu ", 4)) {
			struct hw_gpu *g;
			int island, k;

			/* An optional vendor last: "amd" (older models: none,
			 * all NVIDIA). */
			k = sscanf(p, "gpu %255s %d %8191s %255s", a, &island, d,
				   b);
			if (k < 3 || (k == 4 && strcmp(b, "amd")) ||
			    _grow((void **)&n->gpus, n->ngpus, sizeof(*g)))
				goto bad;
			g = &n->gpus[n->ngpus];
			g->vendor = k == 4 ? HW_VENDOR_AMD : HW_VENDOR_NVIDIA;
			if (hw_busid_normalize(a, g->busid, sizeof(g->busid)) ||
			    _parse_set(d, &g->cpuset))
				goto bad;
			g->index = n->ngpus++;
			g->island = island;
		} else if (!strncmp(p, "nic ", 4)) {
			struct hw_nic *x;

			if (sscanf(p, "nic %63s %63s %255s %8191s", a, b, c, d) != 4 ||
			    _grow((void **)&n->nics, n->nnics, sizeof(*x)))
				goto bad;
			x = &n->nics[n->nnics++];
			snprintf(x->name, sizeof(x->name), "%.63s", a);
			if (strcmp(b, "-"))
				snprintf(x->netdev, sizeof(x->netdev), "%.63s", b);
			if (strcmp(c, "-"))
				snprintf(x->busid, sizeof(x->busid), "%.15s", c);
			if (_parse_set(d, &x->cpuset))
				goto bad;
			strtok_r(p, " ", &save);
			for (int k = 0; k < 4; k++)
				strtok_r(NULL, " ", &save);
			while ((tok = strtok_r(NULL, " ", &save))) {
				struct hw_port *pt = &x->ports[x->nports];

				if (!strcmp(tok, "cxi")) {
					x->kind = HW_NIC_CXI;
					continue;
				}
				if (x->nports >= HW_MAX_PORTS ||
				    sscanf(tok, "%d:%d:%d:%d", &pt->num,
					   &pt->state, &pt->link_layer,
					   &pt->gid_index) != 4)
					goto bad;
				x->nports++;
			}
		} else if (!strncmp(p, "path", 4)) {
			int j = 0;

			if (!n->path) {
				n->path = calloc((size_t)n->ngpus * n->nnics + 1,
						 sizeof(int));
				if (!n->path)
					goto bad;
			}
			if (prow >= n->ngpus)
				goto bad;
			strtok_r(p, " ", &save);
			while ((tok = strtok_r(NULL, " ", &save))) {
				int v = hw_path_parse(tok);

				if (v < 0 || j >= n->nnics)
					goto bad;
				n->path[prow * n->nnics + j++] = v;
			}
			if (j != n->nnics)
				goto bad;
			prow++;
		} else {
			goto bad;
		}
	}
	if (version != 1) {
		snprintf(err, errlen, "%s: not a topoml node model (version 1)",
			 path);
		goto out;
	}
	if (!n->path)
		n->path = calloc((size_t)n->ngpus * n->nnics + 1, sizeof(int));
	if (prow && prow != n->ngpus) {
		snprintf(err, errlen, "%s: %d path rows for %d GPUs", path,
			 prow, n->ngpus);
		goto out;
	}
	rc = 0;
	goto out;
bad:
	snprintf(err, errlen, "%s:%d: cannot parse '%.60s'", path, lineno,
		 line);
out:
	fclose(f);
	if (rc)
		_node_clear(n);
	return rc;
}

void hw_node_print(const struct hw_node *n, FILE *f)
{
	char buf[8192];

	_list(n->cpuset, buf, sizeof(buf));
	fprintf(f, "node: %d cores, cpus %s, %d GPUs, %d HCAs%s\n", n->ncores,
		buf, n->ngpus, n->nnics, !n->nvml ? "" : hw_node_amd(n) ?
		", xGMI islands" : ", NVML islands");
	for (int i = 0; i < n->ngpus; i++) {
		_list(n->gpus[i].cpuset, buf, sizeof(buf));
		fprintf(f, "gpu %d %s island %d cpus %s%s\n", i,
			n->gpus[i].busid, n->gpus[i].island, buf,
			n->gpus[i].vendor == HW_VENDOR_AMD ? " amd" : "");
	}
	for (int j = 0; j < n->nnics; j++) {
		const struct hw_nic *c = &n->nics[j];

		_list(c->cpuset, buf, sizeof(buf));
		fprintf(f, "%s %s netdev %s cpus %s ports",
			c->kind == HW_NIC_CXI ? "nic" : "hca", c->name,
			c->netdev[0] ? c->netdev : "-", buf);
		for (int p = 0; p < c->nports; p++)
			fprintf(f, " %d(state %d, %s, gid %d)", c->ports[p].num,
				c->ports[p].state,
				c->ports[p].link_layer == HW_LL_ETH ? "RoCE" :
				c->ports[p].link_layer == HW_LL_IB ? "IB" : "?",
				c->ports[p].gid_index);
		fprintf(f, "\n");
	}
}
