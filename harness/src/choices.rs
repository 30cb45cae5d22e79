//! Where every decision of a run comes from: a seeded generator, or a recorded list of choices
//! being replayed (possibly shortened by the shrinker).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The source of a run's decisions. Every decision is recorded, so any run can be replayed.
#[derive(Debug, Clone)]
pub struct Chooser {
    source: Source,
    made: Vec<usize>,
}

#[derive(Debug, Clone)]
enum Source {
    Seeded(Box<ChaCha8Rng>),
    Replay { choices: Vec<usize>, next: usize },
}

impl Chooser {
    /// Decisions drawn from a generator seeded with `seed`.
    pub fn seeded(seed: u64) -> Self {
        Self {
            source: Source::Seeded(Box::new(ChaCha8Rng::seed_from_u64(seed))),
            made: Vec::new(),
        }
    }

    /// Decisions replayed from `choices`. A recorded choice larger than the options now available
    /// wraps around; once the list runs out, the first option is taken. So a shortened list still
    /// describes a complete run, which is what shrinking relies on.
    pub fn replay(choices: Vec<usize>) -> Self {
        Self {
            source: Source::Replay { choices, next: 0 },
            made: Vec::new(),
        }
    }

    /// Picks one of `options` (which must be at least 1) and records it.
    pub fn choose(&mut self, options: usize) -> usize {
        let options = options.max(1);
        let choice = match &mut self.source {
            Source::Seeded(rng) => rng.random_range(0..options),
            Source::Replay { choices, next } => {
                let recorded = choices.get(*next).copied().unwrap_or(0);
                *next += 1;
                recorded % options
            }
        };
        self.made.push(choice);
        choice
    }

    /// Picks one of `options` with `pick` when the run is seeded (a strategy decides), or the
    /// recorded decision when replaying; records it either way.
    pub fn choose_by(&mut self, options: usize, pick: impl FnOnce() -> usize) -> usize {
        let options = options.max(1);
        let choice = match &mut self.source {
            Source::Seeded(_) => pick() % options,
            Source::Replay { choices, next } => {
                let recorded = choices.get(*next).copied().unwrap_or(0);
                *next += 1;
                recorded % options
            }
        };
        self.made.push(choice);
        choice
    }

    /// Whether this chooser replays recorded decisions.
    pub fn is_replay(&self) -> bool {
        matches!(self.source, Source::Replay { .. })
    }

    /// The decisions made so far.
    pub fn made(&self) -> &[usize] {
        &self.made
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_runs_repeat_and_replays_reproduce_them() {
        let mut a = Chooser::seeded(42);
        let mut b = Chooser::seeded(42);
        let picks: Vec<usize> = (0..20).map(|i| a.choose(i % 5 + 1)).collect();
        let again: Vec<usize> = (0..20).map(|i| b.choose(i % 5 + 1)).collect();
        assert_eq!(picks, again);
        let mut replay = Chooser::replay(a.made().to_vec());
        let replayed: Vec<usize> = (0..20).map(|i| replay.choose(i % 5 + 1)).collect();
        assert_eq!(picks, replayed);
    }

    #[test]
    fn short_replays_wrap_and_default() {
        let mut r = Chooser::replay(vec![7, 1]);
        assert_eq!(r.choose(3), 1); // 7 % 3
        assert_eq!(r.choose(3), 1);
        assert_eq!(r.choose(3), 0); // ran out
        assert_eq!(r.made(), &[1, 1, 0]);
    }
}
