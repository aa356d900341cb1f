// Records, for the INFO line bench_mt prints, which compiler built this program and which
// sharded-slab version Cargo.lock resolved.
include!("../rust_common/build_info.rs");

fn main() {
    record_build_info("sharded-slab", "BENCH_SHARDED_SLAB_VERSION");
}
