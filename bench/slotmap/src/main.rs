//! opool_bench_slotmap -- Rust's slotmap crate as a subject of opool_bench.
//!
//! Usage (opool_bench runs it): opool_bench_slotmap --child [--quick] [--size 16|64|256]
//!                                                  [--reps N] [--filldrain-reps N] [--ns N,N,..]
//!                                                  [--only churn,lookup,filldrain,iter,arena,frame]
//! --ns lists churn and lookup's live-object counts (default 1000,10000,100000,1000000) and
//! --filldrain-reps fill+drain's repetitions (default: as bench_core.c's without --reps):
//! opool_bench passes both, so that each row matches one of its own cases.
//!
//! Subjects:
//!   slotmap        slotmap::SlotMap<DefaultKey, Obj>: a slot array holding the values, a free
//!                  list through the vacant slots, a 32-bit version per slot (odd = occupied).
//!   dense_slotmap  slotmap::DenseSlotMap<DefaultKey, Obj>: the values and their keys in dense
//!                  arrays (remove is a swap_remove), slots map a key to a position there.
//!   hop_slotmap    slotmap::HopSlotMap<DefaultKey, Obj>: SlotMap whose iteration hops over
//!                  runs of vacant slots (arena and frame only).
//!   slab           slab::Slab<Obj>: a vector of entries with a free list; keys are plain
//!                  indices, unversioned (arena and frame only).
//! Each is created with_capacity(N), so none grows inside a timed loop.
//!
//! The workloads are bench/bench_core.c's, operation for operation: the same splitmix64
//! sequence (bench_util.h's bench_rng_next, bench_below, bench_seed, bench_shuffle, reproduced
//! below), the same iteration counts, the same values written (a = the handle array slot k,
//! b = a tag) and read back, the same checksums, the same warm-ups and repetition scheme. So
//! opool_bench can require that this program's checksums equal its own subjects', case by case:
//! any change to bench_core.c's loops or constants must be made here too.
//!
//! Objects are --size bytes: two u64 fields and padding left uninitialised, so an insert writes
//! the two fields and nothing else, as the C subjects do.
//!
//! Output: bench/bench_child.h's protocol (INFO and ROW lines on stdout); progress on stderr.

use slab::Slab;
use slotmap::{DefaultKey, DenseSlotMap, HopSlotMap, Key, SlotMap};
use std::mem::MaybeUninit;
use std::process::exit;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

// ==== bench_util.h's random sequence and checksum, bit for bit ==================

#[path = "../../rust_common/bench_rng.rs"]
mod bench_rng;
use bench_rng::{below, seed};

fn shuffle(perm: &mut [u32], mut seed: u64) {
    let n = perm.len() as u32;
    for (i, p) in perm.iter_mut().enumerate() {
        *p = i as u32;
    }
    let mut i = n;
    while i > 1 {
        let j = below(&mut seed, i) as usize;
        perm.swap(i as usize - 1, j);
        i -= 1;
    }
}

fn mix(a: u64, b: u64) -> u64 {
    let z = a.wrapping_mul(0x9e3779b97f4a7c15) ^ b.wrapping_add(0x632be59bd9b4e019);
    z ^ (z >> 29)
}

/// Results that must not be optimised away (bench_util.h's bench_sink).
static SINK: AtomicU64 = AtomicU64::new(0);

fn sink(v: u64) {
    SINK.fetch_add(v, Ordering::Relaxed);
}

// bench_core.c's workload identifiers, mixed into the seeds.
const W_CHURN: u32 = 1;
const W_LOOKUP: u32 = 2;
const W_FILLDRAIN: u32 = 3;
const W_ITER: u32 = 4;
const W_FRAME: u32 = 7;

const MAX_REPS: usize = 64; // BENCH_MAX_REPS

fn fail(msg: &str) -> ! {
    eprintln!("\nopool_bench_slotmap: FAIL: {}", msg);
    exit(1);
}

// ==== the objects and the two subjects ==========================================

/// An object of 16 + 8 * PAD bytes: bench_core.c's FA and FB, then padding.
#[repr(C)]
#[derive(Clone, Copy)]
struct Obj<const PAD: usize> {
    a: u64,
    b: u64,
    _pad: MaybeUninit<[u64; PAD]>,
}

