//! Bounded exhaustive exploration: every interleaving of a scenario's first `depth` steps, with
//! the orders that cannot matter pruned, so that a test can say "no interleaving of these N
//! steps breaks the invariant", not only "no seed found one".
//!
//! The search is stateless (Godefroid's VeriSoft): a node of the tree is a list of decisions,
//! reached by running the scenario again from the start (runs are deterministic, so that is a
//! replay). Pruning is by sleep sets: after exploring step `a` at a node, `a` goes to sleep for
//! the node's later branches, and stays asleep below a branch `b` as long as the steps taken are
//! independent of it ([`crate::sim::Transition::independent`]: different processes, and not two
//! requests on one API collection). Exploring `b` then `a` after `a` then `b` was explored would
//! reach the same state, so it is skipped. Faults are off in this mode (a fault would be a
//! decision of its own); time moves only when the schedule takes the "advance time" step, which
//! is dependent on everything.

use crate::scenario::Scenario;
use crate::sim::{Config, Faults, Sim, Transition};
use crate::trace::Run;

/// How far to search.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Steps per schedule.
    pub depth: usize,
    /// Stop after this many executions (each node of the tree is one), as a safety net.
    pub max_executions: u64,
}

/// What the search covered.
#[derive(Debug, Clone, Default)]
pub struct Coverage {
    /// Complete schedules explored (leaves: `depth` steps, or no step left).
    pub schedules: u64,
    /// Branches skipped because an equivalent order was already explored.
    pub pruned: u64,
    /// Executions of the scenario (tree nodes).
    pub executions: u64,
    /// Whether the search stopped at `max_executions` before covering the tree.
    pub truncated: bool,
    /// The first violating schedule found (its decisions and run), if any.
    pub violation: Option<Run>,
}

impl Coverage {
    /// One line: what was covered.
    pub fn summary(&self, scenario: &str, depth: usize) -> String {
        format!(
            "{scenario}: {} schedules of depth {depth} covered, {} branches pruned as equivalent, {} executions{}{}",
            self.schedules,
            self.pruned,
            self.executions,
            if self.truncated { " (TRUNCATED: raise the execution bound)" } else { "" },
            match &self.violation {
                Some(run) => format!("; violation: {}", run.violation.as_deref().unwrap_or("?")),
                None => String::new(),
            }
        )
    }
}

/// The configuration of the search: the scenario's, with faults off and `depth` steps.
fn config(scenario: &Scenario, depth: usize) -> Config {
    Config {
        faults: Faults::none(),
        steps: depth,
        ..scenario.config.clone()
    }
}

/// Runs one schedule of the search (the decisions of a [`Coverage::violation`]) again.
pub fn replay(scenario: &Scenario, seed: u64, choices: &[usize]) -> Run {
    match Sim::start(seed, config(scenario, choices.len()), scenario.build()) {
        Ok(sim) => {
            let walked = sim.walk(choices);
            Run {
                trace: walked.trace,
                choices: choices.to_vec(),
                violation: walked.violation,
            }
        }
        Err(e) => Run {
            trace: Vec::new(),
            choices: choices.to_vec(),
            violation: Some(format!("harness: {e}")),
        },
    }
}

/// Searches every schedule of `scenario` (built with `seed`) up to `bounds.depth` steps.
pub fn explore(scenario: &Scenario, seed: u64, bounds: Bounds) -> Coverage {
    let config = config(scenario, bounds.depth);
    let mut search = Search {
        scenario,
        seed,
        config,
        bounds,
        coverage: Coverage::default(),
    };
    search.node(&mut Vec::new(), Vec::new());
    search.coverage
}

struct Search<'a> {
    scenario: &'a Scenario,
    seed: u64,
    config: Config,
    bounds: Bounds,
    coverage: Coverage,
}

impl Search<'_> {
    /// Explores below the node `prefix`, with `sleep` asleep there.
    fn node(&mut self, prefix: &mut Vec<usize>, mut sleep: Vec<Transition>) {
        if self.coverage.violation.is_some() {
            return;
        }
        if self.coverage.executions >= self.bounds.max_executions {
            self.coverage.truncated = true;
            return;
        }
        self.coverage.executions += 1;
        let walked = match Sim::start(self.seed, self.config.clone(), self.scenario.build()) {
            Ok(sim) => sim.walk(prefix),
            Err(e) => {
                self.coverage.violation = Some(Run {
                    trace: Vec::new(),
                    choices: prefix.clone(),
                    violation: Some(format!("harness: {e}")),
                });
                return;
            }
        };
        if let Some(violation) = walked.violation {
            self.coverage.violation = Some(Run {
                trace: walked.trace,
                choices: prefix.clone(),
                violation: Some(violation),
            });
            return;
        }
        if prefix.len() >= self.bounds.depth || walked.next.is_empty() {
            self.coverage.schedules += 1;
            return;
        }
        for (index, step) in walked.next.iter().enumerate() {
            if sleep.iter().any(|s| s.id == step.id) {
                self.coverage.pruned += 1;
                continue;
            }
            let below: Vec<Transition> = sleep
                .iter()
                .filter(|s| s.independent(step))
                .cloned()
                .collect();
            prefix.push(index);
            self.node(prefix, below);
            prefix.pop();
            sleep.push(step.clone());
        }
    }
}
