//! Rules of `discovery.k8s.io/v1` EndpointSlices, from `pkg/apis/discovery/validation`
//! (`ValidateEndpointSlice`, `ValidateEndpointSliceUpdate`).

use std::collections::BTreeSet;
use std::net::IpAddr;

use serde_json::Value;

use super::core::service::non_special_ip;
use super::{same, str_of};
use crate::rules::validation::{
    is_dns1123_label, is_dns1123_subdomain, is_qualified_name, validate_labels, Cause,
};

fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The causes of creating a `discovery.k8s.io` object of `kind` (beyond metadata).
pub fn create_causes(kind: &str, obj: &Value) -> Vec<Cause> {
    match kind {
        "EndpointSlice" => endpoint_slice(obj),
        _ => Vec::new(),
    }
}

/// The causes of updating one: the address type is immutable.
pub fn update_causes(kind: &str, old: &Value, new: &Value) -> Vec<Cause> {
    if kind != "EndpointSlice" {
        return Vec::new();
    }
    let mut causes = endpoint_slice(new);
    if !same(old.get("addressType"), new.get("addressType")) {
        causes.push(Cause::invalid(
            "addressType",
            new.get("addressType").unwrap_or(&Value::Null),
            "field is immutable",
        ));
    }
    causes
}

/// `ValidateEndpointSlice`: a known address type, addresses of that type, node names, host
/// names, topology labels, and ports (unique names, known protocols).
fn endpoint_slice(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let address_type = str_of(obj, "addressType");
    match address_type {
        "" => causes.push(Cause::required("addressType", "")),
        "IPv4" | "IPv6" | "FQDN" => {}
        other => causes.push(Cause::not_supported(
            "addressType",
            &Value::from(other),
            &["FQDN".into(), "IPv4".into(), "IPv6".into()],
        )),
    }
    let endpoints = arr(obj, "endpoints");
    if endpoints.len() > 1000 {
        causes.push(Cause::too_many("endpoints", endpoints.len() as i64, 1000));
        return causes;
    }
    for (i, endpoint) in endpoints.iter().enumerate() {
        let at = format!("endpoints[{i}]");
        let addresses = arr(endpoint, "addresses");
        let ap = format!("{at}.addresses");
        if addresses.is_empty() {
            causes.push(Cause::required(&ap, "must contain at least 1 address"));
        } else if addresses.len() > 100 {
            causes.push(Cause::too_many(&ap, addresses.len() as i64, 100));
        }
        for (j, address) in addresses.iter().enumerate() {
            let a = address.as_str().unwrap_or_default();
            let path = format!("{ap}[{j}]");
            match address_type {
                "IPv4" | "IPv6" => {
                    let ok = match a.parse::<IpAddr>() {
                        Ok(IpAddr::V4(_)) => address_type == "IPv4",
                        Ok(IpAddr::V6(_)) => address_type == "IPv6",
                        Err(_) => false,
                    };
                    if ok {
                        causes.extend(non_special_ip(a, &path));
                    } else {
                        causes.push(Cause::invalid_str(
                            &path,
                            a,
                            &format!("must be a valid {address_type} address"),
                        ));
                    }
                }
                "FQDN" => {
                    for msg in is_dns1123_subdomain(&a.to_lowercase()) {
                        causes.push(Cause::invalid_str(&path, a, &msg));
                    }
                }
                _ => {}
            }
        }
        if let Some(node) = endpoint.get("nodeName").and_then(Value::as_str) {
            for msg in is_dns1123_subdomain(node) {
                causes.push(Cause::invalid_str(format!("{at}.nodeName"), node, &msg));
            }
        }
        let topology = &endpoint["deprecatedTopology"];
        let tp = format!("{at}.deprecatedTopology");
        let count = topology.as_object().map_or(0, |m| m.len());
        if count > 16 {
            causes.push(Cause::too_many(&tp, count as i64, 16));
        }
        causes.extend(validate_labels(topology.as_object().map(|_| topology), &tp));
        if let Some(host) = endpoint.get("hostname").and_then(Value::as_str) {
            for msg in is_dns1123_label(host) {
                causes.push(Cause::invalid_str(format!("{at}.hostname"), host, &msg));
            }
        }
    }
    let ports = arr(obj, "ports");
    if ports.len() > 20000 {
        causes.push(Cause::too_many("ports", ports.len() as i64, 20000));
        return causes;
    }
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let at = format!("ports[{i}]");
        // `name` defaults to "" and `protocol` to TCP.
        let name = port.get("name").and_then(Value::as_str).unwrap_or("");
        if !name.is_empty() {
            for msg in is_dns1123_label(name) {
                causes.push(Cause::invalid_str(format!("{at}.name"), name, &msg));
            }
        }
        if !names.insert(name) {
            causes.push(Cause::duplicate(format!("{at}.name"), &Value::from(name)));
        }
        let protocol = port
            .get("protocol")
            .and_then(Value::as_str)
            .unwrap_or("TCP");
        if !matches!(protocol, "TCP" | "UDP" | "SCTP") {
            causes.push(Cause::not_supported(
                format!("{at}.protocol"),
                &Value::from(protocol),
                &["SCTP".into(), "TCP".into(), "UDP".into()],
            ));
        }
        if let Some(app) = port.get("appProtocol").and_then(Value::as_str) {
            for msg in is_qualified_name(app) {
                causes.push(Cause::invalid_str(format!("{at}.appProtocol"), app, &msg));
            }
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    #[rstest]
    #[case::ok(json!({"addressType": "IPv4", "endpoints": [{"addresses": ["10.1.2.3"]}], "ports": [{"name": "http", "port": 80}]}), vec![])]
    #[case::no_type(json!({"endpoints": []}), vec!["addressType: Required value"])]
    #[case::bad_type(json!({"addressType": "IPv5"}),
        vec!["addressType: Unsupported value: \"IPv5\": supported values: \"FQDN\", \"IPv4\", \"IPv6\""])]
    #[case::no_addresses(json!({"addressType": "IPv4", "endpoints": [{"addresses": []}]}),
        vec!["endpoints[0].addresses: Required value: must contain at least 1 address"])]
    #[case::wrong_family(json!({"addressType": "IPv4", "endpoints": [{"addresses": ["::1"]}]}),
        vec!["endpoints[0].addresses[0]: Invalid value: \"::1\": must be a valid IPv4 address"])]
    #[case::duplicate_ports(json!({"addressType": "IPv4", "ports": [{"name": "a", "port": 80}, {"name": "a", "port": 81}]}),
        vec!["ports[1].name: Duplicate value: \"a\""])]
    fn endpoint_slices(#[case] slice: Value, #[case] expected: Vec<&str>) {
        let texts: Vec<String> = create_causes("EndpointSlice", &slice)
            .iter()
            .map(Cause::error_text)
            .collect();
        assert_eq!(texts, expected);
    }
}
