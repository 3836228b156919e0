/*
 * The checkpoint directory of a --ml-ckpt job: DIR's %-patterns, the
 * submit-time check (srun, sbatch) and its creation as the job's user.
 * Its layout (step-N, latest, epoch) is ckpt_layout.c's, shared with the
 * hook library.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "ckpt_int.h"
#include "ckpt_layout.h"

/*
 * DIR with %j (job id), %A/%a (array job/task id), %u (user name), %%; a DIR
 * without '%' gets a per-job (or per array task) subdirectory.
 */
int ml_ckpt__expand_dir(const char *in, uint32_t job, uint32_t array_job,
		       uint32_t array_task, const char *user, char *out,
		       size_t len)
{
	char tmp[PATH_MAX], num[32];
	size_t o = 0;
	const char *s, *add;

	if (!strchr(in, '%')) {
		int n;

		if (array_job && array_task != NO_VAL)
			n = snprintf(tmp, sizeof(tmp), "%s/%u_%u", in,
				     array_job, array_task);
		else
			n = snprintf(tmp, sizeof(tmp), "%s/%u", in, job);
		if (n < 0 || (size_t)n >= sizeof(tmp) || (size_t)n >= len)
			return -1;
		strcpy(out, tmp);
		return 0;
	}
	for (s = in; *s; s++) {
		add = NULL;
		if (*s == '%' && s[1]) {
			s++;
			switch (*s) {
			case 'j':
				snprintf(num, sizeof(num), "%u", job);
				break;
			case 'A':
				snprintf(num, sizeof(num), "%u",
					 array_job ? array_job : job);
				break;
			case 'a':
				if (array_job && array_task != NO_VAL)
					snprintf(num, sizeof(num), "%u",
						 array_task);
				else
					strcpy(num, "0");
				break;
			case 'u':
				add = user;
				break;
			case '%':
				strcpy(num, "%");
				break;
			default:
				return -1;
			}
			if (!add)
				add = num;
		} else {
			num[0] = *s;
			num[1] = '\0';
			add = num;
		}
		if (o + strlen(add) >= len)
			return -1;
		strcpy(out + o, add);
		o += strlen(add);
	}
	out[o] = '\0';
	return 0;
}

/* The existing directory at or above path (a copy in buf). */
static int _existing_ancestor(const char *path, char *buf, size_t len,
			      struct stat *st)
{
	char *slash;

	if (strlen(path) >= len)
		return -1;
	strcpy(buf, path);
	while (stat(buf, st) < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return -1;
		slash = strrchr(buf, '/');
		if (!slash)
			return getcwd(buf, len) && !stat(buf, st) ? 0 : -1;
		if (slash == buf)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	return 0;
}

int ml_ckpt_local(spank_t sp, const struct ml_ckpt_opts *o)
{
	char probe[PATH_MAX], anc[PATH_MAX], *pct;
	struct stat st;

	(void)sp;
	if (!o || !o->set)
		return 0;
	/* Only the part before the first %-pattern exists at submit time. */
	strcpy(probe, o->dir);
	if ((pct = strchr(probe, '%'))) {
		*pct = '\0';
		if ((pct = strrchr(probe, '/')))
			pct[pct == probe ? 1 : 0] = '\0';
		else
			strcpy(probe, ".");
	}
	if (_existing_ancestor(probe, anc, sizeof(anc), &st) < 0) {
		slurm_error("topoml: --ml-ckpt: %s: %s", o->dir,
			    strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		slurm_error("topoml: --ml-ckpt: %s: %s is not a directory",
			    o->dir, anc);
		return -1;
	}
	if (access(anc, W_OK | X_OK) < 0) {
		slurm_error("topoml: --ml-ckpt: %s: cannot create checkpoints "
			    "there: %s is not writable by uid %u (%s)",
			    o->dir, anc, (unsigned)getuid(), strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * DIR is the job's alone: the job resumes from what DIR/latest names
 * (TOPOML_RESUME), so nobody else may have made DIR, or be able to
 * replace it, or redirect the path to it, before or after this check.
 * Walked from "/" as the user (ml_safe_dir_open): only root's and the
 * user's symlinks are followed; every directory on the way is root's or
 * the user's; one others can write needs the sticky bit (/tmp) and then
 * what the walk takes in it must be root's or the user's; DIR itself is
 * the user's.  Writable by one of the job's groups counts as the user's
 * (a project's directory is that group's trust); by the world or another
 * group, not.  The job gets DIR's path without symlinks, and the root
 * side uses the directory by the descriptor held here.
 */
int ml_ckpt__dir_open(const char *dir, const struct ml_cred *cred,
		      char *canon, size_t len, char *err, size_t errlen)
{
	struct ml_trust t = { .uid = cred->uid, .groups = cred,
			      .create = true };
	char why[PATH_MAX + 256];
	int fd;

	fd = ml_safe_dir_open(dir, &t, canon, len, why, sizeof(why));
	if (fd == -2) {
		snprintf(err, errlen, "%s refused: %s: another user could "
			 "redirect or replace the checkpoints", dir, why);
		return -1;
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot use %s as uid %u: %s", dir,
			 (unsigned)cred->uid, why);
		return -1;
	}
	/* Effective ids: slurmstepd's real uid is still root here. */
	if (faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) < 0) {
		snprintf(err, errlen, "cannot use %s as uid %u: %s", dir,
			 (unsigned)cred->uid, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}
