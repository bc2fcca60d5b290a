//! Lockstep on the wire: confirmed frames (every member's input for one
//! frame number) and how many of them fit one reliable message. A frame
//! larger than a message (many members with large inputs) is split into
//! parts; the part that ends a frame says so.

use super::cursor::{DecodeError, Reader, Writer};
use super::varint::{len_u64, read_bounded, read_u64, write_u64};

/// Largest input of one member for one frame (bytes).
pub const MAX_LOCKSTEP_INPUT: usize = 256;
/// Most members of one lockstep match.
pub const MAX_LOCKSTEP_MEMBERS: usize = 64;
/// Largest game snapshot a joiner can start from (bytes).
pub const MAX_LOCKSTEP_SNAPSHOT: usize = 64 << 10;
/// Most inputs (client) or confirmed frames (relay) repeated in one
/// unreliable message.
pub const MAX_REDUNDANT: usize = 16;
/// Bytes of snapshot in one message.
pub const SNAPSHOT_CHUNK: usize = 960;
/// A frames message is built within this many bytes (one laminar fragment
/// with room to spare: ordered delivery breaks across fragments).
pub const FRAMES_MESSAGE_LIMIT: usize = 1000;

/// `LockstepEntry::flags`: the relay filled this input because the member
/// sent none in time (it stalled); the input is empty.
pub const ENTRY_FILLED: u8 = 1;
/// `LockstepEntry::flags`: the member's first frame in the match.
pub const ENTRY_JOINED: u8 = 2;
const ENTRY_FLAGS: u8 = ENTRY_FILLED | ENTRY_JOINED;

/// One member's input in a confirmed frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockstepEntry {
    pub client: u32,
    pub flags: u8,
    pub data: Vec<u8>,
}

impl LockstepEntry {
    /// Encoded size.
    pub fn size(&self) -> usize {
        len_u64(self.client as u64) + 1 + len_u64(self.data.len() as u64) + self.data.len()
    }

    fn encode(&self, w: &mut Writer) {
        write_u64(w, self.client as u64);
        w.u8(self.flags);
        write_u64(w, self.data.len() as u64);
        w.bytes(&self.data);
    }

    fn decode(r: &mut Reader) -> Result<Self, DecodeError> {
        let client = read_bounded(r, "member", u32::MAX as u64)? as u32;
        let flags = r.u8("entry flags")?;
        if flags & !ENTRY_FLAGS != 0 {
            return Err(DecodeError::Invalid {
                field: "entry flags",
                reason: "unknown bits",
            });
        }
        let len = read_bounded(r, "input length", MAX_LOCKSTEP_INPUT as u64)? as usize;
        Ok(LockstepEntry {
            client,
            flags,
            data: r.take(len, "input")?.to_vec(),
        })
    }
}

/// A confirmed frame, or a leading part of one (`complete` false: more
/// entries of the same frame follow in the next part).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FramePart {
    pub complete: bool,
    pub entries: Vec<LockstepEntry>,
}

/// Smallest encoded entry and part (for bounding decoded counts).
const MIN_ENTRY: usize = 3;
const MIN_PART: usize = 2;

impl FramePart {
    fn size(&self) -> usize {
        1 + len_u64(self.entries.len() as u64)
            + self.entries.iter().map(|e| e.size()).sum::<usize>()
    }

    pub(crate) fn encode(&self, w: &mut Writer) {
        w.u8(self.complete as u8);
        write_u64(w, self.entries.len() as u64);
        for e in &self.entries {
            e.encode(w);
        }
    }

    pub(crate) fn decode(r: &mut Reader) -> Result<Self, DecodeError> {
        let complete = match r.u8("part complete")? {
            0 => false,
            1 => true,
            _ => {
                return Err(DecodeError::Invalid {
                    field: "part complete",
                    reason: "not 0 or 1",
                })
            }
        };
        let max = (r.remaining() / MIN_ENTRY).min(MAX_LOCKSTEP_MEMBERS) as u64;
        let count = read_bounded(r, "entry count", max)? as usize;
        let mut entries = Vec::with_capacity(count);
        for _ in 0..count {
            entries.push(LockstepEntry::decode(r)?);
        }
        Ok(FramePart { complete, entries })
    }
}

