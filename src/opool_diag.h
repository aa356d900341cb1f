/*
 * opool_diag.h -- findings and how they are reported, written once for every
 * kind of object (pool, concurrent pool, heap): the exhaustion-episode rule,
 * the message table with its one formatter, and the one default report that
 * opool_default_report, opool_mt_default_report and opool_heap_default_report
 * wrap. Private: never installed.
 *
 * Each kind reports through its own typed callback, (object, what, subject,
 * user): the module of each kind fills an opool__finding from its object and
 * hands it to opool__diag_default when the user set no callback (or calls a
 * public default report).
 */
#ifndef OPOOL_DIAG_H
#define OPOOL_DIAG_H

#include "opool.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The ration of exhaustion reports, one per pool, concurrent pool or heap
 * (opool__diag_admit). An exhaustion episode is opool__episode, in
 * opool_abi.h; its rule and operations are below. */
typedef struct opool__quota {         /* 32-bit words: no stricter alignment for the pool (i386) */
    OPOOL__ATOMIC(uint32_t) second;   /* the monotonic clock's second of the lines counted */
    OPOOL__ATOMIC(uint32_t) printed;  /* lines printed in it */
    OPOOL__ATOMIC(uint32_t) held;     /* lines held back since the last printed */
    OPOOL__ATOMIC(uint32_t) episodes; /* of those, the ones that opened an episode */
} opool__quota;

typedef enum opool__kind {
    OPOOL__KIND_POOL,
    OPOOL__KIND_MT,
    OPOOL__KIND_HEAP,
    OPOOL__KIND_LOAD /* a failed opool_load*: self is NULL, check says which */
} opool__kind;

/* Which check of a load failed: each has its message in opool_diag.c's
 * table (OPOOL__DIAG_MESSAGES, the rows named after it). */
/* The step of a message (opool_diag.c's table): a finding that is not
 * exhaustion, the failure that opens an episode, the later ones, a loop
 * refused (a pool without a live list); the checks of a load follow. */
enum { OPOOL__ANY, OPOOL__FIRST, OPOOL__LATER, OPOOL__ITERATE, OPOOL__STEPS };

typedef enum opool__load_check {
    OPOOL__LOAD_DESC = OPOOL__STEPS,
    OPOOL__LOAD_NOFILE,
    OPOOL__LOAD_IO,
    OPOOL__LOAD_NOMEM,
    OPOOL__LOAD_TRUNCATED,
    OPOOL__LOAD_TRAILING,
    OPOOL__LOAD_MAGIC,
    OPOOL__LOAD_WORLD_MAGIC,
    OPOOL__LOAD_POOL_MAGIC,
    OPOOL__LOAD_VERSION,
    OPOOL__LOAD_CHECKSUM,
    OPOOL__LOAD_FIELD,
    OPOOL__LOAD_SLOT,
    OPOOL__LOAD_POOLS,
    OPOOL__LOAD_SIDES, /* a world's side tables: not the call's number */
    OPOOL__LOAD_COUNT,
    OPOOL__LOAD_MISMATCH,
    OPOOL__LOAD_LAYOUT, /* a side table's value layout differs from the call's */
    OPOOL__LOAD_ENTRY,  /* a side table's entry that no table holds */
    OPOOL__LOAD_OBJECT
} opool__load_check;

/* What a rejected free or alloc_at was (a step of its message too): found by
 * the kind's default report from the object's own records, and told when
 * misuse is loud (OPOOL_MISUSE, OPOOL_REPORT_MISUSE). */
typedef enum opool__misuse {
    OPOOL__MISUSE_NONE,
    OPOOL__NULL_HANDLE = OPOOL__LOAD_OBJECT + 1, /* the null handle */
    OPOOL__EVEN_HANDLE,                          /* an even generation: never a live object's */
    OPOOL__FAR_HANDLE,                           /* an index beyond the slots made */
    OPOOL__DOUBLE_FREE,      /* the object was freed already, its slot not reused since */
    OPOOL__STALE_HANDLE,     /* the object was freed, its slot reused since */
    OPOOL__FOREIGN_HANDLE,   /* a generation its slot never had: another pool's, or forged */
    OPOOL__INTERIOR_POINTER, /* inside an object, not at its start */
    OPOOL__FREED_POINTER,    /* the start of a free slot: a double free */
    OPOOL__FOREIGN_POINTER,  /* no object of this pool */
    OPOOL__LIVE_SLOT,        /* alloc_at: the slot is live */
    OPOOL__RETIRED_SLOT,     /* alloc_at: the slot is retired */
    OPOOL__SALT_TAKEN        /* create: a live pool has this salt (always printed) */
} opool__misuse;

