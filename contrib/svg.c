/*
 * SVG pictures of a topology that read in a static render (PNG, PDF):
 * names and counts as text, not only in tooltips.  Fat-trees: small ones
 * switch by switch, large ones as pods of leaf tiles; dragonfly groups on a
 * circle with the global links inside it; torus z-planes as x/y grids with
 * axes.  Node cells are coloured by the job using them (topoml place).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/util.h"

#define FONT "font-family=\"sans-serif\""

/* Switch, group and node names are restricted, but escape anyway. */
static void _text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

/*
 * A distinct, stable colour per job id, away from the red of the job being
 * placed; idle nodes are light grey, nodes of an unknown job dark grey.
 */
static void _job_colour(char *buf, size_t len, uint32_t job)
{
	if (!job)
		snprintf(buf, len, "#cdcdcd");
	else if (job == CLI_JOB_NEW)
		snprintf(buf, len, "#d62728");
	else if (job == CLI_JOB_BUSY)
		snprintf(buf, len, "#6b6b6b");
	else
		/* 11 hues 26 degrees apart, no red; neighbours far apart */
		snprintf(buf, len, "hsl(%u,%u%%,%u%%)",
			 40 + (job * 7u) % 11u * 26u, job / 11u % 2 ? 45 : 60,
			 job / 11u % 2 ? 45 : 62);
}

static int _cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* f NULL: only measure. */
static double _swatch(FILE *f, double x, double y, const char *col,
		      const char *label)
{
	if (!f)
		return x + (col ? 15 : 0) + cli_text_w(label, 11) + 16;
	if (col)
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"11\" "
			"height=\"11\" fill=\"%s\" stroke=\"#333\" "
			"stroke-width=\"0.4\"/>\n", x, y, col);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" " FONT
		">", x + (col ? 15 : 0), y + 10);
	_text(f, label);
	fprintf(f, "</text>\n");
	return x + (col ? 15 : 0) + cli_text_w(label, 11) + 16;
}

/*
 * The colour key at (x, y): with node_job, this job, up to 5 other jobs,
 * busy and free nodes with their counts; without, a node.  f NULL: only
 * measure.  Returns where it ends.
 */
static double _legend(FILE *f, const topoml_topo_t *t,
		      const uint32_t *node_job, double x, double y)
{
	struct { uint32_t id; int n; } *run;
	uint32_t *ids;
	int n = 0, nrun = 0, i, jobs = 0, more = 0;
	char col[32], label[64];

	if (!node_job) {
		_job_colour(col, sizeof(col), 0);
		return _swatch(f, x, y, col, "node");
	}
	ids = malloc((t->nnodes ? t->nnodes : 1) * sizeof(*ids));
	run = malloc((t->nnodes ? t->nnodes : 1) * sizeof(*run));
	if (!ids || !run)
		goto out;
	for (i = 0; i < t->nnodes; i++)
		ids[n++] = node_job[i];
	qsort(ids, n, sizeof(*ids), _cmp_u32);
	for (i = 0; i < n; i++) {
		if (!nrun || run[nrun - 1].id != ids[i]) {
			run[nrun].id = ids[i];
			run[nrun++].n = 0;
		}
		run[nrun - 1].n++;
	}
	/* sorted: free (0) first, jobs, then CLI_JOB_NEW, CLI_JOB_BUSY */
	for (i = nrun - 1; i >= 0; i--)
		if (run[i].id == CLI_JOB_NEW) {
			snprintf(label, sizeof(label), "this job (%d node%s)",
				 run[i].n, run[i].n == 1 ? "" : "s");
			_job_colour(col, sizeof(col), run[i].id);
			x = _swatch(f, x, y, col, label);
		}
	for (i = 0; i < nrun; i++) {
		if (!run[i].id || run[i].id >= CLI_JOB_NEW)
			continue;
		if (jobs++ >= 5) {
			more++;
			continue;
		}
		snprintf(label, sizeof(label), "job %u (%d)", run[i].id,
			 run[i].n);
		_job_colour(col, sizeof(col), run[i].id);
		x = _swatch(f, x, y, col, label);
	}
	if (more) {
		snprintf(label, sizeof(label), "+%d more job%s", more,
			 more == 1 ? "" : "s");
		x = _swatch(f, x, y, NULL, label);
	}
	for (i = nrun - 1; i >= 0; i--)
		if (run[i].id == CLI_JOB_BUSY) {
			snprintf(label, sizeof(label), "busy (%d)", run[i].n);
			_job_colour(col, sizeof(col), run[i].id);
			x = _swatch(f, x, y, col, label);
		}
	if (nrun && !run[0].id) {
		snprintf(label, sizeof(label), "free (%d)", run[0].n);
		_job_colour(col, sizeof(col), 0);
		x = _swatch(f, x, y, col, label);
	}
out:
	free(ids);
	free(run);
	return x;
}

