#!/usr/bin/env python3
"""tools/benchtables.py -- the figure tables of README.md, docs/BENCHMARKS.md and
docs/DEBUGGING.md, generated from the benchmark results committed in docs/results/.

A document holds each table between two markers:

    <!-- bench: TABLE from docs/results/FILE.csv -->
    ...generated: do not edit...
    <!-- end bench -->

TABLE names one of the generators below; FILE is the results file it reads (the path is
relative to the repository root). This program rewrites what lies between the markers.

    python3 tools/benchtables.py               rewrite the tables of those three documents
                                               (make bench-tables)
    python3 tools/benchtables.py --check       fail, naming each table that differs from
                                               what its results file gives (the CTest test
                                               bench_tables_up_to_date); writes nothing
    --root DIR                                 the repository (default: this file's ../)
    FILE ...                                   other documents instead of the two

The CSVs are those the benchmark programs write (bench/bench_util.h, bench_mt.c,
bench_heap.c, bench_replay.c); `make bench-publish` copies them into docs/results. Each
table's caption names its results file, the run's machine and compiler (the CSV's cpu,
nproc, compiler and flags columns) and says when the run was a --quick one (its mode
column). A figure the file lacks (a subject not run, an N not reached) shows as "–"; a
results file that is missing gives a line saying which command writes it. The output is
deterministic: the same files give the same documents.
"""
import argparse
import csv
import math
import os
import re
import sys

DASH = "–"
BEGIN = re.compile(r"^<!-- bench: ([a-z0-9-]+) from (\S+) -->$")
END = "<!-- end bench -->"
DOCS = ["README.md", "docs/BENCHMARKS.md", "docs/DEBUGGING.md"]
WRITER = {  # which command writes each results file, for a missing one
    "core.csv": "make bench",
    "mt.csv": "make bench-mt",
    "heap.csv": "make bench-heap",
    "heap_soak.csv": "make bench-heap",
    "replay.csv": "make bench-heap",
}


# ---- reading a results file ----

class Results:
    def __init__(self, path, rel, link):
        self.rel, self.link = rel, link
        with open(path, newline="") as f:
            self.rows = list(csv.DictReader(f))

    def first(self, col):
        for r in self.rows:
            if r.get(col):
                return r[col]
        return ""

    def caption(self, what):
        """what the table shows, then where its figures come from: file, run, machine."""
        mode = self.first("mode")
        cpu, nproc = self.first("cpu"), self.first("nproc")
        compiler, flags = self.first("compiler"), self.first("flags")
        s = f"{what} From [{self.rel}]({self.link})"
        s += f" (`{mode}`)" if mode else ""
        s += f": {cpu}" if cpu else ""
        s += f", {nproc} cores" if nproc else ""
        s += f", {compiler}" if compiler else ""
        s += f" `{flags}`" if flags else ""
        s += "."
        if "--quick" in mode:
            s += " **A `--quick` run: a check that everything runs, not a measurement.**"
        return s

    def find(self, **kw):
        for r in self.rows:
            if all(r.get(k) == str(v) for k, v in kw.items()):
                return r
        return None

    def values(self, col, **kw):
        out = []
        for r in self.rows:
            if all(r.get(k) == str(v) for k, v in kw.items()) and r.get(col) not in out:
                out.append(r.get(col))
        return out


def num(r, col):
    try:
        v = float(r[col]) if r is not None and r.get(col) not in (None, "") else None
    except ValueError:
        return None
    return v if v is not None and math.isfinite(v) else None


def f2(v):
    return DASH if v is None else f"{v:.2f}"


def f1(v):
    return DASH if v is None else f"{v:.1f}"


def fx(v):
    return DASH if v is None else f"{v:.2f}x"


def mops(v):
    return DASH if v is None else (f"{v:.1f}" if v >= 10 else f"{v:.2f}")


def nlabel(n):
    n = int(n)
    for unit, div in (("M", 1000000), ("K", 1000)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def geomean(vs):
    vs = [v for v in vs if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in vs) / len(vs)) if vs else None


# ---- the core pool: docs/results/core.csv (opool_bench) ----

MALLOCS = ["mimalloc", "jemalloc", "tcmalloc"]


def core_size(res):
    sizes = res.values("object_size")
    return "64" if "64" in sizes else (sizes[0] if sizes else "64")


