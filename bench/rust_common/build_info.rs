// What a Rust child's build.rs records for the INFO line its parent prints: the compiler that
// built it and the version of the crate under test that Cargo.lock resolved, as the
// environment variables BENCH_RUSTC_VERSION and `env_name`. Pasted into each build.rs with
// include!.

fn record_build_info(crate_name: &str, env_name: &str) {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = std::process::Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        // "rustc 1.63.0 (4b91a6ea7 2022-08-08)": the name and the release
        .map(|s| s.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "rustc (unknown version)".to_string());
    println!("cargo:rustc-env=BENCH_RUSTC_VERSION={}", version);

    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_string());
    let lock = std::fs::read_to_string(format!("{}/Cargo.lock", dir)).unwrap_or_default();
    let mut crate_version = "?".to_string();
    let mut lines = lock.lines();
    let wanted = format!("name = \"{}\"", crate_name);
    while let Some(line) = lines.next() {
        if line.trim() == wanted {
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
    println!("cargo:rustc-env={}={}", env_name, crate_version);
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../rust_common/build_info.rs");
}
