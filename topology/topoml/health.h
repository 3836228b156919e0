/*
 * Node health records: what a job's own straggler detection reported,
 * how it reaches slurmctld, and the per-node table select/topoml keeps.
 *
 *   the job     appends {"event": "straggler", "node": "n3", ...} lines
 *               to DIR/health.jsonl (contrib/ckpt; untrusted: the user's
 *               process writes it)
 *   topoml.so   at the end of the job's first-node step, as root, reads
 *               at most TOPOML_HEALTH_REPORT_MAX bytes of it through the
 *               checkpoint directory's descriptor as the user
 *               (topoml_health_report_parse), keeps the nodes of the
 *               job's allocation as slurmctld reports it, and sets the
 *               job's AdminComment part "topoml-health: straggler=n3,n4"
 *               (only root, SlurmUser and Slurm administrators can)
 *   slurmctld   select/topoml at job end takes that part
 *               (topoml_health_part_parse), the job's nodes only, into
 *               the table (topoml_health_record) and acts by the site's
 *               HealthPolicy; the table is saved in StateSaveLocation
 *               (topoml_health_save / _load) and `topoml health` shows it.
 *
 * Pure C, bounded: every count below is a fixed maximum.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_HEALTH_H
#define TOPOML_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TOPOML_HEALTH_TAG	"topoml-health: "
#define TOPOML_HEALTH_FILE	"health.jsonl"
#define TOPOML_HEALTH_STATE	"topoml_health.state"
/* Bytes of a job's health.jsonl read; a larger file is ignored whole. */
#define TOPOML_HEALTH_REPORT_MAX	(64 * 1024)
#define TOPOML_HEALTH_LINE_MAX		4096
/* Nodes one job may name; more are dropped. */
#define TOPOML_HEALTH_NAMES_MAX		64
#define TOPOML_HEALTH_NAME_MAX		63
/* Sightings kept per node (the oldest goes first), nodes in the table. */
#define TOPOML_HEALTH_SEEN_MAX		8
#define TOPOML_HEALTH_NODES_MAX		65536

enum topoml_health_policy {
	TOPOML_HEALTH_REPORT,	/* recorded and shown, nothing else */
	TOPOML_HEALTH_AVOID,	/* placed last for HealthAvoidTime */
	TOPOML_HEALTH_DRAIN,	/* avoid; drain when corroborated */
};
#define TOPOML_HEALTH_AVOID_TIME_DEFAULT 3600

struct topoml_health_names {
	int n;
	char name[TOPOML_HEALTH_NAMES_MAX][TOPOML_HEALTH_NAME_MAX + 1];
};

/* A node name as Slurm spells them: 1 to 63 of [A-Za-z0-9._-], starting
 * with a letter or digit. */
bool topoml_health_name_ok(const char *s);
/* Add NAME once (false: full, a bad name or already there). */
bool topoml_health_names_add(struct topoml_health_names *n,
			     const char *name);
bool topoml_health_names_has(const struct topoml_health_names *n,
			     const char *name);

/*
 * A job's health.jsonl (LEN bytes of BUF, not NUL-terminated): one JSON
 * object per line; a line with "event": "straggler" and a valid "node"
 * adds that node to OUT (once).  Other events are skipped; a line that
 * is no such object (bad JSON, too long, a bad node name) is counted in
 * *BAD with the first one's reason in ERR.  Returns the number of nodes
 * in OUT, or -1 when LEN is over TOPOML_HEALTH_REPORT_MAX.
 */
int topoml_health_report_parse(const char *buf, size_t len,
			       struct topoml_health_names *out, int *bad,
			       char *err, size_t errlen);

/*
 * Root-side preflight findings (--ml-preflight, topoml.so as root): only
 * node-wide hardware checks that nothing the job controls can change
 * (every GPU NVML sees, every HCA port of the node model; never the
 * compute probe, the ring stream or a check narrowed by the job's GPUs).
 * They reach slurmctld only in AdminComment, written by root.
 */
#define TOPOML_HEALTH_PF_ECC	0x1u	/* uncorrectable ECC errors */
#define TOPOML_HEALTH_PF_PAGES	0x2u	/* pages retired/remapped */
#define TOPOML_HEALTH_PF_PORT	0x4u	/* a model's HCA port DOWN */
#define TOPOML_HEALTH_PF_ALL	0x7u

struct topoml_health_pf {
	int n;
	char name[TOPOML_HEALTH_NAMES_MAX][TOPOML_HEALTH_NAME_MAX + 1];
	unsigned checks[TOPOML_HEALTH_NAMES_MAX];	/* TOPOML_HEALTH_PF_ */
};

/* Add CHECKS to NAME's (false: full, a bad name or no known check). */
bool topoml_health_pf_add(struct topoml_health_pf *p, const char *name,
			  unsigned checks);
