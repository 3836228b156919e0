/*
 * The checkpoint directory layout, shared by the hook library (the
 * training process) and the SPANK plugin (slurmstepd):
 *   DIR/step-N/     complete checkpoints
 *   DIR/latest      symlink to the newest complete step-N
 *   DIR/epoch       "RESTART JOB": the restart count of the run that
 *                   owns DIR (fencing) and its job id (who may resume)
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_CKPT_LAYOUT_H
#define TOPOML_CKPT_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* mkdir -p with mode 0755; 0 or -1 with errno. */
int topoml_ckpt__mkdir_p(const char *dir);
/* The step DIR/latest names and its path; -1 (path "") when none. */
long topoml_ckpt__read_latest(const char *dir, char *path, size_t len);
/* The same in the directory open as DFD, whose path is DIR. */
long topoml_ckpt__read_latest_at(int dfd, const char *dir, char *path,
				 size_t len);
/*
 * DIR/epoch's restart count, -1 when absent or not a regular file owned
 * by OWNER (never follows a symlink, never blocks on a FIFO).
 */
long topoml_ckpt__read_epoch(const char *dir, uid_t owner);
long topoml_ckpt__read_epoch_at(int dfd, uid_t owner);
/* The same, and in *JOB the job whose run DIR holds (0: not recorded,
 * a directory of an older version). */
long topoml_ckpt__read_epoch_job_at(int dfd, uid_t owner, uint32_t *job);
/* Raise DIR/epoch to restart (never lower it), atomically, keeping the
 * job recorded; 0 or -1.  Runs as the directory's owner (the job's user). */
int topoml_ckpt__write_epoch(const char *dir, long restart);
/* The same in the directory open as DFD, for the user OWNER (a root
 * thread with the user's fsuid writes it).  JOB (not 0) another than the
 * recorded one takes DIR over: its restart count replaces the other's. */
int topoml_ckpt__write_epoch_at(int dfd, long restart, uid_t owner,
				uint32_t job);

#endif
