//! Figures, targets and the one-line-per-figure report; percentiles of latency samples.

use std::time::Duration;

/// What a figure is held against.
#[derive(Debug, Clone, Copy)]
pub enum Target {
    /// The value should be at least this.
    AtLeast(f64),
    /// The value should be below this.
    Below(f64),
    /// The value should be at most this (ratios).
    AtMost(f64),
    /// No target: the figure is information.
    None,
}

/// One measured figure.
#[derive(Debug, Clone)]
pub struct Figure {
    /// Dotted name, e.g. `inproc.get`.
    pub name: String,
    /// The measured value.
    pub value: f64,
    /// Unit of `value` and of the target.
    pub unit: &'static str,
    /// What the value is held against.
    pub target: Target,
    /// CPU cores the process used while measuring (shown so that a loaded machine is visible).
    pub cores: Option<f64>,
    /// A remark printed after the line.
    pub note: Option<String>,
}

impl Figure {
    /// A figure with a target.
    pub fn new(name: impl Into<String>, value: f64, unit: &'static str, target: Target) -> Self {
        Self {
            name: name.into(),
            value,
            unit,
            target,
            cores: None,
            note: None,
        }
    }

    /// The same figure with a remark.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }

    /// The same figure, noting the CPU cores used while measuring.
    pub fn cores(mut self, cores: Option<f64>) -> Self {
        self.cores = cores;
        self
    }

    /// A figure without a target.
    pub fn info(name: impl Into<String>, value: f64, unit: &'static str) -> Self {
        Self::new(name, value, unit, Target::None)
    }

    /// `PASS`, `MISS` or `-` (no target).
    pub fn verdict(&self) -> &'static str {
        match self.target {
            Target::AtLeast(t) if self.value >= t => "PASS",
            Target::Below(t) if self.value < t => "PASS",
            Target::AtMost(t) if self.value <= t => "PASS",
            Target::None => "-",
            _ => "MISS",
        }
    }

    fn target_text(&self) -> String {
        match self.target {
            Target::AtLeast(t) => format!(">= {}", number(t)),
            Target::Below(t) => format!("< {}", number(t)),
            Target::AtMost(t) => format!("<= {}", number(t)),
            Target::None => "-".into(),
        }
    }

    /// The report line: name, value, unit, target, verdict.
    pub fn line(&self) -> String {
        let line = format!(
            "{:<34} {:>12} {:<8} {:<12} {}",
            self.name,
            number(self.value),
            self.unit,
            self.target_text(),
            self.verdict()
        );
        let line = match self.cores {
            Some(c) => format!("{line:<76} (cpu {c:.2} cores)"),
            None => line,
        };
        match &self.note {
            Some(note) => format!("{line} [{note}]"),
            None => line,
        }
    }
}

/// Prints the column header.
pub fn print_header() {
    println!(
        "{:<34} {:>12} {:<8} {:<12} result",
        "figure", "value", "unit", "target"
    );
}

/// Prints one figure at once (so a slow section still shows what it has).
pub fn emit(figure: Figure, all: &mut Vec<Figure>) {
    println!("{}", figure.line());
    all.push(figure);
}

/// A number printed with sensible precision: integers above 100, three significant digits below.
pub fn number(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// Latency samples, summarised by percentiles.
#[derive(Debug, Default)]
pub struct Samples(Vec<Duration>);

impl Samples {
    /// Empty set of samples.
    pub fn with_capacity(n: usize) -> Self {
        Self(Vec::with_capacity(n))
    }

    /// Adds one sample.
    pub fn push(&mut self, d: Duration) {
        self.0.push(d);
    }

    /// How many samples.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `p`-th percentile (0..=100, nearest rank) in milliseconds; 0 when there are none.
    pub fn percentile_ms(&self, p: f64) -> f64 {
        if self.0.is_empty() {
            return 0.0;
        }
        let mut sorted = self.0.clone();
        sorted.sort_unstable();
        let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
        let index = rank.clamp(1, sorted.len()) - 1;
        sorted[index].as_secs_f64() * 1e3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank() {
        let mut s = Samples::default();
        for ms in 1..=100 {
            s.push(Duration::from_millis(ms));
        }
        assert_eq!(s.percentile_ms(50.0), 50.0);
        assert_eq!(s.percentile_ms(99.0), 99.0);
        assert_eq!(Samples::default().percentile_ms(50.0), 0.0);
    }

    #[test]
    fn verdicts_follow_targets() {
        assert_eq!(
            Figure::new("a", 5.0, "x", Target::AtLeast(5.0)).verdict(),
            "PASS"
        );
        assert_eq!(
            Figure::new("a", 4.0, "x", Target::AtLeast(5.0)).verdict(),
            "MISS"
        );
        assert_eq!(
            Figure::new("a", 5.0, "x", Target::Below(5.0)).verdict(),
            "MISS"
        );
        assert_eq!(Figure::info("a", 5.0, "x").verdict(), "-");
    }
}
