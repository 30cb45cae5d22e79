//! The whole race suite as one report, guard by guard (`harness race`, run by `make race`).
//!
//! Scenarios come in pairs named after a guard: `<controller>/<guard>` explores with the guard
//! in place and faults on, and must hold; `<controller>/without-<guard>` removes it, and
//! exploration from seed 0 must find the bad outcome. A scenario without a partner (a property
//! of the whole system, such as both controllers on one server) is held alone; one that
//! [`Scenario::expecting_failure`] without naming a removed guard (a race kept as upstream has
//! it) is shown alone. For each guard the report says how many seeds held which invariants and
//! goals, and how long it took to find the removed guard's failure.

use std::time::Duration;

use crate::engine::ExploreOptions;
use crate::scenario::{Properties, Scenario};

/// How much the suite explores.
#[derive(Debug, Clone, Copy)]
pub struct SuiteOptions {
    /// Seeds per scenario that must hold.
    pub seeds: u64,
    /// Seeds for scenarios that run several controllers at once (`both/…`).
    pub combined_seeds: u64,
    /// Seeds searched, from 0, for a removed guard's failure.
    pub find_within: u64,
    /// Run every held seed twice and compare the traces.
    pub check_determinism: bool,
}

/// A scenario that must hold, explored.
#[derive(Debug, Clone)]
pub struct Held {
    /// The scenario.
    pub scenario: String,
    /// Seeds run.
    pub seeds: u64,
    /// What every run checked.
    pub properties: Properties,
    /// The first failing seed, its violation and replay line.
    pub failure: Option<(u64, String, String)>,
    /// Seeds whose two runs differed (determinism check only).
    pub nondeterministic: Vec<u64>,
    /// Wall time spent.
    pub elapsed: Duration,
}

/// A scenario whose failure must be found, searched.
#[derive(Debug, Clone)]
pub struct Found {
    /// The scenario.
    pub scenario: String,
    /// Runs made until the failure (or all of them, when none was found).
    pub runs: u64,
    /// The failing seed, its violation and replay line.
    pub failure: Option<(u64, String, String)>,
    /// Wall time until found (or spent).
    pub elapsed: Duration,
}

/// One guard's line of the suite.
#[derive(Debug, Clone)]
pub struct GuardReport {
    /// `<controller>/<guard>`.
    pub guard: String,
    /// The guard in place.
    pub held: Option<Held>,
    /// The guard removed (or the upstream race shown).
    pub found: Option<Found>,
}

impl GuardReport {
    /// Whether the guard's scenarios did what they must.
    pub fn ok(&self) -> bool {
        self.held
            .as_ref()
            .is_none_or(|h| h.failure.is_none() && h.nondeterministic.is_empty())
            && self.found.as_ref().is_none_or(|f| f.failure.is_some())
    }

    /// The report's lines for this guard.
    pub fn render(&self) -> String {
        let mut out = format!(
            "{} {}\n",
            if self.ok() { "ok  " } else { "FAIL" },
            self.guard
        );
        if let Some(held) = &self.held {
            out.push_str(&format!(
                "     held   {} over {} seeds in {:.1}s{}\n",
                held.scenario,
                held.seeds,
                held.elapsed.as_secs_f64(),
                if held.nondeterministic.is_empty() {
                    ""
                } else {
                    " — NONDETERMINISTIC"
                }
            ));
            match &held.failure {
                None => {
                    out.push_str(&format!(
                        "            invariants held: {}\n",
                        held.properties.invariants.join("; ")
                    ));
                    if !held.properties.goals.is_empty() {
                        out.push_str(&format!(
                            "            goals reached:   {}\n",
                            held.properties.goals.join("; ")
                        ));
                    }
                }
                Some((seed, violation, replay)) => out.push_str(&format!(
                    "            BROKEN at seed {seed}: {violation}\n            replay: {replay}\n"
                )),
            }
            if !held.nondeterministic.is_empty() {
                out.push_str(&format!(
                    "            seeds whose two runs differ: {:?}\n",
                    held.nondeterministic
                ));
            }
        }
        if let Some(found) = &self.found {
            match &found.failure {
                Some((seed, violation, replay)) => out.push_str(&format!(
                    "     found  {} at seed {seed} after {} runs, {:.2}s: {violation}\n            replay: {replay}\n",
                    found.scenario,
                    found.runs,
                    found.elapsed.as_secs_f64(),
                )),
                None => out.push_str(&format!(
                    "     NOT FOUND {} in {} runs ({:.1}s): the removed guard is not caught\n",
                    found.scenario,
                    found.runs,
                    found.elapsed.as_secs_f64()
                )),
            }
        }
        out
    }
}

/// The guard a scenario's name stands for, and whether the scenario removes it.
fn guard_of(scenario: &Scenario) -> (String, bool) {
    match scenario.name.split_once("/without-") {
        Some((controller, guard)) => (format!("{controller}/{guard}"), true),
        None => (scenario.name.clone(), scenario.expect_failure),
    }
}

/// Pairs scenarios by guard, in the order the guards first appear: `(guard, held, removed)`.
pub fn pair(scenarios: &[Scenario]) -> Vec<(String, Option<&Scenario>, Option<&Scenario>)> {
    let mut pairs: Vec<(String, Option<&Scenario>, Option<&Scenario>)> = Vec::new();
    for scenario in scenarios {
        let (guard, removed) = guard_of(scenario);
        let at = match pairs.iter().position(|(g, _, _)| *g == guard) {
            Some(at) => at,
            None => {
                pairs.push((guard, None, None));
                pairs.len() - 1
            }
        };
        if removed {
            pairs[at].2 = Some(scenario);
        } else {
            pairs[at].1 = Some(scenario);
        }
    }
    pairs
}

