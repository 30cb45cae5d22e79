//! The recorded start-up writes ([`Image`]) and their replay.
//!
//! Two recordings ([`Recording`]): `image.txt`, the server's own writes (what a server without
//! controllers writes), and `image_controllers.txt`, the same with the reactions of every
//! controller driven inline (the default: each namespace's `default` ServiceAccount and root CA
//! ConfigMap, where the full path makes them). Each holds one write a line, in order:
//! `ADDED|MODIFIED <resource key> <namespace, or - for none> <name> <stored bytes>`, where the
//! bytes leave three things open: `{{uid N}}` (the uid of the object created by the Nth `ADDED`
//! line, counting from 0: the Nth uid the server draws), `{{now}}` (the server's clock at the
//! start) and `{{rv}}` (the write's resourceVersion, which the store assigns).

use std::sync::OnceLock;

use bytes::Bytes;

use crate::FakeApiServer;

/// Which start-up writes a recording holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Recording {
    /// The server's own writes (`image.txt`).
    Bare,
    /// The server's own writes and the reactions of every controller, driven inline
    /// (`image_controllers.txt`): replayed with no controller looking, since their work is in it.
    Controllers,
}

impl Recording {
    /// The recorded text (`make bootstrap-image` writes the files again).
    fn text(self) -> &'static str {
        match self {
            Recording::Bare => include_str!("image.txt"),
            Recording::Controllers => include_str!("image_controllers.txt"),
        }
    }

    /// The controllers the recording was made with.
    #[cfg(test)]
    fn controllers(self) -> crate::controllers::ControllerConfig {
        match self {
            Recording::Bare => crate::controllers::ControllerConfig::none(),
            Recording::Controllers => crate::controllers::ControllerConfig::all(),
        }
    }

    /// The file the recording is kept in.
    #[cfg(test)]
    fn file(self) -> &'static str {
        match self {
            Recording::Bare => "image.txt",
            Recording::Controllers => "image_controllers.txt",
        }
    }
}

/// Why the recorded writes cannot be replayed.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum ImageError {
    /// A line is not `EVENT RESOURCE NAMESPACE NAME BYTES`.
    #[error("line {line}: {message}")]
    Malformed { line: usize, message: String },
}

/// One piece of a recorded object's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(&'static str),
    /// The uid drawn for the Nth created object.
    Uid(usize),
    /// The time of the start.
    Now,
    /// The write's resourceVersion.
    ResourceVersion,
}

/// One recorded write.
#[derive(Debug)]
struct Write {
    /// Whether it creates the object (an `ADDED` event, which draws a uid).
    creates: bool,
    resource: &'static str,
    /// The resource key's group and plural.
    group: &'static str,
    plural: &'static str,
    namespace: &'static str,
    name: &'static str,
    pieces: Vec<Piece>,
    /// The length of the bytes but for the open pieces.
    text_len: usize,
}

impl Write {
    /// The stored bytes, with the open pieces filled in.
    fn fill(&self, uids: &[String], now: &str, rv: &str) -> Bytes {
        let mut out = String::with_capacity(self.text_len + 64);
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.push_str(text),
                // Indexes were checked against the creations before them when parsing.
                Piece::Uid(n) => out.push_str(uids.get(*n).map_or("", String::as_str)),
                Piece::Now => out.push_str(now),
                Piece::ResourceVersion => out.push_str(rv),
            }
        }
        Bytes::from(out)
    }
}

/// The recorded start-up writes.
#[derive(Debug)]
pub(crate) struct Image {
    writes: Vec<Write>,
}

/// A recorded image, read once per process.
pub(crate) fn recorded(recording: Recording) -> Result<&'static Image, ImageError> {
    static BARE: OnceLock<Result<Image, ImageError>> = OnceLock::new();
    static CONTROLLERS: OnceLock<Result<Image, ImageError>> = OnceLock::new();
    let cell = match recording {
        Recording::Bare => &BARE,
        Recording::Controllers => &CONTROLLERS,
    };
    cell.get_or_init(|| Image::parse(recording.text()))
        .as_ref()
        .map_err(Clone::clone)
}

impl Image {
    /// Reads the text of `image.txt`.
    fn parse(text: &'static str) -> Result<Image, ImageError> {
        let mut writes = Vec::new();
        let mut created = 0usize;
        for (index, line) in text.lines().enumerate() {
            let malformed = |message: String| ImageError::Malformed {
                line: index + 1,
                message,
            };
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut fields = line.splitn(5, ' ');
            let mut next = |what: &str| {
                fields
                    .next()
                    .filter(|f| !f.is_empty())
                    .ok_or_else(|| malformed(format!("no {what}")))
            };
            let creates = match next("event")? {
                "ADDED" => true,
                "MODIFIED" => false,
                other => return Err(malformed(format!("unknown event {other:?}"))),
            };
            let resource = next("resource")?;
            let namespace = match next("namespace")? {
                "-" => "",
                ns => ns,
            };
            let name = next("name")?;
            let bytes = next("bytes")?;
            let (group, plural) = resource
                .split_once('/')
                .ok_or_else(|| malformed(format!("resource key {resource:?} has no '/'")))?;
            if creates {
                created += 1;
            }
            let pieces = pieces(bytes, created).map_err(malformed)?;
            let text_len = pieces
                .iter()
                .map(|p| match p {
                    Piece::Text(t) => t.len(),
                    _ => 0,
                })
                .sum();
            writes.push(Write {
                creates,
                resource,
                group,
                plural,
                namespace,
                name,
                pieces,
                text_len,
            });
        }
        Ok(Image { writes })
    }

