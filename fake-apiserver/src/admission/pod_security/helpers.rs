//! Small pieces every Pod Security check uses: visiting a pod's containers, the quoting and
//! pluralizing of the messages, and the user-namespace relaxation (upstream's
//! `policy/helpers.go` and `policy/visitor.go`).

use serde_json::Value;

/// Calls `visitor` with each container of `spec`: init containers, then containers, then
/// ephemeral containers (`visitContainers`).
pub(crate) fn visit_containers(spec: &Value, mut visitor: impl FnMut(&Value)) {
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        for container in spec[list].as_array().into_iter().flatten() {
            visitor(container);
        }
    }
}

/// A container's name.
pub(crate) fn container_name(container: &Value) -> String {
    container["name"].as_str().unwrap_or_default().to_string()
}

/// `"a", "b", "c"` (`joinQuote`): nothing for no items.
pub(crate) fn join_quote<S: AsRef<str>>(items: &[S]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let joined: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    format!("\"{}\"", joined.join("\", \""))
}

/// `container "a"` or `containers "a", "b"`: how every check names the containers it found.
pub(crate) fn containers_phrase<S: AsRef<str>>(names: &[S]) -> String {
    format!(
        "{} {}",
        pluralize("container", "containers", names.len()),
        join_quote(names)
    )
}

/// `singular` for one, `plural` otherwise (`pluralize`).
pub(crate) fn pluralize<'a>(singular: &'a str, plural: &'a str, count: usize) -> &'a str {
    if count == 1 {
        singular
    } else {
        plural
    }
}

/// Whether the pod runs in a user namespace (`hostUsers: false`), which relaxes the checks of
/// 1.35 and later that say so (`relaxPolicyForUserNamespacePod`).
pub(crate) fn relax_policy_for_user_namespace_pod(spec: &Value) -> bool {
    spec["hostUsers"].as_bool() == Some(false)
}

/// `true` when `value` is the JSON boolean `true` (a `*bool` that is set and true).
pub(crate) fn is_true(value: &Value) -> bool {
    value.as_bool() == Some(true)
}

/// The sorted, de-duplicated list of `items` (`sets.NewString(...).List()`).
pub(crate) fn sorted_set(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let set: std::collections::BTreeSet<String> = items.into_iter().collect();
    set.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn join_quote_quotes_each_item() {
        assert_eq!(join_quote::<&str>(&[]), "");
        assert_eq!(join_quote(&["a"]), "\"a\"");
        assert_eq!(join_quote(&["a", "b"]), "\"a\", \"b\"");
    }

    #[test]
    fn containers_are_visited_init_first_then_regular_then_ephemeral() {
        let spec = json!({
            "containers": [{"name": "c"}],
            "ephemeralContainers": [{"name": "e"}],
            "initContainers": [{"name": "i"}],
        });
        let mut names = vec![];
        visit_containers(&spec, |c| names.push(container_name(c)));
        assert_eq!(names, ["i", "c", "e"]);
    }

    #[test]
    fn only_host_users_false_relaxes() {
        assert!(relax_policy_for_user_namespace_pod(
            &json!({"hostUsers": false})
        ));
        assert!(!relax_policy_for_user_namespace_pod(
            &json!({"hostUsers": true})
        ));
        assert!(!relax_policy_for_user_namespace_pod(&json!({})));
    }
}
