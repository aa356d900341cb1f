/*
 * bench_svg.h -- SVG charts of benchmark rows (header-only, static; needs
 * bench_util.h's bench_row and libm).
 *
 * Two charts, both drawn from whatever rows the run produced, so a subject
 * that a benchmark adds shows up without being named here:
 *
 *   bench_svg_bars   one workload: a bar per subject (the median), a whisker
 *                    from min to max, the median written above it. Bars are
 *                    grouped by N, one panel per object size; a workload run
 *                    at a single N gets one panel grouped by object size.
 *   bench_svg_lines  one workload measured at several N: median against N,
 *                    both axes logarithmic (equal ratios are equal distances,
 *                    so curves of 2 ns and of 200 ns figures both show), one
 *                    line per subject (whiskers min..max), one panel per
 *                    object size.
 *
 * A subject keeps its colour in every chart of a run: the colour is chosen by
 * the subject's first appearance among all the rows passed as `all` (24
 * colours: opool_bench's default run has 18 subjects, peers included). The
 * files are plain SVG 1.1 (no script, no external style or font), readable by
 * any browser; every bar and point carries a <title> tooltip with its
 * figures. Returns 1 when a chart was written, 0 when the rows had nothing to
 * draw, -1 (after a message on stderr) when the file could not be written.
 */
#ifndef OPOOL_BENCH_SVG_H
#define OPOOL_BENCH_SVG_H

#include "bench_util.h"

#include <math.h>

/* What a row's n counts, for the labels: ("N", "live objects N") in
 * opool_bench, ("T", "threads T") in bench_mt. */
typedef struct bench_svg_axis {
    const char *sym;  /* in "N = 1K" and the tooltips */
    const char *what; /* under the line chart's x axis */
} bench_svg_axis;

/* ---- small helpers ---------------------------------------------------------- */

