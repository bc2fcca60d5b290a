//! `netsync_replay_*` and `netsync_client_record`: recordings (docs/replay.md).
//! A replay ticks like a live client: `netsync_replay_tick_at` at a time
//! the recording client ticked at gives exactly the transforms it got.

use std::ffi::c_char;
use std::path::Path;

use super::client::{client_error, with_client, NetsyncClient};
use super::handles;
use super::result::{guard, guard_void, FfiError, NetsyncResult};
use super::server::c_str;
use super::types::{NetsyncTransform, TransformBatch};
use crate::replay::{Player, RecordingKind, ReplayError};

/// Opaque replay handle. Not thread-safe: calls on one handle must not
/// overlap (overlapping calls fail with `NETSYNC_ERR_BUSY`).
pub struct NetsyncReplay {
    _private: [u8; 0],
}

const TYPE_NAME: &str = "NetsyncReplay";

/// Recording kinds (`NetsyncReplayInfo::kind`).
pub const NETSYNC_RECORDING_CLIENT: u32 = 1;
pub const NETSYNC_RECORDING_RELAY: u32 = 2;

/// What a recording holds.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NetsyncReplayInfo {
    /// `NETSYNC_RECORDING_*`.
    pub kind: u32,
    /// Id the relay gave the recording client (0: relay recording, or the
    /// client never connected).
    pub client_id: u32,
    /// Recording times (the recorder's clock, s) of the first and last entries.
    pub start_time: f64,
    pub end_time: f64,
    /// Recorded entries, ticks and snapshot frames.
    pub entries: u64,
    pub ticks: u64,
    pub frames: u64,
    /// Commands and component states recorded.
    pub messages: u64,
    /// Send-right changes recorded.
    pub right_changes: u64,
    /// Entities with at least one recorded state.
    pub entities: u64,
    /// Size of the file, and of its entries uncompressed.
    pub file_bytes: u64,
    pub raw_bytes: u64,
}

fn replay_error(e: ReplayError) -> FfiError {
    let code = match e {
        ReplayError::Io(_) => NetsyncResult::NETSYNC_ERR_IO,
        ReplayError::TooLarge => NetsyncResult::NETSYNC_ERR_LIMIT,
        _ => NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT,
    };
    FfiError::new(code, e.to_string())
}

fn with_replay<R>(
    replay: *mut NetsyncReplay,
    f: impl FnOnce(&mut Player) -> Result<R, FfiError>,
) -> Result<R, FfiError> {
    handles::with(replay as usize as u64, TYPE_NAME, f)
}

/// Records everything `client` shows from the network (what its timeline
/// is fed, its ticks, send rights and messages) to the file at `path`
/// (UTF-8), until `netsync_client_stop_recording` or
/// `netsync_client_free`. Call before the first tick:
/// `NETSYNC_ERR_WRONG_STATE` after it, or when already recording;
/// `NETSYNC_ERR_IO` when the file cannot be created.
#[no_mangle]
pub extern "C" fn netsync_client_record(
    client: *mut NetsyncClient,
    path: *const c_char,
) -> NetsyncResult {
    guard("netsync_client_record", || {
        let path = c_str(path, "path")?.ok_or_else(|| FfiError::null("path"))?;
        with_client(client, |c| c.record(Path::new(path)).map_err(client_error))
    })
}

/// Ends the recording and waits until the file is complete.
/// `NETSYNC_ERR_WRONG_STATE` when not recording.
#[no_mangle]
pub extern "C" fn netsync_client_stop_recording(client: *mut NetsyncClient) -> NetsyncResult {
    guard("netsync_client_stop_recording", || {
        with_client(client, |c| c.stop_recording().map_err(client_error))
    })
}

/// Opens the recording at `path` (UTF-8) and reads it whole, checking
/// every block. A file cut short, damaged, of another format or of an
/// unsupported version is `NETSYNC_ERR_INVALID_ARGUMENT` with the reason
/// (`netsync_last_error`); an unreadable one `NETSYNC_ERR_IO`.
#[no_mangle]
pub extern "C" fn netsync_replay_open(
    path: *const c_char,
    out: *mut *mut NetsyncReplay,
) -> NetsyncResult {
    guard("netsync_replay_open", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let path = c_str(path, "path")?.ok_or_else(|| FfiError::null("path"))?;
        let player = Player::open(Path::new(path)).map_err(replay_error)?;
        handles::publish(out, player);
        Ok(())
    })
}

