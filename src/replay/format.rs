//! The recording file format (version 1), sans-IO: the header, the
//! entries and the compressed, checksummed blocks they travel in.
//! docs/replay.md describes it byte by byte.
//!
//! Entries are what a client fed its timeline (and what the relay
//! accepted), with exact values (no quantisation): replaying them into a
//! timeline and ticking at the recorded times gives bit-identical
//! transforms.

use glam::{Quat, Vec3};

use crate::core::app_message::{AppMessage, AppMessageKind};
use crate::core::pose::{Pose, Sample, SampleFlags};
use crate::core::prediction::Order;
use crate::core::smoothing::{SmoothingConfig, SmoothingKind};
use crate::core::timeline::{Mode, TimelineConfig};
use crate::wire::cursor::{DecodeError, Reader, Writer};
use crate::wire::varint::{read_bounded, read_u64, write_u64};

/// First bytes of every recording.
pub const MAGIC: &[u8; 8] = b"NSREPLAY";
/// The version this build writes and reads.
pub const VERSION: u16 = 1;
/// Header: magic, version u16, kind u8, reserved u8.
pub const HEADER_LEN: usize = 12;
/// First bytes of every block.
pub const BLOCK_MAGIC: &[u8; 4] = b"NBLK";
/// Block header: magic, first sequence u64, entries u32, raw length u32,
/// packed length u32, CRC-32 of the packed bytes u32.
pub const BLOCK_HEADER_LEN: usize = 28;
/// Most uncompressed bytes in one block (a writer flushes well before).
pub const MAX_BLOCK_RAW: usize = 1 << 20;
/// Most uncompressed bytes a reader accepts in one recording.
pub const MAX_RECORDING_RAW: u64 = 1 << 30;
/// Most samples in one frame entry (a relay snapshot holds far fewer).
const MAX_FRAME_SAMPLES: u64 = 1 << 16;
/// Most entities in a hidden-set entry.
const MAX_HIDDEN: u64 = 1 << 16;
/// Most bytes of a message entry's data.
const MAX_MESSAGE_DATA: u64 = 1 << 16;

/// Who wrote a recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordingKind {
    /// A client: what its timeline was fed, its ticks and messages.
    Client = 1,
    /// The relay: every state it accepted, right change and command.
    Relay = 2,
}

/// One recorded event. Each is stored with a time: the engine time of
/// the tick it belongs to (client) or the relay's clock (relay).
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    /// The timeline's settings (first entry of a client recording).
    Config(TimelineConfig),
    /// The relay gave the recording client this id.
    Identity { client_id: u32 },
    /// A snapshot entered the timeline: `at` client time, `vouched` the
    /// server time it vouches for, and its samples. On a relay recording,
    /// one accepted state: `at` relay time.
    Frame {
        at: f64,
        vouched: f64,
        samples: Vec<(u64, Sample)>,
    },
    /// Snapshot packets from number `key` on were lost; their repair can
    /// have come by `until`.
    Loss { key: u64, until: f64 },
    /// The loss noted under `key` was repaired.
    Repaired { key: u64 },
    /// Server minus engine clock, as the clock estimate set it.
    ClockOffset(f64),
    /// An entity left (reason: `Removal` code as in the C API).
    Remove { entity: u64, reason: u32 },
    /// The shown pose of an entity blends from `pose` (the right moved away).
    StartFrom { entity: u64, pose: Pose },
    /// The recording client's own state of an object it simulated.
    Local { entity: u64, sample: Sample },
    /// The timeline started afresh (a new relay).
    Reset,
    /// The engine ticked at the entry's time.
    Tick,
    /// The entities the client simulated itself from now on (not shown
    /// from the network).
    Hidden(Vec<u64>),
    /// A send right changed (holder 0: nobody).
    Right {
        entity: u64,
        holder: u32,
        epoch: u32,
    },
    /// A command or component state delivered to the game (client) or
    /// handled by the relay.
    Message(AppMessage),
}

