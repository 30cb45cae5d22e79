//! Reading JSON into a `serde_json::Value`, faster than `serde_json::from_slice` on what the
//! server reads most (request bodies and stored objects: well-formed objects of short strings and
//! small integers), and exactly as `serde_json` reads anything.
//!
//! [`from_slice`] first tries a direct parser that validates the input's UTF-8 once (where
//! `serde_json` checks every string on its own), copies strings without escapes in one go and
//! builds the tree without going through serde's visitors. It accepts only what it is sure to
//! read as `serde_json` does: plain JSON text, strings with the standard escapes, and
//! non-negative integers that fit in a `u64`; any other number is read by `serde_json` itself
//! (its float and negative-number rules, `-0` included, stay its own). Anything else — a syntax
//! error, a lone surrogate, a control character in a string, nesting deeper than
//! [`MAX_DEPTH`] — makes it give up, and `serde_json` reads the whole input again: its value or
//! its error (message and position) is the answer. So the fast path can change the time a read
//! takes, never its result; `the_fast_path_reads_as_serde_json_does` compares the two on
//! generated and mutated documents.

use serde_json::{Map, Number, Value};

use super::json_writer::{MapText, MapTexts, Written, MIN_RECORDED};

/// The nesting the direct parser handles before it leaves the input to `serde_json` (whose
/// recursion limit, 128, then decides).
pub const MAX_DEPTH: usize = 100;

/// `serde_json::from_slice::<Value>`, by the direct parser where it can.
pub fn from_slice(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    match parse(bytes) {
        Some(value) => Ok(value),
        None => serde_json::from_slice(bytes),
    }
}

/// [`from_slice`] of a document that is mostly `like` (an UPDATE's body: the stored object as
/// a client read it, with a change): the result is the same value, but every map (or array
/// item) the input holds equal to `like`'s at the same path *is* `like`'s, a clone sharing
/// its entries (see `vendor/README.md`), made without building it from the input first. So
/// the parse allocates only for what changed, and whatever later compares the value with
/// `like`, or looks only at what changed, finds the equal parts without a walk.
pub fn from_slice_like(bytes: &[u8], like: &Value) -> Result<Value, serde_json::Error> {
    from_slice_like_written(bytes, like, None, false)
}

/// [`from_slice_like`] where `like` is a stored version whose bytes and maps' texts are known
/// (`written`): a map of `like` whose text was recorded is first looked for as that text, byte
/// for byte, where the input holds its value — one `memcmp`. Equal bytes are the same value:
/// the text is what writing the map gives, a complete JSON object that reads back as the map.
/// A client that writes what it read the way the server wrote it (sorted keys, the same
/// escapes: a k8s-openapi object, a serialized map) so skips walking its unchanged parts; any
/// other input is compared as [`from_slice_like`] compares it.
///
/// `absent_is_null`: a map of the input that leaves out members `like`'s map holds as `null`
/// (and matches it otherwise) is read as `like`'s map, nulls included. Only for a body that is
/// decoded into a Go struct next (a built-in kind's): Go reads a field left out and a field
/// given as `null` as the same zero value, and writes that zero back as `null` (a pod
/// condition's `lastProbeTime`), so a typed client that leaves nulls out (k8s-openapi) still
/// sends back what it read. The value then differs from what `serde_json` reads by those
/// nulls alone.
pub fn from_slice_like_written(
    bytes: &[u8],
    like: &Value,
    written: Option<Written<'_>>,
    absent_is_null: bool,
) -> Result<Value, serde_json::Error> {
    match parse_with(bytes, Some((like, written)), absent_is_null) {
        Some(value) => Ok(value),
        None => serde_json::from_slice(bytes),
    }
}

