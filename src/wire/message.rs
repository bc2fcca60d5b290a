//! The messages carried inside laminar packets (docs/protocol.md).
//! Every message starts with its type byte; the protocol version is
//! checked once, by the handshake.

use super::cursor::{DecodeError, Reader, Writer};
use super::lockstep::{decode_parts, read_frame, FramePart, MAX_LOCKSTEP_MEMBERS};
pub use super::lockstep::{
    MAX_LOCKSTEP_INPUT, MAX_LOCKSTEP_SNAPSHOT, MAX_REDUNDANT, SNAPSHOT_CHUNK,
};
use super::quantize::{Precision, QuantizeError};
use super::update::MIN_UPDATE_BYTES;
pub use super::update::{EntityUpdate, UpdatePacker, UPDATES_HEADER};
use super::varint::{read_bounded, read_u64, write_u64};
use crate::core::scripted::Spawn;

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
    pub const SCRIPTED_SPAWNS: u8 = 26;
    pub const SCRIPTED_DESPAWN: u8 = 27;
    pub const LOCKSTEP_JOIN: u8 = 28;
    pub const LOCKSTEP_LEAVE: u8 = 29;
    pub const LOCKSTEP_START: u8 = 30;
    pub const LOCKSTEP_INPUT: u8 = 31;
    pub const LOCKSTEP_FRAMES: u8 = 32;
    pub const LOCKSTEP_HASH: u8 = 33;
    pub const LOCKSTEP_DESYNC: u8 = 34;
    pub const LOCKSTEP_SNAPSHOT_UP: u8 = 35;
    pub const LOCKSTEP_SNAPSHOT: u8 = 36;
    pub const LOCKSTEP_RESUME: u8 = 37;
    pub const LOCKSTEP_REFUSED: u8 = 38;
    pub const LOCKSTEP_SNAPSHOT_WANTED: u8 = 39;
    pub const LOCKSTEP_INPUTS: u8 = 40;
    pub const LOCKSTEP_RECENT: u8 = 41;
    pub const SNAPSHOT_NACK: u8 = 42;
    pub const SNAPSHOT_REPAIRED: u8 = 43;
    /// Several reliable messages in one packet (wire/batch.rs).
    pub const BATCH: u8 = 44;
    /// The highest type byte in use.
    #[cfg(test)]
    pub const LAST: u8 = 44;
}

/// Why the relay refused a lockstep join (`LockstepRefused`).
pub mod lockstep_refusal {
    /// The match has as many members as it may.
    pub const FULL: u8 = 1;
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

/// One chunk of a lockstep snapshot: the game state after `frame`,
/// `total` bytes long, of which this carries `data` from `offset` on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotChunk {
    pub frame: u64,
    pub total: u32,
    pub offset: u32,
    pub data: Vec<u8>,
}

/// Where a member stands when it joins a lockstep match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockstepStart {
    /// The first frame the member is part of.
    pub first_frame: u64,
    /// The first frame its input is taken for (`first_frame` + input delay;
    /// the frames before are filled with empty input).
    pub first_input: u64,
    /// Frames confirmed so far (the next frame to confirm).
    pub confirmed: u64,
    pub input_delay: u32,
    pub sync_interval: u32,
    /// The first frame of the history that follows (after the snapshot,
    /// when there is one).
    pub history_from: u64,
    /// A snapshot precedes the history.
    pub snapshot: bool,
}

