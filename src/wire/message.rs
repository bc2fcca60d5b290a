//! The messages carried inside laminar packets (docs/protocol.md).
//! Every message starts with its type byte; the protocol version is
//! checked once, by the handshake.

use glam::Vec3;

use super::cursor::{DecodeError, Reader, Writer};
use super::quantize::{
    read_rotation, read_vec3, write_rotation, write_vec3, Precision, QuantizeError,
};
use super::varint::{read_bounded, read_u64, write_u64};
use crate::core::pose::{Pose, Sample, SampleFlags};

/// Smallest encoded entity update: id, flags, position and rotation at
/// their shortest. Used to bound allocations from a claimed count.
const MIN_UPDATE_BYTES: usize = 1 + 1 + 1 + 1 + 3 + 1;

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

/// Message type bytes.
mod kind {
    pub const WELCOME: u8 = 1;
    pub const SNAPSHOT: u8 = 2;
    pub const PING: u8 = 3;
    pub const PONG: u8 = 4;
    pub const ENTITY_REMOVED: u8 = 5;
    pub const OWNED_STATE: u8 = 6;
    pub const KEEP_ALIVE: u8 = 7;
    pub const REGISTER: u8 = 8;
    pub const CLAIM: u8 = 9;
    pub const AT_REST: u8 = 10;
    pub const RIGHT_CHANGED: u8 = 11;
    pub const CLAIM_REFUSED: u8 = 12;
}

/// Entity kinds on the wire (send rights).
pub mod entity_kind {
    pub const CONTROLLED: u8 = 0;
    pub const NEUTRAL: u8 = 1;
    pub const SERVER_OWNED: u8 = 2;
}

/// Why an entity left a client's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RemovalReason {
    /// Its owner unregistered it.
    Unregistered = 0,
    /// Its owner disconnected or timed out.
    OwnerLeft = 1,
    /// It left this client's interest.
    OutOfInterest = 2,
}

impl RemovalReason {
    fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            0 => RemovalReason::Unregistered,
            1 => RemovalReason::OwnerLeft,
            2 => RemovalReason::OutOfInterest,
            _ => return None,
        })
    }
}

/// Every message of protocol version 1.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// Relay -> client after admission: who you are, the relay's clock
    /// (S5: the shared clock starts here) and the wire precision.
    Welcome {
        client_id: u32,
        server_time: f64,
        send_rate: u16,
        precision: Precision,
    },
    /// Relay -> client: states at one server time (one frame may span
    /// several packets with the same time).
    Snapshot {
        server_time: f64,
        updates: Vec<EntityUpdate>,
    },
    /// Client -> relay: clock probe.
    Ping { sequence: u32, client_time: f64 },
    /// Relay -> client: the probe answered with the relay's clock.
    Pong {
        sequence: u32,
        client_time: f64,
        server_time: f64,
    },
    /// Relay -> client: an entity is gone.
    EntityRemoved { entity: u64, reason: RemovalReason },
    /// Client -> relay: states of entities it owns, stamped with its
    /// estimate of the server clock.
    OwnedState {
        server_time: f64,
        updates: Vec<EntityUpdate>,
    },
    /// Either way, reliable: keeps laminar's acks flowing (acks ride only
    /// on reliable packets).
    KeepAlive,
    /// Client -> relay, reliable: this client is ready with an entity of
    /// `kind` (`entity_kind::*`).
    Register { entity: u64, kind: u8 },
    /// Client -> relay, reliable: `mine` (controlled by the sender) hit the
    /// neutral object `other`.
    Claim { mine: u64, other: u64 },
    /// Client -> relay, reliable: a neutral object the sender holds is at rest.
    AtRest { entity: u64 },
    /// Relay -> every client, reliable ordered: `entity` is now held by
    /// `holder` (0: nobody) under `epoch`.
    RightChanged {
        entity: u64,
        holder: u32,
        epoch: u32,
    },
    /// Relay -> claimant, reliable: its claim on `entity` was refused.
    ClaimRefused { entity: u64, reason: u8 },
}

