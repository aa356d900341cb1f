/*
 * opool_diag.c -- the one message table, its formatter, the default report
 * and the exhaustion-episode rule (see opool_diag.h), shared by the pool,
 * the concurrent pool and the heap.
 *
 * Sections (grep for "==== "):
 *   ==== table      every message and every status text
 *   ==== format     the placeholders, the default report, the finding being
 *                   reported on this thread
 *   ==== misuse     OPOOL_MISUSE, and rationing reports
 *   ==== origins    the salts of live pools
 *   ==== episodes   when exhaustion is reported, and when it ends
 */
#include "opool_diag.h"
#include "opool_gdb_script.h" /* gdb's printers: in the file every pool, heap and mt pool links */
#include "opool_platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== table ============================================================== */

/* What the default report does with a message: MISUSE prints only when
 * misuse is loud (opool__diag_default). */
enum { OPOOL__SILENT, OPOOL__PRINT, OPOOL__ABORT, OPOOL__MISUSE };

/* Who the finding is about: the slots of a pool (pool, concurrent pool), the
 * blocks of a heap's class (full at a fixed heap's budget, or whatever the
 * finding is when it is not exhaustion), a class of a growing heap that the
 * allocator refused a page, the heap's large blocks, an image being loaded
 * (its step is the opool__load_check that failed). */
enum { OPOOL__SLOTS, OPOOL__BLOCKS, OPOOL__PAGE, OPOOL__LARGE, OPOOL__LOADS };

/* Every message a report can print, one per (status, subject, episode step:
 * FIRST the failure that opens an episode, LATER its summaries, ANY for the
 * rest). The text follows `opool: <kind> <name>: `; placeholders in braces
 * are filled in by opool__diag_format. */
