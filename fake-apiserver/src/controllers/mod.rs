//! The controllers of kube-controller-manager that API clients rely on without knowing it, run
//! beside the fake server: the garbage collector ([`garbage_collector`]), the namespace
//! controller ([`namespace_deleter`]), the service-account controller with the root CA
//! publisher ([`service_accounts`]), and the PVC and PV protection controllers
//! ([`volume_protection`]). Also here, though it is kube-apiserver's own and so runs
//! whatever the configuration, inline after the writes it follows: the APIService
//! autoregistration ([`api_services`]).
//!
//! **How they run.** Every committed write is reported to the [`ControllerManager`]
//! ([`ControllerManager::observe`]), which turns it into work items keyed as the real
//! controllers' queues are (an object for the collector to look at, an owner whose dependents
//! are to be orphaned, a namespace to empty or to furnish). The work is then done
//!
//! - with [`Drive::Inline`] (the default), right after the write that caused it, inside the same
//!   request, until no work is left: a client's next request sees a settled cluster, and a run is
//!   as deterministic as the requests that drive it (time comes from the server's injected
//!   clock, uids and names from its seeded source);
//! - with [`Drive::Manual`], only when the owner of the timing asks for one item at a time
//!   ([`crate::FakeApiServer::step_controllers`], or one controller's next item with
//!   [`crate::FakeApiServer::step_controller`]), so that a schedule (the race harness, which
//!   runs each controller as an actor) decides when each acts relative to everything else.
//!   Either way the same code does the work.
//!
//! A bare API server (no controllers, as a kube-apiserver with no controller manager) is
//! [`ControllerConfig::none`]. The controllers write through the server's own write paths (the
//! same rules as any client's request), recorded with the manager `kube-controller-manager`.

pub(crate) mod api_services;
pub mod garbage_collector;
pub mod namespace_conditions;
pub mod namespace_deleter;
pub mod node_lifecycle;
mod objects;
pub mod service_accounts;
pub mod volume_protection;

use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use serde_json::Value;

use crate::context::FakeApiServer;
use crate::resource::ResourceInfo;
use crate::store::EventType;

pub use objects::ObjectRef;

/// The field manager (and user agent program) of the controllers' writes.
pub const MANAGER: &str = "kube-controller-manager";

/// Most work items one inline drive does before it gives up (a guard against a cycle of
/// controllers undoing each other; the real ones would spin too, only slower).
const MAX_INLINE_ITEMS: usize = 100_000;

/// When the controllers' work is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Drive {
    /// Right after each write, inside the request that made it, until no work is left.
    #[default]
    Inline,
    /// Only when [`crate::FakeApiServer::step_controllers`] is called.
    Manual,
}

/// Which controllers run, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControllerConfig {
    /// The garbage collector: owner references, propagation policies.
    pub garbage_collector: bool,
    /// The namespace controller: empties a deleted namespace, then finalizes it.
    pub namespaces: bool,
    /// The service-account controller and the root CA publisher: a `default` ServiceAccount and
    /// the `kube-root-ca.crt` ConfigMap in every active namespace.
    pub service_accounts: bool,
    /// The PVC protection controller: a deleted claim goes once no scheduled pod uses it.
    pub pvc_protection: bool,
    /// The PV protection controller: a deleted volume goes once it is not bound.
    pub pv_protection: bool,
    /// The node lifecycle controller's tainting pass: a Node's `NoSchedule` taints follow its
    /// conditions (the `not-ready` taint of a new Node goes once it is `Ready`).
    pub node_lifecycle: bool,
    /// When the work is done.
    pub drive: Drive,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        Self::all()
    }
}

impl ControllerConfig {
    /// Every controller, inline.
    pub fn all() -> Self {
        Self {
            garbage_collector: true,
            namespaces: true,
            service_accounts: true,
            pvc_protection: true,
            pv_protection: true,
            node_lifecycle: true,
            drive: Drive::Inline,
        }
    }

