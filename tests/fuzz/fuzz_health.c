/*
 * libFuzzer target: the node health parsers (topology/contract/health.c).
 * The input is read three ways: as a job's health.jsonl (the user's file,
 * read by root in slurmstepd), as a job comment holding a
 * "topoml-health:" part (straggler= and root's preflight= keys;
 * select/topoml in slurmctld), and as
 * select/topoml's state file (topoml health).  What parses writes back
 * and parses the same; the bounds hold.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"	/* first: _GNU_SOURCE */

#include "topoml/health.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct topoml_health_names n, back;
	struct topoml_health_pf pf, pback;
	struct topoml_health_table t = { 0 }, t2 = { 0 };
	char err[256], *s, *w, *m, *buf = NULL;
	size_t len = 0;
	int bad, rc;
	FILE *f;

	rc = topoml_health_report_parse((const char *)data, size, &n, &bad,
					err, sizeof(err));
	if (rc > TOPOML_HEALTH_NAMES_MAX || (rc < 0 && size <=
	    TOPOML_HEALTH_REPORT_MAX))
		abort();
	for (int i = 0; rc > 0 && i < n.n; i++)
		if (!topoml_health_name_ok(n.name[i]))
			abort();

	s = fuzz_str(data, size);
	rc = topoml_health_part_parse_pf(s, &n, &pf, err, sizeof(err));
	/* the straggler-only reader agrees on the stragglers */
	if (topoml_health_part_parse(s, &back, err, sizeof(err)) != rc ||
	    (rc == 0 && back.n != n.n))
		abort();
	if (rc == 0) {
		if (n.n + pf.n < 1)
			abort();
		for (int i = 0; i < pf.n; i++)
			if (!topoml_health_name_ok(pf.name[i]) ||
			    !pf.checks[i] ||
			    (pf.checks[i] & ~TOPOML_HEALTH_PF_ALL))
				abort();
		w = topoml_health_part_write_pf(&n, &pf);
		if (!w || topoml_health_part_parse_pf(w, &back, &pback, err,
						      sizeof(err)) ||
		    back.n != n.n || pback.n != pf.n)
			abort();
		for (int i = 0; i < n.n; i++)
			if (strcmp(back.name[i], n.name[i]))
				abort();
		for (int i = 0; i < pf.n; i++)
			if (strcmp(pback.name[i], pf.name[i]) ||
			    pback.checks[i] != pf.checks[i])
				abort();
		/* merged into the input as others' text: ours once */
		m = topoml_health_part_merge(s, w);
		if (!m)
			abort();
		free(m);
		free(w);
		/* dropped: no part left */
		m = topoml_health_part_drop(s);
		if (!m || topoml_health_part_parse(m, &back, err,
						   sizeof(err)) != 1)
			abort();
		free(m);
	} else if (rc != 1 && rc != -1) {
		abort();
	}
	free(s);

	if (!topoml_health_load((const char *)data, size, &t, err,
				sizeof(err))) {
		f = open_memstream(&buf, &len);
		if (!f || topoml_health_save(f, &t))
			abort();
		fclose(f);
		if (topoml_health_load(buf, len, &t2, err, sizeof(err)) ||
		    t2.n != t.n)
			abort();
		free(buf);
	}
	topoml_health_table_clear(&t);
	topoml_health_table_clear(&t2);
	return 0;
}
