//! Exploration results as data: what one `harness explore` did (one slice of the seed space),
//! and the merge of many slices — how exploration goes past one machine. A Kubernetes Indexed
//! Job (`deploy/harness/`) runs one slice per index; each pod prints its report as one JSON line;
//! `harness merge` reads them back and says what the whole exploration found.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::engine::Exploration;
use crate::scenario::Scenario;

/// One failing seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedSeed {
    /// The seed.
    pub seed: u64,
    /// What it broke.
    pub violation: String,
    /// The command that replays it.
    pub replay: String,
}

/// What one slice of an exploration did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SliceReport {
    /// The scenario.
    pub scenario: String,
    /// The strategy (`random`, `pct:3`).
    pub strategy: String,
    /// First seed of the slice.
    pub from: u64,
    /// Seeds asked for.
    pub seeds: u64,
    /// Runs made (fewer than `seeds` when it stopped at a failure).
    pub runs: u64,
    /// Steps over all runs.
    pub steps: u64,
    /// The trace hash of every run (distinct traces = coverage).
    pub trace_hashes: BTreeSet<u64>,
    /// Failing seeds.
    pub failures: Vec<FailedSeed>,
    /// Seeds whose two runs differed (with `--check-determinism`).
    pub nondeterministic: Vec<u64>,
    /// Wall time, in milliseconds.
    pub elapsed_ms: u64,
}

impl SliceReport {
    /// The report of `exploration` of `scenario` over `seeds` seeds from `from`.
    pub fn new(scenario: &Scenario, from: u64, seeds: u64, exploration: &Exploration) -> Self {
        Self {
            scenario: scenario.name.clone(),
            strategy: scenario.config.strategy.to_string(),
            from,
            seeds,
            runs: exploration.runs,
            steps: exploration.steps,
            trace_hashes: exploration.hashes.clone(),
            failures: exploration
                .failures
                .iter()
                .map(|f| FailedSeed {
                    seed: f.seed,
                    violation: f.run.violation.clone().unwrap_or_default(),
                    replay: scenario.replay_line(f.seed),
                })
                .collect(),
            nondeterministic: exploration.nondeterministic.clone(),
            elapsed_ms: exploration.elapsed.as_millis() as u64,
        }
    }
}

/// Why slices could not be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// A line is not a slice report.
    #[error("line {line}: not a harness slice report: {error}")]
    NotAReport {
        /// 1-based line number.
        line: usize,
        /// The decoding error.
        error: String,
    },
    /// Nothing to merge.
    #[error("no slice reports in the input")]
    Empty,
}

/// Everything the slices of one or more scenarios found together.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Merged {
    /// Per scenario (by name): the merged figures.
    pub scenarios: Vec<MergedScenario>,
}

/// One scenario's slices, merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergedScenario {
    /// The scenario.
    pub scenario: String,
    /// Slices read.
    pub slices: usize,
    /// Seeds covered (the union of the slices' ranges that ran).
    pub runs: u64,
    /// Steps.
    pub steps: u64,
    /// Distinct traces over all slices.
    pub distinct: usize,
    /// Seed ranges asked for that overlap another slice's (a misconfigured Job).
    pub overlapping: bool,
    /// Every failure, by seed.
    pub failures: Vec<FailedSeed>,
    /// Seeds that ran differently twice.
    pub nondeterministic: Vec<u64>,
    /// Sum of the slices' wall times, in milliseconds.
    pub busy_ms: u64,
}

