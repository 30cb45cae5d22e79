//! A named, reusable race test: how to build the world, how to schedule it, and the one line
//! that replays any of its runs.

use std::sync::Arc;

use crate::choices::Chooser;
use crate::engine::{self, Exploration, ExploreOptions, Failure, Target};
use crate::sim::{Config, Sim};
use crate::trace::Run;
use crate::world::World;

/// Builds the world of one run.
pub type Build = Arc<dyn Fn(&mut World) + Send + Sync>;

/// A scenario: a world and a schedule configuration, under a name.
#[derive(Clone)]
pub struct Scenario {
    /// `<controller>/<guard>`, or `<controller>/without-<guard>` when a guard is removed.
    pub name: String,
    /// One line on what it shows.
    pub about: String,
    /// How runs are scheduled.
    pub config: Config,
    /// Whether some run is expected to break an invariant (a guard is removed).
    pub expect_failure: bool,
    build: Build,
}

impl Scenario {
    /// A scenario named `name` whose world `build` makes.
    pub fn new(
        name: &str,
        about: &str,
        build: impl Fn(&mut World) + Send + Sync + 'static,
    ) -> Self {
        Self {
            name: name.to_string(),
            about: about.to_string(),
            config: Config::default(),
            expect_failure: name.contains("/without-"),
            build: Arc::new(build),
        }
    }

    /// The same scenario, marked as one where some run breaks an invariant although no guard
    /// is named as removed (a race kept as upstream has it, shown rather than held).
    pub fn expecting_failure(mut self) -> Self {
        self.expect_failure = true;
        self
    }

    /// The names of the properties its runs check: invariants (of the world and of the server)
    /// and goals. Builds a world without running it.
    pub fn properties(&self) -> Properties {
        let mut world = World::default();
        (self.build)(&mut world);
        Properties {
            invariants: world
                .invariants
                .iter()
                .chain(&world.server_invariants)
                .map(|(name, _)| name.clone())
                .collect(),
            goals: world.goals.iter().map(|(name, _)| name.clone()).collect(),
        }
    }

    /// The same scenario with its configuration changed by `f`.
    pub fn configure(mut self, f: impl FnOnce(&mut Config)) -> Self {
        f(&mut self.config);
        self
    }

    /// The function that builds this scenario's world.
    pub fn build(&self) -> &(dyn Fn(&mut World) + Send + Sync) {
        &*self.build
    }

    /// Explores `seeds`; see [`engine::explore`].
    pub fn explore(
        &self,
        seeds: impl IntoIterator<Item = u64>,
        options: ExploreOptions,
        progress: impl FnMut(u64, usize),
    ) -> Exploration {
        engine::explore(self, seeds, options, progress)
    }

    /// Shrinks a failure of this scenario.
    pub fn shrink(&self, failure: &Failure) -> Run {
        engine::shrink(self, failure, self.config.shrink_replays)
    }

    /// The command that replays `seed` of this scenario (add `--choices` for a shrunk run).
    pub fn replay_line(&self, seed: u64) -> String {
        format!(
            "cargo run -p harness -- replay --scenario {} --seed {seed}{}",
            self.name,
            match self.config.strategy {
                crate::strategy::Strategy::Random => String::new(),
                s => format!(" --strategy {s}"),
            }
        )
    }

    /// A failure report: the seed, the replay line, and the shrunk schedule.
    pub fn report(&self, failure: &Failure, shrunk: &Run) -> String {
        let choices: Vec<String> = shrunk.choices.iter().map(|c| c.to_string()).collect();
        let show = format!(
            "cargo run -p harness -- show --scenario {} --seed {} --out {}.html",
            self.name,
            failure.seed,
            self.name.replace('/', "-")
        );
        format!(
            "{name}: seed {seed} fails after {steps} steps: {violation}\nreplay: {replay}\nshortest failing schedule ({len} steps; replay it with --choices {choices}):\n{trace}see it: {show}\n",
            name = self.name,
            seed = failure.seed,
            steps = failure.run.trace.len(),
            violation = failure.run.violation.as_deref().unwrap_or("?"),
            replay = self.replay_line(failure.seed),
            len = shrunk.trace.len(),
            choices = choices.join(","),
            trace = shrunk.render(),
        )
    }
}

/// What a scenario's runs check, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Properties {
    /// Safety properties, checked after every step.
    pub invariants: Vec<String>,
    /// Liveness properties, reached once faults stop.
    pub goals: Vec<String>,
}

impl Target for Scenario {
    fn run_with(&self, seed: u64, chooser: &mut Chooser) -> Run {
        match Sim::start(seed, self.config.clone(), &*self.build) {
            Ok(sim) => sim.run(chooser),
            Err(e) => Run {
                trace: Vec::new(),
                choices: Vec::new(),
                violation: Some(format!("harness: {e}")),
            },
        }
    }
}

impl std::fmt::Debug for Scenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scenario")
            .field("name", &self.name)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}