impl Message {
    /// Appends the encoding to `w`.
    pub fn encode(&self, w: &mut Writer, p: &Precision) -> Result<(), QuantizeError> {
        match self {
            Message::Welcome {
                client_id,
                server_time,
                send_rate,
                precision,
            } => {
                w.u8(kind::WELCOME);
                w.u32(*client_id);
                w.f64(*server_time);
                w.u16(*send_rate);
                w.u32(precision.position.to_bits());
                w.u32(precision.velocity.to_bits());
                w.u32(precision.angular_velocity.to_bits());
                w.u8(precision.rotation_bits);
            }
            Message::Snapshot {
                server_time,
                updates,
            }
            | Message::OwnedState {
                server_time,
                updates,
            } => {
                w.u8(if matches!(self, Message::Snapshot { .. }) {
                    kind::SNAPSHOT
                } else {
                    kind::OWNED_STATE
                });
                w.f64(*server_time);
                write_u64(w, updates.len() as u64);
                for u in updates {
                    u.encode(w, p)?;
                }
            }
            Message::Ping {
                sequence,
                client_time,
            } => {
                w.u8(kind::PING);
                w.u32(*sequence);
                w.f64(*client_time);
            }
            Message::Pong {
                sequence,
                client_time,
                server_time,
            } => {
                w.u8(kind::PONG);
                w.u32(*sequence);
                w.f64(*client_time);
                w.f64(*server_time);
            }
            Message::EntityRemoved { entity, reason } => {
                w.u8(kind::ENTITY_REMOVED);
                write_u64(w, *entity);
                w.u8(*reason as u8);
            }
            Message::KeepAlive => w.u8(kind::KEEP_ALIVE),
            Message::Register { entity, kind: k } => {
                w.u8(kind::REGISTER);
                write_u64(w, *entity);
                w.u8(*k);
            }
            Message::Claim { mine, other } => {
                w.u8(kind::CLAIM);
                write_u64(w, *mine);
                write_u64(w, *other);
            }
            Message::AtRest { entity } => {
                w.u8(kind::AT_REST);
                write_u64(w, *entity);
            }
            Message::RightChanged {
                entity,
                holder,
                epoch,
            } => {
                w.u8(kind::RIGHT_CHANGED);
                write_u64(w, *entity);
                write_u64(w, *holder as u64);
                write_u64(w, *epoch as u64);
            }
            Message::ClaimRefused { entity, reason } => {
                w.u8(kind::CLAIM_REFUSED);
                write_u64(w, *entity);
                w.u8(*reason);
            }
        }
        Ok(())
    }

    /// The encoding as a new buffer. Only updates can fail to encode (a
    /// value out of the wire's range); control messages never do.
    pub fn to_bytes(&self, p: &Precision) -> Result<Vec<u8>, QuantizeError> {
        let mut w = Writer::new();
        self.encode(&mut w, p)?;
        Ok(w.bytes)
    }

    /// Decodes exactly one message from `bytes`.
    pub fn decode(bytes: &[u8], p: &Precision) -> Result<Message, DecodeError> {
        let mut r = Reader::new(bytes);
        let message = match r.u8("message type")? {
            kind::WELCOME => {
                let client_id = r.u32("client id")?;
                let server_time = r.f64("server time")?;
                let send_rate = r.u16("send rate")?;
                let precision = Precision {
                    position: f32::from_bits(r.u32("position precision")?),
                    velocity: f32::from_bits(r.u32("velocity precision")?),
                    angular_velocity: f32::from_bits(r.u32("angular precision")?),
                    rotation_bits: r.u8("rotation bits")?,
                };
                precision.validate().map_err(|_| DecodeError::Invalid {
                    field: "precision",
                    reason: "out of range",
                })?;
                Message::Welcome {
                    client_id,
                    server_time,
                    send_rate,
                    precision,
                }
            }
            k @ (kind::SNAPSHOT | kind::OWNED_STATE) => {
                let server_time = r.f64("server time")?;
                let max = (r.remaining() / MIN_UPDATE_BYTES) as u64;
                let count = read_bounded(&mut r, "update count", max)? as usize;
                let mut updates = Vec::with_capacity(count);
                for _ in 0..count {
                    updates.push(EntityUpdate::decode(&mut r, p)?);
                }
                if k == kind::SNAPSHOT {
                    Message::Snapshot {
                        server_time,
                        updates,
                    }
                } else {
                    Message::OwnedState {
                        server_time,
                        updates,
                    }
                }
            }
            kind::PING => Message::Ping {
                sequence: r.u32("sequence")?,
                client_time: r.f64("client time")?,
            },
            kind::PONG => Message::Pong {
                sequence: r.u32("sequence")?,
                client_time: r.f64("client time")?,
                server_time: r.f64("server time")?,
            },
            kind::ENTITY_REMOVED => Message::EntityRemoved {
                entity: read_u64(&mut r, "entity")?,
                reason: RemovalReason::from_u8(r.u8("reason")?).ok_or(DecodeError::Invalid {
                    field: "reason",
                    reason: "unknown removal reason",
                })?,
            },
            kind::KEEP_ALIVE => Message::KeepAlive,
            kind::REGISTER => {
                let entity = read_u64(&mut r, "entity")?;
                let k = r.u8("entity kind")?;
                if k > entity_kind::SERVER_OWNED {
                    return Err(DecodeError::Invalid {
                        field: "entity kind",
                        reason: "unknown kind",
                    });
                }
                Message::Register { entity, kind: k }
            }
            kind::CLAIM => Message::Claim {
                mine: read_u64(&mut r, "mine")?,
                other: read_u64(&mut r, "other")?,
            },
            kind::AT_REST => Message::AtRest {
                entity: read_u64(&mut r, "entity")?,
            },
            kind::RIGHT_CHANGED => Message::RightChanged {
                entity: read_u64(&mut r, "entity")?,
                holder: read_bounded(&mut r, "holder", u32::MAX as u64)? as u32,
                epoch: read_bounded(&mut r, "epoch", u32::MAX as u64)? as u32,
            },
            kind::CLAIM_REFUSED => Message::ClaimRefused {
                entity: read_u64(&mut r, "entity")?,
                reason: r.u8("reason")?,
            },
            _ => {
                return Err(DecodeError::Invalid {
                    field: "message type",
                    reason: "unknown message type",
                })
            }
        };
        r.finish()?;
        Ok(message)
    }
}