/// What the loops need of a subject. Every loop is generic over it, so each subject gets its
/// own compiled loop with the crate's calls inlined: no dynamic dispatch in a timed region.
trait Subject {
    /// The container's key: DefaultKey (versioned) for the slotmaps, usize for slab.
    type K: Copy + Default;
    const NAME: &'static str;
    fn with_capacity(n: usize) -> Self;
    fn insert(&mut self, a: u64, b: u64) -> Self::K;
    fn remove(&mut self, k: Self::K) -> bool;
    /// (a, b) of k's object, or None for a stale key.
    fn get(&self, k: Self::K) -> Option<(u64, u64)>;
    /// Sum of a over the live objects, in the crate's iteration order.
    fn sum_a(&self) -> u64;
    /// A frame's update of every live object, in the crate's iteration order (values_mut):
    /// b += 1; the sum of a + b.
    fn visit_all(&mut self) -> u64;
    fn len(&self) -> usize;
}

/// The three slotmap containers share their API: one impl each, from this template.
macro_rules! slotmap_subject {
    ($map:ident, $name:literal) => {
        impl<const PAD: usize> Subject for $map<DefaultKey, Obj<PAD>> {
            type K = DefaultKey;
            const NAME: &'static str = $name;
            fn with_capacity(n: usize) -> Self {
                $map::with_capacity(n)
            }
            #[inline(always)]
            fn insert(&mut self, a: u64, b: u64) -> DefaultKey {
                $map::insert(
                    self,
                    Obj {
                        a,
                        b,
                        _pad: MaybeUninit::uninit(),
                    },
                )
            }
            #[inline(always)]
            fn remove(&mut self, k: DefaultKey) -> bool {
                $map::remove(self, k).is_some()
            }
            #[inline(always)]
            fn get(&self, k: DefaultKey) -> Option<(u64, u64)> {
                $map::get(self, k).map(|o| (o.a, o.b))
            }
            fn sum_a(&self) -> u64 {
                self.values().fold(0u64, |s, o| s.wrapping_add(o.a))
            }
            fn visit_all(&mut self) -> u64 {
                self.values_mut().fold(0u64, |s, o| {
                    o.b = o.b.wrapping_add(1);
                    s.wrapping_add(o.a.wrapping_add(o.b))
                })
            }
            fn len(&self) -> usize {
                $map::len(self)
            }
        }
    };
}

slotmap_subject!(SlotMap, "slotmap");
slotmap_subject!(DenseSlotMap, "dense_slotmap");
slotmap_subject!(HopSlotMap, "hop_slotmap");

/// slab::Slab: its keys are plain indices, without a version (a stale key reaches whatever
/// occupies its slot now, like a pointer).
impl<const PAD: usize> Subject for Slab<Obj<PAD>> {
    type K = usize;
    const NAME: &'static str = "slab";
    fn with_capacity(n: usize) -> Self {
        Slab::with_capacity(n)
    }
    #[inline(always)]
    fn insert(&mut self, a: u64, b: u64) -> usize {
        Slab::insert(
            self,
            Obj {
                a,
                b,
                _pad: MaybeUninit::uninit(),
            },
        )
    }
    #[inline(always)]
    fn remove(&mut self, k: usize) -> bool {
        self.try_remove(k).is_some()
    }
    #[inline(always)]
    fn get(&self, k: usize) -> Option<(u64, u64)> {
        Slab::get(self, k).map(|o| (o.a, o.b))
    }
    fn sum_a(&self) -> u64 {
        self.iter().fold(0u64, |s, (_, o)| s.wrapping_add(o.a))
    }
    fn visit_all(&mut self) -> u64 {
        self.iter_mut().fold(0u64, |s, (_, o)| {
            o.b = o.b.wrapping_add(1);
            s.wrapping_add(o.a.wrapping_add(o.b))
        })
    }
    fn len(&self) -> usize {
        Slab::len(self)
    }
}

// ==== the loops (bench_core.c's churn_*, lookup_*, fill_*, drain_*, iter_*) ======
// The handle array is indexed without bounds checks, as in C (k < n by construction), so the
// difference from the C subjects is the crate's own work.

#[inline(never)]
fn churn<M: Subject>(m: &mut M, h: &mut [M::K], seed: u64, iters: u64, tag: u64) -> u64 {
    let n = h.len() as u32;
    let mut seed = seed;
    let mut bad = 0u64;
    for it in 0..iters {
        let k = below(&mut seed, n) as usize;
        // SAFETY: k < n = h.len()
        let slot = unsafe { h.get_unchecked_mut(k) };
        bad += !m.remove(*slot) as u64;
        *slot = m.insert(k as u64, tag.wrapping_add(it));
    }
    bad
}

