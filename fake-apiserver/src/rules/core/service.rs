//! Services: `ValidateService`, `ValidateServiceUpdate` and `ValidateServiceStatusUpdate`
//! (`pkg/apis/core/validation/validation.go`), and what the service registry does around them
//! (`pkg/registry/core/service`): the strategy's `normalizeClusterIPs`, the REST storage's
//! `patchAllocatedValues`, and the allocation of cluster IPs and node ports on create.
//!
//! Allocation here is deterministic (the lowest free address or port) where the real allocator
//! picks at random; the ranges are the usual cluster's: `10.96.0.0/12` for cluster IPs and
//! `30000-32767` for node ports.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};

use serde_json::{json, Value};

use super::super::{port_name_errors, str_of};
use super::pod_spec::protocol_causes;
use crate::rules::validation::{
    is_dns1123_label, is_dns1123_subdomain, is_qualified_name, validate_labels, Cause,
    FieldErrorType,
};

/// The service cluster IP range (`--service-cluster-ip-range`).
pub const CLUSTER_IP_RANGE: &str = "10.96.0.0/12";
const NODE_PORT_MIN: i64 = 30000;
const NODE_PORT_MAX: i64 = 32767;
const MAX_CLIENT_IP_AFFINITY_SECONDS: i64 = 86400;

fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|s| (*s).to_string()).collect()
}

/// Go's `%#v` of a `[]string`, as upstream prints `spec.clusterIPs` in its errors.
fn go_string_slice(list: &[Value]) -> String {
    let items: Vec<String> = list
        .iter()
        .map(|v| crate::rules::validation::go_quote(v.as_str().unwrap_or_default()))
        .collect();
    format!("[]string{{{}}}", items.join(", "))
}

fn cluster_ips(spec: &Value) -> &[Value] {
    arr(spec, "clusterIPs")
}

/// `isHeadlessService`.
fn is_headless(spec: &Value) -> bool {
    matches!(cluster_ips(spec), [ip] if ip == "None")
}

fn service_type(spec: &Value) -> &str {
    str_of(spec, "type")
}

/// `apiservice.ExternallyAccessible`.
fn externally_accessible(spec: &Value) -> bool {
    matches!(service_type(spec), "LoadBalancer" | "NodePort")
        || (service_type(spec) == "ClusterIP" && !arr(spec, "externalIPs").is_empty())
}

/// `apiservice.NeedsHealthCheck`.
fn needs_health_check(spec: &Value) -> bool {
    service_type(spec) == "LoadBalancer" && str_of(spec, "externalTrafficPolicy") == "Local"
}

fn needs_cluster_ip(spec: &Value) -> bool {
    service_type(spec) != "ExternalName"
}

fn needs_node_port(spec: &Value) -> bool {
    match service_type(spec) {
        "NodePort" => true,
        "LoadBalancer" => spec["allocateLoadBalancerNodePorts"] != Value::Bool(false),
        _ => false,
    }
}

fn invalid_raw(field: impl std::fmt::Display, raw: String, detail: &str) -> Cause {
    Cause::new(FieldErrorType::Invalid, field, Some(raw), detail)
}

fn valid_ip(ip: &str, path: &str) -> Vec<Cause> {
    if ip.parse::<IpAddr>().is_ok() {
        return Vec::new();
    }
    vec![Cause::invalid_str(
        path,
        ip,
        "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
    )]
}

fn valid_cidr(cidr: &str, path: &str) -> Vec<Cause> {
    let ok = cidr.split_once('/').is_some_and(|(ip, bits)| {
        match (ip.parse::<IpAddr>(), bits.parse::<u8>()) {
            (Ok(IpAddr::V4(_)), Ok(b)) => b <= 32,
            (Ok(IpAddr::V6(_)), Ok(b)) => b <= 128,
            _ => false,
        }
    });
    if ok {
        return Vec::new();
    }
    vec![Cause::invalid_str(
        path,
        cidr,
        "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
    )]
}

