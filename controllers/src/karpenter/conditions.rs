//! Knative "living" condition-set semantics for NodeClaim conditions (spec §2).
//!
//! Reproduced from knative `apis/condition_set.go`:
//! - `set_condition` keeps the old last-transition time only when status, reason, message and
//!   severity are all unchanged; otherwise it stamps `now`. The caller passes `now` from the one
//!   injected clock (upstream used the wall clock here and the injected clock for TTLs, §6.4).
//! - `mark_false(dep)` also sets `Ready=False` with the same reason and message.
//! - `mark_true(dep)` sets `Ready=True` only when every dependent is True; otherwise `Ready` copies
//!   the most recently changed False dependent, else an Unknown one, else Unknown when a dependent
//!   is missing.
//! - Conditions are kept sorted by type.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::types::{condition_types, Condition, NodeClaim};

/// Severity of terminal (happy and dependent) conditions: knative's `ConditionSeverityError` (empty).
const SEVERITY_ERROR: &str = "";
/// Severity of every other condition.
const SEVERITY_INFO: &str = "Info";

/// A happy condition and the conditions it depends on.
#[derive(Debug, Clone, Copy)]
pub struct ConditionSet {
    /// The overall condition (`Ready`).
    pub happy: &'static str,
    /// The terminal conditions `happy` is derived from.
    pub dependents: &'static [&'static str],
}

/// The NodeClaim's living condition set: Ready ← Launched, Registered, Initialized.
pub const NODECLAIM_CONDITIONS: ConditionSet = ConditionSet {
    happy: condition_types::READY,
    dependents: &[
        condition_types::LAUNCHED,
        condition_types::REGISTERED,
        condition_types::INITIALIZED,
    ],
};

/// A time as `metav1.Time` stores it: whole seconds.
pub fn to_condition_time(now: Timestamp) -> Time {
    Time(Timestamp::from_second(now.as_second()).unwrap_or(now))
}

impl ConditionSet {
    fn is_terminal(&self, t: &str) -> bool {
        t == self.happy || self.dependents.contains(&t)
    }

    fn severity(&self, t: &str) -> &'static str {
        if self.is_terminal(t) {
            SEVERITY_ERROR
        } else {
            SEVERITY_INFO
        }
    }

    /// Sets or updates `new` in `conditions`, keeping the list sorted by type. The old
    /// last-transition time survives only when nothing else changed. Returns whether anything
    /// changed.
    pub fn set_condition(
        &self,
        conditions: &mut Vec<Condition>,
        mut new: Condition,
        now: Timestamp,
    ) -> bool {
        if let Some(old) = conditions.iter().find(|c| c.type_ == new.type_) {
            new.last_transition_time = old.last_transition_time.clone();
            if *old == new {
                return false;
            }
        }
        conditions.retain(|c| c.type_ != new.type_);
        new.last_transition_time = Some(to_condition_time(now));
        conditions.push(new);
        // Sorted for convenience of the consumer, i.e. kubectl.
        conditions.sort_by(|a, b| a.type_.cmp(&b.type_));
        true
    }

    /// Marks `t` True, then derives the happy condition.
    pub fn mark_true(&self, conditions: &mut Vec<Condition>, t: &str, now: Timestamp) {
        self.set_condition(
            conditions,
            Condition {
                type_: t.to_string(),
                status: "True".into(),
                severity: self.severity(t).into(),
                ..Default::default()
            },
            now,
        );
        self.mark_happy(conditions, t, now);
    }

    /// Marks `t` False with `reason` and `message`; a dependent also makes the happy condition False.
    pub fn mark_false(
        &self,
        conditions: &mut Vec<Condition>,
        t: &str,
        reason: &str,
        message: &str,
        now: Timestamp,
    ) {
        let mut types = vec![t];
        if self.dependents.contains(&t) {
            types.push(self.happy);
        }
        for t in types {
            self.set_condition(
                conditions,
                Condition {
                    type_: t.to_string(),
                    status: "False".into(),
                    severity: self.severity(t).into(),
                    reason: reason.into(),
                    message: message.into(),
                    last_transition_time: None,
                },
                now,
            );
        }
    }

    fn mark_happy(&self, conditions: &mut Vec<Condition>, t: &str, now: Timestamp) {
        if let Some(unhappy) = self.find_unhappy_dependent(conditions) {
            // Propagate the unhappy dependent to the happy condition.
            self.set_condition(
                conditions,
                Condition {
                    type_: self.happy.into(),
                    status: unhappy.status,
                    reason: unhappy.reason,
                    message: unhappy.message,
                    severity: self.severity(self.happy).into(),
                    last_transition_time: None,
                },
                now,
            );
        } else if t != self.happy {
            self.set_condition(
                conditions,
                Condition {
                    type_: self.happy.into(),
                    status: "True".into(),
                    severity: self.severity(self.happy).into(),
                    ..Default::default()
                },
                now,
            );
        }
    }

    fn find_unhappy_dependent(&self, conditions: &[Condition]) -> Option<Condition> {
        if self.dependents.is_empty() {
            return None;
        }
        let mut terminal: Vec<&Condition> = conditions
            .iter()
            .filter(|c| c.severity == SEVERITY_ERROR && c.type_ != self.happy)
            .collect();
        // Most recently changed first (stable: ties keep type order).
        terminal.sort_by(|a, b| {
            let ta = a.last_transition_time.as_ref().map(|t| t.0);
            let tb = b.last_transition_time.as_ref().map(|t| t.0);
            tb.cmp(&ta)
        });
        // False conditions trump Unknown.
        if let Some(c) = terminal.iter().find(|c| c.is_false()) {
            return Some((*c).clone());
        }
        if let Some(c) = terminal.iter().find(|c| c.is_unknown()) {
            return Some((*c).clone());
        }
        // Something was not initialized.
        if self.dependents.len() != terminal.len() {
            return Some(Condition {
                status: "Unknown".into(),
                ..Default::default()
            });
        }
        None
    }
}

