//! One run: a world of processes on the simulated runtime, stepped by the schedule.
//!
//! At every step the runtime is idle ([`crate::rt`]): every process waits on a held request, a
//! held watch event or a timer. The enabled steps are then: release one held request (perhaps
//! with a fault), deliver the next event of one watch, let virtual time move to the next timer,
//! an outside deed, and — while the fault budget lasts — crash a process, cut a watch, or expire
//! one. The schedule picks one ([`crate::strategy`], recorded by the [`Chooser`]), the runtime
//! runs until idle again, and every invariant is checked. After the last scheduled step, faults
//! stop and a fair drain (every request released, every event delivered, time moving) must
//! reach each of the world's `eventually` goals within the scenario's bound: liveness, as
//! TigerBeetle's VOPR checks it after healing its faults.

use std::sync::Arc;
use std::time::Duration;

use controllers::clock::{Clock, SharedClock};
use controllers::ids::SeededIds;
use fake_apiserver::controllers::{Controller, ControllerConfig, Drive};
use fake_apiserver::FakeApiServer;
use jiff::Timestamp;

use crate::choices::Chooser;
use crate::net::{HeldRequest, Net, Verdict, WatchView};
use crate::rt::{RuntimeError, SimRuntime};
use crate::strategy::{Picker, Strategy};
use crate::trace::{fnv1a, Run, Step};
use crate::world::{HostEnv, World};

/// Which faults a run injects, and how many.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Faults {
    /// Per mille of released requests answered with a fault (409/429/500 or a timeout after
    /// the write took effect; reads only get 429/500).
    pub request_permille: u32,
    /// Whether a process may crash (and restart at once) between two requests.
    pub crashes: bool,
    /// Whether a watch may be cut (the informer watches again from where it was).
    pub watch_cuts: bool,
    /// Whether a watch may be answered `410 Gone` (the informer lists again, skipping states).
    pub expired_watches: bool,
    /// Most faults in one run.
    pub budget: usize,
}

impl Faults {
    /// No faults at all.
    pub fn none() -> Self {
        Self {
            request_permille: 0,
            crashes: false,
            watch_cuts: false,
            expired_watches: false,
            budget: 0,
        }
    }

    /// Every kind of fault: 5% of requests, crashes, cut and expired watches; at most `budget`.
    pub fn all(budget: usize) -> Self {
        Self {
            request_permille: 50,
            crashes: true,
            watch_cuts: true,
            expired_watches: true,
            budget,
        }
    }
}

impl Default for Faults {
    fn default() -> Self {
        Self::none()
    }
}

/// How a run is scheduled.
#[derive(Debug, Clone)]
pub struct Config {
    /// Steps the schedule decides (faults only happen in these).
    pub steps: usize,
    /// The faults injected.
    pub faults: Faults,
    /// Longest virtual time an event or a request may be held before time may move on.
    pub max_lag: Duration,
    /// Furthest one "advance time" step moves.
    pub horizon: Duration,
    /// Once faults stop: the virtual time within which every goal must be reached.
    pub converge_within: Duration,
    /// Most steps of the final drain.
    pub drain_steps: usize,
    /// How seeded runs pick steps.
    pub strategy: Strategy,
    /// Most replays one shrink may take.
    pub shrink_replays: usize,
    /// A targeted plan: lanes held back until named steps have happened (on top of the
    /// strategy, for seeded runs).
    pub plan: Vec<Hold>,
}

/// One rule of a targeted plan: the steps of every lane whose name contains `lane` are not
/// taken until a step whose lane and action contain `until` has been taken `times` times — how a
/// test names the interleaving a seed's comment describes ("hold every pod event from the
/// lifecycle controller's cache until it has created a second pod").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    /// Part of the held lanes' names (`eno/watch`, `pods?labelSelector`).
    pub lane: String,
    /// Part of the releasing step's `lane action` text.
    pub until: String,
    /// How many such steps release the hold.
    pub times: usize,
}

