//! How a seeded run picks the next step among those enabled.
//!
//! - [`Strategy::Random`]: a uniform random walk.
//! - [`Strategy::Pct`]: probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010):
//!   every lane (a process, a watch, the clock, ...) gets a random priority; the enabled step of
//!   the highest-priority lane runs; at `depth - 1` random steps the running lane drops to the
//!   lowest priority. A bug that needs `d` ordering constraints is found with probability at least
//!   1/(n·k^(d-1)) per run, for n lanes and k steps.
//!
//! A strategy only decides what a *seeded* run does. Every pick is recorded by the
//! [`crate::choices::Chooser`], so replaying a run needs no strategy at all.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A way to pick the next step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// Uniformly at random.
    #[default]
    Random,
    /// PCT with this bug depth (number of priority change points plus one).
    Pct {
        /// The depth `d`.
        depth: usize,
    },
}

impl std::str::FromStr for Strategy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "random" => Ok(Strategy::Random),
            "pct" => Ok(Strategy::Pct { depth: 3 }),
            other => match other.strip_prefix("pct:").map(str::parse::<usize>) {
                Some(Ok(depth)) if depth >= 1 => Ok(Strategy::Pct { depth }),
                _ => Err(format!(
                    "unknown strategy {other:?}: use random, pct or pct:DEPTH"
                )),
            },
        }
    }
}

impl std::fmt::Display for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Strategy::Random => write!(f, "random"),
            Strategy::Pct { depth } => write!(f, "pct:{depth}"),
        }
    }
}

/// A strategy's state for one run.
#[derive(Debug)]
pub struct Picker {
    strategy: Strategy,
    rng: ChaCha8Rng,
    priorities: BTreeMap<String, u64>,
    change_points: Vec<usize>,
    lowest: u64,
    step: usize,
}

impl Picker {
    /// A picker for one run of `seed`, expecting about `steps` steps.
    pub fn new(strategy: Strategy, seed: u64, steps: usize) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x005e_ed0f_5c4e_d01e);
        let change_points = match strategy {
            Strategy::Random => Vec::new(),
            Strategy::Pct { depth } => (1..depth)
                .map(|_| rng.random_range(0..steps.max(1)))
                .collect(),
        };
        Self {
            strategy,
            rng,
            priorities: BTreeMap::new(),
            change_points,
            lowest: 0,
            step: 0,
        }
    }

    /// Picks one of `lanes` (the lane of each enabled step, in order); returns its index.
    pub fn pick(&mut self, lanes: &[String]) -> usize {
        self.step += 1;
        if lanes.is_empty() {
            return 0;
        }
        match self.strategy {
            Strategy::Random => self.rng.random_range(0..lanes.len()),
            Strategy::Pct { .. } => {
                for lane in lanes {
                    if !self.priorities.contains_key(lane) {
                        // New lanes get a random priority above every lowered one.
                        let p = self.rng.random_range(1_000_000..u64::MAX / 2);
                        self.priorities.insert(lane.clone(), p);
                    }
                }
                let best = (0..lanes.len())
                    .max_by_key(|i| (self.priorities[&lanes[*i]], std::cmp::Reverse(*i)))
                    .unwrap_or(0);
                if self.change_points.contains(&self.step) {
                    self.lowest += 1;
                    self.priorities.insert(lanes[best].clone(), self.lowest);
                }
                best
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        for s in ["random", "pct:3", "pct:1"] {
            assert_eq!(s.parse::<Strategy>().unwrap().to_string(), s);
        }
        assert_eq!("pct".parse::<Strategy>(), Ok(Strategy::Pct { depth: 3 }));
        assert!("pct:0".parse::<Strategy>().is_err());
        assert!("dfs".parse::<Strategy>().is_err());
    }

    #[test]
    fn pct_runs_one_lane_until_a_change_point() {
        let lanes: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let mut picker = Picker::new(Strategy::Pct { depth: 1 }, 7, 100);
        let first = picker.pick(&lanes);
        for _ in 0..50 {
            assert_eq!(picker.pick(&lanes), first, "no change point at depth 1");
        }
        let mut picker = Picker::new(Strategy::Pct { depth: 4 }, 7, 20);
        let picks: Vec<usize> = (0..20).map(|_| picker.pick(&lanes)).collect();
        let switches = picks.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(switches <= 3, "{picks:?}");
    }

    #[test]
    fn same_seed_same_picks() {
        let lanes: Vec<String> = (0..5).map(|i| i.to_string()).collect();
        for strategy in [Strategy::Random, Strategy::Pct { depth: 3 }] {
            let mut a = Picker::new(strategy, 3, 50);
            let mut b = Picker::new(strategy, 3, 50);
            let pa: Vec<usize> = (0..50).map(|_| a.pick(&lanes)).collect();
            let pb: Vec<usize> = (0..50).map(|_| b.pick(&lanes)).collect();
            assert_eq!(pa, pb);
        }
    }
}