def core_ns(res, wl, n, subj, size):
    """'median (ratio to ideal_gen)', '*' after an unvalidated lookup; '–' if absent."""
    if n is None:
        return DASH
    r = res.find(workload=wl, n=n, subject=subj, object_size=size)
    v = num(r, "median_ns")
    if v is None:
        return DASH
    star = "*" if "unvalidated" in r.get("note", "").lower() else ""
    ratio = num(r, "ratio_vs_ideal_gen")
    if subj == "ideal_gen" or ratio is None:
        return f"{v:.2f}{star}"
    return f"{v:.2f}{star} ({ratio:.2f}x)"


def best_of(res, wl, n, subjects, size):
    """The fastest of subjects: 'median (ratio) name', or '–'."""
    best = None
    for s in subjects:
        r = res.find(workload=wl, n=n, subject=s, object_size=size) if n else None
        v = num(r, "median_ns")
        if v is not None and (best is None or v < best[0]):
            best = (v, s)
    if best is None:
        return DASH
    return core_ns(res, wl, n, best[1], size) + " " + best[1]


def ns_of(res, wl, size):
    ns = sorted({int(n) for n in res.values("n", workload=wl, object_size=size) if n})
    return [str(n) for n in ns]


def lo_hi(res, wl, size):
    ns = ns_of(res, wl, size)
    return (ns[0], ns[-1]) if ns else (None, None)


def core_64(res):
    z = core_size(res)
    cols = [("opool", "opool"), ("opool, no live list", "opool no live list"),
            ("opool fixed", "opool fixed"), ("opl::pool<T>", "opl::pool<T>"),
            ("ideal_gen", "ideal_gen"), ("ideal", "ideal"), ("glibc malloc", "malloc"),
            None, ("boost::pool<>", "boost::pool<>"), ("plf::colony", "plf::colony"),
            ("slotmap", "slotmap")]
    rows = []
    for wl in ("churn", "lookup"):
        for n in dict.fromkeys(lo_hi(res, wl, z)):
            rows.append((f"{wl}, {nlabel(n) if n else DASH} live", wl, n, {}))
    n = lo_hi(res, "fill+drain", z)[1]
    rows.append((f"fill+drain, {nlabel(n) if n else DASH}", "fill+drain", n, {}))
    n = lo_hi(res, "iterate 10% live", z)[1]
    rows.append((f"iterate, 10% of {nlabel(n) if n else DASH} slots live, per live object",
                 "iterate 10% live", n,
                 {"opool": "opool sorted, bwd", "ideal_gen": "ideal_gen gen scan"}))
    n = lo_hi(res, "particles", z)[1]
    rows.append((f"particles, ~{nlabel(n) if n else DASH} live, per update", "particles", n, {}))
    n = lo_hi(res, "resident", z)[1]
    rows.append((f"resident, {nlabel(n) if n else DASH} live, bytes per object", "resident", n, {}))
    body = []
    for label, wl, n, alias in rows:
        line = [label]
        for c in cols:
            if c is None:
                line.append(best_of(res, wl, n, MALLOCS, z))
            else:
                line.append(core_ns(res, wl, n, alias.get(c[1], c[1]), z))
        body.append(line)
    head = [f"workload ({z} B)"] + [c[0] if c else "best of mimalloc / jemalloc / tcmalloc"
                                    for c in cols]
    return [res.caption(f"Median ns per operation at {z}-byte objects, in brackets the ratio "
                        "to ideal_gen's median; `*`: an unvalidated lookup; iterate: opool's "
                        "documented loop after `opool_sort`, ideal_gen's generation scan."),
            ""] + table(head, body)


def core_arena_frame(res):
    z = core_size(res)
    cols = ["opool", "opool sorted/frame", "opool fixed", "ideal_gen", "plf::colony", "slotmap",
            "dense_slotmap", "hop_slotmap", "slab"]
    rows = []
    for wl, label in (("arena insert", "arena: insert into a fresh container"),
                      ("arena get", "arena: get"), ("arena remove", "arena: remove"),
                      ("arena insert used", "arena: insert into the used container")):
        for n in ns_of(res, wl, z):
            rows.append((f"{label}, {nlabel(n)}", wl, n))
    for wl in ("frame 1%", "frame 10%"):
        for n in ns_of(res, wl, z):
            rows.append((f"{wl} changed, {nlabel(n)}", wl, n))
    body = [[label] + [core_ns(res, wl, n, s, z) for s in cols] for label, wl, n in rows]
    if not body:
        body = [[DASH] * (len(cols) + 1)]
    head = [f"workload ({z} B)", "opool", "opool, `opool_sort` per frame", "opool fixed",
            "ideal_gen", "plf::colony", "slotmap", "DenseSlotMap", "HopSlotMap", "slab*"]
    return [res.caption("Median ns per operation (frame: per object visited), in brackets the "
                        "ratio to ideal_gen's; slab*: unversioned keys."), ""] + table(head, body)


