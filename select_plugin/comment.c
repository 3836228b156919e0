/*
 * Merge topoml's part into a job's SystemComment (see comment.h).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "comment.h"

char *topoml_comment_merge(const char *old, const char *ours)
{
	size_t tag = strlen(TOPOML_COMMENT_TAG);
	size_t sep = strlen(TOPOML_COMMENT_SEP);
	size_t cap = (old ? strlen(old) : 0) + sep + strlen(ours) + 1, len = 0;
	const char *p = old;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	/* Walk the parts of old; keep those that are not ours. */
	while (p && *p) {
		const char *end = strstr(p, TOPOML_COMMENT_SEP);
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n && strncmp(p, TOPOML_COMMENT_TAG, tag)) {
			if (len) {
				memcpy(out + len, TOPOML_COMMENT_SEP, sep);
				len += sep;
			}
			memcpy(out + len, p, n);
			len += n;
		}
		p = end ? end + sep : NULL;
	}
	if (len) {
		memcpy(out + len, TOPOML_COMMENT_SEP, sep);
		len += sep;
	}
	strcpy(out + len, ours);
	return out;
}
