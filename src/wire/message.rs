//! The messages carried inside laminar packets (docs/protocol.md).
//! Every message starts with its type byte; the protocol version is
//! checked once, by the handshake.

use super::cursor::{DecodeError, Reader, Writer};
use super::quantize::{Precision, QuantizeError};
use super::update::MIN_UPDATE_BYTES;
pub use super::update::{EntityUpdate, UpdatePacker, UPDATES_HEADER};
use super::varint::{read_bounded, read_u64, write_u64};

/// Largest opaque payload of a command or component state (bytes). With
/// its header every such message stays within one laminar fragment, which
/// ordered delivery needs.
pub const MAX_PAYLOAD: usize = 960;
/// Most explicit region ids in one client's interest.
pub const MAX_REGIONS: usize = 192;
/// Largest view radius in grid cells.
pub const MAX_VIEW_RADIUS: u32 = 64;

/// Message type bytes.
pub(crate) mod kind {
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
    pub const SESSION: u8 = 13;
    pub const GLOBAL_COMMAND_UP: u8 = 14;
    pub const COMPONENT_COMMAND_UP: u8 = 15;
    pub const COMMAND_ACK: u8 = 16;
    pub const GLOBAL_COMMAND: u8 = 17;
    pub const COMPONENT_COMMAND: u8 = 18;
    pub const COMPONENT_STATE_UP: u8 = 19;
    pub const COMPONENT_STATE: u8 = 20;
    pub const INTEREST: u8 = 21;
    pub const ENTITY_INTEREST: u8 = 22;
    pub const UNREGISTER: u8 = 23;
    pub const ACK_REQUEST: u8 = 24;
    pub const GOODBYE: u8 = 25;
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

/// What a client wants to hear about (S2 filters). Entities on the grid
/// are matched by cell distance from the client's controlled entities,
/// entities with a region id by the subscribed regions; a global view
/// matches everything. Device class gates entities that ask for one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterestSpec {
    pub global_view: bool,
    pub device_class: u8,
    /// Cells around each controlled entity (0: its own cell only).
    pub radius: u32,
    pub regions: Vec<u32>,
}

impl Default for InterestSpec {
    /// Until a client says otherwise it sees everything.
    fn default() -> Self {
        InterestSpec {
            global_view: true,
            device_class: 0,
            radius: 1,
            regions: Vec::new(),
        }
    }
}

