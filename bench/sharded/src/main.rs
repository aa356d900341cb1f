//! bench_mt_sharded_slab -- Rust's sharded_slab crate as a subject of bench_mt.
//!
//! Usage (bench_mt runs it): bench_mt_sharded_slab --child [--quick] [--reps N]
//!                                                 [--size 16|64|256] [--threads 1,2,4,8]
//!
//! Subject:
//!   sharded_slab   one sharded_slab::Pool<Obj> shared by the T threads: create_with (alloc,
//!                  the tags written into the object in place), clear (free), get (the check
//!                  before the free). Keys carry the slot's generation, so a stale key is
//!                  refused as opool_mt refuses a stale handle. The pool is sharded by thread:
//!                  a thread creates in its own shard (pages of 32, 64, ... slots, allocated
//!                  when first needed, each with a free list only its owner pops and pushes,
//!                  and a lock-free one for frees by other threads); each slot has an atomic
//!                  lifecycle word (generation, state, reference count) that get, clear and
//!                  create update by compare-and-swap.
//!                  Pool, not the crate's Slab: a Pool keeps its objects in their slots and
//!                  reuses them, as an object pool does (Obj's Clear does nothing: a free
//!                  leaves the memory as it is, as the C pools' do), where Slab::insert moves
//!                  a whole value into the slot and remove (or take) moves it out again; on
//!                  the 2-core VM of docs/BENCHMARKS.md, Slab's insert, get and remove took
//!                  about 1.2x Pool's time per pair.
//!
//! The workload is bench/bench_mt.c's (its WORKLOAD section), step for step: T threads share
//! one pool; each keeps 16 live objects; per step it picks k with the same splitmix64 stream
//! (bench_util.h's bench_rng_next, bench_below and bench_seed, reproduced below, seeded by
//! thread index and repetition as there), reads object k's first and last word back through
//! get and checks them, clears it, and creates its replacement, writing the next tag to its
//! first word and the tag's complement to its last. A wrong word, a refused key or a failed
//! create fails the run: the pool handed one slot to two owners. After the run every key must
//! be refused: each object was freed once. The method is bench_mt.c's too:
//! calibration, warm-up and recorded repetitions, the start barrier, parallelism, and the
//! latency run with its timer and histogram (run_once, calibrate_pairs, measure_latency,
//! timer_calibrate, lat_bucket there): any change to those must be made here too.
//!
//! Objects are --size bytes: the first and last word and padding between them, so a create
//! writes the two words and nothing else, as the C subjects do. Every run gets a new pool, as
//! every C run does; a Pool has no capacity to give (its pages grow on demand, each slot's
//! object made by Default when its page is allocated: in the untimed setup here, as 16 live
//! objects per thread fit in each shard's first page of 32).
//!
//! Output: bench/bench_child.h's protocol (INFO and ROW lines on stdout, bench_mt.c's extra
//! fields: key, variant, pairs, latency samples, p50, p99, p99.9, p99.99, max, parallelism);
//! progress on stderr.

use sharded_slab::{Clear, Pool};
use std::mem::MaybeUninit;
use std::process::exit;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

// ==== bench_util.h's random sequence, bit for bit ================================

#[path = "../../rust_common/bench_rng.rs"]
mod bench_rng;
use bench_rng::{below, seed};

/// Results that must not be optimised away (bench_util.h's bench_sink).
static SINK: AtomicU64 = AtomicU64::new(0);

// bench_mt.c's constants
const WS: u32 = 16; // live objects per thread
const W_MT: u32 = 7; // the workload identifier mixed into the seeds (run_once's bench_seed)
const MAX_THREADS: usize = 64;
const MAX_REPS: i32 = 64; // BENCH_MAX_REPS

const NAME: &str = "sharded_slab";
const KEY: &str = "sharded_slab"; // bench_mt.c's subj_key
const VARIANT: &str = "glibc"; // Rust's System allocator, the pages' memory, is the C library's malloc

fn fail(msg: &str) -> ! {
    eprintln!("\nbench_mt_sharded_slab: FAIL: {}", msg);
    exit(1);
}

// ==== clocks ========================================================================

