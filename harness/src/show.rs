//! Timelines of a run, for people: the same [`Run`] that [`Run::render`] prints as a log, drawn
//! with one column (text) or one swimlane (HTML) per lane, so that who moved when, and what the
//! other actors were doing around the step that broke the invariant, can be seen at a glance.
//!
//! - [`text`] renders a plain-text table for terminals and test output: one row per step, one
//!   column per lane, the violation marked at the end. No colours, byte-for-byte deterministic.
//! - [`html`] renders one self-contained HTML page (inline CSS and JS, nothing fetched): one
//!   horizontal swimlane per lane, steps placed left to right by step index and coloured by
//!   kind, details on hover and click, the violation step in red under a banner, and the full
//!   text log at the bottom.
//!
//! Lanes appear in the order of their first step in the trace.

use std::fmt::Write as _;

use crate::trace::{format_ms, Run, Step};

/// Widest a lane column of [`text`] gets, in characters; longer cells are cut with `…`.
const CELL_WIDTH: usize = 38;

/// Horizontal room of one step in the [`html`] swimlanes, in CSS pixels.
const STEP_PX: usize = 40;

/// Width of the lane-name column of the [`html`] swimlanes, in CSS pixels.
const NAME_PX: usize = 200;

/// The HTTP verbs an `action` starts with when it is a request to the API server.
const HTTP_VERBS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// Renders `run` as a plain-text timeline.
///
/// The first line is the header: `title`, the number of steps and the virtual duration (the
/// time of the last step). Then comes a row of lane names, a rule, and one row per step: its
/// number, its virtual time, and one column per lane (in order of first appearance), where the
/// step's own lane shows `action → outcome` and every other lane a thin `│`. Cells longer than
/// 38 characters are cut with `…`: in the middle of the action when that leaves room for the
/// outcome (so `PATCH /apis/…/status → injected 409` keeps both ends), else at the end. When the run ended in a violation, the step that detected it
/// (the last one) is marked with `✗` in the left margin and the last line reads
/// `✗ VIOLATION: …` with the full text. No ANSI colours; the output depends only on `run` and
/// `title`.
pub fn text(run: &Run, title: &str) -> String {
    let lanes = lanes(run);
    let cells: Vec<String> = run.trace.iter().map(cell).collect();
    let widths: Vec<usize> = lanes
        .iter()
        .map(|lane| {
            let widest = run
                .trace
                .iter()
                .zip(&cells)
                .filter(|(step, _)| step.lane == *lane)
                .map(|(_, c)| c.chars().count())
                .max()
                .unwrap_or(0);
            widest.max(lane.chars().count()).clamp(1, CELL_WIDTH)
        })
        .collect();

    let mut out = String::new();
    let _ = writeln!(out, "{}", header(run, title));

    let mut row = format!("  {:>4} {:>9} ", "#", "time");
    for (lane, &w) in lanes.iter().zip(&widths) {
        let _ = write!(row, " {:<w$}", truncate(lane, w));
    }
    push_row(&mut out, &row);
    let rule_len = row.trim_end().chars().count();
    push_row(&mut out, &"─".repeat(rule_len));

    let violation_at = violation_step(run);
    for (i, (step, content)) in run.trace.iter().zip(&cells).enumerate() {
        let mark = if Some(i) == violation_at { '✗' } else { ' ' };
        let mut row = format!("{mark} {i:>4} {:>9} ", format_ms(step.at_ms));
        for (lane, &w) in lanes.iter().zip(&widths) {
            let shown = if step.lane == *lane {
                fit(step, content, w)
            } else {
                "│".to_string()
            };
            let _ = write!(row, " {shown:<w$}");
        }
        push_row(&mut out, &row);
    }
    if run.trace.is_empty() {
        out.push_str("  (no steps)\n");
    }
    if let Some(v) = &run.violation {
        let _ = writeln!(out, "✗ VIOLATION: {v}");
    }
    out
}