/* Text content or attribute value, XML-escaped. */
static inline void bench_svg_esc(FILE *f, const char *s) {
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

/* 1000 -> "1K", 250000 -> "250K", 1000000 -> "1M"; other counts in full. */
static inline void bench_svg_count(char *buf, size_t cap, uint32_t n) {
    if (n >= 1000000 && n % 1000000 == 0)
        snprintf(buf, cap, "%uM", (unsigned)(n / 1000000));
    else if (n >= 1000 && n % 1000 == 0)
        snprintf(buf, cap, "%uK", (unsigned)(n / 1000));
    else
        snprintf(buf, cap, "%u", (unsigned)n);
}

/* A panel's title: its object size; none for size 0 (rows whose workload
 * names its sizes, as bench_heap's). */
static inline void bench_svg_size_label(char *buf, size_t cap, size_t size) {
    if (size)
        snprintf(buf, cap, "object size %zu bytes", size);
    else
        snprintf(buf, cap, " ");
}

/* Figures as the tables print them: 3 significant digits, no exponent. */
static inline void bench_svg_num(char *buf, size_t cap, double v) {
    if (v >= 100 || v == 0)
        snprintf(buf, cap, "%.0f", v);
    else if (v >= 10)
        snprintf(buf, cap, "%.1f", v);
    else
        snprintf(buf, cap, "%.2f", v);
}

/* The axis top at or above v: 1, 2, 2.5 or 5 times a power of ten; its five
 * ticks are then round numbers. */
static inline double bench_svg_nice(double v) {
    if (!(v > 0)) return 1;
    double p = pow(10, floor(log10(v)));
    double f = v / p;
    double nf = f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10;
    return nf * p;
}

static const char *const bench_svg_palette[] = {
    "#3b6fb6", "#e8a33d", "#d1495b", "#2e9e78", "#8e5fb8", "#6b8e23", "#e377c2", "#7f7f7f",
    "#17becf", "#a0522d", "#1f3b73", "#c9b800", "#ff7f50", "#4b0082", "#20b2aa", "#b22222",
    "#9acd32", "#00008b", "#ff1493", "#556b2f", "#daa520", "#008b8b", "#9932cc", "#8b4513",
};
#define BENCH_SVG_NPALETTE ((int)(sizeof bench_svg_palette / sizeof bench_svg_palette[0]))

/* The subject's colour: its rank among the distinct subjects of all rows. */
static inline const char *bench_svg_color(const bench_row *all, int nall, const char *subject) {
    int rank = 0;
    for (int i = 0; i < nall; i++) {
        if (strcmp(all[i].subject, subject) == 0) break;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = strcmp(all[j].subject, all[i].subject) == 0;
        rank += !seen;
    }
    return bench_svg_palette[rank % BENCH_SVG_NPALETTE];
}

#define BENCH_SVG_MAX 64 /* distinct subjects, sizes or N of one chart */

/* The distinct values of one column of the rows of a workload, in order of
 * appearance (Ns are sorted ascending afterwards). */
typedef struct bench_svg_keys {
    int nsubj, nsize, nn;
    const char *subj[BENCH_SVG_MAX];
    size_t size[BENCH_SVG_MAX];
    uint32_t n[BENCH_SVG_MAX];
} bench_svg_keys;

static inline void bench_svg_collect(bench_svg_keys *k, const bench_row *rows, int nrows,
                                     const char *workload) {
    memset(k, 0, sizeof *k);
    for (int i = 0; i < nrows; i++) {
        const bench_row *r = &rows[i];
        if (strcmp(r->workload, workload) != 0) continue;
        int j;
        for (j = 0; j < k->nsubj && strcmp(k->subj[j], r->subject) != 0; j++) {
        }
        if (j == k->nsubj && k->nsubj < BENCH_SVG_MAX) k->subj[k->nsubj++] = r->subject;
        for (j = 0; j < k->nsize && k->size[j] != r->size; j++) {
        }
        if (j == k->nsize && k->nsize < BENCH_SVG_MAX) k->size[k->nsize++] = r->size;
        for (j = 0; j < k->nn && k->n[j] != r->n; j++) {
        }
        if (j == k->nn && k->nn < BENCH_SVG_MAX) k->n[k->nn++] = r->n;
    }
    for (int a = 1; a < k->nn; a++)
        for (int b = a; b > 0 && k->n[b - 1] > k->n[b]; b--) {
            uint32_t t = k->n[b];
            k->n[b] = k->n[b - 1];
            k->n[b - 1] = t;
        }
}

static inline const bench_row *bench_svg_find(const bench_row *rows, int nrows,
                                              const char *workload, const char *subject,
                                              size_t size, uint32_t n) {
    for (int i = 0; i < nrows; i++)
        if (rows[i].size == size && rows[i].n == n && strcmp(rows[i].workload, workload) == 0 &&
            strcmp(rows[i].subject, subject) == 0)
            return &rows[i];
    return NULL;
}

static inline FILE *bench_svg_open(const char *path) {
    bench_mkdirs_for(path);
    FILE *f = fopen(path, "w");
    if (f == NULL) fprintf(stderr, "opool_bench: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

static inline int bench_svg_close(FILE *f, const char *path) {
    fputs("</svg>\n", f);
    if (fclose(f) != 0) {
        fprintf(stderr, "opool_bench: error writing %s\n", path);
        return -1;
    }
    return 1;
}

#define BENCH_SVG_FONT "font-family=\"sans-serif\""

/* Wide enough for the title (16 px bold) and subtitle (12 px), estimated. */
static inline int bench_svg_min_width(const char *title, const char *subtitle) {
    int a = 32 + (int)(9.5 * (double)strlen(title)), b = 32 + (int)(6.6 * (double)strlen(subtitle));
    return a > b ? a : b;
}

/* Document start, title, subtitle and the legend; returns the y where the
 * panels start. Text widths are estimates (7 px per character at 12 px). */
static inline int bench_svg_head(FILE *f, int width, int height, const char *title,
                                 const char *subtitle, const bench_svg_keys *k,
                                 const bench_row *all, int nall) {
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" " BENCH_SVG_FONT " font-size=\"12\">\n"
            "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
            width, height, width, height, width, height);
    fputs("<text x=\"16\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", f);
    bench_svg_esc(f, title);
    fputs("</text>\n<text x=\"16\" y=\"42\" fill=\"#555555\">", f);
    bench_svg_esc(f, subtitle);
    fputs("</text>\n", f);
    int x = 16, y = 62;
    for (int s = 0; s < k->nsubj; s++) {
        int w = 24 + 7 * (int)strlen(k->subj[s]);
        if (x > 16 && x + w > width - 16) {
            x = 16;
            y += 18;
        }
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>", x, y - 10,
                bench_svg_color(all, nall, k->subj[s]));
        fprintf(f, "<text x=\"%d\" y=\"%d\">", x + 16, y);
        bench_svg_esc(f, k->subj[s]);
        fputs("</text>\n", f);
        x += w;
    }
    return y + 16;
}

/* Legend height for a given width, as bench_svg_head lays it out. */
static inline int bench_svg_legend_rows(int width, const bench_svg_keys *k) {
    int x = 16, rows = 1;
    for (int s = 0; s < k->nsubj; s++) {
        int w = 24 + 7 * (int)strlen(k->subj[s]);
        if (x > 16 && x + w > width - 16) {
            x = 16;
            rows++;
        }
        x += w;
    }
    return rows;
}

/* The y axis of one panel: grid lines, tick labels and the unit, for values
 * 0..top mapped to pixel rows y0 + ph (0) .. y0 (top). */
static inline void bench_svg_yaxis(FILE *f, int x0, int y0, int pw, int ph, double top,
                                   const char *ylabel) {
    for (int t = 0; t <= 5; t++) {
        double v = top * t / 5;
        double y = y0 + ph - (double)ph * t / 5;
        char buf[32];
        bench_svg_num(buf, sizeof buf, v);
        fprintf(f,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>"
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#333333\">%s</text>\n",
                x0, y, x0 + pw, y, t ? "#e4e4e4" : "#333333", x0 - 6, y + 4, buf);
    }
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333333\"/>\n", x0, y0, x0,
            y0 + ph);
    fprintf(f,
            "<text transform=\"translate(%d,%d) rotate(-90)\" text-anchor=\"middle\" "
            "fill=\"#333333\">",
            x0 - 52, y0 + ph / 2);
    bench_svg_esc(f, ylabel);
    fputs("</text>\n", f);
}