mod tag {
    pub const CONFIG: u8 = 1;
    pub const IDENTITY: u8 = 2;
    pub const FRAME: u8 = 3;
    pub const LOSS: u8 = 4;
    pub const REPAIRED: u8 = 5;
    pub const CLOCK_OFFSET: u8 = 6;
    pub const REMOVE: u8 = 7;
    pub const START_FROM: u8 = 8;
    pub const LOCAL: u8 = 9;
    pub const RESET: u8 = 10;
    pub const TICK: u8 = 11;
    pub const HIDDEN: u8 = 12;
    pub const RIGHT: u8 = 13;
    pub const MESSAGE: u8 = 14;
}

impl Entry {
    /// Short name, for summaries.
    pub fn name(&self) -> &'static str {
        match self {
            Entry::Config(_) => "config",
            Entry::Identity { .. } => "identity",
            Entry::Frame { .. } => "frame",
            Entry::Loss { .. } => "loss",
            Entry::Repaired { .. } => "repaired",
            Entry::ClockOffset(_) => "clock offset",
            Entry::Remove { .. } => "remove",
            Entry::StartFrom { .. } => "start from",
            Entry::Local { .. } => "local state",
            Entry::Reset => "reset",
            Entry::Tick => "tick",
            Entry::Hidden(_) => "hidden set",
            Entry::Right { .. } => "right change",
            Entry::Message(_) => "message",
        }
    }
}

/// Header bytes of a recording of `kind`.
pub fn header(kind: RecordingKind) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(MAGIC);
    h[8..10].copy_from_slice(&VERSION.to_le_bytes());
    h[10] = kind as u8;
    h
}

/// Why a recording could not be read.
#[derive(Clone, Debug, PartialEq)]
pub enum ReplayError {
    Io(String),
    /// The file does not start like a recording.
    NotARecording,
    UnsupportedVersion(u16),
    /// The file ends inside block `block` (a recording cut short, for
    /// example by a crash).
    Truncated {
        block: u64,
        offset: u64,
    },
    /// Block `block` at byte `offset` is damaged.
    Corrupt {
        block: u64,
        offset: u64,
        what: String,
    },
    /// More than [`MAX_RECORDING_RAW`] bytes uncompressed.
    TooLarge,
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplayError::Io(e) => write!(f, "cannot read the recording: {e}"),
            ReplayError::NotARecording => write!(f, "not a netsync recording (no NSREPLAY header)"),
            ReplayError::UnsupportedVersion(v) => write!(
                f,
                "recording format version {v} is not supported (this build reads version {VERSION})"
            ),
            ReplayError::Truncated { block, offset } => write!(
                f,
                "recording is truncated: it ends inside block {block} (byte {offset})"
            ),
            ReplayError::Corrupt {
                block,
                offset,
                what,
            } => {
                write!(
                    f,
                    "recording is corrupt: block {block} at byte {offset}: {what}"
                )
            }
            ReplayError::TooLarge => write!(
                f,
                "recording holds more than {MAX_RECORDING_RAW} bytes uncompressed"
            ),
        }
    }
}

impl std::error::Error for ReplayError {}