/// Renders `run` as one self-contained HTML page titled `title`.
///
/// The page needs nothing but itself: inline CSS, a little inline JS, no fonts, images or
/// scripts from elsewhere. Each lane is a horizontal swimlane with its name on the left; step
/// `i` sits at `x = i`, so steps at the same virtual time stay apart and in order, and a tick
/// row above the lanes shows the virtual time wherever it moves. Steps are coloured by kind
/// (API request, watch delivery, fault, clock, other; see the legend on the page). Hovering a
/// step shows its number, time, lane, action and outcome; clicking pins them in the detail bar,
/// after which the arrow keys walk the steps. When the run ended in a violation, the step that
/// detected it (the last one) is red and the violation text is in a banner at the top. The full
/// text log ([`Run::render`]) is at the bottom in a collapsible `<details>`. Long runs scroll
/// horizontally with the lane names kept in view. Every string from the run is HTML-escaped
/// (or, inside the embedded JSON, `<`, `>` and `&` are `\u` escapes).
pub fn html(run: &Run, title: &str) -> String {
    let lanes = lanes(run);
    let n = run.trace.len();
    let violation_at = violation_step(run);
    let width = NAME_PX + n.max(1) * STEP_PX + STEP_PX;

    let mut out = String::with_capacity(4096 + n * 400);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(out, "<title>{}</title>", escape(title));
    let _ = writeln!(
        out,
        "<style>\n:root {{ --step: {STEP_PX}px; --name: {NAME_PX}px; }}\n{CSS}</style>"
    );
    out.push_str("</head>\n<body>\n");

    let _ = writeln!(out, "<h1>{}</h1>", escape(title));
    let _ = writeln!(
        out,
        "<p class=\"meta\">{} steps · {} virtual · {} lanes · {} decisions</p>",
        n,
        format_ms(duration_ms(run)),
        lanes.len(),
        run.choices.len()
    );

    if let (Some(v), Some(i)) = (&run.violation, violation_at) {
        let _ = writeln!(
            out,
            "<div class=\"banner\" id=\"banner\">✗ VIOLATION detected at \
             <a href=\"#s{i}\" data-i=\"{i}\">step {i}</a> ({}, lane {}): \
             <span class=\"vtext\">{}</span></div>",
            format_ms(run.trace[i].at_ms),
            escape(&run.trace[i].lane),
            escape(v)
        );
    } else if let Some(v) = &run.violation {
        let _ = writeln!(
            out,
            "<div class=\"banner\" id=\"banner\">✗ VIOLATION: <span class=\"vtext\">{}</span></div>",
            escape(v)
        );
    }

    out.push_str("<div class=\"legend\">");
    for kind in Kind::ALL {
        let _ = write!(
            out,
            "<span class=\"key\"><i class=\"it {}\"></i>{}</span>",
            kind.class(),
            kind.label()
        );
    }
    if violation_at.is_some() {
        out.push_str("<span class=\"key\"><i class=\"it violation\"></i>violation</span>");
    }
    out.push_str("</div>\n");

    out.push_str(
        "<div class=\"detail\" id=\"detail\">Hover a step for its details; click to pin it, \
         then ← → walk the steps.</div>\n",
    );

    if n == 0 {
        out.push_str("<p class=\"empty\">No steps.</p>\n");
    } else {
        let _ = writeln!(
            out,
            "<div class=\"scroll\" id=\"scroll\">\n<div class=\"grid\" style=\"width:{width}px\">"
        );
        ticks(&mut out, run, violation_at);
        for lane in &lanes {
            let _ = write!(
                out,
                "<div class=\"row lane\"><div class=\"name\" title=\"{0}\">{0}</div><div class=\"track\">",
                escape(lane)
            );
            if let Some(v) = violation_at {
                let _ = write!(
                    out,
                    "<div class=\"vcol\" style=\"left:{}px\"></div>",
                    v * STEP_PX
                );
            }
            for (i, step) in run.trace.iter().enumerate() {
                if step.lane != *lane {
                    continue;
                }
                let mut class = String::from("it ");
                class.push_str(Kind::of(step).class());
                if is_error(&step.outcome) {
                    class.push_str(" err");
                }
                if Some(i) == violation_at {
                    class.push_str(" violation");
                }
                let _ = write!(
                    out,
                    "<div class=\"{class}\" id=\"s{i}\" data-i=\"{i}\" style=\"left:{}px\">{}</div>",
                    i * STEP_PX,
                    escape(&short_label(step))
                );
            }
            out.push_str("</div></div>\n");
        }
        out.push_str("</div>\n</div>\n");
    }

    let _ = writeln!(
        out,
        "<details class=\"log\"><summary>Full log ({n} steps)</summary>\n<pre>{}</pre>\n</details>",
        escape(&run.render())
    );

    out.push_str("<div class=\"tip\" id=\"tip\" hidden></div>\n");
    let _ = writeln!(
        out,
        "<script type=\"application/json\" id=\"steps\">{}</script>",
        steps_json(run, violation_at)
    );
    let _ = writeln!(out, "<script>\n{JS}</script>");
    out.push_str("</body>\n</html>\n");
    out
}