static void _header(FILE *f, double w, double h, const char *title,
		    const char *subtitle);

/*
 * Title, a line with the topology's summary (when the title is something
 * else) and what the shapes are, and the colour key; *w grows to fit them.
 */
static void _top(FILE *f, double *w, double h, const char *title,
		 const char *sub, const char *shapes, const topoml_topo_t *t,
		 const uint32_t *node_job)
{
	char line[640];

	snprintf(line, sizeof(line), "%s%s%s", sub ? sub : "",
		 sub ? "; " : "", shapes);
	*w = fmax(*w, cli_text_w(title, 14) * 1.1 + 20);	/* bold */
	*w = fmax(*w, cli_text_w(line, 11) + 20);
	*w = fmax(*w, _legend(NULL, t, node_job, 10, 44) + 10);
	_header(f, *w, h, title, line);
	_legend(f, t, node_job, 10, 44);
}

static void _header(FILE *f, double w, double h, const char *title,
		    const char *subtitle)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\" "
		FONT ">", w, h, w, h);
	_text(f, title);
	fprintf(f, "</text>\n");
	if (subtitle) {
		fprintf(f, "<text x=\"10\" y=\"37\" font-size=\"11\" "
			"fill=\"#444\" " FONT ">");
		_text(f, subtitle);
		fprintf(f, "</text>\n");
	}
}

/* A host list as text ("c[1-32]"). */
static void _set_text(FILE *f, const topoml_topo_t *t,
		      hwloc_const_bitmap_t set)
{
	char *s = set ? topoml_nodeset_format(t, set) : NULL;

	_text(f, s ? s : "");
	free(s);
}

/*
 * "N nodes" at (x, y) in font 10 and below it the host list ("c[1-512]")
 * when it fits in w (else it is the count's tooltip): node names are drawn
 * where there is room for them.
 */
static void _nodes_line(FILE *f, const topoml_topo_t *t,
			hwloc_const_bitmap_t set, int n, double x, double y,
			double w, const char *anchor)
{
	char *s = set ? topoml_nodeset_format(t, set) : NULL;
	bool fits = s && cli_text_w(s, 10) <= w;

	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
		"fill=\"#444\" text-anchor=\"%s\" " FONT ">", x, y, anchor);
	fprintf(f, "%d node%s", n, n == 1 ? "" : "s");
	if (!fits) {
		fprintf(f, "<title>");
		_text(f, s ? s : "");
		fprintf(f, "</title>");
	}
	fprintf(f, "</text>\n");
	if (fits) {
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
			"fill=\"#444\" text-anchor=\"%s\" " FONT ">", x,
			y + 12, anchor);
		_text(f, s);
		fprintf(f, "</text>\n");
	}
	free(s);
}

/* A pod's node count and host list. */
static void _pod_nodes(FILE *f, const topoml_topo_t *t, const int *pod_of,
		       int pod, int n, double x, double y, double w)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();

	for (int i = 0; set && i < t->nswitches; i++)
		if (!t->switches[i].level && pod_of[i] == pod)
			hwloc_bitmap_or(set, set, t->switches[i].desc);
	_nodes_line(f, t, set, n, x, y, w, "start");
	hwloc_bitmap_free(set);
}

/*
 * Fat-tree pods side by side in this width: the README's pictures are
 * rendered 1400 px wide, at which the text is then drawn at its size.
 */
#define SVG_POD_WIDTH 1380.0
/* Leaf names on their tiles: readable, not 8 px. */
#define SVG_LEAF_FONT 10

/* Above this many nodes, node cells would make a huge file: tiles only. */
#define SVG_MAX_CELLS 20000

/* Node cells in a grid of cols columns from (x, y). */
static void _cells(FILE *f, const topoml_topo_t *t, const int *nodes, int n,
		   double x, double y, int cols, double cell,
		   const uint32_t *node_job)
{
	char col[32];
	int i;

	for (i = 0; i < n; i++) {
		_job_colour(col, sizeof(col), node_job ? node_job[nodes[i]] : 0);
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%.1f\" fill=\"%s\" stroke=\"white\" "
			"stroke-width=\"0.5\">", x + (i % cols) * cell,
			y + (i / cols) * cell, cell, cell, col);
		if (t->nnodes <= 5000) {
			fprintf(f, "<title>");
			_text(f, t->nodes[nodes[i]].name);
			fprintf(f, "</title>");
		}
		fprintf(f, "</rect>\n");
	}
}