/// Reads the parts of a frames message (after its type byte and first frame).
pub(crate) fn decode_parts(r: &mut Reader) -> Result<Vec<FramePart>, DecodeError> {
    let max = (r.remaining() / MIN_PART) as u64;
    let count = read_bounded(r, "part count", max)? as usize;
    let mut parts = Vec::with_capacity(count);
    for _ in 0..count {
        parts.push(FramePart::decode(r)?);
    }
    Ok(parts)
}

pub(crate) fn read_frame(r: &mut Reader, field: &'static str) -> Result<u64, DecodeError> {
    read_u64(r, field)
}

/// Packs consecutive confirmed frames into as few frames messages as fit
/// [`FRAMES_MESSAGE_LIMIT`] bytes each: `(first frame, parts)` per message.
#[derive(Debug, Default)]
pub struct FramePacker {
    done: Vec<(u64, Vec<FramePart>)>,
    /// The message being filled: its first frame, parts and size.
    open: Option<(u64, Vec<FramePart>, usize)>,
}

impl FramePacker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Size of a message holding nothing yet, starting at `first`.
    fn empty_size(first: u64) -> usize {
        // Type byte, first frame, a part count of up to two bytes.
        1 + len_u64(first) + 2
    }

    fn close(&mut self) {
        if let Some((first, parts, _)) = self.open.take() {
            self.done.push((first, parts));
        }
    }

    /// Adds frame `frame` (the one after the previous frame pushed).
    pub fn push(&mut self, frame: u64, entries: &[LockstepEntry]) {
        let whole = FramePart {
            complete: true,
            entries: entries.to_vec(),
        };
        let size = whole.size();
        if let Some((_, parts, used)) = self.open.as_mut() {
            if *used + size <= FRAMES_MESSAGE_LIMIT {
                parts.push(whole);
                *used += size;
                return;
            }
        }
        self.close();
        if Self::empty_size(frame) + size <= FRAMES_MESSAGE_LIMIT {
            self.open = Some((frame, vec![whole], Self::empty_size(frame) + size));
            return;
        }
        // Too big for any one message: split it over several parts.
        let mut part = Vec::new();
        let mut used = Self::empty_size(frame) + 1 + 2;
        for e in entries {
            if used + e.size() > FRAMES_MESSAGE_LIMIT && !part.is_empty() {
                self.done.push((
                    frame,
                    vec![FramePart {
                        complete: false,
                        entries: std::mem::take(&mut part),
                    }],
                ));
                used = Self::empty_size(frame) + 1 + 2;
            }
            used += e.size();
            part.push(e.clone());
        }
        self.done.push((
            frame,
            vec![FramePart {
                complete: true,
                entries: part,
            }],
        ));
    }

    /// The messages, in order.
    pub fn finish(mut self) -> Vec<(u64, Vec<FramePart>)> {
        self.close();
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(client: u32, len: usize) -> LockstepEntry {
        LockstepEntry {
            client,
            flags: 0,
            data: vec![client as u8; len],
        }
    }

    #[test]
    fn small_frames_share_a_message_and_big_ones_split() {
        let mut p = FramePacker::new();
        for f in 0..50 {
            p.push(f, &[entry(1, 4), entry(2, 4)]);
        }
        let messages = p.finish();
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].1.len(), 50);
        let mut p = FramePacker::new();
        let big: Vec<LockstepEntry> = (1..=MAX_LOCKSTEP_MEMBERS as u32)
            .map(|c| entry(c, MAX_LOCKSTEP_INPUT))
            .collect();
        p.push(7, &[entry(1, 1)]);
        p.push(8, &big);
        p.push(9, &[entry(1, 1)]);
        let messages = p.finish();
        // Frame 7 alone, frame 8 over many parts, frame 9 after it.
        assert_eq!(messages[0].0, 7);
        let eights: Vec<_> = messages.iter().filter(|m| m.0 == 8).collect();
        assert!(eights.len() > 10);
        let total: usize = eights.iter().map(|m| m.1[0].entries.len()).sum();
        assert_eq!(total, MAX_LOCKSTEP_MEMBERS);
        assert!(eights[..eights.len() - 1].iter().all(|m| !m.1[0].complete));
        assert!(eights.last().unwrap().1[0].complete);
        assert_eq!(messages.last().unwrap().0, 9);
        for (first, parts) in &messages {
            let size =
                FramePacker::empty_size(*first) + parts.iter().map(|p| p.size()).sum::<usize>();
            assert!(size <= FRAMES_MESSAGE_LIMIT, "{size}");
        }
    }
}
