//! Read-your-own-writes without holding a worker: the replacement for upstream's `time.Sleep(1s)`.
//!
//! Upstream sleeps one second after every changing pass "so that we are able to read our own
//! writes \[and\] avoid duplicating metrics and log lines due to quick re-queues from our node
//! watcher" (spec §4 step 4, §8.3). The sleep blocks a worker and does not even guarantee the
//! cache caught up.
//!
//! Here, after its writes the controller records the `resourceVersion` the API server returned
//! for that NodeClaim. Until the controller's own NodeClaim cache shows that version (or a later
//! one), a reconcile of that NodeClaim does nothing and asks to run again when the bounded wait
//! ends; the watch dispatcher also re-triggers the key as soon as the cache catches up (see
//! [`ReadOwnWrites::caught_up_by`]). The wait is bounded twice: by `max_wait` on the injected clock
//! (upstream's one second) and by a maximum number of deferrals, so no schedule can park a key
//! forever. A cache version is "at least" the written one when they are equal or when both parse
//! as integers and the cache's is larger (etcd and the fake API server use one integer revision).

use std::collections::HashMap;
use std::sync::Mutex;

use jiff::{SignedDuration, Timestamp};

use crate::clock::SharedClock;

/// Upstream's sleep.
pub const DEFAULT_MAX_WAIT: SignedDuration = SignedDuration::from_secs(1);
/// How often a key may be deferred before it runs anyway.
pub const DEFAULT_MAX_DEFERRALS: u32 = 20;

#[derive(Debug, Clone)]
struct Pending {
    resource_version: String,
    deadline: Timestamp,
    deferrals: u32,
}

/// What a reconcile should do about a NodeClaim whose cached copy is at `resourceVersion`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// The cache has seen our last write (or the wait is over): go ahead.
    Proceed,
    /// The cache is behind our last write: do nothing now, try again within this long.
    Wait(std::time::Duration),
    /// The wait is over and the cache is still behind our last write (its watch is down, say):
    /// go ahead, on a copy read from the API server rather than the cache, or the pass would
    /// redo what the write it cannot see already did (found by the race harness:
    /// `karpenter/read-own-writes`, a NodeClaim watch dropped for over a second, counted a
    /// registration twice).
    ReadLive,
}

/// The last write per key and whether the cache has seen it.
#[derive(Debug)]
pub struct ReadOwnWrites {
    clock: SharedClock,
    max_wait: SignedDuration,
    max_deferrals: u32,
    pending: Mutex<HashMap<String, Pending>>,
}

/// Whether a cached resourceVersion is at least the written one.
pub fn version_at_least(cached: &str, written: &str) -> bool {
    if cached == written {
        return true;
    }
    match (cached.parse::<u64>(), written.parse::<u64>()) {
        (Ok(c), Ok(w)) => c >= w,
        _ => false,
    }
}

