//! Section 6: time from nothing to the first answered request: build a runtime, the server and
//! the in-process client, and GET `/version`. Cold figures come from fresh processes; warm ones
//! repeat the same steps inside one process. Then the `fake-apiserver` binary as a user starts
//! it: from exec to the first answered `GET /readyz` on its port, polled every millisecond.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fake_apiserver::FakeApiServer;

use crate::fixtures::{self, Result};
use crate::report::{emit, Figure, Samples, Target};

/// Fresh processes started for the cold figure.
const COLD_RUNS: usize = 7;
/// Repetitions in this process for the warm figure.
const WARM_RUNS: usize = 30;
/// Starts of the `fake-apiserver` binary.
const EXEC_RUNS: usize = 15;
/// How often the binary's port is polled.
const POLL: Duration = Duration::from_millis(1);
/// Printed by the child process before the measured time.
pub const COLD_PREFIX: &str = "startup-once-us ";

/// One start: runtime, server, client, first `/version`.
pub fn once() -> Result<Duration> {
    let start = Instant::now();
    let rt = fixtures::current_thread()?;
    rt.block_on(async {
        let server = FakeApiServer::new();
        let client = server.client();
        client.apiserver_version().await?;
        Ok::<(), fixtures::BoxError>(())
    })?;
    let took = start.elapsed();
    drop(rt);
    Ok(took)
}

/// The child side: measure one start and print it.
pub fn child() -> Result<()> {
    let took = once()?;
    println!("{COLD_PREFIX}{}", took.as_micros());
    Ok(())
}

/// Runs section 6: cold starts in fresh processes, then warm starts here.
pub fn run(all: &mut Vec<Figure>) -> Result<()> {
    let exe = std::env::current_exe()?;
    let mut cold = Samples::with_capacity(COLD_RUNS);
    for _ in 0..COLD_RUNS {
        let output = Command::new(&exe)
            .args(["--only", "startup-once"])
            .output()?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let micros: u64 = stdout
            .lines()
            .find_map(|l| l.strip_prefix(COLD_PREFIX))
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| format!("startup child printed no figure: {stdout}"))?;
        cold.push(Duration::from_micros(micros));
    }
    let mut warm = Samples::with_capacity(WARM_RUNS);
    for _ in 0..WARM_RUNS {
        warm.push(once()?);
    }
    match exec_binary() {
        Ok((exec, steps)) => {
            emit(
                Figure::new(
                    "startup.exec_readyz.p50",
                    exec.percentile_ms(50.0),
                    "ms",
                    Target::AtMost(2.0),
                )
                .note(format!(
                    "max {:.2} ms over {} starts",
                    exec.percentile_ms(100.0),
                    exec.len()
                )),
                all,
            );
            println!("# startup.exec_readyz where the time goes (medians): {steps}");
            println!(
                "# startup.exec_readyz floor of this machine: {}",
                machine_floor(&binary()?)
            );
            if let Some(line) = compare_builds() {
                println!("# startup.exec_readyz against {COMPARE_ENV}: {line}");
            }
        }
        Err(e) => println!("# startup.exec_readyz: {e}"),
    }
    for (name, samples) in [("startup.cold", &cold), ("startup.warm", &warm)] {
        emit(
            Figure::new(
                format!("{name}.p50"),
                samples.percentile_ms(50.0),
                "ms",
                Target::Below(10.0),
            ),
            all,
        );
        emit(
            Figure::new(
                format!("{name}.max"),
                samples.percentile_ms(100.0),
                "ms",
                Target::Below(10.0),
            ),
            all,
        );
    }
    Ok(())
}

/// The `fake-apiserver` binary next to this example (`target/release/fake-apiserver`).
fn binary() -> Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let dir = exe
        .parent()
        .and_then(|examples| examples.parent())
        .ok_or("no target directory")?;
    let binary = dir.join("fake-apiserver");
    if !binary.exists() {
        return Err(format!(
            "{} is not built (cargo build --release -p fake-apiserver --bin fake-apiserver)",
            binary.display()
        )
        .into());
    }
    Ok(binary)
}

/// The binary's start-up timeline steps (`RUST_LOG=fake_apiserver::startup=debug`), each in µs
/// since its `main` began, in the order they happen.
const TIMELINE_STEPS: [&str; 5] = ["bound", "logging", "runtime", "server", "serving"];

