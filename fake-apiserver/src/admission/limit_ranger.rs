//! The `LimitRanger` admission plugin (`plugin/pkg/admission/limitranger`), on by default in
//! every real server: the LimitRanges of a namespace default and bound the resources of the
//! pods and PersistentVolumeClaims created in it.
//!
//! - Mutating, on pod creation: each container and init container missing a request or limit
//!   that a `Container` item's `defaultRequest` / `default` names gets it, and the pod is
//!   annotated `kubernetes.io/limit-ranger: LimitRanger plugin set: cpu, memory request for
//!   container app; cpu limit for init container setup` (the last LimitRange that set
//!   anything writes it).
//! - Validating, on pod creation and on PVC creation and update: a `Container` item's `min`,
//!   `max` and `maxLimitRequestRatio` hold for every container and init container, a `Pod`
//!   item's for the pod's effective requests and limits (sidecars counted as the kubelet
//!   counts them), a `PersistentVolumeClaim` item's `min` / `max` for the claim's requests. What
//!   breaks them is a `403`, `pods "web" is forbidden: maximum cpu usage per Container is 500m,
//!   but limit is 1` (several messages: `[..., ...]`, as an aggregate error reads).
//!
//! Pods are not looked at on update (their containers' resources change only through
//! `resize`, which the plugin leaves alone), nor is anything being deleted. The items'
//! defaults (`SetDefaults_LimitRangeItem`: a default request from the default limit or the
//! minimum, a default limit from the maximum) were set when the LimitRange was written.
//!
//! The real plugin walks the LimitRanges and each item's resources in Go map order; here they
//! go by name, so the order of several messages is the same on every run.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::auth::attributes::forbidden_error;
use crate::context::Shared;
use crate::error::ApiError;
use crate::resource::ResourceInfo;
use crate::rules::quantity::{Format, Quantity};

use super::admitted_name;

/// Where LimitRanges are stored.
const LIMIT_RANGES: &str = "/limitranges";

/// The annotation that says what the plugin set on a pod.
const ANNOTATION: &str = "kubernetes.io/limit-ranger";

/// `resource.MaxMilliValue`: the largest value whose thousandths fit an `int64`.
const MAX_MILLI_VALUE: i128 = i64::MAX as i128 / 1000;

/// A resource list (`requests`, `limits`, `min`, ...) read from JSON, by resource name.
type ResourceList = BTreeMap<String, Quantity>;

/// The kinds the plugin looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pod,
    Claim,
}

fn kind_of(info: &ResourceInfo) -> Option<Kind> {
    match (info.custom, info.group.as_str(), info.kind.as_str()) {
        (false, "", "Pod") => Some(Kind::Pod),
        (false, "", "PersistentVolumeClaim") => Some(Kind::Claim),
        _ => None,
    }
}

/// The LimitRanges of `namespace`, by name.
fn limit_ranges(shared: &Shared, namespace: &str) -> Vec<Value> {
    shared
        .store
        .snapshot(LIMIT_RANGES, Some(namespace))
        .items
        .iter()
        .filter_map(|(_, bytes)| crate::store::json::from_slice(bytes).ok())
        .collect()
}

fn namespace_of(object: &Value) -> &str {
    object["metadata"]["namespace"].as_str().unwrap_or_default()
}

fn items(limit_range: &Value) -> impl Iterator<Item = &Value> {
    limit_range["spec"]["limits"]
        .as_array()
        .into_iter()
        .flatten()
}

fn resource_list(value: &Value) -> ResourceList {
    value
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, q)| Some((name.clone(), Quantity::from_value(q)?)))
        .collect()
}

/// `Admit`: sets the defaults of every LimitRange of the namespace on a pod being created.
pub(crate) fn mutate_create(shared: &Shared, info: &ResourceInfo, object: &mut Value) {
    if kind_of(info) != Some(Kind::Pod) || !object["spec"].is_object() {
        return;
    }
    for limit_range in limit_ranges(shared, namespace_of(object)) {
        set_defaults(&limit_range, object);
    }
}

