//! Section 6: time from nothing to the first answered request: build a runtime, the server and
//! the in-process client, and GET `/version`. Cold figures come from fresh processes; warm ones
//! repeat the same steps inside one process.

use std::process::Command;
use std::time::{Duration, Instant};

use fake_apiserver::FakeApiServer;

use crate::fixtures::{self, Result};
use crate::report::{emit, Figure, Samples, Target};

/// Fresh processes started for the cold figure.
const COLD_RUNS: usize = 7;
/// Repetitions in this process for the warm figure.
const WARM_RUNS: usize = 30;
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
