//! The exploration engine: run a model step by step with every decision taken from a
//! [`Chooser`], check its invariant after every step, search many seeds for a violation, and
//! shrink a failing run to the shortest list of decisions that still fails.

use std::future::Future;

use crate::choices::Chooser;

/// A system under test, seen as a set of enabled actions. Each action runs to completion before
/// the next is chosen, so the order of everything that matters is the chooser's.
pub trait Model {
    /// The actions enabled now, each with a stable, human-readable label. Empty means the run is
    /// over (nothing left to do).
    fn actions(&mut self) -> Vec<String>;

    /// Performs the action at `index` of the last [`Model::actions`] list; returns the trace line.
    fn perform(&mut self, index: usize) -> impl Future<Output = String>;

    /// The invariant; an error describes the violation.
    fn check(&mut self) -> impl Future<Output = Result<(), String>>;
}

/// What one run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// One line per step: the action and what it did.
    pub trace: Vec<String>,
    /// The decisions taken, enough to replay the run exactly.
    pub choices: Vec<usize>,
    /// The invariant violation that ended the run, if any.
    pub violation: Option<String>,
}

impl Run {
    /// The trace as text, one numbered step per line.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (i, line) in self.trace.iter().enumerate() {
            out.push_str(&format!("{i:>4}  {line}\n"));
        }
        if let Some(v) = &self.violation {
            out.push_str(&format!("VIOLATION: {v}\n"));
        }
        out
    }
}