/// Appends one entry, stamped `time`, to `w`.
pub fn encode_entry(w: &mut Writer, time: f64, entry: &Entry) {
    w.f64(time);
    match entry {
        Entry::Config(c) => {
            w.u8(tag::CONFIG);
            encode_config(w, c);
        }
        Entry::Identity { client_id } => {
            w.u8(tag::IDENTITY);
            w.u32(*client_id);
        }
        Entry::Frame {
            at,
            vouched,
            samples,
        } => {
            w.u8(tag::FRAME);
            w.f64(*at);
            w.f64(*vouched);
            write_u64(w, samples.len() as u64);
            for (entity, sample) in samples {
                write_u64(w, *entity);
                encode_sample(w, sample);
            }
        }
        Entry::Loss { key, until } => {
            w.u8(tag::LOSS);
            write_u64(w, *key);
            w.f64(*until);
        }
        Entry::Repaired { key } => {
            w.u8(tag::REPAIRED);
            write_u64(w, *key);
        }
        Entry::ClockOffset(offset) => {
            w.u8(tag::CLOCK_OFFSET);
            w.f64(*offset);
        }
        Entry::Remove { entity, reason } => {
            w.u8(tag::REMOVE);
            write_u64(w, *entity);
            w.u32(*reason);
        }
        Entry::StartFrom { entity, pose } => {
            w.u8(tag::START_FROM);
            write_u64(w, *entity);
            encode_pose(w, pose);
        }
        Entry::Local { entity, sample } => {
            w.u8(tag::LOCAL);
            write_u64(w, *entity);
            encode_sample(w, sample);
        }
        Entry::Reset => w.u8(tag::RESET),
        Entry::Tick => w.u8(tag::TICK),
        Entry::Hidden(entities) => {
            w.u8(tag::HIDDEN);
            write_u64(w, entities.len() as u64);
            for e in entities {
                write_u64(w, *e);
            }
        }
        Entry::Right {
            entity,
            holder,
            epoch,
        } => {
            w.u8(tag::RIGHT);
            write_u64(w, *entity);
            w.u32(*holder);
            w.u32(*epoch);
        }
        Entry::Message(m) => {
            w.u8(tag::MESSAGE);
            w.u8(match m.kind {
                AppMessageKind::GlobalCommand => 0,
                AppMessageKind::ComponentCommand => 1,
                AppMessageKind::ComponentState => 2,
            });
            w.u32(m.sender);
            write_u64(w, m.entity);
            w.u32(m.component);
            write_u64(w, m.sequence);
            w.f64(m.server_time);
            write_u64(w, m.data.len() as u64);
            w.bytes(&m.data);
        }
    }
}

/// Reads one entry: (time, entry).
pub fn decode_entry(r: &mut Reader) -> Result<(f64, Entry), DecodeError> {
    let time = finite(r, "time")?;
    let entry = match r.u8("entry type")? {
        tag::CONFIG => Entry::Config(decode_config(r)?),
        tag::IDENTITY => Entry::Identity {
            client_id: r.u32("client id")?,
        },
        tag::FRAME => {
            let at = finite(r, "at")?;
            let vouched = finite(r, "vouched")?;
            let count = read_bounded(r, "sample count", MAX_FRAME_SAMPLES)?;
            // Each sample takes at least 41 bytes: never reserve more
            // than the input can hold.
            let mut samples = Vec::with_capacity((count as usize).min(r.remaining() / 41));
            for _ in 0..count {
                let entity = read_u64(r, "entity")?;
                samples.push((entity, decode_sample(r)?));
            }
            Entry::Frame {
                at,
                vouched,
                samples,
            }
        }
        tag::LOSS => Entry::Loss {
            key: read_u64(r, "key")?,
            until: r.f64("until")?,
        },
        tag::REPAIRED => Entry::Repaired {
            key: read_u64(r, "key")?,
        },
        tag::CLOCK_OFFSET => Entry::ClockOffset(finite(r, "offset")?),
        tag::REMOVE => Entry::Remove {
            entity: read_u64(r, "entity")?,
            reason: r.u32("reason")?,
        },
        tag::START_FROM => Entry::StartFrom {
            entity: read_u64(r, "entity")?,
            pose: decode_pose(r)?,
        },
        tag::LOCAL => Entry::Local {
            entity: read_u64(r, "entity")?,
            sample: decode_sample(r)?,
        },
        tag::RESET => Entry::Reset,
        tag::TICK => Entry::Tick,
        tag::HIDDEN => {
            let count = read_bounded(r, "hidden count", MAX_HIDDEN)?;
            let mut entities = Vec::with_capacity((count as usize).min(r.remaining()));
            for _ in 0..count {
                entities.push(read_u64(r, "entity")?);
            }
            Entry::Hidden(entities)
        }
        tag::RIGHT => Entry::Right {
            entity: read_u64(r, "entity")?,
            holder: r.u32("holder")?,
            epoch: r.u32("epoch")?,
        },
        tag::MESSAGE => {
            let kind = match r.u8("message kind")? {
                0 => AppMessageKind::GlobalCommand,
                1 => AppMessageKind::ComponentCommand,
                2 => AppMessageKind::ComponentState,
                _ => return Err(invalid("message kind", "unknown")),
            };
            let sender = r.u32("sender")?;
            let entity = read_u64(r, "entity")?;
            let component = r.u32("component")?;
            let sequence = read_u64(r, "sequence")?;
            let server_time = r.f64("server time")?;
            let len = read_bounded(r, "data length", MAX_MESSAGE_DATA)?;
            let data = r.take(len as usize, "data")?.to_vec();
            Entry::Message(AppMessage {
                kind,
                sender,
                entity,
                component,
                sequence,
                server_time,
                data,
            })
        }
        _ => return Err(invalid("entry type", "unknown")),
    };
    Ok((time, entry))
}

