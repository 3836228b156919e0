/*
 * libtopoml's public API (topoml.h), site files: the loaders of Slurm's
 * topology.conf, topoml's JSON and ibnetdiscover output.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_LOAD_H
#define TOPOML_LOAD_H

#include "topoml/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- site files ---------------------------------------------------- */

enum topoml_format {
	TOPOML_FMT_AUTO = 0,	/* by content: JSON, ibnetdiscover, conf */
	TOPOML_FMT_CONF,	/* Slurm topology.conf */
	TOPOML_FMT_JSON,
	TOPOML_FMT_IBNET,	/* ibnetdiscover output */
};

/* NULL on failure, with every problem in err. */
topoml_topo_t *topoml_load(const char *path, enum topoml_format fmt,
			   topoml_errors_t *err);
topoml_topo_t *topoml_load_conf(const char *path, topoml_errors_t *err);
topoml_topo_t *topoml_load_json(const char *path, topoml_errors_t *err);
topoml_topo_t *topoml_load_ibnet(const char *path, topoml_errors_t *err);

/*
 * The same with a warning list: what Slurm 22.05 accepts but only logs
 * (a node on two leaf switches, a key given twice), and what an
 * ibnetdiscover import had to decide (unnamed HCAs skipped, leaves
 * grouped into scalable units).  warn may be NULL: warnings are then
 * dropped, which is what topoml_load() and the plain topoml_load_*() do.
 */
topoml_topo_t *topoml_load_ex(const char *path, enum topoml_format fmt,
			      topoml_errors_t *err, topoml_errors_t *warn);
topoml_topo_t *topoml_load_conf_ex(const char *path, topoml_errors_t *err,
				   topoml_errors_t *warn);
/*
 * topoml_load_conf_ex() that, when it fails, also says whether Slurm's
 * topology plugin refuses the file too (*slurm_refuses true: slurmctld
 * stops on it) or runs with it (false: only topoml has no model of it).
 */
topoml_topo_t *topoml_load_conf_judged(const char *path, topoml_errors_t *err,
				       topoml_errors_t *warn,
				       bool *slurm_refuses);
/* topoml_load_ex() the same way; a file of another format: true. */
topoml_topo_t *topoml_load_judged(const char *path, enum topoml_format fmt,
				  topoml_errors_t *err, topoml_errors_t *warn,
				  bool *slurm_refuses);
topoml_topo_t *topoml_load_ibnet_ex(const char *path, topoml_errors_t *err,
				    topoml_errors_t *warn);

/* TOPOML_FMT_CONF, _JSON or _IBNET from the first bytes of the file. */
enum topoml_format topoml_detect_format(const char *path);

#ifdef __cplusplus
}
#endif
#endif /* TOPOML_LOAD_H */
