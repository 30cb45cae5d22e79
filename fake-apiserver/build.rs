//! Links the `fake-apiserver` binary for a fast start on Linux: position-dependent, and with
//! the unwinder linked in instead of loaded from `libgcc_s.so.1`.
//!
//! Without PIE: a PIE binary of this size carries ~73,000 relative relocations: at every start
//! the loader writes each of them, so the 1.7 MB of `.data.rel.ro` they fall in is copied page
//! by page on first write. Linked without PIE the addresses are fixed at link time and those
//! pages are read straight from the page cache. Measured on the 2-core machine (README,
//! start-up): fork + exec + exit of `fake-apiserver --version` 6.0–6.7 → 2.6–2.8 ms median,
//! exec → first `/readyz` 200 p50 −1.5 ms over 150 starts. The price is that the binary's own
//! code and data are not address-randomized (libraries, heap and stacks still are): a test
//! tool on a loopback port, not a production server.
//!
//! The unwinder from `libgcc_eh.a` (what a static glibc program links): Rust's standard library
//! needs `_Unwind_*` and on `*-linux-gnu` gets them from `libgcc_s.so.1`, whose load runs its
//! constructor `__cpu_indicator_init` — a dozen `cpuid` instructions, each a VM exit that costs
//! 7–10 µs on the nested-virtualized machines this is measured on. With the archive's members
//! linked in whole, every `_Unwind_*` reference is resolved inside the binary and the linker
//! (`--as-needed`) drops `libgcc_s.so.1` from the binary's needed libraries: fork + exec + exit
//! of `fake-apiserver --version` 1.60 → 1.48 ms median (300 interleaved runs each). Panics
//! unwind and print backtraces as before. Skipped, with the old link, where the C compiler has
//! no `libgcc_eh.a`.
//!
//! Only the binary is linked this way; the library (and the tests and examples linking it) are
//! unchanged.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os != "linux" {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-no-pie");
    if env == "gnu" && has_static_unwinder() {
        for arg in ["-Wl,--whole-archive", "-lgcc_eh", "-Wl,--no-whole-archive"] {
            println!("cargo:rustc-link-arg-bins={arg}");
        }
    }
}

/// Whether the C compiler (the linker driver rustc uses on Linux) finds `libgcc_eh.a`: it
/// prints the archive's full path if so, the bare name if not.
fn has_static_unwinder() -> bool {
    let compiler = std::env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".to_string());
    Command::new(compiler)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .is_some_and(|path| {
            let path = std::path::Path::new(path.trim());
            path.is_absolute() && path.exists()
        })
}