fn invalid(field: &'static str, reason: &'static str) -> DecodeError {
    DecodeError::Invalid { field, reason }
}

fn finite(r: &mut Reader, field: &'static str) -> Result<f64, DecodeError> {
    let v = r.f64(field)?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(invalid(field, "not finite"))
    }
}

fn f32_of(r: &mut Reader, field: &'static str) -> Result<f32, DecodeError> {
    Ok(f32::from_bits(r.u32(field)?))
}

fn encode_vec3(w: &mut Writer, v: Vec3) {
    for c in v.to_array() {
        w.u32(c.to_bits());
    }
}

fn decode_vec3(r: &mut Reader, field: &'static str) -> Result<Vec3, DecodeError> {
    Ok(Vec3::new(
        f32_of(r, field)?,
        f32_of(r, field)?,
        f32_of(r, field)?,
    ))
}

fn encode_pose(w: &mut Writer, p: &Pose) {
    encode_vec3(w, p.position);
    for c in p.rotation.to_array() {
        w.u32(c.to_bits());
    }
}

fn decode_pose(r: &mut Reader) -> Result<Pose, DecodeError> {
    let position = decode_vec3(r, "position")?;
    let q = [
        f32_of(r, "rotation")?,
        f32_of(r, "rotation")?,
        f32_of(r, "rotation")?,
        f32_of(r, "rotation")?,
    ];
    Ok(Pose::new(position, Quat::from_array(q)))
}

/// Sample: time f64, pose (7 x f32), flags u32, then the velocities the
/// flags announce (3 x f32 each).
fn encode_sample(w: &mut Writer, s: &Sample) {
    w.f64(s.server_time);
    encode_pose(w, &s.pose);
    w.u32(s.flags.0);
    if s.flags.has_velocity() {
        encode_vec3(w, s.velocity);
    }
    if s.flags.has_angular_velocity() {
        encode_vec3(w, s.angular_velocity);
    }
}

fn decode_sample(r: &mut Reader) -> Result<Sample, DecodeError> {
    let server_time = r.f64("sample time")?;
    let pose = decode_pose(r)?;
    let flags = SampleFlags(r.u32("flags")?);
    let velocity = if flags.has_velocity() {
        decode_vec3(r, "velocity")?
    } else {
        Vec3::ZERO
    };
    let angular_velocity = if flags.has_angular_velocity() {
        decode_vec3(r, "angular velocity")?
    } else {
        Vec3::ZERO
    };
    Ok(Sample {
        server_time,
        pose,
        velocity,
        angular_velocity,
        flags,
    })
}