    /// Makes the recorded writes in `server`'s store, in order: a created object draws its uid
    /// from the server's source when it is written, every write takes the store's next
    /// resourceVersion and is an ordinary event. With `observed`, the controllers see each
    /// write as they see any write, so that their reactions (a `default` ServiceAccount in a
    /// new namespace) come where they come on the full path; a recording that holds those
    /// reactions is replayed unobserved. Aggregation is not run again: the record holds its
    /// writes.
    pub(crate) fn replay(&self, server: &FakeApiServer, observed: bool) {
        let now = server.shared.now_string();
        let mut uids: Vec<String> = Vec::new();
        let _deferred = crate::auth::aggregation::Deferred::enter();
        for write in &self.writes {
            if write.creates {
                uids.push(server.shared.new_uid());
            }
            let (event, bytes) = server.shared.store.put_encoded(
                write.resource,
                write.namespace,
                write.name,
                |rv| write.fill(&uids, &now, rv),
            );
            if !observed {
                continue;
            }
            let info = server
                .shared
                .registry
                .lookup_resource(write.group, write.plural);
            match (info, crate::store::json::from_slice(&bytes)) {
                (Some(info), Ok(object)) => {
                    crate::http::handlers::after_write(server, &info, &object, Some(event))
                }
                (info, parsed) => tracing::error!(
                    resource = write.resource,
                    name = write.name,
                    served = info.is_some(),
                    parsed = parsed.is_ok(),
                    "a recorded start-up write cannot be shown to the controllers"
                ),
            }
        }
    }
}

/// Splits recorded bytes at their open pieces; a `{{uid N}}` must name one of the `created`
/// objects created so far (this write's own included).
fn pieces(bytes: &'static str, created: usize) -> Result<Vec<Piece>, String> {
    // Every start reads the ~60 KB recording: a SIMD search for the two-byte mark, not `str::find`
    // (its two-way searcher took ~0.1 ms of a start).
    static OPEN: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"{{"));
    let mut pieces = Vec::new();
    let mut rest = bytes;
    while let Some(start) = OPEN.find(rest.as_bytes()) {
        if start > 0 {
            pieces.push(Piece::Text(&rest[..start]));
        }
        let after = &rest[start + 2..];
        // Holes are short (`uid 123`): a plain scan finds their end.
        let end = after
            .as_bytes()
            .windows(2)
            .position(|pair| pair == b"}}")
            .ok_or_else(|| "an unclosed {{".to_string())?;
        let hole = &after[..end];
        pieces.push(match hole {
            "now" => Piece::Now,
            "rv" => Piece::ResourceVersion,
            _ => {
                let n = hole
                    .strip_prefix("uid ")
                    .and_then(|n| n.parse::<usize>().ok())
                    .ok_or_else(|| format!("unknown piece {{{{{hole}}}}}"))?;
                if n >= created {
                    return Err(format!("uid {n} of an object not created yet"));
                }
                Piece::Uid(n)
            }
        });
        rest = &after[end + 2..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest));
    }
    Ok(pieces)
}

/// The time the image is recorded at: a value no object holds otherwise.
#[cfg(test)]
const RECORDED_AT: &str = "2001-02-03T04:05:06Z";