/// Starts the binary [`EXEC_RUNS`] times on a free port and measures, each time, from the
/// spawn to the first `200` answer to `GET /readyz`, polling every [`POLL`]. Also says where the
/// time goes: from the spawn to the binary's `main` (the fork, exec and loader: the binary logs
/// when its `main` began on the monotonic clock this process reads too), the binary's own
/// timeline of each start, and after it serves, the wait for the poll that sees it.
fn exec_binary() -> Result<(Samples, String)> {
    let binary = binary()?;
    let mut samples = Samples::with_capacity(EXEC_RUNS);
    let mut to_main = Samples::with_capacity(EXEC_RUNS);
    let mut after_serving = Samples::with_capacity(EXEC_RUNS);
    let mut steps: Vec<Samples> = TIMELINE_STEPS
        .iter()
        .map(|_| Samples::with_capacity(EXEC_RUNS))
        .collect();
    for _ in 0..EXEC_RUNS {
        let Start {
            began: start,
            answered,
            log,
        } = start_once(&binary)?;
        samples.push(answered);
        let (Some(timeline), Some(main_began), Some(start_at)) = (
            timeline(&log),
            monotonic_of_log(&log),
            monotonic_of_debug(&format!("{start:?}")),
        ) else {
            continue;
        };
        let main_at = Duration::from_nanos(main_began.saturating_sub(start_at));
        let serving = main_at + timeline[TIMELINE_STEPS.len() - 1];
        to_main.push(main_at);
        after_serving.push(answered.saturating_sub(serving));
        for (step, at) in steps.iter_mut().zip(timeline) {
            step.push(at);
        }
    }
    if to_main.is_empty() {
        return Ok((samples, "the binary logged no start-up timeline".into()));
    }
    let mut breakdown = format!("spawn to main {:.2} ms; then", to_main.percentile_ms(50.0));
    for (name, at) in TIMELINE_STEPS.iter().zip(&steps) {
        breakdown.push_str(&format!(" {name} at {:.2} ms,", at.percentile_ms(50.0)));
    }
    breakdown.push_str(&format!(
        " answered {:.2} ms after serving (the {} ms poll)",
        after_serving.percentile_ms(50.0),
        POLL.as_millis()
    ));
    Ok((samples, breakdown))
}

/// One start of a binary: when it was spawned, how long until `/readyz` answered `200`, and
/// what it logged.
struct Start {
    began: Instant,
    answered: Duration,
    log: String,
}

/// Spawns `binary` on a free port and polls `GET /readyz` every [`POLL`] until it answers
/// `200` (at most 5 s), then stops it.
fn start_once(binary: &std::path::Path) -> Result<Start> {
    let address = TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let began = Instant::now();
    let mut child = Command::new(binary)
        .args(["--listen", &address.to_string()])
        .env("RUST_LOG", "warn,fake_apiserver::startup=debug")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let answered = loop {
        if readyz(address) {
            break Some(began.elapsed());
        }
        if began.elapsed() > Duration::from_secs(5) {
            break None;
        }
        std::thread::sleep(POLL);
    };
    let _ = child.kill();
    let mut log = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        stderr.read_to_string(&mut log)?;
    }
    let _ = child.wait();
    let answered = answered.ok_or("the binary did not answer /readyz within 5 s")?;
    Ok(Start {
        began,
        answered,
        log,
    })
}

/// Set to another build of the binary, `bench --only startup` also starts the two in turn
/// ([`COMPARE_RUNS_ENV`] times each, default [`COMPARE_RUNS`]) and prints both medians and the
/// median of the paired differences: start-up changes worth 0.1 ms are lost in this machine's
/// run-to-run drift unless the two builds are measured side by side.
pub const COMPARE_ENV: &str = "BENCH_STARTUP_AGAINST";
/// How many starts of each binary [`COMPARE_ENV`] makes.
pub const COMPARE_RUNS_ENV: &str = "BENCH_STARTUP_RUNS";
/// Starts of each binary in a comparison, unless [`COMPARE_RUNS_ENV`] says otherwise.
const COMPARE_RUNS: usize = 100;

/// The comparison [`COMPARE_ENV`] asks for, as a line to print (`None`: not asked for).
fn compare_builds() -> Option<String> {
    let other = std::path::PathBuf::from(std::env::var_os(COMPARE_ENV)?);
    let runs = std::env::var(COMPARE_RUNS_ENV)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(COMPARE_RUNS);
    Some(match (binary(), other.exists()) {
        (Ok(this), true) => match interleaved(&this, &other, runs) {
            Ok(line) => line,
            Err(e) => format!("the comparison failed: {e}"),
        },
        (Err(e), _) => e.to_string(),
        (_, false) => format!("{} does not exist", other.display()),
    })
}

/// `runs` starts of each binary, alternating which goes first: both medians (and quartiles)
/// and the median of `this - other` over the pairs.
fn interleaved(this: &std::path::Path, other: &std::path::Path, runs: usize) -> Result<String> {
    let mut mine = Samples::with_capacity(runs);
    let mut theirs = Samples::with_capacity(runs);
    let mut differences: Vec<f64> = Vec::with_capacity(runs);
    for i in 0..runs {
        let (a, b) = if i % 2 == 0 {
            let a = start_once(this)?.answered;
            (a, start_once(other)?.answered)
        } else {
            let b = start_once(other)?.answered;
            (start_once(this)?.answered, b)
        };
        mine.push(a);
        theirs.push(b);
        differences.push((a.as_secs_f64() - b.as_secs_f64()) * 1000.0);
    }
    differences.sort_by(f64::total_cmp);
    let quartiles = |s: &Samples| {
        format!(
            "p25 {:.3} p50 {:.3} p75 {:.3} ms",
            s.percentile_ms(25.0),
            s.percentile_ms(50.0),
            s.percentile_ms(75.0)
        )
    };
    Ok(format!(
        "{runs} interleaved starts each: this build {}; {} {}; median paired difference {:+.3} ms",
        quartiles(&mine),
        other.display(),
        quartiles(&theirs),
        differences
            .get(differences.len() / 2)
            .copied()
            .unwrap_or_default()
    ))
}

