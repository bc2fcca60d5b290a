//! LEB128 varints and zigzag signed integers: small numbers in few bytes.

use super::cursor::{DecodeError, Reader, Writer};

/// Longest encoding of a u64.
pub const MAX_VARINT_LEN: usize = 10;

pub fn write_u64(w: &mut Writer, mut v: u64) {
    while v >= 0x80 {
        w.u8((v as u8) | 0x80);
        v >>= 7;
    }
    w.u8(v as u8);
}

pub fn read_u64(r: &mut Reader, field: &'static str) -> Result<u64, DecodeError> {
    let mut v: u64 = 0;
    for i in 0..MAX_VARINT_LEN {
        let byte = r.u8(field)?;
        let bits = (byte & 0x7F) as u64;
        if i == MAX_VARINT_LEN - 1 && bits > 1 {
            return Err(DecodeError::VarintOverflow { field });
        }
        v |= bits << (7 * i);
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(DecodeError::VarintOverflow { field })
}

/// A varint that must fit `max`.
pub fn read_bounded(r: &mut Reader, field: &'static str, max: u64) -> Result<u64, DecodeError> {
    let v = read_u64(r, field)?;
    if v > max {
        return Err(DecodeError::Invalid {
            field,
            reason: "value above its limit",
        });
    }
    Ok(v)
}

#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

pub fn write_i64(w: &mut Writer, v: i64) {
    write_u64(w, zigzag(v));
}

pub fn read_i64(r: &mut Reader, field: &'static str) -> Result<i64, DecodeError> {
    Ok(unzigzag(read_u64(r, field)?))
}

/// Bytes a u64 takes as a varint.
pub fn len_u64(v: u64) -> usize {
    (64 - (v | 1).leading_zeros()).div_ceil(7) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_sizes() {
        let mut rng = fastrand::Rng::with_seed(5);
        for _ in 0..10_000 {
            let v = rng.u64(..) >> rng.u32(0..64);
            let s = rng.i64(..) >> rng.u32(0..64);
            let mut w = Writer::new();
            write_u64(&mut w, v);
            assert_eq!(w.len(), len_u64(v));
            write_i64(&mut w, s);
            let mut r = Reader::new(&w.bytes);
            assert_eq!(read_u64(&mut r, "v"), Ok(v));
            assert_eq!(read_i64(&mut r, "s"), Ok(s));
        }
        assert_eq!(len_u64(0), 1);
        assert_eq!(len_u64(127), 1);
        assert_eq!(len_u64(128), 2);
        assert_eq!(len_u64(u64::MAX), 10);
    }

    #[test]
    fn overlong_and_truncated_varints_are_errors() {
        let overlong = [0xFFu8; 11];
        assert!(matches!(
            read_u64(&mut Reader::new(&overlong), "x"),
            Err(DecodeError::VarintOverflow { .. })
        ));
        let too_big = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02];
        assert!(read_u64(&mut Reader::new(&too_big), "x").is_err());
        assert!(matches!(
            read_u64(&mut Reader::new(&[0x80]), "x"),
            Err(DecodeError::Truncated { .. })
        ));
        assert!(read_bounded(&mut Reader::new(&[0x05]), "x", 4).is_err());
    }
}
