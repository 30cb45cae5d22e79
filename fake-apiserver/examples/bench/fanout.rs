//! Section 4: fan-out to 100 watchers (`Api::watch` streams through the in-process client).
//!
//! Paced phase: one write at a time, the next only after the 100th watcher has it; the time from
//! just before the write to its arrival at the 100th watcher is the latency. Burst phase: all
//! writes back to back; throughput is events (and deliveries) per second until every watcher has
//! every event.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fake_apiserver::FakeApiServer;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams, WatchEvent, WatchParams};
use tokio::sync::Notify;

use crate::fixtures::{self, rate, Result};
use crate::report::{emit, Figure, Samples, Target};

const WATCHERS: u32 = 100;
const EVENTS: usize = 10_000;
/// Each phase stops writing after this long, whatever it reached.
const PHASE_BUDGET: Duration = Duration::from_secs(12);

/// Arrival bookkeeping for both phases: slot `i` is paced write `i`, slot `EVENTS + i` burst
/// write `i`. Times are nanoseconds since `base`; 0 means "not yet".
struct Tracker {
    base: Instant,
    seen_by: Vec<AtomicU32>,
    sent: Vec<AtomicU64>,
    all_arrived: Vec<AtomicU64>,
    /// Woken whenever a write has reached every watcher.
    complete: Notify,
    completed: AtomicU64,
}

impl Tracker {
    fn new() -> Self {
        let slots = 2 * EVENTS;
        Self {
            base: Instant::now(),
            seen_by: (0..slots).map(|_| AtomicU32::new(0)).collect(),
            sent: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            all_arrived: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            complete: Notify::new(),
            completed: AtomicU64::new(0),
        }
    }

    fn now(&self) -> u64 {
        (self.base.elapsed().as_nanos() as u64).max(1)
    }

    fn slot(name: &str) -> Option<usize> {
        let (phase, index) = name.split_once('-')?;
        let index: usize = index.parse().ok().filter(|i| *i < EVENTS)?;
        match phase {
            "p" => Some(index),
            "b" => Some(EVENTS + index),
            _ => None,
        }
    }

    fn arrived(&self, name: &str) {
        let Some(slot) = Self::slot(name) else {
            return;
        };
        if self.seen_by[slot].fetch_add(1, Ordering::AcqRel) + 1 == WATCHERS {
            self.all_arrived[slot].store(self.now(), Ordering::Release);
            self.completed.fetch_add(1, Ordering::AcqRel);
            self.complete.notify_one();
        }
    }

    fn latency(&self, slot: usize) -> Option<Duration> {
        let sent = self.sent[slot].load(Ordering::Acquire);
        let arrived = self.all_arrived[slot].load(Ordering::Acquire);
        (sent != 0 && arrived != 0).then(|| Duration::from_nanos(arrived.saturating_sub(sent)))
    }
}

/// Runs section 4 on a runtime of the given kind (`None`: current-thread).
pub fn run(all: &mut Vec<Figure>, workers: Option<usize>) -> Result<()> {
    let (rt, label) = match workers {
        None => (fixtures::current_thread()?, "fanout.1core".to_string()),
        Some(n) => (fixtures::multi_thread(n)?, format!("fanout.{n}workers")),
    };
    rt.block_on(async {
        let server = FakeApiServer::builder().seed(4).build();
        let client = server.client();
        fixtures::create_namespace(&client, "fan").await?;
        let cms = Api::<ConfigMap>::namespaced(client.clone(), "fan");
        let tracker = Arc::new(Tracker::new());
        let from = server.revision().to_string();
        let mut watchers = Vec::new();
        for _ in 0..WATCHERS {
            let stream = cms.watch(&WatchParams::default(), &from).await?;
            let tracker = tracker.clone();
            watchers.push(tokio::spawn(async move {
                let mut stream = std::pin::pin!(stream);
                while let Some(event) = stream.next().await {
                    if let Ok(WatchEvent::Added(cm)) = event {
                        tracker.arrived(cm.metadata.name.as_deref().unwrap_or_default());
                    }
                }
            }));
        }
        paced(&cms, &tracker, &label, all).await?;
        burst(&cms, &tracker, &label, all).await?;
        for w in watchers {
            w.abort();
        }
        Ok(())
    })
}

