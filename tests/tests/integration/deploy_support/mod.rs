//! Shared support for the `deploy_rbac` test: the manifests of `deploy/eno` and
//! `deploy/karpenter` (in kustomization order), their RBAC rules one by one, a fake API server
//! with authentication, RBAC and the ServiceAccount admission on that has them loaded, and a
//! kubeconfig carrying a service account's token.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use fake_apiserver::auth::AuthorizationMode;
use fake_apiserver::FakeApiServer;
use k8s_openapi::serde::Deserialize;
use serde_json::Value;

/// `deploy/NAME`.
pub fn deploy_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../deploy")
        .join(name)
}

fn documents(path: &Path) -> Vec<Value> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_yaml::Deserializer::from_str(&text)
        .map(|doc| Value::deserialize(doc).expect("YAML document"))
        .filter(|doc| !doc.is_null())
        .collect()
}

/// Every object of `deploy/NAME`, in the kustomization's order.
pub fn manifests(name: &str) -> Vec<Value> {
    let dir = deploy_dir(name);
    let kustomization = documents(&dir.join("kustomization.yaml"));
    kustomization[0]["resources"]
        .as_array()
        .expect("kustomization resources")
        .iter()
        .flat_map(|file| documents(&dir.join(file.as_str().expect("file name"))))
        .collect()
}

/// One rule of one Role or ClusterRole in a set of manifests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleRef {
    /// `Role` or `ClusterRole`.
    pub kind: String,
    /// The role's name.
    pub role: String,
    /// Position of the rule in the role.
    pub index: usize,
    /// The rule.
    pub rule: Value,
    /// The users the role is bound to (`system:serviceaccount:NS:NAME` for service accounts).
    pub subjects: Vec<String>,
}

impl RuleRef {
    /// `ClusterRole eno-controller rule 1 (compositions/status: get, update)`.
    pub fn describe(&self) -> String {
        format!(
            "{} {} rule {} ({}: {})",
            self.kind,
            self.role,
            self.index,
            strings(&self.rule["resources"]).join(","),
            strings(&self.rule["verbs"]).join(",")
        )
    }

    /// Whether a 403 message is the real server's refusal of one of the role's subjects for
    /// this rule: one of its verbs on one of its resources in one of its groups
    /// (`User "system:serviceaccount:NS:NAME" cannot VERB resource "RESOURCE" in API group
    /// "GROUP" ...`).
    pub fn matches_denial(&self, message: &str) -> bool {
        strings(&self.rule["verbs"])
            .iter()
            .any(|verb| self.matches_denial_of(verb, message))
    }

    /// Whether a 403 message is the refusal of `verb` of this rule to one of its subjects.
    pub fn matches_denial_of(&self, verb: &str, message: &str) -> bool {
        self.subjects.iter().any(|user| {
            strings(&self.rule["resources"]).iter().any(|resource| {
                strings(&self.rule["apiGroups"]).iter().any(|group| {
                    message.contains(&format!(
                        "User \"{user}\" cannot {verb} resource \"{resource}\" in API group \"{group}\""
                    ))
                })
            })
        })
    }
}

/// One verb of one rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerbRef {
    /// The rule.
    pub rule: RuleRef,
    /// The verb.
    pub verb: String,
}

impl VerbRef {
    /// `ClusterRole eno-controller rule 1 (compositions/status: get, update) verb get`.
    pub fn describe(&self) -> String {
        format!("{} verb {}", self.rule.describe(), self.verb)
    }
}

/// Every verb of every rule in `docs`, rule by rule.
pub fn verbs(docs: &[Value]) -> Vec<VerbRef> {
    rules(docs)
        .into_iter()
        .flat_map(|rule| {
            strings(&rule.rule["verbs"])
                .into_iter()
                .map(move |verb| VerbRef {
                    rule: rule.clone(),
                    verb,
                })
        })
        .collect()
}

/// `docs` with one verb taken out of one rule (the rule goes when it was its only verb).
pub fn without_verb(docs: &[Value], verb: &VerbRef) -> Vec<Value> {
    let mut docs = docs.to_vec();
    let role = find_role(&mut docs, &verb.rule);
    let rules = role["rules"].as_array_mut().expect("rules");
    let verbs = rules[verb.rule.index]["verbs"]
        .as_array_mut()
        .expect("verbs");
    verbs.retain(|v| v.as_str() != Some(verb.verb.as_str()));
    if verbs.is_empty() {
        rules.remove(verb.rule.index);
    }
    docs
}