    /// No controller: the server behaves as a kube-apiserver with no controller manager
    /// (deleted namespaces stay `Terminating`, owner references are not acted on).
    pub fn none() -> Self {
        Self {
            garbage_collector: false,
            namespaces: false,
            service_accounts: false,
            pvc_protection: false,
            pv_protection: false,
            node_lifecycle: false,
            drive: Drive::Inline,
        }
    }

    /// The same controllers, driven as `drive` says.
    pub fn with_drive(mut self, drive: Drive) -> Self {
        self.drive = drive;
        self
    }

    /// Whether any controller runs (and so looks at writes).
    pub(crate) fn any(&self) -> bool {
        self.garbage_collector
            || self.namespaces
            || self.service_accounts
            || self.pvc_protection
            || self.pv_protection
            || self.node_lifecycle
    }
}

/// One unit of controller work.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Work {
    /// The collector looks at an object: are its owners gone, is it waiting for its dependents?
    /// (`attemptToDelete`).
    Collect(ObjectRef),
    /// The collector orphans an owner's dependents, then removes its `orphan` finalizer
    /// (`attemptToOrphan`).
    Orphan(ObjectRef),
    /// The collector looks at every dependent of a uid that just went away.
    OwnerGone {
        /// The uid of the deleted object.
        uid: String,
    },
    /// The collector looks at every dependent of an owner that starts waiting for its
    /// dependents (foreground deletion).
    OwnerWaiting {
        /// The uid of the owner.
        uid: String,
    },
    /// The namespace controller syncs a namespace.
    Namespace(String),
    /// The service-account controller and the root CA publisher sync a namespace.
    ServiceAccounts(String),
    /// The PVC protection controller looks at a claim (`processPVC`).
    ClaimProtection {
        /// The claim's namespace.
        namespace: String,
        /// The claim's name.
        name: String,
    },
    /// The PV protection controller looks at a volume (`processPV`).
    VolumeProtection(String),
    /// The node lifecycle controller matches a Node's taints to its conditions
    /// (`doNoScheduleTaintingPass`).
    NodeTaints(String),
}

impl Work {
    /// The controller that does this work.
    pub fn controller(&self) -> Controller {
        match self {
            Work::Collect(_)
            | Work::Orphan(_)
            | Work::OwnerGone { .. }
            | Work::OwnerWaiting { .. } => Controller::GarbageCollector,
            Work::Namespace(_) => Controller::Namespace,
            Work::ServiceAccounts(_) => Controller::ServiceAccounts,
            Work::ClaimProtection { .. } => Controller::PvcProtection,
            Work::VolumeProtection(_) => Controller::PvProtection,
            Work::NodeTaints(_) => Controller::NodeLifecycle,
        }
    }
}

impl std::fmt::Display for Work {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = |r: &ObjectRef| {
            if r.namespace.is_empty() {
                format!("{} {}", r.plural, r.name)
            } else {
                format!("{} {}/{}", r.plural, r.namespace, r.name)
            }
        };
        match self {
            Work::Collect(r) => write!(f, "attempt to delete {}", at(r)),
            Work::Orphan(r) => write!(f, "orphan the dependents of {}", at(r)),
            Work::OwnerGone { uid } => write!(f, "look at the dependents of gone uid {uid}"),
            Work::OwnerWaiting { uid } => {
                write!(
                    f,
                    "look at the dependents of uid {uid}, deleting in the foreground"
                )
            }
            Work::Namespace(ns) => write!(f, "sync namespace {ns}"),
            Work::ServiceAccounts(ns) => write!(f, "sync service account and root CA of {ns}"),
            Work::ClaimProtection { namespace, name } => {
                write!(f, "protect persistentvolumeclaims {namespace}/{name}")
            }
            Work::VolumeProtection(name) => write!(f, "protect persistentvolumes {name}"),
            Work::NodeTaints(name) => write!(f, "taint nodes {name} by its conditions"),
        }
    }
}

