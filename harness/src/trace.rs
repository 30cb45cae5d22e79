//! What a run did, step by step: the record every report, replay check, shrink and timeline
//! ([`crate::show`]) is made from.
//!
//! A step is one decision of the schedule and what followed from it until the system was idle
//! again. Each step belongs to a *lane*: the actor that moved (a controller process, a watch of
//! a process, the API server, the world, the clock).

use serde::{Deserialize, Serialize};

/// One step of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// Virtual time of the step, in milliseconds since the run started.
    pub at_ms: u64,
    /// The actor that moved: `eno` (a process's request), `eno/watch pods` (a watch of a
    /// process), `world/kubelet`, `clock`, `faults`.
    pub lane: String,
    /// What the schedule chose, e.g. `PATCH /apis/eno.azure.io/v1/.../status`.
    pub action: String,
    /// What came of it, e.g. `200` or `injected 409`.
    pub outcome: String,
}

impl Step {
    /// The step as one line of text.
    pub fn line(&self) -> String {
        format!(
            "{:>9} [{}] {}: {}",
            format_ms(self.at_ms),
            self.lane,
            self.action,
            self.outcome
        )
    }
}

/// `12.345s` for 12345.
pub fn format_ms(ms: u64) -> String {
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}

/// What one run did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    /// One entry per step.
    pub trace: Vec<Step>,
    /// The decisions taken, enough to replay the run exactly.
    pub choices: Vec<usize>,
    /// The invariant violation that ended the run, if any.
    pub violation: Option<String>,
}

impl Run {
    /// The trace as text, one numbered step per line, the violation last.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (i, step) in self.trace.iter().enumerate() {
            out.push_str(&format!("{i:>4} {}\n", step.line()));
        }
        if let Some(v) = &self.violation {
            out.push_str(&format!("VIOLATION: {v}\n"));
        }
        out
    }

    /// A stable hash of the trace (FNV-1a over the rendered text): two runs with the same hash
    /// did the same thing, step for step.
    pub fn hash(&self) -> u64 {
        fnv1a(self.render().as_bytes())
    }
}

/// 64-bit FNV-1a: tiny, stable across platforms and releases (unlike `DefaultHasher`).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_steps_and_violation_and_hashes_stably() {
        let run = Run {
            trace: vec![Step {
                at_ms: 1500,
                lane: "eno".into(),
                action: "GET /api/v1/pods".into(),
                outcome: "200".into(),
            }],
            choices: vec![0],
            violation: Some("two pods".into()),
        };
        assert_eq!(
            run.render(),
            "   0    1.500s [eno] GET /api/v1/pods: 200\nVIOLATION: two pods\n"
        );
        assert_eq!(run.hash(), run.clone().hash());
        let mut other = run.clone();
        other.trace[0].outcome = "409".into();
        assert_ne!(run.hash(), other.hash());
    }
}