#[inline(never)]
fn lookup<M: Subject>(m: &M, h: &[M::K], seed: u64, iters: u64, bad: &mut u64) -> u64 {
    let n = h.len() as u32;
    let mut seed = seed;
    let mut sum = 0u64;
    for _ in 0..iters {
        let k = below(&mut seed, n) as usize;
        // SAFETY: k < n = h.len()
        match m.get(unsafe { *h.get_unchecked(k) }) {
            Some((a, b)) => sum = sum.wrapping_add(a.wrapping_add(b)),
            None => *bad += 1,
        }
    }
    sum
}

#[inline(never)]
fn fill<M: Subject>(m: &mut M, h: &mut [M::K], tag: u64) {
    for (k, slot) in h.iter_mut().enumerate() {
        *slot = m.insert(k as u64, tag);
    }
}

#[inline(never)]
fn drain<M: Subject>(m: &mut M, h: &[M::K], perm: &[u32]) -> u64 {
    let mut bad = 0u64;
    for &p in perm {
        // SAFETY: perm is a permutation of 0..h.len()
        bad += !m.remove(unsafe { *h.get_unchecked(p as usize) }) as u64;
    }
    bad
}

#[inline(never)]
fn iterate<M: Subject>(m: &M, passes: u32) -> u64 {
    let mut sum = 0u64;
    for _ in 0..passes {
        // Every pass must really read the objects: seen through a volatile read, the map could
        // be another one each pass, so the compiler cannot compute one pass and reuse it.
        let m: &M = unsafe { &*std::ptr::read_volatile(&(m as *const M)) };
        sum = sum.wrapping_add(m.sum_a());
    }
    sum
}

/// bench_core.c's frames_fr_*: frames times, update every live object, then changes times
/// erase handles[random k] and insert a = k, b = tag + frame * changes + j in its place.
#[inline(never)]
fn frames<M: Subject>(
    m: &mut M,
    h: &mut [M::K],
    seed: u64,
    nframes: u32,
    changes: u32,
    tag: u64,
) -> (u64, u64) {
    let n = h.len() as u32;
    let mut seed = seed;
    let (mut sum, mut bad) = (0u64, 0u64);
    for f in 0..nframes {
        sum = sum.wrapping_add(m.visit_all());
        for j in 0..changes {
            let k = below(&mut seed, n) as usize;
            // SAFETY: k < n = h.len()
            let slot = unsafe { h.get_unchecked_mut(k) };
            bad += !m.remove(*slot) as u64;
            *slot = m.insert(
                k as u64,
                tag.wrapping_add(f as u64 * changes as u64 + j as u64),
            );
        }
    }
    (sum, bad)
}

// ==== one subject's state =========================================================

struct State<M: Subject> {
    m: M,
    h: Vec<M::K>,
}

impl<M: Subject> State<M> {
    /// N objects, handles[k]'s with a = k and b = 0 (bench_core.c's cl_setup).
    fn filled(n: u32) -> Self {
        let mut m = M::with_capacity(n as usize);
        let h = (0..n).map(|k| m.insert(k as u64, 0)).collect();
        State { m, h }
    }

    /// Untimed: every handle reaches the object written for its slot (cl_verify).
    fn verify(&self, what: &str) -> u64 {
        let mut sum = 0u64;
        for (k, &key) in self.h.iter().enumerate() {
            match self.m.get(key) {
                Some((a, b)) if a == k as u64 => sum = sum.wrapping_add(mix(a, b)),
                _ => fail(&format!(
                    "{} {} N={}: handles[{}] does not reach its object",
                    what,
                    M::NAME,
                    self.h.len(),
                    k
                )),
            }
        }
        sum
    }
}

impl<M: Subject<K = DefaultKey>> State<M> {
    /// Untimed, on an empty map: the next inserts get the slots in ascending order, as a fresh
    /// map hands them out (bench_core.c resets its pools, and malloc, the same way before each
    /// fill). After a random-order drain the free list is in random order; inserting N and
    /// removing them from the highest slot down leaves it ascending. The slot is read from the
    /// key's FFI value (slot index in the low 32 bits in slotmap 1.x, checked here).
    fn fresh_order(&mut self) {
        let n = self.h.len();
        let mut keys: Vec<(u32, DefaultKey)> = (0..n)
            .map(|_| {
                let k = self.m.insert(0, 0);
                (k.data().as_ffi() as u32, k)
            })
            .collect();
        keys.sort_unstable_by(|x, y| y.0.cmp(&x.0));
        // slot 0 is the crate's sentinel: N objects in N + 1 slots are in slots 1..=N
        for (j, &(slot, _)) in keys.iter().enumerate() {
            if slot as usize != n - j {
                fail("slotmap's key layout is not (version << 32 | slot): update fresh_order");
            }
        }
        for &(_, k) in &keys {
            self.m.remove(k);
        }
    }
}