/* The job holding most of these nodes (0 = mostly free), for tiles. */
static uint32_t _major_job(const int *nodes, int n, const uint32_t *node_job)
{
	uint32_t best = 0;
	int bestn = 0;

	if (!node_job)
		return 0;
	for (int i = 0; i < n; i++) {
		uint32_t id = node_job[nodes[i]];
		int c = 0;

		for (int k = 0; k < n; k++)
			c += node_job[nodes[k]] == id;
		if (c > bestn || (c == bestn && id == CLI_JOB_NEW)) {
			best = id;
			bestn = c;
		}
	}
	return best;
}

/* A labelled switch box: name and the nodes below it. */
static void _switch_box(FILE *f, const topoml_topo_t *t, int sw, double x,
			double y, double w, double h)
{
	const struct topoml_switch *s = &t->switches[sw];
	int n = s->desc ? hwloc_bitmap_weight(s->desc) : 0;

	fprintf(f, "<g><title>");
	_text(f, s->name);
	fprintf(f, ": level %d, %d node%s</title>\n<rect x=\"%.1f\" "
		"y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"4\" "
		"fill=\"%s\" stroke=\"#333\" stroke-width=\"0.8\"/>\n",
		s->level, n, n == 1 ? "" : "s", x, y, w, h,
		s->level ? "#cfe0f5" : "#d8efd0");
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
		"text-anchor=\"middle\" " FONT ">", x + w / 2, y + 14);
	_text(f, s->name);
	fprintf(f, "</text>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
		"text-anchor=\"middle\" fill=\"#444\" " FONT ">%d node%s</text>"
		"</g>\n", x + w / 2, y + 27, n, n == 1 ? "" : "s");
}

/*
 * Small trees: every switch a labelled box, by level, each leaf with its
 * node cells below it.
 */
static int _svg_tree_small(const topoml_topo_t *t, FILE *f,
			   const uint32_t *node_job, const char *title,
			   const char *sub)
{
	int nl = t->nlevels, l, i, k, maxw = 1, maxn = 1;
	int count[64] = { 0 }, pos[256];
	double bw = 96, gap = 16, width, height, rowh = 70, cell, top = 62;
	int cols;

	for (i = 0; i < t->nswitches; i++) {
		pos[i] = count[t->switches[i].level]++;
		if (!t->switches[i].level && t->switches[i].nnodes > maxn)
			maxn = t->switches[i].nnodes;
	}
	for (l = 0; l < nl; l++)
		maxw = count[l] > maxw ? count[l] : maxw;
	cols = maxn < 8 ? maxn : 8;
	cell = fmin(11, (bw - 4) / cols);
	width = fmax(560, maxw * (bw + gap) + 40);
	height = top + (nl - 1) * rowh + 38 + ceil((double)maxn / cols) * cell +
		 28;
	_top(f, &width, height, title, sub, "boxes: switches (green: leaves)",
	     t, node_job);
#define BOX_X(sw) (20 + ((width - 40) / count[t->switches[sw].level]) * \
		   (pos[sw] + 0.5) - bw / 2)
#define BOX_Y(sw) (top + (nl - 1 - t->switches[sw].level) * rowh)
	fprintf(f, "<g stroke=\"#8a8a8a\" stroke-width=\"1\">\n");
	for (i = 0; i < t->nswitches; i++)
		for (k = 0; k < t->switches[i].nparents; k++) {
			int p = t->switches[i].parents[k];

			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				"y2=\"%.1f\"/>\n", BOX_X(i) + bw / 2, BOX_Y(i),
				BOX_X(p) + bw / 2, BOX_Y(p) + 34);
		}
	fprintf(f, "</g>\n");
	for (i = 0; i < t->nswitches; i++) {
		const struct topoml_switch *s = &t->switches[i];

		_switch_box(f, t, i, BOX_X(i), BOX_Y(i), bw, 34);
		if (!s->level) {
			char *hl = topoml_nodeset_format(t, s->desc);

			_cells(f, t, s->nodes, s->nnodes,
			       BOX_X(i) + (bw - cols * cell) / 2, BOX_Y(i) + 38,
			       cols, cell, node_job);
			/* the leaf's nodes by name, where they fit */
			if (hl && cli_text_w(hl, 9) <= bw + gap - 4) {
				fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" "
					"font-size=\"9\" fill=\"#444\" "
					"text-anchor=\"middle\" " FONT ">",
					BOX_X(i) + bw / 2, BOX_Y(i) + 38 +
					ceil((double)s->nnodes / cols) * cell +
					11);
				_text(f, hl);
				fprintf(f, "</text>\n");
			}
			free(hl);
		}
	}
#undef BOX_X
#undef BOX_Y
	fprintf(f, "</svg>\n");
	return 0;
}

/*
 * Large trees: the leaves grouped into pods under their (first) level-1
 * switch, each leaf a labelled tile of node cells, each pod a labelled box
 * with its counts; higher levels as boxes (or one summary box per level
 * when there are too many to label) with a line to every pod below.
 */
