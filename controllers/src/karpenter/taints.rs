//! Taint helpers: matching by key and effect, merging NodeClaim taints into a Node, formatting,
//! and the ephemeral taints a Node carries while it boots (spec §4.2, §4.3).

use k8s_openapi::api::core::v1::Taint;

/// `node.kubernetes.io/not-ready:NoSchedule`, `node.kubernetes.io/unreachable:NoSchedule` and
/// `node.cloudprovider.kubernetes.io/uninitialized=true:NoSchedule`.
pub fn known_ephemeral_taints() -> Vec<Taint> {
    vec![
        taint("node.kubernetes.io/not-ready", None, "NoSchedule"),
        taint("node.kubernetes.io/unreachable", None, "NoSchedule"),
        taint(
            "node.cloudprovider.kubernetes.io/uninitialized",
            Some("true"),
            "NoSchedule",
        ),
    ]
}

/// Builds a taint.
pub fn taint(key: &str, value: Option<&str>, effect: &str) -> Taint {
    Taint {
        key: key.into(),
        value: value.map(Into::into),
        effect: effect.into(),
        time_added: None,
    }
}

/// `Taint.MatchTaint`: same key and same effect (the value is ignored).
pub fn matches(a: &Taint, b: &Taint) -> bool {
    a.key == b.key && a.effect == b.effect
}

/// `scheduling.Taints.Merge`: `existing` plus every taint of `extra` not already matched.
pub fn merge(existing: &[Taint], extra: &[Taint]) -> Vec<Taint> {
    let mut out = existing.to_vec();
    for t in extra {
        if !out.iter().any(|o| matches(o, t)) {
            out.push(t.clone());
        }
    }
    out
}

/// The first taint on the node matching one of `wanted`, if any.
pub fn first_present<'a>(node_taints: &'a [Taint], wanted: &[Taint]) -> Option<&'a Taint> {
    wanted
        .iter()
        .find_map(|w| node_taints.iter().find(|t| matches(w, t)))
}

/// `k=v:Effect`, or `k:Effect` without a value.
pub fn format(t: &Taint) -> String {
    match t.value.as_deref() {
        Some(v) if !v.is_empty() => format!("{}={}:{}", t.key, v, t.effect),
        _ => format!("{}:{}", t.key, t.effect),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::adds_missing(vec![], vec![taint("a", None, "NoSchedule")], 1)]
    #[case::dedupes_key_and_effect(vec![taint("a", Some("1"), "NoSchedule")], vec![taint("a", Some("2"), "NoSchedule")], 1)]
    #[case::other_effect_is_distinct(vec![taint("a", None, "NoSchedule")], vec![taint("a", None, "NoExecute")], 2)]
    fn merge_dedupes_by_key_and_effect(
        #[case] existing: Vec<Taint>,
        #[case] extra: Vec<Taint>,
        #[case] len: usize,
    ) {
        let merged = merge(&existing, &extra);
        assert_eq!(merged.len(), len);
        // Existing entries keep their value.
        if let Some(first) = existing.first() {
            assert_eq!(&merged[0], first);
        }
    }

    #[rstest]
    #[case(taint("k", Some("v"), "NoSchedule"), "k=v:NoSchedule")]
    #[case(taint("k", None, "NoExecute"), "k:NoExecute")]
    #[case(taint("k", Some(""), "NoExecute"), "k:NoExecute")]
    fn formats(#[case] t: Taint, #[case] want: &str) {
        assert_eq!(format(&t), want);
    }

    #[test]
    fn finds_ephemeral_taints_by_key_and_effect_only() {
        let node = vec![taint(
            "node.cloudprovider.kubernetes.io/uninitialized",
            Some("false"),
            "NoSchedule",
        )];
        assert!(first_present(&node, &known_ephemeral_taints()).is_some());
        let node = vec![taint("node.kubernetes.io/not-ready", None, "NoExecute")];
        assert!(first_present(&node, &known_ephemeral_taints()).is_none());
    }
}
