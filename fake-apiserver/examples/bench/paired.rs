//! Ratios of two rates measured in alternating slices.
//!
//! The machines the bench runs on are shared VMs whose speed drifts: the same loop runs at half
//! speed for a second and at full speed the next (measured here: the in-process UPDATE 6.4k/s
//! in one run, 14.1k/s in the next). A ratio of two figures measured seconds apart carries that
//! drift whole (the same build read 0.33 and 0.63 against a 0.6 target). Measured instead as
//! pairs of short slices run back to back, in turn (A B, then B A, so that a drift within a pair
//! weighs on both sides alike), each pair gives a ratio taken at one speed of the machine, and
//! the median of the pairs is the figure.

use std::future::Future;
use std::time::Duration;

use futures::future::{FutureExt, LocalBoxFuture};

use crate::fixtures::{run_for, Result, Run};
use crate::report::{number, Figure, Target};

/// How many pairs of slices a ratio is the median of.
pub const ROUNDS: usize = 11;
/// How long each slice runs.
pub const SLICE: Duration = Duration::from_millis(80);
/// Set (to anything), every pair's two rates and ratio are printed to stderr as they are
/// measured: which side ran first, and how far the pairs spread.
pub const PAIRS_ENV: &str = "BENCH_PAIRS";

/// One unit of an operation's work, given its call number.
type Op = Box<dyn FnMut(u64) -> LocalBoxFuture<'static, Result<()>>>;

/// An operation measured by its rate that can run again later: its calls are numbered on from
/// the calls before (so that a write alternating two bodies keeps alternating and every call
/// is a real change).
pub struct Probe {
    /// The figure the operation is measured for, e.g. `inproc.update`.
    pub name: String,
    /// The unit of its rate, e.g. `req/s`.
    pub unit: &'static str,
    calls: u64,
    op: Op,
}

impl Probe {
    /// `op` as a probe named `name`, `calls` of it made already (the next call is numbered
    /// `calls`).
    pub fn new<F, Fut>(name: impl Into<String>, unit: &'static str, calls: u64, mut op: F) -> Self
    where
        F: FnMut(u64) -> Fut + 'static,
        Fut: Future<Output = Result<()>> + 'static,
    {
        Probe {
            name: name.into(),
            unit,
            calls,
            op: Box::new(move |i| op(i).boxed_local()),
        }
    }

    /// Runs the operation back to back for `duration`.
    pub async fn run(&mut self, duration: Duration) -> Result<Run> {
        let first = self.calls;
        let op = &mut self.op;
        let run = run_for(duration, u64::MAX, |i| op(first + i)).await?;
        self.calls += run.count;
        Ok(run)
    }

    /// Makes `n` calls and counts what they allocate: (allocations, bytes) per call. The calls
    /// are the probe's [`crate::callgrind::Collect`] region.
    pub async fn allocations(&mut self, n: u64) -> Result<(f64, f64)> {
        let since = crate::alloc_count::Since::now();
        let region = crate::callgrind::Collect::start(&self.name);
        for i in 0..n {
            (self.op)(self.calls + i).await?;
        }
        drop(region);
        self.calls += n;
        Ok(since.per(n))
    }
}

/// The pairs of slices of one ratio: `numerator`'s rate over `denominator`'s, each pair run
/// back to back.
#[derive(Debug)]
pub struct Paired {
    /// Each pair's ratio, lowest first.
    ratios: Vec<f64>,
    /// The numerator's rate in each pair, lowest first.
    numerator_rates: Vec<f64>,
    /// The denominator's rate in each pair, lowest first.
    denominator_rates: Vec<f64>,
}

/// Measures `numerator`'s rate over `denominator`'s as [`ROUNDS`] pairs of [`SLICE`]s, the
/// numerator first in even rounds and second in odd ones.
pub async fn measure(numerator: &mut Probe, denominator: &mut Probe) -> Result<Paired> {
    let mut pairs = Vec::with_capacity(ROUNDS);
    for round in 0..ROUNDS {
        let (n, d) = if round % 2 == 0 {
            let n = numerator.run(SLICE).await?;
            (n, denominator.run(SLICE).await?)
        } else {
            let d = denominator.run(SLICE).await?;
            (numerator.run(SLICE).await?, d)
        };
        if std::env::var_os(PAIRS_ENV).is_some() {
            eprintln!(
                "# pair {round} ({} first): {} {:.0} / {} {:.0} = {:.3}",
                if round % 2 == 0 {
                    "numerator"
                } else {
                    "denominator"
                },
                numerator.name,
                n.rate(),
                denominator.name,
                d.rate(),
                n.rate() / d.rate().max(1e-9)
            );
        }
        pairs.push((n.rate(), d.rate()));
    }
    Ok(Paired::of(&pairs))
}

impl Paired {
    /// The pairs `(numerator rate, denominator rate)`, in any order.
    fn of(pairs: &[(f64, f64)]) -> Self {
        let sorted = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v
        };
        Paired {
            ratios: sorted(pairs.iter().map(|(n, d)| n / d.max(1e-9)).collect()),
            numerator_rates: sorted(pairs.iter().map(|(n, _)| *n).collect()),
            denominator_rates: sorted(pairs.iter().map(|(_, d)| *d).collect()),
        }
    }