static int _svg_tree_pods(const topoml_topo_t *t, FILE *f,
			  const uint32_t *node_job, const char *title,
			  const char *sub)
{
	int nl = t->nlevels, i, k, l, npods = 0, maxleaf = 1, maxpl = 1;
	int *pod_of = calloc(t->nswitches + 1, sizeof(int));
	int *pods = calloc(t->nswitches + 1, sizeof(int));
	int *nleaves = calloc(t->nswitches + 1, sizeof(int));
	int *upos = calloc(t->nswitches + 1, sizeof(int));
	int ucount[64] = { 0 }, umax = 0;
	bool cells = t->nnodes <= SVG_MAX_CELLS, has_orphans = false;
	double cell = t->nnodes > 4096 ? 3 : 5, tw, th, pw, ph, top = 62;
	double width, height, uy, podtop, ubw = 110, podx, labw = 0;
	int cols, tpr = 1, ppr, rows;
	char col[32], lab[320];

	if (!pod_of || !pods || !nleaves || !upos)
		goto fail;
	/* pods: level-1 switches (index), or one pod (-1) for the rest */
	for (i = 0; i < t->nswitches; i++) {
		const struct topoml_switch *s = &t->switches[i];

		if (s->level == 1)
			pods[npods++] = i;
		if (s->level >= 2)
			upos[i] = ucount[s->level]++;
		if (!s->level && s->nnodes > maxleaf)
			maxleaf = s->nnodes;
	}
	for (i = 0; i < t->nswitches; i++) {
		const struct topoml_switch *s = &t->switches[i];

		if (s->level)
			continue;
		pod_of[i] = -1;
		if (s->nparents && t->switches[s->parents[0]].level == 1)
			for (k = 0; k < npods; k++)
				if (pods[k] == s->parents[0])
					pod_of[i] = k;
		if (pod_of[i] < 0)
			has_orphans = true;
	}
	if (has_orphans)
		pods[npods++] = -1;
	for (i = 0; i < t->nswitches; i++)
		if (!t->switches[i].level) {
			int p = pod_of[i] < 0 ? npods - 1 : pod_of[i];

			pod_of[i] = p;
			if (++nleaves[p] > maxpl)
				maxpl = nleaves[p];
		}
	cols = maxleaf < 8 ? maxleaf : 8;
	/* a tile holds its leaf's name at 10 px */
	tw = cells ? cols * cell + 6 : 40;
	for (i = 0; i < t->nswitches; i++) {
		const struct topoml_switch *s = &t->switches[i];

		if (!s->level)
			tw = fmax(tw, cli_text_w(s->name, SVG_LEAF_FONT) + 6);
		else if (s->level >= 2 && ucount[s->level] > umax)
			umax = ucount[s->level];
	}
	th = (cells ? ceil((double)maxleaf / cols) * cell : 10) + 18;
	/* a pod's label: "NAME (N leaves)", "N nodes", "under ..." */
	for (k = 0; k < npods; k++) {
		int sw = pods[k];

		snprintf(lab, sizeof(lab), "%s (%d leaves)", sw >= 0 ?
			 t->switches[sw].name : "other leaves", nleaves[k]);
		labw = fmax(labw, cli_text_w(lab, 11) * 1.1);
		labw = fmax(labw, cli_text_w("under ", 9) +
			    (sw >= 0 ? 90 : 0));
	}
	labw = fmax(labw + 12, cli_text_w("99999 nodes", 10) + 12);
	/*
	 * As many pods side by side as SVG_POD_WIDTH holds (the README
	 * renders at 1400 px: text stays at its size), each as wide as its
	 * label needs and as many tiles across as fit.
	 */
	for (ppr = npods; ppr > 1; ppr--) {
		tpr = (int)floor(((SVG_POD_WIDTH - 26) / ppr - 14 - 12) / tw);
		if (tpr >= 1 && fmax(tpr * tw + 12, labw) <=
		    (SVG_POD_WIDTH - 26) / ppr - 14)
			break;
	}
	if (ppr == 1)
		tpr = (int)fmax(1, floor((SVG_POD_WIDTH - 26 - 14 - 12) / tw));
	rows = (npods + ppr - 1) / ppr;
	ppr = (npods + rows - 1) / rows;	/* rows of equal length */
	/* no wider than a square pod needs: a few pods make a picture
	 * narrower than SVG_POD_WIDTH, not pods of one long row */
	tpr = (int)fmin(tpr, fmax(1, ceil(sqrt(maxpl * th / tw))));
	tpr = tpr < 1 ? 1 : tpr > maxpl ? maxpl : tpr;
	pw = fmax(tpr * tw + 12, labw);
	ph = ceil((double)maxpl / tpr) * th + 64;
	width = fmax(640, ppr * (pw + 14) + 26);
	width = fmax(width, umax <= 12 ? umax * (ubw + 12) + 20 : 0);
	uy = top;
	podtop = top + (nl > 2 ? (nl - 2) * 64 : 0) + 10;
	height = podtop + rows * (ph + 14) + 10;
	_top(f, &width, height, title, sub, cells ?
	     "tiles: leaf switches; boxes: the level-1 switch above them" :
	     "tiles: leaf switches (coloured by most of their nodes)", t,
	     node_job);
	podx = (width - ppr * (pw + 14) + 14) / 2;
#define POD_X(p) (podx + ((p) % ppr) * (pw + 14))
#define POD_Y(p) (podtop + ((p) / ppr) * (ph + 14))
	/* levels above the pods: a line from every switch to each parent */
#define UP_X(sw) (ucount[t->switches[sw].level] <= 12 ? \
		  (width - ucount[t->switches[sw].level] * (ubw + 12)) / 2 + \
		  upos[sw] * (ubw + 12) + ubw / 2 : width / 2)