impl Hold {
    /// Holds lanes containing `lane` until a step containing `until` happened `times` times.
    pub fn lane(lane: &str, until: &str, times: usize) -> Self {
        Self {
            lane: lane.to_string(),
            until: until.to_string(),
            times,
        }
    }

    /// Whether this rule holds back `lane` after `taken`.
    fn holds(&self, lane: &str, taken: &[Step]) -> bool {
        lane.contains(&self.lane)
            && taken
                .iter()
                .filter(|s| format!("{} {}", s.lane, s.action).contains(&self.until))
                .count()
                < self.times
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            steps: 150,
            faults: Faults::none(),
            max_lag: Duration::from_secs(2),
            horizon: Duration::from_secs(600),
            converge_within: Duration::from_secs(1800),
            drain_steps: 3000,
            strategy: Strategy::Random,
            shrink_replays: 300,
            plan: Vec::new(),
        }
    }
}

/// A step that can be taken now.
#[derive(Debug, Clone)]
enum Offer {
    Release(HeldRequest),
    Deliver(WatchView),
    Advance(Duration),
    Deed(usize),
    Controller(Controller),
    Crash,
    Cut,
    Expire,
}

/// Virtual time as the controllers see it: a fixed start plus the runtime's paused clock.
#[derive(Debug, Clone)]
pub struct VirtualClock {
    base: Timestamp,
    start: tokio::time::Instant,
    handle: tokio::runtime::Handle,
}

impl VirtualClock {
    /// Time since the run started.
    pub fn elapsed(&self) -> Duration {
        let _guard = self.handle.enter();
        tokio::time::Instant::now().saturating_duration_since(self.start)
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Timestamp {
        let elapsed = jiff::SignedDuration::try_from(self.elapsed()).unwrap_or_default();
        self.base.checked_add(elapsed).unwrap_or(self.base)
    }
}

struct HostRun {
    spec: usize,
    incarnation: u32,
    task: Option<tokio::task::JoinHandle<()>>,
}

/// One run of a world under a schedule.
pub struct Sim {
    seed: u64,
    config: Config,
    // Field order is drop order: the world's closures and hosts go before the runtime.
    world: World,
    hosts: Vec<HostRun>,
    deeds_left: Vec<usize>,
    faults_left: usize,
    net: Net,
    server: FakeApiServer,
    clock: VirtualClock,
    picker: Picker,
    /// The server revision the server invariants last held at.
    checked_revision: Option<u64>,
    trace: Vec<Step>,
    offered: Vec<Offer>,
    rt: SimRuntime,
}

impl Sim {
    /// Builds the world with `build`, runs its setup and starts every host.
    pub fn start(
        seed: u64,
        config: Config,
        build: &dyn Fn(&mut World),
    ) -> Result<Self, RuntimeError> {
        // The one source of randomness in the stack below us: kube-runtime's watcher backoff
        // jitters (backon, through fastrand's thread-local generator, which every task of this
        // single-threaded runtime shares). Seed it, so that jitter is the seed's too.
        fastrand::seed(seed);
        let rt = SimRuntime::new()?;
        let handle = rt.handle().clone();
        let _inside = handle.enter();
        let start = rt.block_on(async { tokio::time::Instant::now() });
        let clock = VirtualClock {
            // 2024-01-01T00:00:00Z, as the controllers' ManualClock starts.
            base: Timestamp::from_second(1_704_067_200).unwrap_or(Timestamp::UNIX_EPOCH),
            start,
            handle: rt.block_on(async { tokio::runtime::Handle::current() }),
        };
        let server_clock = clock.clone();
        let mut world = World::default();
        build(&mut world);
        // kube-controller-manager's controllers run only as the world's actors: driven by hand,
        // one piece of work per step the schedule takes (none named: a bare server).
        let server = FakeApiServer::builder()
            .seed(seed)
            .clock(move || server_clock.now())
            .controllers(controller_config(&world.controllers))
            .build();
        let elapsed_clock = clock.clone();
        let mut net = Net::new(&server, move || elapsed_clock.elapsed());
        if let Some(interceptor) = world.interceptor.clone() {
            net = net.with_interceptor(interceptor);
        }
        for deed in &world.setup {
            rt.block_on((deed)(server.client()));
        }
        let hosts = (0..world.hosts.len())
            .map(|spec| HostRun {
                spec,
                incarnation: 0,
                task: None,
            })
            .collect();
        let deeds_left = world.deeds.iter().map(|d| d.times).collect();
        let picker = Picker::new(config.strategy, seed, config.steps);
        let faults_left = config.faults.budget;
        let mut sim = Self {
            seed,
            config,
            world,
            hosts,
            deeds_left,
            faults_left,
            net,
            server,
            clock,
            picker,
            checked_revision: None,
            trace: Vec::new(),
            offered: Vec::new(),
            rt,
        };
        for i in 0..sim.hosts.len() {
            sim.start_host(i);
        }
        sim.rt.settle();
        Ok(sim)
    }