/// Escapes `s` for use in HTML text and in quoted attribute values: `&`, `<`, `>`, `"`, `'`.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// What a step is, as far as its text tells; decides its colour in [`html`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A request to the API server (`GET …`, `PATCH …`).
    Request,
    /// A watch event delivered to an informer cache (`deliver …`).
    Deliver,
    /// An injected fault, a crash, a dropped watch, an expired resource version (410).
    Fault,
    /// Virtual time moving (lane `clock`).
    Clock,
    /// Anything else (world actions such as the kubelet).
    Other,
}

impl Kind {
    const ALL: [Kind; 5] = [
        Kind::Request,
        Kind::Deliver,
        Kind::Fault,
        Kind::Clock,
        Kind::Other,
    ];

    fn of(step: &Step) -> Kind {
        let action = step.action.to_ascii_lowercase();
        let outcome = step.outcome.to_ascii_lowercase();
        let faulty = |s: &str| {
            ["injected", "crash", "drop"].iter().any(|w| s.contains(w)) || has_number(s, "410")
        };
        if step.lane == "faults" || faulty(&action) || faulty(&outcome) {
            Kind::Fault
        } else if step.lane == "clock" {
            Kind::Clock
        } else if http_verb(&step.action).is_some() {
            Kind::Request
        } else if action.starts_with("deliver") {
            Kind::Deliver
        } else {
            Kind::Other
        }
    }

    fn class(self) -> &'static str {
        match self {
            Kind::Request => "k-request",
            Kind::Deliver => "k-deliver",
            Kind::Fault => "k-fault",
            Kind::Clock => "k-clock",
            Kind::Other => "k-other",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Kind::Request => "API request",
            Kind::Deliver => "watch delivery",
            Kind::Fault => "fault / crash / drop / 410",
            Kind::Clock => "clock",
            Kind::Other => "other",
        }
    }
}

/// The lanes of `run`, in order of first appearance.
fn lanes(run: &Run) -> Vec<&str> {
    let mut lanes: Vec<&str> = Vec::new();
    for step in &run.trace {
        if !lanes.contains(&step.lane.as_str()) {
            lanes.push(&step.lane);
        }
    }
    lanes
}

/// The index of the step that detected the violation: the last step, if the run has one.
fn violation_step(run: &Run) -> Option<usize> {
    run.violation.as_ref()?;
    run.trace.len().checked_sub(1)
}

/// Virtual duration of the run: the latest time of any step.
fn duration_ms(run: &Run) -> u64 {
    run.trace.iter().map(|s| s.at_ms).max().unwrap_or(0)
}

/// The header line of [`text`].
fn header(run: &Run, title: &str) -> String {
    let n = run.trace.len();
    format!(
        "{title} — {n} step{}, {} virtual",
        if n == 1 { "" } else { "s" },
        format_ms(duration_ms(run))
    )
}

/// What a step's own column shows in [`text`].
fn cell(step: &Step) -> String {
    if step.outcome.is_empty() {
        step.action.clone()
    } else {
        format!("{} → {}", step.action, step.outcome)
    }
}

/// A step's cell cut to at most `width` characters: the action shortened in the middle when
/// the outcome still fits beside it, otherwise the whole cell cut at the end.
fn fit(step: &Step, content: &str, width: usize) -> String {
    if content.chars().count() <= width {
        return truncate(content, width);
    }
    let outcome = truncate(&step.outcome, width);
    let room = width.saturating_sub(outcome.chars().count() + 3);
    if step.outcome.is_empty() || room < 12 {
        return truncate(content, width);
    }
    format!("{} → {outcome}", truncate_middle(&step.action, room))
}

/// `s` cut to at most `width` characters by replacing its middle with `…`, keeping its start and
/// its end (for a path: the verb and the resource).
fn truncate_middle(s: &str, width: usize) -> String {
    let flat = truncate(s, usize::MAX);
    let len = flat.chars().count();
    if len <= width {
        return flat;
    }
    let keep = width.saturating_sub(1);
    let tail = keep / 2;
    let head = keep - tail;
    let mut out: String = flat.chars().take(head).collect();
    out.push('…');
    out.extend(flat.chars().skip(len - tail));
    out
}

