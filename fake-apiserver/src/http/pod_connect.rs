//! The subresources that reach a kubelet or a pod on a real cluster: `pods/log`, `pods/exec`,
//! `pods/attach`, `pods/portforward` and the `proxy` of pods, nodes and services.
//!
//! The fake has no kubelet and no pod network, so each answers what the real server answers from
//! what it can know (`pkg/registry/core/pod/strategy.go` `LogLocation`, `streamLocation`,
//! `ResourceLocation`; `pkg/registry/core/pod/rest/log.go`): the missing pod, the container
//! name that must be given or is wrong (400), the pod not yet bound to a node (`204 No Content`
//! for logs, 400 for the streams), the node that does not exist (404). Past that:
//!
//! - `pods/log` answers what the kubelet would, from the pod's container statuses (a container
//!   waiting to start is a 400 with the kubelet's message) and the lines a kubelet stand-in wrote
//!   with [`crate::FakeApiServer::append_pod_log`], honouring `tailLines`, `limitBytes`,
//!   `timestamps`, `sinceSeconds` and `sinceTime`. With `follow` the answer streams: the lines
//!   so far, then each line as it is written, until the container terminates or the pod goes
//!   (as the kubelet's follow ends when the container exits).
//! - the streams answer `500` `error dialing backend` (no kubelet to dial);
//! - the proxies answer `503` as an unreachable backend does (`no endpoints available` for a
//!   service without ready endpoints).

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::context::FakeApiServer;
use crate::error::{ApiError, StatusCause};
use crate::http::request::Query;
use crate::resource::ResourceInfo;

/// `GET pods/{name}/log`.
pub(crate) fn log(
    server: &FakeApiServer,
    namespace: &str,
    name: &str,
    query: &Query,
) -> Result<Response, ApiError> {
    let options = LogOptions::parse(name, query)?;
    let pod = get_pod(server, namespace, name)?;
    let container = log_container(&pod, name, query.get("container").unwrap_or_default())?;
    let Some(node) = node_of(&pod) else {
        // Not bound yet: the real server has no location to stream from.
        return Ok(StatusCode::NO_CONTENT.into_response());
    };
    check_node(server, node)?;
    let uid = pod["metadata"]["uid"].as_str().unwrap_or_default();
    let written = server.shared.pod_logs.read(uid, &container);
    if options.previous || written.is_none() {
        kubelet_log_status(&pod, name, &container, options.previous)
            .map_err(ApiError::bad_request)?;
    }
    let lines = if options.previous {
        Vec::new()
    } else {
        written.unwrap_or_default()
    };
    let mut writer = options.writer();
    let first = options.render(&lines, server.shared.now(), &mut writer);
    if options.follow && !options.previous && !container_terminated(&pod, &container) {
        let follower = Follower {
            server: server.clone(),
            namespace: namespace.to_string(),
            name: name.to_string(),
            uid: uid.to_string(),
            container,
            changes: server.shared.pod_logs.subscribe(),
            sent: lines.len(),
            writer,
            first: Some(first),
            done: false,
        };
        let body = axum::body::Body::from_stream(follower.into_stream());
        return Ok((StatusCode::OK, [(header::CONTENT_TYPE, "text/plain")], body).into_response());
    }
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain")],
        first,
    )
        .into_response())
}

/// How often a follower looks at the pod when no line is written (a container may end
/// without writing a last line).
const FOLLOW_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// A `follow` request's stream: the lines written so far, then each new one, until the
/// container terminates, the pod goes, or `limitBytes` is used up.
struct Follower {
    server: FakeApiServer,
    namespace: String,
    name: String,
    uid: String,
    container: String,
    changes: tokio::sync::watch::Receiver<u64>,
    /// How many of the container's lines have been written out.
    sent: usize,
    writer: LineWriter,
    /// The answer's first chunk (the lines selected when the request came).
    first: Option<String>,
    done: bool,
}