    /// The fake API server of this run.
    pub fn server(&self) -> &FakeApiServer {
        &self.server
    }

    /// The network of this run.
    pub fn net(&self) -> &Net {
        &self.net
    }

    fn start_host(&mut self, i: usize) {
        let handle = self.rt.handle().clone();
        let _inside = handle.enter();
        let host = &self.hosts[i];
        let spec = &self.world.hosts[host.spec];
        let ids_seed =
            fnv1a(format!("{}/{}/{}", self.seed, spec.name, host.incarnation).as_bytes());
        let env = HostEnv {
            client: self.net.client(&spec.name),
            clock: Arc::new(self.clock.clone()) as SharedClock,
            ids: Arc::new(SeededIds::new(ids_seed)),
            name: spec.name.clone(),
            incarnation: host.incarnation,
        };
        let task = self.rt.spawn((spec.program)(env));
        self.hosts[i].task = Some(task);
    }

    fn now_ms(&self) -> u64 {
        self.clock.elapsed().as_millis() as u64
    }

    fn faults_on(&self, step: usize) -> bool {
        self.faults_left > 0 && step < self.config.steps
    }

    /// The steps enabled now, with the lane each belongs to.
    fn offers(&mut self, step: usize) -> Vec<String> {
        self.offered.clear();
        let mut lanes = Vec::new();
        let held = self.net.held();
        let watches = self.net.watches();
        let mut oldest = Duration::ZERO;
        let now = self.clock.elapsed();
        for request in held {
            oldest = oldest.max(now.saturating_sub(request.since));
            lanes.push(request.host.to_string());
            self.offered.push(Offer::Release(request));
        }
        for watch in watches.iter().filter(|w| w.held > 0) {
            oldest = oldest.max(watch.held_for);
            lanes.push(watch_lane(watch));
            self.offered.push(Offer::Deliver(watch.clone()));
        }
        for (i, left) in self.deeds_left.iter().enumerate() {
            if *left > 0 {
                lanes.push("world".into());
                self.offered.push(Offer::Deed(i));
            }
        }
        for controller in &self.world.controllers {
            if self.server.controllers().pending_for(*controller) > 0 {
                lanes.push(controller_lane(*controller));
                self.offered.push(Offer::Controller(*controller));
            }
        }
        let anything_held = lanes.iter().any(|l| l != "world");
        let room = if anything_held {
            self.config.max_lag.saturating_sub(oldest)
        } else {
            self.config.horizon
        };
        if !room.is_zero() {
            lanes.push("clock".into());
            self.offered
                .push(Offer::Advance(room.min(self.config.horizon)));
        }
        if self.faults_on(step) {
            let faults = &self.config.faults;
            if faults.crashes && self.world.hosts.iter().any(|h| h.crashable) {
                lanes.push("faults".into());
                self.offered.push(Offer::Crash);
            }
            if !watches.is_empty() {
                if faults.watch_cuts {
                    lanes.push("faults".into());
                    self.offered.push(Offer::Cut);
                }
                if faults.expired_watches {
                    lanes.push("faults".into());
                    self.offered.push(Offer::Expire);
                }
            }
        }
        lanes
    }

