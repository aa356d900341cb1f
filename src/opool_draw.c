/*
 * opool_draw.c -- opool_draw_svg: a picture of a pool, slot by slot (see
 * include/opool.h and docs/DEBUGGING.md).
 *
 * Sections (grep for "==== "):
 *   ==== layout     where each chunk's rows and each slot's cell go
 *   ==== output     buffered writes through the caller's write function
 *   ==== picture    the header, the chunks, the live list's path
 *
 * It reads the pool and changes nothing. Each slot is one cell of a grid of
 * 64 columns, chunk below chunk. Runs of neighbouring cells of one state are
 * one rectangle, filled with a pattern that draws each cell, and carry a
 * title ("slots 64-70: free") that a browser shows on hover.
 */
#include "opool_internal.h"

#include <stdarg.h>
#include <stdio.h>

/* ==== layout ============================================================= */

#define OPOOL__DRAW_CELL 12u   /* pixels per slot, a 1-pixel gap included */
#define OPOOL__DRAW_COLS 64u   /* slots per row */
#define OPOOL__DRAW_X0 12u     /* left edge of the grid (a multiple of CELL: patterns) */
#define OPOOL__DRAW_HEAD 72u   /* title and legend (a multiple of CELL) */
#define OPOOL__DRAW_LABEL 24u  /* a chunk's label line (a multiple of CELL) */
#define OPOOL__DRAW_PATH 4096u /* live-list positions the path joins, at most */

/* A slot's state, which picks its colour. */
enum { OPOOL__LIVE, OPOOL__FREE, OPOOL__RETIRED_CELL, OPOOL__GIVEN_BACK, OPOOL__NSTATES };

static const char *const opool__state_name[OPOOL__NSTATES] = {"live", "free", "retired",
                                                              "given back"};
static const char *const opool__state_id[OPOOL__NSTATES] = {"live", "free", "retired", "back"};

/* (a slot that a pool that never grows has not made yet is free) */
static int opool__state_of(const opool__hot *h, uint32_t i) {
    if (i >= h->nslots) return OPOOL__FREE;
    uint32_t pos = h->slot[i].pos;
    if (pos == OPOOL__RETIRED) return OPOOL__RETIRED_CELL;
    if (pos == OPOOL__UNBACKED) return OPOOL__GIVEN_BACK;
    return (h->slot[i].gen & 1) ? OPOOL__LIVE : OPOOL__FREE;
}

/* The slots drawn: those with records, and those a pool that never grows
 * has still to make. */
static uint32_t opool__slots_drawn(const opool *p) { return p->hot.nslots + opool__unmade(p); }

/* The slots drawn, [lo, hi), of chunk c; empty when c is not grown. */
static void opool__drawn_span(const opool *p, uint32_t c, uint32_t *lo, uint32_t *hi) {
    uint32_t n = opool__slots_drawn(p);
    uint64_t l = opool__chunk_lo(p, c);
    uint32_t h = opool__chunk_hi(p, c);
    *lo = l < n ? (uint32_t)l : n;
    *hi = h < n ? h : n; /* lo <= hi: both clipped to n from lo(c) <= hi(c) */
}

static uint32_t opool__rows(uint32_t slots) {
    return slots / OPOOL__DRAW_COLS + (slots % OPOOL__DRAW_COLS != 0);
}

typedef struct opool__layout {
    uint64_t top[OPOOL__MAX_CHUNKS]; /* y of the first row of each drawn chunk */
    uint32_t drawn;                  /* chunks [0, drawn) have slots */
    uint64_t height;
} opool__layout;

static void opool__lay_out(const opool *p, opool__layout *l) {
    uint64_t y = OPOOL__DRAW_HEAD;
    l->drawn = 0;
    for (uint32_t c = 0; c < p->nchunks; c++) {
        uint32_t lo, hi;
        opool__drawn_span(p, c, &lo, &hi);
        if (lo == hi) break;
        l->top[c] = y + OPOOL__DRAW_LABEL;
        y = l->top[c] + (uint64_t)opool__rows(hi - lo) * OPOOL__DRAW_CELL + OPOOL__DRAW_CELL;
        l->drawn = c + 1;
    }
    if (l->drawn < p->nchunks) y += OPOOL__DRAW_LABEL; /* the line for chunks not grown */
    l->height = y;
}

/* ==== output ============================================================= */

typedef struct opool__svg {
    opool_write_fn write;
    void *ctx;
    bool failed; /* a write came up short: nothing more is written */
    size_t n;
    char buf[4096];
} opool__svg;

static void opool__svg_flush(opool__svg *o) {
    if (!o->failed && o->n > 0 && o->write(o->ctx, o->buf, o->n) != o->n) o->failed = true;
    o->n = 0;
}

/* Append printf-formatted text of at most 255 bytes. */
static void opool__svg_put(opool__svg *o, const char *fmt, ...) {
    if (sizeof o->buf - o->n < 256) opool__svg_flush(o);
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(o->buf + o->n, 256, fmt, ap);
    va_end(ap);
    opool__assert(k >= 0 && k < 256);
    if (k > 0) o->n += (size_t)k < 256 ? (size_t)k : 255;
}

