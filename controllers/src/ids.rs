//! Injected identifiers: UUIDs and random choices come from here, never from a global RNG.

use std::sync::{Arc, Mutex};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A source of identifiers and random numbers.
pub trait IdSource: Send + Sync + std::fmt::Debug {
    /// A new version-4 UUID.
    fn uuid(&self) -> uuid::Uuid;
    /// A uniformly random integer in `[low, high)`; `low` when the range is empty.
    fn int_in(&self, low: i64, high: i64) -> i64;
}

/// Shared handle to an id source.
pub type SharedIds = Arc<dyn IdSource>;

/// Real randomness from the operating system (production).
#[derive(Debug, Default, Clone, Copy)]
pub struct RandomIds;

impl IdSource for RandomIds {
    fn uuid(&self) -> uuid::Uuid {
        uuid::Uuid::new_v4()
    }
    fn int_in(&self, low: i64, high: i64) -> i64 {
        if high <= low {
            return low;
        }
        rand::rng().random_range(low..high)
    }
}

/// A seeded generator: the same seed gives the same sequence (tests and the race harness).
#[derive(Debug, Clone)]
pub struct SeededIds {
    rng: Arc<Mutex<ChaCha8Rng>>,
}

impl SeededIds {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            rng: Arc::new(Mutex::new(ChaCha8Rng::seed_from_u64(seed))),
        }
    }
}

impl IdSource for SeededIds {
    fn uuid(&self) -> uuid::Uuid {
        let mut bytes = [0u8; 16];
        self.rng
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .fill(&mut bytes);
        uuid::Builder::from_random_bytes(bytes).into_uuid()
    }
    fn int_in(&self, low: i64, high: i64) -> i64 {
        if high <= low {
            return low;
        }
        self.rng
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .random_range(low..high)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence() {
        let (a, b) = (SeededIds::new(7), SeededIds::new(7));
        assert_eq!(a.uuid(), b.uuid());
        assert_eq!(a.int_in(0, 1000), b.int_in(0, 1000));
        assert_ne!(SeededIds::new(8).uuid(), SeededIds::new(7).uuid());
        assert_eq!(a.uuid().get_version_num(), 4);
    }
}