#define UP_Y(sw) (uy + (nl - 1 - t->switches[sw].level) * 64)
	fprintf(f, "<g stroke=\"#8a8a8a\" stroke-width=\"0.8\">\n");
	for (i = 0; i < t->nswitches; i++) {
		const struct topoml_switch *s = &t->switches[i];
		double x1, y1;

		if (!s->level)
			continue;
		if (s->level == 1) {
			/* below one row of pods, lines would cross pods: each
			 * pod names its parents instead */
			if (rows > 1)
				continue;
			for (k = 0; k < npods && pods[k] != i; k++)
				;
			x1 = POD_X(k) + pw / 2;
			y1 = POD_Y(k);
		} else {
			x1 = UP_X(i);
			y1 = UP_Y(i);
		}
		for (k = 0; k < s->nparents; k++)
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				"y2=\"%.1f\"/>\n", x1, y1, UP_X(s->parents[k]),
				UP_Y(s->parents[k]) + 34);
	}
	fprintf(f, "</g>\n");
#undef UP_X
#undef UP_Y
	for (l = nl - 1; l >= 2; l--) {
		double y = uy + (nl - 1 - l) * 64;

		if (ucount[l] <= 12) {
			for (i = 0; i < t->nswitches; i++)
				if (t->switches[i].level == l)
					_switch_box(f, t, i, (width - ucount[l] *
						    (ubw + 12)) / 2 + upos[i] *
						    (ubw + 12), y, ubw, 34);
		} else {
			const char **names = malloc(ucount[l] * sizeof(*names));
			char *list;
			int n = 0;

			if (!names)
				goto fail;
			for (i = 0; i < t->nswitches; i++)
				if (t->switches[i].level == l)
					names[n++] = t->switches[i].name;
			list = topoml__names_format(names, n, false);
			fprintf(f, "<rect x=\"20\" y=\"%.1f\" width=\"%.1f\" "
				"height=\"34\" rx=\"4\" fill=\"#cfe0f5\" "
				"stroke=\"#333\" stroke-width=\"0.8\"/>\n"
				"<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
				"text-anchor=\"middle\" " FONT ">level %d: %d "
				"switch%s ", y, width - 40, width / 2, y + 21,
				l, n, n == 1 ? "" : "es");
			_text(f, list ? list : "");
			fprintf(f, "</text>\n");
			free(list);
			free(names);
		}
	}
	/* pods and their leaf tiles */
	for (k = 0; k < npods; k++) {
		double px = POD_X(k), py = POD_Y(k);
		int sw = pods[k], nodes = 0, slot = 0;

		for (i = 0; i < t->nswitches; i++)
			if (!t->switches[i].level && pod_of[i] == k)
				nodes += t->switches[i].nnodes;
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%.1f\" rx=\"6\" fill=\"#eef3fa\" "
			"stroke=\"#5a7fb0\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
			"font-size=\"11\" font-weight=\"bold\" " FONT ">",
			px, py, pw, ph, px + 6, py + 15);
		_text(f, sw >= 0 ? t->switches[sw].name : "other leaves");
		fprintf(f, " (%d lea%s)</text>\n", nleaves[k],
			nleaves[k] == 1 ? "f" : "ves");
		_pod_nodes(f, t, pod_of, k, nodes, px + 6, py + 28, pw - 12);
		if (sw >= 0 && t->switches[sw].nparents) {
			const struct topoml_switch *ps = &t->switches[sw];
			const char **names = malloc(ps->nparents *
						    sizeof(*names));
			char *list;

			if (!names)
				goto fail;
			for (i = 0; i < ps->nparents; i++)
				names[i] = t->switches[ps->parents[i]].name;
			list = topoml__names_format(names, ps->nparents, true);
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" "
				"font-size=\"9\" fill=\"#555\" " FONT ">under ",
				px + 6, py + 52);
			_text(f, list ? list : "?");
			fprintf(f, "</text>\n");
			free(list);
			free(names);
		}
		for (i = 0; i < t->nswitches; i++) {
			const struct topoml_switch *s = &t->switches[i];
			double tx, ty;

			if (s->level || pod_of[i] != k)
				continue;
			tx = px + 6 + (slot % tpr) * tw;
			ty = py + 58 + (slot / tpr) * th;
			slot++;
			fprintf(f, "<g><title>");
			_text(f, s->name);
			fprintf(f, ": %d node%s ", s->nnodes,
				s->nnodes == 1 ? "" : "s");
			_set_text(f, t, s->desc);
			fprintf(f, "</title>\n<rect x=\"%.1f\" "
				"y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"rx=\"2\" fill=\"#d8efd0\"/>\n",
				tx - 1, ty, tw - 3, th - 3);
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" "
				"font-size=\"%d\" " FONT ">", tx + 1, ty + 10,
				SVG_LEAF_FONT);
			_text(f, s->name);
			fprintf(f, "</text>\n");
			if (cells) {
				_cells(f, t, s->nodes, s->nnodes, tx + 1,
				       ty + 13, cols, cell, node_job);
			} else {
				_job_colour(col, sizeof(col), node_job ?
					    _major_job(s->nodes, s->nnodes,
						       node_job) : 0);
				fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" "
					"width=\"%.1f\" height=\"8\" "
					"fill=\"%s\"/>\n", tx + 1, ty + 13,
					tw - 6, col);
			}
			fprintf(f, "</g>\n");
		}
	}