impl Follower {
    fn into_stream(
        self,
    ) -> impl futures::Stream<Item = Result<String, std::convert::Infallible>> + Send {
        futures::stream::unfold(self, |mut this| async move {
            if let Some(first) = this.first.take().filter(|f| !f.is_empty()) {
                return Some((Ok(first), this));
            }
            loop {
                if this.done || this.writer.exhausted() {
                    return None;
                }
                // Looked at before the lines are read, so a last line written just before the
                // container ended is still sent.
                let ended = !this.still_running();
                let lines = this
                    .server
                    .shared
                    .pod_logs
                    .read(&this.uid, &this.container)
                    .unwrap_or_default();
                let mut out = String::new();
                for line in lines.iter().skip(this.sent) {
                    if !this.writer.write(line, &mut out) {
                        break;
                    }
                }
                this.sent = this.sent.max(lines.len());
                this.done = ended;
                if !out.is_empty() {
                    return Some((Ok(out), this));
                }
                if this.done {
                    return None;
                }
                tokio::select! {
                    changed = this.changes.changed() => {
                        if changed.is_err() {
                            tokio::time::sleep(FOLLOW_POLL).await;
                        }
                    }
                    _ = tokio::time::sleep(FOLLOW_POLL) => {}
                }
            }
        })
    }

    /// Whether the same pod is still there with the container not terminated.
    fn still_running(&self) -> bool {
        self.server
            .shared
            .store
            .get_value("/pods", &self.namespace, &self.name)
            .is_some_and(|pod| {
                pod["metadata"]["uid"] == self.uid.as_str()
                    && !container_terminated(&pod, &self.container)
            })
    }
}

/// Whether the container has run to its end: the pod finished, or its status says terminated.
fn container_terminated(pod: &Value, container: &str) -> bool {
    if matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    ) {
        return true;
    }
    [
        "containerStatuses",
        "initContainerStatuses",
        "ephemeralContainerStatuses",
    ]
    .iter()
    .filter_map(|list| pod["status"][list].as_array())
    .flatten()
    .find(|s| s["name"] == container)
    .is_some_and(|s| s["state"]["terminated"].is_object())
}

/// `pods/exec`, `pods/attach`, `pods/portforward`.
pub(crate) fn connect(
    server: &FakeApiServer,
    subresource: &str,
    namespace: &str,
    name: &str,
    query: &Query,
) -> Result<Response, ApiError> {
    let pod = get_pod(server, namespace, name)?;
    if subresource != "portforward" {
        stream_container(&pod, name, query.get("container").unwrap_or_default())?;
    }
    let Some(node) = node_of(&pod) else {
        return Err(ApiError::bad_request(format!(
            "pod {name} does not have a host assigned"
        )));
    };
    check_node(server, node)?;
    Err(ApiError::plain_500(format!(
        "error dialing backend: the fake API server runs no kubelet for node {node:?}"
    )))
}

