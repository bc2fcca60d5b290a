//! One entity's transform on the wire, and the packer that fits encoded
//! updates into Snapshot and OwnedState messages within the MTU.

use glam::Vec3;

use super::cursor::{DecodeError, Reader, Writer};
use super::message::kind;
use super::quantize::{
    read_rotation, read_vec3, write_rotation, write_vec3, Precision, QuantizeError,
};
use super::varint::{len_u64, read_bounded, read_u64, write_u64};
use crate::core::pose::{Pose, Sample, SampleFlags};

/// Smallest encoded entity update: id, flags, position and rotation at
/// their shortest. Used to bound allocations from a claimed count.
pub(crate) const MIN_UPDATE_BYTES: usize = 1 + 1 + 1 + 1 + 3 + 1;

/// One entity's state on the wire.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EntityUpdate {
    pub entity: u64,
    pub pose: Pose,
    pub velocity: Option<Vec3>,
    pub angular_velocity: Option<Vec3>,
    pub teleport: bool,
    /// How long before the message's time this state was true (s, >= 0):
    /// the relay forwards each owner's own stamp this way.
    pub age: f64,
    /// The owner's send counter for this entity (wrapping): a receiver
    /// that sees it jump knows states were lost, not skipped.
    pub sequence: u8,
    /// The send-right epoch the sender holds the entity under (the relay
    /// drops state stamped with any other).
    pub epoch: u32,
}

/// Unit of `EntityUpdate::age` on the wire (100 microseconds).
const AGE_STEP: f64 = 1e-4;
/// Largest age the wire carries (about 100 s); older states say so.
const MAX_AGE_STEPS: u64 = 1_000_000;

impl EntityUpdate {
    /// The update carrying `sample`'s state.
    pub fn from_sample(entity: u64, sample: &Sample) -> Self {
        EntityUpdate {
            entity,
            pose: sample.pose,
            velocity: sample.flags.has_velocity().then_some(sample.velocity),
            angular_velocity: sample
                .flags
                .has_angular_velocity()
                .then_some(sample.angular_velocity),
            teleport: sample.flags.teleport(),
            age: 0.0,
            sequence: 0,
            epoch: 0,
        }
    }

    /// The sample this update describes, in a message stamped `message_time`.
    pub fn to_sample(&self, message_time: f64) -> Sample {
        let mut s = Sample::at(
            message_time - self.age,
            self.pose.position,
            self.pose.rotation,
        );
        if let Some(v) = self.velocity {
            s = s.with_velocity(v);
        }
        if let Some(w) = self.angular_velocity {
            s = s.with_angular_velocity(w);
        }
        if self.teleport {
            s.flags.0 |= SampleFlags::TELEPORT;
        }
        s
    }

    pub fn encode(&self, w: &mut Writer, p: &Precision) -> Result<(), QuantizeError> {
        write_u64(w, self.entity);
        let age_steps = if self.age.is_finite() && self.age > 0.0 {
            ((self.age / AGE_STEP).round() as u64).min(MAX_AGE_STEPS)
        } else {
            0
        };
        let flags = (self.velocity.is_some() as u8)
            | (self.angular_velocity.is_some() as u8) << 1
            | (self.teleport as u8) << 2
            | ((age_steps > 0) as u8) << 3;
        w.u8(flags);
        w.u8(self.sequence);
        write_u64(w, self.epoch as u64);
        if age_steps > 0 {
            write_u64(w, age_steps);
        }
        write_vec3(w, self.pose.position, p.position)?;
        write_rotation(w, self.pose.rotation, p.rotation_bits)?;
        if let Some(v) = self.velocity {
            write_vec3(w, v, p.velocity)?;
        }
        if let Some(v) = self.angular_velocity {
            write_vec3(w, v, p.angular_velocity)?;
        }
        Ok(())
    }

    pub fn decode(r: &mut Reader, p: &Precision) -> Result<Self, DecodeError> {
        let entity = read_u64(r, "entity")?;
        let flags = r.u8("update flags")?;
        if flags & !0b1111 != 0 {
            return Err(DecodeError::Invalid {
                field: "update flags",
                reason: "unknown bits",
            });
        }
        let sequence = r.u8("sequence")?;
        let epoch = read_bounded(r, "epoch", u32::MAX as u64)? as u32;
        let age = if flags & 8 != 0 {
            read_bounded(r, "age", MAX_AGE_STEPS)? as f64 * AGE_STEP
        } else {
            0.0
        };
        let position = read_vec3(r, p.position, "position")?;
        let rotation = read_rotation(r, p.rotation_bits, "rotation")?;
        let velocity = if flags & 1 != 0 {
            Some(read_vec3(r, p.velocity, "velocity")?)
        } else {
            None
        };
        let angular_velocity = if flags & 2 != 0 {
            Some(read_vec3(r, p.angular_velocity, "angular velocity")?)
        } else {
            None
        };
        Ok(EntityUpdate {
            entity,
            pose: Pose::new(position, rotation),
            velocity,
            angular_velocity,
            teleport: flags & 4 != 0,
            age,
            sequence,
            epoch,
        })
    }
}