fn encode_config(w: &mut Writer, c: &TimelineConfig) {
    w.u8(c.mode as u8);
    for v in [
        c.fixed_delay,
        c.literal_initial_delay,
        c.extrapolation_budget,
        c.estimate_window,
        c.delay_margin,
        c.min_delay,
        c.max_delay,
        c.max_time_scale,
        c.slew_time,
        c.hard_resync,
        c.max_extrapolation,
        c.hold_ease,
        c.blend_time,
        c.buffered_multiplier,
        c.buffered_time_scale,
        c.prediction_lead,
    ] {
        w.f64(v);
    }
    w.u32(c.snap_distance.to_bits());
    write_u64(w, c.literal_frames as u64);
    w.u8(c.prediction_order as u8);
    let s = &c.smoothing;
    w.u8(s.kind as u8);
    write_u64(w, s.latency_samples as u64);
    for v in [
        s.min_time,
        s.max_time,
        s.slowdown_factor,
        s.stop_speed,
        s.stop_time_scale,
        s.face_min_speed,
        s.max_speed_ratio,
        s.snap_distance,
    ] {
        w.u32(v.to_bits());
    }
    w.u8(u8::from(s.face_motion));
    write_u64(w, c.max_samples_per_entity as u64);
    write_u64(w, c.max_entities as u64);
}

fn decode_config(r: &mut Reader) -> Result<TimelineConfig, DecodeError> {
    let mode = *Mode::ALL
        .get(r.u8("mode")? as usize)
        .ok_or(invalid("mode", "unknown"))?;
    let mut f = [0f64; 16];
    for v in &mut f {
        *v = r.f64("timeline setting")?;
    }
    let snap_distance = f32_of(r, "snap distance")?;
    let literal_frames = read_bounded(r, "literal frames", 1 << 20)? as usize;
    let prediction_order = match r.u8("prediction order")? {
        0 => Order::First,
        1 => Order::Second,
        _ => return Err(invalid("prediction order", "unknown")),
    };
    let kind = match r.u8("smoothing kind")? {
        0 => SmoothingKind::Snap,
        1 => SmoothingKind::Linear,
        2 => SmoothingKind::Bezier,
        3 => SmoothingKind::Exponential,
        _ => return Err(invalid("smoothing kind", "unknown")),
    };
    let latency_samples = read_bounded(r, "latency samples", 1 << 20)? as usize;
    let mut g = [0f32; 8];
    for v in &mut g {
        *v = f32_of(r, "smoothing setting")?;
    }
    let face_motion = r.u8("face motion")? != 0;
    let max_samples_per_entity = read_bounded(r, "max samples", 1 << 20)? as usize;
    let max_entities = read_bounded(r, "max entities", 1 << 32)? as usize;
    let config = TimelineConfig {
        mode,
        fixed_delay: f[0],
        literal_initial_delay: f[1],
        extrapolation_budget: f[2],
        estimate_window: f[3],
        delay_margin: f[4],
        min_delay: f[5],
        max_delay: f[6],
        max_time_scale: f[7],
        slew_time: f[8],
        hard_resync: f[9],
        max_extrapolation: f[10],
        hold_ease: f[11],
        blend_time: f[12],
        buffered_multiplier: f[13],
        buffered_time_scale: f[14],
        prediction_lead: f[15],
        snap_distance,
        literal_frames,
        prediction_order,
        smoothing: SmoothingConfig {
            kind,
            latency_samples,
            min_time: g[0],
            max_time: g[1],
            slowdown_factor: g[2],
            stop_speed: g[3],
            stop_time_scale: g[4],
            face_motion,
            face_min_speed: g[5],
            max_speed_ratio: g[6],
            snap_distance: g[7],
        },
        max_samples_per_entity,
        max_entities,
    };
    config
        .validate()
        .map_err(|_| invalid("timeline config", "out of range"))?;
    Ok(config)
}