/// `s` cut to at most `width` characters, ending in `…` when cut. Line breaks become spaces so
/// a cell stays on its row.
fn truncate(s: &str, width: usize) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= width {
        return flat;
    }
    let mut out: String = flat.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Appends a row without trailing blanks.
fn push_row(out: &mut String, row: &str) {
    out.push_str(row.trim_end());
    out.push('\n');
}

/// The HTTP verb `action` starts with, if it is a request.
fn http_verb(action: &str) -> Option<&'static str> {
    let first = action.split_whitespace().next()?;
    HTTP_VERBS.iter().copied().find(|v| *v == first)
}

/// Whether `s` contains `number` as a whole number (not part of a longer run of digits).
fn has_number(s: &str, number: &str) -> bool {
    s.match_indices(number).any(|(at, _)| {
        let before = s[..at].chars().next_back();
        let after = s[at + number.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_digit()) && !after.is_some_and(|c| c.is_ascii_digit())
    })
}

/// Whether an outcome reads as an HTTP error status (4xx or 5xx) or an error.
fn is_error(outcome: &str) -> bool {
    let first = outcome
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| !w.is_empty())
        .unwrap_or("");
    if first.len() == 3 && first.bytes().all(|b| b.is_ascii_digit()) {
        return first.starts_with('4') || first.starts_with('5');
    }
    first.eq_ignore_ascii_case("error") || first.eq_ignore_ascii_case("err")
}

/// The few characters drawn inside a step's box in [`html`].
fn short_label(step: &Step) -> String {
    if let Some(verb) = http_verb(&step.action) {
        let status: String = step.outcome.chars().take(3).collect();
        return if verb.len() <= 4 && status.chars().all(|c| c.is_ascii_digit()) {
            format!("{verb} {status}").trim_end().to_string()
        } else {
            verb.to_string()
        };
    }
    let first = step.action.split_whitespace().next().unwrap_or("");
    truncate(first, 6)
}

/// The tick rows above the lanes: step numbers every ten steps, virtual time wherever it moves
/// (labelled when there is room, marked always).
fn ticks(out: &mut String, run: &Run, violation_at: Option<usize>) {
    out.push_str("<div class=\"row axis\"><div class=\"name\">step</div><div class=\"track\">");
    for i in (0..run.trace.len()).step_by(10) {
        let _ = write!(
            out,
            "<span class=\"tick\" style=\"left:{}px\">{i}</span>",
            i * STEP_PX
        );
    }
    if let Some(v) = violation_at {
        if v % 10 != 0 {
            let _ = write!(
                out,
                "<span class=\"tick vtick\" style=\"left:{}px\">{v}</span>",
                v * STEP_PX
            );
        }
    }
    out.push_str("</div></div>\n");

    out.push_str(
        "<div class=\"row axis\"><div class=\"name\">virtual time</div><div class=\"track\">",
    );
    let mut last_label: Option<usize> = None;
    let mut prev_ms: Option<u64> = None;
    for (i, step) in run.trace.iter().enumerate() {
        if prev_ms == Some(step.at_ms) {
            continue;
        }
        prev_ms = Some(step.at_ms);
        let x = i * STEP_PX;
        let room = last_label.is_none_or(|l| (i - l) * STEP_PX >= 72);
        if room {
            last_label = Some(i);
            let _ = write!(
                out,
                "<span class=\"tick time\" style=\"left:{x}px\">{}</span>",
                format_ms(step.at_ms)
            );
        } else {
            let _ = write!(
                out,
                "<span class=\"tick mark\" style=\"left:{x}px\" title=\"{}\"></span>",
                format_ms(step.at_ms)
            );
        }
    }
    out.push_str("</div></div>\n");
}

