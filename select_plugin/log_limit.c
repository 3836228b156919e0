/*
 * Log rate limit per message kind (log_limit.h).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stddef.h>

#include "log_limit.h"

/* FNV-1a: a collision only ever hides one line. */
static uint64_t _hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; s && *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* True when h is recent; otherwise remembered (the oldest forgotten). */
static bool _seen(struct topoml_log_limit *l, uint64_t h)
{
	for (unsigned int i = 0; i < l->nseen; i++)
		if (l->seen[i] == h)
			return true;
	l->seen[l->next] = h;
	l->next = (l->next + 1) % TOPOML_LOG_LIMIT_SEEN;
	if (l->nseen < TOPOML_LOG_LIMIT_SEEN)
		l->nseen++;
	return false;
}

static struct topoml_log_kind *_kind(struct topoml_log_limit *l,
				     const void *key)
{
	int i;

	for (i = 0; i < TOPOML_LOG_LIMIT_KINDS - 1; i++) {
		if (l->kind[i].key == key)
			return &l->kind[i];
		if (!l->kind[i].key) {
			l->kind[i].key = key;
			return &l->kind[i];
		}
	}
	/* the last slot: every further kind together, still bounded */
	l->kind[i].key = key;
	return &l->kind[i];
}

bool topoml_log_limit(struct topoml_log_limit *l, const void *key,
		      const char *text, time_t now, unsigned long *dropped)
{
	struct topoml_log_kind *k;

	*dropped = 0;
	if (_seen(l, _hash(text)))
		return false;
	k = _kind(l, key);
	/* a new window, also when the clock went back */
	if (!k->shown || now < k->start ||
	    now - k->start >= (time_t)l->interval) {
		k->start = now;
		k->shown = 0;
	}
	if (k->shown >= l->burst) {
		k->dropped++;
		return false;
	}
	k->shown++;
	*dropped = k->dropped;
	k->dropped = 0;
	return true;
}
