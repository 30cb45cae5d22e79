//! Rules of `networking.k8s.io/v1` NetworkPolicies, Ingresses and IngressClasses, from
//! `pkg/apis/networking/validation/validation.go`.

use std::net::IpAddr;

use serde_json::Value;

use super::{port_name_errors, selector, str_of, Target};
use crate::rules::validation::{
    go_quote, is_dns1035_label, is_dns1123_label, is_dns1123_subdomain, regex_error,
    validate_path_segment_name, Cause,
};

const PORT_RANGE: &str = "must be between 1 and 65535, inclusive";

fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The causes of creating a `networking.k8s.io` object of `kind` (beyond metadata).
pub fn create_causes(kind: &str, obj: &Value) -> Vec<Cause> {
    match kind {
        "NetworkPolicy" => network_policy_spec(&obj["spec"]),
        "Ingress" => {
            let mut causes = ingress_spec(&obj["spec"]);
            // `ValidateIngressCreate`: the legacy class annotation must agree with the field.
            let annotation = obj["metadata"]["annotations"]["kubernetes.io/ingress.class"].as_str();
            let class = obj["spec"]["ingressClassName"].as_str();
            if let (Some(a), Some(c)) = (annotation, class) {
                if a != c {
                    causes.push(Cause::invalid_str(
                        "annotations.kubernetes.io/ingress.class",
                        a,
                        "must match `ingressClassName` when both are specified",
                    ));
                }
            }
            causes
        }
        "IngressClass" => ingress_class_spec(&obj["spec"]),
        _ => Vec::new(),
    }
}

/// The causes of updating a `networking.k8s.io` object of `kind`.
pub fn update_causes(kind: &str, old: &Value, new: &Value, target: Target) -> Vec<Cause> {
    match (kind, target) {
        ("NetworkPolicy", Target::Main) => network_policy_spec(&new["spec"]),
        ("Ingress", Target::Main) => ingress_spec(&new["spec"]),
        ("IngressClass", Target::Main) => {
            // `validateIngressClassSpecUpdate`, then `ValidateIngressClass`.
            let mut causes = Vec::new();
            if old["spec"]["controller"] != new["spec"]["controller"] {
                causes.push(Cause::invalid(
                    "spec.controller",
                    &new["spec"]["controller"],
                    "field is immutable",
                ));
            }
            causes.extend(ingress_class_spec(&new["spec"]));
            causes
        }
        _ => Vec::new(),
    }
}

/// `ValidateNetworkPolicySpec`.
fn network_policy_spec(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    if let Some(sel) = spec.get("podSelector").filter(|v| v.is_object()) {
        causes.extend(selector::causes(sel, "spec.podSelector"));
    }
    for (direction, peers) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in arr(spec, direction).iter().enumerate() {
            let at = format!("spec.{direction}[{i}]");
            for (j, port) in arr(rule, "ports").iter().enumerate() {
                causes.extend(network_policy_port(port, &format!("{at}.ports[{j}]")));
            }
            for (j, peer) in arr(rule, peers).iter().enumerate() {
                causes.extend(network_policy_peer(peer, &format!("{at}.{peers}[{j}]")));
            }
        }
    }
    let types = arr(spec, "policyTypes");
    if types.len() > 2 {
        causes.push(Cause::invalid(
            "spec.policyTypes",
            &spec["policyTypes"],
            "may not specify more than two policyTypes",
        ));
        return causes;
    }
    for (i, t) in types.iter().enumerate() {
        let t = t.as_str().unwrap_or_default();
        if !matches!(t, "Ingress" | "Egress") {
            causes.push(Cause::not_supported(
                format!("spec.policyTypes[{i}]"),
                &Value::from(t),
                &["Ingress".into(), "Egress".into()],
            ));
        }
    }
    causes
}

