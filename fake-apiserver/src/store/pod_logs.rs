//! Container log lines, written by whatever stands in for the kubelet
//! ([`crate::FakeApiServer::append_pod_log`]) and read through `pods/log`.
//!
//! Lines are kept per pod uid and container, so a pod deleted and created again under the same
//! name starts with no lines, and they are dropped with the pod. Each line carries the server's
//! clock at the time it was written, for `timestamps` and `sinceSeconds`/`sinceTime`. A
//! `follow` request subscribes to [`PodLogs::subscribe`], which ticks on every change.

use std::collections::BTreeMap;
use std::sync::Mutex;

use tokio::sync::watch;

/// One written line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// When the line was written (the server's clock).
    pub at: jiff::Timestamp,
    /// The line, without its newline.
    pub text: String,
}

/// Every pod's container logs.
#[derive(Debug)]
pub(crate) struct PodLogs {
    lines: Mutex<BTreeMap<(String, String), Vec<LogLine>>>,
    /// Counts changes (lines written, pods forgotten), for followers.
    changes: watch::Sender<u64>,
}

impl Default for PodLogs {
    fn default() -> Self {
        Self {
            lines: Mutex::default(),
            changes: watch::channel(0).0,
        }
    }
}

impl PodLogs {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, String), Vec<LogLine>>> {
        self.lines.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends lines (split at newlines) to a container's log.
    pub(crate) fn append(&self, uid: &str, container: &str, text: &str, at: jiff::Timestamp) {
        let mut lines = self.lock();
        let log = lines
            .entry((uid.to_string(), container.to_string()))
            .or_default();
        for line in text.lines() {
            log.push(LogLine {
                at,
                text: line.to_string(),
            });
        }
        drop(lines);
        self.changes.send_modify(|n| *n += 1);
    }

    /// A receiver that sees a change whenever a line is written or a pod's logs are dropped.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// A container's lines, or `None` if nothing was ever written for it.
    pub(crate) fn read(&self, uid: &str, container: &str) -> Option<Vec<LogLine>> {
        self.lock()
            .get(&(uid.to_string(), container.to_string()))
            .cloned()
    }

    /// Forgets a pod's logs.
    pub(crate) fn remove_pod(&self, uid: &str) {
        self.lock().retain(|(u, _), _| u != uid);
        self.changes.send_modify(|n| *n += 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_kept_per_pod_and_container() {
        let logs = PodLogs::default();
        let t = jiff::Timestamp::UNIX_EPOCH;
        logs.append("u1", "c", "one\ntwo", t);
        logs.append("u1", "d", "other", t);
        let lines = logs.read("u1", "c").unwrap();
        assert_eq!(
            lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>(),
            ["one", "two"]
        );
        assert!(logs.read("u2", "c").is_none());
        logs.remove_pod("u1");
        assert!(logs.read("u1", "d").is_none());
    }
}
