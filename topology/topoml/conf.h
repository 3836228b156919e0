/*
 * libtopoml's public API (topoml.h), site configuration: topoml.conf.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_CONF_H
#define TOPOML_CONF_H

#include <stdbool.h>

#include "topoml/model.h"
#include "topoml/load.h"
#include "topoml/contract.h"
#include "topoml/hybrid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- site configuration (topoml.conf) ---------------------------- */

/*
 * topoml.conf sits beside slurm.conf and tells select/topoml which topology
 * file to load and how to place jobs.  Pure C (no Slurm headers) so the CLI
 * can check a site's file too.  See topoml.conf(5).
 */
struct topoml_part_conf {
	char *name;			/* partition */
	bool has_hint;
	enum topoml_hint hint;
	int placement;			/* -1 = inherit, 0 = off, 1 = on */
	int locality_wait;		/* LocalityWait= seconds, -1 inherit */
	int line;
};

struct topoml_siteconf {
	char *path;			/* the topoml.conf read, or NULL */
	char *topology_file;		/* absolute path, or NULL = auto */
	enum topoml_format topology_format;
	int family;			/* enum topoml_family, 0 = auto */
	enum topoml_hint default_hint;
	bool placement;			/* false: plain cons_tres everywhere */
	bool df_spread_alltoall;	/* DragonflySpread=alltoall */
	int debug;			/* 0 quiet, 1 placements, 2 verbose */
	bool torus_curve;		/* TorusPlacement=curve */
	/*
	 * LocalityWait= seconds for each family's locality criterion (an
	 * exact torus box, --ml-parallel locality), 0 = never; set apart by
	 * the deprecated TorusBoxWait= and HybridWait=.  LocalityWaitSpan=
	 * (TorusBoxWaitSpan=), default 1.  *_key: the key that set each,
	 * for the logs.
	 */
	int torus_box_wait;
	double torus_box_wait_span;
	int hybrid_wait;
	const char *box_wait_key, *hybrid_wait_key, *span_key;
	unsigned wait_keys;		/* TOPOML_WAITKEY_* seen */
	/* HybridWeights=: per traffic kind (enum topoml_kind, below), the
	 * defaults of topoml_kind_weights_default where not set */
	double hybrid_weights[5];
	/* HealthPolicy= (enum topoml_health_policy, topoml/health.h) and
	 * HealthAvoidTime= seconds */
	int health_policy;
	int health_avoid_time;
	int nparts;
	struct topoml_part_conf *parts;
};

/* The wait keys a topoml.conf set (siteconf.wait_keys). */
#define TOPOML_WAITKEY_LOCALITY		0x01	/* LocalityWait= */
#define TOPOML_WAITKEY_SPAN		0x02	/* LocalityWaitSpan= */
#define TOPOML_WAITKEY_TORUSBOX		0x04	/* TorusBoxWait= (old) */
#define TOPOML_WAITKEY_HYBRID		0x08	/* HybridWait= (old) */
#define TOPOML_WAITKEY_TORUSSPAN	0x10	/* TorusBoxWaitSpan= (old) */

/* Defaults: auto topology file and family, allreduce, placement on. */
void topoml_siteconf_init(struct topoml_siteconf *c);
/* TorusBoxWaitSpan's range, and its parser (conf/siteconf.c): 0, or -1 (not a
 * number from 1 to TOPOML_BOX_WAIT_SPAN_MAX) */
#define TOPOML_BOX_WAIT_SPAN_MAX 64
int topoml_box_wait_span_parse(const char *s, double *v);
/* TorusPlacement=boxes|curve (conf/siteconf.c; the CLI's --torus-placement
 * too): 0 with *curve set, or -1 (neither word); and the word for it. */
int topoml_torus_placement_parse(const char *s, bool *curve);
const char *topoml_torus_placement_name(bool curve);
/* A setting that does nothing as set (LocalityWaitSpan while LocalityWait
 * is 0, a box wait with TorusPlacement=curve, ...), said for the admin;
 * NULL when there is none (topoml_siteconf_notes' first such). */
const char *topoml_siteconf_inert(const struct topoml_siteconf *c);
/*
 * Every note for the admin on c, up to max lines written to out (the
 * count is returned): the deprecated names it uses, with the new one,
 * then each setting that does nothing as set (topoml_siteconf_inert's
 * first).
 */
#define TOPOML_NOTE_LEN 192
int topoml_siteconf_notes(const struct topoml_siteconf *c,
			  char (*out)[TOPOML_NOTE_LEN], int max);
/*
 * Read path into c (initialised here).  Relative TopologyFile paths are
 * taken from the file's directory.  0 on success, -1 with every problem in
 * err as "FILE:LINE:COL: what is wrong".
 */
int topoml_siteconf_read(const char *path, struct topoml_siteconf *c,
			 topoml_errors_t *err);
void topoml_siteconf_clear(struct topoml_siteconf *c);
/*
 * The topology file to use: TopologyFile, else topoml.json, then
 * topology.conf in dir (the directory of slurm.conf).  Malloc'd, NULL if none.
 */
char *topoml_siteconf_topology_path(const struct topoml_siteconf *c,
				    const char *dir);
/* Load the topology file and check Family=; NULL with errors in err. */
topoml_topo_t *topoml_siteconf_load_topology(const struct topoml_siteconf *c,
					     const char *dir,
					     topoml_errors_t *err);
/* Hint and placement switch for a job in partition part (may be NULL). */
enum topoml_hint topoml_siteconf_hint(const struct topoml_siteconf *c,
				      const char *part);
bool topoml_siteconf_placement(const struct topoml_siteconf *c,
			       const char *part);
int topoml_family_parse(const char *s, int *family);
/*
 * The kind of network Slurm's topology.conf at PATH describes, as Slurm
 * picks its plugin for it: "block" for BlockName= lines, "tree" for
 * SwitchName= lines, NULL for neither or no file.  topology/topoml wraps
 * Slurm's plugin of that kind (NULL: the release's flat one), and
 * topoml check says which.
 */
const char *topoml_slurm_topology_kind(const char *path);

_Static_assert(sizeof(((struct topoml_siteconf *)0)->hybrid_weights) ==
	       TOPOML_KIND_COUNT * sizeof(double), "one weight per kind");

#ifdef __cplusplus
}
#endif
#endif /* TOPOML_CONF_H */