/// Runs `model` for at most `max_steps` steps.
pub async fn run<M: Model>(model: &mut M, chooser: &mut Chooser, max_steps: usize) -> Run {
    let mut trace = Vec::new();
    let mut violation = None;
    for _ in 0..max_steps {
        let actions = model.actions();
        if actions.is_empty() {
            break;
        }
        let index = chooser.choose(actions.len());
        let line = model.perform(index).await;
        trace.push(format!("{}: {line}", actions[index]));
        if let Err(v) = model.check().await {
            violation = Some(v);
            break;
        }
    }
    Run {
        trace,
        choices: chooser.made().to_vec(),
        violation,
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

/// `requeue_after` of an Action. kube-runtime keeps it private, so it is read back from the
/// Debug form (`Action { requeue_after: Some(250ms) }`), the only view the type offers.
fn requeue_after(action: &kube::runtime::controller::Action) -> Option<std::time::Duration> {
    if *action == kube::runtime::controller::Action::await_change() {
        return None;
    }
    let debug = format!("{action:?}");
    let inner = debug.split("Some(").nth(1)?.split(')').next()?;
    let split = inner.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (number, unit) = inner.split_at(split);
    let value: f64 = number.parse().ok()?;
    let nanos = match unit {
        "ns" => value,
        "µs" | "us" => value * 1e3,
        "ms" => value * 1e6,
        "s" => value * 1e9,
        _ => return None,
    };
    Some(std::time::Duration::from_nanos(nanos as u64))
}

/// When a reconcile that returned `action` at `now` asks to run again, and after how long.
pub fn requeue_at(
    now: jiff::Timestamp,
    action: &kube::runtime::controller::Action,
) -> Option<(jiff::Timestamp, std::time::Duration)> {
    let after = requeue_after(action)?;
    let delay = jiff::SignedDuration::try_from(after).unwrap_or(jiff::SignedDuration::ZERO);
    Some((now.checked_add(delay).unwrap_or(now), after))
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

/// A failure report: the seed, the one command that replays it, and the shrunk schedule.
pub fn report(test: &str, case: &str, failure: &Failure, shrunk: &Run) -> String {
    format!(
        "seed {seed} violates the invariant after {steps} steps\nreplay: HARNESS_SEED={seed} cargo test -p harness --test {test} {case} -- --nocapture\nshortest failing schedule ({len} steps, choices {choices:?}):\n{trace}",
        seed = failure.seed,
        steps = failure.run.trace.len(),
        len = shrunk.trace.len(),
        choices = shrunk.choices,
        trace = shrunk.render(),
    )
}

/// Runs a fresh model for each seed; returns the first failing one.
pub async fn explore<M, F, Fut>(
    make: F,
    seeds: impl IntoIterator<Item = u64>,
    max_steps: usize,
) -> Option<Failure>
where
    M: Model,
    F: Fn(u64) -> Fut,
    Fut: Future<Output = M>,
{
    for seed in seeds {
        let mut model = make(seed).await;
        let run = run(&mut model, &mut Chooser::seeded(seed), max_steps).await;
        if run.violation.is_some() {
            return Some(Failure { seed, run });
        }
    }
    None
}

/// Replays `choices` on a fresh model (built with `seed`, which seeds everything but the
/// schedule).
pub async fn replay<M, F, Fut>(make: &F, seed: u64, choices: Vec<usize>, max_steps: usize) -> Run
where
    M: Model,
    F: Fn(u64) -> Fut,
    Fut: Future<Output = M>,
{
    let mut model = make(seed).await;
    run(&mut model, &mut Chooser::replay(choices), max_steps).await
}

/// Shrinks a failing run: removes chunks of decisions (halving the chunk size down to one, as
/// delta debugging does) and lowers single decisions toward 0, keeping every change after which
/// the replay still violates the invariant. Returns the smallest failing run found.
pub async fn shrink<M, F, Fut>(make: &F, failure: &Failure, max_steps: usize) -> Run
where
    M: Model,
    F: Fn(u64) -> Fut,
    Fut: Future<Output = M>,
{
    let mut best = failure.run.clone();
    let mut chunk = best.choices.len().max(1);
    while chunk >= 1 {
        let mut start = 0;
        while start < best.choices.len() {
            let mut candidate = best.choices.clone();
            let end = (start + chunk).min(candidate.len());
            candidate.drain(start..end);
            let run = replay(make, failure.seed, candidate, max_steps).await;
            if run.violation.is_some() && smaller(&run, &best) {
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
    for i in 0..best.choices.len() {
        while best.choices.get(i).is_some_and(|c| *c > 0) {
            let mut candidate = best.choices.clone();
            candidate[i] -= 1;
            let run = replay(make, failure.seed, candidate, max_steps).await;
            if run.violation.is_some() && smaller(&run, &best) {
                best = run;
            } else {
                break;
            }
        }
    }
    best
}

/// Whether `run` is a strict improvement on `best`: a shorter schedule, or as long with smaller
/// decisions. A replay continues past the decisions it was given (choosing the first option), so
/// a candidate can come back as the very schedule it was cut from; only a strict improvement is
/// kept, which is what makes shrinking terminate.
fn smaller(run: &Run, best: &Run) -> bool {
    (run.trace.len(), &run.choices) < (best.trace.len(), &best.choices)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A counter that must never reach 3 by increments of one; "reset" sets it back to 0.
    struct Counter {
        value: u32,
        steps: u32,
    }

    impl Model for Counter {
        fn actions(&mut self) -> Vec<String> {
            if self.steps >= 12 {
                return Vec::new();
            }
            vec!["reset".into(), "increment".into()]
        }
        async fn perform(&mut self, index: usize) -> String {
            self.steps += 1;
            if index == 0 {
                self.value = 0;
            } else {
                self.value += 1;
            }
            format!("value={}", self.value)
        }
        async fn check(&mut self) -> Result<(), String> {
            if self.value >= 3 {
                Err(format!("value reached {}", self.value))
            } else {
                Ok(())
            }
        }
    }

    #[test]
    fn requeue_durations_are_read_back() {
        assert_eq!(
            requeue_after(&kube::runtime::controller::Action::await_change()),
            None
        );
        for d in [
            std::time::Duration::from_millis(250),
            std::time::Duration::from_secs(120),
            std::time::Duration::from_micros(7),
            std::time::Duration::from_millis(1500),
        ] {
            assert_eq!(
                requeue_after(&kube::runtime::controller::Action::requeue(d)),
                Some(d),
                "{d:?}"
            );
        }
    }

    async fn counter(_seed: u64) -> Counter {
        Counter { value: 0, steps: 0 }
    }

    #[tokio::test]
    async fn finds_replays_and_shrinks_a_failure() {
        let failure = explore(counter, 0..100, 50).await.expect("some seed fails");
        let replayed = replay(&counter, failure.seed, failure.run.choices.clone(), 50).await;
        assert_eq!(
            replayed, failure.run,
            "a replay is the same run, step for step"
        );
        let shrunk = shrink(&counter, &failure, 50).await;
        assert_eq!(shrunk.trace.len(), 3, "{}", shrunk.render());
        assert!(shrunk.trace.iter().all(|l| l.starts_with("increment")));
    }

    /// One action only, failing at the third step: every cut replays into the same schedule.
    struct Ticker {
        ticks: u32,
    }

    impl Model for Ticker {
        fn actions(&mut self) -> Vec<String> {
            vec!["tick".into()]
        }

        async fn perform(&mut self, _index: usize) -> String {
            // Yield, so that the test's timeout can end a shrink that would never finish.
            tokio::task::yield_now().await;
            self.ticks += 1;
            format!("{}", self.ticks)
        }

        async fn check(&mut self) -> Result<(), String> {
            if self.ticks >= 3 {
                return Err("three ticks".into());
            }
            Ok(())
        }
    }

    #[tokio::test]
    async fn shrinking_ends_when_every_cut_replays_the_same_schedule() {
        let ticker = |_seed: u64| async { Ticker { ticks: 0 } };
        let failure = explore(ticker, 0..1, 10).await.expect("fails at once");
        let shrunk = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            shrink(&ticker, &failure, 10),
        )
        .await
        .expect("shrinking terminates");
        assert_eq!(shrunk.choices, vec![0, 0, 0]);
    }
}