/// Records the start-up writes of a server with the recording's controllers, as the text of
/// its file.
#[cfg(test)]
pub(crate) fn record(recording: Recording) -> String {
    use std::fmt::Write as _;

    use crate::store::EventType;

    let at: jiff::Timestamp = RECORDED_AT.parse().expect("a valid timestamp");
    let server = FakeApiServer::builder()
        .seed(1)
        .clock(move || at)
        .controllers(recording.controllers())
        .assemble();
    let (backlog, mut events) = server.shared.store.watch_from(0).expect("a new store");
    assert!(backlog.is_empty());
    super::write_in_full(&server);
    let now = crate::registry::semantics::format_time(at);
    assert_eq!(now, RECORDED_AT);
    let mut uids: Vec<String> = Vec::new();
    let mut out = String::from(
        "# The start-up writes of a new server, recorded by `make bootstrap-image` (see\n\
         # fake-apiserver/src/bootstrap/image.rs): EVENT RESOURCE NAMESPACE NAME BYTES, the bytes\n\
         # with {{uid N}}, {{now}} and {{rv}} left open.\n",
    );
    while let Ok(event) = events.try_recv() {
        let text = std::str::from_utf8(&event.object).expect("stored JSON is UTF-8");
        assert!(!text.contains("{{") && !text.contains('\n'), "{text}");
        let creates = match event.event_type {
            EventType::Added => true,
            EventType::Modified => false,
            EventType::Deleted => panic!("a start-up write deletes {}", event.name),
        };
        if creates {
            let object: serde_json::Value = serde_json::from_str(text).expect("stored JSON");
            let uid = object["metadata"]["uid"].as_str().expect("a uid");
            uids.push(uid.to_string());
        }
        let rv = format!("\"resourceVersion\":\"{}\"", event.revision);
        assert_eq!(text.matches(&rv).count(), 1, "{text}");
        let mut template = text.replace(&rv, "\"resourceVersion\":\"{{rv}}\"");
        for (n, uid) in uids.iter().enumerate() {
            template = template.replace(uid.as_str(), &format!("{{{{uid {n}}}}}"));
        }
        template = template.replace(&now, "{{now}}");
        assert!(
            !template.contains("2001-02-03"),
            "a time not in metav1.Time form: {template}"
        );
        for field in [&*event.resource, &event.namespace, &event.name] {
            assert!(!field.contains(' '), "{field:?}");
        }
        let namespace = if event.namespace.is_empty() {
            "-"
        } else {
            &event.namespace
        };
        let event_name = if creates { "ADDED" } else { "MODIFIED" };
        writeln!(
            out,
            "{event_name} {} {namespace} {} {template}",
            event.resource, event.name
        )
        .expect("writing to a String");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// Each recording's file is what recording the start-up writes gives now. After a change
    /// to what the server writes at start (a bootstrap role, a defaulter of those kinds), record
    /// them again: `make bootstrap-image`.
    #[rstest]
    fn the_recorded_image_is_up_to_date(
        #[values(Recording::Bare, Recording::Controllers)] recording: Recording,
    ) {
        let fresh = record(recording);
        if std::env::var_os("FAKE_APISERVER_UPDATE_BOOTSTRAP").is_some() {
            let path = format!(
                "{}/src/bootstrap/{}",
                env!("CARGO_MANIFEST_DIR"),
                recording.file()
            );
            std::fs::write(&path, &fresh).expect("writing the recording");
            return;
        }
        assert!(
            fresh == recording.text(),
            "src/bootstrap/{} is out of date: run `make bootstrap-image`",
            recording.file()
        );
        let image = Image::parse(recording.text()).expect("the recorded image parses");
        assert!(image.writes.len() >= 24, "{} writes", image.writes.len());
        let service_accounts = image
            .writes
            .iter()
            .filter(|w| w.resource == "/serviceaccounts")
            .count();
        let expected = if recording == Recording::Bare { 0 } else { 4 };
        assert_eq!(service_accounts, expected);
    }

    #[rstest]
    #[case::no_event(" ADDED", "no event")]
    #[case::unknown_event("DELETED /namespaces - a {}", "unknown event")]
    #[case::no_bytes("ADDED /namespaces - a", "no bytes")]
    #[case::no_slash("ADDED namespaces - a {}", "has no '/'")]
    #[case::unclosed("ADDED /namespaces - a {\"uid\":\"{{uid 0\"}", "unclosed")]
    #[case::unknown_piece("ADDED /namespaces - a {\"x\":\"{{when}}\"}", "unknown piece")]
    #[case::uid_ahead("ADDED /namespaces - a {\"x\":\"{{uid 1}}\"}", "not created yet")]
    #[case::uid_of_nothing("MODIFIED /namespaces - a {\"x\":\"{{uid 0}}\"}", "not created yet")]
    fn malformed_lines_are_refused(#[case] line: &'static str, #[case] message: &str) {
        let err = Image::parse(line).expect_err("malformed");
        assert!(err.to_string().contains(message), "{err}");
        assert!(err.to_string().starts_with("line 1: "), "{err}");
    }

    #[test]
    fn pieces_are_filled_in_place() {
        let image = Image::parse(
            "# a comment\n\
             ADDED /namespaces - a {\"uid\":\"{{uid 0}}\",\"t\":\"{{now}}\",\"rv\":\"{{rv}}\"}\n\
             MODIFIED /namespaces - a {{uid 0}}{{rv}}\n",
        )
        .expect("a valid image");
        assert_eq!(image.writes.len(), 2);
        let first = &image.writes[0];
        assert!(first.creates);
        assert_eq!((first.group, first.plural), ("", "namespaces"));
        assert_eq!(first.namespace, "");
        let uids = vec!["u-0".to_string()];
        assert_eq!(
            first.fill(&uids, "T", "7"),
            Bytes::from_static(b"{\"uid\":\"u-0\",\"t\":\"T\",\"rv\":\"7\"}")
        );
        assert_eq!(
            image.writes[1].pieces,
            vec![Piece::Uid(0), Piece::ResourceVersion]
        );
        assert_eq!(image.writes[1].fill(&uids, "T", "8"), Bytes::from("u-08"));
    }
}