/* The log y axis of a line panel: values lo..hi (powers of ten) mapped to
 * pixel rows y0 + ph .. y0; grid lines at 1, 2 and 5 times each power. */
static inline double bench_svg_logy(double v, int y0, int ph, double lo, double hi) {
    return y0 + ph - ph * log10(v > lo ? v / lo : 1) / log10(hi / lo);
}

static inline void bench_svg_ylog(FILE *f, int x0, int y0, int pw, int ph, double lo, double hi,
                                  const char *ylabel) {
    static const double steps[3] = {1, 2, 5};
    for (double p = lo; p < hi * 1.001; p *= 10)
        for (int j = 0; j < 3; j++) {
            double v = p * steps[j];
            if (v > hi * 1.001) break;
            double y = bench_svg_logy(v, y0, ph, lo, hi);
            char buf[32];
            bench_svg_num(buf, sizeof buf, v);
            fprintf(f,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>"
                    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#333333\">%s</text>\n",
                    x0, y, x0 + pw, y, j ? "#f0f0f0" : "#d8d8d8", x0 - 6, y + 4, buf);
        }
    fprintf(f,
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333333\"/>"
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333333\"/>\n",
            x0, y0, x0, y0 + ph, x0, y0 + ph, x0 + pw, y0 + ph);
    fprintf(f,
            "<text transform=\"translate(%d,%d) rotate(-90)\" text-anchor=\"middle\" "
            "fill=\"#333333\">",
            x0 - 52, y0 + ph / 2);
    bench_svg_esc(f, ylabel);
    fputs(" (log scale)</text>\n", f);
}

