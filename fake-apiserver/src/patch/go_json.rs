//! The syntax errors Go's `encoding/json` reports, for bodies a real server would reject.
//!
//! A real API server decodes request bodies with Go's JSON decoder, so a malformed body gets
//! messages like `invalid character 'b' looking for beginning of object key string` or
//! `unexpected end of JSON input`. This is a port of that decoder's syntax scanner (not of its
//! code): it walks the bytes with the same states and names the same byte and context.

/// Where the scanner is inside a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    BeginValue,
    BeginValueOrEmpty,
    BeginStringOrEmpty,
    BeginString,
    EndValue,
    EndTop,
    InString,
    InStringEsc,
    InStringEscU(u8),
    Neg,
    Zero,
    One,
    Dot,
    Dot0,
    E,
    ESign,
    E0,
    Literal(&'static [u8], usize, &'static str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    ObjectKey,
    ObjectValue,
    ArrayValue,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// Go's `quoteChar`: the byte in single quotes, escaped as `strconv.Quote` would.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => "'\\''".to_string(),
        b'"' => "'\"'".to_string(),
        _ => {
            let quoted = crate::rules::validation::go_quote(&char::from(c).to_string());
            let inner = quoted
                .get(1..quoted.len().saturating_sub(1))
                .unwrap_or_default();
            format!("'{inner}'")
        }
    }
}

fn invalid(c: u8, context: &str) -> String {
    format!("invalid character {} {context}", quote_char(c))
}

/// The error Go's `json.Unmarshal` gives for a syntactically invalid document, or `None` when
/// the document is valid JSON syntax.
pub fn syntax_error(input: &[u8]) -> Option<String> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut state = State::BeginValue;
    for &c in input {
        // A byte may end a number and then be scanned again as what follows it.
        loop {
            match step(&mut state, &mut stack, c) {
                Step::Consumed => break,
                Step::Reprocess => continue,
                Step::Error(message) => return Some(message),
            }
        }
    }
    // End of input: complete only after a whole top-level value (a number may end it).
    match state {
        State::EndTop => None,
        State::EndValue if stack.is_empty() => None,
        State::Zero | State::One | State::Dot0 | State::E0 if stack.is_empty() => None,
        _ => Some("unexpected end of JSON input".to_string()),
    }
}

enum Step {
    Consumed,
    Reprocess,
    Error(String),
}