/// Every message of protocol version 4.
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
    /// several packets with the same time). `seq` counts this client's
    /// snapshot packets (wrapping): a gap is a lost packet, which the
    /// client reports with a `SnapshotNack`. With no updates, it says
    /// nothing in view changed up to `server_time`.
    Snapshot {
        server_time: f64,
        seq: u16,
        updates: Vec<EntityUpdate>,
    },
    /// Client -> relay, unreliable: snapshot packets `first` .. `first +
    /// count` never arrived; the relay sends their entities' newest states
    /// again.
    SnapshotNack { first: u16, count: u8 },
    /// Relay -> client, unreliable: everything the packets of the
    /// `SnapshotNack` starting at `first` carried has gone again (or
    /// something newer has), in packets up to number `through`.
    SnapshotRepaired { first: u16, through: u16 },
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
    /// Client -> relay, reliable: a neutral object the sender holds under
    /// `epoch` is at rest. (Reliable packets can arrive late: the epoch
    /// keeps a report from an earlier holding from ending a later one.)
    AtRest { entity: u64, epoch: u32 },
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
    /// Relay -> client, reliable ordered: scripted elements to compute
    /// from the shared configuration and clock (S5).
    ScriptedSpawns(Vec<Spawn>),
    /// Relay -> client, reliable ordered: a scripted element ends early.
    ScriptedDespawn { element: u64 },
    /// Client -> relay, reliable ordered: join the lockstep match; `have`:
    /// the newest confirmed frame this client already has (a reconnect).
    LockstepJoin { have: Option<u64> },
    /// Client -> relay, reliable ordered: leave the lockstep match.
    LockstepLeave,
    /// Relay -> client, reliable ordered: the join was accepted.
    LockstepStart(LockstepStart),
    /// Client -> relay, reliable: this member's input for `frame`.
    LockstepInput { frame: u64, data: Vec<u8> },
    /// Relay -> member, reliable ordered: confirmed frames from `first` on.
    LockstepFrames { first: u64, parts: Vec<FramePart> },
    /// Client -> relay, reliable: the hash of this member's state after `frame`.
    LockstepHash { frame: u64, hash: u64 },
    /// Relay -> members, reliable ordered: the first frame whose hashes
    /// differ, and the members that differ from the majority (all of them
    /// when there is none).
    LockstepDesync { frame: u64, clients: Vec<u32> },
    /// Client -> relay, reliable ordered: a chunk of a snapshot for joiners.
    LockstepSnapshotUp(SnapshotChunk),
    /// Relay -> joiner, reliable ordered: a chunk of the snapshot to start from.
    LockstepSnapshot(SnapshotChunk),
    /// Relay -> member, reliable ordered: after a stall, its input is taken
    /// again from `frame` on (the frames before were filled).
    LockstepResume { frame: u64 },
    /// Relay -> client, reliable ordered: the join was refused
    /// (`lockstep_refusal::*`).
    LockstepRefused { reason: u8 },
    /// Relay -> members, reliable ordered: a joiner needs a snapshot (the
    /// history no longer reaches back to frame 0 or the last snapshot).
    LockstepSnapshotWanted,
    /// Client -> relay, unreliable, with every input and a few times a
    /// second: `need`, the first confirmed frame this member lacks while
    /// it has seen a later one (the relay repeats from there), and inputs
    /// not yet seen confirmed again, by frame (a lost packet costs nothing
    /// while the next one carries them; the reliable copies remain).
    LockstepInputs {
        need: Option<u64>,
        inputs: Vec<(u64, Vec<u8>)>,
    },
    /// Relay -> member, unreliable: the newest confirmed frames again,
    /// from `first` on, every part complete (a client takes them only
    /// where they continue what it has; the reliable copies remain).
    LockstepRecent { first: u64, parts: Vec<FramePart> },
}

fn write_chunk(w: &mut Writer, c: &SnapshotChunk) -> Result<(), QuantizeError> {
    let fits = c.data.len() <= SNAPSHOT_CHUNK
        && (c.total as usize) <= MAX_LOCKSTEP_SNAPSHOT
        && c.offset as usize + c.data.len() <= c.total as usize;
    if !fits {
        return Err(QuantizeError::PayloadTooLarge);
    }
    write_u64(w, c.frame);
    write_u64(w, c.total as u64);
    write_u64(w, c.offset as u64);
    write_u64(w, c.data.len() as u64);
    w.bytes(&c.data);
    Ok(())
}

fn read_chunk(r: &mut Reader) -> Result<SnapshotChunk, DecodeError> {
    let frame = read_frame(r, "snapshot frame")?;
    let total = read_bounded(r, "snapshot size", MAX_LOCKSTEP_SNAPSHOT as u64)? as u32;
    let offset = read_bounded(r, "snapshot offset", total as u64)? as u32;
    let room = (total - offset).min(SNAPSHOT_CHUNK as u32);
    let len = read_bounded(r, "snapshot chunk", room as u64)? as usize;
    Ok(SnapshotChunk {
        frame,
        total,
        offset,
        data: r.take(len, "snapshot chunk")?.to_vec(),
    })
}

