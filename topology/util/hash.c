/*
 * The name hash and the name index (open addressing, linear probing) that
 * looks switches and nodes up by name.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* Open addressing, linear probing; keys point at names owned by the model. */
struct topoml_name_index {
	uint32_t cap;		/* power of two */
	uint32_t n;
	const char **key;
	int *val;
	uint32_t *hash;
};

uint32_t topoml__hash(const char *s)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 16777619u;
	}
	return h;
}

struct topoml_name_index *topoml__index_new(void)
{
	struct topoml_name_index *ix = calloc(1, sizeof(*ix));

	if (!ix)
		return NULL;
	ix->cap = 64;
	ix->key = calloc(ix->cap, sizeof(*ix->key));
	ix->val = calloc(ix->cap, sizeof(*ix->val));
	ix->hash = calloc(ix->cap, sizeof(*ix->hash));
	if (!ix->key || !ix->val || !ix->hash) {
		free(ix->key);
		free(ix->val);
		free(ix->hash);
		free(ix);
		return NULL;
	}
	return ix;
}

void topoml__index_free(struct topoml_name_index *ix)
{
	if (!ix)
		return;
	free(ix->key);
	free(ix->val);
	free(ix->hash);
	free(ix);
}

int topoml__index_find(const struct topoml_name_index *ix, const char *name)
{
	uint32_t h, i;

	if (!ix || !name)
		return -1;
	h = topoml__hash(name);
	for (i = h & (ix->cap - 1); ix->key[i]; i = (i + 1) & (ix->cap - 1))
		if (ix->hash[i] == h && !strcmp(ix->key[i], name))
			return ix->val[i];
	return -1;
}

static void _index_put_raw(struct topoml_name_index *ix, const char *key,
			   uint32_t h, int val)
{
	uint32_t i;

	for (i = h & (ix->cap - 1); ix->key[i]; i = (i + 1) & (ix->cap - 1))
		;
	ix->key[i] = key;
	ix->hash[i] = h;
	ix->val[i] = val;
	ix->n++;
}

/* key must stay valid as long as the index: it is the model's own copy. */
int topoml__index_put(struct topoml_name_index *ix, const char *key, int val)
{
	if ((ix->n + 1) * 10 > ix->cap * 7) {
		struct topoml_name_index big = { .cap = ix->cap * 2 };
		uint32_t i;

		big.key = calloc(big.cap, sizeof(*big.key));
		big.val = calloc(big.cap, sizeof(*big.val));
		big.hash = calloc(big.cap, sizeof(*big.hash));
		if (!big.key || !big.val || !big.hash) {
			free(big.key);
			free(big.val);
			free(big.hash);
			return -1;
		}
		for (i = 0; i < ix->cap; i++)
			if (ix->key[i])
				_index_put_raw(&big, ix->key[i], ix->hash[i],
					       ix->val[i]);
		free(ix->key);
		free(ix->val);
		free(ix->hash);
		*ix = big;
	}
	_index_put_raw(ix, key, topoml__hash(key), val);
	return 0;
}