/// Opens a recording held in memory (`len` bytes at `data`, copied).
#[no_mangle]
pub extern "C" fn netsync_replay_open_buffer(
    data: *const u8,
    len: usize,
    out: *mut *mut NetsyncReplay,
) -> NetsyncResult {
    guard("netsync_replay_open_buffer", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        if data.is_null() {
            return Err(FfiError::null("data"));
        }
        if len > isize::MAX as usize {
            return Err(FfiError::invalid("len is larger than any buffer"));
        }
        // SAFETY: checked for NULL; the caller promises `len` readable bytes.
        let bytes = unsafe { std::slice::from_raw_parts(data, len) };
        let player = Player::from_bytes(bytes).map_err(replay_error)?;
        handles::publish(out, player);
        Ok(())
    })
}

/// Frees a replay. NULL or a handle already freed is a no-op.
#[no_mangle]
pub extern "C" fn netsync_replay_free(replay: *mut NetsyncReplay) {
    guard_void("netsync_replay_free", || {
        handles::free::<Player, _>(replay, TYPE_NAME, "netsync_replay_free")
    })
}

/// Writes what the recording holds to `*out`.
#[no_mangle]
pub extern "C" fn netsync_replay_info(
    replay: *mut NetsyncReplay,
    out: *mut NetsyncReplayInfo,
) -> NetsyncResult {
    guard("netsync_replay_info", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let info = with_replay(replay, |p| {
            let s = p.summary();
            let count = |name: &str| s.by_type.get(name).copied().unwrap_or(0);
            Ok(NetsyncReplayInfo {
                kind: match s.kind {
                    RecordingKind::Client => NETSYNC_RECORDING_CLIENT,
                    RecordingKind::Relay => NETSYNC_RECORDING_RELAY,
                },
                client_id: s.client_id,
                start_time: s.start,
                end_time: s.end,
                entries: s.entries,
                ticks: count("tick"),
                frames: count("frame"),
                messages: count("message"),
                right_changes: count("right change"),
                entities: s.entities,
                file_bytes: s.file_bytes,
                raw_bytes: s.raw_bytes,
            })
        })?;
        // SAFETY: checked for NULL.
        unsafe { out.write(info) };
        Ok(())
    })
}

/// Shows the recording at recording time `time` (the recording client's
/// engine clock; the relay's clock for a relay recording): at a time the
/// client ticked at, exactly the transforms it got then. Going back in
/// time replays from the start.
#[no_mangle]
pub extern "C" fn netsync_replay_tick_at(
    replay: *mut NetsyncReplay,
    time: f64,
    out: *mut NetsyncTransform,
    capacity: usize,
    out_count: *mut usize,
) -> NetsyncResult {
    guard("netsync_replay_tick_at", || {
        let batch = TransformBatch::new(out, capacity, out_count)?;
        with_replay(replay, |p| {
            let count = p.tick_at(time, batch.writer()).map_err(FfiError::invalid)?;
            batch.finish(count)
        })
    })
}

/// Plays the recording on the engine's clock `now` (any monotonic clock,
/// s): the first tick, and the first after a seek, shows the start (or
/// the seek time); later ticks advance at the set speed.
#[no_mangle]
pub extern "C" fn netsync_replay_tick(
    replay: *mut NetsyncReplay,
    now: f64,
    out: *mut NetsyncTransform,
    capacity: usize,
    out_count: *mut usize,
) -> NetsyncResult {
    guard("netsync_replay_tick", || {
        let batch = TransformBatch::new(out, capacity, out_count)?;
        with_replay(replay, |p| {
            let count = p.tick(now, batch.writer()).map_err(FfiError::invalid)?;
            batch.finish(count)
        })
    })
}

/// The next `netsync_replay_tick` shows recording time `time`.
#[no_mangle]
pub extern "C" fn netsync_replay_seek(replay: *mut NetsyncReplay, time: f64) -> NetsyncResult {
    guard("netsync_replay_seek", || {
        with_replay(replay, |p| p.seek(time).map_err(FfiError::invalid))
    })
}

/// Plays on at `speed` times real time (0 pauses, at most 100).
#[no_mangle]
pub extern "C" fn netsync_replay_set_speed(
    replay: *mut NetsyncReplay,
    speed: f64,
) -> NetsyncResult {
    guard("netsync_replay_set_speed", || {
        with_replay(replay, |p| p.set_speed(speed).map_err(FfiError::invalid))
    })
}

/// Writes the recording time of the last tick to `*out`;
/// `NETSYNC_ERR_WRONG_STATE` before the first tick.
#[no_mangle]
pub extern "C" fn netsync_replay_position(
    replay: *mut NetsyncReplay,
    out: *mut f64,
) -> NetsyncResult {
    guard("netsync_replay_position", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let position = with_replay(replay, |p| {
            p.position().ok_or_else(|| {
                FfiError::new(NetsyncResult::NETSYNC_ERR_WRONG_STATE, "not ticked yet")
            })
        })?;
        // SAFETY: checked for NULL.
        unsafe { out.write(position) };
        Ok(())
    })
}