/* Append s as XML text: the markup characters escaped, and any byte outside
 * printable ASCII (a name's bytes are not known to be UTF-8) as '?'. */
static void opool__svg_text(opool__svg *o, const char *s) {
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '&')
            opool__svg_put(o, "&amp;");
        else if (ch == '<')
            opool__svg_put(o, "&lt;");
        else if (ch == '>')
            opool__svg_put(o, "&gt;");
        else if (ch == '"')
            opool__svg_put(o, "&quot;");
        else
            opool__svg_put(o, "%c", ch >= 0x20 && ch < 0x7f ? ch : '?');
    }
}

/* ==== picture ============================================================ */

/* Each state's cell: an 11-pixel square on whole pixels (its colour exact,
 * no edge blended), or for slots given back a dashed outline. */
static const char *const opool__state_cell[OPOOL__NSTATES] = {
    "width=\"11\" height=\"11\" fill=\"#2f9e44\"", /* live: green */
    "width=\"11\" height=\"11\" fill=\"#ced4da\"", /* free: grey */
    "width=\"11\" height=\"11\" fill=\"#c92a2a\"", /* retired: red */
    ("x=\"0.5\" y=\"0.5\" width=\"10\" height=\"10\" fill=\"#ffffff\" stroke=\"#868e96\" "
     "stroke-dasharray=\"2 2\""), /* given back: outline */
};
#define OPOOL__DRAW_PATH_COLOUR "#1c7ed6"

/* A run of slots [lo, hi) of one state, all in one row of chunk c. */
static void opool__svg_run(opool__svg *o, const opool__layout *l, uint32_t c, uint32_t c_lo,
                           uint32_t lo, uint32_t hi, int state) {
    uint32_t col = (lo - c_lo) % OPOOL__DRAW_COLS;
    uint64_t y = l->top[c] + (uint64_t)((lo - c_lo) / OPOOL__DRAW_COLS) * OPOOL__DRAW_CELL;
    opool__svg_put(o, "<rect x=\"%u\" y=\"%llu\" width=\"%u\" height=\"%u\" fill=\"url(#%s)\">",
                   OPOOL__DRAW_X0 + col * OPOOL__DRAW_CELL, (unsigned long long)y,
                   (hi - lo) * OPOOL__DRAW_CELL, OPOOL__DRAW_CELL, opool__state_id[state]);
    if (hi - lo == 1)
        opool__svg_put(o, "<title>slot %lu: %s</title></rect>\n", (unsigned long)lo,
                       opool__state_name[state]);
    else
        opool__svg_put(o, "<title>slots %lu-%lu: %s</title></rect>\n", (unsigned long)lo,
                       (unsigned long)(hi - 1), opool__state_name[state]);
}

static void opool__svg_chunk(opool__svg *o, const opool *p, const opool__layout *l, uint32_t c) {
    const opool__hot *h = &p->hot;
    uint32_t lo, hi;
    opool__drawn_span(p, c, &lo, &hi);
    opool__svg_put(o, "<text x=\"%u\" y=\"%llu\">chunk %lu: slots %lu-%lu</text>\n", OPOOL__DRAW_X0,
                   (unsigned long long)(l->top[c] - 7), (unsigned long)c, (unsigned long)lo,
                   (unsigned long)(hi - 1));
    for (uint32_t i = lo; i < hi;) {
        int state = opool__state_of(h, i);
        uint32_t row_end = i + (OPOOL__DRAW_COLS - (i - lo) % OPOOL__DRAW_COLS);
        uint32_t j = i + 1;
        while (j < hi && j < row_end && opool__state_of(h, j) == state) j++;
        opool__svg_run(o, l, c, lo, i, j, state);
        i = j;
    }
}

/* The live list's first positions as one line from cell centre to cell
 * centre, position 0 marked with a ring (none without a live list). */
static void opool__svg_path(opool__svg *o, const opool *p, const opool__layout *l) {
    const opool__hot *h = &p->hot;
    uint32_t n = h->count < OPOOL__DRAW_PATH ? h->count : OPOOL__DRAW_PATH;
    if (n == 0 || h->roster == NULL) return;
    opool__svg_put(o, "<polyline class=\"order\" fill=\"none\" stroke=\"" OPOOL__DRAW_PATH_COLOUR
                      "\" stroke-width=\"1\" stroke-linejoin=\"round\" points=\"");
    unsigned long x0 = 0;
    unsigned long long y0 = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = h->roster[k];
        uint32_t c = i < h->first ? 0 : opool__chunk_of(h, i);
        uint32_t at = i - (uint32_t)opool__chunk_lo(p, c);
        unsigned long x = OPOOL__DRAW_X0 + (at % OPOOL__DRAW_COLS) * OPOOL__DRAW_CELL + 5;
        unsigned long long y = l->top[c] + (uint64_t)(at / OPOOL__DRAW_COLS) * OPOOL__DRAW_CELL + 5;
        opool__svg_put(o, "%s%lu.5,%llu.5", k ? " " : "", x, y);
        if (k == 0) x0 = x, y0 = y;
    }
    opool__svg_put(o,
                   "\"/>\n<circle cx=\"%lu.5\" cy=\"%llu.5\" r=\"4\" fill=\"none\" "
                   "stroke=\"" OPOOL__DRAW_PATH_COLOUR "\" stroke-width=\"1.5\"/>\n",
                   x0, y0);
}

