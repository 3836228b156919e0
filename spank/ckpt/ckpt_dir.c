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
 * replace it or a directory on its way.  Only a world-writable directory
 * (/tmp) lets anybody add entries: what lies in one must be the user's
 * (or root's), under the sticky bit; DIR itself must be the user's and
 * not writable by others.  Group-writable project directories are the
 * site's trust.  Checked as the user, symlinks resolved.
 */
static int _dir_safe(const char *dir, uid_t uid, char *err, size_t errlen)
{
	char real[PATH_MAX], *s, *slash;
	struct stat st, up;

	if (!realpath(dir, real) || stat("/", &up) < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	st = up;
	for (s = real + 1; *s; s = slash + 1) {
		if ((slash = strchr(s, '/')))
			*slash = '\0';
		if (stat(real, &st) < 0) {
			snprintf(err, errlen, "%s: %s", real, strerror(errno));
			return -1;
		}
		if ((up.st_mode & S_IWOTH) &&
		    (!(up.st_mode & S_ISVTX) ||
		     (st.st_uid != uid && st.st_uid != 0))) {
			snprintf(err, errlen, "%s is %s: another user could "
				 "replace the checkpoints", real,
				 !(up.st_mode & S_ISVTX) ? "in a directory "
				 "anybody can write (no sticky bit)" :
				 "another user's, in a directory anybody "
				 "can write");
			return -1;
		}
		up = st;
		if (!slash)
			break;
		*slash = '/';
	}
	if (st.st_uid != uid || (st.st_mode & S_IWOTH)) {
		snprintf(err, errlen, "%s is %s: another user could replace "
			 "the checkpoints", real, st.st_uid != uid ?
			 "another user's directory" : "writable by anybody");
		return -1;
	}
	return 0;
}

/* DIR created, usable and trusted by the job's user UID. */
int ml_ckpt__mkdir_user(const char *dir, uid_t uid, char *err,
			size_t errlen)
{
	if (topoml_ckpt__mkdir_p(dir) < 0 ||
	    /* Effective ids: slurmstepd's real uid is still root here. */
	    faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0) {
		snprintf(err, errlen, "cannot use %s as uid %u: %s", dir,
			 (unsigned)uid, strerror(errno));
		return -1;
	}
	return _dir_safe(dir, uid, err, errlen);
}

/* DIR/latest's path, or "" when there is no complete checkpoint. */
void ml_ckpt__resume_path(const char *dir, char *out, size_t len)
{
	topoml_ckpt__read_latest(dir, out, len);
}
