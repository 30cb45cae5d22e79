//! Go's regular expressions (`regexp.Compile`, RE2 syntax with Perl extensions) on the `regex`
//! crate: what a CRD schema's `pattern` and the CEL `find`/`findAll` functions are written in.
//!
//! The two engines read most patterns alike, but not all: Go's `\d`, `\w`, `\s` and `\b` are
//! ASCII (the crate's are Unicode: `^\d+$` would accept Arabic-Indic digits), Go accepts `\_`,
//! `\Q…\E`, octal escapes and flag-only groups before a repetition where the crate does not, and
//! the crate accepts set operations and nested classes (`[a-z&&[^x]]`) that Go reads as
//! literals. [`compile`] walks the pattern as Go's parser (`regexp/syntax.parse`) does, refuses
//! what Go refuses with Go's error text, and hands the crate an equivalent pattern in which every
//! literal is an escape and every Perl class is spelled out in ASCII.
//!
//! Not ported: Go's program-size and nesting-depth limits (`expression too large`,
//! `expression nests too deeply`), and the exact set of Unicode class names (a name the crate
//! knows and Go does not, such as a binary property, is accepted).

use std::fmt::Write as _;

/// Go's largest repeat count (`regexp/syntax.maxRepeat`); nested counts multiply up to it.
const MAX_REPEAT: i64 = 1000;

/// Why a pattern cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    /// Go refuses the pattern: its error text (`error parsing regexp: missing closing ): ...`).
    #[error("{0}")]
    Go(String),
    /// Go accepts the pattern but the `regex` crate cannot run it (its own limits): the
    /// crate's message.
    #[error("{0}")]
    Unsupported(String),
}

/// Compiles `pattern` as Go's `regexp.Compile` reads it.
pub fn compile(pattern: &str) -> Result<regex::Regex, CompileError> {
    let translated = translate(pattern).map_err(CompileError::Go)?;
    regex::Regex::new(&translated).map_err(|e| CompileError::Unsupported(e.to_string()))
}

/// How many compiled patterns [`compiled`] keeps (it forgets them all when full).
const CACHE_LIMIT: usize = 1024;

/// [`compile`], kept: schema patterns and CEL expressions use the same few patterns on every
/// write, as kube-openapi keeps its compiled patterns and cel-go compiles literal ones once.
pub fn compiled(pattern: &str) -> Result<std::sync::Arc<regex::Regex>, CompileError> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Cache = Mutex<HashMap<String, Result<Arc<regex::Regex>, CompileError>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(found) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(pattern) {
        return found.clone();
    }
    let result = compile(pattern).map(Arc::new);
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    if cache.len() >= CACHE_LIMIT {
        cache.clear();
    }
    cache.insert(pattern.to_string(), result.clone());
    result
}

/// Go's `syntax.Error` text for `code` about `expr`.
fn go_error(code: &str, expr: &str) -> String {
    format!("error parsing regexp: {code}: `{expr}`")
}

/// A repetition `{min,max}` (Go's `OpRepeat`) and the ones nested in what it repeats: what
/// Go's `repeatIsValid` walks.
#[derive(Debug, Clone)]
struct Repeat {
    min: i64,
    max: i64,
    inner: Vec<Repeat>,
}

/// Go's `repeatIsValid`: whether the nested counts fit in `n`.
fn repeat_is_valid(repeats: &[Repeat], n: i64) -> bool {
    repeats.iter().all(|r| {
        let mut n = n;
        let mut m = r.max;
        if m == 0 {
            return true;
        }
        if m < 0 {
            m = r.min;
        }
        if m > n {
            return false;
        }
        if m > 0 {
            n /= m;
        }
        repeat_is_valid(&r.inner, n)
    })
}

/// What Go's parse stack holds, as far as errors depend on it.
#[derive(Debug)]
enum Entry {
    /// An open group (`opLeftParen`).
    Group,
    /// An alternation bar (`opVerticalBar`).
    Bar,
    /// A parsed expression, with the `{}` repetitions in it.
    Item(Vec<Repeat>),
}