impl ReadOwnWrites {
    /// A tracker waiting at most `max_wait` (injected clock) or `max_deferrals` passes per write.
    pub fn new(clock: SharedClock, max_wait: SignedDuration, max_deferrals: u32) -> Self {
        Self {
            clock,
            max_wait,
            max_deferrals,
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// Record that we wrote `key` and the server answered with `resource_version`.
    pub fn wrote(&self, key: &str, resource_version: Option<&str>) {
        let Some(rv) = resource_version.filter(|rv| !rv.is_empty()) else {
            return;
        };
        let deadline = self
            .clock
            .now()
            .saturating_add(self.max_wait)
            .unwrap_or_else(|_| self.clock.now());
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                key.to_string(),
                Pending {
                    resource_version: rv.to_string(),
                    deadline,
                    deferrals: 0,
                },
            );
    }

    /// Decide whether a reconcile of `key` may run; `cached_rv` reads the version the cache holds
    /// *now*. It is read under the tracker's lock, so a cache update racing with this call is
    /// either seen here or re-triggers the key through [`ReadOwnWrites::caught_up_by`].
    pub fn gate_with(&self, key: &str, cached_rv: impl FnOnce() -> Option<String>) -> Gate {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let Some(p) = pending.get_mut(key) else {
            return Gate::Proceed;
        };
        let cached_rv = cached_rv();
        let cached_rv = cached_rv.as_deref();
        if cached_rv.is_some_and(|c| version_at_least(c, &p.resource_version)) {
            pending.remove(key);
            return Gate::Proceed;
        }
        let now = self.clock.now();
        if now >= p.deadline || p.deferrals >= self.max_deferrals {
            tracing::debug!(
                key,
                written = %p.resource_version,
                cached = cached_rv.unwrap_or(""),
                "read-own-writes wait expired; reading the object live"
            );
            pending.remove(key);
            return Gate::ReadLive;
        }
        p.deferrals += 1;
        let remaining = p.deadline.duration_since(now).unsigned_abs();
        Gate::Wait(remaining)
    }

    /// [`ReadOwnWrites::gate_with`] for a version already read.
    pub fn gate(&self, key: &str, cached_rv: Option<&str>) -> Gate {
        self.gate_with(key, || cached_rv.map(str::to_string))
    }

    /// Whether a cache update of `key` to `cached_rv` completes a pending wait (the dispatcher
    /// then re-triggers the key at once instead of waiting for the deadline).
    pub fn caught_up_by(&self, key: &str, cached_rv: Option<&str>) -> bool {
        let pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        match (pending.get(key), cached_rv) {
            (Some(p), Some(c)) => p.deferrals > 0 && version_at_least(c, &p.resource_version),
            _ => false,
        }
    }

    /// Forget `key` (it was deleted).
    pub fn forget(&self, key: &str) {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
    }

    /// Number of keys waiting for the cache.
    pub fn pending(&self) -> usize {
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use rstest::rstest;
    use std::sync::Arc;

    fn tracker(clock: &ManualClock) -> ReadOwnWrites {
        ReadOwnWrites::new(Arc::new(clock.clone()), DEFAULT_MAX_WAIT, 3)
    }

    #[rstest]
    #[case::same("7", "7", true)]
    #[case::newer("12", "7", true)]
    #[case::older("6", "7", false)]
    #[case::opaque_equal("abc", "abc", true)]
    #[case::opaque_different("abd", "abc", false)]
    fn versions(#[case] cached: &str, #[case] written: &str, #[case] at_least: bool) {
        assert_eq!(version_at_least(cached, written), at_least);
    }

    #[test]
    fn waits_until_the_cache_sees_the_write() {
        let clock = ManualClock::default();
        let t = tracker(&clock);
        assert_eq!(t.gate("a", Some("1")), Gate::Proceed, "no write yet");
        t.wrote("a", Some("5"));
        assert!(
            matches!(t.gate("a", Some("4")), Gate::Wait(d) if d == std::time::Duration::from_secs(1))
        );
        assert!(t.caught_up_by("a", Some("5")));
        assert_eq!(t.gate("a", Some("5")), Gate::Proceed);
        assert_eq!(t.pending(), 0);
    }

    #[test]
    fn wait_is_bounded_by_the_clock() {
        let clock = ManualClock::default();
        let t = tracker(&clock);
        t.wrote("a", Some("5"));
        assert!(matches!(t.gate("a", Some("4")), Gate::Wait(_)));
        clock.advance(SignedDuration::from_secs(1));
        assert_eq!(t.gate("a", Some("4")), Gate::ReadLive);
        assert_eq!(t.gate("a", Some("4")), Gate::Proceed, "the wait is over");
    }

    #[test]
    fn wait_is_bounded_by_deferrals() {
        let clock = ManualClock::default();
        let t = tracker(&clock);
        t.wrote("a", Some("5"));
        for _ in 0..3 {
            assert!(matches!(t.gate("a", Some("4")), Gate::Wait(_)));
        }
        assert_eq!(t.gate("a", Some("4")), Gate::ReadLive);
    }

    #[test]
    fn a_write_without_a_version_does_not_wait() {
        let clock = ManualClock::default();
        let t = tracker(&clock);
        t.wrote("a", None);
        t.wrote("b", Some(""));
        assert_eq!(t.pending(), 0);
    }
}