/// Every message of protocol version 2.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// Relay -> client after admission: who you are, the relay's clock
    /// (S5: the shared clock starts here), the wire precision, which relay
    /// process this is and the number of its next global command.
    Welcome {
        client_id: u32,
        server_time: f64,
        send_rate: u16,
        precision: Precision,
        instance: u64,
        next_global: u64,
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
    /// Either way, reliable and empty: asks the peer for a prompt reliable
    /// packet back (which carries laminar's acks). Sent in bursts that
    /// move laminar's sequence past a lost packet so it is resent at once
    /// (net::ack_pacer).
    AckRequest,
    /// Client -> relay, unreliable, sent a few times when the client
    /// closes: the relay drops it at once instead of after its idle
    /// timeout.
    Goodbye,
    /// Client -> relay, reliable: this client is ready with an entity of
    /// `kind` (`entity_kind::*`).
    Register { entity: u64, kind: u8 },
    /// Client -> relay, reliable and repeated unreliably: `mine`
    /// (controlled by the sender) hit the neutral object `other` while it
    /// was at send-right `epoch` (0: unknown). The relay grants it only if
    /// the object is still at that epoch, so a claim that arrives late
    /// cannot take the object from whoever got it since. `seq` numbers
    /// the sender's claims, so that the relay applies each once.
    Claim {
        mine: u64,
        other: u64,
        epoch: u32,
        seq: u32,
    },
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
    /// Client -> relay, first on the ordered stream after every admission:
    /// the client's session (the same across reconnects, so commands are
    /// applied once) and the last global command it has delivered.
    Session { session: u64, last_global: u64 },
    /// Client -> relay, reliable ordered: a global command, numbered by
    /// the client's session (1, 2, 3 ...).
    GlobalCommandUp { seq: u64, data: Vec<u8> },
    /// Client -> relay, reliable ordered: a command for a component of
    /// `entity`, for whoever holds it; numbered like global commands.
    ComponentCommandUp {
        seq: u64,
        entity: u64,
        component: u32,
        data: Vec<u8>,
    },
    /// Relay -> client: every command up to `seq` was applied.
    CommandAck { seq: u64 },
    /// Relay -> every client, reliable ordered: global command number
    /// `global_seq` (1, 2, 3 ... per relay) from client `sender` (0: the
    /// embedded server).
    GlobalCommand {
        global_seq: u64,
        sender: u32,
        server_time: f64,
        data: Vec<u8>,
    },
    /// Relay -> the entity's holder, reliable ordered.
    ComponentCommand {
        sender: u32,
        entity: u64,
        component: u32,
        server_time: f64,
        data: Vec<u8>,
    },
    /// Client -> relay, reliable ordered: the state of a synced component
    /// of an entity the sender holds (`seq` counts per session).
    ComponentStateUp {
        seq: u64,
        entity: u64,
        component: u32,
        data: Vec<u8>,
    },
    /// Relay -> interested clients, reliable ordered: a component's state,
    /// `version` rising with every change.
    ComponentState {
        entity: u64,
        component: u32,
        version: u64,
        data: Vec<u8>,
    },
    /// Client -> relay, reliable ordered: what this client wants to hear about.
    Interest(InterestSpec),
    /// Client -> relay, reliable ordered: where an entity the sender holds
    /// is matched (`region` 0: by grid cell) and the least device class
    /// that sees it.
    EntityInterest {
        entity: u64,
        region: u32,
        min_class: u8,
    },
    /// Client -> relay, reliable: the sender no longer sends `entity`.
    Unregister { entity: u64 },
}

fn write_payload(w: &mut Writer, data: &[u8]) -> Result<(), QuantizeError> {
    if data.len() > MAX_PAYLOAD {
        return Err(QuantizeError::PayloadTooLarge);
    }
    write_u64(w, data.len() as u64);
    w.bytes(data);
    Ok(())
}

fn read_payload(r: &mut Reader) -> Result<Vec<u8>, DecodeError> {
    let len = read_bounded(r, "payload length", MAX_PAYLOAD as u64)? as usize;
    Ok(r.take(len, "payload")?.to_vec())
}