    /// Runs the schedule: `config.steps` decided steps, then the drain; returns the run.
    pub fn run(mut self, chooser: &mut Chooser) -> Run {
        let mut violation = None;
        for step in 0..self.config.steps {
            let lanes = self.offers(step);
            if lanes.is_empty() {
                break;
            }
            // A targeted plan keeps held lanes out of the seeded choice (unless nothing else is
            // enabled); the decision is recorded as an index into every enabled step, so a
            // replay needs no plan.
            let allowed: Vec<usize> = (0..lanes.len())
                .filter(|i| {
                    !self
                        .config
                        .plan
                        .iter()
                        .any(|h| h.holds(&lanes[*i], &self.trace))
                })
                .collect();
            let allowed = if allowed.is_empty() {
                (0..lanes.len()).collect()
            } else {
                allowed
            };
            let allowed_lanes: Vec<String> = allowed.iter().map(|i| lanes[*i].clone()).collect();
            let picker = &mut self.picker;
            let index = chooser.choose_by(lanes.len(), || allowed[picker.pick(&allowed_lanes)]);
            let taken = self.perform(index, step, chooser);
            self.trace.push(taken);
            if let Err(v) = self.check() {
                violation = Some(v);
                break;
            }
        }
        if violation.is_none() {
            violation = self.drain().err();
        }
        Run {
            trace: std::mem::take(&mut self.trace),
            choices: chooser.made().to_vec(),
            violation,
        }
    }

    /// Takes exactly the steps `choices` name (faults must be off: then each step is one
    /// decision) and returns what can happen next: the bounded exhaustive search of
    /// [`crate::exhaustive`] walks the tree of these.
    pub fn walk(mut self, choices: &[usize]) -> Walked {
        let mut chooser = Chooser::replay(choices.to_vec());
        for step in 0..choices.len() {
            if self.offers(step).is_empty() {
                break;
            }
            let index = chooser.choose(self.offered.len());
            let taken = self.perform(index, step, &mut chooser);
            self.trace.push(taken);
            if let Err(v) = self.check() {
                return Walked {
                    next: Vec::new(),
                    violation: Some(v),
                    trace: std::mem::take(&mut self.trace),
                };
            }
        }
        self.offers(choices.len());
        let next = self.offered.iter().map(transition).collect();
        Walked {
            next,
            violation: None,
            trace: std::mem::take(&mut self.trace),
        }
    }

    fn check(&mut self) -> Result<(), String> {
        for (name, check) in &self.world.invariants {
            check(&self.server).map_err(|e| format!("{name}: {e}"))?;
        }
        let revision = self.server.revision();
        if self.checked_revision != Some(revision) {
            for (name, check) in &self.world.server_invariants {
                check(&self.server).map_err(|e| format!("{name}: {e}"))?;
            }
            self.checked_revision = Some(revision);
        }
        Ok(())
    }

    fn perform(&mut self, index: usize, step: usize, chooser: &mut Chooser) -> Step {
        let at_ms = self.now_ms();
        let Some(offer) = self.offered.get(index).cloned() else {
            return Step {
                at_ms,
                lane: "harness".into(),
                action: "nothing".into(),
                outcome: String::new(),
            };
        };
        match offer {
            Offer::Release(request) => {
                let verdict = self.verdict_for(&request, step, chooser);
                self.release(at_ms, request, verdict)
            }
            Offer::Deliver(watch) => self.deliver(at_ms, &watch),
            Offer::Advance(limit) => self.advance(at_ms, limit),
            Offer::Deed(i) => {
                self.deeds_left[i] -= 1;
                let deed = self.world.deeds[i].deed.clone();
                let label = self.world.deeds[i].label.clone();
                let handle = self.rt.handle().clone();
                let _inside = handle.enter();
                self.rt.spawn((deed)(self.net.client("world")));
                self.rt.settle();
                Step {
                    at_ms,
                    lane: "world".into(),
                    action: label,
                    outcome: "started".into(),
                }
            }
            Offer::Controller(controller) => self.step_controller(at_ms, controller),
            Offer::Crash => {
                self.faults_left -= 1;
                let crashable: Vec<usize> = (0..self.hosts.len())
                    .filter(|i| self.world.hosts[self.hosts[*i].spec].crashable)
                    .collect();
                let target = crashable[chooser.choose(crashable.len()) % crashable.len()];
                self.crash(at_ms, target)
            }
            Offer::Cut | Offer::Expire => {
                self.faults_left -= 1;
                let watches = self.net.watches();
                let watch = &watches[chooser.choose(watches.len()) % watches.len()];
                let expire = matches!(offer, Offer::Expire);
                if expire {
                    self.net.expire(watch.id);
                } else {
                    self.net.cut(watch.id);
                }
                self.rt.settle();
                Step {
                    at_ms,
                    lane: watch_lane(watch),
                    action: if expire {
                        "injected: watch answered 410 Gone".into()
                    } else {
                        "injected: watch connection dropped".into()
                    },
                    outcome: format!("{} held events lost", watch.held),
                }
            }
        }
    }

