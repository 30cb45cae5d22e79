//! The real `kubectl` against the fake API server's CertificateSigningRequests
//! (`certificates.k8s.io/v1`): a request records who sent it whatever the client claimed,
//! `kubectl get csr` prints the real columns, `kubectl certificate approve`/`deny` go through the
//! `approval` subresource, a signer issues through `status`, the request's PEM and signature are
//! checked, `system:masters` may not be asked of the API server client signer, and approving or
//! signing needs the `approve`/`sign` verb on the signer under RBAC.

use crate::kubectl_support;

use base64::Engine;
use fake_apiserver::auth::{AuthorizationMode, StaticTokens};
use fake_apiserver::FakeApiServer;
use kubectl_support::Cluster;
use serde_json::{json, Value};

const EC_CSR: &str = include_str!("../../../fake-apiserver/src/rules/certificates/testdata/ec.csr");
const MASTERS_CSR: &str =
    include_str!("../../../fake-apiserver/src/rules/certificates/testdata/masters.csr");
const CERT: &str = include_str!("../../../fake-apiserver/src/rules/certificates/testdata/cert.pem");

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn request(name: &str, pem: &str, signer: &str) -> Value {
    json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {"request": b64(pem), "signerName": signer, "usages": ["client auth"],
            "expirationSeconds": 3600, "username": "mallory", "groups": ["system:masters"]}})
}

fn create(cluster: &Cluster, object: &Value) -> kubectl_support::Run {
    let file = cluster.write_json("csr.json", object);
    cluster.kubectl(&["create", "-f", &file])
}

fn csr(cluster: &Cluster, name: &str) -> Value {
    cluster.must_get(
        "certificates.k8s.io/v1",
        "certificatesigningrequests",
        None,
        name,
    )
}