#undef POD_X
#undef POD_Y
	fprintf(f, "</svg>\n");
	free(pod_of);
	free(pods);
	free(nleaves);
	free(upos);
	return 0;
fail:
	free(pod_of);
	free(pods);
	free(nleaves);
	free(upos);
	return -1;
}

static int _svg_fat_tree(const topoml_topo_t *t, FILE *f,
			 const uint32_t *node_job, const char *title,
			 const char *sub)
{
	int i, wide = 0, count[64] = { 0 };

	if (t->nlevels > 60)
		return -1;
	for (i = 0; i < t->nswitches; i++)
		if (++count[t->switches[i].level] > wide)
			wide = count[t->switches[i].level];
	if (t->nswitches <= 40 && wide <= 12)
		return _svg_tree_small(t, f, node_job, title, sub);
	return _svg_tree_pods(t, f, node_job, title, sub);
}

/*
 * Dragonfly: the groups on a circle, each with its routers and their node
 * cells; the global links are chords between points on an inner circle,
 * so they never cross a group, and their count is written in the middle.
 */
static int _svg_dragonfly(const topoml_topo_t *t, FILE *f,
			  const uint32_t *node_job, const char *title,
			  const char *sub)
{
	int g = t->ngroups, i, k, maxr = 1, maxn = 1, maxlinks = 1, total = 0;
	double gw, gh, radius, rin, cx, cy, size, cell, rw;
	bool cells = t->nnodes <= SVG_MAX_CELLS;
	int cols;
	char col[32];

	for (i = 0; i < g; i++)
		if (t->groups[i].nrouters > maxr)
			maxr = t->groups[i].nrouters;
	for (i = 0; i < t->nswitches; i++)
		if (t->switches[i].nnodes > maxn)
			maxn = t->switches[i].nnodes;
	for (i = 0; t->global_links && i < g; i++)
		for (k = i + 1; k < g; k++) {
			total += t->global_links[i * g + k];
			if (t->global_links[i * g + k] > maxlinks)
				maxlinks = t->global_links[i * g + k];
		}
	/* a group: one row of node cells per router, as wide as its cells
	 * or its labels need (up to 175: a longer host list is a tooltip) */
	cell = fmin(10, 140.0 / maxn);
	cell = fmin(cell, fmax(2, 96.0 / maxr));
	cols = maxn;
	rw = cell;
	gw = cells ? cols * cell + 16 : 120;
	for (i = 0; i < g; i++) {
		char lab[300], *hl;

		hl = topoml_nodeset_format(t, t->groups[i].desc);
		snprintf(lab, sizeof(lab), "%s: %d routers", t->groups[i].name,
			 t->groups[i].nrouters);
		gw = fmax(gw, cli_text_w(lab, 11) + 10);
		if (hl && cli_text_w(hl, 10) + 10 <= 175)
			gw = fmax(gw, cli_text_w(hl, 10) + 10);
		free(hl);
	}
	gh = 46 + (cells ? maxr * cell : 10) + 8;
	/* boxes on the diagonals need their diagonal: no overlap anywhere */
	radius = g > 1 ? fmax(160, (sqrt(gw * gw + gh * gh) + 8) * g /
			      (2 * M_PI)) : 0;
	rin = fmax(40, radius - sqrt(gw * gw + gh * gh) / 2 - 10);
	size = 2 * radius + gw + 60;
	cx = size / 2;
	cy = size / 2 + 56;
	{
		double w = size;

		/* the links' total goes below the circle, not over them */
		_top(f, &w, fmax(size + 70, cy + radius + gh / 2 + 30), title,
		     sub, "boxes: groups, a row of nodes per router; lines: "
		     "global links", t, node_job);
		cx = w / 2;
	}
	fprintf(f, "<g stroke=\"#c05050\" stroke-opacity=\"0.55\" "
		"stroke-linecap=\"round\">\n");
	for (i = 0; i < g; i++) {
		double a = 2 * M_PI * i / g - M_PI / 2;

		/* stub from the group to its point on the inner circle */
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			"y2=\"%.1f\" stroke-width=\"2\"/>\n",
			cx + radius * cos(a), cy + radius * sin(a),
			cx + rin * cos(a), cy + rin * sin(a));
		for (k = i + 1; k < g; k++) {
			int c = t->global_links ? t->global_links[i * g + k] : 0;
			double b = 2 * M_PI * k / g - M_PI / 2;

			if (c <= 0)
				continue;
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				"y2=\"%.1f\" stroke-width=\"%.2f\"/>\n",
				cx + rin * cos(a), cy + rin * sin(a),
				cx + rin * cos(b), cy + rin * sin(b),
				g > 32 ? 0.3 : 0.6 + 2.0 * c / maxlinks);
		}
	}
	fprintf(f, "</g>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
		"text-anchor=\"middle\" " FONT ">%d global link%s between %d "
		"group%s</text>\n", cx, cy + radius + gh / 2 + 20, total,
		total == 1 ? "" : "s", g, g == 1 ? "" : "s");
	for (i = 0; i < g; i++) {
		const struct topoml_group *gr = &t->groups[i];
		double a = 2 * M_PI * i / g - M_PI / 2;
		double x = cx + radius * cos(a) - gw / 2;
		double y = cy + radius * sin(a) - gh / 2;
		int links = 0, gn;

		gn = gr->desc ? hwloc_bitmap_weight(gr->desc) : 0;
		for (k = 0; t->global_links && k < g; k++)
			if (k != i)
				links += t->global_links[i * g + k];
		fprintf(f, "<g><title>");
		_text(f, gr->name);
		fprintf(f, ": %d router%s, %d node%s, %d global link%s ",
			gr->nrouters, gr->nrouters == 1 ? "" : "s", gn,
			gn == 1 ? "" : "s", links, links == 1 ? "" : "s");
		_set_text(f, t, gr->desc);
		fprintf(f, "</title>\n");
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%.1f\" rx=\"6\" fill=\"#f5ead0\" "
			"stroke=\"#333\"/>\n", x, y, gw, gh);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
			"text-anchor=\"middle\" " FONT ">", x + gw / 2, y + 14);
		_text(f, gr->name);
		fprintf(f, ": %d router%s</text>\n", gr->nrouters,
			gr->nrouters == 1 ? "" : "s");
		_nodes_line(f, t, gr->desc, gn, x + gw / 2, y + 26, gw - 8,
			    "middle");
		for (k = 0; k < gr->nrouters; k++) {
			const struct topoml_switch *s =
				&t->switches[gr->routers[k]];
			double rx = x + 5 + k * (gw - 10) / gr->nrouters;

			if (cells) {
				_cells(f, t, s->nodes, s->nnodes,
				       x + (gw - cols * cell) / 2,
				       y + 46 + k * rw,
				       cols, cell, node_job);
			} else {
				_job_colour(col, sizeof(col), node_job ?
					    _major_job(s->nodes, s->nnodes,
						       node_job) : 0);
				fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" "
					"width=\"%.1f\" height=\"10\" "
					"fill=\"%s\"/>\n", rx + 1, y + 46,
					fmax(1, (gw - 10) / gr->nrouters - 2),
					col);
			}
		}
		fprintf(f, "</g>\n");
	}
	fprintf(f, "</svg>\n");
	return 0;
}

