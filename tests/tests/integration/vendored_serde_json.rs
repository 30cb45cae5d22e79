//! The workspace builds serde_json from `vendor/serde_json`, whose `Map` is a vector sorted by
//! key instead of upstream's `BTreeMap` (see `vendor/README.md`). These tests hold it, through
//! serde_json's public API only, to what upstream's map does: the same contents after any
//! sequence of operations, the same iteration order, hence the same JSON text.

use std::collections::BTreeMap;

use rstest::rstest;
use serde_json::{json, Map, Value};

/// A deterministic stream of small numbers (xorshift), so that each seed is a different order.
fn numbers(seed: u64, n: usize, range: u64) -> Vec<u64> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % range
        })
        .collect()
}

/// Keys that exercise the byte order: prefixes, digits before letters, upper before lower,
/// different lengths, non-ASCII.
fn key(n: u64) -> String {
    const STEMS: [&str; 8] = ["a", "ab", "B", "b", "z", "é", "10", "1"];
    format!("{}{}", STEMS[(n % 8) as usize], n / 8)
}

fn same(ours: &Map<String, Value>, theirs: &BTreeMap<String, Value>) {
    assert!(
        ours.iter().eq(theirs.iter()),
        "{ours:?} != {theirs:?} (contents or order)"
    );
    assert_eq!(ours.len(), theirs.len());
    assert!(ours.keys().eq(theirs.keys()));
    assert!(ours.values().rev().eq(theirs.values().rev()));
    // The `Value` index looks keys up by its own path (`get_str`, `get_str_mut`): whatever
    // built or changed the map, every key is found (and a near miss is not).
    let mut value = Value::Object(ours.clone());
    for (k, v) in theirs {
        assert_eq!(
            value.get(k.as_str()),
            Some(v),
            "{k:?} not found by the index"
        );
        let missing = format!("{k}~");
        assert_eq!(value.get(missing.as_str()), None, "{missing:?} found");
    }
    if let Some((k, v)) = theirs.iter().next() {
        assert_eq!(value.get_mut(k.as_str()), Some(&mut v.clone()));
    }
}

#[rstest]
#[case::small(12)]
#[case::around_the_scan_limit(40)]
#[case::large(400)]
fn every_operation_leaves_what_a_btree_map_leaves(#[case] range: u64) {
    for seed in 1..40u64 {
        let mut ours = Map::new();
        let mut theirs: BTreeMap<String, Value> = BTreeMap::new();
        for (i, n) in numbers(seed, 300, range).into_iter().enumerate() {
            let k = key(n);
            let v = json!(i);
            match i % 7 {
                0..=2 => assert_eq!(ours.insert(k.clone(), v.clone()), theirs.insert(k, v)),
                3 => assert_eq!(ours.remove(&k), theirs.remove(&k)),
                4 => {
                    let a = ours.entry(k.clone()).or_insert(v.clone()).clone();
                    let b = theirs.entry(k).or_insert(v).clone();
                    assert_eq!(a, b);
                }
                5 => {
                    if let serde_json::map::Entry::Occupied(e) = ours.entry(k.clone()) {
                        assert_eq!(Some(e.remove_entry()), theirs.remove_entry(&k));
                    } else {
                        assert!(!theirs.contains_key(&k));
                    }
                }
                _ => {
                    assert_eq!(ours.get(&k), theirs.get(&k));
                    assert_eq!(ours.contains_key(&k), theirs.contains_key(&k));
                    if let (Some(a), Some(b)) = (ours.get_mut(&k), theirs.get_mut(&k)) {
                        *a = json!("changed");
                        *b = json!("changed");
                    }
                }
            }
            same(&ours, &theirs);
        }
        ours.retain(|k, _| !k.ends_with('3'));
        theirs.retain(|k, _| !k.ends_with('3'));
        same(&ours, &theirs);
        for (_, v) in ours.iter_mut() {
            *v = json!([v.clone()]);
        }
        for v in theirs.values_mut() {
            *v = json!([v.clone()]);
        }
        same(&ours, &theirs);
        assert!(ours.clone().into_iter().eq(theirs.clone()));
        assert!(ours.into_values().eq(theirs.into_values()));
    }
}

