//! Faults at a rate, a pause, and request counts: what a fault-tolerance test turns on to see a
//! controller survive a flaky API server.
//!
//! Where [`crate::hooks::FaultRule`]s fail chosen requests, [`Chaos`] fails a share of all of them
//! the way an overloaded or restarting kube-apiserver does: `429 TooManyRequests` with a
//! `Retry-After` (the server's max-in-flight and priority-and-fairness filters), `500
//! InternalError` (a storage hiccup) and, on writes, `409 Conflict` (a write that lost a race).
//! Which requests fail is decided by a seeded generator over the order requests arrive in, so a
//! single-threaded run fails the same requests every time. [`Chaos::pause`] holds every request
//! until [`Chaos::resume`], as a server that stops answering for a while; [`Chaos::counts`] reports
//! how many requests arrived and how many were failed, so a test can tell a client that backs off
//! from one that storms a failing server.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use tokio::sync::watch;

use crate::error::ApiError;
use crate::hooks::{RequestInfo, RequestMatcher};

/// One kind of failure chaos may answer with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChaosAnswer {
    /// `429 TooManyRequests`, `Retry-After: 1`.
    TooManyRequests,
    /// `500 InternalError`.
    InternalError,
    /// `409 Conflict` on an update, patch or delete (other requests, which never conflict, get a
    /// 500 instead).
    Conflict,
}

/// What share of which requests to fail, and how.
#[derive(Debug, Clone)]
pub struct ChaosRule {
    /// Seed of the generator that picks the failing requests.
    pub seed: u64,
    /// Failed share of matching requests, in parts per thousand (50 = 5%).
    pub per_mille: u32,
    /// Which requests may fail.
    pub matcher: RequestMatcher,
    /// The answers, picked from in turn by the generator; empty means all three.
    pub answers: Vec<ChaosAnswer>,
}

impl ChaosRule {
    /// Fails `per_mille`/1000 of every request with 429, 500 or 409.
    pub fn rate(seed: u64, per_mille: u32) -> Self {
        Self {
            seed,
            per_mille,
            matcher: RequestMatcher::default(),
            answers: Vec::new(),
        }
    }
}

/// How many requests reached the server and how many chaos failed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChaosCounts {
    /// Requests that arrived (including held and failed ones).
    pub requests: u64,
    /// Requests answered with a chaos failure.
    pub failed: u64,
}

/// The server's chaos switches. Off until a rule is set.
#[derive(Debug)]
pub struct Chaos {
    rule: Mutex<Option<ChaosRule>>,
    /// Position in the rule's random sequence.
    drawn: AtomicU64,
    requests: AtomicU64,
    failed: AtomicU64,
    paused: watch::Sender<bool>,
}

impl Default for Chaos {
    fn default() -> Self {
        Self {
            rule: Mutex::new(None),
            drawn: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            paused: watch::channel(false).0,
        }
    }
}

impl Chaos {
    /// Turns faults at a rate on (replacing any earlier rule), or off with `None`.
    pub fn set(&self, rule: Option<ChaosRule>) {
        *self.rule.lock().unwrap_or_else(|e| e.into_inner()) = rule;
        self.drawn.store(0, Ordering::SeqCst);
    }

    /// Holds every request from now on until [`Chaos::resume`].
    pub fn pause(&self) {
        self.paused.send_replace(true);
    }

    /// Lets held and new requests through again.
    pub fn resume(&self) {
        self.paused.send_replace(false);
    }

    /// Whether requests are being held.
    pub fn is_paused(&self) -> bool {
        *self.paused.borrow()
    }

    /// Requests seen and failed so far.
    pub fn counts(&self) -> ChaosCounts {
        ChaosCounts {
            requests: self.requests.load(Ordering::SeqCst),
            failed: self.failed.load(Ordering::SeqCst),
        }
    }

    /// Counts `request`, holds it while paused, then decides whether it fails.
    pub(crate) async fn admit(&self, request: &RequestInfo) -> Result<(), ApiError> {
        self.requests.fetch_add(1, Ordering::SeqCst);
        if self.is_paused() {
            let mut paused = self.paused.subscribe();
            // Only an error (the sender is dropped with the server) ends the wait early.
            let _ = paused.wait_for(|held| !*held).await;
        }
        let error = self.failure_for(request);
        if error.is_some() {
            self.failed.fetch_add(1, Ordering::SeqCst);
        }
        error.map_or(Ok(()), Err)
    }

    /// The failure to answer `request` with, if the rule picks it.
    fn failure_for(&self, request: &RequestInfo) -> Option<ApiError> {
        let rule = self.rule.lock().unwrap_or_else(|e| e.into_inner());
        let rule = rule.as_ref()?;
        if rule.per_mille == 0 || !rule.matcher.matches(request) {
            return None;
        }
        let draw = splitmix64(
            rule.seed
                .wrapping_add(self.drawn.fetch_add(1, Ordering::SeqCst)),
        );
        if draw % 1000 >= u64::from(rule.per_mille) {
            return None;
        }
        const ALL: [ChaosAnswer; 3] = [
            ChaosAnswer::TooManyRequests,
            ChaosAnswer::InternalError,
            ChaosAnswer::Conflict,
        ];
        let answers = if rule.answers.is_empty() {
            &ALL[..]
        } else {
            &rule.answers[..]
        };
        let answer = answers[((draw / 1000) % answers.len() as u64) as usize];
        Some(answer_error(answer, request))
    }
}

