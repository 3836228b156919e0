/*
 * slurmd context: hardware discovery once per node, when slurmd starts.
 * hwloc (or the admin's XML), NVML islands and HCA ports become a small
 * model file in cache_dir, beside the hwloc XML export and an NCCL topology
 * file; the task launch path only reads the model.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin.h"

void ml_cache_path(const struct ml_conf *c, const char *node,
		   const char *suffix, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s%s", c->cache_dir, node, suffix);
}

/* slurmd's node name: -N NAME (several slurmd on one host) or hostname. */
static void _node_name(char *buf, size_t len)
{
	char args[8192], *p, *end;
	FILE *f = fopen("/proc/self/cmdline", "r");
	size_t n = 0;

	if (f) {
		n = fread(args, 1, sizeof(args) - 1, f);
		fclose(f);
	}
	args[n] = '\0';
	for (p = args, end = args + n; p < end; p += strlen(p) + 1) {
		if (!strcmp(p, "-N") && p + strlen(p) + 1 < end) {
			snprintf(buf, len, "%s", p + strlen(p) + 1);
			return;
		}
		if (!strncmp(p, "-N", 2) && p[2]) {
			snprintf(buf, len, "%s", p + 2);
			return;
		}
	}
	if (gethostname(buf, len))
		snprintf(buf, len, "localhost");
	buf[len - 1] = '\0';
	if ((p = strchr(buf, '.')))
		*p = '\0';
}

static int _mkdirs(const char *dir)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(tmp, 0755) && errno != EEXIST)
				return -1;
			*p = '/';
		}
	if (mkdir(tmp, 0755) && errno != EEXIST)
		return -1;
	return 0;
}

int ml_slurmd_init(spank_t sp)
{
	const struct ml_conf *c = &ml.conf;
	hwloc_topology_t topo = NULL;
	struct hw_node *n = hw_node_new();
	char err[1024], path[PATH_MAX + 64], node[256];
	const char *nvml;
	FILE *f;

	(void)sp;
	if (!n)
		return 0;
	_node_name(node, sizeof(node));
	if (_mkdirs(c->cache_dir)) {
		slurm_error("topoml: cache_dir %s: %s", c->cache_dir,
			    strerror(errno));
		goto out;
	}
	topo = hw_hwloc_load(c->hwloc_xml[0] ? c->hwloc_xml : NULL, err,
			     sizeof(err));
	if (!topo) {
		slurm_error("topoml: hwloc_xml: %s", err);
		goto out;
	}
	if (hw_node_from_hwloc(n, topo, err, sizeof(err))) {
		slurm_error("topoml: %s", err);
		goto out;
	}
	snprintf(n->source, sizeof(n->source), "%.255s",
		 c->hwloc_xml[0] ? c->hwloc_xml : "hwloc discovery");
	/* Test hook and site override, as the issue asks: env first. */
	nvml = getenv("TOPOML_NVML_LIB");
	if (n->ngpus && hw_nvml_islands(n, nvml && *nvml ? nvml : c->nvml_lib,
					err, sizeof(err)))
		slurm_info("topoml: no NVLink islands: %s", err);
	if (hw_ib_verbs(n, err, sizeof(err)))
		slurm_info("topoml: %s", err);
	hw_ib_sysfs(n, c->sysfs_root, err, sizeof(err));
	hw_ib_default_ports(n);

	ml_cache_path(c, node, ".xml", path, sizeof(path));
	if (hwloc_topology_export_xml(topo, path, 0))
		slurm_error("topoml: %s: %s", path, strerror(errno));
	else
		chmod(path, 0644);
	ml_cache_path(c, node, ".nccl_topo.xml", path, sizeof(path));
	if (n->ngpus && (f = fopen(path, "w"))) {
		hw_write_nccl_topo(topo, n, f);
		fclose(f);
		chmod(path, 0644);
	}
	ml_cache_path(c, node, ".model", path, sizeof(path));
	if (hw_node_save(n, path, err, sizeof(err)))
		slurm_error("topoml: %s", err);
	else if (!chmod(path, 0644))
		slurm_info("topoml: %s: %d GPUs, %d HCAs from %s", node,
			   n->ngpus, n->nnics, n->source);
out:
	if (topo)
		hwloc_topology_destroy(topo);
	hw_node_free(n);
	return 0;	/* never stop slurmd: tasks run unbound instead */
}
