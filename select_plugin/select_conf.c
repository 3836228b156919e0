/*
 * select/topoml's site configuration: topoml.conf and the topology it
 * names, read at start-up and on scontrol reconfigure, and the map between
 * Slurm's nodes and the engine's.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/common/slurm_xlator.h"

#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "topoml/load.h"
#include "select_int.h"

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
struct topoml_siteconf g_conf;
topoml_topo_t *g_topo;
char *g_topo_path;
struct topoml_torus3d *g_t3d;
int *g_map;
int *g_rmap;
int g_map_count = -1;
uint64_t g_map_gen;

static char *_conf_dir(void)
{
	char *p = get_extra_conf_path("topoml.conf");
	char *slash = p ? strrchr(p, '/') : NULL;

	if (slash)
		*slash = '\0';
	else
		xfree(p);
	return p;
}

static void _errors_log(topoml_errors_t *err, bool is_fatal)
{
	int i;

	for (i = 0; i < err->n; i++)
		error("%s: %s", sel_who, err->msg[i]);
	if (is_fatal)
		fatal("%s: bad site configuration (above); fix it or set %s",
		      sel_who, sel_plain);
}

/*
 * Slurm's own topology.conf, written for a topology plugin whose file the
 * engine does not read (topology/ring: RingName=; topology/hypercube):
 * that site wants Slurm's plugin, so jobs get plain cons_tres rather than
 * a slurmctld that stops at start-up.  A TopologyFile= the admin names in
 * topoml.conf is still read (and its errors still fatal).
 */
static bool _foreign_topology_conf(const struct topoml_siteconf *c,
				   const char *topo_path)
{
	static const char *const foreign[] = { "topology/ring",
					       "topology/hypercube" };
	const char *plugin = slurm_conf.topology_plugin;
	const char *base = topo_path ? strrchr(topo_path, '/') : NULL;
	size_t i;

	if (c->topology_file || !plugin || !base ||
	    strcmp(base, "/topology.conf"))
		return false;
	for (i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++)
		if (!strcmp(plugin, foreign[i]))
			return true;
	return false;
}

/*
 * The topology file is the topology.conf that Slurm's own topology plugin
 * reads: topoml must then see the network Slurm sees, never stop a
 * slurmctld that stock Slurm runs, never keep a model of a file Slurm has
 * replaced.
 */
static bool _slurms_topology_file(const char *topo_path)
{
	const char *plugin = slurm_conf.topology_plugin;
	char *conf;
	struct stat a, b;
	bool same;

	if (!topo_path || (xstrcmp(plugin, "topology/tree") &&
			   xstrcmp(plugin, "topology/block") &&
			   xstrcmp(plugin, "topology/topoml")))
		return false;
	conf = get_extra_conf_path("topology.conf");
	same = conf && !stat(conf, &a) && !stat(topo_path, &b) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	xfree(conf);
	return same;
}

/*
 * topoml_siteconf_load_topology() with the loader's warnings logged (what
 * Slurm only logs too, FILE:LINE:COL each) and, on failure, whether
 * Slurm's topology plugin refuses the file as well (*refused).
 */
#define TOPO_WARNINGS_SHOWN 50
static topoml_topo_t *_load_topology(const struct topoml_siteconf *c,
				     const char *dir, const char *topo_path,
				     topoml_errors_t *err, bool *refused)
{
	topoml_errors_t warn = { 0 };
	topoml_topo_t *t;
	int i;

	*refused = true;
	if (!topo_path)
		return topoml_siteconf_load_topology(c, dir, err);
	t = topoml_load_judged(topo_path, c->topology_format, err, &warn,
			       refused);
	for (i = 0; i < warn.n && i < TOPO_WARNINGS_SHOWN; i++)
		error("%s: warning: %s", sel_who, warn.msg[i]);
	if (warn.n > TOPO_WARNINGS_SHOWN)
		error("%s: warning: ... and %d more about %s",
		      sel_who, warn.n - TOPO_WARNINGS_SHOWN, topo_path);
	topoml_errors_clear(&warn);
	if (t && c->family && (int)t->family != c->family) {
		topoml_errors_add(err, "%s: Family=%s but %s describes a %s",
				  c->path ? c->path : "topoml.conf",
				  topoml_family_name(c->family), topo_path,
				  topoml_family_name(t->family));
		topoml_free(t);
		t = NULL;
		*refused = true;	/* topoml.conf's error */
	}
	return t;
}