def ratio_range(res, wl, subj, size):
    vs = [num(res.find(workload=wl, n=n, subject=subj, object_size=size), "ratio_vs_ideal_gen")
          for n in ns_of(res, wl, size)]
    vs = [v for v in vs if v is not None]
    if not vs:
        return DASH
    return f"{min(vs):.2f}x" if len(vs) == 1 else f"{min(vs):.2f}-{max(vs):.2f}x"


def core_sizes(res):
    body = []
    for z in sorted(res.values("object_size"), key=lambda s: int(s or 0)):
        ns = ns_of(res, "churn", z)
        fd = lo_hi(res, "fill+drain", z)[1]
        fr = lo_hi(res, "frame 1%", z)[1]
        frame = " / ".join(f2(num(res.find(workload="frame 1%", n=fr, subject=s, object_size=z),
                                  "median_ns")) for s in ("opool", "opool sorted/frame"))
        body.append([f"{z} B",
                     f"{nlabel(ns[0])}-{nlabel(ns[-1])}" if ns else DASH,
                     ratio_range(res, "churn", "opool", z),
                     ratio_range(res, "churn", "opool no live list", z),
                     ratio_range(res, "lookup", "opool", z),
                     f"{nlabel(fd)}: " + core_ns(res, "fill+drain", fd, "opool", z) if fd else DASH,
                     f"{nlabel(fr)}: {frame}" if fr else DASH])
    head = ["object", "N", "churn: x ideal_gen", "churn, no live list", "lookup: x ideal_gen",
            "fill+drain", "frame 1%: opool / `opool_sort` per frame"]
    return [res.caption("opool at every object size: the range of its ratios to ideal_gen over "
                        "the N of the run, and ns at the largest N."), ""] + table(head, body)


def core_caveats(res):
    z = core_size(res)
    body = []
    ns = sorted({int(n) for wl in ("churn", "lookup", "side get")
                 for n in res.values("n", workload=wl, object_size=z) if n})
    for n in map(str, ns):
        def ratio(wl, a, b):
            va = num(res.find(workload=wl, n=n, subject=a, object_size=z), "median_ns")
            vb = num(res.find(workload=wl, n=n, subject=b, object_size=z), "median_ns")
            return fx(va / vb) if va is not None and vb else DASH
        g = num(res.find(workload="side get", n=n, subject="opool_get", object_size=z), "median_ns")
        s = num(res.find(workload="side get", n=n, subject="opool_side_get", object_size=z),
                "median_ns")
        body.append([nlabel(n), ratio("churn", "opool grown", "opool"),
                     ratio("lookup", "opool grown", "opool"), f2(g), f2(s),
                     ratio("side get", "opool_side_get", "opool_get")])
    head = ["N", "churn: grown / fixed", "lookup: grown / fixed", "`opool_get` ns",
            "`opool_side_get` ns", "side / get"]
    return [res.caption(f"A grown pool against the fixed one, and a side table's lookup "
                        f"against the pool's, {z}-byte objects."), ""] + table(head, body)


def core_flags(res):
    wl, subjects = "churn, debug flags", ["opool", "opool OPOOL_ZERO", "opool OPOOL_POISON"]
    body = []
    for z in sorted(res.values("object_size", workload=wl), key=lambda s: int(s or 0)):
        n = lo_hi(res, wl, z)[1]
        plain = num(res.find(workload=wl, n=n, subject="opool", object_size=z), "median_ns")
        line = [f"{z} B"]
        for s in subjects:
            v = num(res.find(workload=wl, n=n, subject=s, object_size=z), "median_ns")
            line.append(f"{f2(v)} ns" + (f" ({v / plain:.1f}x)" if s != "opool" and v and plain
                                         else ""))
        body.append(line)
    if not body:
        body = [[DASH] * (len(subjects) + 1)]
    n = lo_hi(res, wl, core_size(res))[1]
    head = ["object size", "no flags", "`OPOOL_ZERO`", "`OPOOL_POISON`"]
    return [res.caption(f"Median ns per free+alloc pair of random handles among "
                        f"{nlabel(n) if n else DASH} live objects (`opool_bench --only flags`), "
                        "in brackets the ratio to the same pool without flags."), ""] + \
        table(head, body)


