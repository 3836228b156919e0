/*
 * NCCL topology XML (the NCCL_TOPO_FILE format of NCCL's own
 * NCCL_TOPO_DUMP_FILE dumps) generated from hwloc: one <cpu> per NUMA
 * node, the PCI switches that branch, GPUs and NICs.  Used where NCCL's
 * own detection falls short (virtual machines, hidden PCI switches).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "hw.h"

static bool _is_gpu(hwloc_obj_t o)
{
	unsigned c = o->attr->pcidev.class_id;

	if (o->type != HWLOC_OBJ_PCI_DEVICE)
		return false;
	if (o->attr->pcidev.vendor_id == HW_VENDOR_AMD)	/* RCCL reads it */
		return c == 0x0302 || c == 0x0300 || c == 0x0380 ||
		       c == 0x1200;
	return o->attr->pcidev.vendor_id == HW_VENDOR_NVIDIA &&
	       (c == 0x0302 || c == 0x0300);
}

static bool _is_nic(hwloc_obj_t o)
{
	if (o->type != HWLOC_OBJ_PCI_DEVICE)
		return false;
	/* HPE Slingshot (Cassini), reached through libfabric. */
	if (o->attr->pcidev.vendor_id == 0x17db &&
	    o->attr->pcidev.class_id == 0x0200)
		return true;
	for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE &&
		    c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS)
			return true;
	return false;
}

/* Devices of interest in the subtree. */
static int _relevant(hwloc_obj_t o)
{
	int n = (_is_gpu(o) || _is_nic(o)) ? 1 : 0;

	if (o->type == HWLOC_OBJ_BRIDGE)
		for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
			n += _relevant(c);
	return n;
}

static const char *_gen(float gbps)
{
	float lane = gbps / 16;

	if (gbps <= 0)
		return NULL;
	if (lane < 0.3)
		return "2.5 GT/s";
	if (lane < 0.6)
		return "5 GT/s";
	if (lane < 1.2)
		return "8 GT/s";
	if (lane < 2.4)
		return "16 GT/s";
	if (lane < 4.8)
		return "32 GT/s";
	return "64.0 GT/s PCIe";
}

static void _indent(FILE *f, int d)
{
	for (int i = 0; i < d; i++)
		fputs("  ", f);
}

static void _pci_attrs(FILE *f, hwloc_obj_t o, unsigned cls)
{
	const char *g = _gen(o->attr->pcidev.linkspeed);

	fprintf(f, "busid=\"%04x:%02x:%02x.%x\" class=\"0x%04x00\"",
		o->attr->pcidev.domain, o->attr->pcidev.bus,
		o->attr->pcidev.dev, o->attr->pcidev.func, cls);
	if (o->type == HWLOC_OBJ_PCI_DEVICE)
		fprintf(f, " vendor=\"0x%04x\" device=\"0x%04x\" "
			"subsystem_vendor=\"0x%04x\" subsystem_device=\"0x%04x\"",
			o->attr->pcidev.vendor_id, o->attr->pcidev.device_id,
			o->attr->pcidev.subvendor_id,
			o->attr->pcidev.subdevice_id);
	if (g)
		fprintf(f, " link_speed=\"%s\" link_width=\"16\"", g);
}

static void _emit(FILE *f, hwloc_obj_t o, int depth)
{
	if (o->type == HWLOC_OBJ_PCI_DEVICE) {
		if (!_is_gpu(o) && !_is_nic(o))
			return;
		_indent(f, depth);
		fputs("<pci ", f);
		_pci_attrs(f, o, o->attr->pcidev.class_id);
		fputs("/>\n", f);
		return;
	}
	if (o->type != HWLOC_OBJ_BRIDGE || !_relevant(o))
		return;
	int branches = 0;

	for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
		if (_relevant(c))
			branches++;
	/* Host bridges and single-path bridges add nothing NCCL needs. */
	if (o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST ||
	    branches < 2 || o->attr->bridge.upstream_type !=
	    HWLOC_OBJ_BRIDGE_PCI) {
		for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
			_emit(f, c, depth);
		return;
	}
	_indent(f, depth);
	fputs("<pci ", f);
	_pci_attrs(f, o, 0x0604);
	fputs(">\n", f);
	for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
		_emit(f, c, depth + 1);
	_indent(f, depth);
	fputs("</pci>\n", f);
}

/* NCCL's affinity: 32-bit hex words, most significant first. */
static void _affinity(FILE *f, hwloc_const_bitmap_t s)
{
	int last = hwloc_bitmap_last(s);

	for (int w = last < 0 ? 0 : last / 32; w >= 0; w--)
		fprintf(f, "%08lx%s", hwloc_bitmap_to_ith_ulong(s, w * 32 /
			(8 * sizeof(unsigned long))) >>
			((w * 32) % (8 * sizeof(unsigned long))) & 0xffffffffUL,
			w ? "," : "");
}

static const char *_info(hwloc_topology_t topo, hwloc_obj_t numa,
			 const char *name)
{
	const char *v;

	for (hwloc_obj_t o = numa; o; o = o->parent)
		if ((v = hwloc_obj_get_info_by_name(o, name)))
			return v;
	hwloc_obj_t pkg = hwloc_get_next_obj_covering_cpuset_by_type(topo,
				numa->cpuset, HWLOC_OBJ_PACKAGE, NULL);
	return pkg ? hwloc_obj_get_info_by_name(pkg, name) : NULL;
}

int hw_write_nccl_topo(hwloc_topology_t topo, const struct hw_node *n,
		       FILE *f)
{
	int nnuma = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);

	(void)n;
	fputs("<system version=\"1\">\n", f);
	for (int i = 0; i < nnuma; i++) {
		hwloc_obj_t numa = hwloc_get_obj_by_type(topo,
					HWLOC_OBJ_NUMANODE, i);
		hwloc_obj_t b = NULL;
		const char *v;
		int count = 0;

		/* Host bridges whose locality is this NUMA node first. */
		while ((b = hwloc_get_next_bridge(topo, b))) {
			hwloc_obj_t a;

			if (b->attr->bridge.upstream_type !=
			    HWLOC_OBJ_BRIDGE_HOST || !_relevant(b))
				continue;
			a = hwloc_get_non_io_ancestor_obj(topo, b);
			if (!a || !hwloc_bitmap_intersects(a->cpuset,
							   numa->cpuset))
				continue;
			/* Shown under the first NUMA node it is local to. */
			if (hwloc_bitmap_first(a->nodeset) != (int)numa->os_index)
				continue;
			if (!count++) {
				fprintf(f, "  <cpu numaid=\"%u\" affinity=\"",
					numa->os_index);
				_affinity(f, numa->cpuset);
				fputc('"', f);
				if ((v = _info(topo, numa, "Architecture")))
					fprintf(f, " arch=\"%s\"", v);
				if ((v = _info(topo, numa, "CPUVendor")))
					fprintf(f, " vendor=\"%s\"", v);
				if ((v = _info(topo, numa, "CPUFamilyNumber")))
					fprintf(f, " familyid=\"%s\"", v);
				if ((v = _info(topo, numa, "CPUModelNumber")))
					fprintf(f, " modelid=\"%s\"", v);
				fputs(">\n", f);
			}
			for (hwloc_obj_t c = b->io_first_child; c;
			     c = c->next_sibling)
				_emit(f, c, 2);
		}
		if (count)
			fputs("  </cpu>\n", f);
	}
	fputs("</system>\n", f);
	return ferror(f) ? -1 : 0;
}
