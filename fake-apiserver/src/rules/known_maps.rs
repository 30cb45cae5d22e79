//! Maps this thread found to pass a check that depends on nothing but the map, kept by
//! identity, so that a map sharing their entries is not checked again.
//!
//! Objects created from the same body (a ReplicaSet's pods, a test's or a harness's objects)
//! share most of their maps with the decode of the body before them (copy on write: see
//! `http::created_bodies`); only the maps that admission and defaulting touched are new. A map
//! that shares its entries with a kept map holds the same members, so a check whose answer is a
//! function of the map alone (whether it reads as Go writes its struct; whether its resource
//! quantities are valid) answers as it did.
//!
//! Each kept map is a clone: its entries stay alive and unchanged (a change through any of its
//! sharers copies them first), so a kept identity is never another map's. The table is small
//! and two-way set-associative: a map and its check pick a set of two slots; a newer map takes
//! the slot of the one used less recently, and at most [`SLOTS`] maps' subtrees are kept alive
//! per thread. (Direct-mapped, two maps a create checks every time could take one slot in turn
//! and neither be found: which ones did depended on where the allocator put their entries, and
//! the server's CREATE measured 253k–263k instructions across builds of the same checks.)

use std::cell::RefCell;

use serde_json::{Map, Value};

/// How many maps a thread keeps (a power of two).
const SLOTS: usize = 512;

/// How many slots a map may take: the slots of a set.
const WAYS: usize = 2;

/// How many sets of [`WAYS`] slots the table has.
const SETS: usize = SLOTS / WAYS;

/// The check a kept map passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// Encoding it as the Go struct of this shape index (`go_encoding::shapes::STRUCTS`)
    /// changes nothing.
    GoStruct(u16),
    /// `ValidateContainerResourceRequirements` finds nothing in it.
    ContainerResources,
    /// `ValidateTolerations` finds nothing in it (one toleration).
    Toleration,
    /// `ValidateEnv` finds nothing in it (one variable).
    EnvVar,
    /// `validateProjectedVolumeSource` finds nothing in it (a volume's `projected`).
    ProjectedVolume,
}

/// A kept map and the check it passed.
struct Kept {
    check: Check,
    map: Map<String, Value>,
}

/// One set: its slots, and which of them was used last (found or filled).
#[derive(Default)]
struct Set {
    ways: [Option<Kept>; WAYS],
    last_used: usize,
}

impl Set {
    /// The way holding the map whose entries `map` shares, kept for `check`.
    fn way_of(&self, check: Check, map: &Map<String, Value>) -> Option<usize> {
        self.ways.iter().position(|way| {
            way.as_ref()
                .is_some_and(|k| k.check == check && k.map.shares_entries(map))
        })
    }

    /// Keeps `kept` in an empty way, or in place of the one used less recently.
    fn keep(&mut self, kept: Kept) {
        let way = self
            .ways
            .iter()
            .position(Option::is_none)
            .unwrap_or((self.last_used + 1) % WAYS);
        self.ways[way] = Some(kept);
        self.last_used = way;
    }
}

thread_local! {
    /// The table, made on the thread's first [`keep`] (a thread that keeps nothing, and the
    /// thread-local image every thread starts from, hold no slots).
    static KEPT: RefCell<Option<Box<[Set]>>> = const { RefCell::new(None) };
}

impl Check {
    /// A number of its own for each check.
    fn code(self) -> u64 {
        match self {
            Check::GoStruct(shape) => u64::from(shape),
            Check::ContainerResources => 1 << 16,
            Check::Toleration => (1 << 16) + 1,
            Check::EnvVar => (1 << 16) + 2,
            Check::ProjectedVolume => (1 << 16) + 3,
        }
    }
}

/// The set of the map whose entries are at `id` kept for `check` (Fibonacci hashing of both:
/// one map passes several checks, the Go encoding's among them, and each must find its own).
fn set(id: usize, check: Check) -> usize {
    const BITS: u32 = SETS.trailing_zeros();
    let key = (id as u64 >> 4) ^ check.code().wrapping_mul(0xD6E8_FEB8_6659_FD93);
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - BITS)) as usize
}

/// Whether `map` shares its entries with a map kept as passing `check` (a found map counts as
/// used).
pub(crate) fn known(check: Check, map: &Map<String, Value>) -> bool {
    let Some(id) = map.entries_id() else {
        return false;
    };
    KEPT.try_with(|kept| {
        let mut kept = kept.borrow_mut();
        let Some(set) = kept.as_mut().map(|table| &mut table[set(id, check)]) else {
            return false;
        };
        match set.way_of(check, map) {
            Some(way) => {
                set.last_used = way;
                true
            }
            None => false,
        }
    })
    .unwrap_or(false)
}

/// Keeps `map`, found to pass `check`, when another map shares its entries already (the
/// decode of the body before, the stored version's parse): only such a map can be met again,
/// and keeping one adds no copy. Keeping a map of the write's own would make its next change
/// (the store setting `resourceVersion` in `metadata`) copy it.
pub(crate) fn keep(check: Check, map: &Map<String, Value>) {
    let Some(id) = map.entries_id().filter(|_| map.is_shared()) else {
        return;
    };
    // A thread being torn down keeps nothing.
    let _ = KEPT.try_with(|kept| {
        let mut kept = kept.borrow_mut();
        let table = kept.get_or_insert_with(|| (0..SETS).map(|_| Set::default()).collect());
        table[set(id, check)].keep(Kept {
            check,
            map: map.clone(),
        });
    });
}