    /// The median of the pairs' ratios.
    pub fn median(&self) -> f64 {
        median(&self.ratios)
    }

    /// The figure `name`: the median ratio held against `target`; the note gives the pairs'
    /// spread and both sides' median rates.
    pub fn figure(
        &self,
        name: &str,
        numerator: &Probe,
        denominator: &Probe,
        target: Target,
    ) -> Figure {
        let (low, high) = (
            self.ratios.first().copied().unwrap_or(0.0),
            self.ratios.last().copied().unwrap_or(0.0),
        );
        Figure::new(name, self.median(), "ratio", target).note(format!(
            "median of {} paired {} ms slices, {}..{}: {} {} {} / {} {} {}",
            self.ratios.len(),
            SLICE.as_millis(),
            number(low),
            number(high),
            numerator.name,
            number(median(&self.numerator_rates)),
            numerator.unit,
            denominator.name,
            number(median(&self.denominator_rates)),
            denominator.unit,
        ))
    }
}

/// The middle value of `sorted` (the mean of the two middle ones for an even count; 0 if empty).
fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_pair_or_the_mean_of_the_two() {
        assert_eq!(median(&[1.0, 2.0, 9.0]), 2.0);
        assert_eq!(median(&[1.0, 2.0, 4.0, 9.0]), 3.0);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn each_pair_is_a_ratio_taken_at_one_speed() {
        // The machine ran at full speed, at a third, then at half: the figures of both sides
        // moved threefold, each pair's ratio did not.
        let paired = Paired::of(&[(30.0, 60.0), (10.0, 20.0), (15.0, 31.0)]);
        assert_eq!(paired.ratios, vec![15.0 / 31.0, 0.5, 0.5]);
        assert_eq!(paired.median(), 0.5);
        assert_eq!(paired.numerator_rates, vec![10.0, 15.0, 30.0]);
        assert_eq!(paired.denominator_rates, vec![20.0, 31.0, 60.0]);
    }

    #[test]
    fn the_figure_notes_the_spread_and_both_rates() {
        let probe = |name: &str, unit| Probe::new(name, unit, 0, |_| async { Ok(()) });
        let paired = Paired::of(&[(30.0, 60.0), (10.0, 20.0), (15.0, 31.0)]);
        let figure = paired.figure(
            "ratio.a_vs_b",
            &probe("a", "req/s"),
            &probe("b", "obj/s"),
            Target::AtLeast(0.6),
        );
        assert_eq!(figure.value, 0.5);
        assert_eq!(figure.verdict(), "MISS");
        let note = format!(
            "median of 3 paired {} ms slices, 0.484..0.500: a 15.0 req/s / b 31.0 obj/s",
            SLICE.as_millis()
        );
        assert_eq!(figure.note, Some(note));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_probe_numbers_its_calls_on_from_the_calls_before() {
        let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let log = seen.clone();
        let mut probe = Probe::new("p", "req/s", 5, move |i| {
            log.borrow_mut().push(i);
            async { Ok(()) }
        });
        let first = probe.run(Duration::from_millis(2)).await.unwrap().count;
        let second = probe.run(Duration::from_millis(2)).await.unwrap().count;
        let seen = seen.borrow();
        assert_eq!(seen.len() as u64, first + second);
        assert!(seen.iter().copied().eq(5..5 + first + second));
    }
}