fn write_spawn(w: &mut Writer, s: &Spawn) {
    write_u64(w, s.element);
    write_u64(w, s.path as u64);
    w.u64(s.fingerprint);
    for v in [s.start, s.life, s.x, s.y, s.rotate] {
        w.f64(v);
    }
}

/// Smallest encoded spawn: two one-byte varints, the fingerprint and five f64.
const MIN_SPAWN_BYTES: usize = 2 + 8 + 5 * 8;

fn read_spawn(r: &mut Reader) -> Result<Spawn, DecodeError> {
    let spawn = Spawn {
        element: read_u64(r, "element")?,
        path: read_u32(r, "path")?,
        fingerprint: r.u64("fingerprint")?,
        start: r.f64("start")?,
        life: r.f64("life")?,
        x: r.f64("x")?,
        y: r.f64("y")?,
        rotate: r.f64("rotate")?,
    };
    spawn.validate().map_err(|_| DecodeError::Invalid {
        field: "spawn",
        reason: "out of range",
    })?;
    Ok(spawn)
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
                seq,
                updates,
            } => {
                w.u8(kind::SNAPSHOT);
                w.f64(*server_time);
                w.u16(*seq);
                write_u64(w, updates.len() as u64);
                for u in updates {
                    u.encode(w, p)?;
                }
            }
            Message::OwnedState {
                server_time,
                updates,
            } => {
                w.u8(kind::OWNED_STATE);
                w.f64(*server_time);
                write_u64(w, updates.len() as u64);
                for u in updates {
                    u.encode(w, p)?;
                }
            }
            Message::SnapshotNack { first, count } => {
                w.u8(kind::SNAPSHOT_NACK);
                w.u16(*first);
                w.u8(*count);
            }
            Message::SnapshotRepaired { first, through } => {
                w.u8(kind::SNAPSHOT_REPAIRED);
                w.u16(*first);
                w.u16(*through);
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
            Message::AtRest { entity, epoch } => {
                w.u8(kind::AT_REST);
                write_u64(w, *entity);
                write_u64(w, *epoch as u64);
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
            Message::ScriptedSpawns(spawns) => {
                w.u8(kind::SCRIPTED_SPAWNS);
                write_u64(w, spawns.len() as u64);
                for s in spawns {
                    write_spawn(w, s);
                }
            }
            Message::ScriptedDespawn { element } => {
                w.u8(kind::SCRIPTED_DESPAWN);
                write_u64(w, *element);
            }
            Message::LockstepJoin { have } => {
                w.u8(kind::LOCKSTEP_JOIN);
                w.u8(have.is_some() as u8);
                if let Some(h) = have {
                    write_u64(w, *h);
                }
            }
            Message::LockstepLeave => w.u8(kind::LOCKSTEP_LEAVE),
            Message::LockstepStart(s) => {
                w.u8(kind::LOCKSTEP_START);
                write_u64(w, s.first_frame);
                write_u64(w, s.first_input);
                write_u64(w, s.confirmed);
                write_u64(w, s.input_delay as u64);
                write_u64(w, s.sync_interval as u64);
                write_u64(w, s.history_from);
                w.u8(s.snapshot as u8);
            }
            Message::LockstepInput { frame, data } => {
                if data.len() > MAX_LOCKSTEP_INPUT {
                    return Err(QuantizeError::PayloadTooLarge);
                }
                w.u8(kind::LOCKSTEP_INPUT);
                write_u64(w, *frame);
                write_u64(w, data.len() as u64);
                w.bytes(data);
            }
            Message::LockstepFrames { first, parts } => {
                let too_big = parts.iter().any(|p| {
                    p.entries.len() > MAX_LOCKSTEP_MEMBERS
                        || p.entries.iter().any(|e| e.data.len() > MAX_LOCKSTEP_INPUT)
                });
                if too_big {
                    return Err(QuantizeError::PayloadTooLarge);
                }
                w.u8(kind::LOCKSTEP_FRAMES);
                write_u64(w, *first);
                write_u64(w, parts.len() as u64);
                for p in parts {
                    p.encode(w);
                }
            }
            Message::LockstepHash { frame, hash } => {
                w.u8(kind::LOCKSTEP_HASH);
                write_u64(w, *frame);
                w.u64(*hash);
            }
            Message::LockstepDesync { frame, clients } => {
                if clients.len() > MAX_LOCKSTEP_MEMBERS {
                    return Err(QuantizeError::PayloadTooLarge);
                }
                w.u8(kind::LOCKSTEP_DESYNC);
                write_u64(w, *frame);
                write_u64(w, clients.len() as u64);
                for &c in clients {
                    write_u64(w, c as u64);
                }
            }
            Message::LockstepSnapshotUp(c) => {
                w.u8(kind::LOCKSTEP_SNAPSHOT_UP);
                write_chunk(w, c)?;
            }
            Message::LockstepSnapshot(c) => {
                w.u8(kind::LOCKSTEP_SNAPSHOT);
                write_chunk(w, c)?;
            }
            Message::LockstepResume { frame } => {
                w.u8(kind::LOCKSTEP_RESUME);
                write_u64(w, *frame);
            }
            Message::LockstepRefused { reason } => {
                w.u8(kind::LOCKSTEP_REFUSED);
                w.u8(*reason);
            }
            Message::LockstepSnapshotWanted => w.u8(kind::LOCKSTEP_SNAPSHOT_WANTED),
            Message::LockstepInputs { need, inputs } => {
                if inputs.len() > MAX_REDUNDANT
                    || inputs.iter().any(|(_, i)| i.len() > MAX_LOCKSTEP_INPUT)
                {
                    return Err(QuantizeError::PayloadTooLarge);
                }
                w.u8(kind::LOCKSTEP_INPUTS);
                w.u8(need.is_some() as u8);
                if let Some(need) = need {
                    write_u64(w, *need);
                }
                write_u64(w, inputs.len() as u64);
                for (frame, i) in inputs {
                    write_u64(w, *frame);
                    write_u64(w, i.len() as u64);
                    w.bytes(i);
                }
            }
            Message::LockstepRecent { first, parts } => {
                let bad = parts.len() > MAX_REDUNDANT
                    || parts.iter().any(|p| {
                        !p.complete
                            || p.entries.len() > MAX_LOCKSTEP_MEMBERS
                            || p.entries.iter().any(|e| e.data.len() > MAX_LOCKSTEP_INPUT)
                    });
                if bad {
                    return Err(QuantizeError::PayloadTooLarge);
                }
                w.u8(kind::LOCKSTEP_RECENT);
                write_u64(w, *first);
                write_u64(w, parts.len() as u64);
                for p in parts {
                    p.encode(w);
                }
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
                let seq = if k == kind::SNAPSHOT {
                    r.u16("snapshot seq")?
                } else {
                    0
                };
                let max = (r.remaining() / MIN_UPDATE_BYTES) as u64;
                let count = read_bounded(&mut r, "update count", max)? as usize;
                let mut updates = Vec::with_capacity(count);
                for _ in 0..count {
                    updates.push(EntityUpdate::decode(&mut r, p)?);
                }
                if k == kind::SNAPSHOT {
                    Message::Snapshot {
                        server_time,
                        seq,
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
            kind::SNAPSHOT_NACK => Message::SnapshotNack {
                first: r.u16("first")?,
                count: r.u8("count")?,
            },
            kind::SNAPSHOT_REPAIRED => Message::SnapshotRepaired {
                first: r.u16("first")?,
                through: r.u16("through")?,
            },
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
                epoch: read_u32(&mut r, "epoch")?,
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
            kind::SCRIPTED_SPAWNS => {
                let max = (r.remaining() / MIN_SPAWN_BYTES) as u64;
                let count = read_bounded(&mut r, "spawn count", max)? as usize;
                let mut spawns = Vec::with_capacity(count);
                for _ in 0..count {
                    spawns.push(read_spawn(&mut r)?);
                }
                Message::ScriptedSpawns(spawns)
            }
            kind::SCRIPTED_DESPAWN => Message::ScriptedDespawn {
                element: read_u64(&mut r, "element")?,
            },
            kind::LOCKSTEP_JOIN => Message::LockstepJoin {
                have: match r.u8("join flags")? {
                    0 => None,
                    1 => Some(read_frame(&mut r, "have")?),
                    _ => {
                        return Err(DecodeError::Invalid {
                            field: "join flags",
                            reason: "unknown bits",
                        })
                    }
                },
            },
            kind::LOCKSTEP_LEAVE => Message::LockstepLeave,
            kind::LOCKSTEP_START => Message::LockstepStart(LockstepStart {
                first_frame: read_frame(&mut r, "first frame")?,
                first_input: read_frame(&mut r, "first input")?,
                confirmed: read_frame(&mut r, "confirmed")?,
                input_delay: read_u32(&mut r, "input delay")?,
                sync_interval: read_u32(&mut r, "sync interval")?,
                history_from: read_frame(&mut r, "history from")?,
                snapshot: match r.u8("snapshot")? {
                    0 => false,
                    1 => true,
                    _ => {
                        return Err(DecodeError::Invalid {
                            field: "snapshot",
                            reason: "not 0 or 1",
                        })
                    }
                },
            }),
            kind::LOCKSTEP_INPUT => {
                let frame = read_frame(&mut r, "frame")?;
                let len = read_bounded(&mut r, "input length", MAX_LOCKSTEP_INPUT as u64)? as usize;
                Message::LockstepInput {
                    frame,
                    data: r.take(len, "input")?.to_vec(),
                }
            }
            kind::LOCKSTEP_FRAMES => Message::LockstepFrames {
                first: read_frame(&mut r, "first frame")?,
                parts: decode_parts(&mut r)?,
            },
            kind::LOCKSTEP_HASH => Message::LockstepHash {
                frame: read_frame(&mut r, "frame")?,
                hash: r.u64("hash")?,
            },
            kind::LOCKSTEP_DESYNC => {
                let frame = read_frame(&mut r, "frame")?;
                let count =
                    read_bounded(&mut r, "client count", MAX_LOCKSTEP_MEMBERS as u64)? as usize;
                let mut clients = Vec::with_capacity(count.min(r.remaining()));
                for _ in 0..count {
                    clients.push(read_u32(&mut r, "client")?);
                }
                Message::LockstepDesync { frame, clients }
            }
            kind::LOCKSTEP_SNAPSHOT_UP => Message::LockstepSnapshotUp(read_chunk(&mut r)?),
            kind::LOCKSTEP_SNAPSHOT => Message::LockstepSnapshot(read_chunk(&mut r)?),
            kind::LOCKSTEP_RESUME => Message::LockstepResume {
                frame: read_frame(&mut r, "frame")?,
            },
            kind::LOCKSTEP_REFUSED => Message::LockstepRefused {
                reason: r.u8("reason")?,
            },
            kind::LOCKSTEP_SNAPSHOT_WANTED => Message::LockstepSnapshotWanted,
            kind::LOCKSTEP_INPUTS => {
                let need = match r.u8("need flag")? {
                    0 => None,
                    1 => Some(read_frame(&mut r, "need")?),
                    _ => {
                        return Err(DecodeError::Invalid {
                            field: "need flag",
                            reason: "not 0 or 1",
                        })
                    }
                };
                let count = read_bounded(&mut r, "input count", MAX_REDUNDANT as u64)? as usize;
                let mut inputs = Vec::with_capacity(count.min(r.remaining()));
                for _ in 0..count {
                    let frame = read_frame(&mut r, "frame")?;
                    let len =
                        read_bounded(&mut r, "input length", MAX_LOCKSTEP_INPUT as u64)? as usize;
                    inputs.push((frame, r.take(len, "input")?.to_vec()));
                }
                Message::LockstepInputs { need, inputs }
            }
            kind::LOCKSTEP_RECENT => {
                let first = read_frame(&mut r, "first frame")?;
                let parts = decode_parts(&mut r)?;
                if parts.len() > MAX_REDUNDANT || parts.iter().any(|p| !p.complete) {
                    return Err(DecodeError::Invalid {
                        field: "recent frames",
                        reason: "too many, or a part of a frame",
                    });
                }
                Message::LockstepRecent { first, parts }
            }
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
                seq: 65_535,
                updates: (0..20).map(|i| update(i * 1000, i % 2 == 0)).collect(),
            },
            Message::SnapshotNack {
                first: 65_534,
                count: 3,
            },
            Message::SnapshotRepaired {
                first: 65_534,
                through: 2,
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
            Message::AtRest {
                entity: 3,
                epoch: 70_000,
            },
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
            Message::ScriptedSpawns(vec![
                Spawn {
                    element: 9,
                    path: 3,
                    fingerprint: u64::MAX,
                    start: 12.5,
                    life: 30.0,
                    x: -4.25,
                    y: 1e6,
                    rotate: 3.0,
                };
                3
            ]),
            Message::ScriptedDespawn { element: 1 << 50 },
            Message::LockstepJoin { have: None },
            Message::LockstepJoin { have: Some(77) },
            Message::LockstepLeave,
            Message::LockstepStart(LockstepStart {
                first_frame: 100,
                first_input: 103,
                confirmed: 100,
                input_delay: 3,
                sync_interval: 30,
                history_from: 51,
                snapshot: true,
            }),
            Message::LockstepInput {
                frame: 1 << 40,
                data: vec![7; MAX_LOCKSTEP_INPUT],
            },
            Message::LockstepFrames {
                first: 12,
                parts: vec![
                    FramePart {
                        complete: false,
                        entries: vec![super::super::lockstep::LockstepEntry {
                            client: 4,
                            flags: 1,
                            data: vec![],
                        }],
                    },
                    FramePart {
                        complete: true,
                        entries: vec![],
                    },
                ],
            },
            Message::LockstepHash {
                frame: 5,
                hash: 0xABCD,
            },
            Message::LockstepDesync {
                frame: 9,
                clients: vec![2, 70_000],
            },
            Message::LockstepSnapshotUp(SnapshotChunk {
                frame: 8,
                total: 2000,
                offset: 960,
                data: vec![1; SNAPSHOT_CHUNK],
            }),
            Message::LockstepSnapshot(SnapshotChunk {
                frame: 8,
                total: 0,
                offset: 0,
                data: vec![],
            }),
            Message::LockstepResume { frame: 44 },
            Message::LockstepRefused {
                reason: lockstep_refusal::FULL,
            },
            Message::LockstepSnapshotWanted,
            Message::LockstepInputs {
                need: Some(88),
                inputs: vec![
                    (90, vec![1, 2]),
                    (91, vec![]),
                    (300, vec![3; MAX_LOCKSTEP_INPUT]),
                ],
            },
            Message::LockstepRecent {
                first: 7,
                parts: vec![FramePart {
                    complete: true,
                    entries: vec![],
                }],
            },
        ];
        for m in messages {
            let mut w = Writer::new();
            m.encode(&mut w, &p).unwrap();
            let back = Message::decode(&w.bytes, &p).unwrap();
            match (&m, &back) {
                (
                    Message::Snapshot {
                        updates: a, seq: s, ..
                    },
                    Message::Snapshot {
                        updates: b, seq: t, ..
                    },
                ) => {
                    assert_eq!(s, t);
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
            packer.push(i, &w.bytes);
        }
        let messages = packer.finish(false);
        assert!(messages.len() > 1);
        let mut seen = 0;
        for m in &messages {
            assert!(m.bytes.len() <= 120, "{}", m.bytes.len());
            let Message::OwnedState {
                updates,
                server_time,
            } = Message::decode(&m.bytes, &p).unwrap()
            else {
                panic!()
            };
            assert_eq!(server_time, 5.0);
            let ids: Vec<u64> = updates.iter().map(|u| u.entity).collect();
            assert_eq!(ids, m.tags);
            seen += updates.len();
        }
        assert_eq!(seen, 20);
        // Snapshots are numbered on, and an empty one can be asked for.
        let mut packer = UpdatePacker::snapshot(7.0, 65_535, 120);
        for i in 0..20 {
            let mut w = Writer::new();
            update(i, true).encode(&mut w, &p).unwrap();
            packer.push(i, &w.bytes);
        }
        let seqs: Vec<u16> = packer.finish(true).iter().map(|m| m.seq).collect();
        assert_eq!(seqs[..3], [65_535, 0, 1]);
        let empty = UpdatePacker::snapshot(7.0, 9, 120).finish(true);
        assert_eq!(empty.len(), 1);
        assert_eq!(
            Message::decode(&empty[0].bytes, &p).unwrap(),
            Message::Snapshot {
                server_time: 7.0,
                seq: 9,
                updates: vec![]
            }
        );
        assert!(UpdatePacker::snapshot(7.0, 9, 120).finish(false).is_empty());
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
            Message::ScriptedSpawns(vec![
                Spawn {
                    element: u64::MAX,
                    path: u32::MAX,
                    fingerprint: 0,
                    start: 0.0,
                    life: 1.0,
                    x: 0.0,
                    y: 0.0,
                    rotate: 0.0,
                };
                16
            ]),
            Message::LockstepSnapshotUp(SnapshotChunk {
                frame: u64::MAX,
                total: MAX_LOCKSTEP_SNAPSHOT as u32,
                offset: (MAX_LOCKSTEP_SNAPSHOT - SNAPSHOT_CHUNK) as u32,
                data: vec![0; SNAPSHOT_CHUNK],
            }),
            Message::LockstepInput {
                frame: u64::MAX,
                data: vec![0; MAX_LOCKSTEP_INPUT],
            },
            Message::LockstepDesync {
                frame: u64::MAX,
                clients: vec![u32::MAX; MAX_LOCKSTEP_MEMBERS],
            },
        ] {
            let n = worst.to_bytes(&p).unwrap().len();
            assert!(n <= 1024, "{n} bytes: {worst:?}");
        }
    }

    #[test]
    fn lockstep_and_scripted_limits_hold_both_ways() {
        let p = Precision::default();
        let big = Message::LockstepInput {
            frame: 1,
            data: vec![0; MAX_LOCKSTEP_INPUT + 1],
        };
        assert_eq!(big.to_bytes(&p), Err(QuantizeError::PayloadTooLarge));
        // A chunk past its snapshot's end, and a snapshot over the limit.
        for (total, offset, len) in [(100, 50, 60), (MAX_LOCKSTEP_SNAPSHOT + 1, 0, 1)] {
            let chunk = Message::LockstepSnapshotUp(SnapshotChunk {
                frame: 1,
                total: total as u32,
                offset: offset as u32,
                data: vec![0; len],
            });
            assert!(chunk.to_bytes(&p).is_err());
            let mut w = Writer::new();
            w.u8(kind::LOCKSTEP_SNAPSHOT);
            write_u64(&mut w, 1);
            write_u64(&mut w, total as u64);
            write_u64(&mut w, offset as u64);
            write_u64(&mut w, len as u64);
            w.bytes(&vec![0; len]);
            assert!(Message::decode(&w.bytes, &p).is_err());
        }
        // An input length over the limit on the wire, unknown entry flags,
        // a spawn with a negative life.
        let mut w = Writer::new();
        w.u8(kind::LOCKSTEP_INPUT);
        write_u64(&mut w, 1);
        write_u64(&mut w, MAX_LOCKSTEP_INPUT as u64 + 1);
        w.bytes(&vec![0; MAX_LOCKSTEP_INPUT + 1]);
        assert!(Message::decode(&w.bytes, &p).is_err());
        let mut w = Writer::new();
        w.u8(kind::LOCKSTEP_FRAMES);
        write_u64(&mut w, 0);
        write_u64(&mut w, 1);
        w.u8(1);
        write_u64(&mut w, 1);
        write_u64(&mut w, 5);
        w.u8(0x80);
        write_u64(&mut w, 0);
        assert!(Message::decode(&w.bytes, &p).is_err());
        let mut spawn = Message::ScriptedSpawns(vec![Spawn {
            element: 1,
            path: 1,
            fingerprint: 1,
            start: 0.0,
            life: 1.0,
            x: 0.0,
            y: 0.0,
            rotate: 0.0,
        }])
        .to_bytes(&p)
        .unwrap();
        let life_at = spawn.len() - 32;
        spawn[life_at..life_at + 8].copy_from_slice(&(-1.0f64).to_le_bytes());
        assert!(Message::decode(&spawn, &p).is_err());
        // Counts the bytes cannot hold.
        let mut w = Writer::new();
        w.u8(kind::SCRIPTED_SPAWNS);
        write_u64(&mut w, 1 << 40);
        assert!(Message::decode(&w.bytes, &p).is_err());
        let mut w = Writer::new();
        w.u8(kind::LOCKSTEP_FRAMES);
        write_u64(&mut w, 0);
        write_u64(&mut w, 1 << 40);
        assert!(Message::decode(&w.bytes, &p).is_err());
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
                *b = rng.u8(0..=kind::LAST + 1);
            }
            let _ = Message::decode(&bytes, &p);
        }
    }
}
