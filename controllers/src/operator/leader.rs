//! Leader election on a `coordination.k8s.io/v1` Lease, as client-go's `leaderelection` does it:
//! whoever holds an unexpired lease leads; the leader renews it every retry period; a lease not
//! renewed for `lease_duration` may be taken over. Every write is an rv-checked update, so two
//! candidates racing for the same lease cannot both win.
//!
//! Timestamps written to the Lease come from the injected clock; waiting between attempts uses
//! tokio's timer.

use std::future::Future;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, ObjectMeta, PostParams};
use kube::Client;
use tracing::{info, warn};

use crate::clock::SharedClock;

/// Leader election settings (client-go's defaults: 15s / 10s / 2s).
#[derive(Debug, Clone, PartialEq)]
pub struct LeaderElectionConfig {
    /// Lease name.
    pub lease_name: String,
    /// Lease namespace.
    pub lease_namespace: String,
    /// This candidate's identity (pod name plus a unique suffix).
    pub identity: String,
    /// How long a lease is valid after its last renewal.
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before it gives up leadership.
    pub renew_deadline: Duration,
    /// Time between attempts.
    pub retry_period: Duration,
    /// Test switch, off by default: renewal attempts are not bounded by the renew deadline
    /// (the deadline is only checked once an attempt returns, counted from when the last
    /// successful one returned). A leader whose renewal hangs then acts on after its lease
    /// expired and another candidate took over. Never set in production.
    pub unbounded_renewals: bool,
}

impl LeaderElectionConfig {
    /// Settings with client-go's default timings.
    pub fn new(lease_name: &str, lease_namespace: &str, identity: &str) -> Self {
        Self {
            lease_name: lease_name.into(),
            lease_namespace: lease_namespace.into(),
            identity: identity.into(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            unbounded_renewals: false,
        }
    }
}

/// Why leading stopped.
#[derive(Debug, thiserror::Error)]
pub enum LeaderError {
    /// Another candidate took the lease, or it could not be renewed within the deadline.
    #[error("lost leadership of lease {0}")]
    Lost(String),
}

/// What to do with the lease as it stands.
#[derive(Debug, Clone, PartialEq)]
pub enum LeaseStep {
    /// No lease yet: create one held by us.
    Create(Lease),
    /// Write this lease (renewal or takeover), with the resourceVersion read.
    Update(Lease),
    /// Someone else holds a valid lease.
    HeldByOther(String),
}

/// Decide the next step from the lease as read (pure, for tests).
pub fn next_step(
    lease: Option<&Lease>,
    config: &LeaderElectionConfig,
    now: Timestamp,
) -> LeaseStep {
    let now_micro = MicroTime(now);
    let duration_secs = i32::try_from(config.lease_duration.as_secs().max(1)).unwrap_or(i32::MAX);
    let Some(lease) = lease else {
        return LeaseStep::Create(Lease {
            metadata: ObjectMeta {
                name: Some(config.lease_name.clone()),
                namespace: Some(config.lease_namespace.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(config.identity.clone()),
                lease_duration_seconds: Some(duration_secs),
                acquire_time: Some(now_micro.clone()),
                renew_time: Some(now_micro),
                lease_transitions: Some(0),
                ..LeaseSpec::default()
            }),
        });
    };
    let spec = lease.spec.clone().unwrap_or_default();
    let holder = spec.holder_identity.clone().unwrap_or_default();
    let mut updated = lease.clone();
    if holder == config.identity {
        let mut new_spec = spec;
        new_spec.renew_time = Some(now_micro);
        new_spec.lease_duration_seconds = Some(duration_secs);
        updated.spec = Some(new_spec);
        return LeaseStep::Update(updated);
    }
    if !holder.is_empty() {
        let held_for = SignedDuration::from_secs(i64::from(
            spec.lease_duration_seconds.unwrap_or(duration_secs),
        ));
        let expires = spec
            .renew_time
            .as_ref()
            .or(spec.acquire_time.as_ref())
            .and_then(|t| t.0.checked_add(held_for).ok());
        if expires.is_some_and(|expires| now < expires) {
            return LeaseStep::HeldByOther(holder);
        }
    }
    let transitions = spec.lease_transitions.unwrap_or(0).saturating_add(1);
    updated.spec = Some(LeaseSpec {
        holder_identity: Some(config.identity.clone()),
        lease_duration_seconds: Some(duration_secs),
        acquire_time: Some(now_micro.clone()),
        renew_time: Some(now_micro),
        lease_transitions: Some(transitions),
        ..spec
    });
    LeaseStep::Update(updated)
}

/// The outcome of one acquire-or-renew attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attempt {
    /// We hold the lease.
    Leading,
    /// Another candidate holds a valid lease.
    HeldByOther,
    /// Our write lost a race; try again.
    Conflict,
}

