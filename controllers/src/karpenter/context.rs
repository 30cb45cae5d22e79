//! The controllers' context: client, reflector stores, cloud provider, clock, ids, caches,
//! rate limiters, event recorder, metrics and configuration.
//!
//! The stores are plain kube-runtime reflector [`Store`]s. Production feeds them from watches
//! ([`super::wiring`]); the race harness can feed them by hand with a
//! `kube::runtime::reflector::store::Writer` and `apply_watcher_event`.

use std::time::Duration;

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::Node;
use kube::runtime::reflector::Store;
use kube::Client;

use crate::clock::SharedClock;
use crate::ids::SharedIds;

use super::cloudprovider::SharedCloudProvider;
use super::events::EventRecorder;
use super::launch_cache::{LaunchCache, DEFAULT_LAUNCH_CACHE_TTL};
use super::metrics::Metrics;
use super::rate_limit::RateLimiter;
use super::read_own_writes::{ReadOwnWrites, DEFAULT_MAX_DEFERRALS, DEFAULT_MAX_WAIT};
use super::types::NodeClaim;

/// Tunables, with upstream's values as defaults.
#[derive(Debug, Clone)]
pub struct Config {
    /// Liveness: how long a NodeClaim may stay unregistered (15m).
    pub registration_ttl: SignedDuration,
    /// Launch cache TTL (1m).
    pub launch_cache_ttl: SignedDuration,
    /// Read-own-writes: longest wait for the cache to show our write (upstream's 1s sleep).
    pub read_own_writes_max_wait: SignedDuration,
    /// Read-own-writes: most deferrals of one write.
    pub read_own_writes_max_deferrals: u32,
    /// Lifecycle workers (1000).
    pub lifecycle_concurrency: u16,
    /// Termination workers (100).
    pub termination_concurrency: u16,
    /// Per-item backoff base (1s), cap (1m), bucket qps (10) and burst (100).
    pub backoff_base: Duration,
    /// Per-item backoff cap.
    pub backoff_max: Duration,
    /// Token bucket rate.
    pub bucket_qps: f64,
    /// Token bucket burst.
    pub bucket_burst: u32,
    /// Test switch, off by default: termination deletes the instance right after asking for its
    /// Nodes' deletion, without waiting until they are gone (spec §8.8). Never set in production.
    pub termination_skips_waiting_for_nodes: bool,
    /// Test switch, off by default: run neither instance nor NodeClaim garbage collection
    /// ([`super::garbage_collection`]). Never set in production.
    pub garbage_collection_disabled: bool,
    /// Test switch, off by default: the lifecycle launches without first adding the termination
    /// finalizer (removes the guard of spec §4 step 2, §8.1). Never set in production.
    pub launches_without_finalizer: bool,
    /// Test switch, off by default: the launch cache is keyed by NodeClaim name instead of UID, so
    /// a NodeClaim recreated under the same name gets the old launch (removes the guard of spec
    /// §8.2). Never set in production.
    pub launch_cache_keyed_by_name: bool,
    /// Test switch, off by default: on insufficient capacity, Launch records `LaunchFailed` and
    /// returns the error (so the same NodeClaim is launched again) instead of deleting the
    /// NodeClaim (removes the guard of spec §4.1, §8.7). Never set in production.
    pub insufficient_capacity_keeps_nodeclaim: bool,
    /// Test switch, off by default: the lifecycle's JSON merge patches (and Registration's patch
    /// of the Node) carry no resourceVersion, as upstream's v0.36 did, so they overwrite a
    /// finalizer or condition written meanwhile, or bring back a taint removed meanwhile
    /// (removes the optimistic lock of spec §6.2, §8.6). Never set in production.
    pub merge_patches_without_optimistic_lock: bool,
    /// Test switch, off by default: the lifecycle never waits for its cache to show its own last
    /// write, nor reads the NodeClaim live when the wait runs out; it acts on whatever the cache
    /// holds, as upstream would without its 1s sleep (removes the read-own-writes guard of spec
    /// §8.3). Never set in production.
    pub acts_on_stale_cache: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            registration_ttl: SignedDuration::from_mins(15),
            launch_cache_ttl: DEFAULT_LAUNCH_CACHE_TTL,
            read_own_writes_max_wait: DEFAULT_MAX_WAIT,
            read_own_writes_max_deferrals: DEFAULT_MAX_DEFERRALS,
            lifecycle_concurrency: 1000,
            termination_concurrency: 100,
            backoff_base: Duration::from_secs(1),
            backoff_max: Duration::from_secs(60),
            bucket_qps: 10.0,
            bucket_burst: 100,
            termination_skips_waiting_for_nodes: false,
            garbage_collection_disabled: false,
            launches_without_finalizer: false,
            launch_cache_keyed_by_name: false,
            insufficient_capacity_keeps_nodeclaim: false,
            merge_patches_without_optimistic_lock: false,
            acts_on_stale_cache: false,
        }
    }
}