def readme_summary(res):
    z = core_size(res)
    others = MALLOCS + ["boost::pool<>", "plf::colony", "slotmap", "slab"]
    rows = []
    lo, hi = lo_hi(res, "churn", z)
    for n in dict.fromkeys((lo, hi)):
        rows.append((f"free + alloc, {nlabel(n) if n else DASH} live", "churn", n))
    n = lo_hi(res, "lookup", z)[1]
    rows.append((f"validated lookup, {nlabel(n) if n else DASH} live", "lookup", n))
    n = lo_hi(res, "fill+drain", z)[1]
    rows.append((f"fill then drain, {nlabel(n) if n else DASH}", "fill+drain", n))
    n = lo_hi(res, "frame 1%", z)[1]
    rows.append((f"game frame, 1% changed, {nlabel(n) if n else DASH} live", "frame 1%", n))
    pools = ["opool", "opool no live list", "opool fixed", "opool fixed no live list"]
    body = [[label] + [core_ns(res, wl, n, p, z) for p in pools] +
            [core_ns(res, wl, n, "ideal_gen", z), core_ns(res, wl, n, "malloc", z),
             best_of(res, wl, n, others, z)]
            for label, wl, n in rows]
    head = [f"ns per operation ({z} B)", "opool", "no live list", "fixed", "fixed, no live list",
            "minimal safe pool", "glibc malloc", "fastest other"]
    return [res.caption("opool as made at run time (`opool_create`) and with its options fixed "
                        "at compile time (`OPOOL_TYPED_FIXED`), each with and without a live "
                        "list. The minimal safe pool is a hand-written generation-checked pool "
                        "(ideal_gen); in brackets, the ratio to it; `*`: not validated."),
            ""] + table(head, body)


# ---- the concurrent pool: docs/results/mt.csv (bench_mt) ----

def mt_pairs(res):
    threads = sorted({int(t) for t in res.values("threads") if t})
    subjects = res.values("subject")
    top = str(threads[-1]) if threads else None
    body = []
    for s in subjects:
        line = [s]
        for t in threads:
            line.append(mops(num(res.find(subject=s, threads=t), "median_mops")))
        p = num(res.find(subject=s, threads=top), "lat_p999_ns") if top else None
        line.append(DASH if not p else f"{p:.0f} ns")
        body.append(line)
    head = ["subject"] + [f"T={t}" for t in threads] + [f"T={top} p99.9" if top else "p99.9"]
    return [res.caption("Million alloc+free pairs a second, all threads (bulk32: million "
                        "objects), median; p99.9: one alloc or free's latency."),
            ""] + table(head, body)


# ---- the heap: docs/results/heap.csv, heap_soak.csv (bench_heap) ----

HEAPS = ["opool_heap", "glibc", "mimalloc", "jemalloc", "tcmalloc"]


def heap_table(res):
    keys = []
    for r in res.rows:
        k = (r["workload"], r["n"])
        if k not in keys:
            keys.append(k)
    body = []
    for wl, n in keys:
        line = [wl, f"{int(n):,}" if n else DASH]
        for s in HEAPS:
            line.append(f2(num(res.find(workload=wl, n=n, subject=s), "median_ns")))
        line.append(fx(num(res.find(workload=wl, n=n, subject="opool_heap"),
                           "ratio_vs_mimalloc")))
        body.append(line)
    return [res.caption("ns per operation, median."), ""] + table(
        ["workload", "N"] + HEAPS + ["heap / mimalloc"], body)


def heap_soak(res):
    mib = 1024.0 * 1024.0
    body = []
    for s in res.values("subject"):
        r = res.find(subject=s)
        base = num(r, "rss_base_bytes")

        def over(col):
            v = num(r, col)
            return f1((v - base) / mib) if v is not None and base is not None else DASH
        body.append([s, over("rss_peak_bytes"), over("rss_end_bytes"),
                     over("rss_after_free_bytes"), fx(num(r, "rss_per_live_peak"))])
    return [res.caption("The soak: RSS in MiB over the baseline taken just before it."),
            ""] + table(["subject", "peak", "at the end", "all freed", "peak RSS / peak live"],
                        body)


# ---- real programs' traces: docs/results/replay.csv (bench_replay) ----