async fn paced(
    cms: &Api<ConfigMap>,
    tracker: &Tracker,
    label: &str,
    all: &mut Vec<Figure>,
) -> Result<()> {
    let params = PostParams::default();
    let watch = fixtures::Stopwatch::start();
    let start = Instant::now();
    let mut samples = Samples::with_capacity(EVENTS);
    for i in 0..EVENTS {
        if start.elapsed() > PHASE_BUDGET {
            break;
        }
        let cm = fixtures::config_map("fan", &format!("p-{i}"), i as u64 % 10, 64);
        tracker.sent[i].store(tracker.now(), Ordering::Release);
        cms.create(&params, &cm).await?;
        while tracker.all_arrived[i].load(Ordering::Acquire) == 0 {
            if tokio::time::timeout(Duration::from_secs(5), tracker.complete.notified())
                .await
                .is_err()
            {
                return Err(format!("write {i} did not reach every watcher in 5 s").into());
            }
        }
        if let Some(d) = tracker.latency(i) {
            samples.push(d);
        }
    }
    let cores = watch.run(samples.len() as u64).cores();
    emit(
        Figure::info(
            format!("{label}.paced_writes"),
            samples.len() as f64,
            "events",
        )
        .cores(cores),
        all,
    );
    emit(
        Figure::new(
            format!("{label}.latency.p50"),
            samples.percentile_ms(50.0),
            "ms",
            Target::Below(1.0),
        ),
        all,
    );
    emit(
        Figure::new(
            format!("{label}.latency.p99"),
            samples.percentile_ms(99.0),
            "ms",
            Target::Below(1.0),
        ),
        all,
    );
    Ok(())
}

async fn burst(
    cms: &Api<ConfigMap>,
    tracker: &Arc<Tracker>,
    label: &str,
    all: &mut Vec<Figure>,
) -> Result<()> {
    let before = tracker.completed.load(Ordering::Acquire);
    let watch = fixtures::Stopwatch::start();
    let start = Instant::now();
    let writer = {
        let cms = cms.clone();
        let tracker = tracker.clone();
        tokio::spawn(async move {
            let params = PostParams::default();
            let mut written = 0u64;
            for i in 0..EVENTS {
                if start.elapsed() > PHASE_BUDGET {
                    break;
                }
                let cm = fixtures::config_map("fan", &format!("b-{i}"), i as u64 % 10, 64);
                tracker.sent[EVENTS + i].store(tracker.now(), Ordering::Release);
                cms.create(&params, &cm).await?;
                written += 1;
            }
            Ok::<u64, fixtures::BoxError>(written)
        })
    };
    let written = writer.await??;
    let write_time = start.elapsed();
    let deadline = start + PHASE_BUDGET * 2;
    while tracker.completed.load(Ordering::Acquire) - before < written {
        if Instant::now() > deadline {
            break;
        }
        let _ = tokio::time::timeout(Duration::from_millis(50), tracker.complete.notified()).await;
    }
    let delivered = tracker.completed.load(Ordering::Acquire) - before;
    let run = watch.run(delivered);
    let took = run.wall;
    emit(
        Figure::info(
            format!("{label}.burst_writes"),
            rate(written, write_time),
            "events/s",
        ),
        all,
    );
    emit(
        Figure::info(
            format!("{label}.burst_events"),
            rate(delivered, took),
            "events/s",
        ),
        all,
    );
    emit(
        Figure::info(
            format!("{label}.burst_deliveries"),
            rate(delivered * u64::from(WATCHERS), took),
            "events/s",
        )
        .cores(run.cores()),
        all,
    );
    emit(
        Figure::new(
            format!("{label}.burst_missing"),
            written.saturating_sub(delivered) as f64,
            "events",
            Target::Below(1.0),
        ),
        all,
    );
    Ok(())
}