/* "ecc+pages" into BUF (cut at len); the length it wanted. */
int topoml_health_pf_checks_write(unsigned checks, char *buf, size_t len);

/* "topoml-health: straggler=n3,n4" (malloc'd; NULL: none or no memory). */
char *topoml_health_part_write(const struct topoml_health_names *n);
/* "topoml-health: straggler=n3 preflight=n2:ecc+port,n5:pages", either
 * key when it has nodes (N or PF may be NULL; NULL: none, no memory). */
char *topoml_health_part_write_pf(const struct topoml_health_names *n,
				  const struct topoml_health_pf *pf);
/*
 * The topoml-health part of a comment (other parts, "; "-separated,
 * skipped): 1 none, 0 OUT filled, -1 malformed (reason in ERR).  A
 * preflight= key is accepted and left out here (see _pf).
 */
int topoml_health_part_parse(const char *comment,
			     struct topoml_health_names *out, char *err,
			     size_t errlen);
/* Both keys; PF may be NULL (its entries are then checked, not kept). */
int topoml_health_part_parse_pf(const char *comment,
				struct topoml_health_names *out,
				struct topoml_health_pf *pf, char *err,
				size_t errlen);
/* OLD (may be NULL) with its topoml-health parts replaced by OURS
 * (malloc'd; NULL: no memory). */
char *topoml_health_part_merge(const char *old, const char *ours);
/* OLD without its topoml-health parts ("" when nothing is left;
 * malloc'd, NULL: no memory). */
char *topoml_health_part_drop(const char *old);

/* ---- the per-node table (slurmctld, topoml health) ---------------- */

enum topoml_health_action {
	TOPOML_HEALTH_ACT_NONE,		/* recorded (policy report) */
	TOPOML_HEALTH_ACT_AVOID,
	TOPOML_HEALTH_ACT_DRAIN,
};

struct topoml_health_seen {
	uint32_t job, uid;
	int64_t at;
};

struct topoml_health_node {
	char name[TOPOML_HEALTH_NAME_MAX + 1];
	int nseen;
	struct topoml_health_seen seen[TOPOML_HEALTH_SEEN_MAX];
	int action;			/* the last, enum topoml_health_action */
	int64_t action_at;
	int64_t avoid_until;		/* 0: not avoided */
	char why[96];			/* what the last action rested on */
	/* The last root-side preflight finding (pf_at 0: none). */
	uint32_t pf_job;
	int64_t pf_at;
	unsigned pf_checks;		/* TOPOML_HEALTH_PF_* */
};

struct topoml_health_table {
	int n, cap;
	struct topoml_health_node *node;
};

void topoml_health_table_clear(struct topoml_health_table *t);
struct topoml_health_node *topoml_health_find(
	const struct topoml_health_table *t, const char *name);

/*
 * Node NAME was reported slow by job JOB of user UID at NOW: the
 * sighting is kept (one per job), and the action under POLICY returned
 * (and kept on the node): REPORT: none; AVOID: avoid for AVOID_TIME
 * seconds; DRAIN: avoid, and drain when users of at least two different
 * uids reported it within AVOID_TIME seconds (one user alone never
 * drains).  -1: the table is full or out of memory.
 */
int topoml_health_record(struct topoml_health_table *t, const char *name,
			 uint32_t job, uint32_t uid, int64_t now,
			 enum topoml_health_policy policy, int avoid_time);
/*
 * A root-side preflight finding CHECKS on node NAME in job JOB at NOW
 * (topoml.so as root, node-wide hardware only): REPORT: recorded; AVOID:
 * avoided for AVOID_TIME; DRAIN: drained on it alone (no second user
 * needed: no user can make or forge it).  A straggler report within
 * AVOID_TIME of it drains too under DRAIN.  -1: full or no memory.
 */
int topoml_health_record_pf(struct topoml_health_table *t, const char *name,
			    uint32_t job, unsigned checks, int64_t now,
			    enum topoml_health_policy policy, int avoid_time);
/* Distinct uids among NODE's sightings since SINCE. */
int topoml_health_uids(const struct topoml_health_node *node, int64_t since);
bool topoml_health_avoided(const struct topoml_health_node *node,
			   int64_t now);
const char *topoml_health_action_name(int action);
int topoml_health_policy_parse(const char *s,
			       enum topoml_health_policy *p);
const char *topoml_health_policy_name(enum topoml_health_policy p);

/*
 * The table as text ("topoml-health 1" and one line per node), read back
 * by topoml_health_load (0, or -1 with the line and reason in ERR;
 * T is cleared first and holds the lines read before the error).
 */
int topoml_health_save(FILE *f, const struct topoml_health_table *t);
int topoml_health_load(const char *text, size_t len,
		       struct topoml_health_table *t, char *err,
		       size_t errlen);

#endif
