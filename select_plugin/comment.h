/*
 * The job's SystemComment is shared with other slurmctld plugins: topoml
 * owns only its own "topoml: ..." part.  Pure C, no Slurm headers, so the
 * merge is unit-tested without slurmctld.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SEL_COMMENT_H
#define TOPOML_SEL_COMMENT_H

#define TOPOML_COMMENT_TAG	"topoml: "
#define TOPOML_COMMENT_SEP	"; "

/*
 * old (may be NULL) with every part that begins with TOPOML_COMMENT_TAG
 * removed, then ours appended after TOPOML_COMMENT_SEP (ours alone when
 * nothing else is left).  Parts are separated by TOPOML_COMMENT_SEP; the
 * other parts are kept verbatim and in order, so running this again (a
 * requeued job starts again) replaces ours instead of adding to it.
 * Returns a malloc'd string, or NULL when out of memory.
 */
char *topoml_comment_merge(const char *old, const char *ours);

#endif