/// The reading halves of the reflector stores a [`Context`] holds.
#[derive(Clone)]
pub struct Stores {
    /// NodeClaims.
    pub nodeclaims: Store<NodeClaim>,
    /// Nodes.
    pub nodes: Store<Node>,
}

/// Everything a reconcile of either NodeClaim controller needs.
pub struct Context {
    /// Writes (and the kwok provider's Node creation) go through this client.
    pub client: Client,
    /// Cached NodeClaims (may lag).
    pub nodeclaims: Store<NodeClaim>,
    /// Cached Nodes (may lag); looked up by provider id.
    pub nodes: Store<Node>,
    /// The cloud.
    pub cloud_provider: SharedCloudProvider,
    /// The one clock: condition transition times, TTLs, dedupe windows.
    pub clock: SharedClock,
    /// Random choices: requirement label values, event names.
    pub ids: SharedIds,
    /// Launch results by UID.
    pub launch_cache: LaunchCache,
    /// Which NodeClaims wait for the cache to show our last write.
    pub read_own_writes: ReadOwnWrites,
    /// Requeue limiter of the lifecycle controller.
    pub lifecycle_rate_limiter: RateLimiter,
    /// Requeue limiter of the termination controller.
    pub termination_rate_limiter: RateLimiter,
    /// Launch-failure events.
    pub recorder: EventRecorder,
    /// Counters.
    pub metrics: Metrics,
    /// Tunables.
    pub config: Config,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("nodeclaims", &self.nodeclaims.len())
            .field("nodes", &self.nodes.len())
            .field("cloud_provider", &self.cloud_provider.name())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Context {
    /// A context over the given stores and provider; events are written through `client`.
    pub fn new(
        client: Client,
        stores: Stores,
        cloud_provider: SharedCloudProvider,
        clock: SharedClock,
        ids: SharedIds,
        metrics: Metrics,
        config: Config,
    ) -> Self {
        let limiter = || {
            RateLimiter::new(
                clock.clone(),
                config.backoff_base,
                config.backoff_max,
                config.bucket_qps,
                config.bucket_burst,
            )
        };
        Self {
            launch_cache: LaunchCache::new(clock.clone(), config.launch_cache_ttl),
            read_own_writes: ReadOwnWrites::new(
                clock.clone(),
                config.read_own_writes_max_wait,
                config.read_own_writes_max_deferrals,
            ),
            lifecycle_rate_limiter: limiter(),
            termination_rate_limiter: limiter(),
            recorder: EventRecorder::new(
                Some(client.clone()),
                clock.clone(),
                ids.clone(),
                "karpenter",
            ),
            client,
            nodeclaims: stores.nodeclaims,
            nodes: stores.nodes,
            cloud_provider,
            clock,
            ids,
            metrics,
            config,
        }
    }
}