/// The translation: the parse stack (for errors) and the pattern written for the crate.
struct Translator<'a> {
    whole: &'a str,
    stack: Vec<Entry>,
    out: String,
    /// Flag-only groups (`(?i)`) not written yet: Go repeats the expression before one, so
    /// they are written before the next expression instead, where the crate reads them alike.
    pending_flags: String,
}

fn translate(pattern: &str) -> Result<String, String> {
    let mut t = Translator {
        whole: pattern,
        stack: Vec::new(),
        out: String::with_capacity(pattern.len() * 2),
        pending_flags: String::new(),
    };
    let mut rest = pattern;
    let mut last_repeat: &str = "";
    while let Some(c) = rest.chars().next() {
        let mut repeat = "";
        match c {
            '(' if rest[1..].starts_with('?') => rest = t.perl_flags(rest)?,
            '(' => {
                t.flush_flags();
                t.stack.push(Entry::Group);
                t.out.push('(');
                rest = &rest[1..];
            }
            '|' => {
                t.concat();
                t.stack.push(Entry::Bar);
                t.flush_flags();
                t.out.push('|');
                rest = &rest[1..];
            }
            ')' => {
                t.right_paren()?;
                rest = &rest[1..];
            }
            '^' | '$' | '.' => {
                t.atom(&c.to_string());
                rest = &rest[1..];
            }
            '[' => rest = t.class(rest)?,
            '*' | '+' | '?' => {
                let before = rest;
                let after = t.repeat(None, before, &rest[1..], last_repeat)?;
                repeat = before;
                rest = after;
            }
            '{' => match parse_repeat(rest) {
                None => {
                    t.atom(&escaped('{'));
                    rest = &rest[1..];
                }
                Some((min, max, after)) => {
                    let before = rest;
                    if !(0..=MAX_REPEAT).contains(&min)
                        || max > MAX_REPEAT
                        || (max >= 0 && min > max)
                    {
                        return Err(go_error(
                            "invalid repeat count",
                            &before[..before.len() - after.len()],
                        ));
                    }
                    rest = t.repeat(Some((min, max)), before, after, last_repeat)?;
                    repeat = before;
                }
            },
            '\\' => rest = t.escape(rest)?,
            c => {
                t.atom(&escaped(c));
                rest = &rest[c.len_utf8()..];
            }
        }
        last_repeat = repeat;
    }
    t.concat();
    if t.stack.iter().any(|e| matches!(e, Entry::Group)) {
        return Err(go_error("missing closing )", pattern));
    }
    t.flush_flags();
    Ok(t.out)
}

