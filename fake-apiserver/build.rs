//! Links the `fake-apiserver` binary as a position-dependent executable on Linux.
//!
//! A PIE binary of this size carries ~73,000 relative relocations: at every start the loader
//! writes each of them, so the 1.7 MB of `.data.rel.ro` they fall in is copied page by page on
//! first write. Linked without PIE the addresses are fixed at link time and those pages are
//! read straight from the page cache. Measured on the 2-core machine (README, start-up): fork +
//! exec + exit of `fake-apiserver --version` 6.0–6.7 → 2.6–2.8 ms median, exec → first
//! `/readyz` 200 p50 −1.5 ms over 150 starts. The price is that the binary's own code and data
//! are not address-randomized (libraries, heap and stacks still are): a test tool on a
//! loopback port, not a production server. Only the binary is linked this way; the library
//! (and the tests and examples linking it) are unchanged.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