/* ---- bar chart -------------------------------------------------------------- */

static inline int bench_svg_bars(const char *path, const char *title, const char *subtitle,
                                 const char *ylabel, const bench_row *all, int nall,
                                 const char *workload, const bench_svg_axis *x) {
    bench_svg_keys k;
    bench_svg_collect(&k, all, nall, workload);
    if (k.nsubj == 0) return 0;
    /* several N: a panel per size, groups by N; one N: one panel, groups by size */
    bool by_size = k.nn == 1;
    int npanels = by_size ? 1 : k.nsize;
    int ngroups = by_size ? k.nsize : k.nn;
    const int bw = 14, bgap = 2, ggap = 28, left = 80, ph = 220, ptop = 26, pbot = 34;
    int groupw = k.nsubj * (bw + bgap) + ggap;
    int pw = ngroups * groupw;
    int width = left + pw + 20;
    if (width < bench_svg_min_width(title, subtitle)) width = bench_svg_min_width(title, subtitle);
    int legend = bench_svg_legend_rows(width, &k);
    int height = 62 + 18 * legend + npanels * (ptop + ph + pbot) + 8;
    FILE *f = bench_svg_open(path);
    if (f == NULL) return -1;
    int y = bench_svg_head(f, width, height, title, subtitle, &k, all, nall);
    for (int p = 0; p < npanels; p++) {
        int y0 = y + ptop;
        char buf[96], a[32], b[32], c[32];
        if (by_size) {
            bench_svg_count(a, sizeof a, k.n[0]);
            snprintf(buf, sizeof buf, "%s = %s", x->sym, a);
        } else {
            bench_svg_size_label(buf, sizeof buf, k.size[p]);
        }
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>\n", left, y0 - 8, buf);
        /* room above the tallest whisker for its rotated label (~36 px) */
        double hi = 0;
        for (int g = 0; g < ngroups; g++)
            for (int s = 0; s < k.nsubj; s++) {
                const bench_row *r =
                    bench_svg_find(all, nall, workload, k.subj[s], by_size ? k.size[g] : k.size[p],
                                   by_size ? k.n[0] : k.n[g]);
                if (r && r->max > hi) hi = r->max;
            }
        double top = bench_svg_nice(hi * ph / (ph - 38));
        bench_svg_yaxis(f, left, y0, pw, ph, top, ylabel);
        for (int g = 0; g < ngroups; g++) {
            size_t size = by_size ? k.size[g] : k.size[p];
            uint32_t n = by_size ? k.n[0] : k.n[g];
            int gx = left + g * groupw + ggap / 2;
            if (by_size) {
                snprintf(buf, sizeof buf, "%zu B", size);
            } else {
                bench_svg_count(a, sizeof a, n);
                snprintf(buf, sizeof buf, "%s = %s", x->sym, a);
            }
            fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                    gx + k.nsubj * (bw + bgap) / 2, y0 + ph + 18, buf);
            for (int s = 0; s < k.nsubj; s++) {
                const bench_row *r = bench_svg_find(all, nall, workload, k.subj[s], size, n);
                if (r == NULL) continue;
                double bx = gx + s * (bw + bgap);
                double ym = y0 + ph - ph * r->median / top;
                double ylo = y0 + ph - ph * r->min / top;
                double yhi = y0 + ph - ph * r->max / top;
                double cx = bx + bw / 2.0;
                bench_svg_num(a, sizeof a, r->median);
                bench_svg_num(b, sizeof b, r->min);
                bench_svg_num(c, sizeof c, r->max);
                fputs("<g><title>", f);
                bench_svg_esc(f, r->subject);
                fprintf(f, ", %s %u, %zu B: median %s (min %s, max %s), %d reps</title>\n", x->sym,
                        (unsigned)n, size, a, b, c, r->reps);
                fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"/>",
                        bx, ym, bw, y0 + ph - ym, bench_svg_color(all, nall, r->subject));
                fprintf(
                    f,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222222\"/>"
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222222\"/>"
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222222\"/>",
                    cx, ylo, cx, yhi, cx - 4, ylo, cx + 4, ylo, cx - 4, yhi, cx + 4, yhi);
                fprintf(f,
                        "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" font-size=\"10\">"
                        "%s</text></g>\n",
                        cx + 3.5, yhi - 3, a);
            }
        }
        y = y0 + ph + pbot;
    }
    return bench_svg_close(f, path);
}

