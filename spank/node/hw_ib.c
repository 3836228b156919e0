/*
 * HCA ports: libibverbs on a real node, a sysfs reader with a configurable
 * root for tests and for nodes where only sysfs is readable.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "hw.h"

static int _read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(buf, len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* The GID index NCCL should use on RoCE: RoCE v2 with an IPv4-mapped
 * address (::ffff:a.b.c.d), else the first RoCE v2, else -1. */
static int _roce_gid(const char *port_dir)
{
	char p[4400], type[64], gid[128];
	int first_v2 = -1;

	for (int i = 0; i < 256; i++) {
		snprintf(p, sizeof(p), "%s/gid_attrs/types/%d", port_dir, i);
		if (_read_line(p, type, sizeof(type)))
			continue;
		if (strcasecmp(type, "RoCE v2"))
			continue;
		snprintf(p, sizeof(p), "%s/gids/%d", port_dir, i);
		if (_read_line(p, gid, sizeof(gid)) ||
		    !strcmp(gid, "0000:0000:0000:0000:0000:0000:0000:0000"))
			continue;
		if (!strncmp(gid, "0000:0000:0000:0000:0000:ffff:", 30))
			return i;
		if (first_v2 < 0)
			first_v2 = i;
	}
	return first_v2;
}

static int _cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int hw_ib_sysfs(struct hw_node *n, const char *root, char *err,
		size_t errlen)
{
	char dir[4096], p[4200], buf[128];

	if (!root || !*root)
		root = "/sys";
	for (int j = 0; j < n->nnics; j++) {
		struct hw_nic *c = &n->nics[j];
		int nums[HW_MAX_PORTS], np = 0;
		struct dirent *de;
		DIR *d;

		snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports",
			 root, c->name);
		if (!(d = opendir(dir)))
			continue;	/* not in this tree: keep defaults */
		while ((de = readdir(d)) && np < HW_MAX_PORTS) {
			char *end;
			long v = strtol(de->d_name, &end, 10);

			if (de->d_name[0] != '.' && !*end && v > 0 && v < 256)
				nums[np++] = (int)v;
		}
		closedir(d);
		if (!np)
			continue;
		qsort(nums, np, sizeof(int), _cmp_int);
		c->nports = np;
		for (int k = 0; k < np; k++) {
			struct hw_port *pt = &c->ports[k];

			memset(pt, 0, sizeof(*pt));
			pt->num = nums[k];
			pt->gid_index = -1;
			snprintf(p, sizeof(p), "%s/%d/state", dir, pt->num);
			if (!_read_line(p, buf, sizeof(buf)))
				pt->state = atoi(buf);	/* "4: ACTIVE" */
			snprintf(p, sizeof(p), "%s/%d/link_layer", dir, pt->num);
			if (!_read_line(p, buf, sizeof(buf)))
				pt->link_layer = !strcasecmp(buf, "Ethernet") ?
					HW_LL_ETH : !strcasecmp(buf, "InfiniBand") ?
					HW_LL_IB : HW_LL_UNKNOWN;
			if (pt->link_layer == HW_LL_ETH) {
				snprintf(p, sizeof(p), "%s/%d", dir, pt->num);
				pt->gid_index = _roce_gid(p);
			}
		}
	}
	(void)err;
	(void)errlen;
	return 0;
}

