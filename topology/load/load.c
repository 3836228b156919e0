/*
 * topoml_load(): one entry point for every site file, the format told or
 * found from the content (JSON, ibnetdiscover output, else topology.conf).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "topoml.h"
#include "topoml/load.h"
#include "util/util.h"

/* Enough to get past the comment header ibnetdiscover writes. */
#define DETECT_BYTES 65536

/* "Switch 36 \"S-...\"" or "Ca 2 \"H-...\"": a node header line. */
static bool _ib_header(const char *s, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(s, word, n) || !isblank((unsigned char)s[n]))
		return false;
	s += n;
	while (isblank((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s))
		return false;
	while (isdigit((unsigned char)*s))
		s++;
	while (isblank((unsigned char)*s))
		s++;
	return *s == '"';
}

static bool _ib_line(const char *s)
{
	return !strncmp(s, "vendid=0x", 9) ||
	       !strncmp(s, "switchguid=0x", 13) ||
	       !strncmp(s, "caguid=0x", 9) ||
	       !strncmp(s, "# Topology file: generated", 26) ||
	       _ib_header(s, "Switch") || _ib_header(s, "Ca");
}

enum topoml_format topoml_detect_format(const char *path)
{
	char buf[DETECT_BYTES + 1], *p, *line;
	size_t n;
	FILE *f = topoml__fopen_regular(path);

	if (!f)
		return TOPOML_FMT_CONF;	/* its loader reports why */
	n = fread(buf, 1, DETECT_BYTES, f);
	fclose(f);
	buf[n] = '\0';
	p = buf;
	if (!strncmp(p, "\xef\xbb\xbf", 3))
		p += 3;		/* UTF-8 byte order mark */
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '{')
		return TOPOML_FMT_JSON;
	for (line = buf; line && *line; ) {
		if (_ib_line(line))
			return TOPOML_FMT_IBNET;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return TOPOML_FMT_CONF;
}

topoml_topo_t *topoml_load_judged(const char *path, enum topoml_format fmt,
				  topoml_errors_t *err, topoml_errors_t *warn,
				  bool *slurm_refuses)
{
	if (path && fmt == TOPOML_FMT_AUTO)
		fmt = topoml_detect_format(path);
	if (path && fmt == TOPOML_FMT_CONF)
		return topoml_load_conf_judged(path, err, warn, slurm_refuses);
	if (slurm_refuses)
		*slurm_refuses = true;
	return topoml_load_ex(path, fmt, err, warn);
}

topoml_topo_t *topoml_load_ex(const char *path, enum topoml_format fmt,
			      topoml_errors_t *err, topoml_errors_t *warn)
{
	if (!path) {
		topoml_errors_add(err, "no topology file given");
		return NULL;
	}
	if (fmt == TOPOML_FMT_AUTO)
		fmt = topoml_detect_format(path);
	switch (fmt) {
	case TOPOML_FMT_JSON:
		return topoml_load_json(path, err);
	case TOPOML_FMT_IBNET:
		return topoml_load_ibnet_ex(path, err, warn);
	case TOPOML_FMT_CONF:
		return topoml_load_conf_ex(path, err, warn);
	default:
		break;
	}
	topoml_errors_add(err, "%s: unknown file format %d", path, (int)fmt);
	return NULL;
}

topoml_topo_t *topoml_load(const char *path, enum topoml_format fmt,
			   topoml_errors_t *err)
{
	return topoml_load_ex(path, fmt, err, NULL);
}
