/*
 * SVG pictures of a topology: the switch tree by level, dragonfly groups on
 * a circle with their global links, torus z-planes as x/y grids.  Node
 * cells can be coloured by the job using them (later: topoml place/sim).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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

/* A distinct, stable colour per job id; idle nodes are light grey. */
static void _job_colour(char *buf, size_t len, uint32_t job)
{
	if (!job) {
		snprintf(buf, len, "#e4e4e4");
		return;
	}
	snprintf(buf, len, "hsl(%u,65%%,55%%)", (job * 137u) % 360u);
}

static void _header(FILE *f, double w, double h, const char *title)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"10\" y=\"20\" font-size=\"14\" " FONT ">",
		w, h, w, h);
	_text(f, title);
	fprintf(f, "</text>\n");
}

/* A row of node cells under a box, coloured by job. */
static void _cells(FILE *f, const int *nodes, int n, double x, double y,
		   double w, const uint32_t *node_job)
{
	double cw = w / (n ? n : 1);
	char col[32];
	int i;

	if (cw < 0.5)
		return;
	for (i = 0; i < n; i++) {
		_job_colour(col, sizeof(col), node_job ? node_job[nodes[i]] : 0);
		fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
			"height=\"6\" fill=\"%s\"/>\n", x + i * cw, y,
			cw > 1.5 ? cw - 0.5 : cw, col);
	}
}

static int _svg_fat_tree(const topoml_topo_t *t, FILE *f,
			 const uint32_t *node_job, const char *title)
{
	int nl = t->nlevels, l, i, k, maxw = 1;
	int *count = calloc(nl ? nl : 1, sizeof(int));
	int *pos = malloc((t->nswitches ? t->nswitches : 1) * sizeof(int));
	double bw, gap, width, height, rowh = 90;

	if (!count || !pos) {
		free(count);
		free(pos);
		return -1;
	}
	for (i = 0; i < t->nswitches; i++)
		pos[i] = count[t->switches[i].level]++;
	for (l = 0; l < nl; l++)
		if (count[l] > maxw)
			maxw = count[l];
	/* Wide levels shrink boxes (down to thin bars without labels). */
	bw = maxw <= 16 ? 90 : fmax(1, 1600.0 / maxw * 0.85);
	gap = maxw <= 16 ? 20 : bw / 0.85 * 0.15;
	width = fmax(400, maxw * (bw + gap) + 40);
	height = nl * rowh + 70;
	_header(f, width, height, title);
#define BOX_X(sw) (20 + ((width - 40) / count[t->switches[sw].level]) * \
		   (pos[sw] + 0.5) - bw / 2)
#define BOX_Y(sw) (40 + (nl - 1 - t->switches[sw].level) * rowh)
	fprintf(f, "<g stroke=\"#8a8a8a\" stroke-width=\"%.1f\">\n",
		t->nswitches > 500 ? 0.3 : 1.0);
	for (i = 0; i < t->nswitches; i++) {
		const struct topoml_switch *s = &t->switches[i];

		for (k = 0; k < s->nparents; k++) {
			int p = s->parents[k];

			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				"y2=\"%.1f\"/>\n", BOX_X(i) + bw / 2, BOX_Y(i),
				BOX_X(p) + bw / 2, BOX_Y(p) + 36);
		}
	}
	fprintf(f, "</g>\n");
	for (i = 0; i < t->nswitches; i++) {
		const struct topoml_switch *s = &t->switches[i];
		double x = BOX_X(i), y = BOX_Y(i);

		fprintf(f, "<g><title>");
		_text(f, s->name);
		fprintf(f, ": level %d, %d nodes</title>\n", s->level,
			s->desc ? hwloc_bitmap_weight(s->desc) : 0);
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"36\" rx=\"4\" fill=\"%s\" stroke=\"#333\" "
			"stroke-width=\"0.8\"/>\n", x, y, bw,
			s->level ? "#cfe0f5" : "#d8efd0");
		if (bw >= 60) {
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
				"text-anchor=\"middle\" " FONT ">", x + bw / 2,
				y + 15);
			_text(f, s->name);
			fprintf(f, "</text>\n<text x=\"%.1f\" y=\"%.1f\" "
				"font-size=\"10\" text-anchor=\"middle\" " FONT
				">%d nodes</text>\n", x + bw / 2, y + 29,
				s->desc ? hwloc_bitmap_weight(s->desc) : 0);
		}
		if (!s->level)
			_cells(f, s->nodes, s->nnodes, x, y + 40, bw, node_job);
		fprintf(f, "</g>\n");
	}
#undef BOX_X
#undef BOX_Y
	fprintf(f, "</svg>\n");
	free(count);
	free(pos);
	return 0;
}

