//! `make bench`: the fake API server's speed and memory figures.
//!
//! Prints one line per figure (name, value, unit, target, PASS/MISS) and exits 0 whatever the
//! figures are: it reports, it does not assert. Sections:
//!
//! 1. `inproc`  — the in-process `kube::Client` on one core: GET, CREATE, UPDATE, watch delivery;
//!    the server alone (prepared requests) and the client alone (a stub server), and the ratios
//!    of issue 13 (each figure to a reference, both measured again in alternating slices);
//! 2. `tcp`     — GET over TCP loopback, one core and two workers;
//! 3. `list`    — LIST latency with 10k ConfigMaps, with and without a label selector;
//! 4. `fanout`  — 100 watchers, write-to-100th-watcher latency and burst throughput;
//! 5. `memory`  — resident memory holding 100k ConfigMaps of 1 KiB (in a fresh process);
//! 6. `startup` — nothing to the first answered request (fresh processes, then warm), and exec
//!    of the `fake-apiserver` binary to its first answered `/readyz`.
//!
//! `cargo run --release -p fake-apiserver --example bench -- --only list --only tcp` runs some.

#[path = "bench/alloc_count.rs"]
mod alloc_count;
#[path = "bench/callgrind.rs"]
mod callgrind;
#[path = "bench/fanout.rs"]
mod fanout;
#[path = "bench/fixtures.rs"]
mod fixtures;
#[path = "bench/inproc.rs"]
mod inproc;
#[path = "bench/list.rs"]
mod list;
#[path = "bench/memory.rs"]
mod memory;
#[path = "bench/paired.rs"]
mod paired;
#[path = "bench/report.rs"]
mod report;
#[path = "bench/startup.rs"]
mod startup;
#[path = "bench/tcp.rs"]
mod tcp;

use std::process::Command;
use std::time::Instant;

use clap::{Parser, ValueEnum};

use report::Figure;

#[global_allocator]
static ALLOCATOR: alloc_count::Counting = alloc_count::Counting;

/// A part of the bench.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Section {
    Inproc,
    Tcp,
    List,
    Fanout,
    /// Fan-out on a two-worker runtime (not in the default run).
    Fanout2,
    Memory,
    Startup,
    /// Internal: one cold start, measured by a child process.
    StartupOnce,
}

const DEFAULT_SECTIONS: [Section; 6] = [
    Section::Inproc,
    Section::Tcp,
    Section::List,
    Section::Fanout,
    Section::Memory,
    Section::Startup,
];

#[derive(Debug, Parser)]
#[command(about = "Speed and memory figures of the fake API server")]
struct Args {
    /// Run only these sections (repeatable); default: all but fanout2.
    #[arg(long, value_enum)]
    only: Vec<Section>,
    /// Limit `inproc` to these operations (get, get_small, create, update, ceiling, server or
    /// one of server_get, server_update, server_merge, server_strategic, server_create,
    /// server_create_named, minimal, watch), e.g. for profiling.
    #[arg(long)]
    op: Vec<String>,
    /// Run `memory` in this process instead of a fresh one.
    #[arg(long)]
    in_process: bool,
}

fn main() {
    let args = Args::parse();
    if args.only == [Section::StartupOnce] {
        if let Err(e) = startup::child() {
            eprintln!("startup child failed: {e}");
        }
        return;
    }
    let sections: Vec<Section> = if args.only.is_empty() {
        DEFAULT_SECTIONS.to_vec()
    } else {
        args.only.clone()
    };
    let started = Instant::now();
    let mut all: Vec<Figure> = Vec::new();
    let mut child_lines: Vec<String> = Vec::new();
    report::print_header();
    for section in sections {
        let result = match section {
            Section::Inproc => inproc::run(&mut all, &args.op),
            Section::Tcp => tcp::run(&mut all),
            Section::List => list::run(&mut all),
            Section::Fanout => fanout::run(&mut all, None),
            Section::Fanout2 => fanout::run(&mut all, Some(2)),
            Section::Memory if args.in_process || sections_is_only_memory(&args) => {
                memory::run(&mut all)
            }
            Section::Memory => memory_in_child(&mut child_lines),
            Section::Startup => startup::run(&mut all),
            Section::StartupOnce => startup::child(),
        };
        if let Err(e) = result {
            println!("# section {section:?} failed: {e}");
        }
    }
    let misses = all.iter().filter(|f| f.verdict() == "MISS").count()
        + child_lines.iter().filter(|l| l.ends_with("MISS")).count();
    let passes = all.iter().filter(|f| f.verdict() == "PASS").count()
        + child_lines.iter().filter(|l| l.ends_with("PASS")).count();
    println!(
        "# {passes} PASS, {misses} MISS in {:.1} s (release: {}, allocator: {})",
        started.elapsed().as_secs_f64(),
        !cfg!(debug_assertions),
        alloc_count::NAME
    );
    println!(
        "# machine: comparing two empty strings takes {:.1} ns here (~100 where glibc's AVX-512 \
         memcmp pays a fault-suppression assist at an empty String's dangling pointer, ~1 \
         elsewhere: see vendor/README.md, fifth change)",
        empty_compare_ns()
    );
}

/// What one `==` of two empty `String`s costs on this machine. Their pointers are dangling (an
/// empty `String` does not allocate) and `==` calls `memcmp` with a length of 0; glibc's
/// AVX-512 variant reads there with a masked load, which costs a microcode assist on an
/// unmapped page. Every figure whose code compares empty strings pays it, so figures from
/// machines with and without it differ by more than their speed.
fn empty_compare_ns() -> f64 {
    const ROUNDS: u32 = 20_000;
    let (a, b) = (String::new(), String::new());
    let start = Instant::now();
    let mut equal = 0u32;
    for _ in 0..ROUNDS {
        if std::hint::black_box(&a) == std::hint::black_box(&b) {
            equal += 1;
        }
    }
    std::hint::black_box(equal);
    start.elapsed().as_nanos() as f64 / f64::from(ROUNDS)
}

/// `--only memory` alone is already a fresh process.
fn sections_is_only_memory(args: &Args) -> bool {
    args.only == [Section::Memory]
}

/// Runs the memory section in a fresh process and echoes its figure lines.
fn memory_in_child(lines: &mut Vec<String>) -> fixtures::Result<()> {
    let output = Command::new(std::env::current_exe()?)
        .args(["--only", "memory"])
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    for line in stdout
        .lines()
        .filter(|l| l.starts_with("memory.") || l.starts_with('#'))
    {
        if line.starts_with("# ") && line.contains(" PASS, ") {
            continue;
        }
        println!("{line}");
        lines.push(line.to_string());
    }
    if !output.status.success() {
        return Err(format!(
            "memory child exited with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    Ok(())
}