/// The error a real server would send for `answer` to `request`.
fn answer_error(answer: ChaosAnswer, request: &RequestInfo) -> ApiError {
    let can_conflict = matches!(request.verb.as_str(), "update" | "patch" | "delete");
    match answer {
        ChaosAnswer::TooManyRequests => {
            // As apimachinery's NewTooManyRequests: the message, reason and retry hint.
            let mut error = ApiError::new(
                429,
                "TooManyRequests",
                "Too many requests, please try again later.",
            );
            error.retry_after_seconds = Some(1);
            error
        }
        ChaosAnswer::Conflict if can_conflict => {
            let name = request.name.as_deref().unwrap_or_default();
            ApiError::conflict_modified(&request.group, &request.resource, name)
        }
        ChaosAnswer::InternalError | ChaosAnswer::Conflict => {
            ApiError::internal("injected fault: etcdserver: request timed out")
        }
    }
}

/// A well-mixed 64-bit value from `x` (SplitMix64's finaliser).
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(verb: &str) -> RequestInfo {
        RequestInfo {
            verb: verb.into(),
            resource: "pods".into(),
            namespace: Some("default".into()),
            name: Some("p".into()),
            ..Default::default()
        }
    }

    async fn outcomes(chaos: &Chaos, verb: &str, n: usize) -> Vec<Option<u16>> {
        let mut out = Vec::new();
        for _ in 0..n {
            out.push(chaos.admit(&request(verb)).await.err().map(|e| e.code));
        }
        out
    }

    #[tokio::test]
    async fn off_by_default_and_counts_every_request() {
        let chaos = Chaos::default();
        assert!(outcomes(&chaos, "get", 100)
            .await
            .iter()
            .all(Option::is_none));
        assert_eq!(
            chaos.counts(),
            ChaosCounts {
                requests: 100,
                failed: 0
            }
        );
    }

    #[tokio::test]
    async fn fails_about_the_rate_with_the_same_requests_for_the_same_seed() {
        let chaos = Chaos::default();
        chaos.set(Some(ChaosRule::rate(7, 50)));
        let first = outcomes(&chaos, "update", 4000).await;
        let failed = first.iter().filter(|o| o.is_some()).count();
        assert!((120..=280).contains(&failed), "{failed} of 4000 failed");
        for code in [429, 500, 409] {
            assert!(first.contains(&Some(code)), "no {code} among the failures");
        }
        chaos.set(Some(ChaosRule::rate(7, 50)));
        assert_eq!(outcomes(&chaos, "update", 4000).await, first);
        assert_eq!(chaos.counts().failed as usize, 2 * failed);
    }

    #[tokio::test]
    async fn reads_never_conflict_and_429_carries_retry_after() {
        let chaos = Chaos::default();
        chaos.set(Some(ChaosRule {
            answers: vec![ChaosAnswer::Conflict],
            ..ChaosRule::rate(1, 1000)
        }));
        let error = chaos.admit(&request("list")).await.unwrap_err();
        assert_eq!((error.code, error.reason.as_str()), (500, "InternalError"));
        let error = chaos.admit(&request("update")).await.unwrap_err();
        assert_eq!((error.code, error.reason.as_str()), (409, "Conflict"));
        chaos.set(Some(ChaosRule {
            answers: vec![ChaosAnswer::TooManyRequests],
            ..ChaosRule::rate(1, 1000)
        }));
        let error = chaos.admit(&request("get")).await.unwrap_err();
        assert_eq!(error.retry_after_seconds, Some(1));
        assert_eq!(error.to_status()["details"]["retryAfterSeconds"], 1);
    }

    #[tokio::test]
    async fn a_matcher_limits_what_fails() {
        let chaos = Chaos::default();
        chaos.set(Some(ChaosRule {
            matcher: RequestMatcher {
                verb: Some("update".into()),
                ..Default::default()
            },
            ..ChaosRule::rate(3, 1000)
        }));
        assert!(chaos.admit(&request("get")).await.is_ok());
        assert!(chaos.admit(&request("update")).await.is_err());
    }

    #[tokio::test]
    async fn a_pause_holds_requests_until_resumed() {
        let chaos = std::sync::Arc::new(Chaos::default());
        chaos.pause();
        let held = tokio::spawn({
            let chaos = chaos.clone();
            async move { chaos.admit(&request("get")).await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(
            !held.is_finished(),
            "a request went through a paused server"
        );
        assert_eq!(chaos.counts().requests, 1);
        chaos.resume();
        assert!(held.await.unwrap().is_ok());
        assert!(!chaos.is_paused());
    }
}