    /// Whether a released request meets a fault: a recorded coin flip, then the kind.
    fn verdict_for(
        &mut self,
        request: &HeldRequest,
        step: usize,
        chooser: &mut Chooser,
    ) -> Verdict {
        let permille = self.config.faults.request_permille;
        if permille == 0 || !self.faults_on(step) {
            return Verdict::Pass;
        }
        if chooser.choose(1000) as u32 >= permille {
            return Verdict::Pass;
        }
        self.faults_left -= 1;
        let kinds: &[Verdict] = if request.is_write() {
            &[
                Verdict::Fail(409),
                Verdict::Fail(429),
                Verdict::Fail(500),
                Verdict::TimeoutAfterEffect,
            ]
        } else {
            &[Verdict::Fail(429), Verdict::Fail(500)]
        };
        kinds[chooser.choose(kinds.len()) % kinds.len()].clone()
    }

    fn release(&mut self, at_ms: u64, request: HeldRequest, verdict: Verdict) -> Step {
        self.net.release(request.id, verdict);
        self.rt.settle();
        let outcome = self
            .net
            .outcome(request.id)
            .unwrap_or_else(|| "no answer: the caller went away".into());
        Step {
            at_ms,
            lane: request.host.to_string(),
            action: request.label(),
            outcome,
        }
    }

    fn deliver(&mut self, at_ms: u64, watch: &WatchView) -> Step {
        let what = self
            .net
            .deliver(watch.id)
            .unwrap_or_else(|| "nothing".into());
        self.rt.settle();
        Step {
            at_ms,
            lane: watch_lane(watch),
            action: format!("deliver {what}"),
            outcome: String::new(),
        }
    }

    fn advance(&mut self, at_ms: u64, limit: Duration) -> Step {
        let net = self.net.clone();
        let before = net.activity();
        let moved = self.rt.advance_until(limit, || net.activity() != before);
        Step {
            at_ms,
            lane: "clock".into(),
            action: "advance time".into(),
            outcome: format!("+{}", crate::trace::format_ms(moved.as_millis() as u64)),
        }
    }

    /// One piece of a controller's work, then the runtime settles (its writes reach the
    /// watches, held like any other event).
    fn step_controller(&mut self, at_ms: u64, controller: Controller) -> Step {
        let before = self.server.revision();
        let work = self.server.step_controller(controller);
        self.rt.settle();
        let writes = self.server.revision().saturating_sub(before);
        Step {
            at_ms,
            lane: controller_lane(controller),
            action: work.map_or_else(|| "nothing queued".to_string(), |w| w.to_string()),
            outcome: match writes {
                0 => "no write".to_string(),
                1 => "1 write".to_string(),
                n => format!("{n} writes"),
            },
        }
    }

    /// The controller with queued work that goes first in the drain (in the world's order).
    fn busy_controller(&self) -> Option<Controller> {
        self.world
            .controllers
            .iter()
            .copied()
            .find(|c| self.server.controllers().pending_for(*c) > 0)
    }