/// `{pods,nodes,services}/{name}/proxy[/...]`.
pub(crate) fn proxy(
    server: &FakeApiServer,
    info: &ResourceInfo,
    namespace: Option<&str>,
    id: &str,
) -> Result<Response, ApiError> {
    let singular = info.kind.to_lowercase();
    let Some((_, name, port)) = split_scheme_name_port(id) else {
        return Err(ApiError::bad_request(format!(
            "invalid {singular} request {id:?}"
        )));
    };
    let store = &server.shared.store;
    let ns = namespace.unwrap_or_default();
    let object = store
        .get_value(&format!("/{}", info.plural), ns, name)
        .ok_or_else(|| ApiError::not_found("", &info.plural, name))?;
    let unreachable = |what: String| {
        Err(ApiError::new(
            503,
            "ServiceUnavailable",
            format!("error trying to reach service: the fake API server has no network to {what}"),
        ))
    };
    match info.kind.as_str() {
        "Pod" => {
            let ip = object["status"]["podIPs"][0]["ip"]
                .as_str()
                .or_else(|| object["status"]["podIP"].as_str())
                .unwrap_or_default();
            match ip.parse::<std::net::IpAddr>() {
                Ok(addr) if is_global_unicast(addr) => unreachable(format!("pod IP {ip}")),
                _ => Err(ApiError::bad_request("address not allowed")),
            }
        }
        "Service" => {
            let ports = object["spec"]["ports"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if !port.is_empty()
                && !ports.iter().any(|p| {
                    p["name"].as_str() == Some(port)
                        || p["port"].as_i64().map(|n| n.to_string()).as_deref() == Some(port)
                })
            {
                return Err(service_unavailable(format!(
                    "no service port {port:?} found for service {name:?}"
                )));
            }
            let ready = store
                .get_value("/endpoints", ns, name)
                .and_then(|e| e["subsets"].as_array().cloned())
                .is_some_and(|subsets| {
                    subsets
                        .iter()
                        .any(|s| s["addresses"].as_array().is_some_and(|a| !a.is_empty()))
                });
            if !ready {
                return Err(service_unavailable(format!(
                    "no endpoints available for service {name:?}"
                )));
            }
            unreachable(format!("the endpoints of service {name:?}"))
        }
        _ => unreachable(format!("the kubelet of node {name:?}")),
    }
}

fn service_unavailable(message: String) -> ApiError {
    ApiError::new(503, "ServiceUnavailable", message)
}

/// `utilnet.SplitSchemeNamePort`: `name`, `name:port` or `scheme:name:port`.
fn split_scheme_name_port(id: &str) -> Option<(&str, &str, &str)> {
    let parts: Vec<&str> = id.split(':').collect();
    let (scheme, name, port) = match parts.as_slice() {
        [name] => ("", *name, ""),
        [name, port] => ("", *name, *port),
        [scheme, name, port] => (*scheme, *name, *port),
        _ => return None,
    };
    if name.is_empty() || !matches!(scheme, "" | "http" | "https") {
        return None;
    }
    Some((scheme, name, port))
}

/// Go's `IP.IsGlobalUnicast`.
fn is_global_unicast(addr: std::net::IpAddr) -> bool {
    match addr {
        std::net::IpAddr::V4(v4) => {
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_multicast()
                || v4.is_broadcast())
        }
        std::net::IpAddr::V6(v6) => {
            let link_local = (v6.segments()[0] & 0xffc0) == 0xfe80;
            !(v6.is_unspecified() || v6.is_loopback() || v6.is_multicast() || link_local)
        }
    }
}

fn get_pod(server: &FakeApiServer, namespace: &str, name: &str) -> Result<Value, ApiError> {
    server
        .shared
        .store
        .get_value("/pods", namespace, name)
        .ok_or_else(|| ApiError::not_found("", "pods", name))
}

fn node_of(pod: &Value) -> Option<&str> {
    pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty())
}

/// The node a pod is bound to must exist for its kubelet to be found.
fn check_node(server: &FakeApiServer, node: &str) -> Result<(), ApiError> {
    match server.shared.store.get("/nodes", "", node) {
        Some(_) => Ok(()),
        None => Err(ApiError::not_found("", "nodes", node)),
    }
}

fn names_of(pod: &Value, list: &str) -> Vec<String> {
    pod["spec"][list]
        .as_array()
        .map(|cs| {
            cs.iter()
                .filter_map(|c| c["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn has_container(pod: &Value, container: &str) -> bool {
    ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .any(|list| names_of(pod, list).iter().any(|n| n == container))
}

/// The container a log request reads (`validateContainer`).
fn log_container(pod: &Value, name: &str, container: &str) -> Result<String, ApiError> {
    if !container.is_empty() {
        if !has_container(pod, container) {
            return Err(ApiError::bad_request(format!(
                "container {container} is not valid for pod {name}"
            )));
        }
        return Ok(container.to_string());
    }
    let containers = names_of(pod, "containers");
    match containers.as_slice() {
        [only] => Ok(only.clone()),
        [] => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}"
        ))),
        _ => {
            let all: Vec<String> = ["initContainers", "containers", "ephemeralContainers"]
                .iter()
                .flat_map(|list| names_of(pod, list))
                .collect();
            Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}, choose one of: [{}]",
                all.join(" ")
            )))
        }
    }
}

