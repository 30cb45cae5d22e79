//! The simulated runtime: one thread, tokio's paused clock, and an exact "everything is idle"
//! signal.
//!
//! Production code (kube-runtime's `Controller`, the watchers, the fake API server's watch
//! tasks) runs unchanged on a current-thread tokio runtime whose clock is paused. Tokio only
//! moves a paused clock when the runtime has nothing left to run, jumping to the next timer; so
//! time is ours as long as we never let the runtime idle without asking for it.
//!
//! The idle signal comes from the runtime's park hook (`on_thread_park`), which tokio calls
//! exactly when no task is runnable and nothing is deferred. [`SimRuntime::settle`] waits for that
//! moment and wakes the caller instead of letting the clock move; [`SimRuntime::advance`] lets it
//! move once, to the next timer that is due (never further than a limit), and then settles.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// Why a simulated runtime could not be built.
#[derive(Debug, thiserror::Error)]
#[error("building the simulated runtime: {0}")]
pub struct RuntimeError(#[from] std::io::Error);

/// The park hook's side of the idle signal.
#[derive(Debug, Default)]
struct IdleProbe {
    /// Who waits for idleness.
    waiter: Mutex<Option<Waker>>,
    /// Let the next idle moment pass without waking the waiter, so tokio advances the clock.
    let_time_move: AtomicBool,
}

impl IdleProbe {
    /// Called by tokio each time the thread is about to park (nothing runnable).
    fn on_park(&self) {
        if self.let_time_move.swap(false, Ordering::SeqCst) {
            return;
        }
        let waiter = self.waiter.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(waker) = waiter {
            waker.wake();
        }
    }
}

/// Resolves at the next moment the runtime has nothing to run.
struct Idle {
    probe: Arc<IdleProbe>,
    registered: bool,
}

impl Future for Idle {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.registered {
            let still_waiting = self
                .probe
                .waiter
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_some();
            if !still_waiting {
                return Poll::Ready(());
            }
        }
        *self.probe.waiter.lock().unwrap_or_else(|e| e.into_inner()) = Some(cx.waker().clone());
        self.registered = true;
        Poll::Pending
    }
}

/// A current-thread tokio runtime with a paused clock and an idle signal.
pub struct SimRuntime {
    runtime: tokio::runtime::Runtime,
    probe: Arc<IdleProbe>,
    start: tokio::time::Instant,
}

impl SimRuntime {
    /// A fresh runtime, its clock paused at zero.
    pub fn new() -> Result<Self, RuntimeError> {
        let probe = Arc::new(IdleProbe::default());
        let hook = probe.clone();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .on_thread_park(move || hook.on_park())
            .build()?;
        let start = runtime.block_on(async { tokio::time::Instant::now() });
        Ok(Self {
            runtime,
            probe,
            start,
        })
    }

    /// A handle to the runtime (enter it to create clients or read its clock from outside).
    pub fn handle(&self) -> &tokio::runtime::Handle {
        self.runtime.handle()
    }

    /// Runs `future` to completion on the runtime (other tasks run meanwhile).
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// Spawns a task on the runtime; it runs while the runtime is driven.
    pub fn spawn<F>(&self, future: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.runtime.spawn(future)
    }

    /// Runs every task until all wait on something outside the runtime's own work: a held
    /// request, a held watch event, a timer. Virtual time does not move.
    pub fn settle(&self) {
        self.runtime.block_on(self.idle());
    }

    fn idle(&self) -> Idle {
        Idle {
            probe: self.probe.clone(),
            registered: false,
        }
    }

    /// Lets virtual time move until `happened` says something did (checked each time the
    /// runtime is idle again), or by `limit`. Returns how far time moved.
    ///
    /// One move of tokio's paused clock goes to the next timer *or* to the next slot boundary of
    /// its timer wheel (4.096s, 64ms, ... ahead), whichever is first, so a far timer takes
    /// several moves; this loops over them.
    pub fn advance_until(&self, limit: Duration, mut happened: impl FnMut() -> bool) -> Duration {
        let mut moved = Duration::ZERO;
        while moved < limit {
            moved += self.advance(limit - moved);
            if happened() {
                break;
            }
        }
        moved
    }

    /// Lets virtual time move once — to the next timer, or the timer wheel's next slot
    /// boundary, but no further than `limit` — fires what is due then, and settles. Returns how
    /// far time moved.
    pub fn advance(&self, limit: Duration) -> Duration {
        let before = self.elapsed();
        self.settle();
        self.probe.let_time_move.store(true, Ordering::SeqCst);
        self.runtime.block_on(async {
            let bound = tokio::time::sleep(limit);
            tokio::pin!(bound);
            let idle = self.idle();
            tokio::pin!(idle);
            futures::future::select(bound, idle).await;
        });
        self.probe.let_time_move.store(false, Ordering::SeqCst);
        self.settle();
        self.elapsed().saturating_sub(before)
    }

    /// Virtual time since the runtime was built.
    pub fn elapsed(&self) -> Duration {
        self.runtime
            .block_on(async { tokio::time::Instant::now() })
            .saturating_duration_since(self.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn settle_runs_chains_of_tasks_without_moving_time() {
        let rt = SimRuntime::new().expect("runtime");
        let hops = Arc::new(AtomicUsize::new(0));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<u32>();
        let counter = hops.clone();
        rt.spawn(async move {
            while let Some(n) = rx.recv().await {
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::task::yield_now().await;
                if n == 0 {
                    break;
                }
            }
        });
        for n in (0..50).rev() {
            tx.send(n).expect("send");
        }
        rt.settle();
        assert_eq!(hops.load(Ordering::SeqCst), 50);
        assert_eq!(rt.elapsed(), Duration::ZERO);
    }

    #[test]
    fn advance_until_moves_to_the_next_timer_and_no_further() {
        let rt = SimRuntime::new().expect("runtime");
        let fired = Arc::new(AtomicUsize::new(0));
        for secs in [5u64, 9] {
            let fired = fired.clone();
            rt.spawn(async move {
                tokio::time::sleep(Duration::from_secs(secs)).await;
                fired.fetch_add(1, Ordering::SeqCst);
            });
        }
        rt.settle();
        assert_eq!(fired.load(Ordering::SeqCst), 0);
        let seen = fired.clone();
        let happened = move || seen.load(Ordering::SeqCst);
        let before = happened();
        let moved = rt.advance_until(Duration::from_secs(60), || happened() != before);
        assert_eq!(moved, Duration::from_secs(5));
        assert_eq!(fired.load(Ordering::SeqCst), 1);
        let moved = rt.advance_until(Duration::from_secs(2), || false);
        assert_eq!(moved, Duration::from_secs(2), "bounded by the limit");
        assert_eq!(fired.load(Ordering::SeqCst), 1);
        rt.advance_until(Duration::from_secs(60), || {
            fired.load(Ordering::SeqCst) == 2
        });
        assert_eq!(rt.elapsed(), Duration::from_secs(9));
    }

    #[test]
    fn advance_with_no_timer_moves_to_the_limit() {
        let rt = SimRuntime::new().expect("runtime");
        assert_eq!(
            rt.advance_until(Duration::from_millis(1500), || false),
            Duration::from_millis(1500)
        );
    }
}