/// Bytes of a Snapshot or OwnedState message before its updates: type,
/// time, a snapshot's sequence number and a count of up to three varint
/// bytes.
pub const UPDATES_HEADER: usize = 1 + 8 + 2 + 3;

/// One message the packer built: its bytes, and for snapshots its
/// sequence number and the tags (entity ids) of what it carries.
#[derive(Clone, Debug, PartialEq)]
pub struct Packed {
    pub bytes: Vec<u8>,
    pub seq: u16,
    pub tags: Vec<u64>,
}

/// Packs already-encoded entity updates into Snapshot or OwnedState
/// messages of at most `mtu` bytes each, without encoding anything twice.
#[derive(Debug)]
pub struct UpdatePacker {
    kind: u8,
    time: f64,
    mtu: usize,
    /// Snapshots: the next message's sequence number.
    seq: Option<u16>,
    body: Vec<u8>,
    tags: Vec<u64>,
    out: Vec<Packed>,
}

impl UpdatePacker {
    /// Relay -> client snapshots stamped `time`, numbered from `first_seq`.
    pub fn snapshot(time: f64, first_seq: u16, mtu: usize) -> Self {
        Self::new(kind::SNAPSHOT, time, Some(first_seq), mtu)
    }

    /// Client -> relay owned state stamped `time`.
    pub fn owned_state(time: f64, mtu: usize) -> Self {
        Self::new(kind::OWNED_STATE, time, None, mtu)
    }

    fn new(kind: u8, time: f64, seq: Option<u16>, mtu: usize) -> Self {
        UpdatePacker {
            kind,
            time,
            mtu,
            seq,
            // Sized up front (tags on the first push of each message): a
            // relay packs tens of thousands of these a second, and growing
            // them was most of its allocations.
            body: Vec::with_capacity(mtu),
            tags: Vec::new(),
            out: Vec::with_capacity(1),
        }
    }

    /// Adds one encoded update (of entity `tag`), starting a new message
    /// when it would not fit.
    pub fn push(&mut self, tag: u64, encoded: &[u8]) {
        if !self.tags.is_empty() && UPDATES_HEADER + self.body.len() + encoded.len() > self.mtu {
            self.flush();
        }
        self.body.extend_from_slice(encoded);
        if self.tags.capacity() == 0 {
            self.tags.reserve(16);
        }
        self.tags.push(tag);
    }

    /// The sequence number the next snapshot would get.
    pub fn next_seq(&self) -> u16 {
        self.seq.unwrap_or(0)
    }

    /// Closes the current message (an empty snapshot too: it vouches that
    /// nothing changed).
    fn close(&mut self) {
        // Exactly the message's size: laminar boxes it without a copy.
        let size = 1
            + 8
            + if self.seq.is_some() { 2 } else { 0 }
            + len_u64(self.tags.len() as u64)
            + self.body.len();
        let mut w = Writer::with(Vec::with_capacity(size));
        w.u8(self.kind);
        w.f64(self.time);
        let seq = self.seq.unwrap_or(0);
        if let Some(next) = self.seq.as_mut() {
            w.u16(*next);
            *next = next.wrapping_add(1);
        }
        write_u64(&mut w, self.tags.len() as u64);
        w.bytes(&self.body);
        self.out.push(Packed {
            bytes: w.bytes,
            seq,
            tags: std::mem::take(&mut self.tags),
        });
        self.body.clear();
    }

    fn flush(&mut self) {
        if !self.tags.is_empty() {
            self.close();
        }
    }

    /// The messages, in order; `empty_too` closes an empty message when
    /// nothing was pushed (a snapshot that says nothing changed).
    pub fn finish(mut self, empty_too: bool) -> Vec<Packed> {
        if self.out.is_empty() && self.tags.is_empty() && empty_too {
            self.close();
        } else {
            self.flush();
        }
        self.out
    }
}