impl Translator<'_> {
    fn flush_flags(&mut self) {
        self.out.push_str(&self.pending_flags);
        self.pending_flags.clear();
    }

    /// Writes one expression (a literal, class, assertion) and pushes it.
    fn atom(&mut self, text: &str) {
        self.flush_flags();
        self.out.push_str(text);
        self.stack.push(Entry::Item(Vec::new()));
    }

    /// Go's `concat`: the expressions above the last group or bar become one.
    fn concat(&mut self) {
        let mut repeats = Vec::new();
        while let Some(Entry::Item(_)) = self.stack.last() {
            if let Some(Entry::Item(r)) = self.stack.pop() {
                repeats.extend(r);
            }
        }
        self.stack.push(Entry::Item(repeats));
    }

    /// Go's `parseRightParen`: the alternation since the last group closes it.
    fn right_paren(&mut self) -> Result<(), String> {
        self.concat();
        let mut repeats = Vec::new();
        loop {
            match self.stack.pop() {
                Some(Entry::Item(r)) => repeats.extend(r),
                Some(Entry::Bar) => {}
                Some(Entry::Group) => break,
                None => return Err(go_error("unexpected )", self.whole)),
            }
        }
        self.stack.push(Entry::Item(repeats));
        self.pending_flags.clear();
        self.out.push(')');
        Ok(())
    }

    /// Go's `repeat`: `before` starts at the operator, `after` follows it (and its `?`).
    fn repeat<'s>(
        &mut self,
        counts: Option<(i64, i64)>,
        before: &'s str,
        after: &'s str,
        last_repeat: &str,
    ) -> Result<&'s str, String> {
        let after = after.strip_prefix('?').unwrap_or(after);
        if !last_repeat.is_empty() {
            let text = &last_repeat[..last_repeat.len() - after.len()];
            return Err(go_error("invalid nested repetition operator", text));
        }
        let operator = &before[..before.len() - after.len()];
        let Some(Entry::Item(inner)) = self.stack.last_mut() else {
            return Err(go_error(
                "missing argument to repetition operator",
                operator,
            ));
        };
        if let Some((min, max)) = counts {
            let node = Repeat {
                min,
                max,
                inner: std::mem::take(inner),
            };
            let nested = node.min >= 2 || node.max >= 2;
            *inner = vec![node];
            if nested && !repeat_is_valid(inner, MAX_REPEAT) {
                return Err(go_error("invalid repeat count", operator));
            }
        }
        // The operator goes right after the expression it repeats, before any pending flags.
        self.out.push_str(operator);
        Ok(after)
    }

    /// Go's `parsePerlFlags`: a named group, a non-capturing group or flags (`s` starts `(?`).
    fn perl_flags<'s>(&mut self, s: &'s str) -> Result<&'s str, String> {
        let starts_with_p = s.len() > 4 && s.as_bytes()[2] == b'P' && s.as_bytes()[3] == b'<';
        let starts_with_name = s.len() > 3 && s.as_bytes()[2] == b'<';
        if starts_with_p || starts_with_name {
            let name_start = if starts_with_p { 4 } else { 3 };
            let Some(end) = s.find('>') else {
                return Err(go_error("invalid named capture", s));
            };
            let name = &s[name_start..end];
            if name.is_empty() || !name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric()) {
                return Err(go_error("invalid named capture", &s[..=end]));
            }
            // The name changes nothing a match does; the crate's naming rules differ.
            self.flush_flags();
            self.stack.push(Entry::Group);
            self.out.push('(');
            return Ok(&s[end + 1..]);
        }
        let mut flags = String::new();
        let mut negated = false;
        let mut saw_flag = false;
        let mut rest = &s[2..];
        while let Some(c) = rest.chars().next() {
            rest = &rest[c.len_utf8()..];
            match c {
                'i' | 'm' | 's' | 'U' => {
                    flags.push(c);
                    saw_flag = true;
                }
                '-' if !negated => {
                    negated = true;
                    flags.push('-');
                    saw_flag = false;
                }
                ':' | ')' => {
                    if negated && !saw_flag {
                        break;
                    }
                    if c == ':' {
                        self.flush_flags();
                        self.stack.push(Entry::Group);
                        let _ = write!(self.out, "(?{flags}:");
                    } else if !flags.is_empty() {
                        let _ = write!(self.pending_flags, "(?{flags})");
                    }
                    return Ok(rest);
                }
                _ => break,
            }
        }
        Err(go_error(
            "invalid or unsupported Perl syntax",
            &s[..s.len() - rest.len()],
        ))
    }

    /// A `\` outside a class: an assertion, `\Q…\E`, a Unicode or Perl class, or one character.
    fn escape<'s>(&mut self, s: &'s str) -> Result<&'s str, String> {
        match s.as_bytes().get(1) {
            Some(b'A') => return Ok(self.atom_then(r"\A", &s[2..])),
            Some(b'z') => return Ok(self.atom_then(r"\z", &s[2..])),
            // Go's word boundary is ASCII's.
            Some(b'b') => return Ok(self.atom_then(r"(?-u:\b)", &s[2..])),
            Some(b'B') => return Ok(self.atom_then(r"(?-u:\B)", &s[2..])),
            Some(b'C') => return Err(go_error("invalid escape sequence", &s[..2])),
            Some(b'Q') => {
                let (literal, rest) = match s[2..].split_once(r"\E") {
                    Some((literal, rest)) => (literal, rest),
                    None => (&s[2..], ""),
                };
                for c in literal.chars() {
                    self.atom(&escaped(c));
                }
                return Ok(rest);
            }
            _ => {}
        }
        if let Some((class, rest)) = unicode_class(s)? {
            return Ok(self.atom_then(&class, rest));
        }
        if let Some((class, rest)) = perl_class(s) {
            return Ok(self.atom_then(&format!("[{class}]"), rest));
        }
        let (c, rest) = parse_escape(s)?;
        Ok(self.atom_then(&escaped(c), rest))
    }

    fn atom_then<'s>(&mut self, text: &str, rest: &'s str) -> &'s str {
        self.atom(text);
        rest
    }

    /// Go's `parseClass` (`s` starts at `[`): the class written item by item.
    fn class<'s>(&mut self, s: &'s str) -> Result<&'s str, String> {
        let mut t = &s[1..];
        let mut out = String::from("[");
        if let Some(after) = t.strip_prefix('^') {
            out.push('^');
            t = after;
        }
        let mut first = true;
        while t.is_empty() || !t.starts_with(']') || first {
            first = false;
            if t.len() > 2 && t.starts_with("[:") {
                if let Some((name, rest)) = named_class(t)? {
                    out.push_str(name);
                    t = rest;
                    continue;
                }
            }
            if let Some((class, rest)) = unicode_class(t)? {
                out.push_str(&class);
                t = rest;
                continue;
            }
            if let Some((class, rest)) = perl_class(t) {
                // Nested, so that a negated one stays a set of its own.
                let _ = write!(out, "[{class}]");
                t = rest;
                continue;
            }
            let range = t;
            let (lo, rest) = class_char(t, s)?;
            t = rest;
            let mut hi = lo;
            if t.len() >= 2 && t.starts_with('-') && !t[1..].starts_with(']') {
                let (high, rest) = class_char(&t[1..], s)?;
                t = rest;
                hi = high;
                if hi < lo {
                    let text = &range[..range.len() - t.len()];
                    return Err(go_error("invalid character class range", text));
                }
            }
            out.push_str(&escaped(lo));
            if hi != lo {
                out.push('-');
                out.push_str(&escaped(hi));
            }
        }
        out.push(']');
        self.atom(&out);
        Ok(&t[1..])
    }
}