/// A clone shares its map's entries until either changes (copy on write): whatever is done to the
/// map afterwards, every clone taken along the way still holds what the map held then, and what
/// is done to a clone leaves the map alone.
#[rstest]
#[case::small(12)]
#[case::around_the_scan_limit(40)]
#[case::large(400)]
fn clones_keep_what_the_map_held_when_they_were_taken(#[case] range: u64) {
    for seed in 1..20u64 {
        let mut ours = Map::new();
        let mut theirs: BTreeMap<String, Value> = BTreeMap::new();
        let mut taken: Vec<(Map<String, Value>, BTreeMap<String, Value>)> = Vec::new();
        for (i, n) in numbers(seed, 200, range).into_iter().enumerate() {
            let k = key(n);
            if i % 9 == 0 {
                let clone = ours.clone();
                assert!(clone.shares_entries(&ours) || ours.is_empty());
                // Shared both ways while neither changes (a map without entries of its own
                // shares nothing).
                assert_eq!(clone.is_shared(), ours.entries_id().is_some());
                assert_eq!(ours.is_shared(), clone.is_shared());
                taken.push((clone, theirs.clone()));
            }
            match i % 6 {
                0..=2 => assert_eq!(ours.insert(k.clone(), json!(i)), theirs.insert(k, json!(i))),
                3 => assert_eq!(ours.remove(&k), theirs.remove(&k)),
                4 => {
                    if let (Some(a), Some(b)) = (ours.get_mut(&k), theirs.get_mut(&k)) {
                        *a = json!({"changed": i});
                        *b = json!({"changed": i});
                    }
                }
                _ => {
                    // A change to the newest clone, not the map.
                    if let Some((clone, snapshot)) = taken.last_mut() {
                        clone.insert(k.clone(), json!("in the clone"));
                        snapshot.insert(k, json!("in the clone"));
                    }
                }
            }
            same(&ours, &theirs);
        }
        for (clone, snapshot) in &taken {
            same(clone, snapshot);
            assert_eq!(clone == &ours, snapshot == &theirs);
        }
        // The map is shared exactly while a clone that has not changed since is alive.
        let sharers = taken.iter().any(|(c, _)| c.shares_entries(&ours));
        assert_eq!(ours.is_shared(), sharers);
        taken.retain(|(c, _)| !c.shares_entries(&ours));
        assert!(!ours.is_shared());
        // Moving out of a shared map copies; the other owner keeps its entries.
        if let Some((clone, snapshot)) = taken.pop() {
            let kept = clone.clone();
            assert!(clone.into_iter().eq(snapshot.clone()));
            same(&kept, &snapshot);
            let mut retained = kept.clone();
            retained.retain(|k, _| k.len() > 2);
            same(&kept, &snapshot);
        }
    }
}

/// A clone of a tree shares every map; a change deep in the clone copies the maps on its path
/// and no others, and the original reads as before.
#[test]
fn a_change_deep_in_a_clone_copies_only_its_path() {
    let original = json!({
        "metadata": {"name": "a", "annotations": {"x": "1"}},
        "spec": {"containers": [{"name": "c", "env": {"A": "1"}}]},
        "status": {"phase": "Running"},
    });
    let mut clone = original.clone();
    let maps = |v: &Value, path: &str| v.pointer(path).and_then(Value::as_object).cloned();
    let shared = |a: &Value, b: &Value, path: &str| {
        maps(a, path)
            .zip(maps(b, path))
            .is_some_and(|(x, y)| x.shares_entries(&y))
    };
    assert!(shared(&original, &clone, ""));
    clone["metadata"]["annotations"]["x"] = json!("2");
    assert_eq!(original["metadata"]["annotations"]["x"], json!("1"));
    assert_eq!(clone["metadata"]["annotations"]["x"], json!("2"));
    for path in ["", "/metadata", "/metadata/annotations"] {
        assert!(!shared(&original, &clone, path), "{path} still shared");
    }
    for path in ["/spec", "/status", "/spec/containers/0/env"] {
        assert!(shared(&original, &clone, path), "{path} copied");
    }
    assert_ne!(original, clone);
    clone["metadata"]["annotations"]["x"] = json!("1");
    assert_eq!(original, clone);
}