/// Bytes of a Snapshot or OwnedState message before its updates: type,
/// time and a count of up to three varint bytes.
pub const UPDATES_HEADER: usize = 1 + 8 + 3;

/// Packs already-encoded entity updates into Snapshot or OwnedState
/// messages of at most `mtu` bytes each, without encoding anything twice.
#[derive(Debug)]
pub struct UpdatePacker {
    kind: u8,
    time: f64,
    mtu: usize,
    body: Vec<u8>,
    count: usize,
    out: Vec<Vec<u8>>,
}

impl UpdatePacker {
    /// Relay -> client snapshots stamped `time`.
    pub fn snapshot(time: f64, mtu: usize) -> Self {
        Self::new(kind::SNAPSHOT, time, mtu)
    }

    /// Client -> relay owned state stamped `time`.
    pub fn owned_state(time: f64, mtu: usize) -> Self {
        Self::new(kind::OWNED_STATE, time, mtu)
    }

    fn new(kind: u8, time: f64, mtu: usize) -> Self {
        UpdatePacker {
            kind,
            time,
            mtu,
            body: Vec::new(),
            count: 0,
            out: Vec::new(),
        }
    }

    /// Adds one encoded update, starting a new message when it would not fit.
    pub fn push(&mut self, encoded: &[u8]) {
        if self.count > 0 && UPDATES_HEADER + self.body.len() + encoded.len() > self.mtu {
            self.flush();
        }
        self.body.extend_from_slice(encoded);
        self.count += 1;
    }

    fn flush(&mut self) {
        if self.count == 0 {
            return;
        }
        let mut w = Writer::with(Vec::with_capacity(UPDATES_HEADER + self.body.len()));
        w.u8(self.kind);
        w.f64(self.time);
        write_u64(&mut w, self.count as u64);
        w.bytes(&self.body);
        self.out.push(w.bytes);
        self.body.clear();
        self.count = 0;
    }

