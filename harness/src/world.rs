//! What a scenario puts into a run: the processes (hosts) that run production code, the world
//! around them, the invariants that must hold after every step and the state every run must
//! reach once faults stop.
//!
//! A [`World`] is built afresh for every run by the scenario's build function, so state shared
//! between a host and an invariant (a fake cloud's instances, say) is per run.

use std::sync::Arc;

use controllers::clock::SharedClock;
use controllers::ids::SharedIds;
use fake_apiserver::controllers::Controller;
use fake_apiserver::FakeApiServer;
use futures::future::BoxFuture;

use crate::net::Interceptor;

/// What a host's program is given when it starts: everything production would take from its
/// environment, made deterministic.
#[derive(Clone)]
pub struct HostEnv {
    /// The process's API client (through the schedule-owned network).
    pub client: kube::Client,
    /// Virtual time.
    pub clock: SharedClock,
    /// Seeded ids (a fresh, deterministic stream per incarnation).
    pub ids: SharedIds,
    /// The host's name.
    pub name: String,
    /// 0 for the first start, then one more per crash.
    pub incarnation: u32,
}

/// A process's program: production's own entry point, given its environment.
pub type Program = Arc<dyn Fn(HostEnv) -> BoxFuture<'static, ()> + Send + Sync>;

/// A check of the server (and whatever the closure captured) that returns what is wrong.
pub type Check = Box<dyn Fn(&FakeApiServer) -> Result<(), String>>;

/// Something an outside actor does once or a few times (a user edits an object): its requests
/// go through the network like a process's.
pub type Deed = Arc<dyn Fn(kube::Client) -> BoxFuture<'static, ()> + Send + Sync>;

pub(crate) struct HostSpec {
    pub name: String,
    pub program: Program,
    pub crashable: bool,
}

pub(crate) struct DeedSpec {
    pub label: String,
    pub times: usize,
    pub deed: Deed,
}

/// Everything one run holds: built by a scenario for each run.
#[derive(Default)]
pub struct World {
    pub(crate) setup: Vec<Deed>,
    pub(crate) hosts: Vec<HostSpec>,
    pub(crate) invariants: Vec<(String, Check)>,
    pub(crate) server_invariants: Vec<(String, Check)>,
    pub(crate) goals: Vec<(String, Check)>,
    pub(crate) deeds: Vec<DeedSpec>,
    pub(crate) interceptor: Option<Arc<dyn Interceptor>>,
    pub(crate) controllers: Vec<Controller>,
}

impl World {
    /// Runs `deed` before any host starts, straight against the server (CRDs, initial objects).
    pub fn setup<F>(&mut self, deed: F) -> &mut Self
    where
        F: Fn(kube::Client) -> BoxFuture<'static, ()> + Send + Sync + 'static,
    {
        self.setup.push(Arc::new(deed));
        self
    }

    /// A controller process running `program`; a crash fault may kill and restart it.
    pub fn host<F>(&mut self, name: &str, program: F) -> &mut Self
    where
        F: Fn(HostEnv) -> BoxFuture<'static, ()> + Send + Sync + 'static,
    {
        self.hosts.push(HostSpec {
            name: name.to_string(),
            program: Arc::new(program),
            crashable: true,
        });
        self
    }

    /// A process of the world (a kubelet stand-in): scheduled like a host, never crashed.
    pub fn actor<F>(&mut self, name: &str, program: F) -> &mut Self
    where
        F: Fn(HostEnv) -> BoxFuture<'static, ()> + Send + Sync + 'static,
    {
        self.hosts.push(HostSpec {
            name: name.to_string(),
            program: Arc::new(program),
            crashable: false,
        });
        self
    }

    /// kube-controller-manager's `controllers` (the garbage collector, the namespace
    /// controller, ...) run beside the server, each as an actor of the world: every piece of
    /// work one of them does (one `attemptToDeleteItem`, one namespace sync) is a step the
    /// schedule takes when it says, in lane `kube-controller-manager/<controller>`. They are the
    /// server's own controllers ([`fake_apiserver::controllers`]), driven by hand instead of
    /// inline. A world that names none runs a bare server (no controller acts behind the
    /// schedule's back).
    pub fn kube_controller_manager(&mut self, controllers: &[Controller]) -> &mut Self {
        for c in controllers {
            if !self.controllers.contains(c) {
                self.controllers.push(*c);
            }
        }
        self.controllers.sort();
        self
    }

    /// Something an outside actor may do, at most `times` times, whenever the schedule says.
    pub fn deed<F>(&mut self, label: &str, times: usize, deed: F) -> &mut Self
    where
        F: Fn(kube::Client) -> BoxFuture<'static, ()> + Send + Sync + 'static,
    {
        self.deeds.push(DeedSpec {
            label: label.to_string(),
            times,
            deed: Arc::new(deed),
        });
        self
    }

    /// A safety property checked after every step; the run fails at the first step it breaks.
    pub fn invariant<F>(&mut self, name: &str, check: F) -> &mut Self
    where
        F: Fn(&FakeApiServer) -> Result<(), String> + 'static,
    {
        self.invariants.push((name.to_string(), Box::new(check)));
        self
    }

    /// A safety property of the API server's state alone: checked after every step that
    /// changed it (cheaper than [`World::invariant`], which also sees state outside the
    /// server, such as a fake cloud's instances, and so runs after every step).
    pub fn server_invariant<F>(&mut self, name: &str, check: F) -> &mut Self
    where
        F: Fn(&FakeApiServer) -> Result<(), String> + 'static,
    {
        self.server_invariants
            .push((name.to_string(), Box::new(check)));
        self
    }

    /// A liveness property: once faults stop and the schedule is fair, the system must reach
    /// it within the scenario's bound.
    pub fn eventually<F>(&mut self, name: &str, check: F) -> &mut Self
    where
        F: Fn(&FakeApiServer) -> Result<(), String> + 'static,
    {
        self.goals.push((name.to_string(), Box::new(check)));
        self
    }

    /// Changes the world on the way to the server (how a guard is defeated honestly).
    pub fn intercept(&mut self, interceptor: Arc<dyn Interceptor>) -> &mut Self {
        self.interceptor = Some(interceptor);
        self
    }
}