/* ---- line chart: median against N (log x, log y) ---------------------------- */

static inline int bench_svg_lines(const char *path, const char *title, const char *subtitle,
                                  const char *ylabel, const bench_row *all, int nall,
                                  const char *workload, const bench_svg_axis *x) {
    bench_svg_keys k;
    bench_svg_collect(&k, all, nall, workload);
    if (k.nsubj == 0 || k.nn < 2) return 0;
    const int left = 80, pw = 560, ph = 240, ptop = 26, pbot = 34, pad = 24;
    int width = left + pw + 24;
    if (width < bench_svg_min_width(title, subtitle)) width = bench_svg_min_width(title, subtitle);
    int legend = bench_svg_legend_rows(width, &k);
    int height = 62 + 18 * legend + k.nsize * (ptop + ph + pbot) + 8;
    FILE *f = bench_svg_open(path);
    if (f == NULL) return -1;
    int y = bench_svg_head(f, width, height, title, subtitle, &k, all, nall);
    double lx0 = log10((double)k.n[0]), lx1 = log10((double)k.n[k.nn - 1]);
    for (int p = 0; p < k.nsize; p++) {
        int y0 = y + ptop;
        char a[32], b[32], c[32], buf[96];
        bench_svg_size_label(buf, sizeof buf, k.size[p]);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>\n", left, y0 - 8, buf);
        double lo = 0, hi = 0;
        for (int s = 0; s < k.nsubj; s++)
            for (int j = 0; j < k.nn; j++) {
                const bench_row *r =
                    bench_svg_find(all, nall, workload, k.subj[s], k.size[p], k.n[j]);
                if (r == NULL || !(r->min > 0)) continue;
                if (r->max > hi) hi = r->max;
                if (lo == 0 || r->min < lo) lo = r->min;
            }
        if (!(lo > 0)) lo = hi = 1;
        lo = pow(10, floor(log10(lo)));
        hi = pow(10, ceil(log10(hi)));
        if (hi <= lo) hi = lo * 10;
        bench_svg_ylog(f, left, y0, pw, ph, lo, hi, ylabel);
        for (int j = 0; j < k.nn; j++) {
            double xj = left + pad + (pw - 2 * pad) * (log10((double)k.n[j]) - lx0) / (lx1 - lx0);
            bench_svg_count(a, sizeof a, k.n[j]);
            fprintf(f,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#333333\"/>"
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                    xj, y0 + ph, xj, y0 + ph + 5, xj, y0 + ph + 18, a);
        }
        fprintf(f,
                "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"#333333\">"
                "%s (log scale)</text>\n",
                left + pw, y0 + ph + 30, x->what);
        for (int s = 0; s < k.nsubj; s++) {
            const char *color = bench_svg_color(all, nall, k.subj[s]);
            fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", color);
            for (int j = 0; j < k.nn; j++) {
                const bench_row *r =
                    bench_svg_find(all, nall, workload, k.subj[s], k.size[p], k.n[j]);
                if (r == NULL) continue;
                double xj =
                    left + pad + (pw - 2 * pad) * (log10((double)k.n[j]) - lx0) / (lx1 - lx0);
                fprintf(f, "%.1f,%.1f ", xj, bench_svg_logy(r->median, y0, ph, lo, hi));
            }
            fputs("\"/>\n", f);
            for (int j = 0; j < k.nn; j++) {
                const bench_row *r =
                    bench_svg_find(all, nall, workload, k.subj[s], k.size[p], k.n[j]);
                if (r == NULL) continue;
                double xj =
                    left + pad + (pw - 2 * pad) * (log10((double)k.n[j]) - lx0) / (lx1 - lx0);
                bench_svg_num(a, sizeof a, r->median);
                bench_svg_num(b, sizeof b, r->min);
                bench_svg_num(c, sizeof c, r->max);
                fputs("<g><title>", f);
                bench_svg_esc(f, r->subject);
                fprintf(f, ", %s %u, %zu B: median %s (min %s, max %s)</title>", x->sym,
                        (unsigned)r->n, r->size, a, b, c);
                fprintf(f,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>"
                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/></g>\n",
                        xj, bench_svg_logy(r->min, y0, ph, lo, hi), xj,
                        bench_svg_logy(r->max, y0, ph, lo, hi), color, xj,
                        bench_svg_logy(r->median, y0, ph, lo, hi), color);
            }
        }
        y = y0 + ph + pbot;
    }
    return bench_svg_close(f, path);
}

