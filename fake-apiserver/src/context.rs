//! The state every layer shares: [`Shared`] (the store, the served kinds, the clock, the hooks,
//! the controllers and the auth state) and the [`FakeApiServer`] handle that carries it.
//!
//! The handle's methods are spread over the layers that implement them (the builder, the router
//! and the public accessors are in `crate::http::server`); this module only defines the types,
//! so that the registry, the controllers and auth can take a `&FakeApiServer` or a `&Shared`
//! without importing the HTTP layer.

use std::sync::{Arc, Mutex, RwLock};

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use tokio::sync::broadcast;

use crate::chaos::Chaos;
use crate::controllers::ControllerManager;
use crate::hooks::{Faults, RequestGate};
use crate::registry::semantics::format_time;
use crate::registry::Registry;
use crate::store::Store;

/// A source of the server's notion of "now".
pub type ClockFn = Arc<dyn Fn() -> jiff::Timestamp + Send + Sync>;

/// State shared by every handler.
pub(crate) struct Shared {
    pub(crate) store: Store,
    pub(crate) registry: Registry,
    pub(crate) clock: ClockFn,
    pub(crate) rng: Mutex<ChaCha8Rng>,
    pub(crate) faults: Faults,
    pub(crate) chaos: Chaos,
    pub(crate) gate: RwLock<Option<Arc<dyn RequestGate>>>,
    /// Open watches listen here; what is sent here ends the watches it names.
    pub(crate) watch_drops: broadcast::Sender<crate::http::watch::WatchDrop>,
    /// kube-controller-manager's controllers (garbage collector, namespaces, service accounts,
    /// PVC and PV protection).
    pub(crate) controllers: ControllerManager,
    /// Authentication, authorization and admission settings and state.
    pub(crate) auth: crate::auth::AuthState,
    /// Container log lines written by kubelet stand-ins.
    pub(crate) pod_logs: crate::store::pod_logs::PodLogs,
    /// Admission webhook settings.
    pub(crate) admission: crate::admission::AdmissionConfig,
    /// Requests answered so far, numbering the `Audit-Id` of those that bring none (see
    /// [`crate::http::chain`]).
    pub(crate) audit_ids: std::sync::atomic::AtomicU64,
}

impl Shared {
    /// The current time.
    pub(crate) fn now(&self) -> jiff::Timestamp {
        (self.clock)()
    }

    /// The current time as `metav1.Time`.
    pub(crate) fn now_string(&self) -> String {
        format_time(self.now())
    }

    /// Fills `bytes` from the server's (seeded) random source.
    pub(crate) fn fill_random(&self, bytes: &mut [u8]) {
        self.rng
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .fill(bytes);
    }

    /// A new object uid.
    pub(crate) fn new_uid(&self) -> String {
        let mut bytes = [0u8; 16];
        self.fill_random(&mut bytes);
        uuid::Builder::from_random_bytes(bytes)
            .into_uuid()
            .to_string()
    }

    /// A random suffix from the alphabet the real server uses for generated names.
    pub(crate) fn random_suffix(&self, len: usize) -> String {
        let mut suffix = String::with_capacity(len);
        self.push_random_suffix(&mut suffix, len);
        suffix
    }

    /// Appends [`Shared::random_suffix`]`(len)` to `out` (a generated name's prefix).
    pub(crate) fn push_random_suffix(&self, out: &mut String, len: usize) {
        // Vowels and confusable characters are left out, as in k8s.io/apimachinery/pkg/util/rand.
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        let mut rng = self.rng.lock().unwrap_or_else(|e| e.into_inner());
        out.extend((0..len).map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())])));
    }
}

/// A fake Kubernetes API server. Cheap to clone: clones share one server.
#[derive(Clone)]
pub struct FakeApiServer {
    pub(crate) shared: Arc<Shared>,
}