/// Whether `map` passes `check` (`passes` runs it): skipped for a map sharing a kept map's
/// entries, and the map kept when it passes. Debug builds run the check on every hit too.
pub(crate) fn passes(
    check: Check,
    map: &Map<String, Value>,
    mut passes: impl FnMut(&Map<String, Value>) -> bool,
) -> bool {
    if known(check, map) {
        debug_assert!(passes(map), "a kept map passes");
        return true;
    }
    let passed = passes(map);
    if passed {
        keep(check, map);
    }
    passed
}

/// The causes `check` finds in `value` (`causes` finds them), as [`passes`]: none for a map
/// sharing a kept map's entries, and the map kept when there are none.
pub(crate) fn causes<C>(check: Check, value: &Value, causes: impl Fn() -> Vec<C>) -> Vec<C> {
    let Some(map) = value.as_object() else {
        return causes();
    };
    let mut found = Vec::new();
    passes(check, map, |_| {
        found = causes();
        found.is_empty()
    });
    found
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const CHECK: Check = Check::GoStruct(7);

    #[test]
    fn a_kept_map_is_known_to_its_sharers_for_its_check_only() {
        let value = json!({"name": "c", "image": "i"});
        let map = value.as_object().unwrap();
        // A map of its own is not kept.
        keep(CHECK, map);
        assert!(!known(CHECK, map));
        // One shared with another (a decode, a stored version's parse) is.
        let other = value.clone();
        keep(CHECK, map);
        assert!(known(CHECK, map));
        // A clone shares the entries; another check is another question.
        assert!(known(CHECK, &map.clone()));
        assert!(!known(Check::GoStruct(8), map));
        assert!(!known(Check::ContainerResources, map));
        // An equal map of its own, or the clone once changed, is not known.
        let equal = json!({"name": "c", "image": "i"});
        assert!(!known(CHECK, equal.as_object().unwrap()));
        let mut changed = map.clone();
        changed.insert("image".into(), json!("j"));
        assert!(!known(CHECK, &changed));
        // An empty map has no identity: never kept, never known.
        let empty = Map::new();
        keep(CHECK, &empty);
        assert!(!known(CHECK, &empty));
        drop(other);
    }

    #[test]
    fn a_check_that_finds_causes_is_run_again_and_one_that_passes_is_kept() {
        let bad = json!({"name": ""});
        let other = bad.clone();
        let found = || vec!["name: Required value"];
        assert_eq!(causes(Check::EnvVar, &bad, found), found());
        assert!(!known(Check::EnvVar, bad.as_object().unwrap()));
        assert_eq!(causes(Check::EnvVar, &bad, found), found());
        let good = json!({"name": "A"});
        let shared = good.clone();
        assert!(causes(Check::EnvVar, &good, Vec::<&str>::new).is_empty());
        assert!(known(Check::EnvVar, shared.as_object().unwrap()));
        // Not a map: checked every time, nothing kept.
        assert_eq!(causes(Check::EnvVar, &json!(5), found), found());
        drop(other);
    }

    #[test]
    fn one_map_kept_for_two_checks_is_known_for_both() {
        let value = json!({"key": "k", "operator": "Exists"});
        let other = value.clone();
        let map = value.as_object().unwrap();
        // Two checks whose sets differ for this map (sets may fill: the table is small).
        let id = map.entries_id().unwrap();
        let shape = (0..u16::MAX)
            .find(|&i| set(id, Check::GoStruct(i)) != set(id, Check::Toleration))
            .unwrap();
        keep(Check::Toleration, map);
        keep(Check::GoStruct(shape), map);
        assert!(known(Check::Toleration, map));
        assert!(known(Check::GoStruct(shape), map));
        drop(other);
    }

    /// Two maps of one set are both kept; a third takes the slot of the one found less
    /// recently.
    #[test]
    fn a_set_keeps_the_two_maps_used_last() {
        let values: Vec<Value> = (0..4000).map(|i| json!({ "n": i })).collect();
        let sharers: Vec<Value> = values.clone();
        let set_of = |v: &Value| set(v.as_object().unwrap().entries_id().unwrap(), CHECK);
        // Three maps of one set, none kept before on this thread's table.
        let first = &values[0];
        let same: Vec<&Value> = values[1..]
            .iter()
            .filter(|v| set_of(v) == set_of(first))
            .take(2)
            .collect();
        let [second, third] = same[..] else {
            panic!("4000 maps fill every one of {SETS} sets");
        };
        let map = |v: &Value| v.as_object().unwrap().clone();
        keep(CHECK, &map(first));
        keep(CHECK, &map(second));
        assert!(known(CHECK, &map(first)) && known(CHECK, &map(second)));
        // `first` was found last: `third` pushes `second` out.
        assert!(known(CHECK, &map(first)));
        keep(CHECK, &map(third));
        assert!(known(CHECK, &map(first)));
        assert!(known(CHECK, &map(third)));
        assert!(!known(CHECK, &map(second)));
        drop(sharers);
    }

    #[test]
    fn a_kept_map_stays_as_it_was_while_its_sharer_changes() {
        let mut value = json!({"name": "c"});
        let other = value.clone();
        keep(CHECK, value.as_object().unwrap());
        drop(other);
        let before = value.as_object().unwrap().entries_id();
        // The kept clone is the entries' other owner: a change copies them.
        value["name"] = json!("d");
        assert_ne!(value.as_object().unwrap().entries_id(), before);
        assert!(!known(CHECK, value.as_object().unwrap()));
    }
}