fn step(state: &mut State, stack: &mut Vec<Frame>, c: u8) -> Step {
    match *state {
        State::BeginValueOrEmpty => {
            if is_space(c) {
                return Step::Consumed;
            }
            if c == b']' {
                return end_value(state, stack, c);
            }
            *state = State::BeginValue;
            Step::Reprocess
        }
        State::BeginValue => {
            if is_space(c) {
                return Step::Consumed;
            }
            *state = match c {
                b'{' => {
                    stack.push(Frame::ObjectKey);
                    State::BeginStringOrEmpty
                }
                b'[' => {
                    stack.push(Frame::ArrayValue);
                    State::BeginValueOrEmpty
                }
                b'"' => State::InString,
                b'-' => State::Neg,
                b'0' => State::Zero,
                b'1'..=b'9' => State::One,
                b't' => State::Literal(b"true", 1, "true"),
                b'f' => State::Literal(b"false", 1, "false"),
                b'n' => State::Literal(b"null", 1, "null"),
                _ => return Step::Error(invalid(c, "looking for beginning of value")),
            };
            Step::Consumed
        }
        State::BeginStringOrEmpty => {
            if is_space(c) {
                return Step::Consumed;
            }
            if c == b'}' {
                if let Some(top) = stack.last_mut() {
                    *top = Frame::ObjectValue;
                }
                return end_value(state, stack, c);
            }
            *state = State::BeginString;
            Step::Reprocess
        }
        State::BeginString => {
            if is_space(c) {
                return Step::Consumed;
            }
            if c == b'"' {
                *state = State::InString;
                return Step::Consumed;
            }
            Step::Error(invalid(c, "looking for beginning of object key string"))
        }
        State::EndValue => end_value(state, stack, c),
        State::EndTop => {
            if is_space(c) {
                Step::Consumed
            } else {
                Step::Error(invalid(c, "after top-level value"))
            }
        }
        State::InString => {
            match c {
                b'"' => *state = State::EndValue,
                b'\\' => *state = State::InStringEsc,
                c if c < 0x20 => return Step::Error(invalid(c, "in string literal")),
                _ => {}
            }
            Step::Consumed
        }
        State::InStringEsc => {
            *state = match c {
                b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => State::InString,
                b'u' => State::InStringEscU(0),
                _ => return Step::Error(invalid(c, "in string escape code")),
            };
            Step::Consumed
        }
        State::InStringEscU(n) => {
            if !c.is_ascii_hexdigit() {
                return Step::Error(invalid(c, "in \\u hexadecimal character escape"));
            }
            *state = if n >= 3 {
                State::InString
            } else {
                State::InStringEscU(n + 1)
            };
            Step::Consumed
        }
        State::Neg => {
            *state = match c {
                b'0' => State::Zero,
                b'1'..=b'9' => State::One,
                _ => return Step::Error(invalid(c, "in numeric literal")),
            };
            Step::Consumed
        }
        State::One => {
            if c.is_ascii_digit() {
                return Step::Consumed;
            }
            *state = State::Zero;
            Step::Reprocess
        }
        State::Zero => match c {
            b'.' => {
                *state = State::Dot;
                Step::Consumed
            }
            b'e' | b'E' => {
                *state = State::E;
                Step::Consumed
            }
            _ => end_value(state, stack, c),
        },
        State::Dot => {
            if c.is_ascii_digit() {
                *state = State::Dot0;
                return Step::Consumed;
            }
            Step::Error(invalid(c, "after decimal point in numeric literal"))
        }
        State::Dot0 => match c {
            b'0'..=b'9' => Step::Consumed,
            b'e' | b'E' => {
                *state = State::E;
                Step::Consumed
            }
            _ => end_value(state, stack, c),
        },
        State::E => {
            if c == b'+' || c == b'-' {
                *state = State::ESign;
                return Step::Consumed;
            }
            *state = State::ESign;
            Step::Reprocess
        }
        State::ESign => {
            if c.is_ascii_digit() {
                *state = State::E0;
                return Step::Consumed;
            }
            Step::Error(invalid(c, "in exponent of numeric literal"))
        }
        State::E0 => {
            if c.is_ascii_digit() {
                return Step::Consumed;
            }
            end_value(state, stack, c)
        }
        State::Literal(word, pos, name) => {
            let expected = word.get(pos).copied().unwrap_or(b'?');
            if c != expected {
                return Step::Error(invalid(
                    c,
                    &format!("in literal {name} (expecting {})", quote_char(expected)),
                ));
            }
            *state = if pos + 1 >= word.len() {
                State::EndValue
            } else {
                State::Literal(word, pos + 1, name)
            };
            Step::Consumed
        }
    }
}