#define OPOOL__DIAG_MESSAGES(X)                                                                    \
    X(FULL, OPOOL_EFULL, OPOOL__SLOTS, FIRST, OPOOL__PRINT,                                        \
      "full: alloc failed ({count} of {capacity} live); reported again at the 2nd, 4th, 8th... "   \
      "failure until at most {recovers} are live")                                                 \
    X(STILL_FULL, OPOOL_EFULL, OPOOL__SLOTS, LATER, OPOOL__PRINT,                                  \
      "still full: {failures} allocs failed in this episode ({count} of {capacity} live)")         \
    X(CLASS_FULL, OPOOL_EFULL, OPOOL__BLOCKS, FIRST, OPOOL__PRINT,                                 \
      "class of {size}-byte blocks full: at its fixed budget (OPOOL_HEAP_FIXED, "                  \
      "blocks_per_class): alloc failed ({count} of {capacity} live); reported again at the 2nd, "  \
      "4th, 8th... failure until at most {recovers} are live")                                     \
    X(CLASS_STILL_FULL, OPOOL_EFULL, OPOOL__BLOCKS, LATER, OPOOL__PRINT,                           \
      "class of {size}-byte blocks still full at its fixed budget: {failures} allocs failed in "   \
      "this episode ({count} of {capacity} live)")                                                 \
    X(PAGE_REFUSED, OPOOL_EFULL, OPOOL__PAGE, FIRST, OPOOL__PRINT,                                 \
      "class of {size}-byte blocks full: the allocator refused a new page: alloc failed "          \
      "({count} of {capacity} live); reported again at the 2nd, 4th, 8th... failure until at "     \
      "most {recovers} are live")                                                                  \
    X(PAGE_STILL_REFUSED, OPOOL_EFULL, OPOOL__PAGE, LATER, OPOOL__PRINT,                           \
      "class of {size}-byte blocks still full: the allocator still refuses pages: {failures} "     \
      "allocs failed in this episode ({count} of {capacity} live)")                                \
    X(LARGE_FULL, OPOOL_EFULL, OPOOL__LARGE, FIRST, OPOOL__PRINT,                                  \
      "the allocator refused a large block: alloc failed ({count} large blocks live); reported "   \
      "again at the 2nd, 4th, 8th... failure until at most {recovers} are live")                   \
    X(LARGE_STILL_REFUSED, OPOOL_EFULL, OPOOL__LARGE, LATER, OPOOL__PRINT,                         \
      "the allocator still refuses large blocks: {failures} allocs failed in this episode "        \
      "({count} large blocks live)")                                                               \
    X(SLOT_WRITTEN, OPOOL_EWRITE_AFTER_FREE, OPOOL__SLOTS, ANY, OPOOL__ABORT,                      \
      "write after free: slot {slot} was changed while free (last handle {handle})")               \
    X(BLOCK_WRITTEN, OPOOL_EWRITE_AFTER_FREE, OPOOL__BLOCKS, ANY, OPOOL__ABORT,                    \
      "write after free: block {ptr} was changed while free")                                      \
    X(LEAK, OPOOL_ELEAK, OPOOL__SLOTS, ANY, OPOOL__PRINT,                                          \
      "leak: destroyed with {count} objects live{detail}")                                         \
    X(BLOCKS_LEAK, OPOOL_ELEAK, OPOOL__BLOCKS, ANY, OPOOL__PRINT,                                  \
      "leak: destroyed with {count} blocks live ({bytes} bytes)")                                  \
    X(STALE_HANDLE, OPOOL_ESTALE, OPOOL__SLOTS, ANY, OPOOL__MISUSE,                                \
      "rejected handle {handle}: its object was freed, or it is another pool's")                   \
    X(BAD_HANDLE, OPOOL_EINVAL, OPOOL__SLOTS, ANY, OPOOL__MISUSE,                                  \
      "rejected handle {handle}: never issued by this pool (or a pointer to no live object)")      \
    X(NULL_HANDLE, OPOOL_EINVAL, OPOOL__SLOTS, NULL_HANDLE, OPOOL__MISUSE,                         \
      "rejected the null handle: it names no object")                                              \
    X(EVEN_HANDLE, OPOOL_EINVAL, OPOOL__SLOTS, EVEN_HANDLE, OPOOL__MISUSE,                         \
      "rejected handle {handle}: its generation {gen} is even, as no live object's is (never "     \
      "issued)")                                                                                   \
    X(FAR_HANDLE, OPOOL_EINVAL, OPOOL__SLOTS, FAR_HANDLE, OPOOL__MISUSE,                           \
      "rejected handle {handle}: slot {slot} is beyond the pool's {slots} slots (never issued by " \
      "this pool)")                                                                                \
    X(DOUBLE_FREE_HANDLE, OPOOL_ESTALE, OPOOL__SLOTS, DOUBLE_FREE, OPOOL__MISUSE,                  \
      "rejected free of handle {handle}: a double free: slot {slot}'s object was freed already")   \
    X(STALE, OPOOL_ESTALE, OPOOL__SLOTS, STALE_HANDLE, OPOOL__MISUSE,                              \
      "rejected handle {handle}: stale: slot {slot}'s object was freed and the slot reused since " \
      "(generation {gen_now} now)")                                                                \
    X(FOREIGN, OPOOL_ESTALE, OPOOL__SLOTS, FOREIGN_HANDLE, OPOOL__MISUSE,                          \
      "rejected handle {handle}: slot {slot} never had generation {gen} (it has {gen_now}): "      \
      "another pool's handle, or a forged one")                                                    \
    X(INTERIOR, OPOOL_EINVAL, OPOOL__SLOTS, INTERIOR_POINTER, OPOOL__MISUSE,                       \
      "rejected free of pointer {ptr}: inside slot {slot}'s object, not at its start")             \
    X(FREED_POINTER, OPOOL_EINVAL, OPOOL__SLOTS, FREED_POINTER, OPOOL__MISUSE,                     \
      "rejected free of pointer {ptr}: a double free: slot {slot}'s object was freed already")     \
    X(FOREIGN_POINTER, OPOOL_EINVAL, OPOOL__SLOTS, FOREIGN_POINTER, OPOOL__MISUSE,                 \
      "rejected free of pointer {ptr}: no object of this pool")                                    \
    X(LIVE_SLOT, OPOOL_EBUSY, OPOOL__SLOTS, LIVE_SLOT, OPOOL__MISUSE,                              \
      "rejected alloc_at of handle {handle}: slot {slot} is live")                                 \
    X(RETIRED_SLOT, OPOOL_EBUSY, OPOOL__SLOTS, RETIRED_SLOT, OPOOL__MISUSE,                        \
      "rejected alloc_at of handle {handle}: slot {slot} is retired (OPOOL_RETIRE_ON_WRAP)")       \
    X(SALT_TAKEN, OPOOL_EINVAL, OPOOL__SLOTS, SALT_TAKEN, OPOOL__PRINT,                            \
      "create refused: salt {salt} is that of live {other}: two live pools with one salt would "   \
      "accept each other's handles (give each its own salt, or 0 for a derived one)")              \
    X(DOUBLE_FREE, OPOOL_ESTALE, OPOOL__BLOCKS, ANY, OPOOL__MISUSE,                                \
      "rejected block {ptr}: already free (a double free)")                                        \
    X(NO_LIVE_LIST, OPOOL_EINVAL, OPOOL__SLOTS, ITERATE, OPOOL__PRINT,                             \
      "iteration refused: created with OPOOL_NO_LIVE_LIST, the pool keeps no live list")           \
    X(BAD_POINTER, OPOOL_EINVAL, OPOOL__BLOCKS, ANY, OPOOL__MISUSE,                                \
      "rejected pointer {ptr}: not the start of a block of this heap")                             \
    X(LOAD_DESC, OPOOL_EINVAL, OPOOL__LOADS, LOAD_DESC, OPOOL__PRINT,                              \
      "desc: not one opool_create accepts")                                                        \
    X(LOAD_NOFILE, OPOOL_ENOENT, OPOOL__LOADS, LOAD_NOFILE, OPOOL__SILENT, "no file at the path")  \
    X(LOAD_IO, OPOOL_EIO, OPOOL__LOADS, LOAD_IO, OPOOL__PRINT,                                     \
      "the file could not be opened or read")                                                      \
    X(LOAD_NOMEM, OPOOL_ENOMEM, OPOOL__LOADS, LOAD_NOMEM, OPOOL__PRINT,                            \
      "out of memory after {found} bytes of the image")                                            \
    X(LOAD_TRUNCATED, OPOOL_ECORRUPT, OPOOL__LOADS, LOAD_TRUNCATED, OPOOL__PRINT,                  \
      "truncated: the input ended after {found} bytes, the image needs {expected}")                \
    X(LOAD_TRAILING, OPOOL_ECORRUPT, OPOOL__LOADS, LOAD_TRAILING, OPOOL__PRINT,                    \
      "trailing bytes: the file goes on after the image's {expected} bytes")                       \
    X(LOAD_MAGIC, OPOOL_ECORRUPT, OPOOL__LOADS, LOAD_MAGIC, OPOOL__PRINT,                          \
      "magic: the input is not an opool image")                                                    \
    X(LOAD_WORLD_MAGIC, OPOOL_ECORRUPT, OPOOL__LOADS, LOAD_WORLD_MAGIC, OPOOL__PRINT,              \
      "magic: the image is a world of several pools (load it with opool_load_many)")               \
    X(LOAD_POOL_MAGIC, OPOOL_ECORRUPT, OPOOL__LOADS, LOAD_POOL_MAGIC, OPOOL__PRINT,                \
      "magic: the image is one pool's (load it with opool_load), not a world")                     \
    X(LOAD_VERSION, OPOOL_ECORRUPT, OPOOL__LOADS, LOAD_VERSION, OPOOL__PRINT,                      \
      "version: the image has {found}, this library reads {expected}")                             \
    X(LOAD_CHECKSUM, OPOOL_ECORRUPT, OPOOL__LOADS, LOAD_CHECKSUM, OPOOL__PRINT,                    \
      "checksum: the image says {found_hex}, its bytes hash to {expected_hex}")                    \
    X(LOAD_FIELD, OPOOL_ECORRUPT, OPOOL__LOADS, LOAD_FIELD, OPOOL__PRINT,                          \
      "{field}: the image has {found}, which no valid image holds")                                \
    X(LOAD_SLOT, OPOOL_ECORRUPT, OPOOL__LOADS, LOAD_SLOT, OPOOL__PRINT,                            \
      "slot records: slot {found}'s generation or roster position is inconsistent")                \
    X(LOAD_POOLS, OPOOL_EINVAL, OPOOL__LOADS, LOAD_POOLS, OPOOL__PRINT,                            \
      "pools: the image has {found}, the call {expected}")                                         \
    X(LOAD_SIDES, OPOOL_EINVAL, OPOOL__LOADS, LOAD_SIDES, OPOOL__PRINT,                            \
      "side tables: the image has {found}, the call {expected}")                                   \
    X(LOAD_COUNT, OPOOL_ECORRUPT, OPOOL__LOADS, LOAD_COUNT, OPOOL__PRINT,                          \
      "pools: the header counts {found}, the call {expected}, and the image does not hold "        \
      "{found}")                                                                                   \
    X(LOAD_MISMATCH, OPOOL_EINVAL, OPOOL__LOADS, LOAD_MISMATCH, OPOOL__PRINT,                      \
      "{field}: the image has {found}, the desc {expected}")                                       \
    X(LOAD_LAYOUT, OPOOL_EINVAL, OPOOL__LOADS, LOAD_LAYOUT, OPOOL__PRINT,                          \
      "{field}: the image has {found}, the call {expected}")                                       \
    X(LOAD_ENTRY, OPOOL_ECORRUPT, OPOOL__LOADS, LOAD_ENTRY, OPOOL__PRINT,                          \
      "entries: entry {found} has an even generation or the index of an earlier one")              \
    X(LOAD_OBJECT, OPOOL_ECORRUPT, OPOOL__LOADS, LOAD_OBJECT, OPOOL__PRINT,                        \
      "load_object rejected object {found} of {expected}")

