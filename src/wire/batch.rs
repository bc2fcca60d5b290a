//! Several reliable messages in one laminar packet.
//!
//! laminar counts every reliable packet it has not seen acknowledged
//! against `max_packets_in_flight` and drops the connection past it. One
//! packet per message meant that a client joining a world of a few
//! thousand entities on a lossy link (hundreds of registrations up, as
//! many send-right announcements down) was dropped within a second
//! (`cargo bench --bench soak`). Messages queued for one peer in one step
//! now travel together, up to one laminar fragment per packet.
//!
//! Format: the `BATCH` type byte, then for each message its length as a
//! varint and its bytes. A message inside a batch is never a batch.

use super::cursor::{DecodeError, Reader, Writer};
use super::message::kind;
use super::varint::{len_u64, read_bounded, write_u64};

/// Packs `messages`, in order, into as few payloads of at most `limit`
/// bytes as it can. A message alone in its payload goes unwrapped; one
/// that does not fit `limit` by itself goes alone (the caller's size
/// check refuses it).
pub fn pack(messages: impl IntoIterator<Item = Vec<u8>>, limit: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut group: Vec<Vec<u8>> = Vec::new();
    let mut group_bytes = 1; // the type byte
    let flush = |group: &mut Vec<Vec<u8>>, out: &mut Vec<Vec<u8>>| match group.len() {
        0 => {}
        1 => out.push(group.pop().expect("one message")),
        _ => {
            let mut w = Writer::new();
            w.u8(kind::BATCH);
            for m in group.drain(..) {
                write_u64(&mut w, m.len() as u64);
                w.bytes(&m);
            }
            out.push(w.bytes);
        }
    };
    for m in messages {
        let cost = len_u64(m.len() as u64) + m.len();
        if group_bytes + cost > limit {
            flush(&mut group, &mut out);
            group_bytes = 1;
        }
        group_bytes += cost;
        group.push(m);
    }
    flush(&mut group, &mut out);
    out
}

/// The messages in a packet: the payload itself, or each message of a
/// batch. A malformed batch yields its error and ends.
pub fn split(payload: &[u8]) -> Split<'_> {
    if payload.first() == Some(&kind::BATCH) {
        Split::Batch(Reader::new(&payload[1..]))
    } else {
        Split::One(Some(payload))
    }
}

pub enum Split<'a> {
    One(Option<&'a [u8]>),
    Batch(Reader<'a>),
}

impl<'a> Iterator for Split<'a> {
    type Item = Result<&'a [u8], DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        let r = match self {
            Split::One(one) => return one.take().map(Ok),
            Split::Batch(r) => r,
        };
        if r.remaining() == 0 {
            return None;
        }
        let left = r.remaining() as u64;
        let part = read_bounded(r, "batched message length", left)
            .and_then(|len| r.take(len as usize, "batched message"))
            .and_then(|m| match m.first() {
                None => Err(DecodeError::Invalid {
                    field: "batched message",
                    reason: "empty",
                }),
                Some(&kind::BATCH) => Err(DecodeError::Invalid {
                    field: "batched message",
                    reason: "a batch inside a batch",
                }),
                Some(_) => Ok(m),
            });
        if part.is_err() {
            // Nothing after a bad length can be trusted.
            *self = Split::One(None);
        }
        Some(part)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_in_order_within_the_limit_and_splits_back() {
        let messages: Vec<Vec<u8>> = (0..100u8)
            .map(|i| vec![i % 40 + 1; 1 + i as usize])
            .collect();
        let packed = pack(messages.clone(), 1024);
        assert!(packed.len() > 1 && packed.len() < 10, "{}", packed.len());
        assert!(packed.iter().all(|p| p.len() <= 1024));
        let back: Vec<Vec<u8>> = packed
            .iter()
            .flat_map(|p| split(p).map(|m| m.unwrap().to_vec()))
            .collect();
        assert_eq!(back, messages);
    }

    #[test]
    fn a_single_message_goes_unwrapped_and_an_oversized_one_alone() {
        assert_eq!(pack(vec![vec![7, 1, 2]], 1024), vec![vec![7, 1, 2]]);
        let big = vec![9; 2000];
        let packed = pack(vec![vec![1], big.clone(), vec![2]], 1024);
        assert_eq!(packed, vec![vec![1], big, vec![2]]);
        assert_eq!(
            split(&[7, 1, 2]).collect::<Vec<_>>(),
            vec![Ok(&[7u8, 1, 2][..])]
        );
    }

    #[test]
    fn malformed_batches_end_with_an_error() {
        let b = kind::BATCH;
        for bad in [
            vec![b, 5, 1, 2], // length past the end
            vec![b, 0],       // empty message
            vec![b, 2, b, 1], // nested batch
            vec![
                b, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1,
            ],
        ] {
            let parts: Vec<_> = split(&bad).collect();
            assert_eq!(parts.len(), 1, "{bad:?}");
            assert!(parts[0].is_err(), "{bad:?}");
        }
        // Good parts before a bad one still come out.
        let input = [b, 1, 7, 3, 1];
        let parts: Vec<_> = split(&input).collect();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0], Ok(&[7u8][..]));
        assert!(parts[1].is_err());
        assert_eq!(split(&[b]).count(), 0);
    }
}