/// What any program pays here before its own code runs: the median spawn → exit of
/// `/bin/true` (fork, exec, glibc's loader and exit, measured as the binary is), and what one
/// `cpuid` instruction costs. glibc's loader detects the CPU's features and caches with dozens
/// of them at every exec; on a nested-virtualized machine each is a VM exit of several µs, so
/// the floor moves with the machine more than with this server. Beside it, in turn with it,
/// spawn → exit of `binary --version`: the same plus what this binary pays before and just
/// after its `main` (its larger image, std's and the allocator's set-up, argument parsing),
/// so the two show how much of the spawn → `main` step is the machine's.
fn machine_floor(binary: &std::path::Path) -> String {
    let mut floor = Samples::with_capacity(EXEC_RUNS);
    let mut version = Samples::with_capacity(EXEC_RUNS);
    for _ in 0..EXEC_RUNS {
        match spawn_to_exit(&mut Command::new("/bin/true")) {
            Ok(took) => floor.push(took),
            Err(e) => return format!("/bin/true cannot be run ({e})"),
        }
        if let Ok(took) = spawn_to_exit(Command::new(binary).arg("--version")) {
            version.push(took);
        }
    }
    let mut text = format!(
        "spawn to exit of /bin/true {:.2} ms",
        floor.percentile_ms(50.0)
    );
    if !version.is_empty() {
        text.push_str(&format!(
            ", of fake-apiserver --version {:.2} ms",
            version.percentile_ms(50.0)
        ));
    }
    if let Some(ns) = cpuid_ns() {
        text.push_str(&format!(
            "; one cpuid {:.2} µs (glibc's loader runs dozens at every exec)",
            ns / 1000.0
        ));
    }
    text
}

/// Runs `command` to its exit with its output discarded; how long from the spawn.
fn spawn_to_exit(command: &mut Command) -> std::io::Result<Duration> {
    let start = Instant::now();
    command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    Ok(start.elapsed())
}

/// What one `cpuid` instruction costs here, in ns (`None` off x86-64).
fn cpuid_ns() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        const ROUNDS: u32 = 200;
        let start = Instant::now();
        for _ in 0..ROUNDS {
            // Leaf 0 (vendor and highest leaf): valid on every x86-64 CPU.
            #[allow(unused_unsafe)]
            let result = unsafe { std::arch::x86_64::__cpuid(std::hint::black_box(0)) };
            std::hint::black_box(result);
        }
        Some(start.elapsed().as_nanos() as f64 / f64::from(ROUNDS))
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

/// The monotonic clock's reading in ns from an `Instant`'s `Debug` text (`Instant { tv_sec: 5,
/// tv_nsec: 7 }` on Linux); `None` where it reads otherwise.
fn monotonic_of_debug(text: &str) -> Option<u64> {
    let number = |key: &str| -> Option<u64> {
        let digits: String = text
            .split(key)
            .nth(1)?
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    Some(number("tv_sec: ")? * 1_000_000_000 + number("tv_nsec: ")?)
}

/// When the binary's `main` began, from its start-up timeline line (`main_began=Instant {...}`).
fn monotonic_of_log(log: &str) -> Option<u64> {
    let line = log.lines().find(|l| l.contains("start-up timeline"))?;
    monotonic_of_debug(line.split("main_began=").nth(1)?)
}

/// The `*_us` figures of [`TIMELINE_STEPS`] in the binary's start-up timeline line.
fn timeline(log: &str) -> Option<Vec<Duration>> {
    let line = log.lines().find(|l| l.contains("start-up timeline"))?;
    TIMELINE_STEPS
        .iter()
        .map(|step| {
            let value = line.split(&format!("{step}_us=")).nth(1)?;
            let digits: String = value.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok().map(Duration::from_micros)
        })
        .collect()
}

/// Whether `GET /readyz` at `address` is answered `200`.
fn readyz(address: SocketAddr) -> bool {
    let Ok(mut stream) = TcpStream::connect(address) else {
        return false;
    };
    let request = b"GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    if stream.write_all(request).is_err() {
        return false;
    }
    let mut answer = [0u8; 12];
    stream.read_exact(&mut answer).is_ok() && answer.starts_with(b"HTTP/1.1 200")
}