/// A map's identity is that of the entries it holds: its clones have it until they change, a
/// changed clone has another, an empty map has none; and large maps (a tree) have one too.
#[test]
fn a_maps_identity_follows_its_entries() {
    let id = |v: &Value| v.as_object().and_then(serde_json::Map::entries_id);
    let original = json!({"a": {"b": 1}, "empty": {}});
    let mut clone = original.clone();
    assert_eq!(id(&original), id(&clone));
    assert!(id(&original).is_some());
    assert_eq!(id(&original["empty"]), None);
    clone["x"] = json!(1);
    assert_ne!(id(&original), id(&clone));
    assert_eq!(id(&original["a"]), id(&clone["a"]));
    let large: serde_json::Map<String, Value> =
        (0..1000).map(|i| (format!("k{i}"), json!(i))).collect();
    let large = Value::Object(large);
    let mut large_clone = large.clone();
    assert_eq!(id(&large), id(&large_clone));
    large_clone["k1"] = json!("changed");
    assert_ne!(id(&large), id(&large_clone));
}

/// Clones dropped on other threads while the original changes: the count is shared across
/// threads, and every thread reads what it was given.
#[test]
fn clones_on_other_threads_read_and_drop_their_own() {
    let mut original = json!({"a": {"b": {"c": [1, 2, 3]}}, "d": "e"});
    let expected = original.clone();
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let mut mine = original.clone();
            let expected = expected.clone();
            std::thread::spawn(move || {
                for j in 0..200 {
                    let copy = mine.clone();
                    if j % 2 == 0 {
                        mine["a"]["b"]["thread"] = json!(i);
                        mine["a"]["b"].as_object_mut().unwrap().remove("thread");
                    }
                    assert_eq!(copy, expected);
                }
                assert_eq!(mine, expected);
            })
        })
        .collect();
    for j in 0..200 {
        original["a"]["n"] = json!(j);
    }
    for handle in handles {
        handle.join().unwrap();
    }
    assert_eq!(original["a"]["n"], json!(199));
    assert_eq!(original["a"]["b"], expected["a"]["b"]);
}

#[rstest]
#[case::no_repeats(10, 1000)]
#[case::repeats(60, 20)]
#[case::large(2000, 500)]
fn collecting_and_appending_keep_the_last_value(#[case] n: usize, #[case] range: u64) {
    for seed in 1..20u64 {
        let pairs: Vec<(String, Value)> = numbers(seed, n, range)
            .into_iter()
            .enumerate()
            .map(|(i, k)| (key(k), json!(i)))
            .collect();
        let ours: Map<String, Value> = pairs.iter().cloned().collect();
        let theirs: BTreeMap<String, Value> = pairs.iter().cloned().collect();
        same(&ours, &theirs);
        let mut extended = Map::new();
        extended.extend(pairs.iter().cloned());
        same(&extended, &theirs);

        let (front, back) = pairs.split_at(n / 2);
        let mut a: Map<String, Value> = front.iter().cloned().collect();
        let mut b: Map<String, Value> = back.iter().cloned().collect();
        let mut c: BTreeMap<String, Value> = front.iter().cloned().collect();
        let mut d: BTreeMap<String, Value> = back.iter().cloned().collect();
        a.append(&mut b);
        c.append(&mut d);
        same(&a, &c);
        assert!(b.is_empty());
        let mut empty = Map::new();
        empty.append(&mut a);
        same(&empty, &c);
        assert!(a.is_empty());
    }
}

#[test]
fn a_value_is_as_small_as_upstream() {
    // A large map is boxed so that the map is no larger than its vector: memory per stored
    // object (and every move of a `Value`) stays upstream's.
    assert_eq!(std::mem::size_of::<Value>(), 32);
    assert_eq!(std::mem::size_of::<Map<String, Value>>(), 24);
}