/// The steps as JSON for the page's script, safe inside `<script>`: every `<`, `>` and `&` is
/// written as a `\u` escape (they only occur inside JSON strings, where that is equivalent).
fn steps_json(run: &Run, violation_at: Option<usize>) -> String {
    let steps: Vec<serde_json::Value> = run
        .trace
        .iter()
        .enumerate()
        .map(|(i, s)| {
            serde_json::json!({
                "i": i,
                "t": format_ms(s.at_ms),
                "lane": s.lane,
                "action": s.action,
                "outcome": s.outcome,
                "kind": Kind::of(s).label(),
            })
        })
        .collect();
    let data = serde_json::json!({
        "steps": steps,
        "violation": run.violation,
        "violation_step": violation_at,
    });
    let json = serde_json::to_string(&data).unwrap_or_else(|_| "{\"steps\":[]}".to_string());
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

const CSS: &str = r#"
* { box-sizing: border-box; }
body { margin: 0; padding: 16px 20px 40px; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; background: #fff; }
h1 { font-size: 20px; margin: 0 0 2px; }
.meta { margin: 0 0 12px; color: #59636e; }
.banner { background: #d1242f; color: #fff; padding: 10px 14px; border-radius: 6px; margin: 0 0 12px; font-weight: 600; white-space: pre-wrap; word-break: break-word; }
.banner a { color: #fff; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 0 0 10px; color: #59636e; font-size: 12px; }
.legend .key { display: inline-flex; align-items: center; gap: 6px; }
.legend .it { position: static; width: 14px; height: 14px; display: inline-block; cursor: default; }
.detail { position: sticky; top: 0; z-index: 5; background: #f6f8fa; border: 1px solid #d1d9e0; border-radius: 6px; padding: 8px 12px; margin: 0 0 10px; font: 12px/1.5 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; white-space: pre-wrap; word-break: break-all; min-height: 3.2em; }
.scroll { overflow-x: auto; border: 1px solid #d1d9e0; border-radius: 6px; }
.grid { position: relative; }
.row { display: flex; height: 34px; border-bottom: 1px solid #eef1f4; }
.row.axis { height: 22px; background: #fafbfc; }
.name { position: sticky; left: 0; z-index: 3; flex: 0 0 var(--name); width: var(--name); padding: 0 10px; background: #fafbfc; border-right: 1px solid #d1d9e0; font: 12px/34px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.axis .name { line-height: 22px; color: #59636e; font-family: inherit; }
.track { position: relative; flex: 1 1 auto; background-image: linear-gradient(to right, #eef1f4 1px, transparent 1px); background-size: calc(var(--step) * 10) 100%; }
.tick { position: absolute; top: 3px; font: 11px/16px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; color: #59636e; padding-left: 3px; border-left: 1px solid #afb8c1; white-space: nowrap; }
.tick.mark { width: 0; height: 10px; top: 6px; padding: 0; }
.tick.vtick { color: #d1242f; border-left-color: #d1242f; font-weight: 700; }
.vcol { position: absolute; top: 0; bottom: 0; width: var(--step); background: rgba(209, 36, 47, 0.10); }
.it { position: absolute; top: 5px; width: calc(var(--step) - 4px); height: 24px; margin-left: 2px; border-radius: 4px; border: 1px solid rgba(0, 0, 0, 0.25); font: 9px/22px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; text-align: center; white-space: nowrap; overflow: hidden; cursor: pointer; color: #1f2328; }
.it:hover { filter: brightness(0.92); }
.k-request { background: #b6d7ff; }
.k-deliver { background: #b4e5c2; }
.k-fault { background: #ffcf8a; }
.k-clock { background: #d9dde2; }
.k-other { background: #e2d4ff; }
.it.err { border: 2px dashed #bc4c00; line-height: 20px; }
.it.violation { background: #d1242f; color: #fff; border: 2px solid #82071e; line-height: 20px; font-weight: 700; }
.it.sel { outline: 3px solid #0969da; outline-offset: 1px; z-index: 2; }
.tip { position: fixed; z-index: 10; max-width: 560px; background: #1f2328; color: #fff; padding: 8px 10px; border-radius: 6px; font: 12px/1.5 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; white-space: pre-wrap; word-break: break-all; pointer-events: none; box-shadow: 0 4px 12px rgba(0, 0, 0, 0.25); }
.empty { color: #59636e; }
.log { margin-top: 18px; }
.log summary { cursor: pointer; font-weight: 600; }
.log pre { font: 12px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #f6f8fa; border: 1px solid #d1d9e0; border-radius: 6px; padding: 10px 12px; overflow-x: auto; }
"#;

const JS: &str = r##"
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("steps").textContent);
  var steps = data.steps;
  var tip = document.getElementById("tip");
  var detail = document.getElementById("detail");
  var selected = null;

  function describe(i) {
    var s = steps[i];
    var head = "#" + s.i + "  " + s.t + "  [" + s.lane + "]  " + s.kind;
    if (data.violation_step === s.i) { head += "  \u2717 VIOLATION"; }
    var text = head + "\naction:  " + s.action + "\noutcome: " + s.outcome;
    if (data.violation_step === s.i && data.violation !== null) {
      text += "\nviolation: " + data.violation;
    }
    return text;
  }
  function item(target) {
    return target && target.closest ? target.closest(".it[data-i]") : null;
  }
  function select(i) {
    if (i < 0 || i >= steps.length) { return; }
    if (selected) { selected.classList.remove("sel"); }
    selected = document.getElementById("s" + i);
    if (!selected) { return; }
    selected.classList.add("sel");
    detail.textContent = describe(i);
    selected.scrollIntoView({ block: "nearest", inline: "center" });
  }

  document.addEventListener("mouseover", function (e) {
    var el = item(e.target);
    if (!el) { tip.hidden = true; return; }
    tip.textContent = describe(Number(el.dataset.i));
    tip.hidden = false;
  });
  document.addEventListener("mousemove", function (e) {
    if (tip.hidden) { return; }
    var x = e.clientX + 14, y = e.clientY + 16;
    var r = tip.getBoundingClientRect();
    if (x + r.width > window.innerWidth - 8) { x = Math.max(8, e.clientX - r.width - 14); }
    if (y + r.height > window.innerHeight - 8) { y = Math.max(8, e.clientY - r.height - 16); }
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  });
  document.addEventListener("click", function (e) {
    var el = item(e.target);
    if (el) { select(Number(el.dataset.i)); return; }
    var link = e.target.closest ? e.target.closest(".banner a[data-i]") : null;
    if (link) { e.preventDefault(); select(Number(link.dataset.i)); }
  });
  document.addEventListener("keydown", function (e) {
    if (!selected) { return; }
    var i = Number(selected.dataset.i);
    if (e.key === "ArrowRight") { e.preventDefault(); select(i + 1); }
    else if (e.key === "ArrowLeft") { e.preventDefault(); select(i - 1); }
    else if (e.key === "Escape") { selected.classList.remove("sel"); selected = null; }
  });
  if (data.violation_step !== null) {
    var v = document.getElementById("s" + data.violation_step);
    if (v) { v.scrollIntoView({ block: "nearest", inline: "center" }); }
  }
})();
"##;

#[cfg(test)]
mod tests {
    use super::*;

    fn step(at_ms: u64, lane: &str, action: &str, outcome: &str) -> Step {
        Step {
            at_ms,
            lane: lane.into(),
            action: action.into(),
            outcome: outcome.into(),
        }
    }

    fn sample() -> Run {
        Run {
            trace: vec![
                step(0, "eno", "GET /api/v1/pods", "200"),
                step(0, "eno/watch pods", "deliver pods", "1 event"),
                step(1500, "clock", "advance 1.5s", ""),
                step(1500, "world/kubelet", "start pod synth-1", "Running"),
                step(2000, "eno", "POST /api/v1/namespaces/default/pods", "201"),
            ],
            choices: vec![0, 1, 0, 2, 0],
            violation: Some("two synthesis pods for one composition".into()),
        }
    }

    /// Char offset of `needle` in `line`.
    fn col(line: &str, needle: &str) -> usize {
        let at = line
            .find(needle)
            .unwrap_or_else(|| panic!("{needle:?} not in {line:?}"));
        line[..at].chars().count()
    }

    fn char_at(line: &str, col: usize) -> Option<char> {
        line.chars().nth(col)
    }

    #[test]
    fn text_puts_each_step_in_its_lanes_column_and_marks_the_violation() {
        let run = sample();
        let out = text(&run, "eno race");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "eno race — 5 steps, 2.000s virtual");

        let names = lines[1];
        let lane_cols: Vec<usize> = ["eno", "eno/watch pods", "clock", "world/kubelet"]
            .iter()
            .map(|l| col(names, &format!(" {l}")) + 1)
            .collect();
        assert!(
            lane_cols.windows(2).all(|w| w[0] < w[1]),
            "lanes in first-appearance order"
        );
        assert!(lines[2].chars().all(|c| c == '─'));

        let rows = &lines[3..8];
        for (i, (row, s)) in rows.iter().zip(&run.trace).enumerate() {
            let own = ["eno", "eno/watch pods", "clock", "world/kubelet"]
                .iter()
                .position(|l| *l == s.lane)
                .unwrap();
            assert!(row.contains(&format!("{i:>4} {:>9}", format_ms(s.at_ms))));
            assert_eq!(
                col(row, &s.action[..10]),
                lane_cols[own],
                "step {i} in its column: {row:?}"
            );
            for (l, &c) in lane_cols.iter().enumerate() {
                if l != own {
                    assert_eq!(char_at(row, c), Some('│'), "step {i}, lane {l}: {row:?}");
                }
            }
        }
        assert!(rows[0].contains("GET /api/v1/pods → 200"));
        assert!(
            rows[4].contains("POST /api/v1/nam…es/default/pods → 201"),
            "{:?}",
            rows[4]
        );
        assert!(rows[2].contains("advance 1.5s"), "no arrow without outcome");
        assert!(!rows[2].contains('→'));

        assert!(
            rows[4].starts_with('✗'),
            "detecting step marked: {:?}",
            rows[4]
        );
        assert!(rows[..4].iter().all(|r| r.starts_with(' ')));
        assert_eq!(lines.len(), 9);
        assert_eq!(
            lines[8],
            "✗ VIOLATION: two synthesis pods for one composition"
        );
        assert!(!out.contains('\x1b'), "no ANSI escapes");
        assert!(out.lines().all(|l| l == l.trim_end()), "no trailing blanks");
        assert_eq!(out, text(&run.clone(), "eno race"), "deterministic");
    }

    #[test]
    fn text_truncates_long_cells_and_handles_runs_without_violation_or_steps() {
        let long = format!("PATCH /apis/eno.azure.io/v1/{}", "x".repeat(100));
        let run = Run {
            trace: vec![step(5, "eno", &long, "200\nsecond line")],
            choices: vec![],
            violation: None,
        };
        let out = text(&run, "t");
        let row = out.lines().nth(3).unwrap();
        let cell = row.split_once("0.005s").unwrap().1.trim();
        assert_eq!(cell.chars().count(), CELL_WIDTH);
        assert_eq!(
            cell, "PATCH /api…xxxxxxxxx → 200 second line",
            "action cut in the middle, outcome kept"
        );

        let long_outcome = Run {
            trace: vec![step(5, "eno", &long, &"y".repeat(40))],
            choices: vec![],
            violation: None,
        };
        let out = text(&long_outcome, "t");
        let cell = out
            .lines()
            .nth(3)
            .unwrap()
            .split_once("0.005s")
            .unwrap()
            .1
            .trim();
        assert_eq!(cell.chars().count(), CELL_WIDTH);
        assert!(cell.ends_with('…'));
        assert_eq!(
            out.lines().count(),
            4,
            "newline in outcome stays on its row"
        );
        assert!(!out.contains("VIOLATION"));
        assert!(out.starts_with("t — 1 step, 0.005s virtual\n"));

        let empty = Run {
            trace: vec![],
            choices: vec![],
            violation: Some("nothing ran".into()),
        };
        let out = text(&empty, "empty");
        assert!(out.starts_with("empty — 0 steps, 0.000s virtual\n"));
        assert!(out.ends_with("✗ VIOLATION: nothing ran\n"));
        assert!(html(&empty, "empty").contains("nothing ran"));
    }

    #[test]
    fn html_has_the_lanes_kinds_log_and_marks_the_violation_step() {
        let run = sample();
        let page = html(&run, "eno race");
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("<title>eno race</title>"));
        for lane in ["eno", "eno/watch pods", "clock", "world/kubelet"] {
            assert!(
                page.contains(&format!(
                    "<div class=\"name\" title=\"{lane}\">{lane}</div>"
                )),
                "lane {lane}"
            );
        }
        let lane_at = |l: &str| page.find(&format!("title=\"{l}\">")).unwrap();
        assert!(lane_at("eno") < lane_at("eno/watch pods"));
        assert!(lane_at("clock") < lane_at("world/kubelet"));

        for i in 0..5 {
            assert_eq!(
                page.matches(&format!("id=\"s{i}\"")).count(),
                1,
                "step {i} once"
            );
        }
        assert!(page.contains("class=\"it k-request\" id=\"s0\""));
        assert!(page.contains("class=\"it k-deliver\" id=\"s1\""));
        assert!(page.contains("class=\"it k-clock\" id=\"s2\""));
        assert!(page.contains("class=\"it k-other\" id=\"s3\""));
        assert!(page.contains("class=\"it k-request violation\" id=\"s4\""));
        assert_eq!(
            page.matches("violation\" id=").count(),
            1,
            "only the last step is red"
        );
        assert!(page.contains(&format!("left:{}px\">POST 201<", 4 * STEP_PX)));

        let banner = page.find("class=\"banner\"").expect("violation banner");
        assert!(
            banner < page.find("class=\"scroll\"").unwrap(),
            "banner on top"
        );
        assert!(page[banner..].contains("two synthesis pods for one composition"));
        assert!(page.contains("2.000s"), "virtual time shown");
        assert!(page.contains("<span class=\"tick time\" style=\"left:0px\">0.000s</span>"));

        let log = page.find("<details").expect("log");
        assert!(page[log..].contains(&escape(&run.render())));
        assert!(
            log > page.find("class=\"scroll\"").unwrap(),
            "log at the bottom"
        );

        let ok = Run {
            violation: None,
            ..run
        };
        let page = html(&ok, "ok");
        assert!(!page.contains("class=\"banner\""));
        assert!(!page.contains(" violation\""));
    }

    #[test]
    fn html_escapes_everything_from_the_run() {
        let run = Run {
            trace: vec![
                step(1, "a<b>", "GET /x?<script>alert(1)</script>", "\"q\" & 'r'"),
                step(2, "eno", "deliver </script><script>alert(2)</script>", "ok"),
            ],
            choices: vec![],
            violation: Some("<img src=x onerror=alert(3)>".into()),
        };
        let page = html(&run, "<title>");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.contains("&quot;q&quot; &amp; &#39;r&#39;"));
        assert!(page.contains("a&lt;b&gt;"));
        assert!(page.contains("&lt;img src=x onerror=alert(3)&gt;"));
        assert!(page.contains("<title>&lt;title&gt;</title>"));
        assert!(!page.contains("<script>alert"));
        assert!(!page.contains("<img"));
        assert!(!page.contains("<b>"));
        // Only the page's own two scripts open and close; the JSON cannot end its script early.
        assert_eq!(page.matches("<script").count(), 2);
        assert_eq!(page.matches("</script>").count(), 2);
        let json_start = page.find("id=\"steps\">").unwrap() + "id=\"steps\">".len();
        let json_end = json_start + page[json_start..].find("</script>").unwrap();
        let json: serde_json::Value = serde_json::from_str(&page[json_start..json_end]).unwrap();
        assert_eq!(
            json["steps"][1]["action"],
            "deliver </script><script>alert(2)</script>"
        );
        assert_eq!(json["violation_step"], 1);
    }

    #[test]
    fn html_is_self_contained() {
        let mut run = sample();
        for i in 0..300 {
            run.trace
                .push(step(2000 + i, "eno", "GET /api/v1/pods", "200"));
        }
        let page = html(&run, "long");
        for attr in ["src=", "href=", "url(", "@import"] {
            for (at, _) in page.match_indices(attr) {
                let value = page[at + attr.len()..].trim_start_matches(['"', '\'']);
                assert!(
                    !value.starts_with("http") && !value.starts_with("//"),
                    "external resource at {at}: {}",
                    &page[at..(at + 60).min(page.len())]
                );
            }
        }
        assert!(!page.contains("<link"));
        assert!(!page.contains("<iframe"));
        assert!(page.contains("overflow-x: auto"), "long runs scroll");
        assert!(page.contains(&format!("width:{}px", NAME_PX + 306 * STEP_PX)));
    }

    #[test]
    fn kinds_are_guessed_from_the_step() {
        let kind =
            |lane: &str, action: &str, outcome: &str| Kind::of(&step(0, lane, action, outcome));
        assert_eq!(kind("eno", "PATCH /apis/x", "200"), Kind::Request);
        assert_eq!(kind("eno", "DELETE /api/v1/pods/p", "404"), Kind::Request);
        assert_eq!(kind("eno", "PATCH /apis/x", "injected 409"), Kind::Fault);
        assert_eq!(
            kind("eno/watch pods", "deliver pods", "2 events"),
            Kind::Deliver
        );
        assert_eq!(
            kind("eno/watch pods", "watch pods", "410 Gone"),
            Kind::Fault
        );
        assert_eq!(kind("eno", "crash eno", ""), Kind::Fault);
        assert_eq!(kind("eno/watch pods", "drop watch", ""), Kind::Fault);
        assert_eq!(kind("faults", "arm status patch", ""), Kind::Fault);
        assert_eq!(kind("clock", "advance 5s", ""), Kind::Clock);
        assert_eq!(kind("world/kubelet", "start pod", "Running"), Kind::Other);
        assert_eq!(
            kind("eno", "GET /api/v1/pods?resourceVersion=4100", "200"),
            Kind::Request
        );
        assert_eq!(kind("eno", "GETTER", ""), Kind::Other);
    }
}