    fn crash(&mut self, at_ms: u64, i: usize) -> Step {
        let name = self.world.hosts[self.hosts[i].spec].name.clone();
        self.net.kill(&name);
        if let Some(task) = self.hosts[i].task.take() {
            task.abort();
        }
        self.rt.settle();
        self.hosts[i].incarnation += 1;
        self.start_host(i);
        self.rt.settle();
        Step {
            at_ms,
            lane: name,
            action: "injected: crash and restart".into(),
            outcome: format!("incarnation {}", self.hosts[i].incarnation),
        }
    }

    /// Faults stop; every request is released and every event delivered in order, and time
    /// moves whenever nothing else can, until every goal holds (or the bound passes).
    fn drain(&mut self) -> Result<(), String> {
        let deadline = self.clock.elapsed() + self.config.converge_within;
        for _ in 0..self.config.drain_steps {
            let at_ms = self.now_ms();
            // The controllers' queued work goes before what the network holds: it is bounded
            // (each item is one pass over objects that exist) and the real ones run it as
            // soon as their informers see the change.
            if let Some(controller) = self.busy_controller() {
                let step = self.step_controller(at_ms, controller);
                self.trace.push(step);
                self.check()?;
                continue;
            }
            // Fair: whatever has waited longest goes first, request or watch event (by arrival,
            // since virtual time stands still while nothing advances it), so no watch starves
            // while requests keep coming.
            let request = self.net.held().into_iter().min_by_key(|r| r.arrival);
            let watch = self
                .net
                .watches()
                .into_iter()
                .filter_map(|w| w.head_arrival.map(|a| (a, w)))
                .min_by_key(|(a, _)| *a);
            let step = match (request, watch) {
                (Some(request), Some((arrival, _))) if request.arrival < arrival => {
                    self.release(at_ms, request, Verdict::Pass)
                }
                (_, Some((_, watch))) => self.deliver(at_ms, &watch),
                (Some(request), None) => self.release(at_ms, request, Verdict::Pass),
                (None, None) => {
                    if self.goals().is_ok() {
                        return Ok(());
                    }
                    let now = self.clock.elapsed();
                    if now >= deadline {
                        break;
                    }
                    self.advance(at_ms, (deadline - now).min(self.config.horizon))
                }
            };
            self.trace.push(step);
            self.check()?;
        }
        self.goals().map_err(|e| {
            format!(
                "not reached within {} of virtual time once faults stopped: {e}",
                crate::trace::format_ms(self.config.converge_within.as_millis() as u64)
            )
        })
    }

    fn goals(&self) -> Result<(), String> {
        for (name, check) in &self.world.goals {
            check(&self.server).map_err(|e| format!("{name}: {e}"))?;
        }
        Ok(())
    }
}

fn controller_lane(controller: Controller) -> String {
    format!("kube-controller-manager/{}", controller.name())
}

/// The server's controllers for a world that runs `controllers` as its actors.
fn controller_config(controllers: &[Controller]) -> ControllerConfig {
    let on = |c| controllers.contains(&c);
    ControllerConfig {
        garbage_collector: on(Controller::GarbageCollector),
        namespaces: on(Controller::Namespace),
        service_accounts: on(Controller::ServiceAccounts),
        pvc_protection: on(Controller::PvcProtection),
        pv_protection: on(Controller::PvProtection),
        node_lifecycle: on(Controller::NodeLifecycle),
        drive: Drive::Manual,
    }
}

fn watch_lane(watch: &WatchView) -> String {
    format!("{}/watch#{} {}", watch.host, watch.id, watch.label)
}

/// Where a walk ended: the steps enabled there (or the violation that ended it).
#[derive(Debug, Clone)]
pub struct Walked {
    /// The enabled steps, in offer order (index = the decision that takes it).
    pub next: Vec<Transition>,
    /// The invariant broken on the way, if any.
    pub violation: Option<String>,
    /// The steps taken.
    pub trace: Vec<Step>,
}

/// An enabled step, as partial-order reduction sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// Names the same step in every execution where it is enabled (`eno req#12`,
    /// `eno/watch#4 deliver`).
    pub id: String,
    /// The process whose state it changes (`None`: it may change everyone's — time, deeds,
    /// faults).
    pub host: Option<String>,
    /// The API collection a request reads or writes (`/api/v1/namespaces/eno/pods`).
    pub collection: Option<String>,
}