fn condition_types(csr: &Value) -> Vec<String> {
    csr["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| c["type"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_request_is_approved_denied_and_issued_as_on_a_real_cluster() {
    let cluster = Cluster::start();
    create(&cluster, &request("alpha", EC_CSR, "example.com/signer"))
        .ok()
        .stdout_is("certificatesigningrequest.certificates.k8s.io/alpha created\n");
    create(&cluster, &request("beta", EC_CSR, "example.com/signer")).ok();
    // The requestor is who sent it, not who the body claims.
    let alpha = csr(&cluster, "alpha");
    assert_eq!(alpha["spec"]["username"], "system:admin");
    assert_eq!(
        alpha["spec"]["groups"],
        json!(["system:masters", "system:authenticated"])
    );
    assert_eq!(alpha["status"], json!({}));

    let rows = cluster.kubectl(&["get", "csr"]).ok().rows();
    assert_eq!(
        rows[0],
        [
            "NAME",
            "AGE",
            "SIGNERNAME",
            "REQUESTOR",
            "REQUESTEDDURATION",
            "CONDITION"
        ]
    );
    assert_eq!(rows[1][0], "alpha");
    assert_eq!(
        rows[1][2..],
        ["example.com/signer", "system:admin", "60m", "Pending"]
    );

    cluster
        .kubectl(&["certificate", "approve", "alpha"])
        .ok()
        .stdout_is("certificatesigningrequest.certificates.k8s.io/alpha approved\n");
    cluster
        .kubectl(&["certificate", "deny", "beta"])
        .ok()
        .stdout_is("certificatesigningrequest.certificates.k8s.io/beta denied\n");
    let alpha = csr(&cluster, "alpha");
    assert_eq!(condition_types(&alpha), ["Approved"]);
    let approved = &alpha["status"]["conditions"][0];
    assert_eq!(approved["reason"], "KubectlApprove");
    assert!(approved["lastUpdateTime"].is_string(), "{approved}");
    assert!(approved["lastTransitionTime"].is_string(), "{approved}");
    assert_eq!(condition_types(&csr(&cluster, "beta")), ["Denied"]);

    // The signer issues through `status`; the certificate is then fixed.
    let mut issued = alpha.clone();
    issued["status"]["certificate"] = json!(b64(CERT));
    let file = cluster.write_json("issued.json", &issued);
    cluster
        .kubectl(&["replace", "--subresource=status", "-f", &file])
        .ok();
    let rows = cluster
        .kubectl(&[
            "get",
            "csr",
            "--field-selector",
            "spec.signerName=example.com/signer",
        ])
        .ok()
        .rows();
    let conditions: Vec<&str> = rows[1..].iter().map(|r| r[5].as_str()).collect();
    assert_eq!(conditions, ["Approved,Issued", "Denied"]);
    let mut reissued = csr(&cluster, "alpha");
    reissued["status"]["certificate"] = json!(b64(&format!("{CERT}{CERT}")));
    let file = cluster.write_json("reissued.json", &reissued);
    cluster
        .kubectl(&["replace", "--subresource=status", "-f", &file])
        .fails()
        .stderr_has(
            "status.certificate: Forbidden: updates may not modify existing certificate content",
        );

    // A decision is not taken back, and the main endpoint changes neither spec nor status.
    let mut undecided = csr(&cluster, "beta");
    undecided["status"]["conditions"] = json!([]);
    let file = cluster.write_json("undecided.json", &undecided);
    cluster
        .kubectl(&["replace", "--subresource=approval", "-f", &file])
        .fails()
        .stderr_has("updates may not remove a condition of type \"Denied\"");
    let mut relabelled = csr(&cluster, "beta");
    relabelled["metadata"]["labels"] = json!({"team": "a"});
    relabelled["spec"]["usages"] = json!(["server auth"]);
    relabelled["status"]["conditions"] = json!([]);
    let file = cluster.write_json("relabelled.json", &relabelled);
    cluster.kubectl(&["replace", "-f", &file]).ok();
    let beta = csr(&cluster, "beta");
    assert_eq!(beta["metadata"]["labels"], json!({"team": "a"}));
    assert_eq!(beta["spec"]["usages"], json!(["client auth"]));
    assert_eq!(condition_types(&beta), ["Denied"]);
}

#[test]
fn bad_requests_are_refused_in_the_real_servers_words() {
    let cluster = Cluster::start();
    create(&cluster, &request("garbage", "hi", "example.com/signer"))
        .fails()
        .stderr_has("The CertificateSigningRequest \"garbage\" is invalid: spec.request: Invalid value: []byte{0x68, 0x69}: PEM block type must be CERTIFICATE REQUEST");
    create(&cluster, &request("legacy", EC_CSR, "kubernetes.io/legacy-unknown"))
        .fails()
        .stderr_has("spec.signerName: Invalid value: \"kubernetes.io/legacy-unknown\": the legacy signerName is not allowed via this API version");
    create(&cluster, &request("masters", MASTERS_CSR, "kubernetes.io/kube-apiserver-client"))
        .fails()
        .stderr_has("certificatesigningrequests.certificates.k8s.io \"masters\" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed");
    // The same subject for another signer is fine.
    create(
        &cluster,
        &request("masters", MASTERS_CSR, "example.com/signer"),
    )
    .ok();
    // Approval is only through `approval`: a status write may not add it.
    let mut approved = csr(&cluster, "masters");
    approved["status"]["conditions"] = json!([{"type": "Approved", "status": "True"}]);
    let file = cluster.write_json("approved.json", &approved);
    cluster
        .kubectl(&["replace", "--subresource=status", "-f", &file])
        .fails()
        .stderr_has("updates may not add a condition of type \"Approved\"");
}

/// Static tokens: the admin in `system:masters`, alice in `dev`.
const TOKENS: &str = "admin-token,admin,u-admin,system:masters\nalice-token,alice,u-alice,dev\n";

#[test]
fn approving_needs_the_approve_verb_on_the_signer() {
    let cluster = Cluster::start_tls_with(|| {
        FakeApiServer::builder()
            .static_tokens(StaticTokens::parse("tokens.csv", TOKENS).expect("token file"))
            .authorization_mode(AuthorizationMode::Rbac)
            .build()
    });
    let admin = cluster.token_kubeconfig("admin", "admin-token");
    let alice = cluster.token_kubeconfig("alice", "alice-token");
    let rules = |signers: bool| {
        let mut rules = vec![json!({"apiGroups": ["certificates.k8s.io"],
            "resources": ["certificatesigningrequests", "certificatesigningrequests/approval"],
            "verbs": ["create", "get", "list", "update"]})];
        if signers {
            rules.push(
                json!({"apiGroups": ["certificates.k8s.io"], "resources": ["signers"],
                "resourceNames": ["example.com/*"], "verbs": ["approve"]}),
            );
        }
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "csr-approver"}, "rules": rules})
    };
    let file = cluster.write_json("role.json", &rules(false));
    cluster.kubectl_with(&admin, &["apply", "-f", &file]).ok();
    cluster
        .kubectl_with(
            &admin,
            &[
                "create",
                "clusterrolebinding",
                "alice-approves",
                "--clusterrole=csr-approver",
                "--user=alice",
            ],
        )
        .ok();
    let file = cluster.write_json("csr.json", &request("own", EC_CSR, "example.com/signer"));
    cluster.kubectl_with(&alice, &["create", "-f", &file]).ok();
    let own = cluster
        .kubectl_with(&admin, &["get", "csr", "own", "-o", "json"])
        .ok()
        .json();
    assert_eq!(own["spec"]["username"], "alice");
    assert_eq!(own["spec"]["uid"], "u-alice");
    assert_eq!(
        own["spec"]["groups"],
        json!(["dev", "system:authenticated"])
    );

    cluster
        .kubectl_with(&alice, &["certificate", "approve", "own"])
        .fails()
        .stderr_has("certificatesigningrequests.certificates.k8s.io \"own\" is forbidden: user not permitted to approve requests with signerName \"example.com/signer\"");
    // The signer's domain wildcard is enough.
    let file = cluster.write_json("role.json", &rules(true));
    cluster.kubectl_with(&admin, &["apply", "-f", &file]).ok();
    cluster
        .kubectl_with(&alice, &["certificate", "approve", "own"])
        .ok();
    let own = cluster
        .kubectl_with(&admin, &["get", "csr", "own", "-o", "json"])
        .ok()
        .json();
    assert_eq!(condition_types(&own), ["Approved"]);
}