/// The container an exec or attach reaches (`streamLocation`).
fn stream_container(pod: &Value, name: &str, container: &str) -> Result<(), ApiError> {
    if !container.is_empty() {
        if !has_container(pod, container) {
            return Err(ApiError::bad_request(format!(
                "container {container} is not valid for pod {name}"
            )));
        }
        return Ok(());
    }
    let containers = names_of(pod, "containers");
    match containers.len() {
        1 => Ok(()),
        0 => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}"
        ))),
        _ => {
            let mut message = format!(
                "a container name must be specified for pod {name}, choose one of: [{}]",
                containers.join(" ")
            );
            let init = names_of(pod, "initContainers");
            if !init.is_empty() {
                message.push_str(&format!(
                    " or one of the init containers: [{}]",
                    init.join(" ")
                ));
            }
            Err(ApiError::bad_request(message))
        }
    }
}

/// Whether the kubelet would have logs to show for the container, from the pod's statuses
/// (`validateContainerLogStatus`); the error is the kubelet's message.
fn kubelet_log_status(
    pod: &Value,
    pod_name: &str,
    container: &str,
    previous: bool,
) -> Result<(), String> {
    let status = [
        "containerStatuses",
        "initContainerStatuses",
        "ephemeralContainerStatuses",
    ]
    .iter()
    .filter_map(|list| pod["status"][list].as_array())
    .flatten()
    .find(|s| s["name"] == container)
    .ok_or_else(|| format!("container {container:?} in pod {pod_name:?} is not available"))?;
    let last = &status["lastState"]["terminated"];
    let state = &status["state"];
    let has_id = |v: &Value| v["containerID"].as_str().is_some_and(|id| !id.is_empty());
    let terminated = || format!("container {container:?} in pod {pod_name:?} is terminated");
    if previous {
        if last.is_object() && has_id(last) {
            return Ok(());
        }
        return Err(format!(
            "previous terminated container {container:?} in pod {pod_name:?} not found"
        ));
    }
    if state["running"].is_object() {
        return Ok(());
    }
    if state["terminated"].is_object() {
        if has_id(&state["terminated"]) || (last.is_object() && has_id(last)) {
            return Ok(());
        }
        return Err(terminated());
    }
    if last.is_object() {
        return if has_id(last) {
            Ok(())
        } else {
            Err(terminated())
        };
    }
    if state["waiting"].is_object() {
        let reason = state["waiting"]["reason"].as_str().unwrap_or_default();
        let why = match reason {
            "ErrImagePull" => "image can't be pulled".to_string(),
            "ImagePullBackOff" => "trying and failing to pull image".to_string(),
            other => other.to_string(),
        };
        return Err(format!(
            "container {container:?} in pod {pod_name:?} is waiting to start: {why}"
        ));
    }
    Err(format!(
        "container {container:?} in pod {pod_name:?} is waiting to start - no logs yet"
    ))
}

/// The `PodLogOptions` of a request.
#[derive(Debug, Default)]
struct LogOptions {
    follow: bool,
    previous: bool,
    timestamps: bool,
    tail_lines: Option<i64>,
    limit_bytes: Option<i64>,
    since_seconds: Option<i64>,
    since_time: Option<jiff::Timestamp>,
}

