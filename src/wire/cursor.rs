//! Bounded byte reader and writer. The reader returns an error instead of
//! panicking on short or malformed input.

use std::fmt;

/// Why a byte string did not decode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The input ended inside a field.
    Truncated { field: &'static str },
    /// A varint was longer than its type allows.
    VarintOverflow { field: &'static str },
    /// A value was outside its range.
    Invalid {
        field: &'static str,
        reason: &'static str,
    },
    /// Bytes were left after the message.
    TrailingBytes { count: usize },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated { field } => write!(f, "input ends inside `{field}`"),
            DecodeError::VarintOverflow { field } => write!(f, "varint `{field}` is too long"),
            DecodeError::Invalid { field, reason } => write!(f, "`{field}`: {reason}"),
            DecodeError::TrailingBytes { count } => write!(f, "{count} bytes after the message"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Reads fields from a byte slice, front to back.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, position: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.position
    }

    pub fn position(&self) -> usize {
        self.position
    }

    pub fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], DecodeError> {
        if self.remaining() < n {
            return Err(DecodeError::Truncated { field });
        }
        let out = &self.bytes[self.position..self.position + n];
        self.position += n;
        Ok(out)
    }

    pub fn u8(&mut self, field: &'static str) -> Result<u8, DecodeError> {
        Ok(self.take(1, field)?[0])
    }

    pub fn u16(&mut self, field: &'static str) -> Result<u16, DecodeError> {
        let b = self.take(2, field)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub fn u32(&mut self, field: &'static str) -> Result<u32, DecodeError> {
        let b = self.take(4, field)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn u64(&mut self, field: &'static str) -> Result<u64, DecodeError> {
        let b = self.take(8, field)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// A finite f64.
    pub fn f64(&mut self, field: &'static str) -> Result<f64, DecodeError> {
        let v = f64::from_bits(self.u64(field)?);
        if !v.is_finite() {
            return Err(DecodeError::Invalid {
                field,
                reason: "not a finite number",
            });
        }
        Ok(v)
    }

    /// Fails when bytes are left.
    pub fn finish(&self) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            count => Err(DecodeError::TrailingBytes { count }),
        }
    }
}

/// Appends fields to a byte vector.
#[derive(Debug, Default)]
pub struct Writer {
    pub bytes: Vec<u8>,
}

impl Writer {
    pub fn new() -> Self {
        Writer::default()
    }

    pub fn with(bytes: Vec<u8>) -> Self {
        Writer { bytes }
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }
    pub fn u16(&mut self, v: u16) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    pub fn bytes(&mut self, b: &[u8]) {
        self.bytes.extend_from_slice(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_was_written_and_refuses_short_input() {
        let mut w = Writer::new();
        w.u8(7);
        w.u16(0xBEEF);
        w.u32(0xDEADBEEF);
        w.f64(1.5);
        let mut r = Reader::new(&w.bytes);
        assert_eq!(r.u8("a"), Ok(7));
        assert_eq!(r.u16("b"), Ok(0xBEEF));
        assert_eq!(r.u32("c"), Ok(0xDEADBEEF));
        assert_eq!(r.f64("d"), Ok(1.5));
        assert!(r.finish().is_ok());
        assert_eq!(r.u8("e"), Err(DecodeError::Truncated { field: "e" }));
        let nan = f64::NAN.to_bits().to_le_bytes();
        assert!(Reader::new(&nan).f64("t").is_err());
    }
}
