/*
 * Job trace readers for the simulator.
 *
 * Three formats, all read through zlib (gzopen reads plain files as they
 * are, so "gzip too" costs nothing):
 * - SWF, the Standard Workload Format of the Parallel Workloads Archive:
 *   ';' comment lines, then 18 whitespace-separated numeric fields per job
 *   (1 job, 2 submit, 3 wait, 4 run time, 5 allocated processors, 6 CPU
 *   time, 7 memory, 8 requested processors, 9 requested time, 10 requested
 *   memory, 11 status, 12 user, 13 group, 14 executable, 15 queue,
 *   16 partition, 17 preceding job, 18 think time); -1 = unknown.
 * - CSV: '#' comments, a header naming the columns submit,nodes,runtime
 *   and optionally walltime and hint (any order), then one job per line.
 * - The ANL Mira/Theta excerpts of the MTech-Thesis JobLogs: a header
 *   "Job_name Submit Runtime Nodes Comment Perc", then six fields per job;
 *   sizes are nodes, no requested time is given (run time is used).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <zlib.h>

#include "sim.h"
#include "topoml/load.h"
#include "util/util.h"

#define TRACE_MAX_FIELDS 32
#define TRACE_MAX_ERRORS 20
#define TRACE_LINE_MAX 65536

static const char *const _mtech_header[] = {
	"Job_name", "Submit", "Runtime", "Nodes", "Comment", "Perc",
};

enum csv_col { CSV_SUBMIT, CSV_NODES, CSV_RUNTIME, CSV_WALLTIME, CSV_HINT,
	       CSV_NCOLS };
static const char *const _csv_names[CSV_NCOLS] = {
	"submit", "nodes", "runtime", "walltime", "hint",
};

struct reader {
	const char *path;
	gzFile gz;
	char *buf;
	int line;
	topoml_errors_t *err;
	int nerr;
	struct topoml_trace *tr;
	int cap;
	/* CSV: column of each field, CSV_NCOLS for none */
	int csv_ncols;
	int csv_col[TRACE_MAX_FIELDS];
};

const char *topoml_trace_format_name(enum topoml_trace_format f)
{
	switch (f) {
	case TOPOML_TRACE_SWF:
		return "swf";
	case TOPOML_TRACE_CSV:
		return "csv";
	case TOPOML_TRACE_MTECH:
		return "mtech";
	default:
		return "auto";
	}
}

int topoml_trace_format_parse(const char *s, enum topoml_trace_format *f)
{
	static const enum topoml_trace_format all[] = {
		TOPOML_TRACE_AUTO, TOPOML_TRACE_SWF, TOPOML_TRACE_CSV,
		TOPOML_TRACE_MTECH,
	};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcasecmp(s, topoml_trace_format_name(all[i]))) {
			*f = all[i];
			return 0;
		}
	return -1;
}

static void _error(struct reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void _error(struct reader *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	r->nerr++;
	if (r->nerr > TRACE_MAX_ERRORS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->nerr == TRACE_MAX_ERRORS)
		topoml_errors_add(r->err,
				  "%s:%d: %s (further errors not shown)",
				  r->path, r->line, msg);
	else
		topoml_errors_add(r->err, "%s:%d: %s", r->path, r->line, msg);
}

/* Next line without its end of line, NULL at the end of the file. */
static char *_getline(struct reader *r)
{
	size_t len;

	if (!gzgets(r->gz, r->buf, TRACE_LINE_MAX))
		return NULL;
	r->line++;
	len = strlen(r->buf);
	if (len == TRACE_LINE_MAX - 1 && r->buf[len - 1] != '\n') {
		int c;

		_error(r, "line longer than %d characters", TRACE_LINE_MAX - 2);
		while ((c = gzgetc(r->gz)) != -1 && c != '\n')
			;
		r->buf[0] = '\0';
		return r->buf;
	}
	while (len && (r->buf[len - 1] == '\n' || r->buf[len - 1] == '\r'))
		r->buf[--len] = '\0';
	return r->buf;
}

static bool _blank(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return !*s;
}

/* Split on sep (0 = any white space); fields are trimmed.  Count or -1. */
static int _split(char *s, char sep, char **f, int max)
{
	int n = 0;

	if (!sep) {
		char *save = NULL;

		for (char *tok = strtok_r(s, " \t", &save); tok;
		     tok = strtok_r(NULL, " \t", &save)) {
			if (n == max)
				return -1;
			f[n++] = tok;
		}
		return n;
	}
	for (;;) {
		char *end = strchr(s, sep);
		char *e;

		if (n == max)
			return -1;
		if (end)
			*end = '\0';
		while (isspace((unsigned char)*s))
			s++;
		e = s + strlen(s);
		while (e > s && isspace((unsigned char)e[-1]))
			*--e = '\0';
		f[n++] = s;
		if (!end)
			return n;
		s = end + 1;
	}
}

static int _number(struct reader *r, const char *s, const char *what,
		   double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(*v)) {
		_error(r, "%s: '%s' is not a number", what, s);
		return -1;
	}
	return 0;
}

