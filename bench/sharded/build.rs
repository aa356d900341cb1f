// Records, for the INFO line bench_mt prints, which compiler built this program and which
// sharded-slab version Cargo.lock resolved.
use std::env;
use std::fs;
use std::process::Command;

fn main() {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        // "rustc 1.63.0 (4b91a6ea7 2022-08-08)": the name and the release
        .map(|s| s.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "rustc (unknown version)".to_string());
    println!("cargo:rustc-env=BENCH_RUSTC_VERSION={}", version);

    let dir = env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_string());
    let lock = fs::read_to_string(format!("{}/Cargo.lock", dir)).unwrap_or_default();
    let mut crate_version = "?".to_string();
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "name = \"sharded-slab\"" {
            if let Some(v) = lines.next() {
                crate_version = v
                    .trim()
                    .trim_start_matches("version = ")
                    .trim_matches('"')
                    .to_string();
            }
            break;
        }
    }
    println!(
        "cargo:rustc-env=BENCH_SHARDED_SLAB_VERSION={}",
        crate_version
    );
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-changed=build.rs");
}
