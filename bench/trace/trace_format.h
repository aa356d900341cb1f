/*
 * trace_format.h -- the format of an allocation trace: what
 * bench/trace/tracer.c writes and bench/bench_replay.c reads (one place for
 * both; no code, C only).
 *
 * Binary; integers are unsigned LEB128 varints:
 *   "OPTRACE1"                 8 bytes of magic
 *   varint len, len bytes      text: "pid=<p> ppid=<q> exe=<path> argv=<a b c>"
 *   records, each one opcode byte and its varints:
 *     1  MALLOC        size                 -> new id
 *     2  CALLOC        nmemb size           -> new id (nmemb * size zeroed bytes)
 *     3  REALLOC       back size            old block gone -> new id
 *     4  FREE          back
 *     5  MEMALIGN      align size           -> new id (memalign)
 *     6  POSIX_MEMALIGN align size          -> new id
 *     7  ALIGNED_ALLOC align size           -> new id
 *     8  VALLOC        size                 -> new id (page aligned)
 *     9  PVALLOC       size                 -> new id (page aligned, size rounded to pages)
 *    10  REALLOC_FREE  back                 realloc(p, 0) that freed p and returned NULL
 *    11  THREAD        tid                  later records are this thread's (0 = the first
 *                                           thread that called; assigned in order of first call)
 *    12  STATS         n, n varints         written at exit: records, unknown frees,
 *                                           unknown reallocs, calls passed through untraced
 *    13  REALLOC_NEW   size                 realloc(NULL, size) -> new id
 *   reallocarray(p, n, s) is recorded as realloc(p, n * s).
 * "back" = next id - 1 - the id of the block concerned. A trace may end
 * anywhere after a record (a process killed, or one that called _exit,
 * loses what was still buffered: up to 1 MiB); STATS is not necessarily
 * last (calls after the exit handlers are flushed one by one).
 * Block ids: the n-th block the trace hands out, from 0; every successful
 * allocation and every realloc's result takes the next one.
 */
#ifndef OPOOL_BENCH_TRACE_FORMAT_H
#define OPOOL_BENCH_TRACE_FORMAT_H

#define TRACE_MAGIC "OPTRACE1" /* 8 bytes, no NUL */

enum trace_op {
    T_MALLOC = 1,
    T_CALLOC,
    T_REALLOC,
    T_FREE,
    T_MEMALIGN,
    T_POSIX_MEMALIGN,
    T_ALIGNED_ALLOC,
    T_VALLOC,
    T_PVALLOC,
    T_REALLOC_FREE,
    T_THREAD,
    T_STATS,
    T_REALLOC_NEW
};

#endif /* OPOOL_BENCH_TRACE_FORMAT_H */
