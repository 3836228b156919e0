/*
 * slurmd context: hardware discovery once per node, when slurmd starts.
 * hwloc (or the admin's XML), NVML islands and HCA ports become a small
 * model file in cache_dir, beside the hwloc XML export and an NCCL topology
 * file; the task launch path only reads the model.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin.h"
#include "secure.h"

void ml_cache_path(const struct ml_conf *c, const char *node,
		   const char *suffix, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s%s", c->cache_dir, node, suffix);
}

/* Slurm's lookups, resolved at run time: the plugin links no Slurm
 * library (slurmd carries libslurmfull).  An xmalloc'd name or NULL. */
static char *_slurm_name(const char *sym, const char *arg)
{
	char *(*by_host)(const char *);
	char *(*aliased)(void);

	if (arg) {
		by_host = (char *(*)(const char *))dlsym(RTLD_DEFAULT, sym);
		return by_host ? by_host(arg) : NULL;
	}
	aliased = (char *(*)(void))dlsym(RTLD_DEFAULT, sym);
	return aliased ? aliased() : NULL;
}

/*
 * slurmd's node name, as slurmd determines it (slurmd.c, _read_config):
 * -N NAME (several slurmd on one host), else the NodeName whose
 * NodeHostname is this host (or an alias of it, or "localhost"), else the
 * short host name.  Everything here is root's: slurmd's own command line
 * and slurm.conf.  slurmstepd receives the same name from slurmd and puts
 * it in its own SLURMD_NODENAME, which ctx_remote.c reads.
 */
static void _node_name(char *buf, size_t len)
{
	void (*xfree_fn)(void **);
	char args[8192], host[256], *p, *end, *name = NULL;
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
	if (gethostname(host, sizeof(host)))
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	if ((p = strchr(host, '.')))
		*p = '\0';
	xfree_fn = (void (*)(void **))dlsym(RTLD_DEFAULT, "slurm_xfree");
	if (xfree_fn &&
	    !(name = _slurm_name("slurm_conf_get_nodename", host)) &&
	    !(name = _slurm_name("slurm_conf_get_aliased_nodename", NULL)))
		name = _slurm_name("slurm_conf_get_nodename", "localhost");
	snprintf(buf, len, "%s", name && *name ? name : host);
	if (name)
		xfree_fn((void **)&name);
}

/* ml_write_atomic fill callbacks. */
struct _buf {
	const char *data;
	size_t len;
};

static int _fill_buf(FILE *f, void *arg)
{
	const struct _buf *b = arg;

	return fwrite(b->data, 1, b->len, f) == b->len ? 0 : -1;
}

struct _nccl {
	hwloc_topology_t topo;
	const struct hw_node *n;
};

static int _fill_nccl(FILE *f, void *arg)
{
	const struct _nccl *a = arg;

	return hw_write_nccl_topo(a->topo, a->n, f);
}

/* The three cache files, each replaced atomically in the trusted dir. */
static void _write_cache(int dfd, const char *node, hwloc_topology_t topo,
			 const struct hw_node *n)
{
	char name[300], err[1024];
	struct _nccl nc = { topo, n };
	struct _buf b = { 0 };
	char *xml = NULL;
	int len = 0;

	snprintf(name, sizeof(name), "%s.xml", node);
	if (hwloc_topology_export_xmlbuffer(topo, &xml, &len, 0) || len < 1) {
		slurm_error("topoml: hwloc XML export: %s", strerror(errno));
	} else {
		b.data = xml;
		b.len = (size_t)len - 1;	/* len counts the NUL */
		if (ml_write_atomic(dfd, name, 0644, _fill_buf, &b))
			slurm_error("topoml: %s/%s: %s", ml.conf.cache_dir,
				    name, strerror(errno));
	}
	if (xml)
		hwloc_free_xmlbuffer(topo, xml);
	snprintf(name, sizeof(name), "%s.nccl_topo.xml", node);
	if (!n->ngpus)
		unlinkat(dfd, name, 0);	/* no GPUs now: no stale file */
	else if (ml_write_atomic(dfd, name, 0644, _fill_nccl, &nc))
		slurm_error("topoml: %s/%s: %s", ml.conf.cache_dir, name,
			    strerror(errno));
	snprintf(name, sizeof(name), "%s.model", node);
	if (hw_node_saveat(n, dfd, name, err, sizeof(err)))
		slurm_error("topoml: %s/%s", ml.conf.cache_dir, err);
	else
		slurm_info("topoml: %s: %d GPUs, %d HCAs from %s", node,
			   n->ngpus, n->nnics, n->source);
}

int ml_slurmd_init(spank_t sp)
{
	const struct ml_conf *c = &ml.conf;
	hwloc_topology_t topo = NULL;
	struct hw_node *n = hw_node_new();
	char err[1024], node[256];
	const char *nvml;
	int dfd = -1;

	(void)sp;
	if (!n)
		return 0;
	_node_name(node, sizeof(node));
	if (!ml_node_name_ok(node)) {
		slurm_error("topoml: node name '%s' cannot name a file in "
			    "cache_dir: no node model, tasks run unbound",
			    node);
		goto out;
	}
	/*
	 * Root writes here and slurmstepd trusts what it reads: refuse a
	 * directory that anyone but root could change (or swap a component
	 * of).  slurmd keeps running; tasks then run unbound.
	 */
	dfd = ml_root_dir_open(c->cache_dir, true, err, sizeof(err));
	if (dfd < 0) {
		if (ml_log_once(c->cache_dir))
			slurm_error("topoml: cache_dir refused: %s: %s (it and "
				    "every directory above it must be root's "
				    "and writable by nobody else, sticky "
				    "ones such as /tmp excepted, with no "
				    "symlink but root's on the way): no node "
				    "model, tasks run unbound", c->cache_dir,
				    err);
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
	if (n->ngpus && !hw_node_amd(n) &&
	    hw_nvml_islands(n, nvml && *nvml ? nvml : c->nvml_lib, err,
			    sizeof(err)))
		slurm_info("topoml: no NVLink islands: %s", err);
	/* AMD: ROCm SMI (rsmi_lib= only: an admin's path) over what
	 * hwloc's RSMI backend recorded. */
	if (hw_node_amd(n) && hw_rsmi_islands(n, c->rsmi_lib, err,
					      sizeof(err)))
		slurm_info("topoml: no xGMI islands from ROCm SMI: %s%s", err,
			   n->nvml ? " (hwloc's kept)" : "");
	if (hw_ib_verbs(n, err, sizeof(err)))
		slurm_info("topoml: %s", err);
	hw_ib_sysfs(n, c->sysfs_root, err, sizeof(err));
	hw_ib_default_ports(n);
	_write_cache(dfd, node, topo, n);
out:
	if (dfd >= 0)
		close(dfd);
	if (topo)
		hwloc_topology_destroy(topo);
	hw_node_free(n);
	return 0;	/* never stop slurmd: tasks run unbound instead */
}