impl Transition {
    /// Whether taking `self` and `other` in either order leads to the same state (up to
    /// resourceVersion numbering): different processes, and not two requests on one collection.
    pub fn independent(&self, other: &Transition) -> bool {
        match (&self.host, &other.host) {
            (Some(a), Some(b)) if a != b => match (&self.collection, &other.collection) {
                (Some(x), Some(y)) => x != y,
                _ => true,
            },
            _ => false,
        }
    }
}

fn transition(offer: &Offer) -> Transition {
    match offer {
        Offer::Release(request) => Transition {
            id: format!("{} req#{}", request.host, request.id),
            host: Some(request.host.to_string()),
            collection: Some(collection_of(&request.target)),
        },
        Offer::Deliver(watch) => Transition {
            id: format!("{} deliver", watch_lane(watch)),
            host: Some(watch.host.clone()),
            collection: None,
        },
        Offer::Advance(_) => global("advance time"),
        Offer::Deed(i) => global(&format!("deed {i}")),
        // A controller step may write anything anyone reads: never independent.
        Offer::Controller(c) => global(&controller_lane(*c)),
        Offer::Crash => global("crash"),
        Offer::Cut => global("cut"),
        Offer::Expire => global("expire"),
    }
}

fn global(id: &str) -> Transition {
    Transition {
        id: id.to_string(),
        host: None,
        collection: None,
    }
}

/// The collection a request target is in: the path without its query, without the object
/// name and subresource (`/api/v1/namespaces/eno/pods/p/status` → `/api/v1/namespaces/eno/pods`).
fn collection_of(target: &str) -> String {
    let path = target.split('?').next().unwrap_or_default();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    // /api/v1/[namespaces/NS/]RESOURCE[/NAME[/SUB]]  or  /apis/G/V/[namespaces/NS/]RESOURCE[/...]
    let base = if segments.first() == Some(&"api") {
        2
    } else {
        3
    };
    let namespaced = segments.get(base) == Some(&"namespaces") && segments.len() > base + 2;
    let resource_at = if namespaced { base + 2 } else { base };
    format!(
        "/{}",
        segments[..(resource_at + 1).min(segments.len())].join("/")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_grouped_by_collection() {
        for (target, want) in [
            (
                "/api/v1/namespaces/eno/pods/p/status",
                "/api/v1/namespaces/eno/pods",
            ),
            (
                "/api/v1/namespaces/eno/pods?labelSelector=a",
                "/api/v1/namespaces/eno/pods",
            ),
            ("/api/v1/nodes/n", "/api/v1/nodes"),
            ("/api/v1/namespaces/eno", "/api/v1/namespaces"),
            (
                "/apis/eno.azure.io/v1/namespaces/default/compositions/c/status",
                "/apis/eno.azure.io/v1/namespaces/default/compositions",
            ),
            (
                "/apis/karpenter.sh/v1beta1/nodeclaims?watch=true",
                "/apis/karpenter.sh/v1beta1/nodeclaims",
            ),
        ] {
            assert_eq!(collection_of(target), want, "{target}");
        }
    }

    #[test]
    fn independence_needs_different_processes_and_collections() {
        let req = |host: &str, c: &str| Transition {
            id: format!("{host} {c}"),
            host: Some(host.into()),
            collection: Some(c.into()),
        };
        let deliver = |host: &str| Transition {
            id: format!("{host} deliver"),
            host: Some(host.into()),
            collection: None,
        };
        assert!(req("a", "/x").independent(&req("b", "/y")));
        assert!(!req("a", "/x").independent(&req("b", "/x")));
        assert!(!req("a", "/x").independent(&req("a", "/y")));
        assert!(deliver("a").independent(&req("b", "/x")));
        assert!(!deliver("a").independent(&req("a", "/x")));
        assert!(!global("advance time").independent(&deliver("a")));
    }
}