// ==== the case driver (bench_core.c's run_case) ==================================

struct Row {
    workload: String,
    n: u32,
    subject: &'static str,
    note: &'static str,
    ops: u64,
    ns: Vec<f64>,
    checksum: u64,
}

struct Opt {
    quick: bool,
    size: usize,
    reps: i32,
    fd_reps: i32,
    ns: Vec<u32>,
    only: Option<String>,
}

impl Opt {
    fn wanted(&self, w: &str) -> bool {
        match &self.only {
            None => true,
            Some(list) => list.split(',').any(|x| x == w),
        }
    }
}

struct Bench {
    opt: Opt,
    rows: Vec<Row>,
    t_start: Instant,
}

impl Bench {
    /// Runs the repetitions of one case for its subjects (names[s]: 0 = slotmap, 1 =
    /// dense_slotmap, 2 = hop_slotmap where the case has it), starting from a different one
    /// each repetition; rep 0 is the discarded warm-up. f runs one repetition of one subject:
    /// ns per op and the checksum.
    fn run_case(
        &mut self,
        workload: &str,
        n: u32,
        reps: i32,
        ops: u64,
        notes: &[&'static str],
        names: &[&'static str],
        f: &mut dyn FnMut(usize, i32) -> (f64, u64),
    ) {
        let t0 = Instant::now();
        let k = names.len();
        let mut ns = vec![Vec::new(); k];
        let mut sums = vec![0u64; k];
        for rep in 0..=reps {
            let mut r = vec![(0.0, 0u64); k];
            for j in 0..k {
                let s = (j + rep as usize) % k;
                r[s] = f(s, rep);
            }
            for s in 1..k {
                if r[s].1 != r[0].1 {
                    fail(&format!(
                        "{} N={} repetition {}: checksum of {} is {:016x}, {} has {:016x}",
                        workload, n, rep, names[s], r[s].1, names[0], r[0].1
                    ));
                }
            }
            sink(r[0].1);
            if rep > 0 {
                for s in 0..k {
                    ns[s].push(r[s].0);
                    sums[s] = sums[s].wrapping_add(r[s].1);
                }
            }
        }
        eprintln!(
            "  {:<17} N={:<8} {} reps done in {:.1} s (total {:.1} s)",
            workload,
            n,
            reps,
            t0.elapsed().as_secs_f64(),
            self.t_start.elapsed().as_secs_f64()
        );
        for (s, v) in ns.into_iter().enumerate() {
            self.rows.push(Row {
                workload: workload.to_string(),
                n,
                subject: names[s],
                note: notes[s],
                ops,
                ns: v,
                checksum: sums[s],
            });
        }
    }
}

fn ns_per(t: Instant, ops: u64) -> f64 {
    t.elapsed().as_nanos() as f64 / ops as f64
}

// ==== the workloads ===============================================================

type Sm<const P: usize> = SlotMap<DefaultKey, Obj<P>>;
type Dsm<const P: usize> = DenseSlotMap<DefaultKey, Obj<P>>;
type Hsm<const P: usize> = HopSlotMap<DefaultKey, Obj<P>>;

/// One churn repetition (bench_core.c's churn_rep): warm-up churn, timed churn, verify.
fn churn_rep<M: Subject>(st: &mut State<M>, rep: i32, iters: u64, warm: u64) -> (f64, u64) {
    let n = st.h.len() as u32;
    // b values: distinct per repetition and phase, identical across subjects
    let tag = ((rep + 1) as u64) << 40;
    let mut bad = churn(&mut st.m, &mut st.h, seed(W_CHURN, n, rep, 0), warm, tag);
    let t0 = Instant::now();
    bad += churn(
        &mut st.m,
        &mut st.h,
        seed(W_CHURN, n, rep, 1),
        iters,
        tag | 1 << 39,
    );
    let ns = ns_per(t0, iters);
    if bad != 0 {
        fail(&format!(
            "churn {} N={}: {} failed removes",
            M::NAME,
            n,
            bad
        ));
    }
    (ns, st.verify("churn"))
}

fn lookup_rep<M: Subject>(st: &State<M>, rep: i32, iters: u64, warm: u64) -> (f64, u64) {
    let n = st.h.len() as u32;
    let mut bad = 0u64;
    sink(lookup(
        &st.m,
        &st.h,
        seed(W_LOOKUP, n, rep, 0),
        warm,
        &mut bad,
    ));
    let t0 = Instant::now();
    let sum = lookup(&st.m, &st.h, seed(W_LOOKUP, n, rep, 1), iters, &mut bad);
    let ns = ns_per(t0, iters);
    if bad != 0 {
        fail(&format!(
            "lookup {} N={}: {} live keys rejected",
            M::NAME,
            n,
            bad
        ));
    }
    (ns, sum)
}

/// Churn at n, then lookup on the state churn leaves (bench_core.c's run_churn_lookup).
fn churn_lookup<const P: usize>(b: &mut Bench, n: u32, do_churn: bool, do_lookup: bool) {
    let big = n >= 100000;
    let q = b.opt.quick;
    let churn_iters: u64 = if q {
        if big {
            500000
        } else {
            1000000
        }
    } else if big {
        1000000
    } else {
        3000000
    };
    let churn_warm = if big { churn_iters / 8 } else { 100000 };
    let lookup_iters: u64 = if q {
        if big {
            600000
        } else {
            2000000
        }
    } else if big {
        1500000
    } else {
        5000000
    };
    let lookup_warm = if big { lookup_iters / 8 } else { 100000 };
    eprintln!("  setting up 2 subjects at N={}...", n);
    let mut s0 = State::<Sm<P>>::filled(n);
    let mut s1 = State::<Dsm<P>>::filled(n);
    let names = [Sm::<P>::NAME, Dsm::<P>::NAME];
    // lookup needs churn's scrambled state: churn always runs first
    let reps = b.opt.reps;
    if do_churn {
        b.run_case(
            "churn",
            n,
            reps,
            churn_iters,
            &["remove(key) + insert(obj)", "remove (swap_remove) + insert"],
            &names,
            &mut |s, rep| {
                if s == 0 {
                    churn_rep(&mut s0, rep, churn_iters, churn_warm)
                } else {
                    churn_rep(&mut s1, rep, churn_iters, churn_warm)
                }
            },
        );
    } else {
        churn_rep(&mut s0, 0, churn_iters, churn_warm);
        churn_rep(&mut s1, 0, churn_iters, churn_warm);
    }
    if do_lookup {
        b.run_case(
            "lookup",
            n,
            reps,
            lookup_iters,
            &["validated (get)", "validated (get), slot -> dense index"],
            &names,
            &mut |s, rep| {
                if s == 0 {
                    lookup_rep(&s0, rep, lookup_iters, lookup_warm)
                } else {
                    lookup_rep(&s1, rep, lookup_iters, lookup_warm)
                }
            },
        );
    }
}

/// One fill+drain repetition (bench_core.c's filldrain_rep).
fn filldrain_rep<M: Subject<K = DefaultKey>>(st: &mut State<M>, perm: &[u32], rep: i32) -> (f64, u64) {
    let n = st.h.len();
    let tag = rep as u64 + 7;
    st.fresh_order();
    let t0 = Instant::now();
    fill(&mut st.m, &mut st.h, tag);
    let fill_ns = t0.elapsed().as_nanos();
    // untimed: every object is reachable through its handle and holds what was written
    let mut sum = 0u64;
    for (k, &key) in st.h.iter().enumerate() {
        match st.m.get(key) {
            Some((a, b)) if a == k as u64 && b == tag => sum = sum.wrapping_add(mix(a, b)),
            _ => fail(&format!(
                "fill {} N={}: handle {} does not reach its object",
                M::NAME,
                n,
                k
            )),
        }
    }
    let t2 = Instant::now();
    let bad = drain(&mut st.m, &st.h, perm);
    let drain_ns = t2.elapsed().as_nanos();
    if bad != 0 {
        fail(&format!(
            "drain {} N={}: {} removes rejected",
            M::NAME,
            n,
            bad
        ));
    }
    if st.m.len() != 0 {
        fail(&format!(
            "drain {} N={}: {} objects still live",
            M::NAME,
            n,
            st.m.len()
        ));
    }
    ((fill_ns + drain_ns) as f64 / n as f64, sum)
}

fn filldrain<const P: usize>(b: &mut Bench, n: u32) {
    let mut s0 = State::<Sm<P>> {
        m: Sm::<P>::with_capacity(n as usize),
        h: vec![DefaultKey::null(); n as usize],
    };
    let mut s1 = State::<Dsm<P>> {
        m: Dsm::<P>::with_capacity(n as usize),
        h: vec![DefaultKey::null(); n as usize],
    };
    let mut perm = vec![0u32; n as usize];
    let mut perm_rep = -1;
    let note = "per pair; reset: N inserts removed in slot order";
    let reps = b.opt.fd_reps;
    b.run_case(
        "fill+drain",
        n,
        reps,
        n as u64,
        &[note, note],
        &[Sm::<P>::NAME, Dsm::<P>::NAME],
        &mut |s, rep| {
            if perm_rep != rep {
                shuffle(&mut perm, seed(W_FILLDRAIN, n, rep, 0));
                perm_rep = rep;
            }
            if s == 0 {
                filldrain_rep(&mut s0, &perm, rep)
            } else {
                filldrain_rep(&mut s1, &perm, rep)
            }
        },
    );
}

/// n slots, all filled, then all but pct% removed in a random order (bench_core.c's run_iter).
fn iter_setup<M: Subject>(n: u32, live: u32, perm: &[u32]) -> State<M> {
    let mut st = State::<M>::filled(n);
    for &p in &perm[..(n - live) as usize] {
        if !st.m.remove(st.h[p as usize]) {
            fail("iteration setup: remove failed");
        }
    }
    if st.m.len() != live as usize {
        fail(&format!("iteration setup: len is not {}", live));
    }
    st
}

fn iter_rep<M: Subject>(st: &State<M>, passes: u32, live: u32) -> (f64, u64) {
    sink(iterate(&st.m, 1)); // warm-up pass
    let t0 = Instant::now();
    let sum = iterate(&st.m, passes);
    (ns_per(t0, live as u64 * passes as u64), sum)
}

fn iter<const P: usize>(b: &mut Bench, n: u32, pct: u32) {
    let live = (n as u64 * pct as u64 / 100) as u32;
    // about a million live-object visits per timed sample
    let passes = if live >= 1000000 {
        1
    } else {
        (1000000 + live - 1) / live
    };
    let mut perm = vec![0u32; n as usize];
    shuffle(&mut perm, seed(W_ITER, n, pct as i32, 0));
    let s0 = iter_setup::<Sm<P>>(n, live, &perm);
    let s1 = iter_setup::<Dsm<P>>(n, live, &perm);
    drop(perm);
    let name = format!("iterate {}% live", pct);
    let reps = b.opt.reps;
    b.run_case(
        &name,
        n,
        reps,
        live as u64 * passes as u64,
        &[
            "per live obj; values(): every slot visited",
            "per live obj; values(): dense array",
        ],
        &[Sm::<P>::NAME, Dsm::<P>::NAME],
        &mut |s, _rep| {
            if s == 0 {
                iter_rep(&s0, passes, live)
            } else {
                iter_rep(&s1, passes, live)
            }
        },
    );
}

/// One arena round (bench_core.c's arena_*): a container created for n, n inserts, n gets, n
/// removes and n inserts again, each phase's time added to ns; the gets' sum and the final
/// objects', or 0 when a remove failed.
#[inline(never)]
fn arena_round<M: Subject>(h: &mut [M::K], tag: u64, ns: &mut [u128; 4]) -> u64 {
    let n = h.len();
    let (mut sum, mut bad) = (0u64, 0u64);
    let t0 = Instant::now();
    let mut m = M::with_capacity(n);
    for (k, slot) in h.iter_mut().enumerate() {
        *slot = m.insert(k as u64, tag);
    }
    let t1 = Instant::now();
    for &key in h.iter() {
        let (a, b) = m.get(key).unwrap_or_else(|| fail("arena: get failed"));
        sum = sum.wrapping_add(a.wrapping_add(b));
    }
    let t2 = Instant::now();
    for &key in h.iter() {
        bad += !m.remove(key) as u64;
    }
    let t3 = Instant::now();
    for (k, slot) in h.iter_mut().enumerate() {
        *slot = m.insert(k as u64, tag + 1);
    }
    let t4 = Instant::now();
    for (k, &key) in h.iter().enumerate() {
        let (a, _) = m.get(key).unwrap_or_else(|| fail("arena: get failed"));
        sum = sum.wrapping_add(mix(a, k as u64));
    }
    drop(m);
    ns[0] += (t1 - t0).as_nanos();
    ns[1] += (t2 - t1).as_nanos();
    ns[2] += (t3 - t2).as_nanos();
    ns[3] += (t4 - t3).as_nanos();
    if bad != 0 {
        0
    } else {
        sum
    }
}

/// bench_core.c's run_arena: the four phases, each a case of its own.
fn arena<const P: usize>(b: &mut Bench, n: u32) {
    let rounds: u32 = if b.opt.quick { 50 } else { 200 };
    let cases = [
        ("arena insert", "per insert; create for N + N inserts"),
        ("arena get", "per get, in insertion order"),
        ("arena remove", "per remove, in insertion order"),
        ("arena insert used", "per insert after N removes"),
    ];
    let mut hk = vec![DefaultKey::null(); n as usize];
    let mut hs = vec![0usize; n as usize];
    let reps = b.opt.reps;
    for (phase, &(name, note)) in cases.iter().enumerate() {
        b.run_case(
            name,
            n,
            reps,
            n as u64 * rounds as u64,
            &[note, note, note, note],
            &[Sm::<P>::NAME, Dsm::<P>::NAME, Hsm::<P>::NAME, Slab::<Obj<P>>::NAME],
            &mut |s, rep| {
                let mut ns = [0u128; 4];
                let mut sum = 0u64;
                for r in 0..rounds {
                    let tag = ((rep + 1) as u64) << 40 | (r as u64) << 8;
                    let got = match s {
                        0 => arena_round::<Sm<P>>(&mut hk, tag, &mut ns),
                        1 => arena_round::<Dsm<P>>(&mut hk, tag, &mut ns),
                        2 => arena_round::<Hsm<P>>(&mut hk, tag, &mut ns),
                        _ => arena_round::<Slab<Obj<P>>>(&mut hs, tag, &mut ns),
                    };
                    if got == 0 {
                        fail(&format!("{} N={}: a remove failed", name, n));
                    }
                    sum = sum.wrapping_add(got);
                }
                (ns[phase] as f64 / (n as f64 * rounds as f64), sum)
            },
        );
    }
}

/// One frame repetition (bench_core.c's frame_rep): ns per object visited, and the checksum.
fn frame_rep<M: Subject>(st: &mut State<M>, rep: i32, pct: u32, nframes: u32) -> (f64, u64) {
    let n = st.h.len() as u32;
    let changes = (n as u64 * pct as u64 / 100) as u32;
    let tag = ((rep + 1) as u64) << 40;
    let t0 = Instant::now();
    let (sum, bad) = frames(
        &mut st.m,
        &mut st.h,
        seed(W_FRAME, n, rep, pct),
        nframes,
        changes,
        tag,
    );
    let ns = ns_per(t0, n as u64 * nframes as u64);
    if bad != 0 {
        fail(&format!("frame {} N={}: {} failed removes", M::NAME, n, bad));
    }
    (ns, sum.wrapping_add(st.verify("frame")))
}

/// bench_core.c's run_frame: N objects, each repetition going on from the last one's state.
fn frame<const P: usize>(b: &mut Bench, n: u32, pct: u32) {
    let visits: u32 = if b.opt.quick { 1000000 } else { 4000000 };
    let nframes = (visits / n).max(2);
    let mut s0 = State::<Sm<P>>::filled(n);
    let mut s1 = State::<Dsm<P>>::filled(n);
    let mut s2 = State::<Hsm<P>>::filled(n);
    let mut s3 = State::<Slab<Obj<P>>>::filled(n);
    let name = format!("frame {}%", pct);
    let reps = b.opt.reps;
    b.run_case(
        &name,
        n,
        reps,
        n as u64 * nframes as u64,
        &[
            "per visit; values_mut(): every slot",
            "per visit; values_mut(): dense array",
            "per visit; values_mut(): hops free runs",
            "per visit; iter_mut(); keys unversioned",
        ],
        &[Sm::<P>::NAME, Dsm::<P>::NAME, Hsm::<P>::NAME, Slab::<Obj<P>>::NAME],
        &mut |s, rep| match s {
            0 => frame_rep(&mut s0, rep, pct, nframes),
            1 => frame_rep(&mut s1, rep, pct, nframes),
            2 => frame_rep(&mut s2, rep, pct, nframes),
            _ => frame_rep(&mut s3, rep, pct, nframes),
        },
    );
}

/// Everything opool_bench's core comparison runs, in its order, with objects of 16 + 8 * P bytes.
fn run_all<const P: usize>(b: &mut Bench) {
    if std::mem::size_of::<Obj<P>>() != b.opt.size {
        fail(&format!(
            "objects are {} bytes, not {}",
            std::mem::size_of::<Obj<P>>(),
            b.opt.size
        ));
    }
    // bench_core.c's n_bulk(): fill+drain's and iterate's N
    let big = if b.opt.quick { 100000u32 } else { 1000000u32 };
    let (ch, lk) = (b.opt.wanted("churn"), b.opt.wanted("lookup"));
    if ch || lk {
        for n in b.opt.ns.clone() {
            churn_lookup::<P>(b, n, ch, lk);
        }
    }
    if b.opt.wanted("filldrain") {
        filldrain::<P>(b, big);
    }
    if b.opt.wanted("iter") {
        iter::<P>(b, big, 10);
        iter::<P>(b, big, 50);
        iter::<P>(b, big, 100);
    }
    if b.opt.wanted("arena") {
        arena::<P>(b, 10000);
    }
    if b.opt.wanted("frame") {
        for pct in [1u32, 10] {
            frame::<P>(b, 10000, pct);
            frame::<P>(b, big, pct);
        }
    }
}

// ==== main =========================================================================

fn usage() -> ! {
    eprintln!(
        "usage: opool_bench_slotmap --child [--quick] [--size 16|64|256] [--reps N]\n\
         \x20                          [--filldrain-reps N] [--ns N,N,..]\n\
         \x20                          [--only churn,lookup,filldrain,iter,arena,frame]\n\
         Run by opool_bench, which merges these rows into its table (bench/bench_child.h)."
    );
    exit(2);
}

fn parse_args() -> Opt {
    let mut opt = Opt {
        quick: false,
        size: 64,
        reps: 0,
        fd_reps: 0,
        ns: vec![1000, 10000, 100000, 1000000],
        only: None,
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
                    eprintln!("opool_bench_slotmap: --size must be 16, 64 or 256");
                    exit(2);
                }
                i += 1;
            }
            ("--reps", Some(v)) => {
                opt.reps = v.parse().unwrap_or(0);
                if opt.reps < 1 || opt.reps > MAX_REPS as i32 {
                    eprintln!("opool_bench_slotmap: --reps must be 1..{}", MAX_REPS);
                    exit(2);
                }
                i += 1;
            }
            ("--filldrain-reps", Some(v)) => {
                opt.fd_reps = v.parse().unwrap_or(0);
                if opt.fd_reps < 1 || opt.fd_reps > MAX_REPS as i32 {
                    eprintln!(
                        "opool_bench_slotmap: --filldrain-reps must be 1..{}",
                        MAX_REPS
                    );
                    exit(2);
                }
                i += 1;
            }
            ("--ns", Some(v)) => {
                let list: Vec<u32> = v
                    .split(',')
                    .map(|x| x.parse().unwrap_or(0))
                    .filter(|&n| (2..=1000000).contains(&n))
                    .collect();
                if list.is_empty() || list.len() != v.split(',').count() {
                    eprintln!("opool_bench_slotmap: --ns must list N from 2 to 1000000");
                    exit(2);
                }
                opt.ns = list;
                i += 1;
            }
            ("--only", Some(v)) => {
                opt.only = Some(v.clone());
                i += 1;
            }
            _ => {
                eprintln!(
                    "opool_bench_slotmap: unknown or incomplete argument '{}'",
                    args[i]
                );
                usage();
            }
        }
        i += 1;
    }
    // bench_core.c's defaults without --reps (parse_args, reps_filldrain)
    if opt.reps == 0 {
        opt.reps = if opt.quick { 3 } else { 9 };
    }
    if opt.fd_reps == 0 {
        opt.fd_reps = if opt.quick { 2 } else { 7 };
    }
    opt
}

fn main() {
    let opt = parse_args();
    let size = opt.size;
    eprintln!(
        "opool_bench_slotmap (child): core{}, object size {}",
        if opt.quick { " (--quick)" } else { "" },
        size
    );
    let mut b = Bench {
        opt,
        rows: Vec::new(),
        t_start: Instant::now(),
    };
    match size {
        16 => run_all::<0>(&mut b),
        64 => run_all::<6>(&mut b),
        _ => run_all::<30>(&mut b),
    }
    println!(
        "INFO\tslotmap {} (SlotMap, DenseSlotMap), {}, release profile",
        env!("BENCH_SLOTMAP_VERSION"),
        env!("BENCH_RUSTC_VERSION")
    );
    for r in &b.rows {
        let samples: Vec<String> = r.ns.iter().map(|v| format!("{:.4}", v)).collect();
        println!(
            "ROW\t{}\t{}\t{}\t{}\t{}\t{}\t{:016x}\t{}",
            r.workload,
            r.n,
            r.subject,
            r.ops,
            r.ns.len(),
            samples.join(" "),
            r.checksum,
            r.note
        );
    }
}
