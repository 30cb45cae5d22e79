//! The webhook configurations as the dispatchers use them: every webhook of every stored
//! `MutatingWebhookConfiguration` and `ValidatingWebhookConfiguration`, configurations in name
//! order (as the real server's configuration sources sort them), webhooks in their order inside
//! a configuration; and how a `clientConfig.service` is reached from a server with no cluster
//! network (the [`ServiceResolver`] a test gives).

use std::sync::Arc;

use serde_json::Value;

use crate::http::server::Shared;

/// The API group of the webhook configurations.
pub(crate) const GROUP: &str = "admissionregistration.k8s.io";

/// A webhook's `clientConfig.service`, for a [`ServiceResolver`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceReference {
    /// `service.namespace`.
    pub namespace: String,
    /// `service.name`.
    pub name: String,
    /// `service.port` (443 by default).
    pub port: u16,
    /// `service.path`, if set.
    pub path: Option<String>,
}

/// Where a webhook's service is reached: the address (`host:port`, or a URL whose host and
/// port are used) to connect to, or `None` for a service that cannot be resolved. The request
/// still carries the service's path, and the server's certificate must be valid for
/// `<name>.<namespace>.svc`, as on a real server (only the connection goes elsewhere).
pub type ServiceResolver = Arc<dyn Fn(&ServiceReference) -> Option<String> + Send + Sync>;

/// Admission settings of a server (see [`crate::FakeApiServerBuilder::webhook_service_resolver`]).
#[derive(Clone, Default)]
pub struct AdmissionConfig {
    /// How `clientConfig.service` webhooks are reached.
    pub service_resolver: Option<ServiceResolver>,
    /// The `PodSecurity` plugin's defaults and exemptions.
    pub pod_security: super::pod_security::config::PodSecurityConfiguration,
}

impl std::fmt::Debug for AdmissionConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdmissionConfig")
            .field("service_resolver", &self.service_resolver.is_some())
            .field("pod_security", &self.pod_security)
            .finish()
    }
}

/// One webhook of a configuration.
#[derive(Debug)]
pub(crate) struct Webhook {
    /// The configuration's name.
    pub configuration: String,
    /// The webhook's index in its configuration.
    pub index: usize,
    /// The webhook as stored (defaulted when it was written).
    pub spec: Value,
}

impl Webhook {
    /// `webhooks[].name`.
    pub fn name(&self) -> &str {
        self.spec["name"].as_str().unwrap_or_default()
    }

    /// The identity the reinvocation bookkeeping uses (`configuration/webhook/index`).
    pub fn uid(&self) -> String {
        format!("{}/{}/{}", self.configuration, self.name(), self.index)
    }

    /// `failurePolicy: Ignore` (anything else fails closed, as `Fail` is the default).
    pub fn ignores_failures(&self) -> bool {
        self.spec["failurePolicy"] == "Ignore"
    }

    /// `reinvocationPolicy: IfNeeded`.
    pub fn reinvoked_if_needed(&self) -> bool {
        self.spec["reinvocationPolicy"] == "IfNeeded"
    }

    /// `timeoutSeconds` (10 by default).
    pub fn timeout_seconds(&self) -> u64 {
        self.spec["timeoutSeconds"]
            .as_u64()
            .filter(|s| *s > 0)
            .unwrap_or(10)
    }
}

/// Every webhook the server knows, read at the start of a request.
#[derive(Debug, Default)]
pub(crate) struct Webhooks {
    /// Mutating webhooks, in calling order.
    pub mutating: Vec<Webhook>,
    /// Validating webhooks, in configuration order (they are called in parallel).
    pub validating: Vec<Webhook>,
}

impl Webhooks {
    /// Reads the configurations from the store (every write asks; without any configuration
    /// that is one look under the store's lock).
    pub fn load(shared: &Shared) -> Self {
        let [mutating, validating] = shared.store.counts([MUTATING_KEY, VALIDATING_KEY]);
        Self {
            mutating: read(shared, MUTATING_KEY, mutating),
            validating: read(shared, VALIDATING_KEY, validating),
        }
    }

    /// Whether there is no webhook at all.
    pub fn is_empty(&self) -> bool {
        self.mutating.is_empty() && self.validating.is_empty()
    }
}

/// The store's keys of the two configuration kinds (`store::resource_key` of [`GROUP`] and
/// their plurals), written out: they are looked up on every request.
const MUTATING_KEY: &str = "admissionregistration.k8s.io/mutatingwebhookconfigurations";
const VALIDATING_KEY: &str = "admissionregistration.k8s.io/validatingwebhookconfigurations";

/// The webhooks of the configurations stored under `key`, of which `count` were stored when
/// the write began.
fn read(shared: &Shared, key: &str, count: usize) -> Vec<Webhook> {
    if count == 0 {
        return Vec::new();
    }
    // The snapshot is in key order, i.e. by name: the order the real server sorts them in.
    let mut out = Vec::new();
    for (_, bytes) in shared.store.snapshot(key, None).items {
        let Ok(config) = crate::store::json::from_slice(&bytes) else {
            continue;
        };
        let configuration = config["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let Some(hooks) = config["webhooks"].as_array() else {
            continue;
        };
        for (index, spec) in hooks.iter().enumerate() {
            out.push(Webhook {
                configuration: configuration.clone(),
                index,
                spec: spec.clone(),
            });
        }
    }
    out
}

/// Whether the request is about a configuration the admission webhooks never see (webhooks
/// cannot block their own configuration: `IsExemptAdmissionConfigurationResource`).
pub(crate) fn is_exempt(group: &str, kind: &str) -> bool {
    group == GROUP
        && matches!(
            kind,
            "ValidatingWebhookConfiguration"
                | "MutatingWebhookConfiguration"
                | "ValidatingAdmissionPolicy"
                | "ValidatingAdmissionPolicyBinding"
                | "MutatingAdmissionPolicy"
                | "MutatingAdmissionPolicyBinding"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_keys_are_the_stores_keys_of_the_two_kinds() {
        use crate::store::resource_key;
        assert_eq!(
            MUTATING_KEY,
            resource_key(GROUP, "mutatingwebhookconfigurations")
        );
        assert_eq!(
            VALIDATING_KEY,
            resource_key(GROUP, "validatingwebhookconfigurations")
        );
    }
}