/* The name a failed load's record gives each check (opool_load_error.check);
 * NULL: the header field the finding names. */
#define OPOOL__LOAD_CHECK_NAMES(X)                                                                 \
    X(LOAD_DESC, "desc")                                                                           \
    X(LOAD_NOFILE, "file")                                                                         \
    X(LOAD_IO, "file")                                                                             \
    X(LOAD_NOMEM, "memory")                                                                        \
    X(LOAD_TRUNCATED, "truncated")                                                                 \
    X(LOAD_TRAILING, "trailing bytes")                                                             \
    X(LOAD_MAGIC, "magic")                                                                         \
    X(LOAD_WORLD_MAGIC, "magic")                                                                   \
    X(LOAD_POOL_MAGIC, "magic")                                                                    \
    X(LOAD_VERSION, "version")                                                                     \
    X(LOAD_CHECKSUM, "checksum")                                                                   \
    X(LOAD_FIELD, NULL)                                                                            \
    X(LOAD_SLOT, "slot records")                                                                   \
    X(LOAD_POOLS, "pools")                                                                         \
    X(LOAD_COUNT, "pools")                                                                         \
    X(LOAD_SIDES, "side tables")                                                                   \
    X(LOAD_MISMATCH, NULL)                                                                         \
    X(LOAD_LAYOUT, NULL)                                                                           \
    X(LOAD_ENTRY, "entries")                                                                       \
    X(LOAD_OBJECT, "load_object")