/// [`from_slice`], or [`from_slice_like_written`] given `like` (a `null` left out is not a
/// match), also returning the texts of the value's maps in `bytes` (maps of at least
/// [`MIN_RECORDED`] bytes; none when the input was read by `serde_json`), sorted by identity:
/// with `bytes`, a [`Written`] to read the next alike document against. The texts are the
/// input's, byte for byte, so equal bytes read as the map: they are for reading only (a
/// writer copying them would copy the input's spacing and escapes).
pub fn from_slice_recording(
    bytes: &[u8],
    like: Option<(&Value, Option<Written<'_>>)>,
) -> Result<(Value, MapTexts), serde_json::Error> {
    match read(bytes, like, false, true) {
        Some((value, recorded)) => {
            let mut recorded = recorded.unwrap_or_default();
            recorded.sort_unstable_by_key(|t| t.id);
            recorded.dedup_by_key(|t| t.id);
            Ok((value, recorded.into()))
        }
        None => Ok((serde_json::from_slice(bytes)?, MapTexts::from([]))),
    }
}

/// The direct parser: `None` wherever it does not read the input exactly as `serde_json` would.
fn parse(bytes: &[u8]) -> Option<Value> {
    parse_with(bytes, None, false)
}

/// [`parse`], sharing `like`'s equal parts (see [`from_slice_like`]).
fn parse_with(
    bytes: &[u8],
    like: Option<(&Value, Option<Written<'_>>)>,
    absent_is_null: bool,
) -> Option<Value> {
    read(bytes, like, absent_is_null, false).map(|(value, _)| value)
}

/// [`parse_with`], with the texts of the value's maps when `record` (see
/// [`from_slice_recording`]).
fn read(
    bytes: &[u8],
    like: Option<(&Value, Option<Written<'_>>)>,
    absent_is_null: bool,
    record: bool,
) -> Option<(Value, Option<Vec<MapText>>)> {
    // The same check as `str::from_utf8`, with SIMD (a body is validated whole, once).
    let text = simdutf8::basic::from_utf8(bytes).ok()?;
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        at: 0,
        spare_members: Vec::new(),
        spare_items: Vec::new(),
        scratch: String::new(),
        match_budget: bytes.len().saturating_mul(MATCH_BUDGET),
        written: like.and_then(|(_, written)| written),
        absent_is_null,
        recorded: record.then(Vec::new),
    };
    reader.skip_whitespace();
    let mut value = Value::Null;
    match like {
        Some((like, _)) => reader.value_into_like(0, &mut value, like)?,
        None => reader.value_into(0, &mut value)?,
    }
    reader.skip_whitespace();
    (reader.at == reader.bytes.len()).then_some((value, reader.recorded))
}

/// Eight bytes at once (`w`, little-endian): the high bit of each byte of it that is special
/// in a JSON string (a quote, a backslash or a control character), and maybe of bytes after the
/// first special one: only the lowest flag is exact. 0: none is special.
#[inline]
pub(crate) fn special_flags(w: u64) -> u64 {
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |w: u64| w.wrapping_sub(ONES) & !w & HIGHS;
    zero_byte(w ^ (ONES * u64::from(b'"')))
        | zero_byte(w ^ (ONES * u64::from(b'\\')))
        | (w.wrapping_sub(ONES * 0x20) & !w & HIGHS)
}

/// A byte in each of a word's eight places.
const ONES: u64 = 0x0101_0101_0101_0101;

/// Where the first byte of `bytes` that ends a run of plain string contents is: a quote, a
/// backslash or a control character (`None`: there is none; also the bytes a JSON writer
/// escapes, see `json_writer`). Eight bytes at a time: each word is
/// tested for the three at once (the lowest flagged byte of each test is exact, so the lowest of
/// all is the first special byte), then the bytes left over as the last eight (most strings
/// are short: no byte is looked at alone but in strings of one to three bytes).
pub(crate) fn special_byte(bytes: &[u8]) -> Option<usize> {
    let flagged = special_flags;
    let word = |at: usize| -> Option<u64> {
        let mut word = [0u8; 8];
        word.copy_from_slice(bytes.get(at..at + 8)?);
        Some(u64::from_le_bytes(word))
    };
    let len = bytes.len();
    let mut at = 0;
    while at + 8 <= len {
        let found = flagged(word(at)?);
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    if at == len {
        return None;
    }
    // The last bytes, as the last eight (read again where they overlap the words above, which
    // hold no special byte: the first flagged byte is still the first special one).
    if len >= 8 {
        let found = flagged(word(len - 8)?);
        return (found != 0).then(|| len - 8 + (found.trailing_zeros() / 8) as usize);
    }
    // A string shorter than a word: as two halves of four bytes (overlapping when it is
    // shorter than eight), or byte by byte below four.
    if len >= 4 {
        let half = |at: usize| -> Option<u64> {
            let mut half = [0u8; 4];
            half.copy_from_slice(bytes.get(at..at + 4)?);
            Some(u64::from(u32::from_le_bytes(half)))
        };
        let (low, high) = (half(0)?, half(len - 4)?);
        // Above the four bytes read, bytes that are no special byte.
        let found = flagged(low | (ONES * u64::from(b'a')) << 32);
        if found != 0 {
            return Some((found.trailing_zeros() / 8) as usize);
        }
        let found = flagged(high | (ONES * u64::from(b'a')) << 32);
        return (found != 0).then(|| len - 4 + (found.trailing_zeros() / 8) as usize);
    }
    bytes
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
}

/// How many times its length a reading against a known value may compare of the input
/// ([`Reader`]'s `match_budget`).
const MATCH_BUDGET: usize = 4;

/// The most keys an object written out of key order may have for [`Reader::matches`] to
/// compare it (beyond, it is read as it is).
const MAX_UNORDERED_KEYS: usize = 32;

/// What a member's slot holds until it is read: copied from constants (from read-only memory,
/// not from stores just made; see [`Reader`]).
const EMPTY_MEMBER: (String, Value) = (String::new(), Value::Null);
const EMPTY_STRING: Value = Value::String(String::new());
const NULL: Value = Value::Null;

/// The reader builds every value where it ends up (a member's or an item's slot, or the
/// caller's): a value handed back by return would be stored piece by piece (its tag byte, then
/// its fields) and copied on at once in wider loads, which the CPU cannot forward from the
/// stores that wrote it — a stall per member, a quarter of a parse in `perf annotate`.
struct Reader<'a> {
    /// The input, known to be UTF-8.
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    /// Member buffers of the objects being read (one is taken per open object and given back
    /// empty), kept from object to object so that each map is allocated once, at its size.
    spare_members: Vec<Vec<(String, Value)>>,
    /// The same for arrays' items.
    spare_items: Vec<Vec<Value>>,
    /// Where [`Reader::string_text`] decodes a string with escapes.
    scratch: String,
    /// How many more bytes [`Reader::value_into_like`] may compare before it reads on without
    /// comparing: a comparison that fails deep inside is made again one level down, so a
    /// document nested deep that differs at its far end would be compared once per level.
    /// [`MATCH_BUDGET`] times the input bounds that.
    match_budget: usize,
    /// The bytes `like` was written as and its maps' texts in them, when known
    /// ([`from_slice_like_written`]).
    written: Option<Written<'a>>,
    /// A member of a known map that is `null` matches an input that leaves it out (see
    /// [`from_slice_like_written`]).
    absent_is_null: bool,
    /// The texts of the maps read so far, when asked ([`from_slice_recording`]).
    recorded: Option<Vec<MapText>>,
}

impl Reader<'_> {
    /// Records, when asked, that `value` (a map, read from `start` to the reader) has that
    /// text.
    fn record(&mut self, value: &Value, start: usize) {
        let (Some(recorded), Value::Object(map)) = (self.recorded.as_mut(), value) else {
            return;
        };
        if let Some(id) = map.entries_id().filter(|_| self.at - start >= MIN_RECORDED) {
            recorded.push(MapText {
                id,
                start,
                end: self.at,
            });
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at.checked_add(word.len())?;
        (self.bytes.get(self.at..end)? == word).then(|| self.at = end)
    }

    /// Reads the value at the reader into `out`.
    fn value_into(&mut self, depth: usize, out: &mut Value) -> Option<()> {
        match self.peek()? {
            b'{' => self.object_into(depth + 1, out, None)?,
            b'[' => self.array_into(depth + 1, out, None)?,
            b'"' => self.string_value_into(out)?,
            b't' => {
                self.literal(b"true")?;
                *out = Value::Bool(true);
            }
            b'f' => {
                self.literal(b"false")?;
                *out = Value::Bool(false);
            }
            b'n' => {
                self.literal(b"null")?;
                *out = Value::Null;
            }
            b'-' | b'0'..=b'9' => self.number_into(out)?,
            _ => return None,
        }
        Some(())
    }

    /// An object at its `{`, into `out`; each member read against `like`'s of its key, if
    /// given (see [`Reader::value_into_like`]).
    fn object_into(
        &mut self,
        depth: usize,
        out: &mut Value,
        like: Option<&Map<String, Value>>,
    ) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        let start = self.at;
        self.at += 1;
        self.skip_whitespace();
        if self.peek()? == b'}' {
            self.at += 1;
            *out = Value::Object(Map::new());
            return Some(());
        }
        let mut members = self.spare_members.pop().unwrap_or_default();
        let read = self.members_into(depth, &mut members, like);
        if read.is_some() {
            // One allocation of the right size, sorted once (a repeated key keeps its last
            // value, as `serde_json`'s map does).
            *out = Value::Object(Map::new());
            if let Value::Object(map) = out {
                *map = members.drain(..).collect();
            }
            self.record(out, start);
        }
        members.clear();
        self.spare_members.push(members);
        read
    }

    /// The members of an object after its `{`, up to and including its `}`.
    fn members_into(
        &mut self,
        depth: usize,
        members: &mut Vec<(String, Value)>,
        like: Option<&Map<String, Value>>,
    ) -> Option<()> {
        loop {
            self.skip_whitespace();
            if self.peek()? != b'"' {
                return None;
            }
            members.push(EMPTY_MEMBER);
            let (key, slot) = members.last_mut()?;
            self.string_into(key)?;
            self.skip_whitespace();
            self.expect(b':')?;
            self.skip_whitespace();
            // A string member is read here, not through `value_into`: most members are strings.
            match (self.peek()?, like.and_then(|like| like.get(key.as_str()))) {
                (_, Some(known)) => self.value_into_like(depth, slot, known)?,
                (b'"', None) => self.string_value_into(slot)?,
                (_, None) => self.value_into(depth, slot)?,
            }
            self.skip_whitespace();
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// An array at its `[`, into `out`; each item read against `like`'s at its index, if given
    /// (see [`Reader::value_into_like`]).
    fn array_into(&mut self, depth: usize, out: &mut Value, like: Option<&[Value]>) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        self.skip_whitespace();
        if self.peek()? == b']' {
            self.at += 1;
            *out = Value::Array(Vec::new());
            return Some(());
        }
        let mut items = self.spare_items.pop().unwrap_or_default();
        let read = self.items_into(depth, &mut items, like);
        if read.is_some() {
            *out = Value::Array(Vec::new());
            if let Value::Array(array) = out {
                array.reserve_exact(items.len());
                array.append(&mut items);
            }
        }
        items.clear();
        self.spare_items.push(items);
        read
    }

    /// The items of an array after its `[`, up to and including its `]`.
    fn items_into(
        &mut self,
        depth: usize,
        items: &mut Vec<Value>,
        like: Option<&[Value]>,
    ) -> Option<()> {
        loop {
            self.skip_whitespace();
            let known = like.and_then(|like| like.get(items.len()));
            items.push(NULL);
            let slot = items.last_mut()?;
            match known {
                Some(known) => self.value_into_like(depth, slot, known)?,
                None => self.value_into(depth, slot)?,
            }
            self.skip_whitespace();
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A string value at the opening quote, into `out`: the string is built in its slot (see
    /// [`Reader`]).
    #[inline(always)]
    fn string_value_into(&mut self, out: &mut Value) -> Option<()> {
        *out = EMPTY_STRING;
        match out {
            Value::String(s) => self.string_into(s),
            _ => None,
        }
    }

    /// A string at the opening quote, written into `out`. The input is valid UTF-8 and the
    /// quotes and escapes are ASCII, so a run without escapes is a `str` slice as it is (copied
    /// by an inlined `to_owned`: through an out-of-line call the new `String` would come back
    /// through memory, see [`Reader`]). A string with escapes goes on in
    /// [`Reader::escaped_string`].
    #[inline(always)]
    fn string_into(&mut self, out: &mut String) -> Option<()> {
        self.at += 1;
        let start = self.at;
        self.at += special_byte(self.bytes.get(start..)?)?;
        match *self.bytes.get(self.at)? {
            b'"' => {
                *out = self.text.get(start..self.at)?.to_owned();
                self.at += 1;
                Some(())
            }
            b'\\' => {
                *out = self.escaped_string(start)?;
                Some(())
            }
            _ => None,
        }
    }

    /// The rest of a string that began at `start` and has an escape where the reader is.
    #[inline(never)]
    fn escaped_string(&mut self, start: usize) -> Option<String> {
        let mut out = String::with_capacity(self.at - start + 16);
        self.escaped_into(start, &mut out)?;
        Some(out)
    }

    /// [`Reader::escaped_string`], appended to `out`.
    fn escaped_into(&mut self, start: usize, out: &mut String) -> Option<()> {
        out.push_str(self.text.get(start..self.at)?);
        loop {
            let run = self.at;
            self.at += special_byte(self.bytes.get(run..)?)?;
            if *self.bytes.get(self.at)? < 0x20 {
                return None;
            }
            out.push_str(self.text.get(run..self.at)?);
            if self.peek()? == b'"' {
                self.at += 1;
                return Some(());
            }
            self.at += 1;
            let escaped = self.peek()?;
            self.at += 1;
            match escaped {
                b'"' => out.push('"'),
                b'\\' => out.push('\\'),
                b'/' => out.push('/'),
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'n' => out.push('\n'),
                b'r' => out.push('\r'),
                b't' => out.push('\t'),
                b'u' => out.push(self.unicode_escape()?),
                _ => return None,
            }
        }
    }

    /// The character of a `\u` escape (after the `u`), a surrogate pair read as one; a lone
    /// surrogate is left to `serde_json` (which refuses it).
    fn unicode_escape(&mut self) -> Option<char> {
        let first = self.hex4()?;
        match first {
            0xD800..=0xDBFF => {
                self.expect(b'\\')?;
                self.expect(b'u')?;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return None;
                }
                let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                char::from_u32(code)
            }
            0xDC00..=0xDFFF => None,
            _ => char::from_u32(first),
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.text.get(self.at..self.at.checked_add(4)?)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.at += 4;
        u32::from_str_radix(digits, 16).ok()
    }

    /// [`Reader::value_into`] of a value that may equal `like`: an object or array the input
    /// holds exactly as `like` is (checked by [`Reader::matches`], which builds nothing)
    /// becomes a clone of `like`; one that differs is read member by member (item by item),
    /// each against `like`'s at its key (index), so its equal parts are still `like`'s.
    fn value_into_like(&mut self, depth: usize, out: &mut Value, like: &Value) -> Option<()> {
        match (self.peek()?, like) {
            (b'{', Value::Object(_)) | (b'[', Value::Array(_)) => {
                let start = self.at;
                if self.holds_text_of(like) {
                    *out = like.clone();
                    self.record_known_text(like, start);
                    return Some(());
                }
                if self.match_budget > 0 {
                    // Its text was looked for just above: compared member by member.
                    let matched = self.walk_matches(depth, like);
                    self.match_budget = self.match_budget.saturating_sub(self.at - start);
                    if matched {
                        *out = like.clone();
                        self.record(out, start);
                        return Some(());
                    }
                }
                self.at = start;
                match like {
                    Value::Object(like) => self.object_into(depth + 1, out, Some(like)),
                    _ => self.array_into(depth + 1, out, like.as_array().map(Vec::as_slice)),
                }
            }
            _ => self.value_into(depth, out),
        }
    }

    /// Records, when asked, the texts of `like` (a map found as its known text, which now
    /// ends at the reader) and of the maps recorded inside it, where they sit in this input.
    fn record_known_text(&mut self, like: &Value, start: usize) {
        let (Some(recorded), Some(written), Value::Object(map)) =
            (self.recorded.as_mut(), &self.written, like)
        else {
            return;
        };
        match written.record_of(map) {
            // Found as its text without its `null`s: no text inside it is where it was.
            Some(old) if old.end - old.start != self.at - start => {}
            Some(old) => recorded.extend(
                written
                    .texts_moved(old, start)
                    .filter(|t| t.id != super::json_writer::NULL_CUT),
            ),
            None => {}
        }
    }

    /// Whether the input holds, at the reader, the text `like` (a map) was written as in the
    /// known version's bytes; moves past it when it does (see [`from_slice_like_written`]).
    /// With [`Reader::absent_is_null`], also that text without its `null` members, as a typed
    /// client writes it back (all of them left out, at every depth: what such an input reads
    /// as is `like`).
    fn holds_text_of(&mut self, like: &Value) -> bool {
        let (Some(written), Value::Object(map)) = (&self.written, like) else {
            return false;
        };
        let Some(text) = written.text_of_map(map) else {
            return false;
        };
        let end = self.at + text.len();
        if self.bytes.get(self.at..end) == Some(text) {
            self.at = end;
            return true;
        }
        self.absent_is_null && self.holds_text_without_nulls(map)
    }

    /// [`Reader::holds_text_of`]'s reading of a text without its `null` members.
    #[inline(never)]
    fn holds_text_without_nulls(&mut self, map: &Map<String, Value>) -> bool {
        let Some(pieces) = self
            .written
            .as_ref()
            .and_then(|written| written.pieces_without_nulls(map))
        else {
            return false;
        };
        let mut at = self.at;
        for piece in pieces {
            let end = at + piece.len();
            if self.bytes.get(at..end) != Some(piece) {
                return false;
            }
            at = end;
        }
        self.at = at;
        true
    }

    /// Whether the value at the reader reads as `like`, exactly (what [`Reader::value_into`]
    /// would build equals it, number kinds included); moves past the value when it does, and
    /// to somewhere inside it when it does not (the caller goes back). Builds nothing (a
    /// string with escapes is decoded into a reused buffer). It answers `false` for what it
    /// does not read itself (numbers other than plain non-negative integers, a repeated key,
    /// a string `string_into` gives up on): those parts are then read with
    /// [`Reader::value_into`].
    fn matches(&mut self, depth: usize, like: &Value) -> bool {
        self.skip_whitespace();
        // A map the input holds as its recorded text (an array's items have no text of their
        // own to be found by: a list of managed fields entries is compared item by item, each
        // by its text).
        self.holds_text_of(like) || self.walk_matches(depth, like)
    }

    /// [`Reader::matches`] without looking for `like`'s text first (its members' and items'
    /// texts are still looked for).
    fn walk_matches(&mut self, depth: usize, like: &Value) -> bool {
        self.skip_whitespace();
        let Some(first) = self.peek() else {
            return false;
        };
        match (first, like) {
            (b'{', Value::Object(like)) => self.object_matches(depth + 1, like),
            (b'[', Value::Array(like)) => {
                if depth + 1 > MAX_DEPTH {
                    return false;
                }
                self.at += 1;
                self.skip_whitespace();
                if self.peek() == Some(b']') {
                    self.at += 1;
                    return like.is_empty();
                }
                let mut items = like.iter();
                loop {
                    match items.next() {
                        Some(item) if self.matches(depth + 1, item) => {}
                        _ => return false,
                    }
                    self.skip_whitespace();
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b']') => {
                            self.at += 1;
                            return items.next().is_none();
                        }
                        _ => return false,
                    }
                }
            }
            (b'"', Value::String(like)) => self.string_text() == Some(like.as_str()),
            (b't', Value::Bool(true)) => self.literal(b"true").is_some(),
            (b'f', Value::Bool(false)) => self.literal(b"false").is_some(),
            (b'n', Value::Null) => self.literal(b"null").is_some(),
            (b'0'..=b'9', Value::Number(like)) => {
                let Some(like) = like.as_u64() else {
                    return false;
                };
                let start = self.at;
                while let Some(b'0'..=b'9') = self.peek() {
                    self.at += 1;
                }
                let digits = &self.bytes[start..self.at];
                // A plain integer (no leading zero, no fraction or exponent after it) that
                // is `like`'s number.
                let leading_zero = digits.len() > 1 && digits[0] == b'0';
                let more = matches!(self.peek(), Some(b'.' | b'e' | b'E'));
                !leading_zero
                    && !more
                    && digits.len() <= 20
                    && std::str::from_utf8(digits)
                        .ok()
                        .and_then(|d| d.parse::<u64>().ok())
                        == Some(like)
            }
            _ => false,
        }
    }

    /// [`Reader::matches`] of an object (at its `{`): every member matches `like`'s of its
    /// key, and every key of `like` is there once.
    fn object_matches(&mut self, depth: usize, like: &Map<String, Value>) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        let start = self.at;
        match self.members_match(depth, like, true) {
            Some(matched) => matched,
            // Keys in another order (a Go client writes a struct's fields in their declared
            // order): again, looking each key up.
            None => {
                self.at = start;
                self.members_match(depth, like, false) == Some(true)
            }
        }
    }

    /// The members of an object at its `{` against `like`.
    ///
    /// `in_order`: key by key in `like`'s order (sorted). A client that writes keys sorted (a
    /// serialized map, a k8s-openapi struct) writes exactly `like`'s keys in that order, so
    /// each is compared with the one entry it must be, without a lookup; `None` when a key is
    /// one of `like`'s out of that order. Otherwise each key is looked up, and looked for
    /// among those before it (a repeated key does not match; an object with more than
    /// [`MAX_UNORDERED_KEYS`] keys is not compared). With [`Reader::absent_is_null`], a member
    /// of `like` whose value is `null` matches when the input leaves it out.
    fn members_match(
        &mut self,
        depth: usize,
        like: &Map<String, Value>,
        in_order: bool,
    ) -> Option<bool> {
        if !in_order && like.len() > MAX_UNORDERED_KEYS {
            return Some(false);
        }
        self.at += 1;
        self.skip_whitespace();
        let mut entries = like.iter();
        let mut seen = (!in_order).then_some([""; MAX_UNORDERED_KEYS]);
        let mut count = 0;
        // Copied out: the key read below borrows the reader.
        let absent_is_null = self.absent_is_null;
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Some(self.rest_absent(entries, seen.as_ref().map(|s| &s[..0])));
        }
        loop {
            let Some(key) = self.string_text() else {
                return Some(false);
            };
            let known = match &mut seen {
                None => loop {
                    match entries.next() {
                        Some((known_key, known)) if known_key == key => break known,
                        // Left out by the input: matches only as a `null` it may leave out.
                        Some((_, Value::Null)) if absent_is_null => {}
                        _ if like.contains_key(key) => return None,
                        _ => return Some(false),
                    }
                },
                Some(seen) => {
                    let Some((known_key, known)) = like.get_key_value(key) else {
                        return Some(false);
                    };
                    if count >= MAX_UNORDERED_KEYS || seen[..count].contains(&known_key.as_str()) {
                        return Some(false);
                    }
                    seen[count] = known_key.as_str();
                    known
                }
            };
            count += 1;
            self.skip_whitespace();
            if self.expect(b':').is_none() || !self.matches(depth, known) {
                return Some(false);
            }
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.skip_whitespace();
                }
                Some(b'}') => {
                    self.at += 1;
                    if count == like.len() {
                        return Some(true);
                    }
                    return Some(self.rest_absent(entries, seen.as_ref().map(|s| &s[..count])));
                }
                _ => return Some(false),
            }
        }
    }

    /// Whether the members of `like` an object left out may be left out: each is a `null` and
    /// [`Reader::absent_is_null`]. In order, `rest` holds those not read; otherwise it holds
    /// all of `like`'s members and `seen` the keys read.
    fn rest_absent<'k>(
        &self,
        mut rest: impl Iterator<Item = (&'k String, &'k Value)>,
        seen: Option<&[&str]>,
    ) -> bool {
        rest.all(|(key, value)| {
            seen.is_some_and(|seen| seen.contains(&key.as_str()))
                || (self.absent_is_null && value.is_null())
        })
    }

    /// The text of a string at its opening quote, moving past it, as [`Reader::string_into`]
    /// reads it: the input's own slice when it has no escapes, else decoded into the reader's
    /// scratch buffer (no allocation once it is large enough); `None` (and somewhere inside
    /// it) where `string_into` would give up.
    fn string_text(&mut self) -> Option<&str> {
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.at + 1;
        let end = start + special_byte(self.bytes.get(start..)?)?;
        match *self.bytes.get(end)? {
            b'"' => {
                self.at = end + 1;
                self.text.get(start..end)
            }
            b'\\' => {
                self.at = end;
                let mut scratch = std::mem::take(&mut self.scratch);
                scratch.clear();
                let read = self.escaped_into(start, &mut scratch);
                self.scratch = scratch;
                read.map(|()| self.scratch.as_str())
            }
            _ => None,
        }
    }

    /// A number: a non-negative integer without leading zeros that fits in a `u64` directly,
    /// anything else (sign, fraction, exponent, overflow) as `serde_json` reads the token.
    fn number_into(&mut self, out: &mut Value) -> Option<()> {
        let start = self.at;
        let mut plain = true;
        if self.peek()? == b'-' {
            plain = false;
            self.at += 1;
        }
        let digits = self.at;
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
        let integer = &self.bytes[digits..self.at];
        if integer.is_empty() || (integer.len() > 1 && integer[0] == b'0') {
            return None;
        }
        if self.peek() == Some(b'.') {
            plain = false;
            self.at += 1;
            let fraction = self.at;
            while let Some(b'0'..=b'9') = self.peek() {
                self.at += 1;
            }
            if self.at == fraction {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            plain = false;
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            let exponent = self.at;
            while let Some(b'0'..=b'9') = self.peek() {
                self.at += 1;
            }
            if self.at == exponent {
                return None;
            }
        }
        if plain {
            let mut n: u64 = 0;
            for &d in integer {
                n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
            }
            *out = Value::Number(Number::from(n));
            return Some(());
        }
        *out = serde_json::from_str(self.text.get(start..self.at)?).ok()?;
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;
    use serde_json::json;

    /// Every map `value` holds, with the maps inside it.
    fn maps_of<'v>(value: &'v Value, out: &mut Vec<&'v Map<String, Value>>) {
        match value {
            Value::Object(map) => {
                out.push(map);
                map.values().for_each(|v| maps_of(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| maps_of(v, out)),
            _ => {}
        }
    }

    /// Each recorded text is a map of the value, and reads as that map.
    fn texts_read_as_their_maps(bytes: &[u8], value: &Value, texts: &[MapText]) -> usize {
        let mut maps = Vec::new();
        maps_of(value, &mut maps);
        for text in texts {
            let map = maps
                .iter()
                .find(|m| m.entries_id() == Some(text.id))
                .expect("a text of one of the value's maps");
            let read = from_slice(&bytes[text.start..text.end]).expect("JSON");
            assert_eq!(read.as_object(), Some(*map));
        }
        assert!(
            texts.windows(2).all(|w| w[0].id < w[1].id),
            "sorted, one per map"
        );
        texts.len()
    }

    #[test]
    fn a_recorded_document_finds_the_next_one_by_its_texts() {
        let long = |tag: &str| format!("{tag}-{}", "x".repeat(20));
        let first = format!(
            r#"{{"kind": "Pod", "metadata": {{"name": "a", "labels": {{"l": "{}"}}}},
                "spec": {{"containers": [{{"name": "{}", "env": {{"e": "{}"}}}}]}}}}"#,
            long("l"),
            long("c"),
            long("e")
        );
        let (value, texts) = from_slice_recording(first.as_bytes(), None).unwrap();
        assert_eq!(value, serde_json::from_str::<Value>(&first).unwrap());
        assert!(texts_read_as_their_maps(first.as_bytes(), &value, &texts) >= 4);
        // Another name: the spec is the kept one's, found by its text (whitespace and all).
        let second = first.replace(r#""name": "a""#, r#""name": "b""#);
        let written = Written {
            bytes: first.as_bytes(),
            texts: &texts,
        };
        let (again, again_texts) =
            from_slice_recording(second.as_bytes(), Some((&value, Some(written)))).unwrap();
        assert_eq!(again, serde_json::from_str::<Value>(&second).unwrap());
        let (Some(spec), Some(kept_spec)) = (again["spec"].as_object(), value["spec"].as_object())
        else {
            panic!("specs expected");
        };
        assert!(spec.shares_entries(kept_spec), "the kept spec, shared");
        assert!(texts_read_as_their_maps(second.as_bytes(), &again, &again_texts) >= 4);
        // A document left to `serde_json` (nested deeper than the direct parser goes) has the
        // same value and no texts.
        let deep = format!("{}{}{}", "[".repeat(110), first, "]".repeat(110));
        let (read, none) = from_slice_recording(deep.as_bytes(), None).unwrap();
        assert_eq!(read, serde_json::from_str::<Value>(&deep).unwrap());
        assert!(none.is_empty());
    }

    /// The direct parser's answer, if it gives one, is `serde_json`'s, Number kinds included.
    fn agrees(input: &[u8]) {
        let ours = parse(input);
        let theirs = serde_json::from_slice::<Value>(input);
        if let Some(ours) = ours {
            match theirs {
                Ok(theirs) => assert_eq!(ours, theirs, "{}", String::from_utf8_lossy(input)),
                Err(e) => panic!(
                    "the fast path read what serde_json refuses ({e}): {}",
                    String::from_utf8_lossy(input)
                ),
            }
        }
        // And `from_slice` is `serde_json` either way (error messages included).
        match (from_slice(input), serde_json::from_slice::<Value>(input)) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, b);
                assert_eq!(
                    super::super::json_writer::to_vec(&a, 0),
                    serde_json::to_vec(&b).unwrap()
                );
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("{a:?} vs {b:?}"),
        }
    }

    /// [`from_slice_like`] reads `input` as `serde_json` does, whatever `like` is; so does
    /// [`from_slice_like_written`] with `like`'s text and maps' texts.
    fn agrees_like(input: &[u8], like: &Value) {
        let (bytes, texts) = written(like);
        let written = Written {
            bytes: &bytes,
            texts: &texts,
        };
        for read in [
            from_slice_like(input, like),
            from_slice_like_written(input, like, Some(written), false),
        ] {
            match (read, serde_json::from_slice::<Value>(input)) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{}", String::from_utf8_lossy(input)),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("{a:?} vs {b:?}: {}", String::from_utf8_lossy(input)),
            }
        }
    }

    /// `value` written as the store writes a version: its bytes and its maps' texts.
    fn written(value: &Value) -> (Vec<u8>, super::super::json_writer::MapTexts) {
        let mut bytes = Vec::new();
        let texts = super::super::json_writer::write_sharing(value, &mut bytes, None);
        (bytes, texts)
    }

    /// Whether `value`'s map at `path` shares its entries with `like`'s.
    fn shared(value: &Value, like: &Value, path: &str) -> bool {
        match (value.pointer(path), like.pointer(path)) {
            (Some(Value::Object(a)), Some(Value::Object(b))) => a.shares_entries(b),
            _ => false,
        }
    }

    #[test]
    fn reading_like_a_known_value_shares_its_equal_maps() {
        let like: Value = serde_json::from_str(
            r#"{"metadata": {"name": "p", "labels": {"a": "b"}, "annotations": {"x": "1"}},
                "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}]}, {"name": "d"}]},
                "status": {"phase": "Running"}}"#,
        )
        .unwrap();
        // One annotation changed: the maps on its path are new, everything else is shared.
        let body = br#"{"metadata": {"annotations": {"x": "2"}, "labels": {"a": "b"}, "name": "p"},
            "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}]}, {"name": "d"}]},
            "status": {"phase": "Running"}}"#;
        let read = from_slice_like(body, &like).unwrap();
        agrees_like(body, &like);
        for path in ["/spec", "/status", "/metadata/labels"] {
            assert!(shared(&read, &like, path), "{path}");
        }
        for path in ["", "/metadata", "/metadata/annotations"] {
            assert!(!shared(&read, &like, path), "{path}");
        }
        // Unchanged, whole (keys in any order): the very map.
        let same = br#"{"status": {"phase": "Running"}, "spec": {"containers": [{"ports": [{"containerPort": 80}], "name": "c"}, {"name": "d"}]},
            "metadata": {"name": "p", "labels": {"a": "b"}, "annotations": {"x": "1"}}}"#;
        assert!(shared(&from_slice_like(same, &like).unwrap(), &like, ""));
        // A change in an array item: the other items, and the maps beside the array, are
        // shared.
        let item = br#"{"metadata": {"name": "p", "labels": {"a": "b"}, "annotations": {"x": "1"}},
            "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 81}]}, {"name": "d"}]},
            "status": {"phase": "Running"}}"#;
        let read = from_slice_like(item, &like).unwrap();
        assert!(shared(&read, &like, "/metadata"));
        assert!(shared(&read, &like, "/spec/containers/1"));
        assert!(!shared(&read, &like, "/spec/containers/0"));
        // Escapes are read as what they stand for, in keys (as managed fields' keys have
        // them) and values.
        let escaped = json!({"k:{\"type\":\"Ready\"}": {"phase": "Running"}});
        let body = br#"{"k:{\"type\":\"Ready\"}": {"phase": "Runn\u0069ng"}}"#;
        assert!(shared(
            &from_slice_like(body, &escaped).unwrap(),
            &escaped,
            ""
        ));
        // A repeated key is read afresh (the last one counts, as for `serde_json`).
        let status = from_slice_like(
            br#"{"phase": "Pending", "phase": "Running"}"#,
            &like["status"],
        )
        .unwrap();
        assert_eq!(status, like["status"]);
        assert!(!shared(&status, &like["status"], ""));
        let float = from_slice_like(
            br#"{"containerPort": 80.0}"#,
            &like["spec"]["containers"][0]["ports"][0],
        )
        .unwrap();
        assert_ne!(float, like["spec"]["containers"][0]["ports"][0]);
        // A key missing, one more, a repeated key standing in for a missing one.
        for body in [
            &br#"{"phase": "Running", "extra": 1}"#[..],
            br#"{}"#,
            br#"{"a": 1, "a": 2}"#,
        ] {
            agrees_like(body, &json!({"phase": "Running"}));
            agrees_like(body, &json!({"a": 2, "b": 2}));
        }
    }

    /// A document nested deep that differs at its far end is compared a bounded number of
    /// times (not once per level), and still reads as `serde_json` reads it.
    #[test]
    fn a_deep_document_differing_at_its_end_reads_as_serde_json_reads_it() {
        let nest = |leaf: &str| format!("{}{leaf}{}", "{\"a\":[".repeat(45), "]}".repeat(45));
        let like = from_slice(nest("1").as_bytes()).unwrap();
        agrees_like(nest("2").as_bytes(), &like);
        agrees_like(nest("1").as_bytes(), &like);
        // Beside it, an equal part read after the budget is spent is read afresh: equal all
        // the same.
        let both = |leaf: &str| format!("{{\"deep\":{},\"z\":{{\"k\":\"v\"}}}}", nest(leaf));
        let like = from_slice(both("1").as_bytes()).unwrap();
        let read = from_slice_like(both("2").as_bytes(), &like).unwrap();
        assert_eq!(read["z"], like["z"]);
        agrees_like(both("2").as_bytes(), &like);
    }

    /// A map the input holds as the known version's bytes hold it is taken by its text: shared
    /// without a walk, even where the comparison's budget is spent (a deep part that differed
    /// used it up), and only where the bytes are the same.
    #[test]
    fn a_map_written_as_stored_is_taken_by_its_text() {
        let nest = |leaf: &str| format!("{}{leaf}{}", "{\"a\":[".repeat(45), "]}".repeat(45));
        let z = json!({"k": "v".repeat(300), "list": [1, 2, {"x": "y"}]});
        let z_text = serde_json::to_string(&z).unwrap();
        let doc = |leaf: &str, z: &str| format!("{{\"deep\":{},\"z\":{z}}}", nest(leaf));
        let like = from_slice(doc("1", &z_text).as_bytes()).unwrap();
        let (bytes, texts) = written(&like);
        let known = Written {
            bytes: &bytes,
            texts: &texts,
        };
        let input = doc("2", &z_text);
        let read = from_slice_like(input.as_bytes(), &like).unwrap();
        assert!(!shared(&read, &like, "/z"), "the budget was spent");
        let read = from_slice_like_written(input.as_bytes(), &like, Some(known), false).unwrap();
        assert!(shared(&read, &like, "/z"));
        assert_eq!(read, serde_json::from_str::<Value>(&input).unwrap());
        // Written another way (keys out of order), the map is not its text: read afresh.
        let reordered = z_text.replacen("{\"k\"", "{\"list\":[1,2,{\"x\":\"y\"}],\"k\"", 1);
        let reordered = reordered.replacen(",\"list\":[1,2,{\"x\":\"y\"}]}", "}", 1);
        assert_eq!(from_slice(reordered.as_bytes()).unwrap(), z);
        let input = doc("2", &reordered);
        let read = from_slice_like_written(input.as_bytes(), &like, Some(known), false).unwrap();
        assert!(!shared(&read, &like, "/z"));
        assert_eq!(read, serde_json::from_str::<Value>(&input).unwrap());
        // The same text somewhere the version holds another value is not taken for it.
        let moved = format!("{{\"deep\":{z_text},\"z\":{z_text}}}");
        agrees_like(moved.as_bytes(), &like);
    }

    /// A map the input holds as its text without its `null` members (as a typed client sends a
    /// stored pod's status back: its conditions' `lastProbeTime` left out) is taken by that
    /// text with `absent_is_null`, even where the comparison's budget is spent; without it,
    /// or with one `null` kept and another left out, it is read as sent.
    #[test]
    fn a_map_written_without_its_nulls_is_taken_by_its_text_when_absent_is_null() {
        let nest = |leaf: &str| format!("{}{leaf}{}", "{\"a\":[".repeat(45), "]}".repeat(45));
        let condition = |t: &str| json!({"lastProbeTime": null, "status": "True", "type": t});
        let z = json!({"conditions": [condition("Ready"), condition("Initialized")],
            "message": "m".repeat(300), "nominatedNodeName": null, "phase": "Running"});
        let doc = |leaf: &str, z: &str| format!("{{\"deep\":{},\"z\":{z}}}", nest(leaf));
        let like = from_slice(doc("1", &serde_json::to_string(&z).unwrap()).as_bytes()).unwrap();
        let (bytes, texts) = written(&like);
        let known = Written {
            bytes: &bytes,
            texts: &texts,
        };
        let strip = |text: String| {
            text.replace("\"lastProbeTime\":null,", "")
                .replace(",\"nominatedNodeName\":null", "")
        };
        let sent = doc("2", &strip(serde_json::to_string(&z).unwrap()));
        let read = from_slice_like_written(sent.as_bytes(), &like, Some(known), true).unwrap();
        assert!(shared(&read, &like, "/z"));
        assert_eq!(read["z"], z, "the nulls are the stored ones");
        // Without `absent_is_null`: as sent (the budget is spent, so read afresh).
        let read = from_slice_like_written(sent.as_bytes(), &like, Some(known), false).unwrap();
        assert!(!shared(&read, &like, "/z"));
        assert_eq!(read, serde_json::from_str::<Value>(&sent).unwrap());
        // Some nulls left out, one kept: not that text.
        let partly = doc(
            "2",
            &serde_json::to_string(&z)
                .unwrap()
                .replace(",\"nominatedNodeName\":null", ""),
        );
        let read = from_slice_like_written(partly.as_bytes(), &like, Some(known), true).unwrap();
        assert!(!shared(&read, &like, "/z"));
        assert_eq!(read, serde_json::from_str::<Value>(&partly).unwrap());
        // A value changed beside the nulls left out: not that text either.
        let changed = sent.replace("\"Running\"", "\"Pending\"");
        let read = from_slice_like_written(changed.as_bytes(), &like, Some(known), true).unwrap();
        assert!(!shared(&read, &like, "/z"));
        assert_eq!(read["z"]["phase"], "Pending");
    }

    /// What a typed client sends back of a Go-encoded object leaves its nulls out (a pod
    /// condition's `lastProbeTime`): with `absent_is_null` such a map is the stored one, nulls
    /// included; without it, or where a member left out is not null, it is read as sent.
    #[rstest]
    #[case::in_order(
        r#"{"status": "True", "type": "Ready"}"#,
        json!({"lastProbeTime": null, "status": "True", "type": "Ready"}),
        true
    )]
    #[case::last_left_out(r#"{"a": 1}"#, json!({"a": 1, "z": null}), true)]
    #[case::all_left_out(r#"{}"#, json!({"a": null, "b": null}), true)]
    #[case::out_of_order(
        r#"{"type": "Ready", "status": "True"}"#,
        json!({"lastProbeTime": null, "status": "True", "type": "Ready"}),
        true
    )]
    #[case::out_of_order_all_left_out(
        r#"{"type": "Ready", "status": "True"}"#,
        json!({"a": null, "status": "True", "type": "Ready", "z": null}),
        true
    )]
    #[case::null_given(r#"{"a": null, "b": 1}"#, json!({"a": null, "b": 1}), true)]
    #[case::non_null_left_out(r#"{"b": 1}"#, json!({"a": 0, "b": 1}), false)]
    #[case::extra_member(r#"{"b": 1, "c": 2}"#, json!({"a": null, "b": 1}), false)]
    #[case::value_differs(r#"{"b": 2}"#, json!({"a": null, "b": 1}), false)]
    #[case::repeated_key(r#"{"b": 1, "b": 1}"#, json!({"a": null, "b": 1}), false)]
    fn a_null_left_out_matches_only_when_absent_is_null(
        #[case] input: &str,
        #[case] like: Value,
        #[case] matches: bool,
    ) {
        // Nested in an array in a map, as conditions are in a pod's status.
        let like = json!({"status": {"conditions": [like], "phase": "Running"}});
        let input = format!(r#"{{"status": {{"conditions": [{input}], "phase": "Running"}}}}"#);
        let (bytes, texts) = written(&like);
        let known = Written {
            bytes: &bytes,
            texts: &texts,
        };
        let sent: Value = serde_json::from_str(&input).unwrap();
        let read = from_slice_like_written(input.as_bytes(), &like, Some(known), true).unwrap();
        if matches {
            assert_eq!(read, like);
            assert!(shared(&read, &like, "/status"));
        } else {
            assert_eq!(read, sent);
        }
        // Without it, the input is read as `serde_json` reads it, nulls left out or not.
        agrees_like(input.as_bytes(), &like);
    }

    #[rstest]
    #[case::object(r#"{"a": 1, "b": [true, false, null], "c": {"d": "e"}}"#, true)]
    #[case::whitespace(" \n\t{ \"a\" : [ 1 , 2 ] } \r\n", true)]
    #[case::escapes(r#"{"s": "a\"b\\c\/d\be\ff\ng\rh\ti\u00e9\ud83d\ude00"}"#, true)]
    #[case::unicode_raw(r#"{"s": "żółw 🐢"}"#, true)]
    #[case::repeated_key(r#"{"a": 1, "a": 2}"#, true)]
    #[case::big_integer("18446744073709551615", true)]
    #[case::overflow("18446744073709551616", true)]
    #[case::negative("-5", true)]
    #[case::negative_zero("-0", true)]
    #[case::float("1.5e3", true)]
    #[case::float_zero("0.0", true)]
    #[case::leading_zero("01", false)]
    #[case::trailing_comma(r#"{"a": 1,}"#, false)]
    #[case::trailing_text(r#"{"a": 1} x"#, false)]
    #[case::lone_surrogate(r#""\ud800""#, false)]
    #[case::control_char("\"a\u{1}b\"", false)]
    #[case::bad_escape(r#""\x""#, false)]
    #[case::unclosed(r#"{"a": "#, false)]
    #[case::empty("", false)]
    #[case::bare_minus("-", false)]
    #[case::dot("1.", false)]
    #[case::exponent("1e", false)]
    fn reads_as_serde_json(#[case] input: &str, #[case] valid: bool) {
        agrees(input.as_bytes());
        assert_eq!(from_slice(input.as_bytes()).is_ok(), valid);
    }

    #[test]
    fn invalid_utf8_and_deep_nesting_are_left_to_serde_json() {
        agrees(b"{\"a\": \"\xff\"}");
        let deep = format!("{}{}", "[".repeat(130), "]".repeat(130));
        assert!(parse(deep.as_bytes()).is_none());
        agrees(deep.as_bytes());
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(ok.as_bytes()).is_some());
    }

    #[test]
    fn a_body_reads_exactly_when_it_is_utf8() {
        // Valid and invalid sequences (overlong, surrogate, truncated, past U+10FFFF) at
        // offsets around the SIMD validator's block sizes, in a string and past it.
        let pieces: [&[u8]; 9] = [
            b"\xc3\xa9",
            b"\xe2\x82\xac",
            b"\xf0\x9f\x98\x80",
            b"\xff",
            b"\xc0\xaf",
            b"\xed\xa0\x80",
            b"\xe2\x82",
            b"\xf4\x90\x80\x80",
            b"\x80",
        ];
        for piece in pieces {
            for pad in [0, 1, 15, 16, 31, 32, 63, 64, 65, 200] {
                let mut body = b"{\"a\": \"".to_vec();
                body.extend(std::iter::repeat_n(b'x', pad));
                body.extend_from_slice(piece);
                body.extend_from_slice(b"\"}");
                let utf8 = std::str::from_utf8(&body).is_ok();
                assert_eq!(parse(&body).is_some(), utf8, "{body:?}");
                if utf8 {
                    agrees(&body);
                }
            }
        }
    }

    #[test]
    fn special_bytes_are_found_where_a_byte_by_byte_search_finds_them() {
        let naive = |bytes: &[u8]| {
            bytes
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        };
        // Every byte value at every place of strings around the word size, after plain ASCII,
        // non-ASCII or other special bytes.
        for len in 0..20usize {
            for fill in [b'a', 0xc3, b' ', 0x7f, 0x21, 0x5d, 0x1f, b'"'] {
                for at in 0..len {
                    for b in 0..=255u8 {
                        let mut bytes = vec![fill; len];
                        bytes[at] = b;
                        assert_eq!(special_byte(&bytes), naive(&bytes), "{bytes:?}");
                    }
                }
            }
        }
    }

    /// A small deterministic generator of JSON documents (and of mutations of them, most of
    /// which are not JSON): whatever either parser makes of them, they agree; and what they
    /// read is written back by `json_writer` as `serde_json` writes it.
    #[test]
    fn the_fast_path_reads_as_serde_json_does() {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        const ATOMS: &[&str] = &[
            "0",
            "7",
            "-1",
            "-0",
            "1.25",
            "3e2",
            "1E-2",
            "18446744073709551615",
            "99999999999999999999",
            "true",
            "false",
            "null",
            "\"\"",
            "\"plain\"",
            "\"tab\\there\"",
            "\"\\u0041\\u00e9\"",
            "\"\\ud83d\\ude00\"",
            "\"żółw\"",
        ];
        fn build(next: &mut dyn FnMut(u64) -> u64, depth: u32, out: &mut String) {
            match if depth > 3 { 0 } else { next(4) } {
                0 | 1 => out.push_str(ATOMS[next(ATOMS.len() as u64) as usize]),
                2 => {
                    out.push('[');
                    for i in 0..next(4) {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        build(next, depth + 1, out);
                    }
                    out.push(']');
                }
                _ => {
                    out.push('{');
                    for i in 0..next(4) {
                        if i > 0 {
                            out.push(',');
                        }
                        out.push_str(&format!("\"k{}\": ", next(3)));
                        build(next, depth + 1, out);
                    }
                    out.push('}');
                }
            }
        }
        let mut previous = Value::Null;
        for _ in 0..3000 {
            let mut doc = String::new();
            build(&mut next, 0, &mut doc);
            agrees(doc.as_bytes());
            // Read like itself (all of it shared), like the document before, and changed
            // like itself, the reading with a known value agrees too.
            let like = from_slice(doc.as_bytes()).unwrap_or(Value::Null);
            agrees_like(doc.as_bytes(), &like);
            agrees_like(doc.as_bytes(), &previous);
            // Written compactly, the document holds its maps' texts as written.
            if let Ok(mut compact) = serde_json::to_vec(&like) {
                agrees_like(&compact, &like);
                agrees_like(&compact, &previous);
                if !compact.is_empty() {
                    let at = next(compact.len() as u64) as usize;
                    compact[at] = b"{}[],:\"1 "[next(9) as usize];
                    agrees_like(&compact, &like);
                }
            }
            let mut bytes = doc.into_bytes();
            if !bytes.is_empty() {
                let at = next(bytes.len() as u64) as usize;
                const NOISE: &[u8] = b"{}[],:\"\\-.0e \x01\xff";
                bytes[at] = NOISE[next(NOISE.len() as u64) as usize];
                agrees(&bytes);
                agrees_like(&bytes, &like);
                bytes.truncate(at);
                agrees(&bytes);
                agrees_like(&bytes, &like);
            }
            previous = like;
        }
    }
}
