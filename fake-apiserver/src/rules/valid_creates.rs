//! Pods this thread found valid on create, kept so that an alike pod is not checked again.
//!
//! A pod's create runs the pod spec's validation and the pod's warnings: a fifth of the create
//! of the realistic pod. Pods created one after another are mostly alike (a ReplicaSet's, a
//! test's or a harness's pods from one template): after defaulting, two pods from one body
//! differ in their generated name, uid and creation time, and in the name of the service
//! account token volume each create draws (`kube-api-access-` and five random characters). The
//! kind's checks never read the uid or the time, read the name only for generic ephemeral
//! volumes (their claim's name; such pods are not kept), and read the token volume's name only
//! as a name: unique among the volumes, named by the mounts, a valid DNS label (as every drawn
//! name is). So a pod equal to a kept valid one but for those fields, holding this create's
//! token name exactly where the kept pod held its own and nowhere else, passes those checks and
//! gets the same warnings. The metadata checks (the name's) run on every pod all the same.
//!
//! The comparison is exact, never a hash. Where a map of the pod shares its entries with the
//! same map of the kept pod (both from the decode of one repeated body, see
//! `http::created_bodies`) the comparison ends at their identity, so a pod is kept only if no
//! such map holds a token volume's name (otherwise a name there could be either pod's token).
//! Debug builds also run the checks on every pod found alike and assert that they find nothing
//! and the same warnings.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;

use serde_json::short_bytes::eq_bytes;
use serde_json::Value;

use crate::resource::ResourceInfo;
use crate::rules::defaults::API_ACCESS_PREFIX;

/// How many valid pods a thread keeps (the oldest goes first).
const KEPT: usize = 4;

/// One valid pod kept, with its token volume's name and its warnings.
struct Kept {
    /// A copy of the pod as it was checked (sharing only the maps held elsewhere already: see
    /// `apply::created::copy_unshared`).
    pod: Value,
    token: String,
    warnings: Vec<String>,
    /// `pod` was replaced once by a pod found alike whose maps are held elsewhere (see
    /// [`find`]).
    replaced: bool,
}

thread_local! {
    /// The valid pods kept, oldest first.
    static KEPT_HERE: RefCell<VecDeque<Kept>> = const { RefCell::new(VecDeque::new()) };
    /// Pods looked for and not found since one was last found. Keeping a pod copies what it
    /// does not share, so a long run of pods that are each new (a new name and label each
    /// time) keeps only the 1st, 2nd, 4th, 8th, ... of them: the cost of keeping stays a
    /// vanishing part of their creates, and a run of alike pods after them is still found.
    static MISSES: Cell<u32> = const { Cell::new(0) };
}

/// Whether `info` is the kind whose creates are kept: the built-in Pod.
fn kept_kind(info: &ResourceInfo) -> bool {
    info.is_builtin("", "Pod") && info.version == "v1"
}

/// The warnings of a kept valid pod alike to `pod` (see the module comment), whose create drew
/// the token volume name `token`; `None` when none is kept. The kind's checks need not run on
/// `pod`: they find nothing.
pub(crate) fn find(info: &ResourceInfo, pod: &Value, token: &str) -> Option<Vec<String>> {
    if !kept_kind(info) {
        return None;
    }
    let warnings = KEPT_HERE.with(|kept| {
        let mut kept = kept.borrow_mut();
        let found = kept.iter_mut().rev().find(|kept| {
            // Drawn alike, the two names have one length, which `alike` relies on.
            kept.token.len() == token.len()
                && alike_pods(
                    &kept.pod,
                    pod,
                    Rename {
                        kept: &kept.token,
                        new: token,
                    },
                )
        })?;
        // As `apply::created` does: the first pod of a run is its own decode's, so later pods
        // from the kept decode compared all of it; the first alike pod whose maps are held
        // elsewhere takes its place once, so that later comparisons end at those maps.
        if !found.replaced
            && crate::apply::created::held_elsewhere_only(pod, &found.pod)
            && !names_a_token_where_unseen(pod, false)
        {
            found.pod = crate::apply::created::copy_unshared(pod);
            found.token = token.to_string();
            found.replaced = true;
        }
        Some(found.warnings.clone())
    });
    MISSES.with(|misses| {
        misses.set(match warnings {
            Some(_) => 0,
            None => misses.get().saturating_add(1),
        })
    });
    let warnings = warnings?;
    if cfg!(debug_assertions) {
        assert!(
            super::kind_create_causes(info, pod).is_empty(),
            "a pod alike to a valid one is invalid: {pod}"
        );
        assert_eq!(
            super::warnings::on_create(info, pod),
            warnings,
            "a pod alike to a kept one warns otherwise: {pod}"
        );
    }
    Some(warnings)
}