#[test]
fn text_and_values_read_and_write_as_upstream() {
    // Keys in document order that is not key order, a repeated key (the last wins), nesting.
    let text = r#"{"zeta":1,"alpha":{"b":2,"a":[{"y":1,"x":2}]},"Beta":null,"alpha2":3,"zeta":4}"#;
    let value: Value = serde_json::from_str(text).unwrap();
    assert_eq!(
        serde_json::to_string(&value).unwrap(),
        r#"{"Beta":null,"alpha":{"a":[{"x":2,"y":1}],"b":2},"alpha2":3,"zeta":4}"#
    );
    assert_eq!(value["alpha"]["a"][0]["y"], json!(1));
    assert_eq!(value.pointer("/alpha/b"), Some(&json!(2)));
    // Pointer tokens: `~1` is `/`, `~0` is `~`, in that order (`~01` is `~1`); indexes have no
    // sign or leading zero.
    let mut escaped = json!({"a/b": {"m~n": [10, 11]}, "~1": 1, "": {"": 2}});
    assert_eq!(escaped.pointer("/a~1b/m~0n/1"), Some(&json!(11)));
    assert_eq!(escaped.pointer("/~01"), Some(&json!(1)));
    assert_eq!(escaped.pointer("//"), Some(&json!(2)));
    assert_eq!(escaped.pointer("/a~1b/m~0n/01"), None);
    assert_eq!(escaped.pointer("/a~1b/m~0n/+1"), None);
    assert_eq!(escaped.pointer("/a/b"), None);
    assert_eq!(escaped.pointer("a~1b"), None);
    // The empty pointer is the whole value; `/` names the empty key; a trailing `/` one more
    // (empty) token; a `~` in any token of several is unescaped.
    assert_eq!(escaped.pointer(""), Some(&escaped.clone()));
    assert_eq!(escaped.pointer("/"), Some(&json!({"": 2})));
    assert_eq!(escaped.pointer("/a~1b/m~0n/"), None);
    assert_eq!(escaped.pointer("/a~1b/"), None);
    assert_eq!(escaped.pointer("/a~1b/m~0n"), Some(&json!([10, 11])));
    assert_eq!(escaped.pointer_mut("///"), None);
    *escaped.pointer_mut("/a~1b/m~0n/0").unwrap() = json!("x");
    assert_eq!(escaped["a/b"]["m~n"][0], "x");
    assert_eq!(value["missing"], Value::Null);
    let map = value.as_object().unwrap();
    assert_eq!(
        format!("{map:?}"),
        format!("{:?}", map.iter().collect::<BTreeMap<_, _>>())
    );
    // Equality does not depend on the order entries were added in.
    let mut a = Map::new();
    a.insert("x".into(), json!(1));
    a.insert("a".into(), json!(2));
    let b: Map<String, Value> = [("a".into(), json!(2)), ("x".into(), json!(1))]
        .into_iter()
        .collect();
    assert_eq!(a, b);
    use std::hash::{BuildHasher, RandomState};
    let hasher = RandomState::new();
    assert_eq!(
        hasher.hash_one(Value::Object(a)),
        hasher.hash_one(Value::Object(b))
    );
}

/// Strings of every length up to past the short comparison's limit, and each with one byte
/// changed: the vendored `Value` compares short strings and keys without `memcmp`.
fn strings_and_near_misses() -> Vec<String> {
    let mut all = Vec::new();
    for n in 0..40usize {
        let s: String = (0..n).map(|i| (b'a' + (i % 26) as u8) as char).collect();
        for i in 0..n {
            for c in ['Z', '\0', '\u{7f}', 'é'] {
                let mut near: Vec<char> = s.chars().collect();
                near[i] = c;
                all.push(near.into_iter().collect());
            }
        }
        // A string and the same continued by a zero byte, which read alike in a padded word.
        all.push(format!("{s}\0"));
        all.push(s);
    }
    all
}

/// Maps built from those strings, by `insert` in a scrambled order and by `collect`, list them
/// in `BTreeMap`'s order (small maps compare keys of up to eight bytes without `memcmp`).
#[test]
fn keys_of_every_length_are_ordered_as_a_btree_map_orders_them() {
    let strings = strings_and_near_misses();
    let small = [
        (10, 0),
        (30, 7),
        (32, 40),
        (32, 100),
        (32, 130),
        (32, 200),
        (32, 500),
        (32, 1000),
    ];
    for (window, offset) in small.into_iter().chain([(33, 250), (300, 3)]) {
        let keys: Vec<&String> = strings.iter().skip(offset).take(window).collect();
        let order = numbers(offset as u64 + 1, keys.len() * 2, keys.len() as u64);
        let mut inserted = Map::new();
        let mut theirs = BTreeMap::new();
        for (i, &k) in order.iter().enumerate() {
            inserted.insert(keys[k as usize].clone(), json!(i));
            theirs.insert(keys[k as usize].clone(), json!(i));
        }
        same(&inserted, &theirs);
        let collected: Map<String, Value> = order
            .iter()
            .enumerate()
            .map(|(i, &k)| (keys[k as usize].clone(), json!(i)))
            .collect();
        same(&collected, &theirs);
        for (k, v) in &theirs {
            assert_eq!(inserted.get(k.as_str()), Some(v));
            assert_eq!(Value::Object(inserted.clone())[k.as_str()], *v);
        }
    }
}