/*
 * Slurm 26.05's topology/torus3d (topology.yaml) takes only the box shapes
 * it lists, at its anchors: on that torus the engine proposes only those,
 * chosen by its own criteria, else torus3d refuses its choice.  A yaml
 * without torus3d (tree, block) or of another torus: the engine's own
 * boxes, as before.
 */
static struct topoml_torus3d *_torus3d_bind(topoml_topo_t *topo,
					    const char *dir)
{
	char *yaml = NULL, why[512];
	topoml_errors_t err = { 0 };
	struct topoml_torus3d *c = NULL;

	if (!topo || topo->family != TOPOML_TORUS)
		return NULL;
	xstrfmtcat(yaml, "%s/topology.yaml", dir);
	if (access(yaml, F_OK) == 0 &&
	    (c = topoml_torus3d_load(yaml, &err)) &&
	    topoml_torus3d_bind(topo, c, why, sizeof(why))) {
		info("%s: not bound to torus3d's boxes: %s", sel_who, why);
		topoml_torus3d_free(c);
		c = NULL;
	} else if (c) {
		info("%s: %s: the engine proposes torus3d's %d box shapes only",
		     sel_who, yaml, c->nshapes);
	} else if (err.n) {
		/* no torus3d section (tree, block) or a bad one */
		info("%s: not bound to torus3d's boxes: %s",
		     sel_who, err.msg[0]);
	}
	topoml_errors_clear(&err);
	xfree(yaml);
	return c;
}

/*
 * Read topoml.conf (if present) and the topology it names.  On failure the
 * previous configuration stays; at start-up a failure is fatal.  Not so
 * for the topology.conf Slurm reads (_slurms_topology_file()): a file
 * Slurm runs with never stops slurmctld, and one topoml cannot model
 * (Slurm may run with it, or has read it at reconfigure) leaves jobs to
 * plain cons_tres, said loudly, rather than keep a model Slurm has left.
 */