def replay_table(res):
    mib = 1024.0 * 1024.0
    body = []
    for t in res.values("trace"):
        for s in res.values("subject", trace=t):
            r = res.find(trace=t, subject=s)
            peak = num(r, "rss_peak_bytes")  # (bench_replay writes it over rss_base_bytes)
            body.append([t, s, f1(num(r, "median_ms")), fx(num(r, "ratio_time_vs_glibc")),
                         fx(num(r, "ratio_time_vs_mimalloc")),
                         f1(peak / mib) if peak is not None else DASH,
                         fx(num(r, "ratio_rss_vs_glibc")), fx(num(r, "ratio_rss_vs_mimalloc")),
                         f"{num(r, 'warm_minflt'):,.0f}" if num(r, "warm_minflt") is not None
                         else DASH])
    gm = [fx(geomean([num(res.find(trace=t, subject="opool_heap"), c)
                      for t in res.values("trace")]))
          for c in ("ratio_time_vs_glibc", "ratio_time_vs_mimalloc", "ratio_rss_vs_glibc",
                    "ratio_rss_vs_mimalloc")]
    body.append(["geometric mean", "opool_heap", "", gm[0], gm[1], "", gm[2], gm[3], ""])
    head = ["trace", "subject", "ms, median", "x glibc", "x mimalloc", "peak RSS MiB", "x glibc",
            "x mimalloc", "minor faults per warm replay"]
    return [res.caption("Time per warm replay and the cold replay's peak RSS, each with its "
                        "ratios to glibc's and mimalloc's."), ""] + table(head, body)


def replay_traces(res):
    mib = 1024.0 * 1024.0
    body = []
    for t in res.values("trace"):
        r = res.find(trace=t)
        calls, live, peak = num(r, "calls"), num(r, "max_live_blocks"), num(r, "live_peak_bytes")
        body.append([t, DASH if calls is None else f"{calls:,.0f}",
                     DASH if live is None else f"{live:,.0f}",
                     DASH if peak is None else f"{peak / mib:.1f}"])
    return [res.caption("The calls each replay makes, and the most blocks and bytes live at "
                        "once."), ""] + table(["trace", "calls replayed", "most live blocks",
                                               "most live MiB"], body)


TABLES = {
    "readme-summary": readme_summary,
    "core-64": core_64,
    "core-arena-frame": core_arena_frame,
    "core-sizes": core_sizes,
    "core-caveats": core_caveats,
    "core-flags": core_flags,
    "mt-pairs": mt_pairs,
    "heap": heap_table,
    "heap-soak": heap_soak,
    "replay": replay_table,
    "replay-traces": replay_traces,
}


# ---- the documents ----

def generate(root, name, rel, doc):
    if name not in TABLES:
        raise SystemExit(f"benchtables: unknown table '{name}' (known: {', '.join(TABLES)})")
    path = os.path.join(root, rel)
    if not os.path.isfile(path):
        cmd = WRITER.get(os.path.basename(rel), "its benchmark")
        return [f"*No results yet: `{cmd}` writes `{rel}` (the table fills itself then).*"]
    link = os.path.relpath(rel, os.path.dirname(doc) or ".")
    return TABLES[name](Results(path, rel, link))


def render(root, doc):
    """The document with its tables regenerated, and the names of its tables."""
    with open(os.path.join(root, doc)) as f:
        lines = f.read().split("\n")
    out, names, i = [], [], 0
    while i < len(lines):
        m = BEGIN.match(lines[i])
        out.append(lines[i])
        i += 1
        if not m:
            continue
        j = i
        while j < len(lines) and lines[j] != END:
            if BEGIN.match(lines[j]):
                break
            j += 1
        if j == len(lines) or lines[j] != END:
            raise SystemExit(f"benchtables: {doc}:{i}: '{m.group(0)}' has no '{END}'")
        names.append(m.group(1))
        out += generate(root, m.group(1), m.group(2), doc)
        i = j
    return "\n".join(out), names


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   ".."))
    ap.add_argument("docs", nargs="*", default=DOCS)
    a = ap.parse_args()
    stale = []
    for doc in a.docs:
        with open(os.path.join(a.root, doc)) as f:
            old = f.read()
        new, names = render(a.root, doc)
        if new == old:
            continue
        if a.check:
            new_l, old_l = new.split("\n"), old.split("\n")
            at = next((k for k, (x, y) in enumerate(zip(new_l, old_l)) if x != y),
                      min(len(new_l), len(old_l)))
            stale.append(f"{doc}:{at + 1}: differs from what its results file gives:\n"
                         f"    is:        {old_l[at] if at < len(old_l) else '(end)'}\n"
                         f"    generated: {new_l[at] if at < len(new_l) else '(end)'}")
        else:
            with open(os.path.join(a.root, doc), "w") as f:
                f.write(new)
            print(f"benchtables: {doc}: {len(names)} table(s) regenerated")
    if stale:
        print("benchtables: a generated table was edited, or its results file changed; run "
              "`make bench-tables` (figures come from docs/results/*.csv, not from the page):",
              file=sys.stderr)
        for s in stale:
            print("  " + s, file=sys.stderr)
        return 1
    if a.check:
        print(f"benchtables: {', '.join(a.docs)}: every table matches docs/results")
    return 0


if __name__ == "__main__":
    sys.exit(main())