/// One of the controllers: each has its own queue in kube-controller-manager and runs on its
/// own, so a schedule may step them independently ([`ControllerManager::step_controller`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Controller {
    /// The garbage collector.
    GarbageCollector,
    /// The namespace controller.
    Namespace,
    /// The service-account controller and the root CA publisher.
    ServiceAccounts,
    /// The PVC protection controller.
    PvcProtection,
    /// The PV protection controller.
    PvProtection,
    /// The node lifecycle controller (its tainting pass).
    NodeLifecycle,
}

impl Controller {
    /// Every controller, in a fixed order.
    pub const ALL: [Controller; 6] = [
        Controller::GarbageCollector,
        Controller::Namespace,
        Controller::ServiceAccounts,
        Controller::PvcProtection,
        Controller::PvProtection,
        Controller::NodeLifecycle,
    ];

    /// The controller's name in kube-controller-manager (`--controllers`).
    pub fn name(self) -> &'static str {
        match self {
            Controller::GarbageCollector => "garbage-collector-controller",
            Controller::Namespace => "namespace-controller",
            Controller::ServiceAccounts => "serviceaccount-controller",
            Controller::PvcProtection => "persistentvolumeclaim-protection-controller",
            Controller::PvProtection => "persistentvolume-protection-controller",
            Controller::NodeLifecycle => "node-lifecycle-controller",
        }
    }
}

#[derive(Default)]
struct State {
    queue: VecDeque<Work>,
    queued: BTreeSet<Work>,
    /// Namespaces seen with a deletion timestamp: writes inside them wake the namespace
    /// controller.
    terminating: BTreeSet<String>,
    /// Owners deleting their dependents in the foreground: any deletion or owner-reference
    /// change may unblock them.
    foreground: BTreeSet<ObjectRef>,
    /// Invalid-namespace owner references already reported (dependent uid, owner uid), so that
    /// one observation gives one event.
    reported: BTreeSet<(String, String)>,
}

/// The controllers' queue and their switches. One per server.
pub struct ControllerManager {
    config: ControllerConfig,
    state: Mutex<State>,
    /// Whether an inline drive is under way (writes made by it only queue their work).
    running: AtomicBool,
}

impl std::fmt::Debug for ControllerManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerManager")
            .field("config", &self.config)
            .field("pending", &self.pending())
            .finish()
    }
}

impl ControllerManager {
    /// A manager with the given controllers.
    pub fn new(config: ControllerConfig) -> Self {
        Self {
            config,
            state: Mutex::new(State::default()),
            running: AtomicBool::new(false),
        }
    }