fn read_u32(r: &mut Reader, field: &'static str) -> Result<u32, DecodeError> {
    Ok(read_bounded(r, field, u32::MAX as u64)? as u32)
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
                instance,
                next_global,
            } => {
                w.u8(kind::WELCOME);
                w.u32(*client_id);
                w.f64(*server_time);
                w.u16(*send_rate);
                w.u32(precision.position.to_bits());
                w.u32(precision.velocity.to_bits());
                w.u32(precision.angular_velocity.to_bits());
                w.u8(precision.rotation_bits);
                w.u64(*instance);
                write_u64(w, *next_global);
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
            Message::AckRequest => w.u8(kind::ACK_REQUEST),
            Message::Goodbye => w.u8(kind::GOODBYE),
            Message::Register { entity, kind: k } => {
                w.u8(kind::REGISTER);
                write_u64(w, *entity);
                w.u8(*k);
            }
            Message::Claim {
                mine,
                other,
                epoch,
                seq,
            } => {
                w.u8(kind::CLAIM);
                write_u64(w, *mine);
                write_u64(w, *other);
                write_u64(w, *epoch as u64);
                write_u64(w, *seq as u64);
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
            Message::Session {
                session,
                last_global,
            } => {
                w.u8(kind::SESSION);
                w.u64(*session);
                write_u64(w, *last_global);
            }
            Message::GlobalCommandUp { seq, data } => {
                w.u8(kind::GLOBAL_COMMAND_UP);
                write_u64(w, *seq);
                write_payload(w, data)?;
            }
            Message::ComponentCommandUp {
                seq,
                entity,
                component,
                data,
            } => {
                w.u8(kind::COMPONENT_COMMAND_UP);
                write_u64(w, *seq);
                write_u64(w, *entity);
                write_u64(w, *component as u64);
                write_payload(w, data)?;
            }
            Message::CommandAck { seq } => {
                w.u8(kind::COMMAND_ACK);
                write_u64(w, *seq);
            }
            Message::GlobalCommand {
                global_seq,
                sender,
                server_time,
                data,
            } => {
                w.u8(kind::GLOBAL_COMMAND);
                write_u64(w, *global_seq);
                write_u64(w, *sender as u64);
                w.f64(*server_time);
                write_payload(w, data)?;
            }
            Message::ComponentCommand {
                sender,
                entity,
                component,
                server_time,
                data,
            } => {
                w.u8(kind::COMPONENT_COMMAND);
                write_u64(w, *sender as u64);
                write_u64(w, *entity);
                write_u64(w, *component as u64);
                w.f64(*server_time);
                write_payload(w, data)?;
            }
            Message::ComponentStateUp {
                seq,
                entity,
                component,
                data,
            } => {
                w.u8(kind::COMPONENT_STATE_UP);
                write_u64(w, *seq);
                write_u64(w, *entity);
                write_u64(w, *component as u64);
                write_payload(w, data)?;
            }
            Message::ComponentState {
                entity,
                component,
                version,
                data,
            } => {
                w.u8(kind::COMPONENT_STATE);
                write_u64(w, *entity);
                write_u64(w, *component as u64);
                write_u64(w, *version);
                write_payload(w, data)?;
            }
            Message::Interest(spec) => {
                if spec.regions.len() > MAX_REGIONS {
                    return Err(QuantizeError::TooManyRegions);
                }
                if spec.radius > MAX_VIEW_RADIUS {
                    return Err(QuantizeError::OutOfRange);
                }
                w.u8(kind::INTEREST);
                w.u8(spec.global_view as u8);
                w.u8(spec.device_class);
                write_u64(w, spec.radius as u64);
                write_u64(w, spec.regions.len() as u64);
                for &r in &spec.regions {
                    write_u64(w, r as u64);
                }
            }
            Message::EntityInterest {
                entity,
                region,
                min_class,
            } => {
                w.u8(kind::ENTITY_INTEREST);
                write_u64(w, *entity);
                write_u64(w, *region as u64);
                w.u8(*min_class);
            }
            Message::Unregister { entity } => {
                w.u8(kind::UNREGISTER);
                write_u64(w, *entity);
            }
        }
        Ok(())
    }

    /// The encoding as a new buffer. Only updates and payloads can fail to
    /// encode (a value out of the wire's range); the other messages never do.
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
                    instance: r.u64("instance")?,
                    next_global: read_u64(&mut r, "next global")?,
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
            kind::ACK_REQUEST => Message::AckRequest,
            kind::GOODBYE => Message::Goodbye,
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
                epoch: read_bounded(&mut r, "epoch", u32::MAX as u64)? as u32,
                seq: read_bounded(&mut r, "claim seq", u32::MAX as u64)? as u32,
            },
            kind::AT_REST => Message::AtRest {
                entity: read_u64(&mut r, "entity")?,
            },
            kind::RIGHT_CHANGED => Message::RightChanged {
                entity: read_u64(&mut r, "entity")?,
                holder: read_u32(&mut r, "holder")?,
                epoch: read_u32(&mut r, "epoch")?,
            },
            kind::CLAIM_REFUSED => Message::ClaimRefused {
                entity: read_u64(&mut r, "entity")?,
                reason: r.u8("reason")?,
            },
            kind::SESSION => Message::Session {
                session: r.u64("session")?,
                last_global: read_u64(&mut r, "last global")?,
            },
            kind::GLOBAL_COMMAND_UP => Message::GlobalCommandUp {
                seq: read_u64(&mut r, "seq")?,
                data: read_payload(&mut r)?,
            },
            kind::COMPONENT_COMMAND_UP => Message::ComponentCommandUp {
                seq: read_u64(&mut r, "seq")?,
                entity: read_u64(&mut r, "entity")?,
                component: read_u32(&mut r, "component")?,
                data: read_payload(&mut r)?,
            },
            kind::COMMAND_ACK => Message::CommandAck {
                seq: read_u64(&mut r, "seq")?,
            },
            kind::GLOBAL_COMMAND => Message::GlobalCommand {
                global_seq: read_u64(&mut r, "global seq")?,
                sender: read_u32(&mut r, "sender")?,
                server_time: r.f64("server time")?,
                data: read_payload(&mut r)?,
            },
            kind::COMPONENT_COMMAND => Message::ComponentCommand {
                sender: read_u32(&mut r, "sender")?,
                entity: read_u64(&mut r, "entity")?,
                component: read_u32(&mut r, "component")?,
                server_time: r.f64("server time")?,
                data: read_payload(&mut r)?,
            },
            kind::COMPONENT_STATE_UP => Message::ComponentStateUp {
                seq: read_u64(&mut r, "seq")?,
                entity: read_u64(&mut r, "entity")?,
                component: read_u32(&mut r, "component")?,
                data: read_payload(&mut r)?,
            },
            kind::COMPONENT_STATE => Message::ComponentState {
                entity: read_u64(&mut r, "entity")?,
                component: read_u32(&mut r, "component")?,
                version: read_u64(&mut r, "version")?,
                data: read_payload(&mut r)?,
            },
            kind::INTEREST => {
                let flags = r.u8("interest flags")?;
                if flags & !1 != 0 {
                    return Err(DecodeError::Invalid {
                        field: "interest flags",
                        reason: "unknown bits",
                    });
                }
                let device_class = r.u8("device class")?;
                let radius = read_bounded(&mut r, "radius", MAX_VIEW_RADIUS as u64)? as u32;
                let count = read_bounded(&mut r, "region count", MAX_REGIONS as u64)? as usize;
                let mut regions = Vec::with_capacity(count.min(r.remaining()));
                for _ in 0..count {
                    regions.push(read_u32(&mut r, "region")?);
                }
                Message::Interest(InterestSpec {
                    global_view: flags & 1 != 0,
                    device_class,
                    radius,
                    regions,
                })
            }
            kind::ENTITY_INTEREST => Message::EntityInterest {
                entity: read_u64(&mut r, "entity")?,
                region: read_u32(&mut r, "region")?,
                min_class: r.u8("min class")?,
            },
            kind::UNREGISTER => Message::Unregister {
                entity: read_u64(&mut r, "entity")?,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::pose::Pose;
    use glam::{Quat, Vec3};

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
                instance: 0xDEAD_BEEF_0123_4567,
                next_global: 42,
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
            Message::AckRequest,
            Message::Goodbye,
            Message::Register {
                entity: 9,
                kind: entity_kind::NEUTRAL,
            },
            Message::Claim {
                mine: 1,
                other: 2,
                epoch: 7,
                seq: 300,
            },
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
            Message::Session {
                session: u64::MAX - 3,
                last_global: 17,
            },
            Message::GlobalCommandUp {
                seq: 1,
                data: b"fire".to_vec(),
            },
            Message::ComponentCommandUp {
                seq: 2,
                entity: 77,
                component: 3,
                data: vec![0; MAX_PAYLOAD],
            },
            Message::CommandAck { seq: 2 },
            Message::GlobalCommand {
                global_seq: 9,
                sender: 4,
                server_time: 12.5,
                data: vec![],
            },
            Message::ComponentCommand {
                sender: 4,
                entity: 77,
                component: 3,
                server_time: 12.5,
                data: b"open".to_vec(),
            },
            Message::ComponentStateUp {
                seq: 1,
                entity: 77,
                component: u32::MAX,
                data: b"hp=10".to_vec(),
            },
            Message::ComponentState {
                entity: 77,
                component: 3,
                version: 1 << 40,
                data: b"hp=10".to_vec(),
            },
            Message::Interest(InterestSpec {
                global_view: false,
                device_class: 2,
                radius: 3,
                regions: vec![1, 70_000],
            }),
            Message::Interest(InterestSpec::default()),
            Message::EntityInterest {
                entity: 8,
                region: 5,
                min_class: 1,
            },
            Message::Unregister { entity: 8 },
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
    fn oversized_payloads_and_interest_are_refused_both_ways() {
        let p = Precision::default();
        let big = Message::GlobalCommandUp {
            seq: 1,
            data: vec![0; MAX_PAYLOAD + 1],
        };
        assert_eq!(big.to_bytes(&p), Err(QuantizeError::PayloadTooLarge));
        let many = Message::Interest(InterestSpec {
            regions: vec![1; MAX_REGIONS + 1],
            ..Default::default()
        });
        assert_eq!(many.to_bytes(&p), Err(QuantizeError::TooManyRegions));
        // A payload length past the limit on the wire.
        let mut w = Writer::new();
        w.u8(kind::GLOBAL_COMMAND_UP);
        write_u64(&mut w, 1);
        write_u64(&mut w, MAX_PAYLOAD as u64 + 1);
        w.bytes(&vec![0; MAX_PAYLOAD + 1]);
        assert!(Message::decode(&w.bytes, &p).is_err());
        // A region count that the bytes cannot hold.
        let mut w = Writer::new();
        w.u8(kind::INTEREST);
        w.u8(0);
        w.u8(0);
        write_u64(&mut w, 1);
        write_u64(&mut w, 200);
        assert!(Message::decode(&w.bytes, &p).is_err());
        // Every message's encoding stays within one laminar fragment.
        let worst = Message::ComponentState {
            entity: u64::MAX,
            component: u32::MAX,
            version: u64::MAX,
            data: vec![0; MAX_PAYLOAD],
        };
        assert!(worst.to_bytes(&p).unwrap().len() <= 1024);
        let worst = Message::ComponentCommand {
            sender: u32::MAX,
            entity: u64::MAX,
            component: u32::MAX,
            server_time: 1.0,
            data: vec![0; MAX_PAYLOAD],
        };
        assert!(worst.to_bytes(&p).unwrap().len() <= 1024);
        for worst in [
            Message::Interest(InterestSpec {
                global_view: false,
                device_class: u8::MAX,
                radius: MAX_VIEW_RADIUS,
                regions: vec![u32::MAX; MAX_REGIONS],
            }),
            Message::GlobalCommandUp {
                seq: u64::MAX,
                data: vec![0; MAX_PAYLOAD],
            },
            Message::ComponentCommandUp {
                seq: u64::MAX,
                entity: u64::MAX,
                component: u32::MAX,
                data: vec![0; MAX_PAYLOAD],
            },
            Message::ComponentStateUp {
                seq: u64::MAX,
                entity: u64::MAX,
                component: u32::MAX,
                data: vec![0; MAX_PAYLOAD],
            },
            Message::GlobalCommand {
                global_seq: u64::MAX,
                sender: u32::MAX,
                server_time: 1.0,
                data: vec![0; MAX_PAYLOAD],
            },
        ] {
            let n = worst.to_bytes(&p).unwrap().len();
            assert!(n <= 1024, "{n} bytes: {worst:?}");
        }
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
                *b = rng.u8(0..25);
            }
            let _ = Message::decode(&bytes, &p);
        }
    }
}