/// Keeps `pod`, which passed the kind's checks with `warnings`, its create having drawn the
/// token volume name `token`, unless the misses since the last pod found are neither none nor a
/// power of two (see `MISSES`). Pods whose checks read their name, whose warnings name the
/// token volume, or that could hold a token volume's name where a comparison does not look (see
/// [`names_a_token_where_unseen`]) are not kept.
pub(crate) fn keep(info: &ResourceInfo, pod: &Value, token: &str, warnings: &[String]) {
    if MISSES.with(Cell::get).count_ones() > 1 {
        return;
    }
    let reads_name = pod["spec"]["volumes"]
        .as_array()
        .is_some_and(|volumes| volumes.iter().any(|v| v.get("ephemeral").is_some()));
    if !kept_kind(info)
        || reads_name
        || warnings.iter().any(|w| w.contains(token))
        || names_a_token_where_unseen(pod, false)
    {
        return;
    }
    let kept = Kept {
        pod: crate::apply::created::copy_unshared(pod),
        token: token.to_string(),
        warnings: warnings.to_vec(),
        replaced: false,
    };
    KEPT_HERE.with(|all| {
        let mut all = all.borrow_mut();
        if all.len() == KEPT {
            all.pop_front();
        }
        all.push_back(kept);
    });
}

/// The token volume names of a kept pod and of a new one: where the kept pod holds its name the
/// new one must hold its own, and the new one's may appear nowhere else.
#[derive(Clone, Copy)]
struct Rename<'a> {
    kept: &'a str,
    new: &'a str,
}

/// Whether the new pod `new` is alike to the kept pod `kept`: equal but for `metadata.name`,
/// `metadata.uid` and `metadata.creationTimestamp` (strings in both) and the token names.
fn alike_pods(kept: &Value, new: &Value, rename: Rename<'_>) -> bool {
    alike_members(kept, new, |key, kept, new| match key {
        "metadata" => alike_members(kept, new, |key, kept, new| match key {
            "name" | "uid" | "creationTimestamp" => kept.is_string() && new.is_string(),
            _ => alike(kept, new, rename),
        }),
        _ => alike(kept, new, rename),
    })
}

/// Equal values, but for the token names (see [`Rename`]).
fn alike(kept: &Value, new: &Value, rename: Rename<'_>) -> bool {
    match (kept, new) {
        // Both token names have one length; other strings are alike only when equal.
        (Value::String(kept), Value::String(new)) if kept.len() == rename.kept.len() => {
            if *kept == rename.kept {
                new == rename.new
            } else {
                kept == new && new != rename.new
            }
        }
        (Value::String(kept), Value::String(new)) => eq_bytes(kept.as_bytes(), new.as_bytes()),
        (Value::Object(_), Value::Object(_)) => {
            alike_members(kept, new, |_, kept, new| alike(kept, new, rename))
        }
        (Value::Array(kept), Value::Array(new)) => {
            kept.len() == new.len()
                && kept
                    .iter()
                    .zip(new.iter())
                    .all(|(kept, new)| alike(kept, new, rename))
        }
        (kept, new) => kept == new,
    }
}

/// Whether `kept` and `new` are maps with the same keys in the same order whose members
/// `member` finds alike (given the key). Keys are compared as they are: a kept pod has no key
/// that could be a token's name (see `keep`), so an alike one has none. Maps sharing their
/// entries are alike: they hold no token name either (see `keep`).
fn alike_members(kept: &Value, new: &Value, member: impl Fn(&str, &Value, &Value) -> bool) -> bool {
    let (Some(kept), Some(new)) = (kept.as_object(), new.as_object()) else {
        return false;
    };
    kept.shares_entries(new)
        || (kept.len() == new.len()
            && kept
                .iter()
                .zip(new)
                .all(|((kept_key, kept_value), (key, value))| {
                    eq_bytes(kept_key.as_bytes(), key.as_bytes()) && member(key, kept_value, value)
                }))
}

/// Whether `value` has a key that could be a token volume's name (`kube-api-access-...`)
/// anywhere, or such a string inside a map held elsewhere too (`held`, or a map that is shared):
/// the comparison of an alike pod ends unseen at such a map, and compares keys as they are.
fn names_a_token_where_unseen(value: &Value, held: bool) -> bool {
    match value {
        Value::String(s) => held && token_like(s),
        Value::Object(map) => {
            let held = held || map.is_shared();
            map.iter()
                .any(|(key, value)| token_like(key) || names_a_token_where_unseen(value, held))
        }
        Value::Array(items) => items
            .iter()
            .any(|item| names_a_token_where_unseen(item, held)),
        _ => false,
    }
}

/// Whether `s` could be a token volume's name (most strings are told apart by their first byte).
fn token_like(s: &str) -> bool {
    s.as_bytes().first() == API_ACCESS_PREFIX.as_bytes().first() && s.starts_with(API_ACCESS_PREFIX)
}

/// How many pods this thread keeps (for tests).
#[cfg(test)]
pub(crate) fn kept_here() -> usize {
    KEPT_HERE.with(|all| all.borrow().len())
}

/// Pods looked for and not found since one was last found, on this thread (for tests).
#[cfg(test)]
pub(crate) fn misses_here() -> u32 {
    MISSES.with(Cell::get)
}

