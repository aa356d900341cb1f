// bench_util.h's random sequence (bench_rng_next, bench_below, bench_seed), bit for bit: the
// Rust children of opool_bench and bench_mt draw exactly the C subjects' operations. A module
// of each Rust child (#[path] in its src/main.rs), not a crate: no dependency to resolve.

pub fn rng_next(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9e3779b97f4a7c15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

#[inline(always)]
pub fn below(s: &mut u64, n: u32) -> u32 {
    (((rng_next(s) >> 32) * n as u64) >> 32) as u32
}

pub fn seed(workload: u32, n: u32, rep: i32, phase: u32) -> u64 {
    let mut s = 0x6f706f6f6c000000u64
        ^ ((workload as u64) << 40)
        ^ ((n as u64) << 8)
        ^ (rep as u32 as u64)
        ^ ((phase as u64) << 56);
    rng_next(&mut s)
}