fn failure_line(scenario: &Scenario, failure: &crate::engine::Failure) -> (u64, String, String) {
    (
        failure.seed,
        failure.run.violation.clone().unwrap_or_default(),
        scenario.replay_line(failure.seed),
    )
}

/// Explores `scenario` over the seeds it must hold for.
pub fn hold(scenario: &Scenario, options: SuiteOptions) -> Held {
    let seeds = if scenario.name.starts_with("both/") {
        options.combined_seeds
    } else {
        options.seeds
    };
    let exploration = scenario.explore(
        0..seeds,
        ExploreOptions {
            stop_after: 1,
            check_determinism: options.check_determinism,
        },
        |_, _| {},
    );
    Held {
        scenario: scenario.name.clone(),
        seeds: exploration.runs,
        properties: scenario.properties(),
        failure: exploration
            .failures
            .first()
            .map(|f| failure_line(scenario, f)),
        nondeterministic: exploration.nondeterministic,
        elapsed: exploration.elapsed,
    }
}

/// Searches `scenario` from seed 0 for its first failure.
pub fn find(scenario: &Scenario, options: SuiteOptions) -> Found {
    let exploration =
        scenario.explore(0..options.find_within, ExploreOptions::default(), |_, _| {});
    Found {
        scenario: scenario.name.clone(),
        runs: exploration.runs,
        failure: exploration
            .failures
            .first()
            .map(|f| failure_line(scenario, f)),
        elapsed: exploration.elapsed,
    }
}

/// Runs the suite over `scenarios`, telling `each` every guard's report as it is done.
pub fn run(
    scenarios: &[Scenario],
    options: SuiteOptions,
    mut each: impl FnMut(&GuardReport),
) -> Vec<GuardReport> {
    pair(scenarios)
        .into_iter()
        .map(|(guard, held, removed)| {
            let report = GuardReport {
                guard,
                held: held.map(|s| hold(s, options)),
                found: removed.map(|s| find(s, options)),
            };
            each(&report);
            report
        })
        .collect()
}

/// The closing lines: how many guards held and were found, and which did not.
pub fn summary(reports: &[GuardReport]) -> String {
    let held = reports.iter().filter(|r| r.held.is_some()).count();
    let found = reports.iter().filter(|r| r.found.is_some()).count();
    let failing: Vec<&str> = reports
        .iter()
        .filter(|r| !r.ok())
        .map(|r| r.guard.as_str())
        .collect();
    let mut out = format!(
        "{} guards: {held} explored with the guard in place, {found} with it removed (or the upstream race shown); ",
        reports.len()
    );
    if failing.is_empty() {
        out.push_str("all as expected\n");
    } else {
        out.push_str(&format!("NOT as expected: {}\n", failing.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_every_removed_guard_with_its_guard() {
        let scenarios = crate::scenarios::all();
        let pairs = pair(&scenarios);
        let names: Vec<&str> = pairs.iter().map(|(g, _, _)| g.as_str()).collect();
        assert!(names.contains(&"eno/live-pod-list"));
        assert!(!names.iter().any(|n| n.contains("without-")));
        for (guard, held, removed) in &pairs {
            if let Some(removed) = removed {
                assert!(removed.expect_failure, "{guard}");
            }
            if let Some(held) = held {
                assert!(!held.expect_failure, "{guard}");
            }
        }
        let (_, held, removed) = pairs
            .iter()
            .find(|(g, _, _)| g == "eno/live-pod-list")
            .expect("paired");
        assert_eq!(held.map(|s| s.name.as_str()), Some("eno/live-pod-list"));
        assert_eq!(
            removed.map(|s| s.name.as_str()),
            Some("eno/without-live-pod-list")
        );
        // Shown alone: the upstream race kept as it is.
        let (_, held, removed) = pairs
            .iter()
            .find(|(g, _, _)| g == "karpenter/crash-after-launch")
            .expect("listed");
        assert!(held.is_none() && removed.is_some());
    }

    #[test]
    fn a_guard_is_ok_only_when_held_and_found() {
        let held = Held {
            scenario: "x/g".into(),
            seeds: 3,
            properties: Properties {
                invariants: vec!["never two".into()],
                goals: vec!["done".into()],
            },
            failure: None,
            nondeterministic: Vec::new(),
            elapsed: Duration::from_millis(5),
        };
        let found = Found {
            scenario: "x/without-g".into(),
            runs: 2,
            failure: Some((1, "never two: 2".into(), "replay".into())),
            elapsed: Duration::from_millis(1),
        };
        let mut report = GuardReport {
            guard: "x/g".into(),
            held: Some(held.clone()),
            found: Some(found.clone()),
        };
        assert!(report.ok());
        let text = report.render();
        assert!(text.contains("invariants held: never two"), "{text}");
        assert!(text.contains("at seed 1 after 2 runs"), "{text}");
        report.found = Some(Found {
            failure: None,
            ..found
        });
        assert!(!report.ok());
        assert!(report.render().contains("NOT FOUND"));
        report.found = None;
        report.held = Some(Held {
            nondeterministic: vec![4],
            ..held
        });
        assert!(!report.ok());
        assert!(summary(&[report]).contains("NOT as expected: x/g"));
    }

    #[test]
    fn names_what_a_scenario_checks() {
        let properties = crate::check::scenario("eno/live-pod-list").properties();
        assert!(
            properties
                .invariants
                .iter()
                .any(|i| i.contains("live synthesizer pod")),
            "{properties:?}"
        );
        assert!(!properties.goals.is_empty());
    }
}