/// `ValidateNonSpecialIP`.
pub fn non_special_ip(ip: &str, path: &str) -> Vec<Cause> {
    let Ok(parsed) = ip.parse::<IpAddr>() else {
        return vec![Cause::invalid_str(path, ip, "must be a valid IP address")];
    };
    let mut causes = Vec::new();
    if parsed.is_unspecified() {
        causes.push(Cause::invalid_str(
            path,
            ip,
            &format!("may not be unspecified ({ip})"),
        ));
    }
    if parsed.is_loopback() {
        causes.push(Cause::invalid_str(
            path,
            ip,
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ));
    }
    let link_local = match parsed {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => (v6.segments()[0] & 0xffc0) == 0xfe80,
    };
    if link_local {
        causes.push(Cause::invalid_str(
            path,
            ip,
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ));
    }
    let link_local_multicast = match parsed {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => (v6.segments()[0] & 0xff0f) == 0xff02,
    };
    if link_local_multicast {
        causes.push(Cause::invalid_str(
            path,
            ip,
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
    }
    causes
}

/// The spec as the real server validates it: `type`, `sessionAffinity` and the traffic
/// policies are always defaulted by then (`SetDefaults_Service`), and `clusterIPs` follows a lone
/// `clusterIP` (`normalizeClusterIPs`), so their absence is not an error here.
fn normalized(obj: &Value) -> Value {
    let mut spec = obj["spec"].clone();
    if !spec.is_object() {
        spec = json!({});
    }
    let absent = |spec: &Value, k: &str| spec.get(k).is_none_or(Value::is_null);
    if absent(&spec, "type") {
        spec["type"] = json!("ClusterIP");
    }
    if absent(&spec, "sessionAffinity") {
        spec["sessionAffinity"] = json!("None");
    }
    let kind = service_type(&spec).to_string();
    if matches!(kind.as_str(), "ClusterIP" | "NodePort" | "LoadBalancer")
        && absent(&spec, "internalTrafficPolicy")
    {
        spec["internalTrafficPolicy"] = json!("Cluster");
    }
    if externally_accessible(&spec) && absent(&spec, "externalTrafficPolicy") {
        spec["externalTrafficPolicy"] = json!("Cluster");
    }
    if kind == "LoadBalancer" && absent(&spec, "allocateLoadBalancerNodePorts") {
        spec["allocateLoadBalancerNodePorts"] = json!(true);
    }
    let ip = str_of(&spec, "clusterIP").to_string();
    if !ip.is_empty() && cluster_ips(&spec).is_empty() {
        spec["clusterIPs"] = json!([ip]);
    }
    spec
}

/// `ValidateService`.
pub fn create_causes(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let spec = &normalized(obj);
    let kind = service_type(spec);
    let ports = arr(spec, "ports");
    let headless = is_headless(spec);
    if ports.is_empty() && !headless && kind != "ExternalName" {
        causes.push(Cause::required("spec.ports", ""));
    }
    match kind {
        "LoadBalancer" | "NodePort" if headless => causes.push(Cause::invalid_str(
            "spec.clusterIPs[0]",
            "None",
            &format!("may not be set to 'None' for {kind} services"),
        )),
        "ExternalName" => {
            if !cluster_ips(spec).is_empty() {
                causes.push(Cause::forbidden(
                    "spec.clusterIPs",
                    "may not be set for ExternalName services",
                ));
            }
            if !arr(spec, "ipFamilies").is_empty() {
                causes.push(Cause::forbidden(
                    "spec.ipFamilies",
                    "may not be set for ExternalName services",
                ));
            }
            if spec.get("ipFamilyPolicy").is_some_and(|v| !v.is_null()) {
                causes.push(Cause::forbidden(
                    "spec.ipFamilyPolicy",
                    "may not be set for ExternalName services",
                ));
            }
            let name = str_of(spec, "externalName");
            let cname = name.strip_suffix('.').unwrap_or(name);
            if cname.is_empty() {
                causes.push(Cause::required("spec.externalName", ""));
            } else {
                for msg in is_dns1123_subdomain(cname) {
                    causes.push(Cause::invalid_str("spec.externalName", cname, &msg));
                }
            }
        }
        _ => {}
    }
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        causes.extend(service_port(port, ports.len() > 1, &mut names, i));
    }
    if let Some(selector) = spec.get("selector").filter(|v| !v.is_null()) {
        causes.extend(validate_labels(Some(selector), &"spec.selector"));
    }
    let affinity = str_of(spec, "sessionAffinity");
    match affinity {
        "" => causes.push(Cause::required("spec.sessionAffinity", "")),
        "ClientIP" => {
            let config = &spec["sessionAffinityConfig"];
            let at = "spec.sessionAffinityConfig";
            let when = "when session affinity type is ClientIP";
            if !config.is_object() {
                causes.push(Cause::required(at, when));
            } else if !config["clientIP"].is_object() {
                causes.push(Cause::required(format!("{at}.clientIP"), when));
            } else {
                match config["clientIP"]["timeoutSeconds"].as_i64() {
                    None => causes.push(Cause::required(
                        format!("{at}.clientIP.timeoutSeconds"),
                        when,
                    )),
                    Some(t) if t <= 0 || t > MAX_CLIENT_IP_AFFINITY_SECONDS => {
                        causes.push(Cause::invalid(
                            format!("{at}.clientIP.timeoutSeconds"),
                            &Value::from(t),
                            &format!(
                                "must be greater than 0 and less than {MAX_CLIENT_IP_AFFINITY_SECONDS}"
                            ),
                        ))
                    }
                    Some(_) => {}
                }
            }
        }
        "None" => {
            if spec
                .get("sessionAffinityConfig")
                .is_some_and(|v| !v.is_null())
            {
                causes.push(Cause::forbidden(
                    "spec.sessionAffinityConfig",
                    "must not be set when session affinity is None",
                ));
            }
        }
        other => causes.push(Cause::not_supported(
            "spec.sessionAffinity",
            &Value::from(other),
            &strings(&["ClientIP", "None"]),
        )),
    }
    causes.extend(cluster_ips_related(spec));
    for (i, ip) in arr(spec, "externalIPs").iter().enumerate() {
        let ip = ip.as_str().unwrap_or_default();
        let at = format!("spec.externalIPs[{i}]");
        let errs = valid_ip(ip, &at);
        if errs.is_empty() {
            causes.extend(non_special_ip(ip, &at));
        } else {
            causes.extend(errs);
        }
    }
    match kind {
        "" => causes.push(Cause::required("spec.type", "")),
        "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalName" => {}
        other => causes.push(Cause::not_supported(
            "spec.type",
            &Value::from(other),
            &strings(&["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]),
        )),
    }
    if kind == "ClusterIP" {
        for (i, port) in ports.iter().enumerate() {
            if port["nodePort"].as_i64().unwrap_or(0) != 0 {
                causes.push(Cause::forbidden(
                    format!("spec.ports[{i}].nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    let mut node_ports = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let np = port["nodePort"].as_i64().unwrap_or(0);
        if np == 0 {
            continue;
        }
        if !node_ports.insert((str_of(port, "protocol"), np)) {
            causes.push(Cause::duplicate(
                format!("spec.ports[{i}].nodePort"),
                &Value::from(np),
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let protocol = str_of(port, "protocol");
        let number = port["port"].as_i64().unwrap_or(0);
        if !seen.insert((protocol, number)) {
            // Upstream reports the key struct with `%#v`.
            let raw = format!(
                "core.ServicePort{{Name:\"\", Protocol:{}, AppProtocol:(*string)(nil), Port:{number}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:\"\"}}, NodePort:0}}",
                crate::rules::validation::go_quote(protocol)
            );
            causes.push(Cause::new(
                FieldErrorType::Duplicate,
                format!("spec.ports[{i}]"),
                Some(raw),
                "",
            ));
        }
    }
    let ranges = arr(spec, "loadBalancerSourceRanges");
    if !ranges.is_empty() {
        let at = "spec.LoadBalancerSourceRanges";
        if kind != "LoadBalancer" {
            causes.push(Cause::forbidden(
                at,
                "may only be used when `type` is 'LoadBalancer'",
            ));
        }
        for (i, r) in ranges.iter().enumerate() {
            causes.extend(valid_cidr(
                r.as_str().unwrap_or_default().trim(),
                &format!("{at}[{i}]"),
            ));
        }
    }
    let allocate = spec
        .get("allocateLoadBalancerNodePorts")
        .filter(|v| !v.is_null());
    if allocate.is_some() && kind != "LoadBalancer" {
        causes.push(Cause::forbidden(
            "spec.allocateLoadBalancerNodePorts",
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    if kind == "LoadBalancer" && allocate.is_none() {
        causes.push(Cause::required("allocateLoadBalancerNodePorts", ""));
    }
    causes.extend(load_balancer_class(None, spec));
    causes.extend(external_traffic_policy(spec));
    match spec.get("internalTrafficPolicy").and_then(Value::as_str) {
        None if matches!(kind, "NodePort" | "LoadBalancer" | "ClusterIP") => {
            causes.push(Cause::required("spec.internalTrafficPolicy", ""));
        }
        Some(p) if !matches!(p, "Cluster" | "Local") => causes.push(Cause::not_supported(
            "spec.internalTrafficPolicy",
            &Value::from(p),
            &strings(&["Cluster", "Local"]),
        )),
        _ => {}
    }
    causes
}

/// `validateServicePort`.
fn service_port<'a>(
    port: &'a Value,
    require_name: bool,
    names: &mut BTreeSet<&'a str>,
    i: usize,
) -> Vec<Cause> {
    let mut causes = Vec::new();
    let at = format!("spec.ports[{i}]");
    let name = str_of(port, "name");
    if require_name && name.is_empty() {
        causes.push(Cause::required(format!("{at}.name"), ""));
    } else if !name.is_empty() {
        for msg in is_dns1123_label(name) {
            causes.push(Cause::invalid_str(format!("{at}.name"), name, &msg));
        }
        if !names.insert(name) {
            causes.push(Cause::duplicate(format!("{at}.name"), &Value::from(name)));
        }
    }
    let number = port["port"].as_i64().unwrap_or(0);
    if !(1..=65535).contains(&number) {
        causes.push(Cause::invalid(
            format!("{at}.port"),
            &Value::from(number),
            "must be between 1 and 65535, inclusive",
        ));
    }
    causes.extend(protocol_causes(
        port.get("protocol")
            .and_then(Value::as_str)
            .unwrap_or("TCP"),
        &format!("{at}.protocol"),
    ));
    match port.get("targetPort") {
        Some(Value::String(name)) => {
            for msg in port_name_errors(name) {
                causes.push(Cause::invalid_str(format!("{at}.targetPort"), name, &msg));
            }
        }
        Some(Value::Number(n)) => {
            let n = n.as_i64().unwrap_or(0);
            if !(1..=65535).contains(&n) {
                causes.push(Cause::invalid(
                    format!("{at}.targetPort"),
                    &Value::from(n),
                    "must be between 1 and 65535, inclusive",
                ));
            }
        }
        _ => {}
    }
    if let Some(app) = port.get("appProtocol").and_then(Value::as_str) {
        for msg in is_qualified_name(app) {
            causes.push(Cause::invalid_str(format!("{at}.appProtocol"), app, &msg));
        }
    }
    causes
}

/// `ValidateServiceClusterIPsRelatedFields`.
fn cluster_ips_related(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    if service_type(spec) == "ExternalName" {
        return causes;
    }
    let ips = cluster_ips(spec);
    let raw = || go_string_slice(ips);
    let cluster_ip = str_of(spec, "clusterIP");
    if !cluster_ip.is_empty() {
        match ips.first() {
            None => causes.push(Cause::required("spec.clusterIPs", "")),
            Some(first) if first != cluster_ip => causes.push(invalid_raw(
                "spec.clusterIPs",
                raw(),
                "first value must match `clusterIP`",
            )),
            _ => {}
        }
    } else if !ips.is_empty() {
        causes.push(invalid_raw(
            "spec.clusterIPs",
            raw(),
            "must be empty when `clusterIP` is not specified",
        ));
    }
    let mut families = BTreeSet::new();
    for (i, family) in arr(spec, "ipFamilies").iter().enumerate() {
        let f = family.as_str().unwrap_or_default();
        if !matches!(f, "IPv4" | "IPv6") {
            causes.push(Cause::not_supported(
                format!("spec.ipFamilies[{i}]"),
                &Value::from(f),
                &strings(&["IPv4", "IPv6"]),
            ));
        }
        if !families.insert(f) {
            causes.push(Cause::duplicate(
                format!("spec.ipFamilies[{i}]"),
                &Value::from(f),
            ));
        }
    }
    if let Some(policy) = spec.get("ipFamilyPolicy").and_then(Value::as_str) {
        if !matches!(
            policy,
            "SingleStack" | "PreferDualStack" | "RequireDualStack"
        ) {
            causes.push(Cause::not_supported(
                "spec.ipFamilyPolicy",
                &Value::from(policy),
                &strings(&["PreferDualStack", "RequireDualStack", "SingleStack"]),
            ));
        }
    }
    let mut invalid = false;
    for (i, ip) in ips.iter().enumerate() {
        let ip = ip.as_str().unwrap_or_default();
        if i == 0 && ip == "None" {
            if ips.len() > 1 {
                invalid = true;
                causes.push(invalid_raw(
                    "spec.clusterIPs",
                    raw(),
                    "'None' must be the first and only value",
                ));
            }
            continue;
        }
        let errs = valid_ip(ip, &format!("spec.clusterIPs[{i}]"));
        invalid |= !errs.is_empty();
        causes.extend(errs);
    }
    if ips.len() > 2 {
        causes.push(invalid_raw(
            "spec.clusterIPs",
            raw(),
            "may only hold up to 2 values",
        ));
    }
    if invalid {
        return causes;
    }
    if ips.len() > 1 {
        let v6: Vec<bool> = ips
            .iter()
            .map(|ip| ip.as_str().unwrap_or_default().contains(':'))
            .collect();
        if v6.len() != 2 || v6[0] == v6[1] {
            causes.push(invalid_raw(
                "spec.clusterIPs",
                raw(),
                "may specify no more than one IP for each IP family",
            ));
        }
    }
    if !is_headless(spec) {
        let fams = arr(spec, "ipFamilies");
        for (i, ip) in ips.iter().enumerate().take(fams.len()) {
            let ip = ip.as_str().unwrap_or_default();
            let is_v6 = ip.contains(':');
            match fams[i].as_str() {
                Some("IPv4") if is_v6 => causes.push(Cause::invalid_str(
                    format!("spec.clusterIPs[{i}]"),
                    ip,
                    &format!("expected an IPv4 value as indicated by `ipFamilies[{i}]`"),
                )),
                Some("IPv6") if !is_v6 => causes.push(Cause::invalid_str(
                    format!("spec.clusterIPs[{i}]"),
                    ip,
                    &format!("expected an IPv6 value as indicated by `ipFamilies[{i}]`"),
                )),
                _ => {}
            }
        }
    }
    causes
}

/// `validateLoadBalancerClassField`.
fn load_balancer_class(old: Option<&Value>, spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let class = spec.get("loadBalancerClass").filter(|v| !v.is_null());
    if let Some(old) = old {
        if service_type(old) == "LoadBalancer"
            && service_type(spec) == "LoadBalancer"
            && old.get("loadBalancerClass").filter(|v| !v.is_null()) != class
        {
            causes.push(Cause::invalid(
                "spec.loadBalancerClass",
                class.unwrap_or(&Value::Null),
                "may not change once set",
            ));
        }
    }
    if service_type(spec) == "LoadBalancer" {
        if let Some(c) = class.and_then(Value::as_str) {
            for msg in is_qualified_name(c) {
                causes.push(Cause::invalid_str("spec.loadBalancerClass", c, &msg));
            }
        }
    } else if class.is_some() {
        causes.push(Cause::forbidden(
            "spec.loadBalancerClass",
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    causes
}

/// `validateServiceExternalTrafficPolicy`.
fn external_traffic_policy(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let policy = str_of(spec, "externalTrafficPolicy");
    if !externally_accessible(spec) {
        if !policy.is_empty() {
            causes.push(Cause::invalid_str(
                "spec.externalTrafficPolicy",
                policy,
                "may only be set for externally-accessible services",
            ));
        }
    } else if policy.is_empty() {
        causes.push(Cause::required("spec.externalTrafficPolicy", ""));
    } else if !matches!(policy, "Cluster" | "Local") {
        causes.push(Cause::not_supported(
            "spec.externalTrafficPolicy",
            &Value::from(policy),
            &strings(&["Cluster", "Local"]),
        ));
    }
    let hc = spec["healthCheckNodePort"].as_i64().unwrap_or(0);
    if !needs_health_check(spec) {
        if hc != 0 {
            causes.push(Cause::invalid(
                "spec.healthCheckNodePort",
                &Value::from(hc),
                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
            ));
        }
    } else if hc == 0 {
        causes.push(Cause::required("spec.healthCheckNodePort", ""));
    } else if !(1..=65535).contains(&hc) {
        causes.push(Cause::invalid(
            "spec.healthCheckNodePort",
            &Value::from(hc),
            "must be between 1 and 65535, inclusive",
        ));
    }
    causes
}

/// `ValidateServiceUpdate`: cluster IPs and families may not change once set (upgrades and
/// downgrades of dual-stack aside), nor the load balancer class or health check port; then
/// `ValidateService` of the new object.
pub fn update_causes(old: &Value, new: &Value) -> Vec<Cause> {
    let (os, ns) = (&normalized(old), &normalized(new));
    let mut causes = Vec::new();
    let external = service_type(os) == "ExternalName" || service_type(ns) == "ExternalName";
    if !(external || is_headless(os) && is_headless(ns)) {
        // `validateUpgradeDowngradeClusterIPs`.
        let (o, n) = (cluster_ips(os), cluster_ips(ns));
        let raw = go_string_slice(n);
        let changed = |field: String| invalid_raw(field, raw.clone(), "may not change once set");
        if o.len() == n.len() {
            for (i, ip) in o.iter().enumerate() {
                if ip != &n[i] {
                    causes.push(changed(format!("spec.clusterIPs[{i}]")));
                }
            }
        } else if o.len() > n.len() {
            if n.is_empty() {
                causes.push(invalid_raw(
                    "spec.clusterIPs[0]",
                    raw.clone(),
                    "primary clusterIP can not be unset",
                ));
            }
            if !o.is_empty() && !n.is_empty() && n[0] != o[0] {
                causes.push(changed("spec.clusterIPs[0]".into()));
            }
            if n.len() == 1 && str_of(ns, "ipFamilyPolicy") != "SingleStack" {
                causes.push(Cause::invalid(
                    "spec.ipFamilyPolicy",
                    ns.get("ipFamilyPolicy").unwrap_or(&Value::Null),
                    "must be set to 'SingleStack' when releasing the secondary clusterIP",
                ));
            }
        } else if !o.is_empty() && n[0] != o[0] {
            causes.push(changed("spec.clusterIPs[0]".into()));
        }
    }
    if !external && is_headless(os) == is_headless(ns) && !is_headless(ns) {
        // `validateUpgradeDowngradeIPFamilies` (the common case: same length).
        let (o, n) = (arr(os, "ipFamilies"), arr(ns, "ipFamilies"));
        if o.len() == n.len() {
            for (i, f) in o.iter().enumerate() {
                if f != &n[i] {
                    causes.push(invalid_raw(
                        "spec.ipFamilies[0]",
                        go_family_slice(n),
                        "may not change once set",
                    ));
                }
            }
        }
    }
    causes.extend(
        load_balancer_class(Some(os), ns)
            .into_iter()
            .filter(|c| c.message.ends_with("may not change once set")),
    );
    if needs_health_check(os)
        && needs_health_check(ns)
        && os["healthCheckNodePort"] != ns["healthCheckNodePort"]
    {
        causes.push(Cause::forbidden(
            "spec.healthCheckNodePort",
            "field is immutable",
        ));
    }
    causes.extend(create_causes(new));
    causes
}

fn go_family_slice(list: &[Value]) -> String {
    let items: Vec<String> = list
        .iter()
        .map(|v| crate::rules::validation::go_quote(v.as_str().unwrap_or_default()))
        .collect();
    format!("[]core.IPFamily{{{}}}", items.join(", "))
}

/// `ValidateServiceStatusUpdate`: load balancer ingress only on `LoadBalancer` services, with
/// valid IPs and host names.
pub fn status_causes(new: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let ingress = arr(&new["status"]["loadBalancer"], "ingress");
    let at = "status.loadBalancer.ingress";
    if service_type(&new["spec"]) != "LoadBalancer" && !ingress.is_empty() {
        causes.push(Cause::forbidden(
            at,
            "may only be used when `spec.type` is 'LoadBalancer'",
        ));
        return causes;
    }
    for (i, ing) in ingress.iter().enumerate() {
        let ip = str_of(ing, "ip");
        if !ip.is_empty() {
            causes.extend(valid_ip(ip, &format!("{at}[{i}].ip")));
        }
        let mode = ing.get("ipMode").and_then(Value::as_str);
        match mode {
            None if !ip.is_empty() => causes.push(Cause::required(
                format!("{at}[{i}].ipMode"),
                "must be specified when `ip` is set",
            )),
            Some(_) if ip.is_empty() => causes.push(Cause::forbidden(
                format!("{at}[{i}].ipMode"),
                "may not be specified when `ip` is not set",
            )),
            Some(m) if !matches!(m, "VIP" | "Proxy") => causes.push(Cause::not_supported(
                format!("{at}[{i}].ipMode"),
                &Value::from(m),
                &strings(&["Proxy", "VIP"]),
            )),
            _ => {}
        }
        let host = str_of(ing, "hostname");
        if !host.is_empty() {
            for msg in is_dns1123_subdomain(host) {
                causes.push(Cause::invalid_str(
                    format!("{at}[{i}].hostname"),
                    host,
                    &msg,
                ));
            }
            if host.parse::<IpAddr>().is_ok() {
                causes.push(Cause::invalid_str(
                    format!("{at}[{i}].hostname"),
                    host,
                    "must be a DNS name, not an IP address",
                ));
            }
        }
    }
    causes
}

/// What the service REST storage does to an update before validating it: the strategy's
/// `normalizeClusterIPs`, then `patchAllocatedValues` (a client that leaves out the allocated
/// cluster IPs, node ports or health check port keeps them).
pub fn prepare_update(old: &Value, new: &mut Value) {
    let (os, ns) = (&old["spec"], &mut new["spec"]);
    if !ns.is_object() {
        return;
    }
    // `normalizeClusterIPs`.
    let same_ips = os.get("clusterIPs") == ns.get("clusterIPs");
    if !cluster_ips(os).is_empty()
        && cluster_ips(ns).is_empty()
        && str_of(os, "clusterIP") == str_of(ns, "clusterIP")
    {
        ns["clusterIPs"] = os["clusterIPs"].clone();
    }
    if str_of(os, "clusterIP") != str_of(ns, "clusterIP") {
        if !str_of(os, "clusterIP").is_empty() && str_of(ns, "clusterIP").is_empty() && same_ips {
            if let Some(m) = ns.as_object_mut() {
                m.remove("clusterIPs");
            }
        }
        let ip = str_of(ns, "clusterIP").to_string();
        if !ip.is_empty() && same_ips {
            ns["clusterIPs"] = json!([ip]);
        }
    }
    // `patchAllocatedValues`.
    if needs_cluster_ip(os) && needs_cluster_ip(ns) {
        if str_of(ns, "clusterIP").is_empty() && !str_of(os, "clusterIP").is_empty() {
            ns["clusterIP"] = os["clusterIP"].clone();
        }
        if cluster_ips(ns).is_empty() && !cluster_ips(os).is_empty() {
            ns["clusterIPs"] = os["clusterIPs"].clone();
        }
    }
    if needs_node_port(os) && needs_node_port(ns) {
        let used = |spec: &Value| -> BTreeSet<i64> {
            arr(spec, "ports")
                .iter()
                .filter_map(|p| p["nodePort"].as_i64())
                .filter(|n| *n != 0)
                .collect()
        };
        let old_used = used(os);
        let in_both: BTreeSet<i64> = old_used.intersection(&used(ns)).copied().collect();
        let by_name: Vec<(String, i64)> = arr(os, "ports")
            .iter()
            .map(|p| {
                (
                    str_of(p, "name").to_string(),
                    p["nodePort"].as_i64().unwrap_or(0),
                )
            })
            .collect();
        if let Some(ports) = ns.get_mut("ports").and_then(Value::as_array_mut) {
            for p in ports.iter_mut() {
                if p["nodePort"].as_i64().unwrap_or(0) != 0 {
                    continue;
                }
                let name = str_of(p, "name").to_string();
                let old_value = by_name
                    .iter()
                    .rev()
                    .find(|(n, _)| *n == name)
                    .map_or(0, |(_, v)| *v);
                if old_value != 0 && !in_both.contains(&old_value) && p.is_object() {
                    p["nodePort"] = json!(old_value);
                }
            }
        }
    }
    if needs_health_check(os)
        && needs_health_check(ns)
        && ns["healthCheckNodePort"].as_i64().unwrap_or(0) == 0
    {
        ns["healthCheckNodePort"] = os["healthCheckNodePort"].clone();
    }
}

/// The service REST storage's create-time allocation (`allocateCreate`): a cluster IP for every
/// service but `ExternalName` ones (a requested one must be in range and free; `None` makes it
/// headless), `clusterIPs` from `clusterIP`, node ports for `NodePort` and `LoadBalancer` services
/// (requested ones in `30000-32767` and free) and a health check port for `LoadBalancer` services
/// with the `Local` traffic policy. `existing` are the stored services.
pub fn allocate(service: &mut Value, existing: &[Value]) -> Result<(), Vec<Cause>> {
    let Some(spec) = service.get_mut("spec").filter(|s| s.is_object()) else {
        return Ok(());
    };
    if needs_cluster_ip(spec) {
        let requested = str_of(spec, "clusterIP").to_string();
        if !requested.is_empty() && cluster_ips(spec).is_empty() {
            spec["clusterIPs"] = json!([requested]);
        }
        let used: BTreeSet<Ipv4Addr> = existing
            .iter()
            .flat_map(|s| arr(&s["spec"], "clusterIPs").iter())
            .filter_map(|ip| ip.as_str().and_then(|ip| ip.parse().ok()))
            .collect();
        let (base, size) = (u32::from(Ipv4Addr::new(10, 96, 0, 0)), 1u32 << 20);
        if requested.is_empty() {
            let free = (10..size - 1)
                .map(|offset| Ipv4Addr::from(base + offset))
                .find(|ip| !used.contains(ip));
            if let Some(ip) = free {
                spec["clusterIP"] = json!(ip.to_string());
                spec["clusterIPs"] = json!([ip.to_string()]);
            }
        } else if requested != "None" {
            if let Ok(ip) = requested.parse::<Ipv4Addr>() {
                let offset = u32::from(ip).wrapping_sub(base);
                let detail = if offset == 0 || offset >= size - 1 {
                    Some(format!(
                        "failed to allocate IP {ip}: the provided IP ({ip}) is not in the valid range. The range of valid IPs is {CLUSTER_IP_RANGE}"
                    ))
                } else if used.contains(&ip) {
                    Some(format!(
                        "failed to allocate IP {ip}: provided IP is already allocated"
                    ))
                } else {
                    None
                };
                if let Some(detail) = detail {
                    return Err(vec![invalid_raw(
                        "spec.clusterIPs",
                        go_string_slice(cluster_ips(spec)),
                        &detail,
                    )]);
                }
            }
        }
    }
    let mut used: BTreeSet<i64> = existing
        .iter()
        .flat_map(|s| {
            arr(&s["spec"], "ports")
                .iter()
                .filter_map(|p| p["nodePort"].as_i64())
                .chain(s["spec"]["healthCheckNodePort"].as_i64())
        })
        .filter(|p| *p != 0)
        .collect();
    let mut causes = Vec::new();
    if needs_node_port(spec) {
        let mut mine = BTreeSet::new();
        if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
            for (i, p) in ports.iter_mut().enumerate() {
                let requested = p["nodePort"].as_i64().unwrap_or(0);
                if requested == 0 {
                    continue;
                }
                let at = format!("spec.ports[{i}].nodePort");
                if !(NODE_PORT_MIN..=NODE_PORT_MAX).contains(&requested) {
                    causes.push(Cause::invalid(
                        at,
                        &Value::from(requested),
                        &format!("provided port is not in the valid range. The range of valid ports is {NODE_PORT_MIN}-{NODE_PORT_MAX}"),
                    ));
                } else if used.contains(&requested) && !mine.contains(&requested) {
                    causes.push(Cause::invalid(
                        at,
                        &Value::from(requested),
                        "provided port is already allocated",
                    ));
                } else {
                    used.insert(requested);
                    mine.insert(requested);
                }
            }
            for p in ports.iter_mut().filter(|p| p.is_object()) {
                if p["nodePort"].as_i64().unwrap_or(0) == 0 {
                    if let Some(free) = (NODE_PORT_MIN..=NODE_PORT_MAX).find(|n| !used.contains(n))
                    {
                        used.insert(free);
                        p["nodePort"] = json!(free);
                    }
                }
            }
        }
    }
    if needs_health_check(spec) && spec["healthCheckNodePort"].as_i64().unwrap_or(0) == 0 {
        if let Some(free) = (NODE_PORT_MIN..=NODE_PORT_MAX).find(|n| !used.contains(n)) {
            spec["healthCheckNodePort"] = json!(free);
        }
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(causes)
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::{json, Value};

    use super::*;

    /// A defaulted, allocated ClusterIP service with `extra` merged into its spec.
    fn svc(extra: Value) -> Value {
        let mut spec = json!({"type": "ClusterIP", "sessionAffinity": "None",
            "internalTrafficPolicy": "Cluster", "ipFamilyPolicy": "SingleStack",
            "ipFamilies": ["IPv4"], "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
            "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}]});
        for (k, v) in extra.as_object().into_iter().flatten() {
            spec[k] = v.clone();
        }
        json!({"metadata": {"name": "s"}, "spec": spec})
    }

    use crate::rules::validation::error_texts as texts;

    #[rstest]
    // ValidateService
    #[case::valid(svc(json!({})), vec![])]
    #[case::no_ports(svc(json!({"ports": []})), vec!["spec.ports: Required value"])]
    #[case::node_port_on_cluster_ip(svc(json!({"ports": [{"port": 80, "protocol": "TCP", "targetPort": 80, "nodePort": 30001}]})),
        vec!["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"])]
    #[case::duplicate_port(svc(json!({"ports": [{"name": "a", "port": 80, "protocol": "TCP", "targetPort": 80}, {"name": "b", "port": 80, "protocol": "TCP", "targetPort": 81}]})),
        vec!["spec.ports[1]: Duplicate value: core.ServicePort{Name:\"\", Protocol:\"TCP\", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}, NodePort:0}"])]
    #[case::unnamed_ports(svc(json!({"ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}, {"name": "b", "port": 81, "protocol": "TCP", "targetPort": 81}]})),
        vec!["spec.ports[0].name: Required value"])]
    #[case::target_port_name(svc(json!({"ports": [{"port": 80, "protocol": "TCP", "targetPort": "Web"}]})),
        vec!["spec.ports[0].targetPort: Invalid value: \"Web\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"])]
    #[case::selector(svc(json!({"selector": {"app": "a b"}})),
        vec!["spec.selector: Invalid value: \"a b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"])]
    #[case::affinity(svc(json!({"sessionAffinity": "Sticky"})),
        vec!["spec.sessionAffinity: Unsupported value: \"Sticky\": supported values: \"ClientIP\", \"None\""])]
    #[case::affinity_timeout(svc(json!({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 0}}})),
        vec!["spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and less than 86400"])]
    #[case::external_name_required(json!({"metadata": {"name": "s"}, "spec": {"type": "ExternalName", "sessionAffinity": "None"}}),
        vec!["spec.externalName: Required value"])]
    #[case::external_name_ok(json!({"metadata": {"name": "s"}, "spec": {"type": "ExternalName", "externalName": "example.com.", "sessionAffinity": "None"}}), vec![])]
    #[case::external_name_with_ip(json!({"metadata": {"name": "s"}, "spec": {"type": "ExternalName", "externalName": "example.com", "clusterIP": "10.96.0.3", "clusterIPs": ["10.96.0.3"], "sessionAffinity": "None"}}),
        vec!["spec.clusterIPs: Forbidden: may not be set for ExternalName services"])]
    #[case::headless_node_port(svc(json!({"type": "NodePort", "clusterIP": "None", "clusterIPs": ["None"], "externalTrafficPolicy": "Cluster"})),
        vec!["spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services"])]
    #[case::bad_cluster_ip(svc(json!({"clusterIP": "10.96.0.300", "clusterIPs": ["10.96.0.300"]})),
        vec!["spec.clusterIPs[0]: Invalid value: \"10.96.0.300\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"])]
    #[case::external_ip_loopback(svc(json!({"externalIPs": ["127.0.0.1"], "externalTrafficPolicy": "Cluster"})),
        vec!["spec.externalIPs[0]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)"])]
    #[case::source_ranges(svc(json!({"loadBalancerSourceRanges": ["10.0.0.0/8"]})),
        vec!["spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'"])]
    #[case::traffic_policy(svc(json!({"externalTrafficPolicy": "Local"})),
        vec!["spec.externalTrafficPolicy: Invalid value: \"Local\": may only be set for externally-accessible services"])]
    #[case::type_unknown(svc(json!({"type": "Magic"})),
        vec!["spec.type: Unsupported value: \"Magic\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\""])]
    fn services(#[case] svc: Value, #[case] expected: Vec<&str>) {
        assert_eq!(texts(create_causes(&svc)), expected);
    }

    #[rstest]
    // ValidateServiceUpdate after normalizeClusterIPs and patchAllocatedValues.
    #[case::unchanged(json!({}), vec![])]
    #[case::cluster_ip_changed(json!({"clusterIP": "10.96.0.99"}),
        vec!["spec.clusterIPs[0]: Invalid value: []string{\"10.96.0.99\"}: may not change once set"])]
    #[case::cluster_ip_left_out(json!({"clusterIP": null, "clusterIPs": null}), vec![])]
    fn service_updates(#[case] change: Value, #[case] expected: Vec<&str>) {
        let old = svc(json!({}));
        let mut new = old.clone();
        for (k, v) in change.as_object().into_iter().flatten() {
            match v {
                Value::Null => {
                    new["spec"].as_object_mut().unwrap().remove(k);
                }
                v => new["spec"][k] = v.clone(),
            }
        }
        prepare_update(&old, &mut new);
        assert_eq!(texts(update_causes(&old, &new)), expected);
    }

    #[test]
    fn allocation_gives_cluster_ips_and_node_ports_and_refuses_taken_or_out_of_range_ones() {
        let mut first = json!({"spec": {"type": "NodePort", "ports": [{"port": 80}]}});
        allocate(&mut first, &[]).unwrap();
        assert_eq!(first["spec"]["clusterIP"], "10.96.0.10");
        assert_eq!(first["spec"]["clusterIPs"], json!(["10.96.0.10"]));
        assert_eq!(first["spec"]["ports"][0]["nodePort"], 30000);

        let mut second =
            json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30000}]}});
        let err = allocate(&mut second, std::slice::from_ref(&first)).unwrap_err();
        assert_eq!(
            texts(err),
            vec![
                "spec.ports[0].nodePort: Invalid value: 30000: provided port is already allocated"
            ]
        );
        let mut low =
            json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]}});
        assert_eq!(
            texts(allocate(&mut low, &[]).unwrap_err()),
            vec!["spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767"]
        );
        let mut taken = json!({"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10"}});
        assert_eq!(
            texts(allocate(&mut taken, std::slice::from_ref(&first)).unwrap_err()),
            vec!["spec.clusterIPs: Invalid value: []string{\"10.96.0.10\"}: failed to allocate IP 10.96.0.10: provided IP is already allocated"]
        );
        let mut headless = json!({"spec": {"clusterIP": "None", "type": "ClusterIP"}});
        allocate(&mut headless, &[]).unwrap();
        assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
        let mut external = json!({"spec": {"type": "ExternalName", "externalName": "a.b"}});
        allocate(&mut external, &[]).unwrap();
        assert!(external["spec"].get("clusterIP").is_none());
    }
}