/// `PodMutateLimitFunc`: the `Container` items' default requests and limits, set where a
/// container has none for that resource; the annotation says what was set.
fn set_defaults(limit_range: &Value, pod: &mut Value) {
    let mut requests = Map::new();
    let mut limits = Map::new();
    for item in items(limit_range).filter(|i| i["type"] == "Container") {
        for (list, out) in [("defaultRequest", &mut requests), ("default", &mut limits)] {
            if let Some(defaults) = item[list].as_object() {
                out.extend(defaults.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
    }
    let mut notes = Vec::new();
    for (list, prefix) in [
        ("containers", "container"),
        ("initContainers", "init container"),
    ] {
        let Some(containers) = pod
            .get_mut("spec")
            .and_then(|spec| spec.get_mut(list))
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        for container in containers.iter_mut().filter(|c| c.is_object()) {
            let name = container["name"].as_str().unwrap_or_default().to_string();
            let set_requests = fill(container, "requests", &requests);
            let set_limits = fill(container, "limits", &limits);
            if !set_requests.is_empty() {
                notes.push(format!(
                    "{} request for {prefix} {name}",
                    set_requests.join(", ")
                ));
            }
            if !set_limits.is_empty() {
                notes.push(format!(
                    "{} limit for {prefix} {name}",
                    set_limits.join(", ")
                ));
            }
        }
    }
    if notes.is_empty() {
        return;
    }
    let meta = &mut pod["metadata"];
    if !meta["annotations"].is_object() {
        meta["annotations"] = json!({});
    }
    meta["annotations"][ANNOTATION] =
        json!(format!("LimitRanger plugin set: {}", notes.join("; ")));
}

/// Sets each of `defaults` the container's `resources.<list>` lacks; the names set, sorted.
fn fill(container: &mut Value, list: &str, defaults: &Map<String, Value>) -> Vec<String> {
    let missing: Vec<(&String, &Value)> = defaults
        .iter()
        .filter(|(name, _)| container["resources"][list].get(name.as_str()).is_none())
        .collect();
    if missing.is_empty() {
        return Vec::new();
    }
    if !container["resources"].is_object() {
        container["resources"] = json!({});
    }
    if !container["resources"][list].is_object() {
        container["resources"][list] = json!({});
    }
    let mut set = Vec::new();
    for (name, value) in missing {
        container["resources"][list][name.as_str()] = value.clone();
        set.push(name.clone());
    }
    set.sort();
    set
}

/// `Validate` of a create: every LimitRange of the namespace holds for a pod or a claim.
pub(crate) fn validate_create(
    shared: &Shared,
    info: &ResourceInfo,
    object: &Value,
) -> Result<(), ApiError> {
    let Some(kind) = kind_of(info) else {
        return Ok(());
    };
    check(
        &limit_ranges(shared, namespace_of(object)),
        info,
        kind,
        object,
    )
}

/// What an update needs of the plugin, read before the store is locked: the LimitRanges of the
/// namespace, for a claim written through its main endpoint.
pub(crate) struct UpdateCheck {
    limit_ranges: Vec<Value>,
}

/// Prepares the update check; `None` when the plugin has nothing to say on this update (a pod,
/// any subresource, any other kind).
pub(crate) fn prepare_update(
    shared: &Shared,
    info: &ResourceInfo,
    subresource: Option<&str>,
    namespace: &str,
) -> Option<UpdateCheck> {
    (kind_of(info) == Some(Kind::Claim) && subresource.is_none()).then(|| UpdateCheck {
        limit_ranges: limit_ranges(shared, namespace),
    })
}

impl UpdateCheck {
    /// Checks the claim an update writes (a claim being deleted is left alone).
    pub(crate) fn check(
        &self,
        info: &ResourceInfo,
        old: &Value,
        next: &Value,
    ) -> Result<(), ApiError> {
        if old["metadata"].get("deletionTimestamp").is_some() {
            return Ok(());
        }
        check(&self.limit_ranges, info, Kind::Claim, next)
    }
}

fn check(
    limit_ranges: &[Value],
    info: &ResourceInfo,
    kind: Kind,
    object: &Value,
) -> Result<(), ApiError> {
    for limit_range in limit_ranges {
        let errors = match kind {
            Kind::Pod => pod_errors(limit_range, object),
            Kind::Claim => claim_errors(limit_range, object),
        };
        if let Some(message) = aggregate(errors) {
            return Err(forbidden_error(
                "",
                &info.plural,
                admitted_name(object),
                &message,
            ));
        }
    }
    Ok(())
}

/// `utilerrors.NewAggregate(errs).Error()`: one message as it is, several (without repeats)
/// in brackets.
fn aggregate(errors: Vec<String>) -> Option<String> {
    match errors.len() {
        0 => None,
        1 => errors.into_iter().next(),
        _ => {
            let mut seen: Vec<String> = Vec::new();
            for e in errors {
                if !seen.contains(&e) {
                    seen.push(e);
                }
            }
            Some(match seen.len() {
                1 => seen.remove(0),
                _ => format!("[{}]", seen.join(", ")),
            })
        }
    }
}

/// `PodValidateLimitFunc`.
fn pod_errors(limit_range: &Value, pod: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let containers = |list: &str| -> Vec<(ResourceList, ResourceList)> {
        pod["spec"][list]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                (
                    resource_list(&c["resources"]["requests"]),
                    resource_list(&c["resources"]["limits"]),
                )
            })
            .collect()
    };
    for item in items(limit_range) {
        match item["type"].as_str() {
            Some("Container") => {
                for (requests, limits) in containers("containers")
                    .iter()
                    .chain(&containers("initContainers"))
                {
                    item_errors(item, "Container", requests, limits, &mut errors);
                }
            }
            Some("Pod") => {
                let (requests, limits) = pod_requests_and_limits(pod);
                item_errors(item, "Pod", &requests, &limits, &mut errors);
            }
            _ => {}
        }
    }
    errors
}

/// An item's `min`, `max` and `maxLimitRequestRatio` against one set of requests and limits.
fn item_errors(
    item: &Value,
    limit_type: &str,
    requests: &ResourceList,
    limits: &ResourceList,
    errors: &mut Vec<String>,
) {
    for (name, enforced) in resource_list(&item["min"]) {
        errors.extend(min_constraint(
            limit_type, &name, enforced, requests, limits,
        ));
    }
    for (name, enforced) in resource_list(&item["max"]) {
        errors.extend(max_constraint(
            limit_type, &name, enforced, requests, limits,
        ));
    }
    for (name, enforced) in resource_list(&item["maxLimitRequestRatio"]) {
        errors.extend(ratio_constraint(
            limit_type, &name, enforced, requests, limits,
        ));
    }
}

/// `PersistentVolumeClaimValidateLimitFunc`: a claim's requests against `min` and `max`.
fn claim_errors(limit_range: &Value, claim: &Value) -> Vec<String> {
    let requests = resource_list(&claim["spec"]["resources"]["requests"]);
    let mut errors = Vec::new();
    for item in items(limit_range).filter(|i| i["type"] == "PersistentVolumeClaim") {
        for (name, enforced) in resource_list(&item["min"]) {
            let min = min_constraint(
                "PersistentVolumeClaim",
                &name,
                enforced,
                &requests,
                &ResourceList::new(),
            );
            errors.extend(min);
        }
        for (name, enforced) in resource_list(&item["max"]) {
            errors.extend(max_request_constraint(
                "PersistentVolumeClaim",
                &name,
                enforced,
                &requests,
            ));
        }
    }
    errors
}

/// `Quantity.Value()`: rounded up to a whole number.
fn value(q: &Quantity) -> i128 {
    ceil_div(q.nanos(), 1_000_000_000)
}

/// `Quantity.MilliValue()`: rounded up to thousandths.
fn milli_value(q: &Quantity) -> i128 {
    ceil_div(q.nanos(), 1_000_000)
}

fn ceil_div(n: i128, d: i128) -> i128 {
    let q = n / d;
    if n % d > 0 {
        q + 1
    } else {
        q
    }
}

/// `requestLimitEnforcedValues`: the three at a common precision (thousandths when none
/// would overflow).
fn comparable(request: &Quantity, limit: &Quantity, enforced: &Quantity) -> (i128, i128, i128) {
    let whole = [value(request), value(limit), value(enforced)];
    if whole.iter().all(|v| *v <= MAX_MILLI_VALUE) {
        (
            milli_value(request),
            milli_value(limit),
            milli_value(enforced),
        )
    } else {
        (whole[0], whole[1], whole[2])
    }
}

fn zero() -> Quantity {
    Quantity::from_nanos(0, Format::DecimalSi)
}

/// `minConstraint`.
fn min_constraint(
    limit_type: &str,
    name: &str,
    enforced: Quantity,
    requests: &ResourceList,
    limits: &ResourceList,
) -> Option<String> {
    let (request, limit) = (requests.get(name), limits.get(name));
    let (observed_request, observed_limit, enforced_value) = comparable(
        request.unwrap_or(&zero()),
        limit.unwrap_or(&zero()),
        &enforced,
    );
    let enforced_text = enforced.canonical();
    let Some(request) = request else {
        return Some(format!(
            "minimum {name} usage per {limit_type} is {enforced_text}.  No request is specified"
        ));
    };
    if observed_request < enforced_value {
        return Some(format!(
            "minimum {name} usage per {limit_type} is {enforced_text}, but request is {}",
            request.canonical()
        ));
    }
    match limit {
        Some(limit) if observed_limit < enforced_value => Some(format!(
            "minimum {name} usage per {limit_type} is {enforced_text}, but limit is {}",
            limit.canonical()
        )),
        _ => None,
    }
}

/// `maxConstraint`.
fn max_constraint(
    limit_type: &str,
    name: &str,
    enforced: Quantity,
    requests: &ResourceList,
    limits: &ResourceList,
) -> Option<String> {
    let (request, limit) = (requests.get(name), limits.get(name));
    let (observed_request, observed_limit, enforced_value) = comparable(
        request.unwrap_or(&zero()),
        limit.unwrap_or(&zero()),
        &enforced,
    );
    let enforced_text = enforced.canonical();
    let Some(limit) = limit else {
        return Some(format!(
            "maximum {name} usage per {limit_type} is {enforced_text}.  No limit is specified"
        ));
    };
    if observed_limit > enforced_value {
        return Some(format!(
            "maximum {name} usage per {limit_type} is {enforced_text}, but limit is {}",
            limit.canonical()
        ));
    }
    match request {
        Some(request) if observed_request > enforced_value => Some(format!(
            "maximum {name} usage per {limit_type} is {enforced_text}, but request is {}",
            request.canonical()
        )),
        _ => None,
    }
}

/// `maxRequestConstraint`: a maximum on requests alone (a claim has no limits).
fn max_request_constraint(
    limit_type: &str,
    name: &str,
    enforced: Quantity,
    requests: &ResourceList,
) -> Option<String> {
    let request = requests.get(name);
    let (observed_request, _, enforced_value) =
        comparable(request.unwrap_or(&zero()), &zero(), &enforced);
    let enforced_text = enforced.canonical();
    let Some(request) = request else {
        return Some(format!(
            "maximum {name} usage per {limit_type} is {enforced_text}.  No request is specified"
        ));
    };
    (observed_request > enforced_value).then(|| {
        format!(
            "maximum {name} usage per {limit_type} is {enforced_text}, but request is {}",
            request.canonical()
        )
    })
}

/// `limitRequestRatioConstraint`.
fn ratio_constraint(
    limit_type: &str,
    name: &str,
    enforced: Quantity,
    requests: &ResourceList,
    limits: &ResourceList,
) -> Option<String> {
    let (request, limit) = (requests.get(name), limits.get(name));
    let (observed_request, observed_limit, _) = comparable(
        request.unwrap_or(&zero()),
        limit.unwrap_or(&zero()),
        &enforced,
    );
    let enforced_text = enforced.canonical();
    if request.is_none() || observed_request == 0 {
        return Some(format!("{name} max limit to request ratio per {limit_type} is {enforced_text}, but no request is specified or request is 0"));
    }
    if limit.is_none() || observed_limit == 0 {
        return Some(format!("{name} max limit to request ratio per {limit_type} is {enforced_text}, but no limit is specified or limit is 0"));
    }
    let shown = observed_limit as f64 / observed_request as f64;
    let (observed, allowed) = match value(&enforced) <= MAX_MILLI_VALUE {
        true => (shown * 1000.0, milli_value(&enforced) as f64),
        false => (shown, value(&enforced) as f64),
    };
    (observed > allowed).then(|| {
        format!("{name} max limit to request ratio per {limit_type} is {enforced_text}, but provided ratio is {shown:.6}")
    })
}

/// `podRequests` and `podLimits` of the plugin: the containers' sum, restartable init
/// containers (sidecars) added to it, and each other init container (with the sidecars started
/// before it) as a floor.
fn pod_requests_and_limits(pod: &Value) -> (ResourceList, ResourceList) {
    let effective = |list: &str| {
        let mut total = ResourceList::new();
        for container in pod["spec"]["containers"].as_array().into_iter().flatten() {
            add(&mut total, &resource_list(&container["resources"][list]));
        }
        let mut sidecars = ResourceList::new();
        let mut init_floor = ResourceList::new();
        for container in pod["spec"]["initContainers"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let own = resource_list(&container["resources"][list]);
            let needed = if container["restartPolicy"] == "Always" {
                add(&mut total, &own);
                add(&mut sidecars, &own);
                sidecars.clone()
            } else {
                let mut with_sidecars = own;
                add(&mut with_sidecars, &sidecars);
                with_sidecars
            };
            raise(&mut init_floor, &needed);
        }
        raise(&mut total, &init_floor);
        total
    };
    (effective("requests"), effective("limits"))
}

/// `addResourceList`: a sum keeps the format of the quantity it started from.
fn add(list: &mut ResourceList, more: &ResourceList) {
    for (name, q) in more {
        list.entry(name.clone())
            .and_modify(|sum| *sum = Quantity::from_nanos(sum.nanos() + q.nanos(), sum.format))
            .or_insert(*q);
    }
}

/// `maxResourceList`: each resource raised to `more`'s where that is greater.
fn raise(list: &mut ResourceList, more: &ResourceList) {
    for (name, q) in more {
        match list.get(name) {
            Some(current) if current.nanos() >= q.nanos() => {}
            _ => {
                list.insert(name.clone(), *q);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn limit_range(items: Value) -> Value {
        json!({"spec": {"limits": items}})
    }

    fn pod(containers: Value) -> Value {
        json!({"metadata": {"name": "web"}, "spec": {"containers": containers}})
    }

    #[test]
    fn defaults_fill_what_containers_lack_and_the_annotation_says_so() {
        let range = limit_range(json!([{"type": "Container",
            "default": {"cpu": "500m", "memory": "256Mi"},
            "defaultRequest": {"cpu": "100m", "memory": "128Mi"}}]));
        let mut p = json!({"metadata": {"name": "web"}, "spec": {
            "initContainers": [{"name": "setup"}],
            "containers": [{"name": "app", "resources": {"requests": {"cpu": "200m"}}}]}});
        set_defaults(&range, &mut p);
        assert_eq!(
            p["spec"]["containers"][0]["resources"],
            json!({"requests": {"cpu": "200m", "memory": "128Mi"},
                   "limits": {"cpu": "500m", "memory": "256Mi"}})
        );
        assert_eq!(
            p["spec"]["initContainers"][0]["resources"]["requests"],
            json!({"cpu": "100m", "memory": "128Mi"})
        );
        assert_eq!(
            p["metadata"]["annotations"][ANNOTATION],
            "LimitRanger plugin set: memory request for container app; cpu, memory limit for container app; \
             cpu, memory request for init container setup; cpu, memory limit for init container setup"
        );
    }

    #[test]
    fn nothing_to_set_leaves_the_pod_alone() {
        let range = limit_range(json!([{"type": "Container", "default": {"cpu": "1"}}]));
        let original = pod(json!([{"name": "a", "resources": {"limits": {"cpu": "2"}}}]));
        let mut p = original.clone();
        set_defaults(&range, &mut p);
        assert_eq!(p, original);
    }

    #[rstest]
    #[case::below_min_request(
        json!({"type": "Container", "min": {"cpu": "100m"}}),
        json!({"requests": {"cpu": "50m"}}),
        Some("minimum cpu usage per Container is 100m, but request is 50m")
    )]
    #[case::no_request_under_min(
        json!({"type": "Container", "min": {"memory": "1Mi"}}),
        json!({}),
        Some("minimum memory usage per Container is 1Mi.  No request is specified")
    )]
    #[case::limit_below_min(
        json!({"type": "Container", "min": {"cpu": "100m"}}),
        json!({"requests": {"cpu": "200m"}, "limits": {"cpu": "50m"}}),
        Some("minimum cpu usage per Container is 100m, but limit is 50m")
    )]
    #[case::over_max_limit(
        json!({"type": "Container", "max": {"cpu": "500m"}}),
        json!({"requests": {"cpu": "100m"}, "limits": {"cpu": "1"}}),
        Some("maximum cpu usage per Container is 500m, but limit is 1")
    )]
    #[case::no_limit_under_max(
        json!({"type": "Container", "max": {"cpu": "500m"}}),
        json!({"requests": {"cpu": "100m"}}),
        Some("maximum cpu usage per Container is 500m.  No limit is specified")
    )]
    #[case::ratio_exceeded(
        json!({"type": "Container", "maxLimitRequestRatio": {"memory": "2"}}),
        json!({"requests": {"memory": "100Mi"}, "limits": {"memory": "300Mi"}}),
        Some("memory max limit to request ratio per Container is 2, but provided ratio is 3.000000")
    )]
    #[case::ratio_without_request(
        json!({"type": "Container", "maxLimitRequestRatio": {"cpu": "4"}}),
        json!({"limits": {"cpu": "1"}}),
        Some("cpu max limit to request ratio per Container is 4, but no request is specified or request is 0")
    )]
    #[case::within_bounds(
        json!({"type": "Container", "min": {"cpu": "100m"}, "max": {"cpu": "1"},
               "maxLimitRequestRatio": {"cpu": "4"}}),
        json!({"requests": {"cpu": "250m"}, "limits": {"cpu": "1"}}),
        None
    )]
    fn container_items_bound_each_container(
        #[case] item: Value,
        #[case] resources: Value,
        #[case] expected: Option<&str>,
    ) {
        let p = pod(json!([{"name": "app", "resources": resources}]));
        let errors = pod_errors(&limit_range(json!([item])), &p);
        assert_eq!(aggregate(errors).as_deref(), expected);
    }

    #[test]
    fn a_pod_item_bounds_the_sum_with_sidecars_and_init_containers_as_a_floor() {
        let p = json!({"spec": {
            "initContainers": [
                {"name": "sidecar", "restartPolicy": "Always",
                 "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "100m"}}},
                {"name": "setup", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "2"}}}],
            "containers": [
                {"name": "a", "resources": {"requests": {"cpu": "300m"}, "limits": {"cpu": "300m"}}},
                {"name": "b", "resources": {"requests": {"cpu": "200m"}, "limits": {"cpu": "200m"}}}]}});
        let (requests, limits) = pod_requests_and_limits(&p);
        // The sidecar and the containers: 600m; the setup container with the sidecar: 2100m.
        assert_eq!(requests["cpu"].canonical(), "2100m");
        assert_eq!(limits["cpu"].canonical(), "2100m");
        let range = limit_range(json!([{"type": "Pod", "max": {"cpu": "1"}}]));
        assert_eq!(
            aggregate(pod_errors(&range, &p)).as_deref(),
            Some("maximum cpu usage per Pod is 1, but limit is 2100m")
        );
    }

    #[test]
    fn several_messages_read_as_an_aggregate_without_repeats() {
        let range = limit_range(json!([{"type": "Container", "min": {"cpu": "1"}}]));
        let p = pod(json!([{"name": "a"}, {"name": "b"}]));
        // Both containers fail the same way: one message, no brackets.
        assert_eq!(
            aggregate(pod_errors(&range, &p)).as_deref(),
            Some("minimum cpu usage per Container is 1.  No request is specified")
        );
        let range = limit_range(json!([{"type": "Container",
            "min": {"cpu": "1"}, "max": {"memory": "1Gi"}}]));
        assert_eq!(
            aggregate(pod_errors(&range, &pod(json!([{"name": "a"}])))).as_deref(),
            Some("[minimum cpu usage per Container is 1.  No request is specified, maximum memory usage per Container is 1Gi.  No limit is specified]")
        );
    }

    #[rstest]
    #[case::under_min(json!({"storage": "500Mi"}), Some("minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi"))]
    #[case::over_max(json!({"storage": "20Gi"}), Some("maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"))]
    #[case::within(json!({"storage": "5Gi"}), None)]
    fn a_claim_item_bounds_the_claims_requests(
        #[case] requests: Value,
        #[case] expected: Option<&str>,
    ) {
        let range = limit_range(json!([{"type": "PersistentVolumeClaim",
            "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}}]));
        let claim = json!({"spec": {"resources": {"requests": requests}}});
        assert_eq!(aggregate(claim_errors(&range, &claim)).as_deref(), expected);
    }
}