/* Everything a message may print about one finding. */
typedef struct opool__finding {
    opool__kind kind;
    opool_status what;
    const void *self;         /* the object that reports (NULL: unknown) */
    const char *name;         /* its desc.name, NULL if none */
    opool_handle handle;      /* pools: the handle concerned (OPOOL_NULL if none) */
    const void *ptr;          /* heap: the block concerned */
    uint64_t failures;        /* OPOOL_EFULL: failed allocs of the episode so far */
    uint64_t count, capacity; /* OPOOL_EFULL: live and usable slots or blocks */
    uint32_t block_size;      /* heap OPOOL_EFULL: the class's block size; 0: a large block */
    bool refused;             /* heap OPOOL_EFULL of a class: why it is full: the allocator
                                 refused a page (true), or a fixed heap's budget (false) */
    bool iterate;             /* pool OPOOL_EINVAL: a loop over a pool without a live list */
    /* OPOOL__KIND_LOAD: */
    opool__load_check check;
    const char *field;        /* the header field (or part) concerned */
    uint64_t expected, found; /* what the desc or the format wants; what the image holds */
    uint32_t pool, npools;    /* world loads (npools > 0): the pool's index, UINT32_MAX: none */
    bool side;                /* the image is a side table's */
    const char *detail;       /* OPOOL_ELEAK: the end of the line (where, or how to learn it) */
    uint64_t bytes;           /* heap OPOOL_ELEAK: bytes of the blocks live */
    uint64_t high_water, episodes, demand; /* the sizing line (opool_sizing_line) */
    uint64_t held, held_episodes;          /* exhaustion lines the quota held back before */
    bool held_suffix;                      /* the line says so (the default report) */
    /* rejected frees and alloc_at (opool__misuse): */
    opool__misuse misuse;
    bool loud;              /* the object's desc asks for them (OPOOL_REPORT_MISUSE) */
    uint32_t gen_now;       /* the slot's generation now */
    uint32_t salt;          /* OPOOL__SALT_TAKEN: the salt asked for */
    const char *other_name; /* OPOOL__SALT_TAKEN: the live pool that has it */
    const void *other;
} opool__finding;

/* A finding of what about self (NULL: unknown) named name, every other
 * field zero: each kind fills in its subject and counts. */
opool__finding opool__finding_of(opool__kind kind, opool_status what, const void *self,
                                 const char *name);

/* The default report: the finding's line on stderr, then abort() for
 * OPOOL_EWRITE_AFTER_FREE. Rejected handles and pointers print only when
 * misuse is loud (f->loud, or OPOOL_MISUSE=print|abort; abort() after the
 * line with abort). An exhaustion line admitted by opool__diag_admit says
 * how many were held back before it. */
void opool__diag_default(const opool__finding *f);

/* Which misuse f's handle was, rejected (f->what: OPOOL_EINVAL, OPOOL_ESTALE,
 * or OPOOL_EBUSY for an alloc_at of a live slot) by an object of nslots
 * slots and origin gen0 whose slot of that index has generation now (when
 * in range); sets f->misuse, and f->gen_now and f->capacity for the line.
 * Another status: no misuse. */
void opool__diag_misuse(opool__finding *f, uint32_t nslots, uint32_t gen0, uint32_t now);

/* OPOOL_MISUSE, read once: 0 unset (or another value), 1 "print", 2 "abort". */
int opool__misuse_env(void);

/* ---- rationing: every sink, the default report and a user's alike ----------
 * At most OPOOL__QUOTA_LINES exhaustion reports in a second of one object
 * (quota q); opens: the failure opens an episode. False: held back (counted
 * in q). True: report it; until opool__diag_admitted(outer), which puts back
 * what an outer report on this thread had, opool_reports_held gives the
 * reports held back before it (the default report's line says so).
 * Relaxed: racing threads may report one too many or too few in a second,
 * and each held report is counted once. */
