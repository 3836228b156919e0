/*
 * File access from root contexts (slurmd, slurmstepd) that must not be
 * turned against root by anything a user controls.
 *
 * - Root-owned places (cache_dir and below): walked from "/" without
 *   following any symlink but root's; every component is owned by root
 *   and writable by nobody else (a world-writable sticky parent such as
 *   /tmp is allowed above a root-owned directory), so no user can swap a
 *   component for a symlink; files there are written under a random
 *   temporary name and renamed.
 * - A user's places (checkpoint directory, the user's page directory):
 *   the checkpoint directory walked from "/" as the user (ml_safe_dir_open
 *   with the user and the job's groups trusted), files in them opened
 *   with the user's credentials, per thread (fsuid, fsgid and
 *   supplementary groups of the calling thread only), with O_NOFOLLOW and
 *   O_NONBLOCK, and accepted only as a regular file the user owns.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SPANK_SECURE_H
#define TOPOML_SPANK_SECURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#define ML_CRED_MAX_GIDS 64

/* A job user's file-system identity. */
struct ml_cred {
	uid_t uid;
	gid_t gid;
	int ngids;
	gid_t gids[ML_CRED_MAX_GIDS];
};

/* What ml_cred_enter replaced, for ml_cred_leave. */
struct ml_cred_saved {
	bool switched;
	uid_t fsuid;
	gid_t fsgid;
	int ngids;
	gid_t gids[ML_CRED_MAX_GIDS];
};

/*
 * The calling thread (only it) accesses files as the user until
 * ml_cred_leave.  A no-op when the thread is not root (slurmstepd already
 * dropped to the user).  0, or -1 with errno; on -1 nothing is changed.
 */
int ml_cred_enter(const struct ml_cred *u, struct ml_cred_saved *s);
void ml_cred_leave(struct ml_cred_saved *s);

/*
 * Who may change a directory path besides root: the user UID and, where
 * GROUPS is set, the members of its groups (gid and gids: a project's
 * group-writable directory is that group's trust).  Everybody else must
 * be unable to redirect it.
 */
struct ml_trust {
	uid_t uid;
	const struct ml_cred *groups;	/* NULL: no group is trusted */
	bool create;			/* make missing directories, 0755 */
	bool read;			/* only to read from: the last
					 * directory is checked like those
					 * on the way (root's may hold it) */
};

/*
 * Walk the absolute PATH from "/" one component at a time with the
 * calling thread's file-system identity (openat O_PATH|O_NOFOLLOW, fstat
 * at each step), so that nothing on it can be swapped between the check
 * and the use, and refuse it when someone outside T could redirect it:
 *  - a symlink is followed only when root or T->uid owns it;
 *  - every directory on the way is owned by root or T->uid; one that
 *    others can write (the world, or a group outside T->groups) needs the
 *    sticky bit, and then the entry taken in it must be root's or
 *    T->uid's (a /tmp-like directory);
 *  - the last directory is T->uid's and writable by nobody outside T
 *    (with T->read, it is checked like the others: a model file may
 *    sit in a root-owned shared directory or in /tmp).
 * Returns the directory open O_RDONLY|O_DIRECTORY|O_CLOEXEC and its path
 * without symlinks, "." or ".." in CANON (may be NULL); else -1 (a system
 * call failed: errno) or -2 (refused), with the component and the reason
 * in ERR.
 */
int ml_safe_dir_open(const char *path, const struct ml_trust *t,
		     char *canon, size_t canonlen, char *err, size_t errlen);

/*
 * Open the user's input file PATH (absolute) to read, with the calling
 * thread's file-system identity: its directory walked as
 * ml_safe_dir_open does with T (T->read is implied), the file itself
 * never a symlink, a FIFO or a device, owned by root or T->uid and
 * writable by nobody outside T, so that no other user can change what
 * is read.  An fd (O_RDONLY|O_CLOEXEC), or -1 (errno, a system call
 * failed) or -2 (refused), with the reason in ERR (naming the directory
 * when one on the way is at fault).
 */
int ml_user_file_open(const char *path, const struct ml_trust *t,
		      char *err, size_t errlen);

/*
 * Open the directory DIR that root trusts, creating the missing
 * components (0755) when create is set: ml_safe_dir_open with nobody
 * but root trusted (or the caller's euid, when that is not root: the
 * unit tests as a developer).  Returns a directory fd, or -1 with the
 * reason in err.
 */
int ml_root_dir_open(const char *dir, bool create, char *err, size_t errlen);

/*
 * True the first time KEY is seen by this process (thread-safe): one
 * log line per refused path, not one per job.  After 64 keys, false.
 */
bool ml_log_once(const char *key);

/*
 * NAME in directory fd DIRFD, replaced atomically: written by fill() into
 * a new file with a random name (O_EXCL, O_NOFOLLOW), fsynced, given MODE,
 * renamed over NAME.  NAME must be a plain file name (no '/', not "." or
 * "..").  0, or -1 with errno (fill returns non-zero to abort).
 */
int ml_write_atomic(int dirfd, const char *name, mode_t mode,
		    int (*fill)(FILE *f, void *arg), void *arg);

/*
 * Open NAME relative to DIRFD (AT_FDCWD for a path) as a regular file
 * owned by OWNER, never following a symlink and never blocking on a FIFO
 * or device: -1 with errno ELOOP (symlink), EPERM (not a regular file or
 * another owner) or open's errno.  FLAGS: O_RDONLY, O_RDWR, O_CREAT...
 */
int ml_open_owned(int dirfd, const char *name, int flags, mode_t mode,
		  uid_t owner);

/* NAME is a plain file name: not empty, no '/', not "." or "..". */
bool ml_plain_name(const char *name);

/*
 * NODE may name files <cache_dir>/<NODE><suffix>: a plain name, at most
 * ML_NODE_NAME_MAX bytes, no leading '.', only printable characters other
 * than space (Slurm's node names are letters, digits, '-', '_' and '.').
 */
#define ML_NODE_NAME_MAX 200
bool ml_node_name_ok(const char *node);

#endif