/// A candidate for one Lease.
#[derive(Debug, Clone)]
pub struct LeaderElector {
    leases: Api<Lease>,
    config: LeaderElectionConfig,
    clock: SharedClock,
}

impl LeaderElector {
    /// A candidate using `client`.
    pub fn new(client: Client, config: LeaderElectionConfig, clock: SharedClock) -> Self {
        Self {
            leases: Api::namespaced(client, &config.lease_namespace),
            config,
            clock,
        }
    }

    /// One attempt to acquire or renew: `Ok(true)` when we hold the lease afterwards.
    pub async fn try_acquire_or_renew(&self) -> Result<bool, kube::Error> {
        Ok(self.attempt().await? == Attempt::Leading)
    }

    async fn attempt(&self) -> Result<Attempt, kube::Error> {
        let current = match self.leases.get(&self.config.lease_name).await {
            Ok(lease) => Some(lease),
            Err(kube::Error::Api(status)) if status.code == 404 => None,
            Err(e) => return Err(e),
        };
        let result = match next_step(current.as_ref(), &self.config, self.clock.now()) {
            LeaseStep::HeldByOther(_) => return Ok(Attempt::HeldByOther),
            LeaseStep::Create(lease) => self.leases.create(&PostParams::default(), &lease).await,
            LeaseStep::Update(lease) => {
                self.leases
                    .replace(&self.config.lease_name, &PostParams::default(), &lease)
                    .await
            }
        };
        match result {
            Ok(_) => Ok(Attempt::Leading),
            // Another write landed between our read and our write: look again.
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(Attempt::Conflict),
            Err(e) => Err(e),
        }
    }

    /// Wait until we hold the lease.
    pub async fn acquire(&self) {
        self.acquired().await;
    }

    /// Wait until we hold the lease; returns when the successful attempt began.
    async fn acquired(&self) -> tokio::time::Instant {
        loop {
            let began = tokio::time::Instant::now();
            match self.try_acquire_or_renew().await {
                Ok(true) => {
                    info!(lease = %self.config.lease_name, identity = %self.config.identity, "acquired leadership");
                    return began;
                }
                Ok(false) => {}
                Err(e) => warn!(error = %e, "leader election attempt failed"),
            }
            tokio::time::sleep(self.config.retry_period).await;
        }
    }

    /// Renew the lease every retry period; return when leadership is lost: another candidate
    /// holds the lease, or no renewal succeeded within the renew deadline.
    pub async fn hold(&self) -> LeaderError {
        self.hold_since(tokio::time::Instant::now()).await
    }

    /// [`LeaderElector::hold`] for a lease last written by an attempt that began at `renewed`.
    ///
    /// Leadership ends `renew_deadline` after the beginning of the last successful attempt,
    /// whatever is in flight: every attempt is cut off at that deadline. The time that attempt
    /// wrote into the Lease is no earlier, and another candidate takes over no sooner than
    /// `lease_duration` after it; so with `lease_duration > renew_deadline`, as the defaults
    /// have it, two leaders never act at once on one clock. (client-go checks the deadline only
    /// per renew cycle and does not promise that; the race harness found the gap:
    /// `eno/without-leader-election-deadline`.)
    async fn hold_since(&self, renewed: tokio::time::Instant) -> LeaderError {
        if self.config.unbounded_renewals {
            return self.hold_unbounded().await;
        }
        let lost = || LeaderError::Lost(self.config.lease_name.clone());
        let mut deadline = renewed + self.config.renew_deadline;
        loop {
            let next = tokio::time::Instant::now() + self.config.retry_period;
            if next >= deadline {
                tokio::time::sleep_until(deadline).await;
                return lost();
            }
            tokio::time::sleep_until(next).await;
            let began = tokio::time::Instant::now();
            match tokio::time::timeout_at(deadline, self.attempt()).await {
                Err(_elapsed) => return lost(),
                Ok(Ok(Attempt::Leading)) => deadline = began + self.config.renew_deadline,
                Ok(Ok(Attempt::HeldByOther)) => return lost(),
                Ok(Ok(Attempt::Conflict)) => {}
                Ok(Err(e)) => warn!(error = %e, "renewing leader lease failed"),
            }
        }
    }

