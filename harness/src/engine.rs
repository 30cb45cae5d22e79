//! Exploration: run many seeds, collect what failed, replay a failure exactly, and shrink it
//! to the shortest list of decisions that still fails.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::choices::Chooser;
use crate::trace::Run;

/// Anything that runs deterministically from a seed and a source of decisions.
pub trait Target {
    /// One run: `seed` seeds everything but the decisions, which come from `chooser`.
    fn run_with(&self, seed: u64, chooser: &mut Chooser) -> Run;

    /// The run of `seed`.
    fn run(&self, seed: u64) -> Run {
        self.run_with(seed, &mut Chooser::seeded(seed))
    }

    /// The run of `seed` with its decisions replayed from `choices`.
    fn replay(&self, seed: u64, choices: Vec<usize>) -> Run {
        self.run_with(seed, &mut Chooser::replay(choices))
    }
}

/// A failing run found by [`explore`].
#[derive(Debug, Clone)]
pub struct Failure {
    /// The seed that failed.
    pub seed: u64,
    /// The run as the seed produced it.
    pub run: Run,
}

/// What an exploration did.
#[derive(Debug, Clone, Default)]
pub struct Exploration {
    /// Runs made.
    pub runs: u64,
    /// Steps taken, over all runs.
    pub steps: u64,
    /// Distinct traces among the runs.
    pub distinct: usize,
    /// The trace hash of every run.
    pub hashes: BTreeSet<u64>,
    /// The failing runs (at most the number asked for).
    pub failures: Vec<Failure>,
    /// Seeds whose second run differed from the first (determinism check only).
    pub nondeterministic: Vec<u64>,
    /// Wall time spent.
    pub elapsed: Duration,
}

/// How to explore.
#[derive(Debug, Clone, Copy)]
pub struct ExploreOptions {
    /// Stop after this many failures (0: never stop).
    pub stop_after: usize,
    /// Run every seed twice and compare the traces.
    pub check_determinism: bool,
}

impl Default for ExploreOptions {
    fn default() -> Self {
        Self {
            stop_after: 1,
            check_determinism: false,
        }
    }
}

/// Runs each seed; `progress` is told after every run (runs so far, failures so far).
pub fn explore<T: Target + ?Sized>(
    target: &T,
    seeds: impl IntoIterator<Item = u64>,
    options: ExploreOptions,
    mut progress: impl FnMut(u64, usize),
) -> Exploration {
    let started = Instant::now();
    let mut report = Exploration::default();
    for seed in seeds {
        let run = target.run(seed);
        report.runs += 1;
        report.steps += run.trace.len() as u64;
        let hash = run.hash();
        report.hashes.insert(hash);
        if options.check_determinism && target.run(seed).hash() != hash {
            report.nondeterministic.push(seed);
        }
        if run.violation.is_some() {
            report.failures.push(Failure { seed, run });
        }
        progress(report.runs, report.failures.len());
        if options.stop_after > 0 && report.failures.len() >= options.stop_after {
            break;
        }
    }
    report.distinct = report.hashes.len();
    report.elapsed = started.elapsed();
    report
}

/// Shrinks a failing run: removes chunks of decisions (halving the chunk size down to one, as
/// delta debugging does) and lowers single decisions toward 0, keeping every change after which
/// the replay still fails *the same way* (the same invariant). Returns the smallest failing run
/// found within `max_replays` replays (long runs make each replay costly).
pub fn shrink<T: Target + ?Sized>(target: &T, failure: &Failure, max_replays: usize) -> Run {
    let kind = violation_kind(failure.run.violation.as_deref());
    let still_fails =
        |run: &Run| violation_kind(run.violation.as_deref()) == kind && kind.is_some();
    let replays = std::cell::Cell::new(0usize);
    let replay = |choices: Vec<usize>| -> Option<Run> {
        if replays.get() >= max_replays {
            return None;
        }
        replays.set(replays.get() + 1);
        Some(target.replay(failure.seed, choices))
    };
    let mut best = failure.run.clone();
    let mut chunk = best.choices.len().max(1);
    while chunk >= 1 {
        let mut start = 0;
        while start < best.choices.len() {
            let mut candidate = best.choices.clone();
            let end = (start + chunk).min(candidate.len());
            candidate.drain(start..end);
            let Some(run) = replay(candidate) else {
                return best;
            };
            if still_fails(&run) && smaller(&run, &best) {
                best = run;
            } else {
                start += chunk;
            }
        }
        if chunk == 1 {
            break;
        }
        chunk /= 2;
    }
    // Lower each decision: try 0, then halve, then one less (a fault's coin flip is a number
    // below 1000, so lowering it one by one would take hundreds of replays).
    for i in 0..best.choices.len() {
        while let Some(&current) = best.choices.get(i) {
            let mut lowered = false;
            for value in [0, current / 2, current.saturating_sub(1)] {
                if value >= current {
                    continue;
                }
                let mut candidate = best.choices.clone();
                candidate[i] = value;
                let Some(run) = replay(candidate) else {
                    return best;
                };
                if still_fails(&run) && smaller(&run, &best) {
                    best = run;
                    lowered = true;
                    break;
                }
            }
            if !lowered {
                break;
            }
        }
    }
    best
}