/// `MarkTrue` on a NodeClaim's conditions. The status is only created when something changes, so
/// an untouched NodeClaim stays equal to its stored copy.
pub fn mark_true(nc: &mut NodeClaim, t: &str, now: Timestamp) {
    update(nc, |c| NODECLAIM_CONDITIONS.mark_true(c, t, now));
}

/// `MarkFalse` on a NodeClaim's conditions.
pub fn mark_false(nc: &mut NodeClaim, t: &str, reason: &str, message: &str, now: Timestamp) {
    update(nc, |c| {
        NODECLAIM_CONDITIONS.mark_false(c, t, reason, message, now)
    });
}

fn update(nc: &mut NodeClaim, f: impl FnOnce(&mut Vec<Condition>)) {
    let mut conditions = nc.conditions().to_vec();
    f(&mut conditions);
    if conditions.as_slice() != nc.conditions() {
        nc.status.get_or_insert_with(Default::default).conditions = conditions;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::SignedDuration;
    use rstest::rstest;

    const L: &str = condition_types::LAUNCHED;
    const R: &str = condition_types::REGISTERED;
    const I: &str = condition_types::INITIALIZED;
    const READY: &str = condition_types::READY;

    fn t0() -> Timestamp {
        Timestamp::from_second(1_704_067_200).unwrap()
    }

    fn at(secs: i64) -> Timestamp {
        t0() + SignedDuration::from_secs(secs)
    }

    fn get<'a>(c: &'a [Condition], t: &str) -> &'a Condition {
        c.iter().find(|x| x.type_ == t).unwrap()
    }

    #[derive(Debug, Clone, Copy)]
    enum Op {
        True(&'static str),
        False(&'static str, &'static str),
    }

    fn apply(c: &mut Vec<Condition>, ops: &[Op], now: Timestamp) {
        for op in ops {
            match *op {
                Op::True(t) => NODECLAIM_CONDITIONS.mark_true(c, t, now),
                Op::False(t, r) => NODECLAIM_CONDITIONS.mark_false(c, t, r, "m", now),
            }
        }
    }

    #[rstest]
    #[case::all_true(&[Op::True(L), Op::True(R), Op::True(I)], "True", "")]
    #[case::one_missing_is_unknown(&[Op::True(L), Op::True(R)], "Unknown", "")]
    #[case::false_dep_wins(&[Op::True(L), Op::False(R, "NodeNotFound"), Op::True(I)], "False", "NodeNotFound")]
    #[case::mark_false_sets_ready(&[Op::False(L, "LaunchFailed")], "False", "LaunchFailed")]
    #[case::true_after_false_recomputes(&[Op::False(L, "LaunchFailed"), Op::True(L)], "Unknown", "")]
    fn ready_is_derived(#[case] ops: &[Op], #[case] status: &str, #[case] reason: &str) {
        let mut c = vec![];
        apply(&mut c, ops, t0());
        let ready = get(&c, READY);
        assert_eq!(ready.status, status);
        assert_eq!(ready.reason, reason);
    }

    #[test]
    fn ready_copies_the_latest_changed_false_dependent() {
        let mut c = vec![];
        NODECLAIM_CONDITIONS.mark_false(&mut c, R, "NodeNotFound", "m", at(0));
        NODECLAIM_CONDITIONS.mark_false(&mut c, I, "NodeNotReady", "m", at(5));
        NODECLAIM_CONDITIONS.mark_true(&mut c, L, at(10));
        assert_eq!(get(&c, READY).reason, "NodeNotReady");
    }

    #[rstest]
    #[case::unchanged_keeps_ltt("NodeNotFound", "m", 0)]
    #[case::new_reason_restamps("MultipleNodesFound", "m", 60)]
    #[case::new_message_restamps("NodeNotFound", "other", 60)]
    fn last_transition_time_rules(
        #[case] reason: &str,
        #[case] message: &str,
        #[case] expect_offset: i64,
    ) {
        let mut c = vec![];
        NODECLAIM_CONDITIONS.mark_false(&mut c, R, "NodeNotFound", "m", at(0));
        NODECLAIM_CONDITIONS.mark_false(&mut c, R, reason, message, at(60));
        assert_eq!(
            get(&c, R).last_transition_time,
            Some(to_condition_time(at(expect_offset)))
        );
    }

    #[test]
    fn unchanged_set_reports_no_change_and_sorts_by_type() {
        let mut c = vec![];
        apply(
            &mut c,
            &[Op::True(R), Op::True(L), Op::False(I, "NodeNotReady")],
            t0(),
        );
        let types: Vec<_> = c.iter().map(|x| x.type_.as_str()).collect();
        assert_eq!(types, vec![I, L, READY, R]);
        let before = c.clone();
        assert!(!NODECLAIM_CONDITIONS.set_condition(&mut c, get(&before, L).clone(), at(99)));
        assert_eq!(c, before);
    }

    #[test]
    fn severity_is_error_for_terminal_and_info_otherwise() {
        let mut c = vec![];
        NODECLAIM_CONDITIONS.mark_false(&mut c, "Drifted", "Drift", "m", t0());
        NODECLAIM_CONDITIONS.mark_true(&mut c, L, t0());
        assert_eq!(get(&c, "Drifted").severity, "Info");
        assert_eq!(get(&c, L).severity, "");
        // A non-dependent does not touch Ready through mark_false.
        assert_eq!(get(&c, READY).status, "Unknown");
    }

    #[test]
    fn transition_time_is_whole_seconds() {
        let now = Timestamp::from_millisecond(1_704_067_200_750).unwrap();
        assert_eq!(to_condition_time(now).0.as_second(), 1_704_067_200);
        assert_eq!(to_condition_time(now).0.subsec_nanosecond(), 0);
    }

    #[test]
    fn nodeclaim_helpers_do_not_create_status_without_a_change() {
        let mut nc = NodeClaim::new("a", Default::default());
        // A non-dependent condition set twice to the same value: first creates, second is a no-op.
        mark_false(&mut nc, "Drifted", "x", "y", t0());
        let once = nc.clone();
        mark_false(&mut nc, "Drifted", "x", "y", at(5));
        assert_eq!(nc, once);
        let mut fresh = NodeClaim::new("b", Default::default());
        update(&mut fresh, |_| {});
        assert!(fresh.status.is_none());
    }
}