fn find_role<'a>(docs: &'a mut [Value], rule: &RuleRef) -> &'a mut Value {
    docs.iter_mut()
        .find(|d| d["kind"] == rule.kind.as_str() && d["metadata"]["name"] == rule.role.as_str())
        .expect("the role")
}

/// The users bound to the role `kind`/`name` by the bindings in `docs`.
fn subjects_of(docs: &[Value], kind: &str, name: &str, namespace: &str) -> Vec<String> {
    docs.iter()
        .filter(|d| match d["kind"].as_str() {
            Some("ClusterRoleBinding") => kind == "ClusterRole",
            Some("RoleBinding") => kind == "ClusterRole" || d["metadata"]["namespace"] == namespace,
            _ => false,
        })
        .filter(|d| d["roleRef"]["kind"] == kind && d["roleRef"]["name"] == name)
        .flat_map(|d| d["subjects"].as_array().cloned().unwrap_or_default())
        .map(|s| match s["kind"].as_str() {
            Some("ServiceAccount") => format!(
                "system:serviceaccount:{}:{}",
                s["namespace"].as_str().unwrap_or_default(),
                s["name"].as_str().unwrap_or_default()
            ),
            _ => s["name"].as_str().unwrap_or_default().to_string(),
        })
        .collect()
}

/// The strings of a JSON array.
pub fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Every rule of every Role and ClusterRole in `docs`.
pub fn rules(docs: &[Value]) -> Vec<RuleRef> {
    docs.iter()
        .filter(|d| matches!(d["kind"].as_str(), Some("Role" | "ClusterRole")))
        .flat_map(|d| {
            let kind = d["kind"].as_str().unwrap_or_default().to_string();
            let role = d["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let namespace = d["metadata"]["namespace"].as_str().unwrap_or_default();
            let subjects = subjects_of(docs, &kind, &role, namespace);
            d["rules"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .enumerate()
                .map(move |(index, rule)| RuleRef {
                    kind: kind.clone(),
                    role: role.clone(),
                    index,
                    rule,
                    subjects: subjects.clone(),
                })
        })
        .collect()
}

/// `docs` with one rule removed.
pub fn without(docs: &[Value], rule: &RuleRef) -> Vec<Value> {
    let mut docs = docs.to_vec();
    let role = find_role(&mut docs, rule);
    role["rules"]
        .as_array_mut()
        .expect("rules")
        .remove(rule.index);
    docs
}

/// A server with authentication, RBAC and the ServiceAccount admission on, with `docs` loaded
/// (as the cluster admin).
pub fn rbac_server(docs: &[Value]) -> FakeApiServer {
    let server = FakeApiServer::builder()
        .authentication(true)
        .authorization_mode(AuthorizationMode::Rbac)
        .service_account_admission(true)
        .build();
    for doc in docs {
        let what = format!("{} {}", doc["kind"], doc["metadata"]["name"]);
        server
            .apply_manifest(doc.clone())
            .unwrap_or_else(|e| panic!("loading {what}: {e:?}"));
    }
    server
}

/// Serves `server` on a loopback port; returns its URL and the serving task.
pub async fn serve(server: &FakeApiServer) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let serving = tokio::spawn({
        let server = server.clone();
        async move {
            let _ = server.serve(listener, futures::future::pending()).await;
        }
    });
    (url, serving)
}

/// Writes a kubeconfig authenticating as the service account `namespace/name` to `dir`.
pub fn service_account_kubeconfig(
    server: &FakeApiServer,
    dir: &Path,
    url: &str,
    namespace: &str,
    name: &str,
) -> PathBuf {
    let token = server
        .service_account_token(namespace, name, 3600)
        .expect("a token for the service account");
    let path = dir.join(format!("{namespace}-{name}.kubeconfig"));
    std::fs::write(
        &path,
        fake_apiserver::kubeconfig::kubeconfig_yaml_with_token(url, &token, namespace),
    )
    .expect("write kubeconfig");
    path
}

/// A free loopback address for a controller's HTTP endpoints.
pub fn free_address() -> std::net::SocketAddr {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    probe.local_addr().expect("address")
}