/// Go's `parseRepeat` (`s` starts at `{`): `{min}`, `{min,}` (max -1) or `{min,max}`, and what
/// follows; `None` where `{` is a literal; a count too large to read is -1 for min.
fn parse_repeat(s: &str) -> Option<(i64, i64, &str)> {
    let s = s.strip_prefix('{')?;
    let (mut min, s) = parse_int(s)?;
    let (max, s) = match s.strip_prefix(',') {
        None => (min, s),
        Some(s) if s.starts_with('}') => (-1, s),
        Some(s) => {
            let (max, s) = parse_int(s)?;
            if max < 0 {
                min = -1;
            }
            (max, s)
        }
    };
    let rest = s.strip_prefix('}')?;
    Some((min, max, rest))
}

/// Go's `parseInt`: decimal digits without a leading zero; -1 when too large.
fn parse_int(s: &str) -> Option<(i64, &str)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || (digits >= 2 && s.starts_with('0')) {
        return None;
    }
    let mut n: i64 = 0;
    for b in s[..digits].bytes() {
        if n >= 100_000_000 {
            n = -1;
            break;
        }
        n = n * 10 + i64::from(b - b'0');
    }
    Some((n, &s[digits..]))
}

/// Go's Perl classes (ASCII), as the inside of a crate class, for `s` starting `\d` and the
/// like.
fn perl_class(s: &str) -> Option<(&'static str, &str)> {
    let class = match s.get(..2)? {
        r"\d" => "0-9",
        r"\D" => "^0-9",
        r"\s" => r"\t\n\x0C\r ",
        r"\S" => r"^\t\n\x0C\r ",
        r"\w" => "0-9A-Za-z_",
        r"\W" => "^0-9A-Za-z_",
        _ => return None,
    };
    Some((class, &s[2..]))
}