#[test]
fn equality_and_lookups_agree_with_the_text_on_strings_of_every_length() {
    let strings = strings_and_near_misses();
    // Two values are equal exactly when their texts are (keys are written in order).
    for a in strings.iter().step_by(13) {
        for b in &strings {
            let same_text = a == b;
            assert_eq!(json!(a) == json!(b), same_text, "{a:?} vs {b:?}");
            assert_eq!(
                json!({ a: 1 }) == json!({ b: 1 }),
                same_text,
                "keys {a:?} vs {b:?}"
            );
            assert_eq!(json!(a) == b.as_str(), same_text);
            assert_eq!(json!([{ "k": a }]) == json!([{ "k": b }]), same_text);
        }
        // A map holding all the strings finds each by `str` index, and nothing else.
        let map: Map<String, Value> = strings
            .iter()
            .take(30)
            .map(|s| (s.clone(), json!(s.len())))
            .collect();
        let value = Value::Object(map);
        let held = strings.iter().take(30).any(|s| s == a);
        assert_eq!(value.get(a.as_str()).is_some(), held, "{a:?}");
        if held {
            assert_eq!(value[a.as_str()], json!(a.len()));
        }
    }
}

/// The short comparisons the workspace calls directly (`serde_json::short_bytes`) answer as
/// `==` and `cmp` do on strings of every length, the empty one (a dangling pointer) included.
#[test]
fn short_comparisons_agree_with_eq_and_cmp() {
    use serde_json::short_bytes::{cmp_bytes, eq_bytes};
    let mut strings = strings_and_near_misses();
    strings.push(String::new());
    // Long shared prefixes, ending and differing at every byte from the seventh to the
    // fortieth (around and past the first word the comparison reads), with zero bytes that a
    // zero-padded word reads as nothing.
    let base = "terminationMessagePolicyAndSomeMoreBytes";
    for len in 7..=base.len() {
        let prefix = &base[..len];
        strings.push(prefix.to_string());
        for tail in ["\0", "\0a", "a", "Z", "\u{7f}", "é"] {
            strings.push(format!("{prefix}{tail}"));
        }
        let mut changed = prefix.as_bytes().to_vec();
        changed[len - 1] = b'A';
        strings.push(String::from_utf8(changed).unwrap());
    }
    let long: Vec<String> = strings.iter().filter(|s| s.len() >= 7).cloned().collect();
    for a in &long {
        for b in &long {
            assert_eq!(
                cmp_bytes(a.as_bytes(), b.as_bytes()),
                a.cmp(b),
                "{a:?} vs {b:?}"
            );
        }
    }
    for a in strings.iter().step_by(7) {
        for b in &strings {
            assert_eq!(
                eq_bytes(a.as_bytes(), b.as_bytes()),
                a == b,
                "{a:?} vs {b:?}"
            );
            assert_eq!(
                cmp_bytes(a.as_bytes(), b.as_bytes()),
                a.cmp(b),
                "{a:?} vs {b:?}"
            );
        }
    }
}

/// Lookups by a `str` key (the `Value` index, `get`, `get_mut`) scan a short vector and halve a
/// longer one: in maps of every size a small map can have, and just past it, each key held is
/// found with its value and each near miss (a key of the same length, a prefix, a longer key)
/// is not.
#[rstest]
fn lookups_find_every_key_in_maps_of_every_size(#[values(1, 2, 3)] seed: u64) {
    for size in 0..=34usize {
        let keys: Vec<String> = numbers(seed * 100 + size as u64, size * 3, 200)
            .into_iter()
            .map(key)
            .collect();
        let theirs: BTreeMap<String, Value> = keys
            .iter()
            .take(size)
            .enumerate()
            .map(|(i, k)| (k.clone(), json!(i)))
            .collect();
        let mut value = Value::Object(theirs.clone().into_iter().collect());
        let mut probes: Vec<String> = keys.clone();
        for k in &theirs {
            probes.push(format!("{}x", k.0));
            probes.push(k.0[..k.0.len() - 1].to_string());
            probes.push(k.0.replace('a', "c"));
        }
        for probe in &probes {
            let expected = theirs.get(probe);
            assert_eq!(value.get(probe.as_str()), expected, "{size}: {probe:?}");
            assert_eq!(
                value.as_object().unwrap().get(probe.as_str()),
                expected,
                "{size}: {probe:?}"
            );
            assert_eq!(
                value.get_mut(probe.as_str()).map(|v| v.clone()),
                expected.cloned(),
                "{size}: {probe:?}"
            );
        }
    }
}