static struct topoml_job *_new_job(struct reader *r)
{
	struct topoml_trace *tr = r->tr;

	if (tr->njobs == r->cap) {
		int cap = r->cap ? 2 * r->cap : 1024;
		struct topoml_job *j = realloc(tr->jobs, cap * sizeof(*j));

		if (!j)
			return NULL;
		tr->jobs = j;
		r->cap = cap;
	}
	memset(&tr->jobs[tr->njobs], 0, sizeof(tr->jobs[0]));
	tr->jobs[tr->njobs].line = r->line;
	return &tr->jobs[tr->njobs++];
}

/* Keep a parsed job if it ran; walltime is never below the run time. */
/* A trace's number as an int: clamped, NaN as 0 (a cast of an
 * out-of-range double is undefined). */
static int _to_int(double v)
{
	if (!(v == v))
		return 0;
	if (v >= INT32_MAX)
		return INT32_MAX;
	if (v <= INT32_MIN)
		return INT32_MIN;
	return (int)v;
}

static void _add(struct reader *r, double id, double submit, double runtime,
		 double walltime, double size, int nodes,
		 enum topoml_hint hint)
{
	struct topoml_job *j;

	if (runtime <= 0 || size <= 0 || submit < 0) {
		r->tr->nskipped++;
		return;
	}
	j = _new_job(r);
	if (!j) {
		_error(r, "out of memory");
		return;
	}
	j->id = id > 0 && id < UINT32_MAX ? (uint32_t)id : (uint32_t)r->line;
	j->submit = submit;
	j->runtime = runtime;
	j->walltime = walltime > runtime ? walltime : runtime;
	j->size = _to_int(size);
	j->nodes = nodes;
	j->cores = 0;
	j->hint = hint;
}

static int _ceil_div(double a, int b)
{
	return _to_int(ceil(a / b));
}

static void _swf_line(struct reader *r, char *s,
		      const struct topoml_trace_opts *o)
{
	static const char *const what[] = {
		"field 1 (job number)", "field 2 (submit time)",
		"field 3 (wait time)", "field 4 (run time)",
		"field 5 (allocated processors)", "field 6 (CPU time)",
		"field 7 (memory)", "field 8 (requested processors)",
		"field 9 (requested time)", "field 10 (requested memory)",
		"field 11 (status)", "field 12 (user)", "field 13 (group)",
		"field 14 (executable)", "field 15 (queue)",
		"field 16 (partition)", "field 17 (preceding job)",
		"field 18 (think time)",
	};
	char *f[TRACE_MAX_FIELDS];
	double v[18];
	int n = _split(s, 0, f, TRACE_MAX_FIELDS);
	int cpn = o && o->cores_per_node > 0 ? o->cores_per_node : 1;
	double procs;

	if (n != 18) {
		_error(r, "expected 18 SWF fields, found %s%d",
		       n < 0 ? "more than " : "", n < 0 ? TRACE_MAX_FIELDS : n);
		return;
	}
	for (int i = 0; i < 18; i++)
		if (_number(r, f[i], what[i], &v[i]))
			return;
	/* allocated processors, else requested ones */
	procs = v[4] > 0 ? v[4] : v[7];
	_add(r, v[0], v[1], v[3], v[8], procs,
	     procs > 0 ? _ceil_div(procs, cpn) : 0, TOPOML_HINT_ALLREDUCE);
	/* in cores: the job shares nodes as it did when traced */
	if (o && o->shared && r->tr->njobs > 0 && procs > 0 &&
	    r->tr->jobs[r->tr->njobs - 1].line == r->line)
		r->tr->jobs[r->tr->njobs - 1].cores = _to_int(procs);
}