typedef struct opool__held {
    uint64_t held, opened;
} opool__held;
bool opool__diag_admit(opool__quota *q, bool opens, opool__held *outer);
void opool__diag_admitted(const opool__held *outer);

#define OPOOL__QUOTA_LINES 4

/* At the end of self (of kind, named name), whose reports go to the default
 * report: a line for the exhaustion lines its quota q still holds back, if
 * any. */
void opool__diag_flush(opool__kind kind, const void *self, const char *name, opool__quota *q);

/* The finding's message, as the default report prints it (with its final
 * newline), in buf (cut to size - 1 bytes; size > 0). Returns the length of
 * the whole message; 0 for a finding that is silent by default. */
size_t opool__diag_format(char *buf, size_t size, const opool__finding *f);

/* As opool__diag_format, with text (its placeholders filled in from f)
 * after the line's start. */
size_t opool__diag_text(char *buf, size_t size, const opool__finding *f, const char *text);

/* The name of the check a load finding failed (opool_load_error.check): a
 * string constant, or the header field it names. */
const char *opool__load_check_name(const opool__finding *f);

/* call(ctx), a user's report being called for f: meanwhile, on this thread,
 * opool__diag_default_reporting() prints f's line (nests). */
void opool__diag_report_through(void (*call)(const void *ctx), const void *ctx,
                                const opool__finding *f);

/* opool_default_report(NULL, ...) called from inside
 * opool__diag_report_through: prints that finding's line and returns true;
 * false when no report is being called so on this thread. */
bool opool__diag_default_reporting(void);

/* ---- exhaustion episodes ---------------------------------------------------
 * An episode opens at a failed alloc and is reported at its 1st, 2nd, 4th,
 * 8th, ... failure (each power of two), so a pool held at its budget logs
 * O(log failures) lines. It ends at a free that leaves count <= capacity -
 * ceil(capacity / 4) live (a quarter of the slots free again):
 * opool__episode_recovers_at. Every operation is one relaxed atomic, so the
 * concurrent pool shares them; the record only rations reports and publishes
 * nothing. */

/* A failed alloc: counted in e's episode (opened by the first). Returns the
 * failure's number in the episode when it is to be reported, else 0. */
uint64_t opool__episode_failed(opool__episode *e);

/* An object was freed, leaving count of capacity live: ends an open episode
 * if that is a recovery. True if it ended one. */
bool opool__episode_freed(opool__episode *e, uint64_t count, uint64_t capacity);

/* The count at or below which a pool of capacity has recovered. */
static inline uint64_t opool__episode_recovers_at(uint64_t capacity) {
    return capacity - (capacity + 3) / 4;
}

/* Failed allocs of the open episode; 0 when none is open. */
static inline uint64_t opool__episode_failures(const opool__episode *e) {
    /* relaxed: the record only rations reports */
    return atomic_load_explicit(&e->failures, memory_order_relaxed);
}

/* ---- origins: no two live pools share a salt -------------------------------
 * A process-wide table of the generation origins (gen0) that pools of a kind
 * were given by an explicit salt, or kept from an image: two live pools with
 * one origin would accept each other's handles. The table's memory comes
 * from the C library (16 to 24 bytes a pool with such a salt); pools with a
 * derived salt are not in it. */

/* Enters owner (of kind, named name, given salt: origin salt & ~1).
 * exclusive (a create): OPOOL_EINVAL when a live object of kind already has
 * that origin, and a line on stderr says which (whatever the reports: no
 * object exists yet); not exclusive (a load): always entered. OPOOL_ENOMEM:
 * the table cannot grow. */
opool_status opool__origin_enter(opool__kind kind, uint32_t salt, const void *owner,
                                 const char *name, bool exclusive);

/* Owner's entry out of the table, if it has one. */
void opool__origin_leave(const void *owner);

/* Whether a live object of any kind has origin gen0 in the table. */
bool opool__origin_taken(uint32_t gen0);

#endif /* OPOOL_DIAG_H */
