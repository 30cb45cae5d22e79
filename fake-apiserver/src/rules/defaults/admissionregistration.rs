//! Defaults of the `admissionregistration.k8s.io/v1` webhook configurations
//! (`pkg/apis/admissionregistration/v1/defaults.go`).

use serde_json::{json, Value};

use super::set_default;

/// Defaults every webhook of a Mutating- or ValidatingWebhookConfiguration: failure policy
/// `Fail`, match policy `Equivalent`, empty (match-all) selectors, a ten-second timeout, rules
/// of any scope, service port 443; mutating webhooks are not reinvoked.
pub fn webhooks(object: &mut Value, mutating: bool) {
    let Some(hooks) = object.get_mut("webhooks").and_then(Value::as_array_mut) else {
        return;
    };
    for hook in hooks.iter_mut().filter_map(Value::as_object_mut) {
        set_default(hook, "failurePolicy", json!("Fail"));
        set_default(hook, "matchPolicy", json!("Equivalent"));
        set_default(hook, "namespaceSelector", json!({}));
        set_default(hook, "objectSelector", json!({}));
        set_default(hook, "timeoutSeconds", json!(10));
        if mutating {
            set_default(hook, "reinvocationPolicy", json!("Never"));
        }
        if let Some(rules) = hook.get_mut("rules").and_then(Value::as_array_mut) {
            for rule in rules.iter_mut().filter_map(Value::as_object_mut) {
                set_default(rule, "scope", json!("*"));
            }
        }
        if let Some(service) = hook
            .get_mut("clientConfig")
            .and_then(|c| c.get_mut("service"))
            .and_then(Value::as_object_mut)
        {
            set_default(service, "port", json!(443));
        }
    }
}