/// Reads slice reports, one JSON object a line (other lines — log output — are skipped only if
/// they do not start with `{`), and merges them by scenario.
pub fn merge(text: &str) -> Result<Merged, MergeError> {
    let mut slices: Vec<SliceReport> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if !line.starts_with('{') {
            continue;
        }
        let slice = serde_json::from_str(line).map_err(|e| MergeError::NotAReport {
            line: i + 1,
            error: e.to_string(),
        })?;
        slices.push(slice);
    }
    if slices.is_empty() {
        return Err(MergeError::Empty);
    }
    let names: BTreeSet<String> = slices.iter().map(|s| s.scenario.clone()).collect();
    let scenarios = names
        .into_iter()
        .map(|name| {
            let mine: Vec<&SliceReport> = slices.iter().filter(|s| s.scenario == name).collect();
            let mut ranges: Vec<(u64, u64)> =
                mine.iter().map(|s| (s.from, s.from + s.seeds)).collect();
            ranges.sort();
            let overlapping = ranges.windows(2).any(|w| w[1].0 < w[0].1);
            let hashes: BTreeSet<u64> = mine
                .iter()
                .flat_map(|s| s.trace_hashes.iter().copied())
                .collect();
            let mut failures: Vec<FailedSeed> = mine
                .iter()
                .flat_map(|s| s.failures.iter().cloned())
                .collect();
            failures.sort_by_key(|f| f.seed);
            failures.dedup_by_key(|f| f.seed);
            let mut nondeterministic: Vec<u64> = mine
                .iter()
                .flat_map(|s| s.nondeterministic.iter().copied())
                .collect();
            nondeterministic.sort();
            nondeterministic.dedup();
            MergedScenario {
                scenario: name,
                slices: mine.len(),
                runs: mine.iter().map(|s| s.runs).sum(),
                steps: mine.iter().map(|s| s.steps).sum(),
                distinct: hashes.len(),
                overlapping,
                failures,
                nondeterministic,
                busy_ms: mine.iter().map(|s| s.elapsed_ms).sum(),
            }
        })
        .collect();
    Ok(Merged { scenarios })
}

impl MergedScenario {
    /// The summary lines `harness merge` prints.
    pub fn render(&self) -> String {
        let mut out = format!(
            "{}: {} slices, {} runs, {} steps, {} distinct traces, {} failing, {:.1}s busy{}\n",
            self.scenario,
            self.slices,
            self.runs,
            self.steps,
            self.distinct,
            self.failures.len(),
            self.busy_ms as f64 / 1000.0,
            if self.overlapping {
                " (WARNING: slices overlap; check the Job's --index/--seeds)"
            } else {
                ""
            }
        );
        for f in &self.failures {
            out.push_str(&format!(
                "seed {} fails: {}\nreplay: {}\n",
                f.seed, f.violation, f.replay
            ));
        }
        if !self.nondeterministic.is_empty() {
            out.push_str(&format!(
                "nondeterministic seeds: {:?}\n",
                self.nondeterministic
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(from: u64, hashes: &[u64], failing: &[u64]) -> String {
        serde_json::to_string(&SliceReport {
            scenario: "x/y".into(),
            strategy: "random".into(),
            from,
            seeds: 10,
            runs: 10,
            steps: 100,
            trace_hashes: hashes.iter().copied().collect(),
            failures: failing
                .iter()
                .map(|s| FailedSeed {
                    seed: *s,
                    violation: "broken".into(),
                    replay: format!("replay {s}"),
                })
                .collect(),
            nondeterministic: vec![],
            elapsed_ms: 1500,
        })
        .unwrap()
    }

    #[test]
    fn merges_slices_by_scenario_and_unions_traces() {
        let text = format!(
            "some log line\n{}\n{}\n",
            slice(0, &[1, 2, 3], &[]),
            slice(10, &[3, 4], &[17])
        );
        let merged = merge(&text).unwrap();
        assert_eq!(merged.scenarios.len(), 1);
        let s = &merged.scenarios[0];
        assert_eq!((s.slices, s.runs, s.steps, s.distinct), (2, 20, 200, 4));
        assert!(!s.overlapping);
        assert_eq!(s.failures.len(), 1);
        assert!(s.render().contains("replay 17"));
    }

    #[test]
    fn overlapping_slices_and_bad_input_are_reported() {
        let text = format!("{}\n{}\n", slice(0, &[1], &[]), slice(5, &[2], &[]));
        assert!(merge(&text).unwrap().scenarios[0].overlapping);
        assert!(matches!(merge("no reports here"), Err(MergeError::Empty)));
        assert!(matches!(
            merge("{\"not\": \"a report\"}"),
            Err(MergeError::NotAReport { line: 1, .. })
        ));
    }
}