impl LogOptions {
    /// Reads and validates the options (`ValidatePodLogOptions`).
    fn parse(name: &str, query: &Query) -> Result<Self, ApiError> {
        let since_time = match query.get("sinceTime").filter(|t| !t.is_empty()) {
            Some(t) => Some(t.parse::<jiff::Timestamp>().map_err(|_| {
                ApiError::bad_request(format!(
                    "parsing time {t:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse {t:?} as \"2006\""
                ))
            })?),
            None => None,
        };
        let options = LogOptions {
            follow: query.flag("follow"),
            previous: query.flag("previous"),
            timestamps: query.flag("timestamps"),
            tail_lines: query.int("tailLines")?,
            limit_bytes: query.int("limitBytes")?,
            since_seconds: query.int("sinceSeconds")?,
            since_time,
        };
        let invalid = |field: &str, value: i64, why: &str| StatusCause {
            reason: "FieldValueInvalid".into(),
            message: format!("Invalid value: {value}: {why}"),
            field: field.into(),
        };
        let mut causes = Vec::new();
        if let Some(n) = options.tail_lines.filter(|n| *n < 0) {
            causes.push(invalid(
                "tailLines",
                n,
                "must be greater than or equal to 0",
            ));
        }
        if let Some(n) = options.limit_bytes.filter(|n| *n < 1) {
            causes.push(invalid("limitBytes", n, "must be greater than 0"));
        }
        match (options.since_seconds, options.since_time) {
            (Some(_), Some(_)) => causes.push(StatusCause {
                reason: "FieldValueForbidden".into(),
                message: "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"
                    .into(),
                field: String::new(),
            }),
            (Some(n), None) if n < 1 => {
                causes.push(invalid("sinceSeconds", n, "must be greater than 0"))
            }
            _ => {}
        }
        if !causes.is_empty() {
            return Err(ApiError::invalid("", "PodLogOptions", name, causes));
        }
        Ok(options)
    }

    /// A writer of lines in the options' format and within their `limitBytes`.
    fn writer(&self) -> LineWriter {
        LineWriter {
            timestamps: self.timestamps,
            remaining: self.limit_bytes.and_then(|n| usize::try_from(n).ok()),
            full: false,
        }
    }

    /// The lines the options select (`sinceSeconds`/`sinceTime`, then `tailLines`), written
    /// through `writer` as the kubelet writes them.
    fn render(
        &self,
        lines: &[crate::store::pod_logs::LogLine],
        now: jiff::Timestamp,
        writer: &mut LineWriter,
    ) -> String {
        let since = self.since_time.or_else(|| {
            self.since_seconds
                .and_then(|s| now.checked_sub(jiff::SignedDuration::from_secs(s)).ok())
        });
        let selected: Vec<_> = lines
            .iter()
            .filter(|l| since.is_none_or(|t| l.at >= t))
            .collect();
        let skip = match self.tail_lines {
            Some(n) => selected
                .len()
                .saturating_sub(usize::try_from(n).unwrap_or(0)),
            None => 0,
        };
        let mut out = String::new();
        for line in &selected[skip..] {
            if !writer.write(line, &mut out) {
                break;
            }
        }
        out
    }
}

/// Writes log lines (`timestamps` prefixed) and cuts the output at `limitBytes`, counted over
/// the whole answer, a followed one included.
#[derive(Debug)]
struct LineWriter {
    timestamps: bool,
    /// Bytes still allowed, if limited.
    remaining: Option<usize>,
    /// Set once a line did not fit whole.
    full: bool,
}

impl LineWriter {
    /// Appends `line` to `out`; `false` once the byte limit is used up.
    fn write(&mut self, line: &crate::store::pod_logs::LogLine, out: &mut String) -> bool {
        let mut text = String::new();
        if self.timestamps {
            text.push_str(&line.at.to_string());
            text.push(' ');
        }
        text.push_str(&line.text);
        text.push('\n');
        let Some(remaining) = self.remaining.as_mut() else {
            out.push_str(&text);
            return true;
        };
        let mut end = (*remaining).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        out.push_str(&text[..end]);
        *remaining -= end;
        self.full = end < text.len() || *remaining == 0;
        !self.full
    }

