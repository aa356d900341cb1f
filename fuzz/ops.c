/*
 * ops.c -- fuzz target: a pool configuration and a sequence of operations
 * decoded from the input, run on a real pool and on the reference model
 * (tests/model.h) side by side. After every operation the results must
 * agree (handles, NULL-ness, statuses, callbacks, reports), the pool must
 * pass opool__check, and its whole observable state (count, capacity, live
 * roster, statistics, and through the private layout the free stack and
 * every generation) must be the model's.
 *
 * Input layout (fuzz/ops_codes.h; every read past the end gives zeros, so
 * any input is valid):
 *   byte 0     policy (% 3); bits 2-7: ZERO, POISON, RETIRE_ON_WRAP, init, fini, allocator
 *   byte 1     capacity           byte 2  max_capacity
 *   byte 3     object size        byte 4  object alignment
 *   byte 5     salt kind (then 4 bytes of salt for kind >= 8)
 *   byte 6     create (even) or create_in at offset byte/2 % 64 (odd)
 *   then ops:  one opcode byte each (% OPS_COUNT), followed by its arguments
 *
 * Every public function of the core is called: create, create_in,
 * required_bytes, destroy, alloc (with and without out), alloc_at (odd,
 * even, huge, retiring generations; indices past the end), free (live,
 * stale, forged, twice), free_object (live, interior, free, foreign, NULL),
 * get, valid, at, handle_of, clear, count, capacity, live_handle,
 * live_object, sort, shrink, get_stats, status_str, iterate-and-free, NULL
 * pools, invalid descs, and allocation failures during growth; retain,
 * handle_at, high_water, handle_compact and handle_expand.
 */
#include "fuzz.h"
#include "ops_codes.h"

#include "opool.h"
#include "opool_internal.h"
#include "support/opool_check.h"
#include "../tests/loop_check.h"
#include "../tests/model.h"
#include "../tests/stream.h"

#define STALE_RING 64
#define MAX_REPORTS 16
#define MAX_OPS 4096
#define MAX_POOL_BYTES ((size_t)4 << 20) /* objects of one pool: keeps runs fast */

/* ---- the harness -------------------------------------------------------- */

typedef struct fz {
    fuzz_input in;
    opool *p;
    model m;
    opool_desc d;
    size_t size, align;
    fuzz_mem mem;
    unsigned char *buf; /* create_in's buffer */

    unsigned char **addr; /* [m.max] object address of slot i, NULL while unknown */

    /* callbacks seen during the current operation */
    void **fini;
    uint32_t nfini;
    uint32_t ninit;
    model_report reports[MAX_REPORTS];
    uint32_t nreports;
    uint32_t evict_calls;
    uint64_t evict_choice; /* read before each alloc: the victim both sides pick */

    uint64_t stale[STALE_RING];
    uint32_t nstale, stale_next;
    uint32_t op;
    const char *op_name;

    loop_check loop;
    bool in_loop; /* inside op_iterate's loop, at index loop_index */
    uint32_t loop_index;

    uint64_t keep_seed; /* op_retain: keep(h) is a hash of h and this */
    uint32_t keep_pct, keep_calls;
} fz;

static fz *current; /* for the failure message */

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "op %u (%s): ", current ? current->op : 0,                                 \
                current && current->op_name ? current->op_name : "?");                             \
        FUZZ_FAIL(__VA_ARGS__);                                                                    \
    } while (0)