    /// The messages, in order.
    pub fn finish(mut self) -> Vec<Vec<u8>> {
        self.flush();
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    fn update(entity: u64, moving: bool) -> EntityUpdate {
        EntityUpdate {
            entity,
            pose: Pose::new(
                Vec3::new(12.345, 0.5, -7.25),
                Quat::from_rotation_y(0.7).normalize(),
            ),
            velocity: moving.then_some(Vec3::new(2.0, 0.0, -1.5)),
            angular_velocity: moving.then_some(Vec3::new(0.0, 1.25, 0.0)),
            teleport: entity % 7 == 0,
            age: if moving { 0.0123 } else { 0.0 },
            sequence: entity as u8,
            epoch: 3,
        }
    }

    #[test]
    fn every_message_round_trips() {
        let p = Precision::default();
        let messages = vec![
            Message::Welcome {
                client_id: 7,
                server_time: 1234.5,
                send_rate: 30,
                precision: p,
            },
            Message::Snapshot {
                server_time: 99.25,
                updates: (0..20).map(|i| update(i * 1000, i % 2 == 0)).collect(),
            },
            Message::OwnedState {
                server_time: 3.5,
                updates: vec![update(5, true)],
            },
            Message::Ping {
                sequence: 9,
                client_time: 1.5,
            },
            Message::Pong {
                sequence: 9,
                client_time: 1.5,
                server_time: 100.0,
            },
            Message::EntityRemoved {
                entity: 42,
                reason: RemovalReason::OwnerLeft,
            },
            Message::KeepAlive,
            Message::Register {
                entity: 9,
                kind: entity_kind::NEUTRAL,
            },
            Message::Claim { mine: 1, other: 2 },
            Message::AtRest { entity: 3 },
            Message::RightChanged {
                entity: 4,
                holder: 7,
                epoch: 300,
            },
            Message::ClaimRefused {
                entity: 5,
                reason: 2,
            },
        ];
        for m in messages {
            let mut w = Writer::new();
            m.encode(&mut w, &p).unwrap();
            let back = Message::decode(&w.bytes, &p).unwrap();
            match (&m, &back) {
                (Message::Snapshot { updates: a, .. }, Message::Snapshot { updates: b, .. }) => {
                    for (x, y) in a.iter().zip(b) {
                        assert_eq!(x.entity, y.entity);
                        assert!(x.pose.position.distance(y.pose.position) < 0.001);
                        assert_eq!(x.velocity.is_some(), y.velocity.is_some());
                        assert_eq!(x.teleport, y.teleport);
                        assert!((x.age - y.age).abs() < 1e-4);
                        assert_eq!(x.sequence, y.sequence);
                        assert_eq!(x.epoch, y.epoch);
                    }
                }
                (Message::OwnedState { .. }, Message::OwnedState { .. }) => {}
                _ => assert_eq!(m, back),
            }
        }
    }

    #[test]
    fn packer_splits_within_the_mtu_and_decodes() {
        let p = Precision::default();
        let mut packer = UpdatePacker::owned_state(5.0, 120);
        for i in 0..20 {
            let mut w = Writer::new();
            update(i, true).encode(&mut w, &p).unwrap();
            packer.push(&w.bytes);
        }
        let messages = packer.finish();
        assert!(messages.len() > 1);
        let mut seen = 0;
        for m in &messages {
            assert!(m.len() <= 120, "{}", m.len());
            let Message::OwnedState {
                updates,
                server_time,
            } = Message::decode(m, &p).unwrap()
            else {
                panic!()
            };
            assert_eq!(server_time, 5.0);
            seen += updates.len();
        }
        assert_eq!(seen, 20);
    }

    #[test]
    fn update_sizes_moving_and_at_rest() {
        let p = Precision::default();
        let mut w = Writer::new();
        update(1, false).encode(&mut w, &p).unwrap();
        let at_rest = w.len();
        let mut w = Writer::new();
        update(1, true).encode(&mut w, &p).unwrap();
        let moving = w.len();
        // id 1 + flags 1 + sequence 1 + epoch 1 + position 3x(2..3) +
        // rotation 4 (+ age 2 when moving).
        assert!(at_rest <= 16, "{at_rest}");
        assert!(moving <= 30, "{moving}");
    }

    #[test]
    fn hostile_input_is_refused_without_panic_or_big_allocation() {
        let p = Precision::default();
        // A snapshot claiming 2^60 updates in 12 bytes.
        let mut w = Writer::new();
        w.u8(2);
        w.f64(1.0);
        write_u64(&mut w, 1 << 60);
        assert!(Message::decode(&w.bytes, &p).is_err());
        // Trailing bytes.
        let mut w = Writer::new();
        Message::Ping {
            sequence: 1,
            client_time: 0.0,
        }
        .encode(&mut w, &p)
        .unwrap();
        w.u8(0);
        assert_eq!(
            Message::decode(&w.bytes, &p),
            Err(DecodeError::TrailingBytes { count: 1 })
        );
        let mut rng = fastrand::Rng::with_seed(11);
        for _ in 0..50_000 {
            let len = rng.usize(0..64);
            let mut bytes: Vec<u8> = (0..len).map(|_| rng.u8(..)).collect();
            if let Some(b) = bytes.first_mut() {
                *b = rng.u8(0..8);
            }
            let _ = Message::decode(&bytes, &p);
        }
    }
}