static int _mtech_header_ok(char *s)
{
	char *f[TRACE_MAX_FIELDS];
	int n = _split(s, 0, f, TRACE_MAX_FIELDS);

	if (n != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		if (strcmp(f[i], _mtech_header[i]))
			return -1;
	return 0;
}

static void _mtech_line(struct reader *r, char *s)
{
	char *f[TRACE_MAX_FIELDS];
	double v[6];
	int n = _split(s, 0, f, TRACE_MAX_FIELDS);

	if (n != 6) {
		_error(r, "expected 6 fields (%s %s %s %s %s %s), found %d",
		       _mtech_header[0], _mtech_header[1], _mtech_header[2],
		       _mtech_header[3], _mtech_header[4], _mtech_header[5],
		       n < 0 ? TRACE_MAX_FIELDS : n);
		return;
	}
	for (int i = 0; i < 6; i++)
		if (_number(r, f[i], _mtech_header[i], &v[i]))
			return;
	if (v[3] != floor(v[3])) {
		_error(r, "Nodes: '%s' is not a whole number", f[3]);
		return;
	}
	_add(r, v[0], v[1], v[2], v[2], v[3],
	     _to_int(v[3]), TOPOML_HINT_ALLREDUCE);
}

static int _csv_header(struct reader *r, char *s)
{
	char *f[TRACE_MAX_FIELDS];
	bool seen[CSV_NCOLS] = { false };
	int n = _split(s, ',', f, TRACE_MAX_FIELDS);
	int bad = r->nerr;

	if (n < 0) {
		_error(r, "CSV header: more than %d columns", TRACE_MAX_FIELDS);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		int c;

		for (c = 0; c < CSV_NCOLS; c++)
			if (!strcasecmp(f[i], _csv_names[c]))
				break;
		if (c == CSV_NCOLS) {
			_error(r, "CSV header: unknown column '%s' (expected "
			       "submit,nodes,runtime[,walltime][,hint])", f[i]);
			continue;
		}
		if (seen[c])
			_error(r, "CSV header: column '%s' given twice", f[i]);
		seen[c] = true;
		r->csv_col[i] = c;
	}
	for (int c = CSV_SUBMIT; c <= CSV_RUNTIME; c++)
		if (!seen[c])
			_error(r, "CSV header: column '%s' missing",
			       _csv_names[c]);
	r->csv_ncols = n;
	return r->nerr > bad ? -1 : 0;
}

static void _csv_line(struct reader *r, char *s)
{
	char *f[TRACE_MAX_FIELDS];
	double v[CSV_NCOLS] = { 0, 0, 0, -1, 0 };
	enum topoml_hint hint = TOPOML_HINT_ALLREDUCE;
	int n = _split(s, ',', f, TRACE_MAX_FIELDS);

	if (n != r->csv_ncols) {
		_error(r, "expected %d CSV fields as in the header, found %s%d",
		       r->csv_ncols, n < 0 ? "more than " : "",
		       n < 0 ? TRACE_MAX_FIELDS : n);
		return;
	}
	for (int i = 0; i < n; i++) {
		int c = r->csv_col[i];

		if (c == CSV_HINT) {
			if (*f[i] && topoml_hint_parse(f[i], &hint)) {
				_error(r, "hint: '%s' is not allreduce, "
				       "alltoall or isolate", f[i]);
				return;
			}
			continue;
		}
		if (c == CSV_WALLTIME && !*f[i])
			continue;
		if (_number(r, f[i], _csv_names[c], &v[c]))
			return;
	}
	if (v[CSV_NODES] != floor(v[CSV_NODES]) || v[CSV_NODES] < 1) {
		_error(r, "nodes: '%g' is not a positive whole number",
		       v[CSV_NODES]);
		return;
	}
	if (v[CSV_RUNTIME] <= 0) {
		_error(r, "runtime: must be positive, not %g", v[CSV_RUNTIME]);
		return;
	}
	if (v[CSV_SUBMIT] < 0) {
		_error(r, "submit: must not be negative");
		return;
	}
	_add(r, 0, v[CSV_SUBMIT], v[CSV_RUNTIME], v[CSV_WALLTIME],
	     v[CSV_NODES],
	     _to_int(v[CSV_NODES]), hint);
}

static bool _ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcasecmp(s + a - b, suffix);
}

/* Format of the first significant line (and the file name for CSV). */
static enum topoml_trace_format _detect(const char *path, const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	if (*s == ';')
		return TOPOML_TRACE_SWF;
	if (!strncmp(s, "Job_name", 8))
		return TOPOML_TRACE_MTECH;
	if (*s == '#' || strchr(s, ',') || _ends_with(path, ".csv") ||
	    _ends_with(path, ".csv.gz"))
		return TOPOML_TRACE_CSV;
	return TOPOML_TRACE_SWF;
}

static int _cmp_job(const void *a, const void *b)
{
	const struct topoml_job *x = a, *y = b;

	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	return x->line - y->line;
}

