//! The `fake-apiserver` binary with `--token-auth-file` (the real server's CSV format:
//! `token,user,uid,"group1,group2"`), `--authorization-mode RBAC` and HTTPS
//! (`--tls-cert-file`, `--tls-private-key-file`), driven by `kubectl`: each token is its user,
//! RBAC answers for it, an unknown token gets 401, and a malformed file stops the server with
//! the line at fault.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The tokens: the admin in `system:masters`, alice in two groups, bob in none.
const TOKENS: &str = "admin-token,admin,u-admin,system:masters\n\
                      alice-token,alice,u-alice,\"dev,qa\"\n\
                      bob-token,bob,u-bob\n";

/// A running binary; killed when dropped.
struct Server {
    child: Child,
    kubeconfig: PathBuf,
    dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn self_signed_certificate(dir: &Path) -> (PathBuf, PathBuf) {
    fake_apiserver::tls::self_signed_loopback_certificate(dir).expect("a self-signed certificate")
}

/// Starts the binary with `tokens` as its token file; waits for its ready line.
fn start(tokens: &str) -> Result<Server, String> {
    let dir = tempfile::tempdir().expect("temporary directory");
    let token_file = dir.path().join("tokens.csv");
    std::fs::write(&token_file, tokens).expect("write token file");
    let (cert, key) = self_signed_certificate(dir.path());
    let kubeconfig = dir.path().join("kubeconfig");
    let mut child = Command::new(env!("CARGO_BIN_EXE_fake-apiserver"))
        .arg("--listen")
        .arg("127.0.0.1:0")
        .arg("--token-auth-file")
        .arg(&token_file)
        .args(["--authorization-mode", "RBAC"])
        .arg("--tls-cert-file")
        .arg(&cert)
        .arg("--tls-private-key-file")
        .arg(&key)
        .arg("--kubeconfig-out")
        .arg(&kubeconfig)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start fake-apiserver");
    let stderr = child.stderr.take().expect("stderr");
    let (lines_tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        match lines.recv_timeout(Duration::from_millis(200)) {
            Ok(line) if line.contains("ready on https://") => {
                return Ok(Server {
                    child,
                    kubeconfig,
                    dir,
                })
            }
            Ok(line) => seen.push(line),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    Err(seen.join("\n"))
}

/// Runs kubectl against `server` with `--token token`; returns (exit code, stdout, stderr).
fn kubectl(server: &Server, token: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&server.kubeconfig)
        .arg("--cache-dir")
        .arg(server.dir.path().join("cache"))
        .arg("--token")
        .arg(token)
        .args(["--request-timeout", "20s"])
        .args(args)
        .env_remove("KUBECONFIG")
        .env("HOME", server.dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("run kubectl");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn each_token_is_its_user_and_rbac_answers_for_it() {
    let server = start(TOKENS).expect("the server starts");
    let whoami = |token: &str| {
        let (code, stdout, stderr) = kubectl(&server, token, &["auth", "whoami", "-o", "json"]);
        assert_eq!(code, Some(0), "{stderr}");
        let review: Value = serde_json::from_str(&stdout).expect("JSON");
        review["status"]["userInfo"].clone()
    };
    assert_eq!(
        whoami("alice-token"),
        json!({"username": "alice", "uid": "u-alice", "groups": ["dev", "qa", "system:authenticated"]})
    );
    assert_eq!(
        whoami("bob-token"),
        json!({"username": "bob", "uid": "u-bob", "groups": ["system:authenticated"]})
    );

    // The admin (system:masters) grants alice the `view` role in `default`.
    let (code, _, stderr) = kubectl(
        &server,
        "admin-token",
        &[
            "create",
            "rolebinding",
            "alice-views",
            "--clusterrole=view",
            "--user=alice",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let (code, stdout, stderr) =
        kubectl(&server, "alice-token", &["auth", "can-i", "list", "pods"]);
    assert_eq!((code, stdout.as_str()), (Some(0), "yes\n"), "{stderr}");
    let (code, stdout, _) = kubectl(&server, "bob-token", &["auth", "can-i", "list", "pods"]);
    assert_eq!((code, stdout.as_str()), (Some(1), "no\n"));
    let (code, _, stderr) = kubectl(&server, "bob-token", &["get", "configmaps"]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("Error from server (Forbidden): configmaps is forbidden: User \"bob\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""),
        "{stderr}"
    );

    // A token not in the file is refused.
    let (code, _, stderr) = kubectl(&server, "not-in-the-file", &["get", "--raw", "/version"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("Unauthorized"), "{stderr}");
}

#[test]
fn a_malformed_token_file_stops_the_server_naming_the_line() {
    let Err(log) = start("admin-token,admin,u-admin\nonly-a-token\n") else {
        panic!("the server started with a malformed token file");
    };
    assert!(log.contains("tokens.csv"), "{log}");
}