/// The time since the run's epoch in ns (Instant is CLOCK_MONOTONIC on Linux, bench_now_ns's
/// clock).
fn ns_since(epoch: Instant) -> u64 {
    epoch.elapsed().as_nanos() as u64
}

/// This thread's CPU time in ns (CLOCK_THREAD_CPUTIME_ID; Rust's standard library has no such
/// clock, so clock_gettime is called directly: libc is linked anyway).
#[cfg(target_os = "linux")]
fn thread_cpu_ns() -> u64 {
    use std::os::raw::{c_int, c_long};
    #[repr(C)]
    struct Timespec {
        tv_sec: c_long,
        tv_nsec: c_long,
    }
    extern "C" {
        fn clock_gettime(clock: c_int, ts: *mut Timespec) -> c_int;
    }
    const CLOCK_THREAD_CPUTIME_ID: c_int = 3;
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec for the call to fill
    if unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(not(target_os = "linux"))]
fn thread_cpu_ns() -> u64 {
    0 // parallelism then reads 0
}

/// bench_mt.c's tick_begin and tick_end: lfence; rdtsc ... rdtscp; lfence on x86-64, elsewhere
/// ns from the monotonic clock.
#[cfg(target_arch = "x86_64")]
mod tick {
    use std::arch::x86_64::{__rdtscp, _mm_lfence, _rdtsc};
    pub const TSC: bool = true;
    #[inline(always)]
    pub fn begin(_epoch: std::time::Instant) -> u64 {
        // SAFETY: lfence and rdtsc are in every x86-64 processor
        unsafe {
            _mm_lfence();
            let t = _rdtsc();
            _mm_lfence();
            t
        }
    }
    #[inline(always)]
    pub fn end(_epoch: std::time::Instant) -> u64 {
        let mut aux = 0u32;
        // SAFETY: rdtscp is in every x86-64 processor bench_mt's own timer runs on
        unsafe {
            let t = __rdtscp(&mut aux);
            _mm_lfence();
            t
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod tick {
    pub const TSC: bool = false;
    #[inline(always)]
    pub fn begin(epoch: std::time::Instant) -> u64 {
        super::ns_since(epoch)
    }
    #[inline(always)]
    pub fn end(epoch: std::time::Instant) -> u64 {
        super::ns_since(epoch)
    }
}

/// ns per tick and the timer's own median cost in ticks (bench_mt.c's timer_calibrate).
struct Timer {
    ns_per_tick: f64,
    overhead: u64,
}

fn timer_calibrate(epoch: Instant) -> Timer {
    let mut ns_per_tick = 1.0;
    if tick::TSC {
        let (n0, c0) = (ns_since(epoch), tick::begin(epoch));
        std::thread::sleep(Duration::from_millis(50));
        let (n1, c1) = (ns_since(epoch), tick::begin(epoch));
        if c1 > c0 {
            ns_per_tick = (n1 - n0) as f64 / (c1 - c0) as f64;
        }
    }
    let mut s: Vec<u32> = (0..100001)
        .map(|_| {
            let a = tick::begin(epoch);
            let b = tick::end(epoch);
            b.wrapping_sub(a) as u32
        })
        .collect();
    s.sort_unstable();
    Timer {
        ns_per_tick,
        overhead: s[s.len() / 2] as u64,
    }
}

// ==== the latency histogram (bench_mt.c's lat_hist) ================================
// In ticks: exact below 64, then 32 buckets per power of two (3% wide) up to 2^41 ticks; the
// largest sample is kept exactly.

const LAT_BUCKETS: usize = 64 + 35 * 32;

struct Hist {
    count: Vec<u64>,
    max: u64,
}

impl Hist {
    fn new() -> Self {
        Hist {
            count: vec![0; LAT_BUCKETS],
            max: 0,
        }
    }

    #[inline(always)]
    fn record(&mut self, d: u64) {
        let b = lat_bucket(d);
        // SAFETY: lat_bucket returns < LAT_BUCKETS
        unsafe { *self.count.get_unchecked_mut(b) += 1 };
        if d > self.max {
            self.max = d;
        }
    }
}

#[inline(always)]
fn lat_bucket(v: u64) -> usize {
    if v < 64 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    if e > 40 {
        return LAT_BUCKETS - 1;
    }
    64 + (e as usize - 6) * 32 + ((v >> (e - 5)) & 31) as usize
}

/// the middle of bucket b, in ticks
fn lat_bucket_mid(b: usize) -> f64 {
    if b < 64 {
        return b as f64;
    }
    let (e, m) = (6 + (b - 64) / 32, (b - 64) % 32);
    let lo = ((32 + m as u64) << (e - 5)) as f64;
    lo + (1u64 << (e - 5)) as f64 / 2.0
}

#[derive(Default)]
struct LatStats {
    n: u64,
    p50: f64,
    p99: f64,
    p999: f64,
    p9999: f64,
    max: f64,
}

// ==== the objects and one run ======================================================

/// An object of 16 + 8 * PAD bytes: the first word, padding left uninitialised, the last word.
#[repr(C)]
struct Obj<const PAD: usize> {
    first: u64,
    _pad: MaybeUninit<[u64; PAD]>,
    last: u64,
}

/// What a Pool puts in a slot when it allocates the slot's page.
impl<const PAD: usize> Default for Obj<PAD> {
    fn default() -> Self {
        Obj {
            first: 0,
            _pad: MaybeUninit::uninit(),
            last: 0,
        }
    }
}

/// What Pool::clear does to a freed object: nothing, as a C pool's free (the next create_with
/// writes both words).
impl<const PAD: usize> Clear for Obj<PAD> {
    #[inline(always)]
    fn clear(&mut self) {}
}

/// What the threads of one run share (bench_mt.c's run_ctx).
struct Ctx<'a, const P: usize> {
    pool: &'a Pool<Obj<P>>,
    nthreads: u32,
    pairs: u64,
    epoch: Instant,
    arrived: AtomicU32,
    go: AtomicBool,
    t_start: AtomicU64,
}

/// What a thread reports (bench_mt.c's worker).
struct WorkerOut {
    t_end: u64,
    cpu_ns: u64,
    sum: u64,
    bad: u64,
}

fn start_barrier<const P: usize>(c: &Ctx<P>) {
    let n = c.arrived.fetch_add(1, Ordering::AcqRel) + 1;
    if n == c.nthreads {
        c.t_start.store(ns_since(c.epoch), Ordering::Relaxed);
        c.go.store(true, Ordering::Release);
    } else {
        while !c.go.load(Ordering::Acquire) {
            std::thread::yield_now(); // sched_yield, as bench_mt.c's barrier
        }
    }
}

/// alloc: a new object tagged t; its key
#[inline(always)]
fn create<const P: usize>(c: &Ctx<P>, t: u64) -> usize {
    let key = c.pool.create_with(|o| {
        o.first = t;
        o.last = !t;
    });
    match key {
        Some(key) => key,
        None => fail(&format!(
            "{}, {} threads: create failed (shard full?)",
            NAME, c.nthreads
        )),
    }
}

/// The tags of key's object: 1 if they are not (t, !t) or key is refused; its first word is
/// added to sum.
#[inline(always)]
fn check<const P: usize>(c: &Ctx<P>, key: usize, t: u64, sum: &mut u64) -> u64 {
    match c.pool.get(key) {
        Some(o) => {
            *sum = sum.wrapping_add(o.first);
            ((o.first != t) | (o.last != !t)) as u64
        }
        None => 1,
    }
}

/// The thread body, one compiled loop per object size and mode (bench_mt.c's worker_body).
/// Tags: thread index in the top byte, step below.
#[inline(never)]
fn worker<const P: usize, const LAT: bool>(
    c: &Ctx<P>,
    idx: usize,
    seed: u64,
    lat: &mut Hist,
) -> WorkerOut {
    let id = (idx as u64) << 56;
    let mut h = [0usize; WS as usize];
    let mut tag = [0u64; WS as usize];
    let (mut seed, mut sum, mut bad) = (seed, 0u64, 0u64);
    for k in 0..WS as usize {
        tag[k] = id | k as u64;
        h[k] = create(c, tag[k]);
    }

    start_barrier(c);
    let cpu0 = thread_cpu_ns();
    for it in 0..c.pairs {
        let k = below(&mut seed, WS) as usize;
        // SAFETY: k < WS, the arrays' length
        let (hk, tk) = unsafe { (h.get_unchecked_mut(k), tag.get_unchecked_mut(k)) };
        bad += check(c, *hk, *tk, &mut sum);
        let t = id | (it + WS as u64);
        if LAT {
            let a = tick::begin(c.epoch);
            let ok = c.pool.clear(*hk);
            let b = tick::end(c.epoch);
            lat.record(b.wrapping_sub(a));
            bad += !ok as u64;
            let a = tick::begin(c.epoch);
            *hk = create(c, t);
            let b = tick::end(c.epoch);
            lat.record(b.wrapping_sub(a));
        } else {
            bad += !c.pool.clear(*hk) as u64;
            *hk = create(c, t);
        }
        *tk = t;
    }
    let t_end = ns_since(c.epoch);
    let cpu_ns = thread_cpu_ns().wrapping_sub(cpu0);

    for k in 0..WS as usize {
        bad += check(c, h[k], tag[k], &mut sum);
        bad += !c.pool.clear(h[k]) as u64;
        // freed once: the key is stale now (bench_mt.c's teardown checks its pools' counts;
        // a Pool has none)
        bad += c.pool.get(h[k]).is_some() as u64;
    }
    WorkerOut {
        t_end,
        cpu_ns,
        sum,
        bad,
    }
}

/// One run (bench_mt.c's run_once): wall ns from the barrier's release to the last thread's
/// end, and the parallelism (the threads' CPU time over that wall time). lat: a latency run,
/// one histogram per thread (reset here).
fn run_once<const P: usize>(
    nthreads: u32,
    pairs: u64,
    rep: i32,
    lat: Option<&mut Vec<Hist>>,
) -> (u64, f64) {
    let pool: Pool<Obj<P>> = Pool::new();
    let c = Ctx {
        pool: &pool,
        nthreads,
        pairs,
        epoch: Instant::now(),
        arrived: AtomicU32::new(0),
        go: AtomicBool::new(false),
        t_start: AtomicU64::new(0),
    };
    let timed = lat.is_some();
    let mut own: Vec<Hist> = Vec::new();
    let hists = match lat {
        Some(v) => {
            v.clear();
            v.extend((0..nthreads).map(|_| Hist::new()));
            v
        }
        None => {
            own.extend((0..nthreads).map(|_| Hist {
                count: Vec::new(), // never recorded into
                max: 0,
            }));
            &mut own
        }
    };
    let outs: Vec<WorkerOut> = std::thread::scope(|s| {
        let handles: Vec<_> = hists
            .iter_mut()
            .enumerate()
            .map(|(i, hist)| {
                let c = &c;
                let sd = seed(W_MT, nthreads, rep, i as u32);
                std::thread::Builder::new()
                    .spawn_scoped(s, move || {
                        if timed {
                            worker::<P, true>(c, i, sd, hist)
                        } else {
                            worker::<P, false>(c, i, sd, hist)
                        }
                    })
                    .unwrap_or_else(|e| fail(&format!("thread {} of {}: {}", i + 1, nthreads, e)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| fail("a worker thread panicked"))
            })
            .collect()
    });
    let (mut end, mut sum, mut bad, mut cpu) = (0u64, 0u64, 0u64, 0u64);
    for o in &outs {
        end = end.max(o.t_end);
        sum = sum.wrapping_add(o.sum);
        bad += o.bad;
        cpu += o.cpu_ns;
    }
    if bad != 0 {
        fail(&format!(
            "{}, {} threads: {} objects read back wrong or keys refused (or accepted after \
             the free): the pool gave one object to two owners",
            NAME, nthreads, bad
        ));
    }
    SINK.fetch_add(sum, Ordering::Relaxed);
    let t_start = c.t_start.load(Ordering::Relaxed);
    let wall = end.saturating_sub(t_start);
    let par = if wall > 0 {
        cpu as f64 / wall as f64
    } else {
        0.0
    };
    (wall, par)
}

// ==== measurement of one point (bench_mt.c's calibrate_pairs, measure_latency) =====

struct Opt {
    quick: bool,
    size: usize,
    reps: i32,
    threads: Vec<u32>,
}

/// Pairs per thread for a repetition of about 0.25 s (--quick: 0.03 s).
fn calibrate_pairs<const P: usize>(opt: &Opt, nthreads: u32) -> u64 {
    let target_ns = if opt.quick { 30e6 } else { 250e6 };
    let floor_ns: u64 = if opt.quick { 1_000_000 } else { 5_000_000 };
    let mut p: u64 = if opt.quick { 2000 } else { 10000 };
    run_once::<P>(nthreads, p, -1, None); // warm: code, thread stacks, malloc arenas
    let mut wall;
    loop {
        wall = run_once::<P>(nthreads, p, -1, None).0;
        if wall >= floor_ns || p >= 100_000_000 {
            break;
        }
        p *= 4;
    }
    // the faster of two: one preemption must not shrink every repetition
    wall = wall.min(run_once::<P>(nthreads, p, -1, None).0);
    let pairs = (p as f64 * target_ns / wall.max(1) as f64).clamp(1000.0, 2e8);
    pairs as u64 / 1000 * 1000
}

/// nearest-rank percentile q of the merged histogram, in ns
fn lat_pct(tm: &Timer, h: &Hist, n: u64, q: f64) -> f64 {
    let rank = ((q * n as f64 + 0.999999) as u64).max(1);
    let mut seen = 0u64;
    for (b, &c) in h.count.iter().enumerate() {
        seen += c;
        if seen >= rank {
            let t = lat_bucket_mid(b);
            return ticks_to_ns(tm, t.min(h.max as f64));
        }
    }
    ticks_to_ns(tm, h.max as f64)
}

fn ticks_to_ns(tm: &Timer, t: f64) -> f64 {
    let o = tm.overhead as f64;
    if t > o {
        (t - o) * tm.ns_per_tick
    } else {
        0.0
    }
}

/// One run timing every call, as long as a throughput repetition.
fn measure_latency<const P: usize>(tm: &Timer, nthreads: u32, pairs: u64) -> LatStats {
    let mut hists = Vec::new();
    run_once::<P>(nthreads, pairs / 20 + 1, 0, Some(&mut hists)); // warm-up
    run_once::<P>(nthreads, pairs, 1, Some(&mut hists));
    let mut all = Hist::new();
    for h in &hists {
        for (a, &c) in all.count.iter_mut().zip(h.count.iter()) {
            *a += c;
        }
        all.max = all.max.max(h.max);
    }
    let n: u64 = all.count.iter().sum();
    LatStats {
        n,
        p50: lat_pct(tm, &all, n, 0.50),
        p99: lat_pct(tm, &all, n, 0.99),
        p999: lat_pct(tm, &all, n, 0.999),
        p9999: lat_pct(tm, &all, n, 0.9999),
        max: ticks_to_ns(tm, all.max as f64),
    }
}

struct Row {
    nthreads: u32,
    pairs: u64,
    ns: Vec<f64>, // ns per pair, all threads, per repetition
    par: f64,
    lat: LatStats,
}

/// Every T: calibrate, a warm-up and the recorded repetitions, then the latency run
/// (bench_mt.c's run_threads, with one subject).
fn run_all<const P: usize>(opt: &Opt, tm: &Timer, t_start: Instant) -> Vec<Row> {
    if std::mem::size_of::<Obj<P>>() != opt.size {
        fail(&format!(
            "objects are {} bytes, not {}",
            std::mem::size_of::<Obj<P>>(),
            opt.size
        ));
    }
    let mut rows = Vec::new();
    for &t in &opt.threads {
        let t0 = Instant::now();
        let pairs = calibrate_pairs::<P>(opt, t);
        let ops = pairs * t as u64;
        let (mut ns, mut par) = (Vec::new(), Vec::new());
        for rep in 0..=opt.reps {
            let (wall, p) = run_once::<P>(t, pairs, rep, None);
            if rep > 0 {
                ns.push(wall as f64 / ops as f64);
                par.push(p);
            }
        }
        par.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        // timing every call about doubles a pair's cost: half the pairs
        let lat = measure_latency::<P>(tm, t, pairs / 2 + 1);
        eprintln!(
            "  {:2} threads ({}): 1 subject, {} reps, done in {:.1} s (total {:.1} s)",
            t,
            NAME,
            opt.reps,
            t0.elapsed().as_secs_f64(),
            t_start.elapsed().as_secs_f64()
        );
        rows.push(Row {
            nthreads: t,
            pairs,
            ns,
            par: par[par.len() / 2],
            lat,
        });
    }
    rows
}

// ==== main ==========================================================================

fn usage() -> ! {
    eprintln!(
        "usage: bench_mt_sharded_slab --child [--quick] [--reps N] [--size 16|64|256]\n\
         \x20                            [--threads 1,2,4,8]\n\
         Run by bench_mt, which merges these rows into its table (bench/bench_child.h)."
    );
    exit(2);
}

fn parse_args() -> Opt {
    let mut opt = Opt {
        quick: false,
        size: 64,
        reps: 0,
        threads: vec![1, 2, 4, 8],
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1);
        match (args[i].as_str(), v) {
            ("--child", _) => {}
            ("--quick", _) => opt.quick = true,
            ("--size", Some(v)) => {
                opt.size = v.parse().unwrap_or(0);
                if opt.size != 16 && opt.size != 64 && opt.size != 256 {
                    eprintln!("bench_mt_sharded_slab: --size must be 16, 64 or 256");
                    exit(2);
                }
                i += 1;
            }
            ("--reps", Some(v)) => {
                opt.reps = v.parse().unwrap_or(0);
                if opt.reps < 1 || opt.reps > MAX_REPS {
                    eprintln!("bench_mt_sharded_slab: --reps must be 1..{}", MAX_REPS);
                    exit(2);
                }
                i += 1;
            }
            ("--threads", Some(v)) => {
                let list: Vec<u32> = v
                    .split(',')
                    .map(|x| x.parse().unwrap_or(0))
                    .filter(|&t| (1..=MAX_THREADS as u32).contains(&t))
                    .collect();
                if list.is_empty() || list.len() != v.split(',').count() || list.len() > 16 {
                    eprintln!(
                        "bench_mt_sharded_slab: --threads wants up to 16 counts in 1..{}",
                        MAX_THREADS
                    );
                    exit(2);
                }
                opt.threads = list;
                i += 1;
            }
            _ => {
                eprintln!(
                    "bench_mt_sharded_slab: unknown or incomplete argument '{}'",
                    args[i]
                );
                usage();
            }
        }
        i += 1;
    }
    // bench_mt.c's default without --reps
    if opt.reps == 0 {
        opt.reps = if opt.quick { 3 } else { 7 };
    }
    opt
}

fn main() {
    let opt = parse_args();
    let t_start = Instant::now();
    let tm = timer_calibrate(t_start);
    eprintln!(
        "bench_mt_sharded_slab (child): {}{}, object size {}",
        NAME,
        if opt.quick { " (--quick)" } else { "" },
        opt.size
    );
    let rows = match opt.size {
        16 => run_all::<0>(&opt, &tm, t_start),
        64 => run_all::<6>(&opt, &tm, t_start),
        _ => run_all::<30>(&opt, &tm, t_start),
    };
    println!(
        "INFO\tsharded_slab {} (Pool: create_with, get, clear), {}, release profile",
        env!("BENCH_SHARDED_SLAB_VERSION"),
        env!("BENCH_RUSTC_VERSION")
    );
    for r in &rows {
        let samples: Vec<String> = r.ns.iter().map(|v| format!("{:.4}", v)).collect();
        // bench_child.h's ROW with an empty note and checksum 0 (bench_mt's rows carry none:
        // each run checks its own tags), then bench_mt.c's extra fields (child_emit)
        println!(
            "ROW\talloc+free pairs\t{}\t{}\t{}\t{}\t{}\t{:016x}\t\t{}\t{}\t{}\t{}\t{:.1}\t{:.1}\t{:.1}\t{:.1}\t{:.1}\t{:.3}",
            r.nthreads,
            NAME,
            r.pairs * r.nthreads as u64,
            r.ns.len(),
            samples.join(" "),
            0u64,
            KEY,
            VARIANT,
            r.pairs,
            r.lat.n,
            r.lat.p50,
            r.lat.p99,
            r.lat.p999,
            r.lat.p9999,
            r.lat.max,
            r.par
        );
    }
}