static void opool__svg_head(opool__svg *o, const opool *p, const opool__layout *l,
                            const uint32_t *tally) {
    const opool__hot *h = &p->hot;
    unsigned width = 2 * OPOOL__DRAW_X0 + OPOOL__DRAW_COLS * OPOOL__DRAW_CELL;
    opool__svg_put(o,
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%llu\" "
                   "viewBox=\"0 0 %u %llu\" font-family=\"sans-serif\" font-size=\"12\">\n",
                   width, (unsigned long long)l->height, width, (unsigned long long)l->height);
    opool__svg_put(o, "<defs>\n");
    for (int s = 0; s < OPOOL__NSTATES; s++)
        opool__svg_put(o,
                       "<pattern id=\"%s\" width=\"%u\" height=\"%u\" "
                       "patternUnits=\"userSpaceOnUse\"><rect %s/></pattern>\n",
                       opool__state_id[s], OPOOL__DRAW_CELL, OPOOL__DRAW_CELL,
                       opool__state_cell[s]);
    opool__svg_put(o, "</defs>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n");
    opool__svg_put(o, "<text x=\"%u\" y=\"20\" font-size=\"14\">pool ", OPOOL__DRAW_X0);
    if (p->desc.name) {
        opool__svg_put(o, "\"");
        opool__svg_text(o, p->desc.name);
        opool__svg_put(o, "\"");
    } else {
        opool__svg_put(o, "(unnamed)");
    }
    opool__svg_put(o,
                   ": %lu live, capacity %lu, high water %lu, %lu slot records, %lu of %lu chunks "
                   "grown</text>\n",
                   (unsigned long)h->count, (unsigned long)opool_capacity(p),
                   (unsigned long)h->high_water, (unsigned long)opool__slots_drawn(p),
                   (unsigned long)l->drawn, (unsigned long)p->nchunks);
    /* The legend: a swatch and a count per state, then the path's key. */
    unsigned x = OPOOL__DRAW_X0;
    for (int s = 0; s < OPOOL__NSTATES; s++) {
        opool__svg_put(o,
                       "<rect x=\"%u\" y=\"36\" width=\"%u\" height=\"%u\" fill=\"url(#%s)\"/>"
                       "<text class=\"tally\" x=\"%u\" y=\"46\">%s %lu</text>\n",
                       x, OPOOL__DRAW_CELL, OPOOL__DRAW_CELL, opool__state_id[s], x + 16,
                       opool__state_name[s], (unsigned long)tally[s]);
        x += 132;
    }
    opool__svg_put(o,
                   "<path d=\"M%u 42.5h24\" stroke=\"" OPOOL__DRAW_PATH_COLOUR
                   "\" stroke-width=\"1.5\"/><text x=\"%u\" y=\"46\">live list order",
                   x, x + 30);
    if (h->count > OPOOL__DRAW_PATH)
        opool__svg_put(o, " (first %u of %lu)", OPOOL__DRAW_PATH, (unsigned long)h->count);
    opool__svg_put(o, "</text>\n");
}

opool_status opool_draw_svg(const opool *p, opool_write_fn write, void *ctx) {
    if (p == NULL || write == NULL) return OPOOL_EINVAL;
    const opool__hot *h = &p->hot;
    opool__layout l;
    opool__lay_out(p, &l);
    uint32_t tally[OPOOL__NSTATES] = {0};
    for (uint32_t i = 0, n = opool__slots_drawn(p); i < n; i++) tally[opool__state_of(h, i)]++;

    opool__svg o;
    o.write = write, o.ctx = ctx, o.failed = false, o.n = 0;
    opool__svg_head(&o, p, &l, tally);
    for (uint32_t c = 0; c < l.drawn; c++) opool__svg_chunk(&o, p, &l, c);
    if (l.drawn < p->nchunks) {
        uint64_t lo = opool__chunk_lo(p, l.drawn);
        opool__svg_put(&o,
                       "<text x=\"%u\" y=\"%llu\" fill=\"#868e96\">chunks %lu-%lu (slots "
                       "%llu-%lu) not grown</text>\n",
                       OPOOL__DRAW_X0, (unsigned long long)(l.height - 12), (unsigned long)l.drawn,
                       (unsigned long)(p->nchunks - 1), (unsigned long long)lo,
                       (unsigned long)(p->max_capacity - 1));
    }
    opool__svg_path(&o, p, &l);
    opool__svg_put(&o, "</svg>\n");
    opool__svg_flush(&o);
    return o.failed ? OPOOL_EIO : OPOOL_OK;
}