    /// The configuration.
    pub fn config(&self) -> ControllerConfig {
        self.config
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many work items wait.
    pub fn pending(&self) -> usize {
        self.lock().queue.len()
    }

    /// The waiting work, in the order it will be done.
    pub fn queued(&self) -> Vec<Work> {
        self.lock().queue.iter().cloned().collect()
    }

    fn enqueue(state: &mut State, work: Work) {
        if state.queued.insert(work.clone()) {
            state.queue.push_back(work);
        }
    }

    fn pop(&self) -> Option<Work> {
        let mut state = self.lock();
        let work = state.queue.pop_front()?;
        state.queued.remove(&work);
        Some(work)
    }

    /// The first queued item of one controller.
    fn pop_for(&self, controller: Controller) -> Option<Work> {
        let mut state = self.lock();
        let at = state
            .queue
            .iter()
            .position(|w| w.controller() == controller)?;
        let work = state.queue.remove(at)?;
        state.queued.remove(&work);
        Some(work)
    }

    /// How many work items of one controller wait.
    pub fn pending_for(&self, controller: Controller) -> usize {
        self.lock()
            .queue
            .iter()
            .filter(|w| w.controller() == controller)
            .count()
    }

    /// Reports a committed write (`object` as stored, or its last state for a deletion) and,
    /// when driven inline, does the work it causes.
    pub(crate) fn observe(
        &self,
        server: &FakeApiServer,
        info: &ResourceInfo,
        object: &Value,
        event: EventType,
    ) {
        if !self.config.any() {
            return;
        }
        self.queue_work(info, object, event);
        if self.config.drive == Drive::Inline {
            self.drive_inline(server);
        }
    }

    /// Turns one write into work items, as the controllers' informer handlers do.
    fn queue_work(&self, info: &ResourceInfo, object: &Value, event: EventType) {
        let deleted = event == EventType::Deleted;
        let meta = &object["metadata"];
        let namespace = meta["namespace"].as_str().unwrap_or_default();
        let name = meta["name"].as_str().unwrap_or_default();
        let is_namespace = info.group.is_empty() && info.kind == "Namespace";
        let deleting = meta.get("deletionTimestamp").is_some_and(|t| !t.is_null());
        let mut state = self.lock();

        if self.config.garbage_collector && !garbage_collector::ignored(info) {
            let this = ObjectRef::of(info, object);
            let finalizers = crate::registry::gc_policy::finalizers_of(object);
            let has = |f: &str| finalizers.iter().any(|x| x == f);
            if deleted {
                state.foreground.remove(&this);
                Self::enqueue(
                    &mut state,
                    Work::OwnerGone {
                        uid: this.uid.clone(),
                    },
                );
            } else {
                if meta["ownerReferences"]
                    .as_array()
                    .is_some_and(|r| !r.is_empty())
                {
                    Self::enqueue(&mut state, Work::Collect(this.clone()));
                }
                if deleting && has(crate::registry::gc_policy::ORPHAN) {
                    Self::enqueue(&mut state, Work::Orphan(this.clone()));
                }
                if deleting && has(crate::registry::gc_policy::FOREGROUND) {
                    if state.foreground.insert(this.clone()) {
                        // It starts waiting for its dependents: every one of them, blocking or
                        // not, is looked at (`startsWaitingForDependentsDeleted`).
                        Self::enqueue(
                            &mut state,
                            Work::OwnerWaiting {
                                uid: this.uid.clone(),
                            },
                        );
                    }
                } else {
                    state.foreground.remove(&this);
                }
            }
            // Any deletion or owner change may unblock an owner waiting for its dependents.
            let waiting: Vec<ObjectRef> = state.foreground.iter().cloned().collect();
            for owner in waiting {
                Self::enqueue(&mut state, Work::Collect(owner));
            }
        }

        if self.config.namespaces {
            if is_namespace {
                if deleted {
                    state.terminating.remove(name);
                } else if deleting {
                    state.terminating.insert(name.to_string());
                    Self::enqueue(&mut state, Work::Namespace(name.to_string()));
                }
            } else if info.namespaced && state.terminating.contains(namespace) {
                Self::enqueue(&mut state, Work::Namespace(namespace.to_string()));
            }
        }

        if self.config.service_accounts {
            let active = object["status"]["phase"].as_str() == Some("Active");
            let wakes = if is_namespace {
                !deleted && active
            } else {
                service_accounts::watches(info, name, deleted)
            };
            if wakes {
                let ns = if is_namespace { name } else { namespace };
                Self::enqueue(&mut state, Work::ServiceAccounts(ns.to_string()));
            }
        }

        if self.config.pvc_protection && !info.custom && info.group.is_empty() {
            let claims = match info.kind.as_str() {
                "PersistentVolumeClaim"
                    if !deleted
                        && volume_protection::needs_look(
                            object,
                            volume_protection::PVC_FINALIZER,
                        ) =>
                {
                    vec![name.to_string()]
                }
                "Pod" => volume_protection::claims_of_pod(object, deleted),
                _ => Vec::new(),
            };
            for claim in claims {
                Self::enqueue(
                    &mut state,
                    Work::ClaimProtection {
                        namespace: namespace.to_string(),
                        name: claim,
                    },
                );
            }
        }
        if self.config.pv_protection
            && info.is_builtin("", "PersistentVolume")
            && !deleted
            && volume_protection::needs_look(object, volume_protection::PV_FINALIZER)
        {
            Self::enqueue(&mut state, Work::VolumeProtection(name.to_string()));
        }
        if self.config.node_lifecycle
            && info.is_builtin("", "Node")
            && !deleted
            && node_lifecycle::needs_sync(object)
        {
            Self::enqueue(&mut state, Work::NodeTaints(name.to_string()));
        }
    }

    /// Does queued work until none is left, unless a drive is already under way (its loop
    /// picks the new work up).
    fn drive_inline(&self, server: &FakeApiServer) {
        loop {
            if self.running.swap(true, Ordering::AcqRel) {
                return;
            }
            let mut done = 0usize;
            while let Some(work) = self.pop() {
                self.process(server, work);
                done += 1;
                if done >= MAX_INLINE_ITEMS {
                    tracing::warn!(
                        done,
                        "controllers did not settle; leaving the rest of their work queued"
                    );
                    break;
                }
            }
            self.running.store(false, Ordering::Release);
            // Work queued by another request between the last pop and the release is ours.
            if done >= MAX_INLINE_ITEMS || self.pending() == 0 {
                return;
            }
        }
    }

    /// Queues work for every stored object, as the controllers' informers would on a start
    /// (after loading saved state), and, inline, does it.
    pub(crate) fn resync(&self, server: &FakeApiServer) {
        if !self.config.any() {
            return;
        }
        {
            let mut state = self.lock();
            state.terminating.clear();
            state.foreground.clear();
        }
        for info in server.shared.registry.all() {
            for object in objects::list(server, &info, None) {
                self.queue_work(&info, &object, EventType::Modified);
            }
        }
        if self.config.drive == Drive::Inline {
            self.drive_inline(server);
        }
    }

    /// Does the next queued item; `None` when nothing was queued.
    pub(crate) fn step(&self, server: &FakeApiServer) -> Option<Work> {
        let work = self.pop()?;
        self.process(server, work.clone());
        Some(work)
    }

    /// Does the next queued item of one controller (one pass of its worker: one
    /// `attemptToDeleteItem`, one namespace sync); `None` when it had nothing queued.
    pub(crate) fn step_controller(
        &self,
        server: &FakeApiServer,
        controller: Controller,
    ) -> Option<Work> {
        let work = self.pop_for(controller)?;
        self.process(server, work.clone());
        Some(work)
    }

    fn process(&self, server: &FakeApiServer, work: Work) {
        tracing::trace!(?work, "controller work");
        let result = match &work {
            Work::Collect(item) => garbage_collector::attempt_to_delete(self, server, item),
            Work::Orphan(owner) => garbage_collector::attempt_to_orphan(server, owner),
            Work::OwnerGone { uid } | Work::OwnerWaiting { uid } => {
                garbage_collector::owner_gone(server, uid, |dependent| {
                    Self::enqueue(&mut self.lock(), Work::Collect(dependent));
                });
                Ok(())
            }
            Work::Namespace(name) => namespace_deleter::sync(server, name),
            Work::ServiceAccounts(name) => service_accounts::sync(server, name),
            Work::ClaimProtection { namespace, name } => {
                volume_protection::sync_claim(server, namespace, name)
            }
            Work::VolumeProtection(name) => volume_protection::sync_volume(server, name),
            Work::NodeTaints(name) => node_lifecycle::sync(server, name),
        };
        if let Err(e) = result {
            // The real controllers requeue with a backoff; here the next write that concerns
            // the item queues it again.
            tracing::debug!(?work, code = e.code, message = %e.message, "controller work failed");
        }
    }

    /// Queues the dependents of an owner for the collector (foreground deletion).
    fn queue_collect(&self, item: ObjectRef) {
        Self::enqueue(&mut self.lock(), Work::Collect(item));
    }

    /// Records that an invalid-namespace owner reference was reported; `false` if it already
    /// was.
    fn first_report(&self, dependent_uid: &str, owner_uid: &str) -> bool {
        self.lock()
            .reported
            .insert((dependent_uid.to_string(), owner_uid.to_string()))
    }
}

#[cfg(test)]
mod tests;