    /// The renew loop with [`LeaderElectionConfig::unbounded_renewals`] (a test switch).
    async fn hold_unbounded(&self) -> LeaderError {
        let mut last_renewal = tokio::time::Instant::now();
        loop {
            tokio::time::sleep(self.config.retry_period).await;
            match self.attempt().await {
                Ok(Attempt::Leading) => last_renewal = tokio::time::Instant::now(),
                Ok(Attempt::HeldByOther) => {
                    return LeaderError::Lost(self.config.lease_name.clone())
                }
                Ok(Attempt::Conflict) => {}
                Err(e) => warn!(error = %e, "renewing leader lease failed"),
            }
            if last_renewal.elapsed() > self.config.renew_deadline {
                return LeaderError::Lost(self.config.lease_name.clone());
            }
        }
    }

    /// Give the lease up (on shutdown), so the next leader need not wait for it to expire.
    pub async fn release(&self) {
        let Ok(mut lease) = self.leases.get(&self.config.lease_name).await else {
            return;
        };
        let Some(spec) = lease.spec.as_mut() else {
            return;
        };
        if spec.holder_identity.as_deref() != Some(self.config.identity.as_str()) {
            return;
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(MicroTime(self.clock.now()));
        match self
            .leases
            .replace(&self.config.lease_name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => info!(lease = %self.config.lease_name, "released leadership"),
            Err(e) => warn!(error = %e, "releasing leader lease failed"),
        }
    }

    /// Become leader, then run `work` until it ends or `shutdown` completes (both give
    /// `Ok`, after releasing the lease), or leadership is lost (`Err`).
    pub async fn run_as_leader<W: Future<Output = ()>>(
        &self,
        shutdown: impl Future<Output = ()>,
        work: W,
    ) -> Result<(), LeaderError> {
        tokio::pin!(shutdown);
        // Both selects are biased (no random branch choice in a seeded run).
        let renewed = tokio::select! {
            biased;
            began = self.acquired() => began,
            _ = &mut shutdown => return Ok(()),
        };
        let outcome = tokio::select! {
            biased;
            lost = self.hold_since(renewed) => Err(lost),
            _ = work => Ok(()),
        };
        if outcome.is_ok() {
            self.release().await;
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn config() -> LeaderElectionConfig {
        LeaderElectionConfig::new("lease", "ns", "me")
    }

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + s).unwrap()
    }

    fn lease(holder: &str, renewed: i64, transitions: i32) -> Lease {
        Lease {
            metadata: ObjectMeta {
                name: Some("lease".into()),
                resource_version: Some("7".into()),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: (!holder.is_empty()).then(|| holder.to_string()),
                lease_duration_seconds: Some(15),
                renew_time: Some(MicroTime(at(renewed))),
                lease_transitions: Some(transitions),
                ..LeaseSpec::default()
            }),
        }
    }

    /// Two candidates against the fake API server: one leads, the other waits; after a release
    /// the other takes over.
    #[tokio::test]
    async fn one_leader_at_a_time_against_an_api_server() {
        let server = fake_apiserver::FakeApiServer::new();
        let clock = crate::clock::ManualClock::default();
        let candidate = |identity: &str| {
            let mut config = LeaderElectionConfig::new("lease", "default", identity);
            config.retry_period = Duration::from_millis(10);
            LeaderElector::new(server.client(), config, std::sync::Arc::new(clock.clone()))
        };
        let (a, b) = (candidate("a"), candidate("b"));
        assert!(a.try_acquire_or_renew().await.unwrap());
        assert!(
            !b.try_acquire_or_renew().await.unwrap(),
            "a's lease is valid"
        );
        assert!(a.try_acquire_or_renew().await.unwrap(), "a renews");
        a.release().await;
        assert!(
            b.try_acquire_or_renew().await.unwrap(),
            "b takes the released lease"
        );
        assert!(!a.try_acquire_or_renew().await.unwrap());
        // b stops renewing; once its lease expires, a takes over.
        clock.advance(jiff::SignedDuration::from_secs(16));
        assert!(a.try_acquire_or_renew().await.unwrap());
        let lease = Api::<Lease>::namespaced(server.client(), "default")
            .get("lease")
            .await
            .unwrap();
        let spec = lease.spec.unwrap();
        assert_eq!(spec.holder_identity.as_deref(), Some("a"));
        assert_eq!(spec.lease_transitions, Some(2));
    }

