//! Injected time: the controllers never read the wall clock directly.
//!
//! Production uses [`SystemClock`]; tests and the race harness use [`ManualClock`] (or their own
//! implementation) so that time only moves when they say so.

use std::sync::{Arc, Mutex};

use jiff::{SignedDuration, Timestamp};

/// A source of the current time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// Shared handle to a clock.
pub type SharedClock = Arc<dyn Clock>;

/// The real wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that only moves when told to.
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<Mutex<Timestamp>>,
}

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: Timestamp) -> Self {
        Self {
            now: Arc::new(Mutex::new(start)),
        }
    }

    /// Move the clock forward (or backward, for a negative duration).
    pub fn advance(&self, by: SignedDuration) {
        let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        *now = now.saturating_add(by).unwrap_or(*now);
    }

    /// Set the clock to `to`.
    pub fn set(&self, to: Timestamp) {
        *self.now.lock().unwrap_or_else(|e| e.into_inner()) = to;
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        // 2024-01-01T00:00:00Z: a fixed, readable start for deterministic runs.
        Self::new(Timestamp::from_second(1_704_067_200).unwrap_or(Timestamp::UNIX_EPOCH))
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let clock = ManualClock::default();
        let t0 = clock.now();
        assert_eq!(clock.now(), t0);
        clock.advance(SignedDuration::from_secs(90));
        assert_eq!(
            clock.now().duration_since(t0),
            SignedDuration::from_secs(90)
        );
    }
}