/// A block ready to write: header and packed entries.
pub fn encode_block(first_sequence: u64, entries: u32, raw: &[u8]) -> Vec<u8> {
    let packed = lz4_flex::block::compress(raw);
    let mut out = Vec::with_capacity(BLOCK_HEADER_LEN + packed.len());
    out.extend_from_slice(BLOCK_MAGIC);
    out.extend_from_slice(&first_sequence.to_le_bytes());
    out.extend_from_slice(&entries.to_le_bytes());
    out.extend_from_slice(&(raw.len() as u32).to_le_bytes());
    out.extend_from_slice(&(packed.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&packed).to_le_bytes());
    out.extend_from_slice(&packed);
    out
}

/// A recording read back: its kind and every entry with its time, in
/// sequence.
#[derive(Clone, Debug)]
pub struct Recording {
    pub kind: RecordingKind,
    pub entries: Vec<(f64, Entry)>,
    /// Bytes in the file and uncompressed.
    pub file_bytes: u64,
    pub raw_bytes: u64,
    pub blocks: u64,
}

/// Reads a whole recording from `bytes`. Every block is checked (magic,
/// lengths, checksum, sequence, entry count) before its entries are used.
pub fn read_recording(bytes: &[u8]) -> Result<Recording, ReplayError> {
    if bytes.len() < HEADER_LEN || &bytes[..8] != MAGIC {
        return Err(ReplayError::NotARecording);
    }
    let version = u16::from_le_bytes([bytes[8], bytes[9]]);
    if version != VERSION {
        return Err(ReplayError::UnsupportedVersion(version));
    }
    let kind = match (bytes[10], bytes[11]) {
        (1, 0) => RecordingKind::Client,
        (2, 0) => RecordingKind::Relay,
        _ => return Err(ReplayError::NotARecording),
    };
    let mut entries = Vec::new();
    let mut offset = HEADER_LEN;
    let mut block = 0u64;
    let mut raw_total = 0u64;
    let mut next_sequence = 0u64;
    while offset < bytes.len() {
        let corrupt = |what: String| ReplayError::Corrupt {
            block,
            offset: offset as u64,
            what,
        };
        let truncated = ReplayError::Truncated {
            block,
            offset: offset as u64,
        };
        let Some(head) = bytes.get(offset..offset + BLOCK_HEADER_LEN) else {
            return Err(truncated);
        };
        if &head[..4] != BLOCK_MAGIC {
            return Err(corrupt("no block marker".into()));
        }
        let u32_at =
            |i: usize| u32::from_le_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
        let first = u64::from_le_bytes(head[4..12].try_into().unwrap_or_default());
        let count = u32_at(12);
        let raw_len = u32_at(16) as usize;
        let packed_len = u32_at(20) as usize;
        let crc = u32_at(24);
        if raw_len > MAX_BLOCK_RAW || packed_len > lz4_flex::block::get_maximum_output_size(raw_len)
        {
            return Err(corrupt(format!(
                "lengths out of range (raw {raw_len}, packed {packed_len})"
            )));
        }
        if first != next_sequence {
            return Err(corrupt(format!(
                "starts at entry {first}, expected {next_sequence} (a block is missing)"
            )));
        }
        let start = offset + BLOCK_HEADER_LEN;
        let Some(packed) = bytes.get(start..start + packed_len) else {
            return Err(truncated);
        };
        if crc32fast::hash(packed) != crc {
            return Err(corrupt("checksum mismatch".into()));
        }
        raw_total += raw_len as u64;
        if raw_total > MAX_RECORDING_RAW {
            return Err(ReplayError::TooLarge);
        }
        let raw = lz4_flex::block::decompress(packed, raw_len)
            .map_err(|e| corrupt(format!("cannot decompress: {e}")))?;
        if raw.len() != raw_len {
            return Err(corrupt("decompressed length differs".into()));
        }
        let mut r = Reader::new(&raw);
        let mut decoded = 0u32;
        while r.remaining() > 0 {
            let entry = decode_entry(&mut r)
                .map_err(|e| corrupt(format!("entry {}: {e}", first + decoded as u64)))?;
            entries.push(entry);
            decoded += 1;
        }
        if decoded != count {
            return Err(corrupt(format!("{decoded} entries, header says {count}")));
        }
        next_sequence = first + count as u64;
        offset = start + packed_len;
        block += 1;
    }
    Ok(Recording {
        kind,
        entries,
        file_bytes: bytes.len() as u64,
        raw_bytes: raw_total,
        blocks: block,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Sample {
        Sample::at(12.5, Vec3::new(1.0, -2.0, 3.5), Quat::from_rotation_y(0.3))
            .with_velocity(Vec3::new(0.1, 0.2, 0.3))
    }

    fn every_entry() -> Vec<Entry> {
        vec![
            Entry::Config(TimelineConfig::default()),
            Entry::Identity { client_id: 7 },
            Entry::Frame {
                at: 1.25,
                vouched: 1.0,
                samples: vec![(3, sample()), (u64::MAX, sample())],
            },
            Entry::Loss {
                key: 65_535,
                until: 2.0,
            },
            Entry::Repaired { key: 9 },
            Entry::ClockOffset(-0.125),
            Entry::Remove {
                entity: 4,
                reason: 2,
            },
            Entry::StartFrom {
                entity: 5,
                pose: sample().pose,
            },
            Entry::Local {
                entity: 6,
                sample: sample(),
            },
            Entry::Reset,
            Entry::Tick,
            Entry::Hidden(vec![1, 2, 300]),
            Entry::Right {
                entity: 8,
                holder: 2,
                epoch: 70_000,
            },
            Entry::Message(AppMessage {
                kind: AppMessageKind::ComponentState,
                sender: 3,
                entity: 9,
                component: 4,
                sequence: 11,
                server_time: 3.5,
                data: vec![1, 2, 3],
            }),
        ]
    }

    fn file(entries: &[Entry]) -> Vec<u8> {
        let mut raw = Writer::new();
        for (i, e) in entries.iter().enumerate() {
            encode_entry(&mut raw, i as f64 * 0.5, e);
        }
        let mut out = header(RecordingKind::Client).to_vec();
        out.extend(encode_block(0, entries.len() as u32, &raw.bytes));
        out
    }

    #[test]
    fn every_entry_round_trips_exactly() {
        let entries = every_entry();
        let rec = read_recording(&file(&entries)).unwrap();
        assert_eq!(rec.kind, RecordingKind::Client);
        let back: Vec<Entry> = rec.entries.iter().map(|(_, e)| e.clone()).collect();
        assert_eq!(back, entries);
        assert_eq!(rec.entries[3].0, 1.5);
    }

    #[test]
    fn every_cut_is_a_clear_truncation_error() {
        let bytes = file(&every_entry());
        for cut in HEADER_LEN + 1..bytes.len() {
            match read_recording(&bytes[..cut]) {
                Err(ReplayError::Truncated { block: 0, .. }) => {}
                other => panic!("cut at {cut}: {other:?}"),
            }
        }
        assert_eq!(
            read_recording(&bytes[..5]).unwrap_err(),
            ReplayError::NotARecording
        );
    }

    #[test]
    fn a_flipped_bit_anywhere_is_an_error_never_a_panic() {
        let bytes = file(&every_entry());
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            assert!(
                read_recording(&bad).is_err(),
                "flip at byte {i} went unnoticed"
            );
        }
    }

    #[test]
    fn another_version_is_named() {
        let mut bytes = file(&every_entry());
        bytes[8] = 9;
        assert_eq!(
            read_recording(&bytes).unwrap_err(),
            ReplayError::UnsupportedVersion(9)
        );
    }
}
