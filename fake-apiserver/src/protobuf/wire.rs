//! The protobuf wire format, read only: a cursor over a byte slice that yields `(field number,
//! value)` pairs, where a value is a varint, a fixed 32/64-bit word or a length-delimited slice.
//!
//! Every read is bounds-checked; a truncated or corrupt buffer becomes a [`WireError`], never a
//! panic. Groups (wire types 3 and 4, unused by Kubernetes) are rejected.

/// What is wrong with a buffer at the wire level.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The buffer ends inside a tag, a varint, a fixed word or a length-delimited value.
    #[error("unexpected end of data")]
    Truncated,
    /// A varint runs past ten bytes or past 64 bits.
    #[error("varint overflows 64 bits")]
    VarintOverflow,
    /// A tag names wire type 3, 4, 6 or 7 (groups or undefined).
    #[error("unsupported wire type {0}")]
    UnsupportedWireType(u8),
    /// A tag names field number 0 or one above the protobuf maximum.
    #[error("invalid field number {0}")]
    InvalidFieldNumber(u64),
}

/// One field value as it appears on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireValue<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1 (little endian).
    Fixed64(u64),
    /// Wire type 2: strings, bytes, embedded messages, packed repeated scalars.
    Len(&'a [u8]),
    /// Wire type 5 (little endian).
    Fixed32(u32),
}

impl WireValue<'_> {
    /// The wire type's name, for error messages.
    pub fn wire_name(&self) -> &'static str {
        match self {
            WireValue::Varint(_) => "varint",
            WireValue::Fixed64(_) => "fixed64",
            WireValue::Len(_) => "length-delimited",
            WireValue::Fixed32(_) => "fixed32",
        }
    }
}

/// The largest field number protobuf allows (2^29 - 1).
const MAX_FIELD_NUMBER: u64 = (1 << 29) - 1;

/// A cursor over the fields of one message.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader over `bytes`, which hold the fields of one message (no length prefix).
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { rest: bytes }
    }

    /// The next field, or `None` at the end of the message.
    pub fn next_field(&mut self) -> Result<Option<(u32, WireValue<'a>)>, WireError> {
        if self.rest.is_empty() {
            return Ok(None);
        }
        let tag = self.varint()?;
        let number = tag >> 3;
        if number == 0 || number > MAX_FIELD_NUMBER {
            return Err(WireError::InvalidFieldNumber(number));
        }
        // Bounded by MAX_FIELD_NUMBER above, so the conversion cannot fail.
        let number = u32::try_from(number).map_err(|_| WireError::InvalidFieldNumber(number))?;
        let value = match tag & 0x7 {
            0 => WireValue::Varint(self.varint()?),
            1 => WireValue::Fixed64(u64::from_le_bytes(self.array::<8>()?)),
            2 => {
                let len = self.varint()?;
                let len = usize::try_from(len).map_err(|_| WireError::Truncated)?;
                WireValue::Len(self.take(len)?)
            }
            5 => WireValue::Fixed32(u32::from_le_bytes(self.array::<4>()?)),
            other => return Err(WireError::UnsupportedWireType(other as u8)),
        };
        Ok(Some((number, value)))
    }

    /// Reads a base-128 varint.
    pub fn varint(&mut self) -> Result<u64, WireError> {
        let mut value: u64 = 0;
        for index in 0..10 {
            let (&byte, rest) = self.rest.split_first().ok_or(WireError::Truncated)?;
            self.rest = rest;
            let bits = u64::from(byte & 0x7f);
            // The tenth byte may only carry the 64th bit.
            if index == 9 && bits > 1 {
                return Err(WireError::VarintOverflow);
            }
            value |= bits << (7 * index);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(WireError::VarintOverflow)
    }

    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], WireError> {
        if len > self.rest.len() {
            return Err(WireError::Truncated);
        }
        let (head, rest) = self.rest.split_at(len);
        self.rest = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let bytes = self.take(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn fields(bytes: &[u8]) -> Result<Vec<(u32, WireValue<'_>)>, WireError> {
        let mut reader = Reader::new(bytes);
        let mut out = Vec::new();
        while let Some(field) = reader.next_field()? {
            out.push(field);
        }
        Ok(out)
    }

    #[rstest]
    #[case(&[0x00], 0)]
    #[case(&[0x01], 1)]
    #[case(&[0x96, 0x01], 150)]
    #[case(&[0xff, 0xff, 0xff, 0xff, 0x0f], u64::from(u32::MAX))]
    #[case(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], u64::MAX)]
    fn varints_decode(#[case] bytes: &[u8], #[case] expected: u64) {
        let mut reader = Reader::new(bytes);
        assert_eq!(reader.varint(), Ok(expected));
        assert!(reader.is_empty());
    }

    #[rstest]
    #[case(&[0x80], WireError::Truncated)]
    #[case(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02], WireError::VarintOverflow)]
    #[case(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81, 0x00], WireError::VarintOverflow)]
    fn bad_varints_fail(#[case] bytes: &[u8], #[case] expected: WireError) {
        assert_eq!(Reader::new(bytes).varint(), Err(expected));
    }

    #[test]
    fn reads_every_wire_type() {
        let bytes = [
            0x08, 0x96, 0x01, // 1: varint 150
            0x11, 1, 0, 0, 0, 0, 0, 0, 0x80, // 2: fixed64
            0x1a, 0x03, b'a', b'b', b'c', // 3: "abc"
            0x25, 0x78, 0x56, 0x34, 0x12, // 4: fixed32
        ];
        assert_eq!(
            fields(&bytes),
            Ok(vec![
                (1, WireValue::Varint(150)),
                (2, WireValue::Fixed64(0x8000_0000_0000_0001)),
                (3, WireValue::Len(b"abc")),
                (4, WireValue::Fixed32(0x1234_5678)),
            ])
        );
    }

    #[rstest]
    #[case::length_past_end(&[0x0a, 0x05, b'a'], WireError::Truncated)]
    #[case::huge_length(&[0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f], WireError::Truncated)]
    #[case::short_fixed64(&[0x09, 1, 2, 3], WireError::Truncated)]
    #[case::short_fixed32(&[0x0d, 1], WireError::Truncated)]
    #[case::group(&[0x0b], WireError::UnsupportedWireType(3))]
    #[case::wire_type_7(&[0x0f], WireError::UnsupportedWireType(7))]
    #[case::field_zero(&[0x00, 0x01], WireError::InvalidFieldNumber(0))]
    #[case::tag_cut(&[0x80], WireError::Truncated)]
    fn corrupt_buffers_fail(#[case] bytes: &[u8], #[case] expected: WireError) {
        assert_eq!(fields(bytes), Err(expected));
    }
}