/* ---- every chart of a run ------------------------------------------------------ */

/* "fill+drain" -> "fill_drain": lower case, runs of other characters one '_'. */
static inline void bench_svg_slug(const char *name, char *out, size_t cap) {
    size_t j = 0;
    for (const char *c = name; *c && j + 1 < cap; c++) {
        bool alnum =
            (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9');
        if (alnum)
            out[j++] = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
        else if (j > 0 && out[j - 1] != '_')
            out[j++] = '_';
    }
    while (j > 0 && out[j - 1] == '_') j--;
    out[j] = '\0';
}

/* The directory part of path, with its '/' ("" for none). */
static inline void bench_svg_dir_of(const char *path, char *out, size_t cap) {
    const char *slash = strrchr(path, '/');
    size_t len = slash ? (size_t)(slash - path) + 1 : 0;
    if (len >= cap) len = 0;
    memcpy(out, path, len);
    out[len] = '\0';
}

/* How a program's charts are named and labelled. */
typedef struct bench_svg_run {
    const char *prog;   /* title prefix and file prefix ("" for none) */
    const char *prefix; /* file names: <dir><prefix><workload>.svg */
    bench_svg_axis x;
    const char *(*unit_of)(const char *workload); /* the y axis */
    bool (*lines_of)(const char *workload);       /* also <...>_vs_<x>.svg */
} bench_svg_run;

/* Every workload's bar chart (and line chart where lines_of says so) into the
 * directory of csv; prints where, and returns how many were written. */
static inline int bench_svg_charts(const char *csv, const bench_svg_run *run, const bench_row *rows,
                                   int nrows, const char *mode) {
    int written = 0;
    char dir[4096], sub[240], path[4400], slug[64], title[160], xslug[32];
    bench_svg_dir_of(csv, dir, sizeof dir);
    bench_svg_slug(run->x.sym, xslug, sizeof xslug);
    snprintf(sub, sizeof sub, "%s: median of the repetitions, whiskers min to max", mode);
    for (int i = 0; i < nrows; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) seen = strcmp(rows[j].workload, rows[i].workload) == 0;
        if (seen) continue;
        const char *w = rows[i].workload, *unit = run->unit_of(w);
        bench_svg_slug(w, slug, sizeof slug);
        snprintf(path, sizeof path, "%s%s%s.svg", dir, run->prefix, slug);
        snprintf(title, sizeof title, "%s: %.39s (%s)", run->prog, w, unit);
        written += bench_svg_bars(path, title, sub, unit, rows, nrows, w, &run->x) > 0;
        if (run->lines_of(w)) {
            snprintf(path, sizeof path, "%s%s%s_vs_%s.svg", dir, run->prefix, slug, xslug);
            snprintf(title, sizeof title, "%s: %.39s against %s", run->prog, w, run->x.what);
            written += bench_svg_lines(path, title, sub, unit, rows, nrows, w, &run->x) > 0;
        }
    }
    if (written > 0) printf("SVG: %d charts in %s\n", written, dir[0] ? dir : "./");
    return written;
}

#endif /* OPOOL_BENCH_SVG_H */
