//! `fake-apiserver --state FILE`: a truncated or corrupt file is refused at start with an error
//! naming the file and the problem, nothing of it loaded and the file untouched; a second SIGTERM
//! while the state is being written ends the process and leaves the old file intact.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use fake_apiserver::FakeApiServer;
use serde_json::json;

const BINARY: &str = env!("CARGO_BIN_EXE_fake-apiserver");

/// A running binary and its stderr lines.
struct Process {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Process {
    fn start(state: &Path, load: Option<&Path>, envs: &[(&str, &str)]) -> Self {
        let mut command = Command::new(BINARY);
        command
            // No controllers: the files hold exactly what the tests wrote (no root CA ConfigMaps).
            .args(["--no-controllers", "--listen", "127.0.0.1:0", "--state"])
            .arg(state)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(load) = load {
            command.arg("--load").arg(load);
        }
        for (k, v) in envs {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("cannot start fake-apiserver");
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Process {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits for a stderr line containing `text`.
    fn wait_for(&mut self, text: &str) {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            match self.lines.recv_timeout(Duration::from_millis(100)) {
                Ok(line) => {
                    let found = line.contains(text);
                    self.seen.push(line);
                    if found {
                        return;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        panic!(
            "no line with {text:?}; the process said:\n{}",
            self.seen.join("\n")
        );
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the process to exit; its success and everything it said.
    fn finish(mut self) -> (bool, String) {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the process did not exit:\n{}", self.seen.join("\n"));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(500)) {
            self.seen.push(line);
        }
        (status.success(), self.seen.join("\n"))
    }
}

fn manifest_dir(dir: &Path, names: &[&str]) -> std::path::PathBuf {
    let manifests = dir.join(format!("manifests-{}", names.len()));
    std::fs::create_dir_all(&manifests).unwrap();
    for name in names {
        std::fs::write(
            manifests.join(format!("{name}.json")),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": name, "namespace": "default"}, "data": {"x": "1"}})
            .to_string(),
        )
        .unwrap();
    }
    manifests
}

/// Runs the binary once so that it saves a state with the given objects; returns the file.
fn saved_state(dir: &Path, names: &[&str]) -> Vec<u8> {
    let state = dir.join("state.json");
    let mut process = Process::start(&state, Some(&manifest_dir(dir, names)), &[]);
    process.wait_for("fake-apiserver ready on");
    process.signal("TERM");
    let (ok, said) = process.finish();
    assert!(ok, "{said}");
    std::fs::read(&state).unwrap()
}

#[test]
fn a_second_sigterm_while_the_state_is_written_leaves_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let old = saved_state(dir.path(), &["first"]);
    let state = dir.path().join("state.json");

    // The next run has more to save, and pauses with its temporary file written.
    let mut process = Process::start(
        &state,
        Some(&manifest_dir(dir.path(), &["first", "second"])),
        &[("FAKE_APISERVER_STATE_WRITE_DELAY_MS", "20000")],
    );
    process.wait_for("fake-apiserver ready on");
    process.signal("TERM");
    process.wait_for("writing state");
    // The new state is in its temporary file beside the old one, not yet renamed.
    let temporary = format!("state.json.tmp.{}", process.child.id());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !dir.path().join(&temporary).exists() {
        assert!(std::time::Instant::now() < deadline, "no {temporary}");
        std::thread::sleep(Duration::from_millis(20));
    }
    process.signal("TERM");
    let (ok, said) = process.finish();
    assert!(!ok, "a second signal is not a clean exit:\n{said}");
    assert!(said.contains("second signal"), "{said}");
    assert_eq!(
        std::fs::read(&state).unwrap(),
        old,
        "the old state file was changed"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("state.json."))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");

    // Without the second signal the same run saves the new state.
    let mut process = Process::start(
        &state,
        Some(&manifest_dir(dir.path(), &["first", "second"])),
        &[],
    );
    process.wait_for("fake-apiserver ready on");
    process.signal("TERM");
    let (ok, said) = process.finish();
    assert!(ok, "{said}");
    let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
    let names: Vec<_> = saved["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["resource"] == "/configmaps")
        .map(|o| {
            o["object"]["metadata"]["name"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(names, ["first", "second"]);
}

#[rstest::rstest]
#[case::truncated(None, "is truncated")]
#[case::garbled(Some(b"{\"revision\": \"5\", \"objects\": [}".as_slice()), "not valid JSON")]
#[case::wrong_shape(Some(b"{\"revision\": \"5\", \"objects\": [{\"resource\": \"/configmaps\", \"object\": {\"metadata\": {\"name\": \"a\", \"namespace\": \"default\", \"resourceVersion\": \"9\"}}}]}".as_slice()), "objects[0] (/configmaps \"a\").metadata.resourceVersion: 9 is newer than the state's revision 5")]
fn a_corrupt_state_file_is_refused_and_left_alone(
    #[case] contents: Option<&[u8]>,
    #[case] problem: &str,
) {
    let dir = tempfile::tempdir().unwrap();
    let contents = match contents {
        Some(c) => c.to_vec(),
        None => {
            let good = saved_state(dir.path(), &["first"]);
            good[..good.len() * 2 / 3].to_vec()
        }
    };
    let state = dir.path().join("state.json");
    std::fs::write(&state, &contents).unwrap();
    let process = Process::start(&state, None, &[]);
    let (ok, said) = process.finish();
    assert!(!ok, "started from a corrupt state:\n{said}");
    assert!(said.contains(&state.display().to_string()), "{said}");
    assert!(said.contains(problem), "{said}");
    assert!(!said.contains("ready on"), "{said}");
    assert_eq!(
        std::fs::read(&state).unwrap(),
        contents,
        "the file was changed"
    );
}

#[test]
fn a_refused_state_loads_nothing() {
    let server = FakeApiServer::new();
    let revision = server.revision();
    let good = json!({"resource": "/configmaps", "object": {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "good", "namespace": "default", "resourceVersion": "3"}}});
    let bad = json!({"resource": "/configmaps", "object": {"metadata": {"name": "bad"}}});
    let error = server
        .import_state(json!({"revision": "10", "objects": [good, bad]}))
        .unwrap_err();
    assert!(error.to_string().contains("objects[1]"), "{error}");
    assert!(server
        .get_object("v1", "configmaps", Some("default"), "good")
        .is_none());
    // The start-up namespaces are still there, at the same revision.
    assert!(server
        .get_object("v1", "namespaces", None, "default")
        .is_some());
    assert_eq!(server.revision(), revision);
}
