//! The two tests every guard gets, as functions a test calls with a scenario's name:
//! [`removed_guard_is_found`] for `<controller>/without-<guard>` and [`guard_holds`] for
//! `<controller>/<guard>`. They panic with the full report (seed, replay line, shrunk
//! schedule) when the property does not hold, as a test should.

use crate::engine::{Exploration, ExploreOptions, Target};
use crate::scenario::Scenario;

/// The scenario named `name`; panics if there is none (for tests).
pub fn scenario(name: &str) -> Scenario {
    crate::scenarios::find(name).unwrap_or_else(|| panic!("no scenario {name}"))
}

/// The property a violation names, and whether it is a goal not reached (liveness) rather than
/// an invariant broken: `("one live synthesizer pod per generation", false)`.
pub fn property(violation: &str) -> (&str, bool) {
    match violation
        .strip_prefix("not reached within ")
        .and_then(|v| v.split_once("once faults stopped: "))
    {
        Some((_, goal)) => (goal.split(':').next().unwrap_or(goal), true),
        None => (violation.split(':').next().unwrap_or(violation), false),
    }
}

/// Exploration from seed 0 (at most `max_seeds` seeds) finds a run that breaks one of
/// `properties` (names, or prefixes of names, of invariants; of goals when `liveness`), the
/// shrunk schedule breaks the same one and replays exactly, and the report carries the one line
/// that replays it. Returns the report.
pub fn removed_guard_is_found(
    name: &str,
    properties: &[&str],
    liveness: bool,
    max_seeds: u64,
) -> String {
    let scenario = scenario(name);
    let exploration = scenario.explore(0..max_seeds, ExploreOptions::default(), |_, _| {});
    let failure = exploration
        .failures
        .first()
        .unwrap_or_else(|| panic!("{name}: no failure in {} seeds", exploration.runs))
        .clone();
    let violation = failure.run.violation.clone().unwrap_or_default();
    let (broken, is_liveness) = property(&violation);
    assert!(
        properties.iter().any(|p| broken.starts_with(p)),
        "{name}: {violation}"
    );
    assert_eq!(is_liveness, liveness, "{name}: {violation}");
    let shrunk = scenario.shrink(&failure);
    let report = scenario.report(&failure, &shrunk);
    assert!(shrunk.trace.len() <= failure.run.trace.len(), "{report}");
    assert_eq!(
        shrunk.violation.as_deref().map(property),
        Some((broken, is_liveness)),
        "{report}"
    );
    let again = scenario.replay(failure.seed, shrunk.choices.clone());
    assert_eq!(
        again.render(),
        shrunk.render(),
        "the shrunk schedule replays exactly"
    );
    assert!(report.contains(&format!(
        "cargo run -p harness -- replay --scenario {name} --seed {}",
        failure.seed
    )));
    report
}

/// With the guard in place and faults on, no seed of `seeds` breaks an invariant, every run
/// reaches every goal once faults stop, and the seeds explore different schedules.
pub fn guard_holds(name: &str, seeds: impl IntoIterator<Item = u64>) -> Exploration {
    let scenario = scenario(name);
    assert!(
        scenario.config.faults.budget > 0,
        "{name} explores with faults on"
    );
    let exploration = scenario.explore(seeds, ExploreOptions::default(), |_, _| {});
    if let Some(failure) = exploration.failures.first() {
        let shrunk = scenario.shrink(failure);
        panic!("{}", scenario.report(failure, &shrunk));
    }
    assert!(
        exploration.distinct as u64 > exploration.runs / 2,
        "{name}: seeds explore different schedules"
    );
    exploration
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_broken_property() {
        assert_eq!(
            property("one live synthesizer pod per generation: generation 2 has 2"),
            ("one live synthesizer pod per generation", false)
        );
        assert_eq!(
            property("not reached within 1800.000s of virtual time once faults stopped: composition synthesized: not yet"),
            ("composition synthesized", true)
        );
    }
}