/// The POSIX classes Go knows (`[:alpha:]`, `[:^alpha:]`, ...), which the crate spells alike.
const POSIX_CLASSES: [&str; 14] = [
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct",
    "space", "upper", "word", "xdigit",
];

/// Go's `parseNamedClass` (`s` starts `[:`): the class and what follows, `None` where there is
/// no `:]`.
fn named_class(s: &str) -> Result<Option<(&str, &str)>, String> {
    let Some(i) = s[2..].find(":]") else {
        return Ok(None);
    };
    let name = &s[..i + 4];
    let inner = &name[2..name.len() - 2];
    if !POSIX_CLASSES.contains(&inner.strip_prefix('^').unwrap_or(inner)) {
        return Err(go_error("invalid character class range", name));
    }
    Ok(Some((name, &s[i + 4..])))
}

/// Go's `parseUnicodeClass` for `s` starting `\p` or `\P`: the class written for the crate and
/// what follows.
fn unicode_class(s: &str) -> Result<Option<(String, &str)>, String> {
    let negated = match s.get(..2) {
        Some(r"\p") => false,
        Some(r"\P") => true,
        _ => return Ok(None),
    };
    let Some(c) = s[2..].chars().next() else {
        // Go reads the rune after `\p` as a one-letter name; at the end there is none.
        return Err(go_error("invalid character class range", s));
    };
    let (sequence, name, rest) = if c == '{' {
        let Some(end) = s.find('}') else {
            return Err(go_error("invalid character class range", s));
        };
        (&s[..=end], &s[3..end], &s[end + 1..])
    } else {
        let len = 2 + c.len_utf8();
        (&s[..len], &s[2..len], &s[len..])
    };
    let (negated, name) = match name.strip_prefix('^') {
        Some(name) => (!negated, name),
        None => (negated, name),
    };
    // Go knows categories, scripts and Any/Assigned/ASCII, by a loose spelling; the crate
    // knows those and more, and refuses what neither knows.
    let known = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' '))
        && regex::Regex::new(&format!(r"\p{{{name}}}")).is_ok();
    if !known {
        return Err(go_error("invalid character class range", sequence));
    }
    let letter = if negated { 'P' } else { 'p' };
    Ok(Some((format!(r"\{letter}{{{name}}}"), rest)))
}

/// Go's `parseClassChar`: one character of a class (`whole` is the class, for the error).
fn class_char<'s>(s: &'s str, whole: &str) -> Result<(char, &'s str), String> {
    match s.chars().next() {
        None => Err(go_error("missing closing ]", whole)),
        Some('\\') => parse_escape(s),
        Some(c) => Ok((c, &s[c.len_utf8()..])),
    }
}

