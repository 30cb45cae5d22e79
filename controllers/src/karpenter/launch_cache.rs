//! The launch cache: what the cloud provider returned for each NodeClaim UID, kept for a TTL on
//! the injected clock (upstream: `go-cache`, TTL 1m, janitor 10s, one per process).
//!
//! Why it exists (spec §4.1, §8.2): the instance may already be launched while the informer cache
//! still shows a NodeClaim without `Launched`, or the status patch that recorded the launch failed.
//! A second `Create` would leak an instance, so a hit reuses the cached result instead. The key is
//! the UID, not the name, so a NodeClaim recreated under the same name launches again.

use std::collections::HashMap;
use std::sync::Mutex;

use jiff::{SignedDuration, Timestamp};

use crate::clock::SharedClock;

use super::types::NodeClaim;

/// Upstream's TTL (`cache.New(time.Minute, ...)`).
pub const DEFAULT_LAUNCH_CACHE_TTL: SignedDuration = SignedDuration::from_mins(1);

/// Created-instance results by NodeClaim UID, expiring on the injected clock.
#[derive(Debug)]
pub struct LaunchCache {
    clock: SharedClock,
    ttl: SignedDuration,
    entries: Mutex<HashMap<String, (NodeClaim, Timestamp)>>,
}

impl LaunchCache {
    /// An empty cache whose entries live for `ttl`.
    pub fn new(clock: SharedClock, ttl: SignedDuration) -> Self {
        Self {
            clock,
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The cached result for `uid`, unless it expired (expired entries are dropped, as the janitor would).
    pub fn get(&self, uid: &str) -> Option<NodeClaim> {
        let now = self.clock.now();
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.retain(|_, (_, expires)| *expires > now);
        entries.get(uid).map(|(nc, _)| nc.clone())
    }

    /// `SetDefault`: store `created` for `uid` with the default TTL from now.
    pub fn set_default(&self, uid: &str, created: NodeClaim) {
        let expires = self
            .clock
            .now()
            .saturating_add(self.ttl)
            .unwrap_or_else(|_| self.clock.now());
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(uid.to_string(), (created, expires));
    }

    /// Number of live entries.
    pub fn len(&self) -> usize {
        let now = self.clock.now();
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter(|(_, e)| *e > now)
            .count()
    }

    /// Whether there is no live entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use rstest::rstest;
    use std::sync::Arc;

    #[rstest]
    #[case::fresh(0, true)]
    #[case::just_before_ttl(59, true)]
    #[case::at_ttl(60, false)]
    #[case::after_ttl(600, false)]
    fn entries_expire_on_the_injected_clock(#[case] after_secs: i64, #[case] hit: bool) {
        let clock = ManualClock::default();
        let cache = LaunchCache::new(Arc::new(clock.clone()), DEFAULT_LAUNCH_CACHE_TTL);
        cache.set_default("uid-1", NodeClaim::new("a", Default::default()));
        clock.advance(SignedDuration::from_secs(after_secs));
        assert_eq!(cache.get("uid-1").is_some(), hit);
        assert_eq!(cache.len(), usize::from(hit));
    }

    #[test]
    fn keyed_by_uid_not_name() {
        let clock = ManualClock::default();
        let cache = LaunchCache::new(Arc::new(clock), DEFAULT_LAUNCH_CACHE_TTL);
        cache.set_default("uid-1", NodeClaim::new("same-name", Default::default()));
        assert!(
            cache.get("uid-2").is_none(),
            "a recreation under the same name must launch again"
        );
        assert_eq!(
            cache.get("uid-1").unwrap().metadata.name.as_deref(),
            Some("same-name")
        );
    }
}