    #[tokio::test(start_paused = true)]
    async fn hold_returns_when_another_candidate_takes_the_lease() {
        let server = fake_apiserver::FakeApiServer::new();
        let clock = crate::clock::ManualClock::default();
        let candidate = |identity: &str| {
            let mut config = LeaderElectionConfig::new("lease", "default", identity);
            config.retry_period = Duration::from_millis(10);
            LeaderElector::new(server.client(), config, std::sync::Arc::new(clock.clone()))
        };
        let (a, b) = (candidate("a"), candidate("b"));
        assert!(a.try_acquire_or_renew().await.unwrap());
        // b takes the lease over once it has expired (as if a had been partitioned away).
        clock.advance(jiff::SignedDuration::from_secs(16));
        assert!(b.try_acquire_or_renew().await.unwrap());
        let lost = tokio::time::timeout(Duration::from_secs(5), a.hold()).await;
        assert!(matches!(lost, Ok(LeaderError::Lost(_))));
    }

    #[tokio::test]
    async fn run_as_leader_runs_the_work_and_stops_on_shutdown() {
        let server = fake_apiserver::FakeApiServer::new();
        let mut config = LeaderElectionConfig::new("lease", "default", "me");
        config.retry_period = Duration::from_millis(10);
        let elector = LeaderElector::new(
            server.client(),
            config,
            std::sync::Arc::new(crate::clock::SystemClock),
        );
        let ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = ran.clone();
        let outcome = tokio::time::timeout(
            Duration::from_secs(5),
            elector.run_as_leader(futures::future::pending(), async move {
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
            }),
        )
        .await
        .unwrap();
        assert!(outcome.is_ok());
        assert!(ran.load(std::sync::atomic::Ordering::SeqCst));
        let lease = Api::<Lease>::namespaced(server.client(), "default")
            .get("lease")
            .await
            .unwrap();
        assert_eq!(
            lease.spec.unwrap().holder_identity,
            None,
            "released after the work"
        );
    }

    #[test]
    fn creates_a_missing_lease() {
        let LeaseStep::Create(created) = next_step(None, &config(), at(0)) else {
            panic!("expected create");
        };
        let spec = created.spec.unwrap();
        assert_eq!(spec.holder_identity.as_deref(), Some("me"));
        assert_eq!(spec.lease_duration_seconds, Some(15));
    }

    #[rstest]
    #[case::renew_own(lease("me", 0, 3), 5, Some(3))]
    #[case::other_holds_valid(lease("other", 0, 3), 14, None)]
    #[case::take_over_expired(lease("other", 0, 3), 16, Some(4))]
    #[case::take_over_released(lease("", 0, 3), 1, Some(4))]
    fn lease_steps(#[case] current: Lease, #[case] now: i64, #[case] transitions: Option<i32>) {
        match next_step(Some(&current), &config(), at(now)) {
            LeaseStep::Update(updated) => {
                assert_eq!(
                    updated.metadata.resource_version.as_deref(),
                    Some("7"),
                    "rv-checked"
                );
                let spec = updated.spec.unwrap();
                assert_eq!(spec.holder_identity.as_deref(), Some("me"));
                assert_eq!(spec.renew_time, Some(MicroTime(at(now))));
                assert_eq!(Some(spec.lease_transitions.unwrap()), transitions);
            }
            LeaseStep::HeldByOther(holder) => {
                assert_eq!(holder, "other");
                assert_eq!(transitions, None);
            }
            LeaseStep::Create(_) => panic!("lease exists"),
        }
    }
}
