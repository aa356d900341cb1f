// Records, for the INFO line opool_bench prints, which compiler built this program and which
// slotmap version Cargo.lock resolved.
include!("../rust_common/build_info.rs");

fn main() {
    record_build_info("slotmap", "BENCH_SLOTMAP_VERSION");
}