/// Go's `parseEscape` (`s` starts at `\`): the character an escape stands for.
fn parse_escape(s: &str) -> Result<(char, &str), String> {
    let t = &s[1..];
    let Some(c) = t.chars().next() else {
        return Err(go_error("trailing backslash at end of expression", ""));
    };
    let mut t = &t[c.len_utf8()..];
    let invalid = |t: &str| go_error("invalid escape sequence", &s[..s.len() - t.len()]);
    let octal = |t: &str| {
        t.as_bytes()
            .first()
            .is_some_and(|b| (b'0'..=b'7').contains(b))
    };
    match c {
        '1'..='7' if !octal(t) => Err(invalid(t)),
        '0'..='7' => {
            let mut r = c as u32 - '0' as u32;
            for _ in 1..3 {
                if !octal(t) {
                    break;
                }
                r = r * 8 + u32::from(t.as_bytes()[0] - b'0');
                t = &t[1..];
            }
            char::from_u32(r).map(|c| (c, t)).ok_or_else(|| invalid(t))
        }
        'x' => {
            let Some(c) = t.chars().next() else {
                return Err(invalid(t));
            };
            t = &t[c.len_utf8()..];
            if c == '{' {
                let mut r: u32 = 0;
                let mut digits = 0;
                loop {
                    let Some(c) = t.chars().next() else {
                        return Err(invalid(t));
                    };
                    t = &t[c.len_utf8()..];
                    if c == '}' {
                        break;
                    }
                    let Some(v) = c.to_digit(16) else {
                        return Err(invalid(t));
                    };
                    r = r * 16 + v;
                    if r > 0x10FFFF {
                        return Err(invalid(t));
                    }
                    digits += 1;
                }
                if digits == 0 {
                    return Err(invalid(t));
                }
                // A surrogate is a rune to Go, never a char here: it matches nothing.
                return char::from_u32(r).map(|c| (c, t)).ok_or_else(|| invalid(t));
            }
            let x = c.to_digit(16);
            let next = t.chars().next();
            if let Some(n) = next {
                t = &t[n.len_utf8()..];
            }
            match (x, next.and_then(|n| n.to_digit(16))) {
                (Some(x), Some(y)) => Ok((char::from(u8::try_from(x * 16 + y).unwrap_or(0)), t)),
                _ => Err(invalid(t)),
            }
        }
        'a' => Ok(('\u{7}', t)),
        'f' => Ok(('\u{c}', t)),
        'n' => Ok(('\n', t)),
        'r' => Ok(('\r', t)),
        't' => Ok(('\t', t)),
        'v' => Ok(('\u{b}', t)),
        c if c.is_ascii() && !c.is_ascii_alphanumeric() => Ok((c, t)),
        _ => Err(invalid(t)),
    }
}

