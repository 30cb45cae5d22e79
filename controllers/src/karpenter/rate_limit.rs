//! Upstream's requeue rate limiter: `max(exponential per item 1s → 1m, token bucket 10 qps / burst
//! 100)` (client-go `workqueue.NewMaxOfRateLimiter`), on the injected clock.
//!
//! As in controller-runtime it applies to rate-limited requeues only — a reconcile error or a bare
//! `Requeue` — and a success or a `RequeueAfter` forgets the item's failures.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use jiff::Timestamp;

use crate::clock::SharedClock;

/// Per-item exponential backoff combined with a shared token bucket.
#[derive(Debug)]
pub struct RateLimiter {
    clock: SharedClock,
    base: Duration,
    max: Duration,
    qps: f64,
    burst: f64,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    failures: HashMap<String, u32>,
    tokens: f64,
    last: Option<Timestamp>,
}

impl RateLimiter {
    /// Upstream's limiter: 1s → 1m per item, 10 qps with a burst of 100.
    pub fn karpenter_default(clock: SharedClock) -> Self {
        Self::new(
            clock,
            Duration::from_secs(1),
            Duration::from_secs(60),
            10.0,
            100,
        )
    }

    /// A limiter with explicit parameters.
    pub fn new(clock: SharedClock, base: Duration, max: Duration, qps: f64, burst: u32) -> Self {
        Self {
            clock,
            base,
            max,
            qps,
            burst: f64::from(burst),
            state: Mutex::new(State {
                failures: HashMap::new(),
                tokens: f64::from(burst),
                last: None,
            }),
        }
    }

    /// `When(item)`: how long to wait before the item's next rate-limited retry.
    pub fn when(&self, item: &str) -> Duration {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let failures = state.failures.entry(item.to_string()).or_insert(0);
        let exp = *failures;
        *failures = failures.saturating_add(1);
        let backoff = self
            .base
            .checked_mul(2u32.saturating_pow(exp.min(31)))
            .unwrap_or(self.max)
            .min(self.max);
        // Token bucket.
        let now = self.clock.now();
        if let Some(last) = state.last {
            let elapsed = now.duration_since(last).as_secs_f64().max(0.0);
            state.tokens = (state.tokens + elapsed * self.qps).min(self.burst);
        }
        state.last = Some(now);
        state.tokens -= 1.0;
        let bucket = if state.tokens >= 0.0 || self.qps <= 0.0 {
            Duration::ZERO
        } else {
            Duration::try_from_secs_f64(-state.tokens / self.qps).unwrap_or(self.max)
        };
        backoff.max(bucket)
    }

    /// `Forget(item)`: reset the item's failures.
    pub fn forget(&self, item: &str) {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .failures
            .remove(item);
    }

    /// `NumRequeues(item)`.
    pub fn failures(&self, item: &str) -> u32 {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .failures
            .get(item)
            .copied()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use std::sync::Arc;

    #[test]
    fn exponential_per_item_capped_and_forgotten() {
        let rl = RateLimiter::karpenter_default(Arc::new(ManualClock::default()));
        let delays: Vec<u64> = (0..8).map(|_| rl.when("a").as_secs()).collect();
        assert_eq!(delays, vec![1, 2, 4, 8, 16, 32, 60, 60]);
        assert_eq!(rl.when("b").as_secs(), 1, "items are independent");
        rl.forget("a");
        assert_eq!(rl.failures("a"), 0);
        assert_eq!(rl.when("a").as_secs(), 1);
    }

    #[test]
    fn bucket_limits_bursts() {
        let clock = ManualClock::default();
        let rl = RateLimiter::new(
            Arc::new(clock.clone()),
            Duration::ZERO,
            Duration::ZERO,
            10.0,
            2,
        );
        assert_eq!(rl.when("a"), Duration::ZERO);
        assert_eq!(rl.when("b"), Duration::ZERO);
        assert_eq!(rl.when("c"), Duration::from_millis(100));
        clock.advance(jiff::SignedDuration::from_secs(10));
        assert_eq!(rl.when("d"), Duration::ZERO);
    }
}