#define EXPECT_EQ(a, b)                                                                            \
    do {                                                                                           \
        unsigned long long x_ = (unsigned long long)(a), y_ = (unsigned long long)(b);             \
        if (x_ != y_) FAIL("%s == %s: pool 0x%llx, model 0x%llx", #a, #b, x_, y_);                 \
    } while (0)

static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* The byte pattern of the object with handle bits. */
static unsigned char pattern_byte(uint64_t x, size_t k) {
    return (unsigned char)((x >> ((k & 7) * 8)) + k);
}

static void write_pattern(fz *f, void *obj, uint64_t bits) {
    unsigned char *b = (unsigned char *)obj;
    uint64_t x = mix64(bits);
    for (size_t k = 0; k < f->size; k++) b[k] = pattern_byte(x, k);
}

/* The object's bytes are the ones written at its alloc (the first `limit`). */
static void check_pattern(fz *f, const void *obj, uint64_t bits, size_t limit, const char *where) {
    const unsigned char *b = (const unsigned char *)obj;
    uint64_t x = mix64(bits);
    size_t n = f->size < limit ? f->size : limit;
    for (size_t k = 0; k < n; k++)
        if (b[k] != pattern_byte(x, k))
            FAIL("%s: object of handle 0x%016llx at %p changed at byte %zu", where,
                 (unsigned long long)bits, obj, k);
}

static void stale_push(fz *f, uint64_t bits) {
    f->stale[f->stale_next] = bits;
    f->stale_next = (f->stale_next + 1) % STALE_RING;
    if (f->nstale < STALE_RING) f->nstale++;
}

/* The victim both the pool's and the model's evict callback choose. */
static uint64_t pick_victim(const fz *f, uint32_t count, uint64_t live_at_pos) {
    uint64_t c = f->evict_choice;
    switch (c & 7) {
    case 0:
        return 0;
    case 1:
        return f->nstale ? f->stale[(c >> 8) % f->nstale] : 0;
    case 2:
        return (c >> 8) | (uint64_t)1 << 32; /* forged */
    default:
        return count ? live_at_pos : 0;
    }
}

static uint32_t victim_pos(const fz *f, uint32_t count) {
    return count ? (uint32_t)((f->evict_choice >> 8) % count) : 0;
}

/* ---- callbacks ---------------------------------------------------------- */

static void cb_init(void *obj, void *user) {
    fz *f = (fz *)user;
    f->ninit++;
    if (f->d.flags & OPOOL_ZERO) {
        const unsigned char *b = (const unsigned char *)obj;
        for (size_t k = 0; k < f->size; k++)
            if (b[k] != 0) FAIL("init saw non-zero byte %zu with OPOOL_ZERO", k);
    }
    memset(obj, 0xC3, f->size);
}

static void cb_fini(void *obj, void *user) {
    fz *f = (fz *)user;
    if (f->nfini < f->m.max) f->fini[f->nfini] = obj;
    f->nfini++;
}

static void cb_report(opool *p, opool_status what, opool_handle h, void *user) {
    fz *f = (fz *)user;
    if (f->p != NULL && p != f->p) FAIL("report for another pool");
    if (f->nreports < MAX_REPORTS) f->reports[f->nreports] = (model_report){what, h.bits};
    f->nreports++;
}

static opool_handle cb_evict(opool *p, void *user) {
    fz *f = (fz *)user;
    f->evict_calls++;
    opool_stats st; /* (reading the pool's list would end the undo of its last free) */
    opool_get_stats(p, &st);
    uint32_t count = st.count;
    opool_handle v;
    /* the model's list (the pool's, checked elsewhere), as the model's evict will see it */
    uint64_t at = model_live_handle(&f->m, victim_pos(f, count));
    v.bits = pick_victim(f, count, at);
    void *obj = opool_get(p, v);
    if (obj) check_pattern(f, obj, v.bits, SIZE_MAX, "evict victim");
    if (obj && f->in_loop && !loop_before_free(&f->loop, p, f->loop_index, v))
        FAIL("iteration promise (eviction): %s", f->loop.why);
    return v;
}

static uint64_t model_evict(const model *m, void *user) {
    fz *f = (fz *)user;
    return pick_victim(f, m->count, model_live_handle(m, victim_pos(f, m->count)));
}

/* ---- comparing ---------------------------------------------------------- */

static void begin(fz *f, const char *name) {
    f->op_name = name;
    f->nfini = f->ninit = f->nreports = f->evict_calls = 0;
    model_begin(&f->m);
}

static int cmp_ptr(const void *a, const void *b) {
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return (x > y) - (x < y);
}

/* The callbacks the operation made are the model's. */
static void check_callbacks(fz *f, bool fini_any_order) {
    model *m = &f->m;
    EXPECT_EQ(f->nreports, m->nreports);
    for (uint32_t k = 0; k < f->nreports && k < MAX_REPORTS && k < MODEL_MAX_REPORTS; k++) {
        EXPECT_EQ(f->reports[k].what, m->reports[k].what);
        EXPECT_EQ(f->reports[k].handle, m->reports[k].handle);
    }
    EXPECT_EQ(f->evict_calls, m->evict_calls);
    if (f->d.init) EXPECT_EQ(f->ninit, m->ninit);
    if (!f->d.fini) return;
    EXPECT_EQ(f->nfini, m->nfini);
    if (m->nfini == 0) return;
    void **want = (void **)malloc(m->nfini * sizeof *want);
    if (!want) abort();
    for (uint32_t k = 0; k < m->nfini; k++) want[k] = f->addr[m->fini_log[k]];
    if (fini_any_order) {
        qsort(want, m->nfini, sizeof *want, cmp_ptr);
        qsort(f->fini, f->nfini, sizeof *f->fini, cmp_ptr);
    }
    for (uint32_t k = 0; k < m->nfini; k++)
        if (want[k] != f->fini[k])
            FAIL("fini %u: object %p, model says slot %u at %p", k, f->fini[k], m->fini_log[k],
                 want[k]);
    free(want);
}

/* What the model freed is stale now. */
static void note_freed(fz *f) {
    for (uint32_t k = 0; k < f->m.nfini && k < 8; k++) {
        uint32_t i = f->m.fini_log[k];
        stale_push(f, model_bits(f->m.gen[i] - 1, i));
    }
}

/* A fresh object at slot index with handle bits: address, init/ZERO, pattern. */
static void check_new_object(fz *f, unsigned char *obj, uint64_t bits) {
    uint32_t i = (uint32_t)bits;
    if ((uintptr_t)obj % f->align != 0) FAIL("object %p not aligned to %zu", (void *)obj, f->align);
    if (f->addr[i] == NULL)
        f->addr[i] = obj;
    else if (f->addr[i] != obj)
        FAIL("slot %u moved from %p to %p", i, (void *)f->addr[i], (void *)obj);
    opool_handle hh = {bits};
    EXPECT_EQ((uintptr_t)opool_get(f->p, hh), (uintptr_t)obj);
    if (f->d.init) {
        for (size_t k = 0; k < f->size; k++)
            if (obj[k] != 0xC3) FAIL("init's bytes not there after alloc");
    } else if (f->d.flags & OPOOL_ZERO) {
        for (size_t k = 0; k < f->size; k++)
            if (obj[k] != 0) FAIL("OPOOL_ZERO object has non-zero byte %zu", k);
    }
    write_pattern(f, obj, bits);
}

/* The pool's whole state is the model's, and its invariants hold. */
static void full_check(fz *f) {
    model *m = &f->m;
    opool *p = f->p;
    char why[256];
    if (!opool__check(p, why, sizeof why)) FAIL("opool__check: %s", why);

    EXPECT_EQ(opool_count(p), model_loop_start(m));
    EXPECT_EQ(opool_capacity(p), model_capacity(m));
    for (uint32_t k = 0; k < m->count && !model_lists(m); k++) { /* nothing to iterate */
        EXPECT_EQ(opool_live_handle(p, k).bits, 0);
        EXPECT_EQ((uintptr_t)opool_live_object(p, k), 0);
    }
    for (uint32_t k = 0; k < m->count && model_lists(m); k++) {
        opool_handle lh = opool_live_handle(p, k);
        EXPECT_EQ(lh.bits, model_live_handle(m, k));
        unsigned char *obj = (unsigned char *)opool_live_object(p, k);
        EXPECT_EQ((uintptr_t)obj, (uintptr_t)f->addr[model_live_slot(m, k)]);
        check_pattern(f, obj, lh.bits, 16, "full check");
    }
    EXPECT_EQ(opool_live_handle(p, m->count).bits, 0);
    EXPECT_EQ((uintptr_t)opool_live_object(p, m->count), 0);
    EXPECT_EQ(opool_live_handle(p, UINT32_MAX).bits, 0);

    opool_stats s, w;
    opool_get_stats(p, &s);
    model_stats(m, &w);
    EXPECT_EQ(s.version, w.version);
    EXPECT_EQ(s.capacity, w.capacity);
    EXPECT_EQ(s.max_capacity, w.max_capacity);
    EXPECT_EQ(s.count, w.count);
    EXPECT_EQ(s.high_water, w.high_water);
    EXPECT_EQ(opool_high_water(p), w.high_water);
    EXPECT_EQ(s.retired, w.retired);
    EXPECT_EQ(s.allocs, w.allocs);
    EXPECT_EQ(s.frees, w.frees);
    EXPECT_EQ(s.failed_allocs, w.failed_allocs);
    EXPECT_EQ(s.rejected_handles, w.rejected_handles);
    EXPECT_EQ(s.evictions, w.evictions);
    EXPECT_EQ(s.grows, w.grows);
    if (s.bytes == 0) FAIL("stats.bytes is 0");

    /* the private layout: the free stack and every generation */
    const opool__hot *c = (const opool__hot *)(const void *)p;
    EXPECT_EQ(c->nslots, model_records(m));
    EXPECT_EQ(c->limit, m->limit);
    if (model_lists(m)) {
        for (uint32_t k = m->count; k < m->limit; k++) EXPECT_EQ(c->roster[k], m->roster[k]);
    } else { /* the chain, in the free stack's order (opool__check: it ends there) */
        uint32_t i = c->chain;
        for (uint32_t k = m->count; k < m->limit; k++, i = c->slot[i].pos)
            EXPECT_EQ(i, m->roster[k]);
    }
    for (uint32_t i = 0; i < m->nslots; i++) {
        if (i < c->nslots) EXPECT_EQ(c->slot[i].gen, m->gen[i]); /* (the records made) */
        if (m->pos[i] != MODEL_NOPOS && model_lists(m)) EXPECT_EQ(c->slot[i].pos, m->pos[i]);
        void *want = model_is_live(m, i) ? f->addr[i] : NULL;
        EXPECT_EQ((uintptr_t)opool_at(p, i), (uintptr_t)want);
        EXPECT_EQ(opool_handle_at(p, i).bits, model_handle_at(m, i));
        if (f->addr[i] != NULL) {
            uint64_t hb = model_is_live(m, i) ? model_bits(m->gen[i], i) : 0;
            EXPECT_EQ(opool_handle_of(p, f->addr[i]).bits, hb);
        }
    }
    EXPECT_EQ((uintptr_t)opool_at(p, m->nslots), 0);
}

/* ---- operations --------------------------------------------------------- */

static void op_alloc(fz *f) {
    begin(f, "alloc");
    uint8_t b = fuzz_u8(&f->in);
    f->evict_choice = (uint64_t)b | (uint64_t)fuzz_u8(&f->in) << 8;
    bool with_out = (b & 0x80) == 0;
    opool_handle out = {0x1234};
    unsigned char *obj = (unsigned char *)opool_alloc(f->p, with_out ? &out : NULL);
    uint64_t want;
    bool ok = model_alloc(&f->m, &want);
    EXPECT_EQ(obj != NULL, ok);
    if (with_out) EXPECT_EQ(out.bits, want);
    check_callbacks(f, false);
    note_freed(f);
    if (obj) check_new_object(f, obj, want);
}

/* A handle of any kind: live, stale, forged, even, out of range, all-ones. */
static uint64_t random_handle(fz *f) {
    model *m = &f->m;
    uint8_t kind = fuzz_u8(&f->in);
    switch (kind % 10) {
    case 0:
        return model_live_handle(m, fuzz_u16(&f->in) % (m->count + 1));
    case 1:
    case 2:
        return f->nstale ? f->stale[fuzz_u8(&f->in) % f->nstale] : 0;
    case 3:
        return model_bits(fuzz_u32(&f->in) | 1, fuzz_u16(&f->in) % (m->max + 2));
    case 4:
        return model_bits(fuzz_u32(&f->in) & ~1u, fuzz_u16(&f->in) % (m->max + 2));
    case 5: {
        uint32_t young = m->gen0 + 1 + 2 * (fuzz_u8(&f->in) % 3);
        return model_bits(young, fuzz_u16(&f->in) % (m->max + 2));
    }
    case 6:
        return (kind & 0x10) ? UINT64_MAX : model_bits(m->gen0 + 1, UINT32_MAX);
    case 7:
        return 0;
    case 8:
        return fuzz_u64(&f->in);
    default: {
        uint32_t i = fuzz_u16(&f->in) % m->max;
        return model_bits(m->gen[i] | 1, i); /* right index, maybe right generation */
    }
    }
}

/* model_alloc_at when every allocation fails: a slot without storage stays
 * out of reach (the pool cannot grow). */
static bool model_alloc_at_nomem(model *m, uint64_t h) {
    uint32_t i = (uint32_t)h, g = (uint32_t)(h >> 32);
    if ((g & 1) == 0 || i >= m->max) return model_alloc_at(m, h); /* reported so */
    /* a chunk to grow fails, not reported; slots to make need no memory */
    if (i < m->made && !model_has_storage(m, i)) return false;
    return model_alloc_at(m, h);
}

static void op_alloc_at(fz *f, bool nomem) {
    begin(f, nomem ? "alloc_at (no memory)" : "alloc_at");
    model *m = &f->m;
    uint64_t want;
    uint8_t kind = fuzz_u8(&f->in);
    uint32_t i = fuzz_u16(&f->in) % m->max;
    switch (kind % 12) {
    case 0:
        want = model_live_handle(m, fuzz_u16(&f->in) % (m->count + 1));
        break;
    case 1:
        want = model_bits(m->gen[i] + 1, i);
        break; /* its next generation */
    case 2:
        want = model_bits(m->gen0 - 1, i);
        break; /* the last one: freeing retires */
    case 3:
        want = model_bits(fuzz_u32(&f->in) | 1, i);
        break;
    case 4:
        want = f->nstale ? f->stale[fuzz_u8(&f->in) % f->nstale] : 0;
        break;
    case 5:
        want = model_bits(m->gen0 + 1, m->max + fuzz_u8(&f->in) % 3);
        break;
    case 6:
        want = model_bits(m->gen0 + 2, i);
        break; /* even */
    case 7:
        want = model_bits(UINT32_MAX, i);
        break; /* the largest odd generation */
    case 8:
        want = model_bits(UINT32_MAX - 1, i);
        break; /* the largest even one */
    case 9:
        want = model_bits(fuzz_u32(&f->in) | 1, UINT32_MAX - fuzz_u8(&f->in));
        break;
    case 10:
        want = model_bits(m->gen[i] + 3, i);
        break; /* skips one */
    default:
        want = random_handle(f);
        break;
    }
    opool_handle hh = {want};
    f->mem.fail = nomem;
    unsigned char *obj = (unsigned char *)opool_alloc_at(f->p, hh);
    f->mem.fail = false;
    bool ok = nomem ? model_alloc_at_nomem(m, want) : model_alloc_at(m, want);
    EXPECT_EQ(obj != NULL, ok);
    check_callbacks(f, false);
    if (obj) check_new_object(f, obj, want);
}

/* alloc while every allocation fails: a growable pool cannot grow, so it
 * behaves as OPOOL_FULL_FAIL would. */
static void op_alloc_nomem(fz *f) {
    begin(f, "alloc (no memory)");
    f->evict_choice = fuzz_u16(&f->in);
    opool_handle out;
    f->mem.fail = true;
    unsigned char *obj = (unsigned char *)opool_alloc(f->p, &out);
    f->mem.fail = false;
    opool_full_policy was = f->m.policy;
    if (was == OPOOL_FULL_GROW) f->m.policy = OPOOL_FULL_FAIL;
    uint64_t want;
    bool ok = model_alloc(&f->m, &want);
    f->m.policy = was;
    EXPECT_EQ(obj != NULL, ok);
    EXPECT_EQ(out.bits, want);
    check_callbacks(f, false);
    note_freed(f);
    if (obj) check_new_object(f, obj, want);
}

static void op_free_live(fz *f) {
    model *m = &f->m;
    uint16_t k = fuzz_u16(&f->in);
    if (m->count == 0) return;
    begin(f, "free live");
    uint64_t bits = model_live_handle(m, k % m->count);
    opool_handle hh = {bits};
    void *obj = opool_get(f->p, hh);
    EXPECT_EQ((uintptr_t)obj, (uintptr_t)f->addr[(uint32_t)bits]);
    check_pattern(f, obj, bits, SIZE_MAX, "before free");
    EXPECT_EQ(opool_free(f->p, hh), model_free(m, bits));
    check_callbacks(f, false);
    note_freed(f);
}

static void op_free_twice(fz *f) {
    model *m = &f->m;
    uint16_t k = fuzz_u16(&f->in);
    if (m->count == 0) return;
    begin(f, "free twice");
    opool_handle hh = {model_live_handle(m, k % m->count)};
    EXPECT_EQ(opool_free(f->p, hh), model_free(m, hh.bits));
    check_callbacks(f, false);
    note_freed(f);
    begin(f, "free twice (second)");
    EXPECT_EQ(opool_free(f->p, hh), OPOOL_ESTALE);
    EXPECT_EQ(model_free(m, hh.bits), OPOOL_ESTALE);
    EXPECT_EQ((uintptr_t)opool_get(f->p, hh), 0);
    check_callbacks(f, false);
}

static void op_free_bad(fz *f) {
    begin(f, "free bad");
    uint64_t bits = random_handle(f);
    opool_handle hh = {bits};
    if (model_get(&f->m, bits))
        check_pattern(f, opool_get(f->p, hh), bits, SIZE_MAX, "before free");
    EXPECT_EQ(opool_free(f->p, hh), model_free(&f->m, bits));
    check_callbacks(f, false);
    note_freed(f);
}

static void op_free_object(fz *f) {
    model *m = &f->m;
    begin(f, "free_object");
    unsigned char local[8];
    unsigned char *ptr = NULL;
    uint32_t index = MODEL_NOPOS;
    uint8_t kind = fuzz_u8(&f->in);
    uint16_t arg = fuzz_u16(&f->in);
    uint32_t known = arg % m->max;
    const opool__hot *c = (const opool__hot *)(const void *)f->p;
    switch (kind % 8) {
    case 0:
    case 1:
    case 2: /* a live object */
        if (m->count == 0) break;
        index = model_live_slot(m, arg % m->count);
        ptr = f->addr[index];
        check_pattern(f, ptr, model_bits(m->gen[index], index), SIZE_MAX, "before free_object");
        break;
    case 3: /* interior */
        if (m->count == 0 || f->size < 2) break;
        ptr = f->addr[model_live_slot(m, arg % m->count)] + 1 + kind / 8 % (f->size - 1);
        break;
    case 4: /* a slot that had an object: live or free */
        if (f->addr[known] == NULL) break;
        index = known;
        ptr = f->addr[index];
        if (model_is_live(m, index))
            check_pattern(f, ptr, model_bits(m->gen[index], index), SIZE_MAX, "before free_object");
        break;
    case 5: /* just past the end of chunk 0, or just before it */
        ptr = (unsigned char *)((uintptr_t)c->base[0] + (kind & 8 ? (uintptr_t)c->first * c->stride
                                                                  : (uintptr_t)0 - c->stride));
        break;
    case 6:
        ptr = local;
        break; /* foreign */
    default:
        break; /* NULL */
    }
    EXPECT_EQ(opool_free_object(f->p, ptr), model_free_object(m, index));
    check_callbacks(f, false);
    note_freed(f);
}

static void op_lookup(fz *f) {
    model *m = &f->m;
    begin(f, "lookup");
    uint64_t bits = random_handle(f);
    opool_handle hh = {bits};
    bool live = model_get(m, bits);
    void *want = live ? f->addr[(uint32_t)bits] : NULL;
    EXPECT_EQ((uintptr_t)opool_get(f->p, hh), (uintptr_t)want);
    EXPECT_EQ(opool_valid(f->p, hh), live);
    uint32_t i = fuzz_u32(&f->in);
    if (i % 4 != 0) i %= m->max + 2;
    want = model_at(m, i) ? f->addr[i] : NULL;
    EXPECT_EQ((uintptr_t)opool_at(f->p, i), (uintptr_t)want);
    if (live && f->size > 1) EXPECT_EQ(opool_handle_of(f->p, f->addr[(uint32_t)bits] + 1).bits, 0);
    unsigned char local;
    EXPECT_EQ(opool_handle_of(f->p, &local).bits, 0);
    EXPECT_EQ(opool_handle_of(f->p, NULL).bits, 0);
    check_callbacks(f, false);
}

static void op_clear(fz *f) {
    begin(f, "clear");
    opool_clear(f->p);
    model_clear(&f->m);
    check_callbacks(f, true);
    note_freed(f);
}

static void op_sort(fz *f) {
    begin(f, "sort");
    opool_sort(f->p);
    model_sort(&f->m);
    check_callbacks(f, false);
}

/* opool_draw_svg after a shrink (every slot state may be there): a whole
 * document whose legend counts what the model holds. */
static void check_picture(fz *f) {
    model *m = &f->m;
    stream s = stream_new();
    FUZZ_CHECK_EQ(opool_draw_svg(f->p, stream_write, &s), OPOOL_OK);
    FUZZ_CHECK(s.size > 7 && memcmp(s.data + s.size - 7, "</svg>\n", 7) == 0);
    uint32_t back = 0;
    for (uint32_t i = 0; i < m->nslots; i++) /* (a slot not made yet is free) */
        back += i < m->made && !m->retired[i] && !model_has_storage(m, i);
    char want[96];
    snprintf(want, sizeof want, ">live %u</text>", m->count);
    stream_write(&s, "", 1);
    FUZZ_CHECK(strstr((const char *)s.data, want) != NULL);
    snprintf(want, sizeof want, ">retired %u</text>", m->retired_count);
    FUZZ_CHECK(strstr((const char *)s.data, want) != NULL);
    snprintf(want, sizeof want, ">given back %u</text>", back);
    FUZZ_CHECK(strstr((const char *)s.data, want) != NULL);
    stream_free(&s);
}

static void op_shrink(fz *f) {
    model *m = &f->m;
    begin(f, "shrink");
    bool was[MODEL_MAX_CHUNKS];
    memcpy(was, m->present, sizeof was);
    EXPECT_EQ(opool_shrink(f->p), model_shrink(m));
    check_callbacks(f, false);
    for (uint32_t c = 0; c < m->nchunks; c++)
        if (was[c] && !m->present[c])
            for (uint32_t i = m->lo[c]; i < m->hi[c]; i++) f->addr[i] = NULL; /* storage gone */
    if (m->nslots <= 4096) check_picture(f);
}

/* A free inside the loop: the promise's bookkeeping, then the free on both. */
static void loop_free(fz *f, uint32_t i, uint64_t bits) {
    opool_handle hh = {bits};
    if (!loop_before_free(&f->loop, f->p, i, hh)) FAIL("iteration promise: %s", f->loop.why);
    EXPECT_EQ(opool_free(f->p, hh), model_free(&f->m, bits));
    check_callbacks(f, false);
    note_freed(f);
}

/* The header's loop, backwards from opool_count: frees the current object,
 * frees others (visited or not) and allocates (growing, evicting), at rates
 * from the input. Each step matches the model; the loop as a whole keeps the
 * header's iteration promise (tests/loop_check.h). */
static void op_iterate(fz *f) {
    model *m = &f->m;
    uint8_t free_pct = fuzz_u8(&f->in) % 101;
    uint8_t a = fuzz_u8(&f->in);
    uint8_t alloc_pct = a % 4 == 0 ? 20 : a % 4 == 1 ? 60 : 0;
    uint8_t other_pct = fuzz_u8(&f->in) % 4 == 0 ? 25 : 0;
    uint64_t r = fuzz_u32(&f->in) | 1;
    begin(f, "iterate");
    if (!model_lists(m)) { /* refused, loudly: one report, no body */
        uint32_t bodies = 0;
        OPOOL_FOREACH(f->p, unsigned char, obj, h) bodies++;
        model_refuse_loop(m);
        check_callbacks(f, false);
        EXPECT_EQ(bodies, 0);
        return;
    }
    if (!loop_begin(&f->loop, f->p)) FAIL("iteration promise: %s", f->loop.why);
    f->in_loop = true;
    for (uint32_t i = (model_loop_start(m), opool_count(f->p)); i-- > 0;) {
        begin(f, "iterate");
        f->loop_index = i;
        EXPECT_EQ(opool_count(f->p), model_loop_start(m));
        if (i >= m->count) { /* frees of other objects took the end away */
            model_read_past_end(m);
            EXPECT_EQ(opool_live_handle(f->p, i).bits, 0);
            EXPECT_EQ((uintptr_t)opool_live_object(f->p, i), 0);
            continue;
        }
        opool_handle lh = opool_live_handle(f->p, i);
        unsigned char *obj = (unsigned char *)opool_live_object(f->p, i);
        EXPECT_EQ(lh.bits, model_live_handle(m, i));
        EXPECT_EQ((uintptr_t)obj, (uintptr_t)f->addr[model_live_slot(m, i)]);
        if (!loop_visit(&f->loop, f->p, i, lh)) FAIL("iteration promise: %s", f->loop.why);
        check_pattern(f, obj, lh.bits, SIZE_MAX, "iteration");
        r = mix64(r);
        if (r % 100 < free_pct) {
            begin(f, "iterate: free current");
            loop_free(f, i, lh.bits);
        }
        if (m->count > 0 && (r >> 40) % 100 < other_pct) {
            begin(f, "iterate: free another");
            loop_free(f, i, model_live_handle(m, (uint32_t)(r >> 48) % m->count));
        }
        if ((r >> 8) % 100 < alloc_pct) {
            begin(f, "iterate: alloc");
            f->evict_choice = r >> 16;
            opool_handle out;
            unsigned char *o = (unsigned char *)opool_alloc(f->p, &out);
            uint64_t want;
            bool ok = model_alloc(m, &want);
            EXPECT_EQ(o != NULL, ok);
            EXPECT_EQ(out.bits, want);
            check_callbacks(f, false);
            note_freed(f);
            if (o) check_new_object(f, o, want);
            if (o && !loop_after_alloc(&f->loop, f->p, i, out))
                FAIL("iteration promise: %s", f->loop.why);
        }
    }
    f->in_loop = false;
    if (!loop_end(&f->loop)) FAIL("iteration promise: %s", f->loop.why);
}

/* Allocate or free many at once: reaches full pools and growth quickly. */
static void op_burst(fz *f) {
    uint8_t b = fuzz_u8(&f->in);
    uint32_t n = 1 + b % 64;
    for (uint32_t k = 0; k < n; k++) {
        if (b & 0x80) {
            if (f->m.count == 0) break;
            begin(f, "burst free");
            uint64_t bits = model_live_handle(&f->m, f->m.count - 1 - (k * 7) % f->m.count);
            opool_handle hh = {bits};
            EXPECT_EQ(opool_free(f->p, hh), model_free(&f->m, bits));
            check_callbacks(f, false);
            note_freed(f);
        } else {
            begin(f, "burst alloc");
            f->evict_choice = 3 + k * 0x100;
            opool_handle out;
            unsigned char *obj = (unsigned char *)opool_alloc(f->p, &out);
            uint64_t want;
            bool ok = model_alloc(&f->m, &want);
            EXPECT_EQ(obj != NULL, ok);
            EXPECT_EQ(out.bits, want);
            check_callbacks(f, false);
            note_freed(f);
            if (obj) check_new_object(f, obj, want);
        }
    }
}

/* Every function with a NULL pool, and out-of-range queries. */
static void op_nulls(fz *f) {
    begin(f, "NULL pool");
    opool_handle h = {fuzz_u64(&f->in)};
    opool_handle out = {0x5555};
    FUZZ_CHECK(opool_alloc(NULL, &out) == NULL);
    FUZZ_CHECK_EQ(out.bits, 0);
    FUZZ_CHECK(opool_alloc(NULL, NULL) == NULL);
    FUZZ_CHECK(opool_alloc_at(NULL, h) == NULL);
    FUZZ_CHECK_EQ(opool_free(NULL, h), OPOOL_EINVAL);
    FUZZ_CHECK_EQ(opool_free_object(NULL, &out), OPOOL_EINVAL);
    FUZZ_CHECK(opool_get(NULL, h) == NULL);
    FUZZ_CHECK(!opool_valid(NULL, h));
    FUZZ_CHECK_EQ(opool_handle_of(NULL, &out).bits, 0);
    FUZZ_CHECK(opool_at(NULL, (uint32_t)h.bits) == NULL);
    FUZZ_CHECK_EQ(opool_count(NULL), 0);
    FUZZ_CHECK_EQ(opool_capacity(NULL), 0);
    FUZZ_CHECK_EQ(opool_live_handle(NULL, 0).bits, 0);
    FUZZ_CHECK(opool_live_object(NULL, 0) == NULL);
    FUZZ_CHECK_EQ(opool_shrink(NULL), 0);
    FUZZ_CHECK_EQ(opool_draw_svg(NULL, stream_write, NULL), OPOOL_EINVAL);
    FUZZ_CHECK_EQ(opool_draw_svg(f->p, NULL, NULL), OPOOL_EINVAL);
    opool_clear(NULL);
    opool_sort(NULL);
    opool_destroy(NULL);
    opool_stats s;
    memset(&s, 0xAB, sizeof s);
    opool_get_stats(NULL, &s);
    FUZZ_CHECK_EQ(s.version, 0);
    FUZZ_CHECK_EQ(s.allocs, 0);
    opool_get_stats(f->p, NULL);
    for (int k = -1; k <= (int)OPOOL_ELEAK + 1; k++)
        FUZZ_CHECK(opool_status_str((opool_status)k) != NULL);
    FUZZ_CHECK(strcmp(opool_status_str((opool_status)(OPOOL_ELEAK + 1)), "unknown status") == 0);
    uint32_t i = (uint32_t)(h.bits >> 32);
    model_read_past_end(&f->m);
    EXPECT_EQ(opool_live_handle(f->p, f->m.count + i % 4).bits, 0);
    EXPECT_EQ((uintptr_t)opool_live_object(f->p, f->m.count + i % 4), 0);
    check_callbacks(f, false);
}

/* keep of op_retain: a hash of the handle decides, the same for pool and model. */
static bool keep_decides(uint64_t bits, void *user) {
    fz *f = (fz *)user;
    return mix64(bits ^ f->keep_seed) % 100 < f->keep_pct;
}

static bool cb_keep(void *obj, opool_handle h, void *user) {
    fz *f = (fz *)user;
    f->keep_calls++;
    EXPECT_EQ((uintptr_t)opool_get(f->p, h), (uintptr_t)obj);
    check_pattern(f, obj, h.bits, SIZE_MAX, "retain");
    return keep_decides(h.bits, f);
}

static void op_retain(fz *f) {
    begin(f, "retain");
    f->keep_pct = fuzz_u8(&f->in) % 101;
    f->keep_seed = fuzz_u32(&f->in);
    f->keep_calls = 0;
    uint32_t live = f->m.count;
    EXPECT_EQ(opool_retain(f->p, cb_keep, f), model_retain(&f->m, keep_decides, f));
    EXPECT_EQ(f->keep_calls, model_lists(&f->m) ? live : 0);
    EXPECT_EQ(opool_retain(NULL, cb_keep, f), 0);
    EXPECT_EQ(opool_retain(f->p, NULL, f), 0);
    check_callbacks(f, false);
    note_freed(f);
}

/* Compact handles: of any handle, and the expansion of any 32 bits. */
static void op_compact(fz *f) {
    model *m = &f->m;
    begin(f, "compact");
    uint64_t bits = random_handle(f);
    opool_handle h = {bits};
    opool_handle32 c = opool_handle_compact(f->p, h);
    EXPECT_EQ(c.bits, model_compact(m, bits));
    EXPECT_EQ(opool_handle_expand(f->p, c).bits, c.bits ? bits : 0);
    uint8_t kind = fuzz_u8(&f->in);
    uint32_t arg = fuzz_u32(&f->in), k = model_index_bits(m);
    opool_handle32 x;
    switch (kind % 4) {
    case 0: /* h encoded whether or not it is live */
        x.bits = k >= 32 ? (uint32_t)bits
                         : (uint32_t)((bits >> 32) << k) | ((uint32_t)bits & ~(UINT32_MAX << k));
        break;
    case 1:
        x.bits = arg;
        break;
    case 2:
        x.bits = c.bits ^ (1u << (arg % 32));
        break;
    default:
        x.bits = 0;
        break;
    }
    EXPECT_EQ(opool_handle_expand(f->p, x).bits, model_expand(m, x.bits));
    EXPECT_EQ(opool_handle_expand(NULL, x).bits, 0);
    EXPECT_EQ(opool_handle_compact(NULL, h).bits, 0);
    EXPECT_EQ(opool_handle_at(f->p, arg).bits, model_handle_at(m, arg));
    check_callbacks(f, false);
}

/* ---- descs: the documented rules of opool_create ------------------------- */

static opool_handle never_evict(opool *p, void *user) {
    (void)p;
    (void)user;
    return OPOOL_NULL;
}

static bool save_nothing(const void *obj, opool_write_fn write, void *wctx, void *user) {
    (void)obj, (void)write, (void)wctx, (void)user;
    return true;
}

static bool load_nothing(void *obj, const void *data, size_t size, void *user) {
    (void)obj, (void)data, (void)size, (void)user;
    return true;
}

/* Is d invalid by a rule the header states (not counting size overflow)? */
static bool desc_breaks_a_rule(const opool_desc *d) {
    size_t align = d->object_align ? d->object_align : _Alignof(max_align_t);
    return d->capacity == 0 || (align & (align - 1)) != 0 || align > 4096 ||
           (d->max_capacity != 0 && d->max_capacity < d->capacity) ||
           d->capacity > OPOOL_MAX_CAPACITY || d->max_capacity > OPOOL_MAX_CAPACITY ||
           (d->flags & ~(uint32_t)OPOOL__FLAGS_ALL) != 0 || (unsigned)d->on_full > 2 ||
           (d->on_full == OPOOL_FULL_EVICT && d->evict == NULL) ||
           ((d->allocator.alloc == NULL) != (d->allocator.free == NULL)) ||
           ((d->save_object == NULL) != (d->load_object == NULL));
}

/* 4 GiB (2 GiB with a 32-bit size_t); what "near SIZE_MAX" means: within
 * 1 TiB (within 2 GiB, where the slot arrays of a large capacity alone
 * take more than the address space). */
#define OPS_4GIB_OR_2GIB (SIZE_MAX > 0xFFFFFFFFu ? 0x100000000ull : 0x80000000ull)
#define OPS_NEAR_SIZE_MAX (SIZE_MAX > 0xFFFFFFFFu ? 0x10000000000ull : 0x80000000ull)

/* A desc with any field from the input; create must follow the header. */
static void op_desc(fz *f) {
    begin(f, "desc");
    fuzz_input *in = &f->in;
    opool_desc d;
    memset(&d, 0, sizeof d);
    uint8_t b = fuzz_u8(in), e = fuzz_u8(in);
    static const size_t sizes[] = {
        0, 1, 3, 64, 4095, (size_t)OPS_4GIB_OR_2GIB, SIZE_MAX / 2, SIZE_MAX - 63, SIZE_MAX};
    d.object_size = (b & 1) ? sizes[fuzz_u8(in) % 9] : 1u + (size_t)fuzz_u8(in);
    d.object_align = (b & 2) ? (size_t)fuzz_u16(in) : (size_t)1 << (fuzz_u8(in) % 14);
    static const uint32_t caps[] = {
        0, 1, 2, 3, 1000, OPOOL_MAX_CAPACITY, OPOOL_MAX_CAPACITY + 1, UINT32_MAX};
    d.capacity = (b & 4) ? caps[fuzz_u8(in) % 8] : 1u + (uint32_t)fuzz_u8(in);
    d.max_capacity = (b & 8) ? caps[fuzz_u8(in) % 8] : (e & 1) ? d.capacity + fuzz_u16(in) : 0;
    d.on_full = (opool_full_policy)(e >> 1 & 3);
    d.flags = (b & 16) ? fuzz_u32(in) : (uint32_t)(e >> 3 & 7);
    if (e & 0x40) d.evict = never_evict;
    if (b & 0x20) d.save_object = save_nothing;
    if (b & 0x40) d.load_object = load_nothing;
    d.report = cb_report;
    d.flags |= OPOOL_REPORT_UNRATIONED; /* every report counted */
    d.user = f;
    fuzz_mem mem;
    memset(&mem, 0, sizeof mem);
    mem.cap = (size_t)1 << 20; /* no real allocation of a huge pool */
    opool_allocator al = {.alloc = fuzz_mem_alloc, .free = fuzz_mem_free, .ctx = &mem};
    d.allocator = al;
    if (e & 0x80) d.allocator.free = NULL; /* half an allocator */

    bool invalid = desc_breaks_a_rule(&d);
    size_t align = d.object_align ? d.object_align : _Alignof(max_align_t);
    uint32_t maxcap =
        d.on_full == OPOOL_FULL_GROW && d.max_capacity > d.capacity ? d.max_capacity : d.capacity;
    size_t stride = 0, all = 0;
    bool overflow = !invalid && (__builtin_add_overflow(d.object_size, align - 1, &stride) ||
                                 __builtin_mul_overflow(stride & ~(align - 1), maxcap, &all));
    /* near SIZE_MAX the header and the arrays may push past it too */
    bool near = !invalid && !overflow && all > SIZE_MAX - (size_t)OPS_NEAR_SIZE_MAX;

    size_t need = opool_required_bytes(&d);
    opool *p = (opool *)&mem; /* must be reset to NULL on failure */
    opool_status s = opool_create(&p, &d);
    if (invalid || overflow) {
        FUZZ_CHECK_EQ(s, OPOOL_EINVAL);
        FUZZ_CHECK_EQ(need, 0);
    } else if (near) {
        FUZZ_CHECK(s == OPOOL_EINVAL || s == OPOOL_ENOMEM);
    } else {
        FUZZ_CHECK(s == OPOOL_OK || s == OPOOL_ENOMEM);
        FUZZ_CHECK(need != 0);
        FUZZ_CHECK(s == OPOOL_OK || need > mem.cap);
    }
    if (s != OPOOL_OK) {
        FUZZ_CHECK(p == NULL);
        FUZZ_CHECK_EQ(mem.blocks, 0);
    } else {
        FUZZ_CHECK(p != NULL);
        char why[256];
        if (!opool__check(p, why, sizeof why)) FAIL("opool__check after create: %s", why);
        opool_handle h;
        void *obj = opool_alloc(p, &h);
        FUZZ_CHECK(obj != NULL);
        FUZZ_CHECK_EQ(opool_handle_generation(h) & 1, 1);
        FUZZ_CHECK_EQ(opool_handle_index(h), 0);
        FUZZ_CHECK(opool_get(p, h) == obj);
        FUZZ_CHECK((uintptr_t)obj % align == 0);
        FUZZ_CHECK_EQ(opool_free(p, h), OPOOL_OK);
        if (!opool__check(p, why, sizeof why)) FAIL("opool__check after alloc+free: %s", why);
        opool_destroy(p);
    }
    FUZZ_CHECK_MEM_BALANCED(&mem);
    /* the NULL arguments */
    FUZZ_CHECK_EQ(opool_create(NULL, &d), OPOOL_EINVAL);
    p = (opool *)&mem;
    FUZZ_CHECK_EQ(opool_create(&p, NULL), OPOOL_EINVAL);
    FUZZ_CHECK(p == NULL);
    FUZZ_CHECK_EQ(opool_required_bytes(NULL), 0);

    /* create_in: too small a buffer, NULL, then the exact size at any alignment */
    if (s == OPOOL_OK && need <= ((size_t)1 << 16)) {
        unsigned char *buf = (unsigned char *)malloc(need + 64);
        if (!buf) abort();
        size_t off = fuzz_u8(in) % 64;
        p = (opool *)&mem;
        FUZZ_CHECK_EQ(opool_create_in(&p, buf + off, need - 1, &d), OPOOL_EINVAL);
        FUZZ_CHECK(p == NULL);
        FUZZ_CHECK_EQ(opool_create_in(&p, NULL, need, &d), OPOOL_EINVAL);
        FUZZ_CHECK_EQ(opool_create_in(NULL, buf + off, need, &d), OPOOL_EINVAL);
        FUZZ_CHECK_EQ(opool_create_in(&p, buf + off, need, &d), OPOOL_OK);
        FUZZ_CHECK((unsigned char *)p >= buf + off && (unsigned char *)p < buf + off + need);
        char why[256];
        if (!opool__check(p, why, sizeof why)) FAIL("opool__check after create_in: %s", why);
        opool_handle h;
        FUZZ_CHECK(opool_alloc(p, &h) != NULL);
        FUZZ_CHECK_EQ(opool_free(p, h), OPOOL_OK); /* none left live: no leak to report */
        opool_destroy(p);
        free(buf);
        FUZZ_CHECK_MEM_BALANCED(&mem);
    }
    check_callbacks(f, false);
}

/* ---- one input ---------------------------------------------------------- */

static void configure(fz *f) {
    fuzz_input *in = &f->in;
    opool_desc *d = &f->d;
    memset(d, 0, sizeof *d);
    uint8_t b0 = fuzz_u8(in), b1 = fuzz_u8(in), b2 = fuzz_u8(in), b3 = fuzz_u8(in);
    uint8_t b4 = fuzz_u8(in), b5 = fuzz_u8(in);

    d->on_full = (opool_full_policy)(b0 % 3);
    if (b0 & OPS_CFG_ZERO) d->flags |= OPOOL_ZERO;
    if (b0 & OPS_CFG_POISON) d->flags |= OPOOL_POISON;
    if (b0 & OPS_CFG_RETIRE) d->flags |= OPOOL_RETIRE_ON_WRAP;
    if (b0 & OPS_CFG_INIT) d->init = cb_init;
    if (b0 & OPS_CFG_FINI) d->fini = cb_fini;
    if (d->on_full == OPOOL_FULL_EVICT) d->evict = cb_evict;
    d->report = cb_report;
    d->flags |= OPOOL_REPORT_UNRATIONED; /* every report counted */
    d->user = f;
    /* the custom allocator is needed to make growth fail; GROW pools always get it */
    if ((b0 & OPS_CFG_ALLOCATOR) || d->on_full == OPOOL_FULL_GROW) {
        opool_allocator al = {.alloc = fuzz_mem_alloc, .free = fuzz_mem_free, .ctx = &f->mem};
        d->allocator = al;
    }

    d->capacity = b1 < 160 ? 1u + b1 % 16 : 1u + (uint32_t)(b1 - 160) * 5;
    if (b2 == 0)
        d->max_capacity = 0;
    else if (b2 == 1)
        d->max_capacity = d->capacity;
    else
        d->max_capacity = d->capacity + (b2 < 160 ? b2 - 1u : (uint32_t)(b2 - 159) * 40);

    d->object_size = b3 < 192 ? 1u + b3 % 64 : 1u + (size_t)(b3 - 192) * 24;
    unsigned a = b4 % 16;
    d->object_align = a == 0 || a > 13 ? 0 : (size_t)1 << (a - 1);

    static const uint32_t salts[] = {1,           2,           3,           0xFFFFFFFEu,
                                     0xFFFFFFFFu, 0x80000000u, 0xFFFFFFF0u, 0};
    if (b5 & 0x80) d->flags |= OPOOL_NO_LIVE_LIST;
    b5 &= 0x7f;
    d->salt = b5 < 8 ? salts[b5] : fuzz_u32(in);
    if (d->salt == 0) d->salt = 0x9E3779B9u; /* derived salts depend on creation order */

    /* keep one pool's objects small enough that every run is fast */
    size_t align = d->object_align ? d->object_align : _Alignof(max_align_t);
    size_t stride = (d->object_size + align - 1) & ~(align - 1);
    uint32_t most = (uint32_t)(MAX_POOL_BYTES / stride);
    if (most == 0) most = 1;
    if (d->capacity > most) d->capacity = most;
    if (d->max_capacity > most) d->max_capacity = most;
    if (d->max_capacity != 0 && d->max_capacity < d->capacity) d->max_capacity = d->capacity;
    f->size = d->object_size;
    f->align = align;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz *f = (fz *)calloc(1, sizeof *f);
    if (!f) abort();
    current = f;
    f->in.p = data;
    f->in.n = size;
    configure(f);
    f->op_name = "create";

    uint8_t how = fuzz_u8(&f->in);
    opool_status s;
    if (how & 1) {
        size_t need = opool_required_bytes(&f->d), off = how / 2 % 64;
        f->buf = (unsigned char *)malloc(need + off);
        if (!f->buf) abort();
        s = opool_create_in(&f->p, f->buf + off, need, &f->d);
    } else {
        s = opool_create(&f->p, &f->d);
    }
    if (s != OPOOL_OK) FAIL("create: %s", opool_status_str(s));
    if (!model_init(&f->m, &f->d, f->d.salt)) abort();
    f->m.evict = model_evict;
    f->m.evict_user = f;
    f->addr = (unsigned char **)calloc(f->m.max, sizeof *f->addr);
    f->fini = (void **)calloc(f->m.max + 1, sizeof *f->fini);
    if (!f->addr || !f->fini) abort();
    full_check(f);

    for (f->op = 1; f->in.n > 0 && f->op <= MAX_OPS; f->op++) {
        uint8_t op = fuzz_u8(&f->in);
        switch ((enum ops_code)(op % OPS_COUNT)) {
        case OPS_ALLOC:
            op_alloc(f);
            break;
        case OPS_FREE_LIVE:
            op_free_live(f);
            break;
        case OPS_FREE_BAD:
            op_free_bad(f);
            break;
        case OPS_FREE_TWICE:
            op_free_twice(f);
            break;
        case OPS_FREE_OBJECT:
            op_free_object(f);
            break;
        case OPS_ALLOC_AT:
            op_alloc_at(f, false);
            break;
        case OPS_ALLOC_AT_NOMEM:
            op_alloc_at(f, true);
            break;
        case OPS_ALLOC_NOMEM:
            op_alloc_nomem(f);
            break;
        case OPS_LOOKUP:
            op_lookup(f);
            break;
        case OPS_CLEAR:
            op_clear(f);
            break;
        case OPS_SORT:
            op_sort(f);
            break;
        case OPS_SHRINK:
            op_shrink(f);
            break;
        case OPS_ITERATE:
            op_iterate(f);
            break;
        case OPS_BURST:
            op_burst(f);
            break;
        case OPS_NULLS:
            op_nulls(f);
            break;
        case OPS_DESC:
            op_desc(f);
            break;
        case OPS_RETAIN:
            op_retain(f);
            break;
        case OPS_COMPACT:
            op_compact(f);
            break;
        case OPS_COUNT:
            break;
        }
        /* the O(slots) check after every step, unless the pool is large */
        if (f->m.nslots <= 1024 || f->op % 16 == 0 || f->in.n == 0) {
            f->op_name = "full check";
            full_check(f);
        }
    }

    /* destroy: fini exactly on the live objects, every byte given back */
    begin(f, "destroy");
    uint32_t live = f->m.count;
    void **want = (void **)calloc(live + 1, sizeof *want);
    if (!want) abort();
    for (uint32_t k = 0; k < live; k++) {
        uint32_t i = model_live_slot(&f->m, k);
        want[k] = f->addr[i];
        check_pattern(f, want[k], model_bits(f->m.gen[i], i), SIZE_MAX, "before destroy");
    }
    uint32_t reports = f->nreports;
    opool_destroy(f->p);
    f->p = NULL;
    /* objects left live: one OPOOL_ELEAK, with a live object's handle */
    EXPECT_EQ(f->nreports - reports, live ? 1u : 0u);
    if (live && reports < MAX_REPORTS) {
        EXPECT_EQ(f->reports[reports].what, OPOOL_ELEAK);
        uint64_t bits = f->reports[reports].handle;
        uint32_t i = (uint32_t)bits;
        if (!(i < f->m.nslots && model_bits(f->m.gen[i], i) == bits && (f->m.gen[i] & 1)))
            FAIL("the leak report named %llx, not a live object", (unsigned long long)bits);
    }
    if (f->d.fini) {
        EXPECT_EQ(f->nfini, live);
        qsort(want, live, sizeof *want, cmp_ptr);
        qsort(f->fini, live, sizeof *f->fini, cmp_ptr);
        for (uint32_t k = 0; k < live; k++)
            if (want[k] != f->fini[k])
                FAIL("destroy ran fini on %p, not a live object", f->fini[k]);
    }
    free(want);
    FUZZ_CHECK_MEM_BALANCED(&f->mem);
    loop_check_free(&f->loop);
    model_fini(&f->m);
    free(f->addr);
    free(f->fini);
    free(f->buf);
    free(f);
    current = NULL;
    return 0;
}