/// `c` as the crate reads it literally anywhere, in a class or not.
fn escaped(c: char) -> String {
    if c.is_ascii_alphanumeric() {
        c.to_string()
    } else {
        format!(r"\x{{{:X}}}", c as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::ascii_digits(r"^\d+$", "0123", true)]
    #[case::no_arabic_indic_digits(r"^\d+$", "١٢٣", false)]
    #[case::ascii_word(r"^\w+$", "a_Z9", true)]
    #[case::no_unicode_word(r"^\w+$", "é", false)]
    #[case::ascii_space(r"^\s$", "\u{a0}", false)]
    #[case::ascii_boundary(r"\bé", "aé", true)]
    #[case::ascii_non_boundary(r"a\Bé", "aé", false)]
    #[case::negated_perl_class(r"^\D+$", "١", true)]
    #[case::escaped_underscore(r"^\_$", "_", true)]
    #[case::quoted(r"^\Qa.b\E$", "a.b", true)]
    #[case::quoted_is_literal(r"^\Qa.b\E$", "axb", false)]
    #[case::octal(r"^\101$", "A", true)]
    #[case::hex(r"^\x41\x{42}$", "AB", true)]
    #[case::class_nesting_is_literal(r"^[a[b]]$", "[]", true)]
    #[case::class_intersection_is_literal(r"^[a&&b]+$", "&&", true)]
    #[case::leading_bracket(r"^[]a]+$", "]a", true)]
    #[case::trailing_dash(r"^[a-]+$", "-a", true)]
    #[case::posix(r"^[[:alpha:][:^alpha:]]+$", "a1", true)]
    #[case::perl_in_class(r"^[\d\W]+$", "1-", true)]
    #[case::negated_perl_in_class(r"^[^\W]+$", "a", true)]
    #[case::flags_before_repeat("^a(?i)*$", "aaa", true)]
    #[case::flags_scope("^(?i:a)A$", "AA", true)]
    #[case::flags_scope_ends("^(?i:a)A$", "Aa", false)]
    #[case::unicode_class(r"^\p{Greek}+\PL$", "αβ1", true)]
    #[case::braced_literal(r"^a{,2}$", "a{,2}", true)]
    #[case::named_group(r"^(?P<x>a)(?<y1>b)$", "ab", true)]
    #[case::empty_flags("^(?)a$", "a", true)]
    fn reads_as_go(#[case] pattern: &str, #[case] text: &str, #[case] matches: bool) {
        let re = compile(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
        assert_eq!(re.is_match(text), matches, "{pattern} on {text:?}");
    }

    #[rstest]
    #[case::missing_paren("(abc", "missing closing ): `(abc`")]
    #[case::unexpected_paren("ab)", "unexpected ): `ab)`")]
    #[case::missing_bracket("a[bc", "missing closing ]: `[bc`")]
    #[case::missing_bracket_escape(r"[a\", "trailing backslash at end of expression: ``")]
    #[case::trailing_backslash(r"ab\", "trailing backslash at end of expression: ``")]
    #[case::invalid_escape(r"a\qb", r"invalid escape sequence: `\q`")]
    #[case::backreference(r"(a)\1", r"invalid escape sequence: `\1`")]
    #[case::any_byte(r"\C", r"invalid escape sequence: `\C`")]
    #[case::class_boundary(r"[\b]", r"invalid escape sequence: `\b`")]
    #[case::bad_hex(r"\xZ1", r"invalid escape sequence: `\xZ1`")]
    #[case::open_hex(r"\x{41", r"invalid escape sequence: `\x{41`")]
    #[case::missing_argument("*a", "missing argument to repetition operator: `*`")]
    #[case::missing_argument_after_bar("a|+", "missing argument to repetition operator: `+`")]
    #[case::missing_argument_in_group("(?i:*)", "missing argument to repetition operator: `*`")]
    #[case::nested_repeat("a**", "invalid nested repetition operator: `**`")]
    #[case::nested_lazy_repeat("a*?+", "invalid nested repetition operator: `*?+`")]
    #[case::nested_counts("a{2}{3}", "invalid nested repetition operator: `{2}{3}`")]
    #[case::count_too_large("a{1001}", "invalid repeat count: `{1001}`")]
    #[case::count_reversed("a{3,2}", "invalid repeat count: `{3,2}`")]
    #[case::counts_multiply("(a{100}){11}", "invalid repeat count: `{11}`")]
    #[case::bad_range("[z-a]", "invalid character class range: `z-a`")]
    #[case::bad_posix("[[:foo:]]", "invalid character class range: `[:foo:]`")]
    #[case::bad_unicode(r"\p{Klingon}", r"invalid character class range: `\p{Klingon}`")]
    #[case::bad_perl_flag("(?x)a", "invalid or unsupported Perl syntax: `(?x`")]
    #[case::lookahead("a(?=b)", "invalid or unsupported Perl syntax: `(?=`")]
    #[case::dangling_negation("(?i-)a", "invalid or unsupported Perl syntax: `(?i-)`")]
    #[case::bad_capture_name("(?P<a-b>x)", "invalid named capture: `(?P<a-b>`")]
    #[case::open_capture_name("(?P<ab", "invalid named capture: `(?P<ab`")]
    fn refuses_as_go(#[case] pattern: &str, #[case] message: &str) {
        assert_eq!(
            compile(pattern).err(),
            Some(CompileError::Go(format!("error parsing regexp: {message}"))),
            "{pattern}"
        );
    }

    #[test]
    fn counts_within_the_limit_compile() {
        assert!(compile("(a{10}){100}").is_ok());
        assert!(compile("(a{0}){1000}").is_ok());
    }
}