int hw_ib_verbs(struct hw_node *n, char *err, size_t errlen)
{
	struct ibv_device **list;
	int ndev = 0;

	errno = 0;
	list = ibv_get_device_list(&ndev);
	if (!list) {
		/* ENOSYS: no RDMA subsystem on this machine: no HCAs. */
		if (errno == ENOSYS || errno == 0)
			return 0;
		snprintf(err, errlen, "ibv_get_device_list: %s",
			 strerror(errno));
		return -1;
	}
	for (int i = 0; i < ndev; i++) {
		const char *name = ibv_get_device_name(list[i]);
		struct ibv_device_attr da;
		struct ibv_context *ctx;
		int j = name ? hw_nic_index(n, name) : -1;
		struct hw_nic *c;

		if (j < 0 || !(ctx = ibv_open_device(list[i])))
			continue;
		c = &n->nics[j];
		if (!ibv_query_device(ctx, &da)) {
			c->nports = 0;
			for (int p = 1; p <= da.phys_port_cnt &&
			     c->nports < HW_MAX_PORTS; p++) {
				struct ibv_port_attr pa;
				struct hw_port *pt = &c->ports[c->nports++];

				memset(pt, 0, sizeof(*pt));
				pt->num = p;
				pt->gid_index = -1;
				if (ibv_query_port(ctx, p, &pa))
					continue;
				pt->state = pa.state;
				pt->link_layer = pa.link_layer ==
					IBV_LINK_LAYER_ETHERNET ? HW_LL_ETH :
					HW_LL_IB;
			}
		}
		ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	return 0;
}

void hw_ib_default_ports(struct hw_node *n)
{
	for (int j = 0; j < n->nnics; j++)
		if (n->nics[j].nports == 0) {
			n->nics[j].nports = 1;
			n->nics[j].ports[0].num = 1;
			n->nics[j].ports[0].gid_index = -1;
		}
}

int hw_ib_rate_parse(const char *s, long *mbps)
{
	long whole = 0, frac = 0, scale = 1000;
	int digits = 0;

	/* "%d[.%d] Gb/sec" then nothing or " (...)": the kernel's format
	 * (drivers/infiniband/core/sysfs.c, rate_show). */
	if (!s)
		return -1;
	for (; *s >= '0' && *s <= '9'; s++)
		if (++digits > 7)
			return -1;
		else
			whole = whole * 10 + (*s - '0');
	if (!digits)
		return -1;
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return -1;
		for (; *s >= '0' && *s <= '9'; s++) {
			scale /= 10;
			if (!scale)
				return -1;
			frac += (*s - '0') * scale;
		}
	}
	if (strncmp(s, " Gb/sec", 7))
		return -1;
	s += 7;
	if (*s && strncmp(s, " (", 2))
		return -1;
	*mbps = whole * 1000 + frac;
	return 0;
}

int hw_ib_port_health(const struct hw_node *n, const char *root,
		      struct hw_port_health *out, int max)
{
	char dir[4096], p[4200], buf[128];
	int k = 0;

	if (!root || !*root)
		root = "/sys";
	for (int j = 0; j < n->nnics; j++) {
		const struct hw_nic *c = &n->nics[j];

		if (c->kind != HW_NIC_VERBS)
			continue;
		snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports",
			 root, c->name);
		for (int q = 0; q < c->nports && k < max; q++) {
			struct hw_port_health *h = &out[k++];

			memset(h, 0, sizeof(*h));
			snprintf(h->hca, sizeof(h->hca), "%s", c->name);
			h->port = c->ports[q].num;
			h->link_layer = c->ports[q].link_layer;
			snprintf(p, sizeof(p), "%s/%d/state", dir, h->port);
			if (!_read_line(p, buf, sizeof(buf)))
				h->state = atoi(buf);	/* "4: ACTIVE" */
			snprintf(p, sizeof(p), "%s/%d/link_layer", dir, h->port);
			if (!_read_line(p, buf, sizeof(buf)))
				h->link_layer = !strcasecmp(buf, "Ethernet") ?
					HW_LL_ETH : !strcasecmp(buf,
					"InfiniBand") ? HW_LL_IB :
					HW_LL_UNKNOWN;
			snprintf(p, sizeof(p), "%s/%d/rate", dir, h->port);
			if (!_read_line(p, buf, sizeof(buf)) &&
			    !hw_ib_rate_parse(buf, &h->rate))
				snprintf(h->rate_text, sizeof(h->rate_text),
					 "%.47s", buf);
		}
	}
	return k;
}