/* Sort, shift submit times to start at 0, scale sizes, cut. */
static void _finish(struct topoml_trace *tr, const struct topoml_trace_opts *o)
{
	double scale = o && o->scale > 0 ? o->scale : 1;
	int machine = o ? o->machine_nodes : 0;
	int cpn = o && o->cores_per_node > 0 ? o->cores_per_node : 1;
	int maxn = 0, kept = 0;
	double t0;

	if (!tr->njobs)
		return;
	qsort(tr->jobs, tr->njobs, sizeof(tr->jobs[0]), _cmp_job);
	t0 = tr->jobs[0].submit;
	for (int i = 0; i < tr->njobs; i++)
		if (tr->jobs[i].nodes > maxn)
			maxn = tr->jobs[i].nodes;
	if (o && o->scale_fit && machine > 0 && maxn > 0)
		scale = (double)machine / maxn;
	else if (o && o->trace_nodes > 0 && machine > 0)
		scale = (double)machine / o->trace_nodes;
	tr->scale = scale;
	for (int i = 0; i < tr->njobs; i++) {
		struct topoml_job j = tr->jobs[i];

		if (o && o->max_jobs > 0 && kept == o->max_jobs)
			break;
		j.submit -= t0;
		if (scale != 1 && j.cores > 0) {
			/* in cores: scale cores, nodes follow */
			double c = llround(j.cores * scale);

			j.cores = c < 1 ? 1 : c > INT32_MAX ? INT32_MAX : c;
			j.nodes = _ceil_div(j.cores, cpn);
		} else if (scale != 1) {
			double n = llround(j.nodes * scale);

			j.nodes = n < 1 ? 1 : n > INT32_MAX ? INT32_MAX : n;
		}
		if (machine > 0 && j.nodes > machine) {
			tr->ntoo_large++;
			continue;
		}
		tr->jobs[kept++] = j;
	}
	tr->njobs = kept;
}

void topoml_trace_free(struct topoml_trace *tr)
{
	if (!tr)
		return;
	free(tr->source);
	free(tr->jobs);
	free(tr);
}

struct topoml_trace *topoml_trace_read(const char *path,
				       const struct topoml_trace_opts *o,
				       topoml_errors_t *err)
{
	struct reader r = { .path = path, .err = err };
	enum topoml_trace_format fmt = o ? o->format : TOPOML_TRACE_AUTO;
	bool header = false;
	char *s;
	int fd;

	r.tr = calloc(1, sizeof(*r.tr));
	r.buf = malloc(TRACE_LINE_MAX);
	if (!r.tr || !r.buf || !(r.tr->source = strdup(path))) {
		topoml_errors_add(err, "%s: out of memory", path);
		goto fail;
	}
	r.tr->cores_per_node = o && o->cores_per_node > 0 ?
		o->cores_per_node : 1;
	r.tr->shared = o && o->shared;
	/* gzopen() would block on a FIFO: a regular file only */
	fd = topoml__open_regular(path);
	if (fd < 0) {
		topoml_errors_add(err, "%s: cannot open: %s", path,
				  topoml__open_error(errno));
		goto fail;
	}
	r.gz = gzdopen(fd, "rb");
	if (!r.gz) {
		close(fd);
		topoml_errors_add(err, "%s: cannot open: %s", path,
				  errno ? strerror(errno) : "out of memory");
		goto fail;
	}
	gzbuffer(r.gz, 1 << 17);
	while ((s = _getline(&r))) {
		if (_blank(s))
			continue;
		if (fmt == TOPOML_TRACE_AUTO)
			fmt = _detect(path, s);
		switch (fmt) {
		case TOPOML_TRACE_SWF:
			if (*s == ';' || *s == '#')
				continue;
			_swf_line(&r, s, o);
			break;
		case TOPOML_TRACE_CSV:
			if (*s == '#')
				continue;
			if (header) {
				_csv_line(&r, s);
			} else {
				header = true;
				if (_csv_header(&r, s))
					goto close;
			}
			break;
		case TOPOML_TRACE_MTECH:
			if (header) {
				_mtech_line(&r, s);
			} else {
				header = true;
				if (_mtech_header_ok(s)) {
					_error(&r, "expected the header '%s "
					       "%s %s %s %s %s'",
					       _mtech_header[0],
					       _mtech_header[1],
					       _mtech_header[2],
					       _mtech_header[3],
					       _mtech_header[4],
					       _mtech_header[5]);
					goto close;
				}
			}
			break;
		default:
			break;
		}
	}
	{
		int errnum;
		const char *zmsg = gzerror(r.gz, &errnum);

		if (errnum != Z_OK && errnum != Z_STREAM_END)
			_error(&r, "read error: %s", zmsg);
	}
close:
	gzclose(r.gz);
	r.tr->format = fmt;
	if (!r.nerr && fmt == TOPOML_TRACE_CSV && !header) {
		r.line = 1;
		_error(&r, "CSV header missing (submit,nodes,runtime"
		       "[,walltime][,hint])");
	}
	if (r.nerr)
		goto fail;
	_finish(r.tr, o);
	free(r.buf);
	return r.tr;
fail:
	free(r.buf);
	topoml_trace_free(r.tr);
	return NULL;
}