/// `stateEndValue`: after a complete value, what may follow depends on the enclosing frame.
fn end_value(state: &mut State, stack: &mut Vec<Frame>, c: u8) -> Step {
    let Some(top) = stack.last().copied() else {
        *state = State::EndTop;
        return step(state, stack, c);
    };
    if is_space(c) {
        *state = State::EndValue;
        return Step::Consumed;
    }
    match top {
        Frame::ObjectKey => {
            if c == b':' {
                if let Some(t) = stack.last_mut() {
                    *t = Frame::ObjectValue;
                }
                *state = State::BeginValue;
                return Step::Consumed;
            }
            Step::Error(invalid(c, "after object key"))
        }
        Frame::ObjectValue => match c {
            b',' => {
                if let Some(t) = stack.last_mut() {
                    *t = Frame::ObjectKey;
                }
                *state = State::BeginString;
                Step::Consumed
            }
            b'}' => {
                stack.pop();
                *state = State::EndValue;
                Step::Consumed
            }
            _ => Step::Error(invalid(c, "after object key:value pair")),
        },
        Frame::ArrayValue => match c {
            b',' => {
                *state = State::BeginValue;
                Step::Consumed
            }
            b']' => {
                stack.pop();
                *state = State::EndValue;
                Step::Consumed
            }
            _ => Step::Error(invalid(c, "after array element")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::bad_key(b"{bad".as_slice(), "invalid character 'b' looking for beginning of object key string")]
    #[case::empty(b"".as_slice(), "unexpected end of JSON input")]
    #[case::spaces(b"  ".as_slice(), "unexpected end of JSON input")]
    #[case::open(b"{\"a\":".as_slice(), "unexpected end of JSON input")]
    #[case::after_key(b"{\"a\" 1}".as_slice(), "invalid character '1' after object key")]
    #[case::after_pair(b"{\"a\":1 \"b\"}".as_slice(), "invalid character '\"' after object key:value pair")]
    #[case::after_element(b"[1 2]".as_slice(), "invalid character '2' after array element")]
    #[case::top_level(b"{} x".as_slice(), "invalid character 'x' after top-level value")]
    #[case::begin_value(b"[,]".as_slice(), "invalid character ',' looking for beginning of value")]
    #[case::trailing_comma(b"{\"a\":1,}".as_slice(), "invalid character '}' looking for beginning of object key string")]
    #[case::control(b"\"a\nb\"".as_slice(), "invalid character '\\n' in string literal")]
    #[case::escape(b"\"\\x\"".as_slice(), "invalid character 'x' in string escape code")]
    #[case::unicode(b"\"\\u12g4\"".as_slice(), "invalid character 'g' in \\u hexadecimal character escape")]
    #[case::neg(b"-x".as_slice(), "invalid character 'x' in numeric literal")]
    #[case::dot(b"1.x".as_slice(), "invalid character 'x' after decimal point in numeric literal")]
    #[case::exp(b"1ex".as_slice(), "invalid character 'x' in exponent of numeric literal")]
    #[case::leading_zero(b"01".as_slice(), "invalid character '1' after top-level value")]
    #[case::literal(b"tru3".as_slice(), "invalid character '3' in literal true (expecting 'e')")]
    #[case::null(b"nul".as_slice(), "unexpected end of JSON input")]
    #[case::quote(b"{'a':1}".as_slice(), "invalid character '\\'' looking for beginning of object key string")]
    fn go_messages(#[case] input: &[u8], #[case] message: &str) {
        assert_eq!(syntax_error(input).as_deref(), Some(message));
    }

    #[rstest]
    #[case::object(b"{\"a\": [1, -2.5e+3, true, false, null, \"x\\u00e9\\n\"], \"b\": {}}".as_slice())]
    #[case::number(b" 0 ".as_slice())]
    #[case::exp(b"1E5".as_slice())]
    #[case::empty_array(b"[ ]".as_slice())]
    #[case::empty_object(b"{ }".as_slice())]
    fn valid_documents(#[case] input: &[u8]) {
        assert_eq!(syntax_error(input), None);
        assert!(serde_json::from_slice::<serde_json::Value>(input).is_ok());
    }

    #[test]
    fn never_panics_on_random_bytes() {
        let mut seed: u32 = 7;
        for _ in 0..2000 {
            let len = (seed % 12) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    b"{}[]\",:01-.eE+tfnul\\ xa"[(seed >> 16) as usize % 23]
                })
                .collect();
            let ours = syntax_error(&bytes).is_none();
            let serde = serde_json::from_slice::<serde_json::Value>(&bytes).is_ok();
            assert_eq!(ours, serde, "{:?}", String::from_utf8_lossy(&bytes));
        }
    }
}