const char *opool__load_check_name(const opool__finding *f) {
    switch (f->check) {
#define OPOOL__CHECK_CASE(check, name)                                                             \
    case OPOOL__##check:                                                                           \
        return name ? name : f->field;
        OPOOL__LOAD_CHECK_NAMES(OPOOL__CHECK_CASE)
#undef OPOOL__CHECK_CASE
    }
    return f->field;
}

typedef struct opool__message {
    opool_status what;
    int subject, step, action;
    const char *text;
} opool__message;

#define OPOOL__MESSAGE_ROW(id, what, subject, step, action, text)                                  \
    {what, subject, OPOOL__##step, action, text},
static const opool__message opool__messages[] = {OPOOL__DIAG_MESSAGES(OPOOL__MESSAGE_ROW)};
#undef OPOOL__MESSAGE_ROW

/* What opool_status_str says: short, and true of every kind of object. */
#define OPOOL__STATUS_TEXTS(X)                                                                     \
    X(OPOOL_OK, "ok")                                                                              \
    X(OPOOL_EINVAL, "invalid argument")                                                            \
    X(OPOOL_ENOMEM, "out of memory")                                                               \
    X(OPOOL_EFULL, "pool full")                                                                    \
    X(OPOOL_ESTALE, "already freed, or stale (a handle of a freed object or of another pool)")     \
    X(OPOOL_EBUSY, "slot busy")                                                                    \
    X(OPOOL_ECORRUPT, "corrupt saved pool")                                                        \
    X(OPOOL_EWRITE_AFTER_FREE, "write after free")                                                 \
    X(OPOOL_ETIMEDOUT, "timed out")                                                                \
    X(OPOOL_EIO, "input/output error")                                                             \
    X(OPOOL_ENOENT, "no such file")                                                                \
    X(OPOOL_ELEAK, "objects left live at destroy (a leak)")

const char *opool_status_str(opool_status s) {
    switch (s) {
#define OPOOL__STATUS_CASE(status, text)                                                           \
    case status:                                                                                   \
        return text;
        OPOOL__STATUS_TEXTS(OPOOL__STATUS_CASE)
#undef OPOOL__STATUS_CASE
    }
    return "unknown status";
}

/* ==== format ============================================================= */

opool__finding opool__finding_of(opool__kind kind, opool_status what, const void *self,
                                 const char *name) {
    opool__finding f;
    memset(&f, 0, sizeof f);
    f.kind = kind;
    f.what = what;
    f.self = self;
    f.name = name;
    return f;
}

static const opool__message *opool__message_of(const opool__finding *f) {
    int subject = f->kind == OPOOL__KIND_LOAD   ? OPOOL__LOADS
                  : f->kind != OPOOL__KIND_HEAP ? OPOOL__SLOTS
                  : f->what != OPOOL_EFULL      ? OPOOL__BLOCKS
                  : f->block_size == 0          ? OPOOL__LARGE
                  : f->refused                  ? OPOOL__PAGE
                                                : OPOOL__BLOCKS;
    int step = f->kind == OPOOL__KIND_LOAD ? (int)f->check
               : f->misuse                 ? (int)f->misuse
               : f->iterate                ? OPOOL__ITERATE
               : f->what != OPOOL_EFULL    ? OPOOL__ANY
               : f->failures > 1           ? OPOOL__LATER
                                           : OPOOL__FIRST;
    for (size_t k = 0; k < sizeof opool__messages / sizeof opool__messages[0]; k++) {
        const opool__message *m = &opool__messages[k];
        if (m->what == f->what && m->subject == subject && m->step == step) return m;
    }
    return NULL;
}

/* Appends to buf[*at ...] what fits of the printf result, counting it all. */
#define OPOOL__PUT(...)                                                                            \
    do {                                                                                           \
        int n_ = snprintf(buf + (*at < size ? *at : size - 1), *at < size ? size - *at : 1,        \
                          __VA_ARGS__);                                                            \
        if (n_ > 0) *at += (size_t)n_;                                                             \
    } while (0)

/* The value of placeholder {key} (len bytes) of f. */
static void opool__put_field(char *buf, size_t size, size_t *at, const char *key, size_t len,
                             const opool__finding *f) {
#define OPOOL__IS(word) (len == sizeof(word) - 1 && memcmp(key, word, len) == 0)
    if (OPOOL__IS("count"))
        OPOOL__PUT("%llu", (unsigned long long)f->count);
    else if (OPOOL__IS("capacity"))
        OPOOL__PUT("%llu", (unsigned long long)f->capacity);
    else if (OPOOL__IS("recovers"))
        OPOOL__PUT("%llu", (unsigned long long)opool__episode_recovers_at(f->capacity));
    else if (OPOOL__IS("failures"))
        OPOOL__PUT("%llu", (unsigned long long)f->failures);
    else if (OPOOL__IS("size"))
        OPOOL__PUT("%lu", (unsigned long)f->block_size);
    else if (OPOOL__IS("slot"))
        OPOOL__PUT("%lu", (unsigned long)opool_handle_index(f->handle));
    else if (OPOOL__IS("gen"))
        OPOOL__PUT("0x%08lx", (unsigned long)opool_handle_generation(f->handle));
    else if (OPOOL__IS("gen_now"))
        OPOOL__PUT("0x%08lx", (unsigned long)f->gen_now);
    else if (OPOOL__IS("slots"))
        OPOOL__PUT("%llu", (unsigned long long)f->capacity);
    else if (OPOOL__IS("salt"))
        OPOOL__PUT("0x%08lx", (unsigned long)f->salt);
    else if (OPOOL__IS("other") && f->other_name)
        OPOOL__PUT("pool \"%s\" (%p)", f->other_name, (void *)(uintptr_t)f->other);
    else if (OPOOL__IS("other"))
        OPOOL__PUT("pool %p", (void *)(uintptr_t)f->other);
    else if (OPOOL__IS("handle"))
        OPOOL__PUT("0x%016llx", (unsigned long long)f->handle.bits);
    else if (OPOOL__IS("ptr"))
        OPOOL__PUT("%p", (void *)(uintptr_t)f->ptr);
    else if (OPOOL__IS("detail"))
        OPOOL__PUT("%s", f->detail ? f->detail : "");
    else if (OPOOL__IS("held"))
        OPOOL__PUT("%llu", (unsigned long long)f->held);
    else if (OPOOL__IS("held_episodes"))
        OPOOL__PUT("%llu", (unsigned long long)f->held_episodes);
    else if (OPOOL__IS("quota"))
        OPOOL__PUT("%d", OPOOL__QUOTA_LINES);
    else if (OPOOL__IS("high_water"))
        OPOOL__PUT("%llu", (unsigned long long)f->high_water);
    else if (OPOOL__IS("episodes"))
        OPOOL__PUT("%llu", (unsigned long long)f->episodes);
    else if (OPOOL__IS("demand"))
        OPOOL__PUT("%llu", (unsigned long long)f->demand);
    else if (OPOOL__IS("bytes"))
        OPOOL__PUT("%llu", (unsigned long long)f->bytes);
    else if (OPOOL__IS("field"))
        OPOOL__PUT("%s", f->field ? f->field : "?");
    else if (OPOOL__IS("expected"))
        OPOOL__PUT("%llu", (unsigned long long)f->expected);
    else if (OPOOL__IS("found"))
        OPOOL__PUT("%llu", (unsigned long long)f->found);
    else if (OPOOL__IS("expected_hex"))
        OPOOL__PUT("0x%016llx", (unsigned long long)f->expected);
    else if (OPOOL__IS("found_hex"))
        OPOOL__PUT("0x%016llx", (unsigned long long)f->found);
#undef OPOOL__IS
}

/* "opool: <what reports>: ", the start of every line. */
static void opool__put_prefix(char *buf, size_t size, size_t *at, const opool__finding *f) {
    static const char *const kinds[] = {"pool", "concurrent pool", "heap"};
    if (f->kind == OPOOL__KIND_LOAD) {
        /* no object exists yet: the pool is named by its desc and, in a
         * world, by its index */
        char where[64] = "";
        if (f->side && f->npools)
            snprintf(where, sizeof where, " of side table %lu of %lu", (unsigned long)f->pool,
                     (unsigned long)f->npools);
        else if (f->side)
            snprintf(where, sizeof where, " of a side table");
        else if (f->npools && f->pool != UINT32_MAX)
            snprintf(where, sizeof where, " of pool %lu of %lu", (unsigned long)f->pool,
                     (unsigned long)f->npools);
        else if (f->npools)
            snprintf(where, sizeof where, " of a world of %lu pool%s", (unsigned long)f->npools,
                     f->npools == 1 ? "" : "s");
        OPOOL__PUT("opool: load%s%s%s%s: ", where, f->name ? " \"" : "", f->name ? f->name : "",
                   f->name ? "\"" : "");
    } else if (f->self == NULL && f->misuse == OPOOL__SALT_TAKEN) /* no object exists */
        OPOOL__PUT("opool: %s%s%s%s: ", kinds[f->kind], f->name ? " \"" : "",
                   f->name ? f->name : "", f->name ? "\"" : "");
    else if (f->name)
        OPOOL__PUT("opool: %s \"%s\" (%p): ", kinds[f->kind], f->name, (void *)(uintptr_t)f->self);
    else
        OPOOL__PUT("opool: %s %p: ", kinds[f->kind], (void *)(uintptr_t)f->self);
}

size_t opool__diag_format(char *buf, size_t size, const opool__finding *f) {
    const opool__message *m = opool__message_of(f);
    buf[0] = '\0';
    if (m == NULL || m->action == OPOOL__SILENT) return 0;
    if (m->action == OPOOL__MISUSE && !f->loud && opool__misuse_env() == 0) return 0;
    return opool__diag_text(buf, size, f, m->text);
}

/* text at *at in buf, its placeholders filled in from f. */
static void opool__put_text(char *buf, size_t size, size_t *at, const opool__finding *f,
                            const char *text) {
    for (const char *t = text; *t;) {
        const char *open = strchr(t, '{');
        if (open == NULL) {
            OPOOL__PUT("%s", t);
            break;
        }
        const char *close = strchr(open, '}');
        OPOOL__PUT("%.*s", (int)(open - t), t);
        opool__put_field(buf, size, at, open + 1, (size_t)(close - open - 1), f);
        t = close + 1;
    }
}

size_t opool__diag_text(char *buf, size_t size, const opool__finding *f, const char *text) {
    size_t zero = 0, *at = &zero;
    buf[0] = '\0';
    opool__put_prefix(buf, size, at, f);
    opool__put_text(buf, size, at, f, text);
    if (f->held_suffix)
        opool__put_text(buf, size, at, f,
                        " [after {held} lines held back, {held_episodes} of them opening an "
                        "episode: at most {quota} a second]");
    OPOOL__PUT("\n");
    return *at;
}

#undef OPOOL__PUT

void opool__diag_default(const opool__finding *f) {
    const opool__message *m = opool__message_of(f);
    if (m == NULL) return;
    opool__finding g = *f;
    if (f->what == OPOOL_EFULL) g.held = opool_reports_held(&g.held_episodes);
    g.held_suffix = g.held != 0;
    char line[640];
    if (opool__diag_format(line, sizeof line, &g) == 0) return;
    fputs(line, stderr);
    if (m->action == OPOOL__MISUSE && opool__misuse_env() == 2) {
        fputs("opool: OPOOL_MISUSE=abort: aborting at the first misuse\n", stderr);
        abort();
    }
    if (m->action == OPOOL__ABORT) abort();
}

void opool__diag_flush(opool__kind kind, const void *self, const char *name, opool__quota *q) {
    uint64_t held = atomic_exchange_explicit(&q->held, 0, memory_order_relaxed);
    uint64_t episodes = atomic_exchange_explicit(&q->episodes, 0, memory_order_relaxed);
    if (held == 0) return;
    opool__finding f = opool__finding_of(kind, OPOOL_EFULL, self, name);
    char start[320] = "";
    size_t at = 0;
    opool__put_prefix(start, sizeof start, &at, &f);
    fprintf(stderr,
            "%.*sdestroyed with %llu exhaustion lines held back, %llu of them opening an episode "
            "(at most %d a second)\n",
            (int)(at < sizeof start ? at : sizeof start - 1), start, (unsigned long long)held,
            (unsigned long long)episodes, OPOOL__QUOTA_LINES);
}

/* The finding a report of this thread is being called for, if any: a
 * report that calls opool_default_report(NULL, ...) prints its line. */
static _Thread_local const opool__finding *opool__reporting;

void opool__diag_report_through(void (*call)(const void *ctx), const void *ctx,
                                const opool__finding *f) {
    const opool__finding *outer = opool__reporting;
    opool__reporting = f;
    call(ctx);
    opool__reporting = outer;
}

bool opool__diag_default_reporting(void) {
    if (opool__reporting == NULL) return false;
    opool__diag_default(opool__reporting);
    return true;
}

/* ==== misuse ============================================================= */

int opool__misuse_env(void) {
    /* -1: not read yet. Racing first calls read the same environment */
    static _Atomic int mode = -1;
    int m = atomic_load_explicit(&mode, memory_order_relaxed);
    if (m < 0) {
        const char *v = getenv("OPOOL_MISUSE");
        m = v == NULL ? 0 : strcmp(v, "print") == 0 ? 1 : strcmp(v, "abort") == 0 ? 2 : 0;
        atomic_store_explicit(&mode, m, memory_order_relaxed);
    }
    return m;
}

void opool__diag_misuse(opool__finding *f, uint32_t nslots, uint32_t gen0, uint32_t now) {
    uint32_t i = opool_handle_index(f->handle), g = opool_handle_generation(f->handle);
    if (f->what != OPOOL_EINVAL && f->what != OPOOL_ESTALE && f->what != OPOOL_EBUSY) return;
    f->capacity = nslots;
    f->gen_now = now;
    if (opool_handle_is_null(f->handle))
        f->misuse = OPOOL__NULL_HANDLE;
    else if (!(g & 1))
        f->misuse = OPOOL__EVEN_HANDLE;
    else if (i >= nslots)
        f->misuse = OPOOL__FAR_HANDLE;
    else if (f->what == OPOOL_EBUSY)
        f->misuse = OPOOL__LIVE_SLOT;
    else /* generations only grow from the origin (until they wrap); a concurrent
          * pool's slot may still show g while another free of it wins */
        f->misuse = now == g + 1 || now == g ? OPOOL__DOUBLE_FREE
                    : g - gen0 < now - gen0  ? OPOOL__STALE_HANDLE
                                             : OPOOL__FOREIGN_HANDLE;
}

/* The reports held back before the one being made on this thread, and of
 * those the ones that opened an episode (opool__diag_admit). */
static _Thread_local opool__held opool__held_now;

bool opool__diag_admit(opool__quota *q, bool opens, opool__held *outer) {
    uint32_t now = (uint32_t)(opool__now_ns() / 1000000000u) + 1; /* 0: none yet */
    uint32_t second = atomic_load_explicit(&q->second, memory_order_relaxed);
    if (second != now && atomic_compare_exchange_strong_explicit(
                             &q->second, &second, now, memory_order_relaxed, memory_order_relaxed))
        atomic_store_explicit(&q->printed, 0, memory_order_relaxed); /* a new second */
    if (atomic_fetch_add_explicit(&q->printed, 1, memory_order_relaxed) >= OPOOL__QUOTA_LINES) {
        atomic_fetch_add_explicit(&q->held, 1, memory_order_relaxed);
        if (opens) atomic_fetch_add_explicit(&q->episodes, 1, memory_order_relaxed);
        return false;
    }
    *outer = opool__held_now;
    opool__held_now.held = atomic_exchange_explicit(&q->held, 0, memory_order_relaxed);
    opool__held_now.opened = atomic_exchange_explicit(&q->episodes, 0, memory_order_relaxed);
    return true;
}

void opool__diag_admitted(const opool__held *outer) { opool__held_now = *outer; }

uint64_t opool_reports_held(uint64_t *opened) {
    if (opened) *opened = opool__held_now.opened;
    return opool__held_now.held;
}

/* ==== origins ============================================================ */

typedef struct opool__origin {
    const void *owner;
    const char *name;
    uint32_t gen0;
    opool__kind kind;
} opool__origin;

/* The table, under a spin lock: pools are created and destroyed seldom, and
 * the lock is held for a scan of the live pools with explicit salts. Its
 * first entries are static, so that opool_create_in allocates nothing until
 * more than OPOOL__ORIGINS_STATIC such pools are live; then the C library's
 * memory holds them. */
#define OPOOL__ORIGINS_STATIC 64
static opool__origin opool__origins_first[OPOOL__ORIGINS_STATIC];
static struct {
    atomic_flag lock;
    opool__origin *at;
    uint32_t n, cap;
} opool__origins = {ATOMIC_FLAG_INIT, opool__origins_first, 0, OPOOL__ORIGINS_STATIC};

static void opool__origins_lock(void) {
    while (atomic_flag_test_and_set_explicit(&opool__origins.lock, memory_order_acquire)) {
    }
}

static void opool__origins_unlock(void) {
    atomic_flag_clear_explicit(&opool__origins.lock, memory_order_release);
}

static const opool__origin *opool__origin_find(bool any_kind, opool__kind kind, uint32_t gen0) {
    for (uint32_t k = 0; k < opool__origins.n; k++) {
        const opool__origin *o = &opool__origins.at[k];
        if (o->gen0 == gen0 && (any_kind || o->kind == kind)) return o;
    }
    return NULL;
}

opool_status opool__origin_enter(opool__kind kind, uint32_t salt, const void *owner,
                                 const char *name, bool exclusive) {
    uint32_t gen0 = salt & ~1u;
    opool__finding taken = opool__finding_of(kind, OPOOL_EINVAL, NULL, name);
    opool_status s = OPOOL_OK;
    opool__origins_lock();
    const opool__origin *o = exclusive ? opool__origin_find(false, kind, gen0) : NULL;
    if (o != NULL) {
        taken.misuse = OPOOL__SALT_TAKEN;
        taken.salt = salt;
        taken.other = o->owner;
        taken.other_name = o->name;
        s = OPOOL_EINVAL;
    } else if (opool__origins.n == opool__origins.cap) {
        uint32_t cap = 2 * opool__origins.cap;
        opool__origin *at = (opool__origin *)malloc(cap * sizeof *at);
        if (at == NULL)
            s = OPOOL_ENOMEM;
        else {
            memcpy(at, opool__origins.at, opool__origins.n * sizeof *at);
            if (opool__origins.at != opool__origins_first) free(opool__origins.at);
            opool__origins.at = at;
            opool__origins.cap = cap;
        }
    }
    if (s == OPOOL_OK)
        opool__origins.at[opool__origins.n++] = (opool__origin){owner, name, gen0, kind};
    opool__origins_unlock();
    if (taken.misuse) opool__diag_default(&taken);
    return s;
}

void opool__origin_leave(const void *owner) {
    opool__origins_lock();
    for (uint32_t k = 0; k < opool__origins.n; k++)
        if (opool__origins.at[k].owner == owner) {
            opool__origins.at[k] = opool__origins.at[--opool__origins.n];
            break;
        }
    if (opool__origins.n == 0 && opool__origins.at != opool__origins_first) {
        free(opool__origins.at); /* nothing of the C library's left at the program's end */
        opool__origins.at = opool__origins_first;
        opool__origins.cap = OPOOL__ORIGINS_STATIC;
    }
    opool__origins_unlock();
}

bool opool__origin_taken(uint32_t gen0) {
    opool__origins_lock();
    bool taken = opool__origin_find(true, OPOOL__KIND_POOL, gen0) != NULL;
    opool__origins_unlock();
    return taken;
}

/* ==== episodes =========================================================== */

uint64_t opool__episode_failed(opool__episode *e) {
    /* relaxed: the record only rations reports; of racing failures each gets
     * its own number, so each power of two is reported once */
    uint64_t n = atomic_fetch_add_explicit(&e->failures, 1, memory_order_relaxed) + 1;
    return (n & (n - 1)) == 0 ? n : 0;
}

bool opool__episode_freed(opool__episode *e, uint64_t count, uint64_t capacity) {
    if (count > opool__episode_recovers_at(capacity)) return false;
    /* relaxed: as above. A failure racing with the end may open the next
     * episode a little early: it is reported, never lost */
    return atomic_exchange_explicit(&e->failures, 0, memory_order_relaxed) != 0;
}