static int _svg_dragonfly(const topoml_topo_t *t, FILE *f,
			  const uint32_t *node_job, const char *title)
{
	int g = t->ngroups, i, k, maxr = 1, maxlinks = 1;
	double gw, gh, radius, cx, cy, size;

	for (i = 0; i < g; i++)
		if (t->groups[i].nrouters > maxr)
			maxr = t->groups[i].nrouters;
	for (i = 0; i < g * g; i++)
		if (t->global_links && t->global_links[i] > maxlinks)
			maxlinks = t->global_links[i];
	gw = fmax(120, fmin(400, maxr * 14.0));
	gh = 40 + 14;
	radius = g > 1 ? fmax(150, (gw + 30) * g / (2 * M_PI)) : 0;
	size = 2 * radius + gw + 80;
	cx = size / 2;
	cy = size / 2 + 10;
	_header(f, size, size + 20, title);
	fprintf(f, "<g stroke=\"#c05050\" stroke-opacity=\"0.5\">\n");
	for (i = 0; i < g; i++)
		for (k = i + 1; k < g; k++) {
			int c = t->global_links ? t->global_links[i * g + k] : 0;
			double a = 2 * M_PI * i / g, b = 2 * M_PI * k / g;

			if (c <= 0)
				continue;
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				"y2=\"%.1f\" stroke-width=\"%.2f\"/>\n",
				cx + radius * cos(a), cy + radius * sin(a),
				cx + radius * cos(b), cy + radius * sin(b),
				g > 32 ? 0.3 : 0.8 + 2.0 * c / maxlinks);
		}
	fprintf(f, "</g>\n");
	for (i = 0; i < g; i++) {
		const struct topoml_group *gr = &t->groups[i];
		double a = 2 * M_PI * i / g;
		double x = cx + radius * cos(a) - gw / 2;
		double y = cy + radius * sin(a) - gh / 2;
		double rw = gw / gr->nrouters;

		fprintf(f, "<g><title>");
		_text(f, gr->name);
		fprintf(f, ": %d routers, %d nodes</title>\n", gr->nrouters,
			gr->desc ? hwloc_bitmap_weight(gr->desc) : 0);
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%.1f\" rx=\"6\" fill=\"#f5ead0\" "
			"stroke=\"#333\"/>\n", x, y, gw, gh);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
			"text-anchor=\"middle\" " FONT ">", x + gw / 2, y + 14);
		_text(f, gr->name);
		fprintf(f, ": %d routers, %d nodes</text>\n", gr->nrouters,
			gr->desc ? hwloc_bitmap_weight(gr->desc) : 0);
		for (k = 0; k < gr->nrouters; k++) {
			const struct topoml_switch *s =
				&t->switches[gr->routers[k]];

			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				"height=\"14\" fill=\"#cfe0f5\" stroke=\"#333\" "
				"stroke-width=\"0.5\"><title>", x + k * rw + 1,
				y + 20, rw - 2 > 0.5 ? rw - 2 : 0.5);
			_text(f, s->name);
			fprintf(f, ": %d nodes</title></rect>\n", s->nnodes);
			_cells(f, s->nodes, s->nnodes, x + k * rw + 1, y + 37,
			       rw - 2 > 0.5 ? rw - 2 : 0.5, node_job);
		}
		fprintf(f, "</g>\n");
	}
	fprintf(f, "</svg>\n");
	return 0;
}

static int _svg_torus(const topoml_topo_t *t, FILE *f,
		      const uint32_t *node_job, const char *title)
{
	int X = t->dims[0], Y = t->dims[1], Z = t->dims[2], x, y, z;
	int per_row = Z < 8 ? Z : 8;
	double cell = fmax(2, fmin(18, 240.0 / (X > Y ? X : Y)));
	double pw = X * cell + 20, ph = Y * cell + 40;
	int rows = (Z + per_row - 1) / per_row;
	char col[32];

	_header(f, fmax(400, per_row * pw + 20), rows * ph + 40, title);
	for (z = 0; z < Z; z++) {
		double ox = 10 + (z % per_row) * pw, oy = 40 + (z / per_row) * ph;
		int count = 0;

		for (y = 0; y < Y; y++)
			for (x = 0; x < X; x++)
				count += t->coord_node[x + X * (y + Y * z)] >= 0;
		fprintf(f, "<g><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
			FONT ">z=%d: %d nodes</text>\n", ox, oy + 12, z, count);
		for (y = 0; y < Y; y++)
			for (x = 0; x < X; x++) {
				int n = t->coord_node[x + X * (y + Y * z)];

				if (n < 0) {
					snprintf(col, sizeof(col), "white");
				} else {
					_job_colour(col, sizeof(col), node_job ?
						    node_job[n] : 0);
				}
				fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" "
					"width=\"%.1f\" height=\"%.1f\" "
					"fill=\"%s\" stroke=\"#999\" "
					"stroke-width=\"0.3\">", ox + x * cell,
					oy + 18 + y * cell, cell, cell, col);
				if (n >= 0) {
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
	char title[512];

	topoml_summary(t, title, sizeof(title));
	switch (t->family) {
	case TOPOML_FAT_TREE:
		return _svg_fat_tree(t, f, node_job, title);
	case TOPOML_DRAGONFLY:
		return _svg_dragonfly(t, f, node_job, title);
	case TOPOML_TORUS:
		return _svg_torus(t, f, node_job, title);
	}
	return -1;
}