/// The invariant a violation names (the text before the first `:`).
fn violation_kind(violation: Option<&str>) -> Option<String> {
    violation.map(|v| v.split(':').next().unwrap_or(v).to_string())
}

/// Whether `run` is a strict improvement on `best`: a shorter schedule, or as long with smaller
/// decisions. A replay continues past the decisions it was given, so a candidate can come back
/// as the very schedule it was cut from; only a strict improvement is kept, which is what makes
/// shrinking terminate.
fn smaller(run: &Run, best: &Run) -> bool {
    (run.trace.len(), &run.choices) < (best.trace.len(), &best.choices)
}

/// The seeds to explore: `HARNESS_SEED=n` runs just that one (to replay a failure),
/// `HARNESS_SEEDS=n` runs seeds `0..n`; otherwise `default`.
pub fn seeds_from_env(default: std::ops::Range<u64>) -> Vec<u64> {
    if let Some(seed) = std::env::var("HARNESS_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    {
        return vec![seed];
    }
    match std::env::var("HARNESS_SEEDS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    {
        Some(n) => (0..n).collect(),
        None => default.collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Step;

    /// A counter that must never reach 3 by increments of one; "reset" sets it back to 0.
    struct Counter;

    impl Target for Counter {
        fn run_with(&self, _seed: u64, chooser: &mut Chooser) -> Run {
            let mut value = 0;
            let mut trace = Vec::new();
            let mut violation = None;
            for _ in 0..12 {
                let increment = chooser.choose(2) == 1;
                value = if increment { value + 1 } else { 0 };
                trace.push(Step {
                    at_ms: 0,
                    lane: "counter".into(),
                    action: if increment { "increment" } else { "reset" }.into(),
                    outcome: value.to_string(),
                });
                if value >= 3 {
                    violation = Some(format!("too high: value reached {value}"));
                    break;
                }
            }
            Run {
                trace,
                choices: chooser.made().to_vec(),
                violation,
            }
        }
    }

    #[test]
    fn finds_replays_and_shrinks_a_failure() {
        let report = explore(&Counter, 0..100, ExploreOptions::default(), |_, _| {});
        let failure = report.failures.first().expect("some seed fails").clone();
        let replayed = Counter.replay(failure.seed, failure.run.choices.clone());
        assert_eq!(
            replayed, failure.run,
            "a replay is the same run, step for step"
        );
        let shrunk = shrink(&Counter, &failure, 1000);
        assert_eq!(shrunk.trace.len(), 3, "{}", shrunk.render());
        assert!(shrunk.trace.iter().all(|s| s.action == "increment"));
    }

    #[test]
    fn exploration_counts_runs_and_distinct_traces_and_checks_determinism() {
        let report = explore(
            &Counter,
            0..20,
            ExploreOptions {
                stop_after: 0,
                check_determinism: true,
            },
            |_, _| {},
        );
        assert_eq!(report.runs, 20);
        assert!(report.distinct > 1 && report.distinct <= 20);
        assert!(report.nondeterministic.is_empty());
        assert!(!report.failures.is_empty());
    }

    /// A target whose run depends on something other than its seed.
    struct Flaky(std::sync::atomic::AtomicU64);

    impl Target for Flaky {
        fn run_with(&self, _seed: u64, chooser: &mut Chooser) -> Run {
            let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Run {
                trace: vec![Step {
                    at_ms: n,
                    lane: "flaky".into(),
                    action: "tick".into(),
                    outcome: String::new(),
                }],
                choices: chooser.made().to_vec(),
                violation: None,
            }
        }
    }

    #[test]
    fn the_determinism_check_catches_a_run_that_differs() {
        let report = explore(
            &Flaky(Default::default()),
            0..3,
            ExploreOptions {
                stop_after: 0,
                check_determinism: true,
            },
            |_, _| {},
        );
        assert_eq!(report.nondeterministic, vec![0, 1, 2]);
    }
}