/// Forgets the pods this thread keeps (for tests).
#[cfg(test)]
pub(crate) fn forget_kept() {
    KEPT_HERE.with(|all| all.borrow_mut().clear());
    MISSES.with(|misses| misses.set(0));
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn pod_info() -> ResourceInfo {
        crate::resource::builtin_resources()
            .into_iter()
            .find(|r| r.group.is_empty() && r.kind == "Pod")
            .expect("pods are built in")
    }

    /// A defaulted pod as a create checks it, named `name` with the token volume `token`.
    fn pod(name: &str, token: &str) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}"),
                "creationTimestamp": "2026-12-07T00:00:00Z", "labels": {"app": "a"}},
            "spec": {
                "containers": [{"name": "c", "image": "i",
                    "volumeMounts": [{"name": token, "mountPath": "/var/run/secrets"}]}],
                "volumes": [{"name": token, "projected": {"sources": []}}]
            },
            "status": {"phase": "Pending"}
        })
    }

    #[test]
    fn pods_differing_in_name_uid_time_and_token_are_alike() {
        let kept = pod("p-abcde", "kube-api-access-aaaaa");
        let new = pod("p-fghij", "kube-api-access-bbbbb");
        let rename = Rename {
            kept: "kube-api-access-aaaaa",
            new: "kube-api-access-bbbbb",
        };
        assert!(alike_pods(&kept, &new, rename));
    }

    #[rstest]
    #[case::another_label(|p: &mut Value| p["metadata"]["labels"]["app"] = json!("b"))]
    #[case::another_image(|p: &mut Value| p["spec"]["containers"][0]["image"] = json!("j"))]
    #[case::a_mount_of_another_volume(|p: &mut Value| {
        p["spec"]["containers"][0]["volumeMounts"][0]["name"] = json!("other")
    })]
    #[case::the_new_token_named_elsewhere(|p: &mut Value| {
        p["spec"]["containers"][0]["env"] = json!([{"name": "V", "value": "kube-api-access-bbbbb"}])
    })]
    #[case::the_kept_token_kept(|p: &mut Value| {
        p["spec"]["volumes"][0]["name"] = json!("kube-api-access-aaaaa")
    })]
    #[case::no_uid(|p: &mut Value| {
        p["metadata"].as_object_mut().expect("a map").remove("uid");
    })]
    #[case::a_member_more(|p: &mut Value| p["spec"]["hostname"] = json!("h"))]
    fn pods_that_differ_elsewhere_are_not_alike(#[case] change: fn(&mut Value)) {
        let kept = pod("p-abcde", "kube-api-access-aaaaa");
        let mut new = pod("p-fghij", "kube-api-access-bbbbb");
        change(&mut new);
        let rename = Rename {
            kept: "kube-api-access-aaaaa",
            new: "kube-api-access-bbbbb",
        };
        assert!(!alike_pods(&kept, &new, rename));
    }

    fn kept_here() -> usize {
        super::kept_here()
    }

    /// A key that could be a token volume's name is compared as it is, so such a pod is not
    /// kept.
    #[test]
    fn a_pod_with_a_token_like_key_is_not_kept() {
        let info = pod_info();
        let token = "kube-api-access-xxxxx";
        let mut kept = pod("k-aaaaa", token);
        kept["metadata"]["annotations"] = json!({"kube-api-access-zzzzz": "x"});
        forget_kept();
        keep(&info, &kept, token, &[]);
        assert_eq!(kept_here(), 0);
    }

    /// Pods whose checks read their name (generic ephemeral volumes), whose warnings name
    /// their token, or whose shared maps hold a token-like name are not kept.
    #[rstest]
    #[case::a_plain_pod_is_kept(false, false, false, 1)]
    #[case::ephemeral_volume(true, false, false, 0)]
    #[case::warning_names_the_token(false, true, false, 0)]
    #[case::shared_map_names_a_token(false, false, true, 0)]
    fn some_pods_are_not_kept(
        #[case] ephemeral: bool,
        #[case] warns: bool,
        #[case] shared: bool,
        #[case] kept_after: usize,
    ) {
        let info = pod_info();
        let token = "kube-api-access-xxxxx";
        let mut kept = pod("k-aaaaa", token);
        if ephemeral {
            kept["spec"]["volumes"]
                .as_array_mut()
                .expect("a list")
                .push(json!({"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}));
        }
        let _held = shared.then(|| {
            kept["spec"]["containers"][0]["env"] =
                json!([{"name": "V", "value": "kube-api-access-yyyyy"}]);
            // Held elsewhere too, as the decode of a repeated body is.
            kept["spec"]["containers"][0].clone()
        });
        let warnings = if warns {
            vec![format!("volume {token} is deprecated")]
        } else {
            Vec::new()
        };
        forget_kept();
        keep(&info, &kept, token, &warnings);
        assert_eq!(kept_here(), kept_after);
    }
}