/*
 * Torus: one grid per z plane, x across and y down with their first and
 * last coordinates marked, planes in order left to right.
 */
static int _svg_torus(const topoml_topo_t *t, FILE *f,
		      const uint32_t *node_job, const char *title,
		      const char *sub)
{
	int X = t->dims[0], Y = t->dims[1], Z = t->dims[2], x, y, z;
	double cell = fmax(3, fmin(16, 150.0 / (X > Y ? X : Y)));
	double pw = X * cell + 34, ph = Y * cell + 44, top = 80;
	int per_row = (int)fmax(1, fmin(Z, floor(1000 / pw)));
	int rows = (Z + per_row - 1) / per_row;
	char col[32], note[160];

	per_row = (Z + rows - 1) / rows;	/* rows of equal length */
	snprintf(note, sizeof(note), "one grid per z plane (z = 0..%d), x "
		 "across, y down; wrap-around: x %s, y %s, z %s", Z - 1,
		 t->wrap[0] ? "yes" : "no", t->wrap[1] ? "yes" : "no",
		 t->wrap[2] ? "yes" : "no");
	{
		double w = fmax(560, per_row * pw + 20);

		w = fmax(w, cli_text_w(note, 11) + 20);

		_top(f, &w, top + rows * ph + 10, title, sub, "cells: nodes",
		     t, node_job);
	}
	fprintf(f, "<text x=\"10\" y=\"%.1f\" font-size=\"11\" " FONT ">",
		top - 12);
	_text(f, note);
	fprintf(f, "</text>\n");
	for (z = 0; z < Z; z++) {
		double ox = 10 + (z % per_row) * pw + 22;
		double oy = top + (z / per_row) * ph;
		hwloc_bitmap_t plane = hwloc_bitmap_alloc();
		char *hl;
		int count = 0;

		for (y = 0; y < Y; y++)
			for (x = 0; x < X; x++) {
				int n = t->coord_node[x + X * (y + Y * z)];

				if (n >= 0 && plane)
					hwloc_bitmap_set(plane, n);
				count += n >= 0;
			}
		hl = plane ? topoml_nodeset_format(t, plane) : NULL;
		hwloc_bitmap_free(plane);
		fprintf(f, "<g><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
			"font-weight=\"bold\" " FONT ">z = %d</text>\n", ox,
			oy + 11, z);
		/* the plane's nodes by name where they fit, else a count */
		if (hl && cli_text_w(hl, 9) <= pw - 34 - 46) {
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" "
				"font-size=\"9\" fill=\"#444\" " FONT ">",
				ox + 46, oy + 11);
			_text(f, hl);
			fprintf(f, "</text>\n");
		} else if (count != X * Y) {
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" "
				FONT ">%d node%s</text>\n", ox + 46, oy + 11,
				count, count == 1 ? "" : "s");
		}
		free(hl);
		/* axes: x labels above the grid, y labels to its left */
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"8\" "
			"fill=\"#555\" " FONT ">x 0</text>\n<text x=\"%.1f\" "
			"y=\"%.1f\" font-size=\"8\" fill=\"#555\" "
			"text-anchor=\"end\" " FONT ">%d</text>\n", ox,
			oy + 22, ox + X * cell, oy + 22, X - 1);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"8\" "
			"fill=\"#555\" text-anchor=\"end\" " FONT ">y 0</text>\n"
			"<text x=\"%.1f\" y=\"%.1f\" font-size=\"8\" "
			"fill=\"#555\" text-anchor=\"end\" " FONT ">%d</text>\n",
			ox - 2, oy + 25 + cell * 0.8, ox - 2,
			oy + 25 + (Y - 1) * cell + cell * 0.8, Y - 1);
		for (y = 0; y < Y; y++)
			for (x = 0; x < X; x++) {
				int n = t->coord_node[x + X * (y + Y * z)];

				if (n < 0)
					snprintf(col, sizeof(col), "white");
				else
					_job_colour(col, sizeof(col), node_job ?
						    node_job[n] : 0);
				fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" "
					"width=\"%.1f\" height=\"%.1f\" "
					"fill=\"%s\" stroke=\"#fff\" "
					"stroke-width=\"0.4\">", ox + x * cell,
					oy + 25 + y * cell, cell, cell, col);
				if (n >= 0 && t->nnodes <= 5000) {
					fprintf(f, "<title>");
					_text(f, t->nodes[n].name);
					fprintf(f, " (%d,%d,%d)</title>", x, y,
						z);
				}
				fprintf(f, "</rect>\n");
			}
		fprintf(f, "</g>\n");
	}
	fprintf(f, "</svg>\n");
	return 0;
}

int cli_write_svg(const topoml_topo_t *t, FILE *f, const uint32_t *node_job)
{
	return cli_write_svg_titled(t, f, node_job, NULL);
}

int cli_write_svg_titled(const topoml_topo_t *t, FILE *f,
			 const uint32_t *node_job, const char *title_in)
{
	char sum[512];
	const char *title = title_in ? title_in : sum, *sub = NULL;

	topoml_summary(t, sum, sizeof(sum));
	if (title_in)
		sub = sum;
	switch (t->family) {
	case TOPOML_FAT_TREE:
		return _svg_fat_tree(t, f, node_job, title, sub);
	case TOPOML_DRAGONFLY:
		return _svg_dragonfly(t, f, node_job, title, sub);
	case TOPOML_TORUS:
		return _svg_torus(t, f, node_job, title, sub);
	}
	return -1;
}