/// `ValidateNetworkPolicyPort`.
fn network_policy_port(port: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    if let Some(protocol) = port.get("protocol").and_then(Value::as_str) {
        if !matches!(protocol, "TCP" | "UDP" | "SCTP") {
            causes.push(Cause::not_supported(
                format!("{path}.protocol"),
                &Value::from(protocol),
                &["TCP".into(), "UDP".into(), "SCTP".into()],
            ));
        }
    }
    let end_port = port["endPort"].as_i64();
    match port.get("port") {
        Some(Value::Number(n)) => {
            let n = n.as_i64().unwrap_or(0);
            if !(1..=65535).contains(&n) {
                causes.push(Cause::invalid(
                    format!("{path}.port"),
                    &Value::from(n),
                    PORT_RANGE,
                ));
            }
            if let Some(end) = end_port {
                if end < n {
                    causes.push(Cause::invalid(
                        format!("{path}.endPort"),
                        &Value::from(end),
                        "must be greater than or equal to `port`",
                    ));
                }
                if !(1..=65535).contains(&end) {
                    causes.push(Cause::invalid(
                        format!("{path}.endPort"),
                        &Value::from(end),
                        PORT_RANGE,
                    ));
                }
            }
        }
        Some(Value::String(name)) => {
            if let Some(end) = end_port {
                causes.push(Cause::invalid(
                    format!("{path}.endPort"),
                    &Value::from(end),
                    "may not be specified when `port` is non-numeric",
                ));
            }
            for msg in port_name_errors(name) {
                causes.push(Cause::invalid_str(format!("{path}.port"), name, &msg));
            }
        }
        _ => {
            if let Some(end) = end_port {
                causes.push(Cause::invalid(
                    format!("{path}.endPort"),
                    &Value::from(end),
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
    causes
}

/// `ValidateNetworkPolicyPeer`.
fn network_policy_peer(peer: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut count = 0;
    for key in ["podSelector", "namespaceSelector"] {
        if let Some(sel) = peer.get(key).filter(|v| !v.is_null()) {
            count += 1;
            causes.extend(selector::causes(sel, &format!("{path}.{key}")));
        }
    }
    let ip_block = peer.get("ipBlock").filter(|v| !v.is_null());
    if let Some(block) = ip_block {
        count += 1;
        causes.extend(ip_block_causes(block, &format!("{path}.ipBlock")));
    }
    if count == 0 {
        causes.push(Cause::required(path, "must specify a peer"));
    } else if count > 1 && ip_block.is_some() {
        causes.push(Cause::forbidden(
            path,
            "may not specify both ipBlock and another peer",
        ));
    }
    causes
}

/// A CIDR as `(network address bits, prefix length, is IPv6)`.
fn parse_cidr(cidr: &str) -> Option<(u128, u8, bool)> {
    let (ip, bits) = cidr.split_once('/')?;
    let bits: u8 = bits.parse().ok()?;
    match ip.parse::<IpAddr>().ok()? {
        IpAddr::V4(v4) if bits <= 32 => Some((u128::from(u32::from(v4)) << 96, bits, false)),
        IpAddr::V6(v6) if bits <= 128 => Some((u128::from(v6), bits, true)),
        _ => None,
    }
}

fn cidr_error(cidr: &str, path: &str) -> Cause {
    Cause::invalid_str(
        path,
        cidr,
        "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
    )
}

/// `ValidateIPBlock`: a CIDR, and `except` entries strictly inside it.
fn ip_block_causes(block: &Value, path: &str) -> Vec<Cause> {
    let cidr = str_of(block, "cidr");
    if cidr.is_empty() {
        return vec![Cause::required(format!("{path}.cidr"), "")];
    }
    let Some((net, len, v6)) = parse_cidr(cidr) else {
        return vec![cidr_error(cidr, &format!("{path}.cidr"))];
    };
    let mut causes = Vec::new();
    for (i, except) in arr(block, "except").iter().enumerate() {
        let e = except.as_str().unwrap_or_default();
        let at = format!("{path}.except[{i}]");
        let Some((enet, elen, ev6)) = parse_cidr(e) else {
            causes.push(cidr_error(e, &at));
            continue;
        };
        // Both families keep their address in the top bits, so the mask is `len` bits wide.
        let mask = if len == 0 {
            0
        } else {
            u128::MAX << (128 - u32::from(len))
        };
        let contained = v6 == ev6 && (enet & mask) == (net & mask);
        if !contained || len >= elen {
            causes.push(Cause::invalid_str(
                &at,
                e,
                "must be a strict subset of `cidr`",
            ));
        }
    }
    causes
}

/// `IsWildcardDNS1123Subdomain`.
fn wildcard_subdomain_errors(host: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if host.len() > 253 {
        errs.push(crate::rules::validation::max_len_error(253));
    }
    let ok = host
        .strip_prefix("*.")
        .is_some_and(|rest| is_dns1123_subdomain(rest).is_empty());
    if !ok {
        errs.push(regex_error(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
            "\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
            &["*.example.com"],
        ));
    }
    errs
}

/// `ValidateIngressSpec`.
fn ingress_spec(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let rules = arr(spec, "rules");
    let default_backend = spec.get("defaultBackend").filter(|v| !v.is_null());
    if rules.is_empty() && default_backend.is_none() {
        causes.push(Cause::invalid(
            "spec",
            spec.get("rules").unwrap_or(&Value::Null),
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if let Some(backend) = default_backend {
        causes.extend(ingress_backend(backend, "spec.defaultBackend"));
    }
    for (i, rule) in rules.iter().enumerate() {
        // `validateIngressRules`.
        let at = format!("spec.rules[{i}]");
        let host = str_of(rule, "host");
        if !host.is_empty() {
            if host.parse::<IpAddr>().is_ok() {
                causes.push(Cause::invalid_str(
                    format!("{at}.host"),
                    host,
                    "must be a DNS name, not an IP address",
                ));
            }
            let errs = if host.contains('*') {
                wildcard_subdomain_errors(host)
            } else {
                is_dns1123_subdomain(host)
            };
            for msg in errs {
                causes.push(Cause::invalid_str(format!("{at}.host"), host, &msg));
            }
        }
        if let Some(http) = rule.get("http").filter(|v| !v.is_null()) {
            let paths = arr(http, "paths");
            if paths.is_empty() {
                causes.push(Cause::required(format!("{at}.http.paths"), ""));
            }
            for (j, p) in paths.iter().enumerate() {
                causes.extend(http_ingress_path(p, &format!("{at}.http.paths[{j}]")));
            }
        }
    }
    for (i, tls) in arr(spec, "tls").iter().enumerate() {
        let at = format!("spec.tls[{i}]");
        for (j, host) in arr(tls, "hosts").iter().enumerate() {
            let host = host.as_str().unwrap_or_default();
            let errs = if host.contains('*') {
                wildcard_subdomain_errors(host)
            } else {
                is_dns1123_subdomain(host)
            };
            for msg in errs {
                causes.push(Cause::invalid_str(format!("{at}.hosts[{j}]"), host, &msg));
            }
        }
        let secret = str_of(tls, "secretName");
        if !secret.is_empty() {
            for msg in is_dns1123_subdomain(secret) {
                causes.push(Cause::invalid_str(format!("{at}.secretName"), secret, &msg));
            }
        }
    }
    if let Some(class) = spec.get("ingressClassName").and_then(Value::as_str) {
        for msg in is_dns1123_subdomain(class) {
            causes.push(Cause::invalid_str("spec.ingressClassName", class, &msg));
        }
    }
    causes
}

/// `validateHTTPIngressPath`.
fn http_ingress_path(p: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let Some(path_type) = p.get("pathType").and_then(Value::as_str) else {
        return vec![Cause::required(
            format!("{path}.pathType"),
            "pathType must be specified",
        )];
    };
    let value = str_of(p, "path");
    let at = format!("{path}.path");
    match path_type {
        "Exact" | "Prefix" => {
            if !value.starts_with('/') {
                causes.push(Cause::invalid_str(&at, value, "must be an absolute path"));
            }
            if !value.is_empty() {
                for seq in ["//", "/./", "/../", "%2f", "%2F"] {
                    if value.contains(seq) {
                        causes.push(Cause::invalid_str(
                            &at,
                            value,
                            &format!("must not contain '{seq}'"),
                        ));
                    }
                }
                for suffix in ["/..", "/."] {
                    if value.ends_with(suffix) {
                        causes.push(Cause::invalid_str(
                            &at,
                            value,
                            &format!("cannot end with '{suffix}'"),
                        ));
                    }
                }
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() && !value.starts_with('/') {
                causes.push(Cause::invalid_str(&at, value, "must be an absolute path"));
            }
        }
        other => causes.push(Cause::not_supported(
            format!("{path}.pathType"),
            &Value::from(other),
            &[
                "Exact".into(),
                "ImplementationSpecific".into(),
                "Prefix".into(),
            ],
        )),
    }
    causes.extend(ingress_backend(&p["backend"], &format!("{path}.backend")));
    causes
}

/// `validateIngressBackend` (service names as `ValidateServiceName`, a DNS-1035 label).
fn ingress_backend(backend: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let resource = backend.get("resource").filter(|v| !v.is_null());
    let service = backend.get("service").filter(|v| !v.is_null());
    match (resource, service) {
        (Some(_), Some(_)) => {
            return vec![Cause::invalid_str(
                path,
                "",
                "cannot set both resource and service backends",
            )]
        }
        (Some(r), None) => {
            let at = format!("{path}.resource");
            if let Some(group) = r.get("apiGroup").and_then(Value::as_str) {
                for msg in is_dns1123_subdomain(group) {
                    causes.push(Cause::invalid_str(format!("{at}.apiGroup"), group, &msg));
                }
            }
            for field in ["kind", "name"] {
                let v = str_of(r, field);
                if v.is_empty() {
                    causes.push(Cause::required(format!("{at}.{field}"), ""));
                } else {
                    for msg in validate_path_segment_name(v) {
                        causes.push(Cause::invalid_str(format!("{at}.{field}"), v, &msg));
                    }
                }
            }
        }
        (None, Some(s)) => {
            let name = str_of(s, "name");
            if name.is_empty() {
                causes.push(Cause::required(format!("{path}.service.name"), ""));
            } else {
                for msg in is_dns1035_label(name) {
                    causes.push(Cause::invalid_str(
                        format!("{path}.service.name"),
                        name,
                        &msg,
                    ));
                }
            }
            let port_name = str_of(&s["port"], "name");
            let port_number = s["port"]["number"].as_i64().unwrap_or(0);
            if !port_name.is_empty() && port_number != 0 {
                causes.push(Cause::invalid_str(
                    path,
                    "",
                    "cannot set both port name & port number",
                ));
            } else if !port_name.is_empty() {
                for msg in port_name_errors(port_name) {
                    causes.push(Cause::invalid_str(
                        format!("{path}.service.port.name"),
                        port_name,
                        &msg,
                    ));
                }
            } else if port_number != 0 {
                if !(1..=65535).contains(&port_number) {
                    causes.push(Cause::invalid(
                        format!("{path}.service.port.number"),
                        &Value::from(port_number),
                        PORT_RANGE,
                    ));
                }
            } else {
                causes.push(Cause::required(path, "port name or number is required"));
            }
        }
        (None, None) => causes.push(Cause::invalid_str(
            path,
            "",
            "resource or service backend is required",
        )),
    }
    causes
}

/// `validateIngressClassSpec`.
fn ingress_class_spec(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let controller = str_of(spec, "controller");
    let at = "spec.controller";
    if controller.is_empty() {
        causes.push(Cause::required(at, ""));
    } else {
        if controller.len() > 250 {
            causes.push(Cause::too_long(at, 250));
        }
        // `IsDomainPrefixedPath`.
        match controller.split_once('/') {
            Some((host, rest)) if !host.is_empty() && !rest.is_empty() => {
                for msg in is_dns1123_subdomain(host) {
                    causes.push(Cause::invalid_str(at, host, &msg));
                }
                let path_ok = rest
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c));
                if !path_ok {
                    causes.push(Cause::invalid_str(
                        at,
                        rest,
                        &regex_error("Invalid path", "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+", &[]),
                    ));
                }
            }
            _ => causes.push(Cause::invalid_str(
                at,
                controller,
                "must be a domain-prefixed path (such as \"acme.io/foo\")",
            )),
        }
    }
    if let Some(params) = spec.get("parameters").filter(|v| !v.is_null()) {
        // `validateIngressClassParametersReference`.
        let at = "spec.parameters";
        if let Some(group) = params.get("apiGroup").and_then(Value::as_str) {
            for msg in is_dns1123_subdomain(group) {
                causes.push(Cause::invalid_str(format!("{at}.apiGroup"), group, &msg));
            }
        }
        for field in ["kind", "name"] {
            let v = str_of(params, field);
            if v.is_empty() {
                causes.push(Cause::required(format!("{at}.{field}"), ""));
            } else {
                for msg in validate_path_segment_name(v) {
                    causes.push(Cause::invalid_str(format!("{at}.{field}"), v, &msg));
                }
            }
        }
        match params.get("scope").and_then(Value::as_str) {
            None => causes.push(Cause::required(format!("{at}.scope"), "")),
            Some("Namespace") => match params.get("namespace").and_then(Value::as_str) {
                None => causes.push(Cause::required(
                    format!("{at}.namespace"),
                    "`parameters.scope` is set to 'Namespace'",
                )),
                Some(ns) => {
                    for msg in is_dns1123_label(ns) {
                        causes.push(Cause::invalid_str(format!("{at}.namespace"), ns, &msg));
                    }
                }
            },
            Some("Cluster") => {
                if params.get("namespace").is_some_and(|v| !v.is_null()) {
                    causes.push(Cause::forbidden(
                        format!("{at}.namespace"),
                        "`parameters.scope` is set to 'Cluster'",
                    ));
                }
            }
            Some(other) => causes.push(Cause::not_supported(
                format!("{at}.scope"),
                &Value::from(other),
                &["Cluster".into(), "Namespace".into()],
            )),
        }
    }
    let _ = go_quote;
    causes
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    use crate::rules::validation::error_texts as texts;

    #[rstest]
    #[case::allow_all(json!({"podSelector": {}}), vec![])]
    #[case::empty_peer(json!({"podSelector": {}, "ingress": [{"from": [{}]}]}),
        vec!["spec.ingress[0].from[0]: Required value: must specify a peer"])]
    #[case::ip_block_and_selector(json!({"podSelector": {}, "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}]}]}),
        vec!["spec.egress[0].to[0]: Forbidden: may not specify both ipBlock and another peer"])]
    #[case::bad_cidr(json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0"}}]}]}),
        vec!["spec.ingress[0].from[0].ipBlock.cidr: Invalid value: \"10.0.0.0\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"])]
    #[case::except_outside(json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/16"]}}]}]}),
        vec!["spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: \"11.0.0.0/16\": must be a strict subset of `cidr`"])]
    #[case::except_inside(json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}]}]}), vec![])]
    #[case::port(json!({"podSelector": {}, "ingress": [{"ports": [{"port": 0}]}]}),
        vec!["spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"])]
    #[case::end_port(json!({"podSelector": {}, "ingress": [{"ports": [{"port": 80, "endPort": 70}]}]}),
        vec!["spec.ingress[0].ports[0].endPort: Invalid value: 70: must be greater than or equal to `port`"])]
    #[case::protocol(json!({"podSelector": {}, "ingress": [{"ports": [{"protocol": "ICMP"}]}]}),
        vec!["spec.ingress[0].ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\""])]
    #[case::policy_type(json!({"podSelector": {}, "policyTypes": ["Both"]}),
        vec!["spec.policyTypes[0]: Unsupported value: \"Both\": supported values: \"Ingress\", \"Egress\""])]
    fn network_policies(#[case] spec: Value, #[case] expected: Vec<&str>) {
        assert_eq!(
            texts(create_causes("NetworkPolicy", &json!({"spec": spec}))),
            expected
        );
    }

    fn backend() -> Value {
        json!({"service": {"name": "web", "port": {"number": 80}}})
    }

    #[rstest]
    #[case::default_backend(json!({"defaultBackend": backend()}), vec![])]
    #[case::nothing(json!({}), vec!["spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"])]
    #[case::path_type_required(json!({"rules": [{"http": {"paths": [{"path": "/", "backend": backend()}]}}]}),
        vec!["spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"])]
    #[case::relative_path(json!({"rules": [{"http": {"paths": [{"path": "api", "pathType": "Prefix", "backend": backend()}]}}]}),
        vec!["spec.rules[0].http.paths[0].path: Invalid value: \"api\": must be an absolute path"])]
    #[case::ip_host(json!({"rules": [{"host": "1.2.3.4", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend()}]}}]}),
        vec!["spec.rules[0].host: Invalid value: \"1.2.3.4\": must be a DNS name, not an IP address"])]
    #[case::wildcard_host(json!({"rules": [{"host": "*.example.com", "http": {"paths": [{"path": "/", "pathType": "Exact", "backend": backend()}]}}]}), vec![])]
    #[case::no_port(json!({"defaultBackend": {"service": {"name": "web", "port": {}}}}),
        vec!["spec.defaultBackend: Required value: port name or number is required"])]
    #[case::no_backend(json!({"defaultBackend": {}}),
        vec!["spec.defaultBackend: Invalid value: \"\": resource or service backend is required"])]
    fn ingresses(#[case] spec: Value, #[case] expected: Vec<&str>) {
        assert_eq!(
            texts(create_causes("Ingress", &json!({"spec": spec}))),
            expected
        );
    }

    #[test]
    fn ingress_class_controller_is_a_domain_prefixed_path_and_immutable() {
        let bad = json!({"spec": {"controller": "nginx"}});
        assert_eq!(
            texts(create_causes("IngressClass", &bad)),
            vec!["spec.controller: Invalid value: \"nginx\": must be a domain-prefixed path (such as \"acme.io/foo\")"]
        );
        let old = json!({"spec": {"controller": "k8s.io/ingress-nginx"}});
        let new = json!({"spec": {"controller": "example.com/other"}});
        assert_eq!(
            texts(update_causes("IngressClass", &old, &new, Target::Main)),
            vec!["spec.controller: Invalid value: \"example.com/other\": field is immutable"]
        );
    }
}