int sel_conf_load(bool at_start)
{
	struct topoml_siteconf conf;
	topoml_errors_t err = { 0 };
	topoml_topo_t *topo = NULL;
	char *path = get_extra_conf_path("topoml.conf");
	char *dir = _conf_dir();
	char *topo_path = NULL;
	struct topoml_torus3d *t3d = NULL;
	char notes[8][TOPOML_NOTE_LEN];
	int rc = SLURM_ERROR, nnotes;
	bool refused, no_model = false;

	topoml_siteconf_init(&conf);
	if (path && access(path, F_OK) == 0) {
		if (topoml_siteconf_read(path, &conf, &err))
			goto out;
		/* deprecated names, settings that do nothing as set */
		nnotes = topoml_siteconf_notes(&conf, notes, 8);
		for (int i = 0; i < nnotes; i++)
			info("%s: %s: %s", sel_who, path, notes[i]);
	} else {
		info("%s: no %s, using defaults", sel_who, path);
	}
	if (conf.placement) {
		topo_path = topoml_siteconf_topology_path(&conf, dir);
		if (!topo_path && !conf.path) {
			/* No site files at all: behave as cons_tres. */
			info("%s: no topology file in %s, jobs get plain cons_tres",
			     sel_who, dir);
			rc = SLURM_SUCCESS;
			goto out;
		}
		if (_foreign_topology_conf(&conf, topo_path)) {
			info("%s: %s is %s's, not a network the engine reads: jobs get plain cons_tres",
			     sel_who, topo_path, slurm_conf.topology_plugin);
			free(topo_path);
			topo_path = NULL;
			rc = SLURM_SUCCESS;
			goto out;
		}
		topo = _load_topology(&conf, dir, topo_path, &err, &refused);
		if (!topo && _slurms_topology_file(topo_path) &&
		    (!refused || !at_start)) {
			_errors_log(&err, false);
			error("%s: %s: %s; jobs get plain cons_tres placement until it is fixed (then scontrol reconfigure)",
			      sel_who, topo_path, refused ?
			      "Slurm's topology plugin refuses it too" :
			      "Slurm's topology plugin runs with it, but topoml cannot model its network (above)");
			topoml_errors_clear(&err);
			no_model = true;
			rc = SLURM_SUCCESS;
			goto out;
		}
		if (!topo)
			goto out;
		t3d = _torus3d_bind(topo, dir);
		if (topoml_siteconf_wait_inert_on(&conf, topo, notes[0],
						  sizeof(notes[0])))
			info("%s: %s: %s", sel_who, path, notes[0]);
	}
	rc = SLURM_SUCCESS;
out:
	if (rc != SLURM_SUCCESS) {
		_errors_log(&err, at_start);
		error("%s: keeping the previous configuration", sel_who);
		topoml_siteconf_clear(&conf);
		free(topo_path);
	} else {
		char sum[256];

		if (topo)
			topoml_summary(topo, sum, sizeof(sum));
		else if (no_model)
			snprintf(sum, sizeof(sum), "%s",
				 "no model of the topology (above), plain cons_tres");
		else
			snprintf(sum, sizeof(sum), "%s",
				 conf.placement ? "no topology, plain cons_tres"
						: "Placement=off, plain cons_tres");
		info("%s: %s: %s%s%s", sel_who, path, sum,
		     topo_path ? " from " : "", topo_path ? topo_path : "");
		slurm_mutex_lock(&g_lock);
		topoml_siteconf_clear(&g_conf);
		g_conf = conf;
		if (g_topo)
			topoml_free(g_topo);
		g_topo = topo;
		topoml_torus3d_free(g_t3d);
		g_t3d = t3d;
		free(g_topo_path);
		g_topo_path = topo_path;
		g_map_count = -1;
		g_map_gen++;
		slurm_mutex_unlock(&g_lock);
	}
	topoml_errors_clear(&err);
	xfree(path);
	xfree(dir);
	return rc;
}

/* Build the Slurm <-> engine node maps by name; g_lock held. */
void sel_map_nodes(void)
{
	node_record_t *node_ptr;
	int i, unmapped = 0;

	if (g_map_count == node_record_count && g_map)
		return;
	xfree(g_map);
	xfree(g_rmap);
	g_map = xcalloc(node_record_count + 1, sizeof(int));
	g_rmap = xcalloc(g_topo->nnodes + 1, sizeof(int));
	for (i = 0; i < node_record_count; i++)
		g_map[i] = -1;
	for (i = 0; i < g_topo->nnodes; i++)
		g_rmap[i] = -1;
	for (i = 0; (node_ptr = next_node(&i)); i++) {
		int t = topoml_node_by_name(g_topo, node_ptr->name);

		g_map[i] = t;
		if (t >= 0)
			g_rmap[t] = i;
		else
			unmapped++;
	}
	g_map_count = node_record_count;
	g_map_gen++;
	info("%s: %d of %d Slurm nodes are in the topology (ring order of each job in its SystemComment)",
	     sel_who, node_record_count - unmapped, node_record_count);
	/* Slurm leaves them out too ("Invalid hostnames ..."): say so */
	if (g_topo->nnodes > node_record_count - unmapped)
		info("%s: %d of the topology's %d nodes are no Slurm node; never chosen",
		     sel_who, g_topo->nnodes - (node_record_count - unmapped),
		     g_topo->nnodes);
}

/* fini: everything read; g_lock held. */
void sel_conf_clear(void)
{
	if (g_topo)
		topoml_free(g_topo);
	g_topo = NULL;
	topoml_torus3d_free(g_t3d);
	g_t3d = NULL;
	topoml_siteconf_clear(&g_conf);
	free(g_topo_path);
	g_topo_path = NULL;
	xfree(g_map);
	xfree(g_rmap);
	g_map_count = -1;
}