    /// Whether nothing more may be written.
    fn exhausted(&self) -> bool {
        self.full
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(containers: &[&str], statuses: Value) -> Value {
        let cs: Vec<Value> = containers.iter().map(|c| json!({"name": c})).collect();
        json!({"metadata": {"name": "p"}, "spec": {"containers": cs}, "status": statuses})
    }

    #[test]
    fn the_container_must_be_named_when_there_are_several() {
        let p = pod(&["a", "b"], json!({}));
        assert_eq!(
            log_container(&p, "p", "").unwrap_err().message,
            "a container name must be specified for pod p, choose one of: [a b]"
        );
        assert_eq!(
            log_container(&p, "p", "z").unwrap_err().message,
            "container z is not valid for pod p"
        );
        assert_eq!(
            log_container(&pod(&["a"], json!({})), "p", "").unwrap(),
            "a"
        );
        let mut with_init = p.clone();
        with_init["spec"]["initContainers"] = json!([{"name": "i"}]);
        assert_eq!(
            stream_container(&with_init, "p", "").unwrap_err().message,
            "a container name must be specified for pod p, choose one of: [a b] or one of the init containers: [i]"
        );
    }

    #[test]
    fn the_kubelet_explains_why_there_are_no_logs() {
        let waiting = pod(
            &["c"],
            json!({"containerStatuses": [{"name": "c", "state": {"waiting": {"reason": "ContainerCreating"}}}]}),
        );
        assert_eq!(
            kubelet_log_status(&waiting, "p", "c", false).unwrap_err(),
            "container \"c\" in pod \"p\" is waiting to start: ContainerCreating"
        );
        assert_eq!(
            kubelet_log_status(&pod(&["c"], json!({})), "p", "c", false).unwrap_err(),
            "container \"c\" in pod \"p\" is not available"
        );
        let running = pod(
            &["c"],
            json!({"containerStatuses": [{"name": "c", "state": {"running": {}}}]}),
        );
        assert!(kubelet_log_status(&running, "p", "c", false).is_ok());
        assert_eq!(
            kubelet_log_status(&running, "p", "c", true).unwrap_err(),
            "previous terminated container \"c\" in pod \"p\" not found"
        );
    }

    #[test]
    fn options_select_lines_as_the_kubelet_does() {
        let t0: jiff::Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let t1: jiff::Timestamp = "2026-01-01T00:01:00Z".parse().unwrap();
        let lines = vec![
            crate::store::pod_logs::LogLine {
                at: t0,
                text: "one".into(),
            },
            crate::store::pod_logs::LogLine {
                at: t1,
                text: "two".into(),
            },
            crate::store::pod_logs::LogLine {
                at: t1,
                text: "three".into(),
            },
        ];
        let now: jiff::Timestamp = "2026-01-01T00:01:30Z".parse().unwrap();
        let all = LogOptions::default();
        assert_eq!(
            all.render(&lines, now, &mut all.writer()),
            "one\ntwo\nthree\n"
        );
        let tail = LogOptions {
            tail_lines: Some(1),
            timestamps: true,
            ..Default::default()
        };
        assert_eq!(
            tail.render(&lines, now, &mut tail.writer()),
            "2026-01-01T00:01:00Z three\n"
        );
        let since = LogOptions {
            since_seconds: Some(60),
            ..Default::default()
        };
        assert_eq!(
            since.render(&lines, now, &mut since.writer()),
            "two\nthree\n"
        );
        let limit = LogOptions {
            limit_bytes: Some(5),
            ..Default::default()
        };
        assert_eq!(limit.render(&lines, now, &mut limit.writer()), "one\nt");
    }

    #[test]
    fn bad_options_are_invalid() {
        let query = Query::parse(Some("tailLines=-1&sinceSeconds=0"));
        let err = LogOptions::parse("p", &query).unwrap_err();
        assert_eq!(err.code, 422);
        assert_eq!(
            err.message,
            "PodLogOptions \"p\" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, sinceSeconds: Invalid value: 0: must be greater than 0]"
        );
    }

    #[test]
    fn proxy_ids_split_as_go_splits_them() {
        assert_eq!(split_scheme_name_port("svc"), Some(("", "svc", "")));
        assert_eq!(
            split_scheme_name_port("svc:http"),
            Some(("", "svc", "http"))
        );
        assert_eq!(
            split_scheme_name_port("https:svc:443"),
            Some(("https", "svc", "443"))
        );
        assert_eq!(split_scheme_name_port("ftp:svc:1"), None);
        assert_eq!(split_scheme_name_port(":80"), None);
    }
}
