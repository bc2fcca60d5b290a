//! Frame lockstep (S4) through the C ABI: join the relay's match, submit
//! one input per frame, take confirmed frames in order (`NETSYNC_WAIT`
//! when the next one is not confirmed: never a guess), report state
//! hashes, provide snapshots for joiners, poll the match's events.

use super::client::{client_error, with_client, NetsyncClient};
use super::result::{guard, FfiError, NetsyncResult};
use crate::client::lockstep::{LockstepEvent, LockstepItem, LockstepState};
use crate::wire::lockstep::{
    MAX_LOCKSTEP_INPUT, MAX_LOCKSTEP_MEMBERS, MAX_LOCKSTEP_SNAPSHOT as SNAPSHOT_LIMIT,
};

/// Largest input of one member for one frame (bytes).
pub const NETSYNC_MAX_LOCKSTEP_INPUT: usize = 256;
/// Largest snapshot a member may provide (bytes).
pub const NETSYNC_MAX_LOCKSTEP_SNAPSHOT: usize = 65536;
/// Most members of a lockstep match.
pub const NETSYNC_MAX_LOCKSTEP_MEMBERS: usize = 64;
// Literals above so that cbindgen writes numbers into the header.
const _: () = assert!(NETSYNC_MAX_LOCKSTEP_INPUT == MAX_LOCKSTEP_INPUT);
const _: () = assert!(NETSYNC_MAX_LOCKSTEP_SNAPSHOT == SNAPSHOT_LIMIT);
const _: () = assert!(NETSYNC_MAX_LOCKSTEP_MEMBERS == MAX_LOCKSTEP_MEMBERS);

/// `NetsyncLockstepStatus::state`: not a member.
pub const NETSYNC_LOCKSTEP_STATE_IDLE: u32 = 0;
/// Asked to join (or joining again after a reconnect): inputs wait.
pub const NETSYNC_LOCKSTEP_STATE_JOINING: u32 = 1;
/// A member: inputs are taken.
pub const NETSYNC_LOCKSTEP_STATE_ACTIVE: u32 = 2;

/// `NetsyncLockstepFrame::kind`: a confirmed frame; its inputs follow.
pub const NETSYNC_LOCKSTEP_ITEM_FRAME: u32 = 1;
/// `NetsyncLockstepFrame::kind`: the game state after `frame`, provided by
/// a member: load it, then take the frames after it.
pub const NETSYNC_LOCKSTEP_ITEM_SNAPSHOT: u32 = 2;

/// `NetsyncLockstepInput::flags`: the relay filled this member's input
/// (it sent none within the stall timeout); the input is empty.
pub const NETSYNC_LOCKSTEP_INPUT_FILLED: u32 = 1;
/// `NetsyncLockstepInput::flags`: the member's first frame in the match.
pub const NETSYNC_LOCKSTEP_INPUT_JOINED: u32 = 2;

/// `NetsyncLockstepEvent::kind`: the relay accepted this client; `frame`
/// is its first frame.
pub const NETSYNC_LOCKSTEP_EVENT_STARTED: u32 = 1;
/// `client_id` is a member from `frame` on.
pub const NETSYNC_LOCKSTEP_EVENT_MEMBER_JOINED: u32 = 2;
/// `client_id` is no longer a member from `frame` on.
pub const NETSYNC_LOCKSTEP_EVENT_MEMBER_LEFT: u32 = 3;
/// The relay filled `client_id`'s input from `frame` on: it stalled.
pub const NETSYNC_LOCKSTEP_EVENT_MEMBER_STALLED: u32 = 4;
/// `client_id`'s input counts again from `frame` on.
pub const NETSYNC_LOCKSTEP_EVENT_MEMBER_RESUMED: u32 = 5;
/// State hashes differ first at `frame`; `client_id` is outside the
/// majority (one event per such client; every member when there is none).
pub const NETSYNC_LOCKSTEP_EVENT_DESYNC: u32 = 6;
/// A joiner needs a snapshot: provide one
/// (`netsync_client_lockstep_provide_snapshot`).
pub const NETSYNC_LOCKSTEP_EVENT_SNAPSHOT_WANTED: u32 = 7;
/// The relay refused the join (`reason`: `NETSYNC_LOCKSTEP_REFUSED_*`).
pub const NETSYNC_LOCKSTEP_EVENT_REFUSED: u32 = 8;
/// The relay is a new process: the match starts over from frame 0 (this
/// client joins it again by itself).
pub const NETSYNC_LOCKSTEP_EVENT_RESTARTED: u32 = 9;
/// The game did not take frames for too long (2^18 frames or 64 MiB
/// waiting): this client left the match.
pub const NETSYNC_LOCKSTEP_EVENT_OVERFLOW: u32 = 10;

/// `NetsyncLockstepEvent::reason` of REFUSED: the match has
/// `lockstep_max_members` members already.
pub const NETSYNC_LOCKSTEP_REFUSED_FULL: u32 = 1;

/// What `netsync_client_lockstep_next_frame` took.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetsyncLockstepFrame {
    /// The frame number (for a snapshot: the frame it is the state after).
    pub frame: u64,
    /// `NETSYNC_LOCKSTEP_ITEM_*`.
    pub kind: u32,
    /// Frames: members' inputs written to `inputs` (or needed, with
    /// `NETSYNC_ERR_BUFFER_TOO_SMALL`).
    pub input_count: u32,
    /// Bytes written to `buffer` (or needed): the inputs one after the
    /// other, or the snapshot.
    pub size: usize,
}

/// One member's input in a frame: its bytes are `buffer[offset ..
/// offset + size]`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetsyncLockstepInput {
    pub client_id: u32,
    /// `NETSYNC_LOCKSTEP_INPUT_*` bits.
    pub flags: u32,
    pub offset: u32,
    pub size: u32,
}

/// One lockstep event (`netsync_client_lockstep_poll_event`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetsyncLockstepEvent {
    /// `NETSYNC_LOCKSTEP_EVENT_*`.
    pub kind: u32,
    /// The member concerned (0 when none).
    pub client_id: u32,
    /// The frame it happened at (0 when none).
    pub frame: u64,
    /// REFUSED: `NETSYNC_LOCKSTEP_REFUSED_*`.
    pub reason: u32,
}

/// Where this client stands in the match.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetsyncLockstepStatus {
    /// `NETSYNC_LOCKSTEP_STATE_*`.
    pub state: u32,
    /// Members in the newest frame received.
    pub members: u32,
    /// The match's settings (0 until the relay accepted the join).
    pub input_delay: u32,
    pub sync_interval: u32,
    /// The first frame this client is part of.
    pub first_frame: u64,
    /// The frame the next submitted input is for.
    pub next_input_frame: u64,
    /// Frames known confirmed (the newest confirmed frame + 1).
    pub confirmed_frames: u64,
    /// The number of the frame `netsync_client_lockstep_next_frame`
    /// returns next.
    pub next_frame: u64,
    /// Frames (and a snapshot) received and not taken yet.
    pub frames_queued: u64,
    /// Events dropped because they were not polled (65 536 are kept).
    pub events_dropped: u64,
}

/// Joins the relay's lockstep match. Returns at once; a
/// `NETSYNC_LOCKSTEP_EVENT_STARTED` event follows with the first frame
/// (or REFUSED). After a reconnect the client joins again by itself and
/// gets only the frames it lacks. Joining twice is a no-op.
#[no_mangle]
pub extern "C" fn netsync_client_lockstep_join(client: *mut NetsyncClient) -> NetsyncResult {
    guard("netsync_client_lockstep_join", || {
        with_client(client, |c| {
            c.lockstep_join();
            Ok(())
        })
    })
}

/// Leaves the lockstep match; frames already received can still be taken.
#[no_mangle]
pub extern "C" fn netsync_client_lockstep_leave(client: *mut NetsyncClient) -> NetsyncResult {
    guard("netsync_client_lockstep_leave", || {
        with_client(client, |c| {
            c.lockstep_leave();
            Ok(())
        })
    })
}

/// Submits this member's input for its next frame (`len` bytes, at most
/// `NETSYNC_MAX_LOCKSTEP_INPUT`; `data` may be NULL when `len` is 0) and
/// writes that frame's number to `*out_frame` (may be NULL).
/// `NETSYNC_WAIT`: not accepted yet, or `sync_interval` frames past the
/// newest confirmed frame (S4: a client that runs ahead waits); keep the
/// input and submit it again after the next tick. `NETSYNC_ERR_WRONG_STATE`
/// when not joined.
#[no_mangle]
pub extern "C" fn netsync_client_lockstep_submit(
    client: *mut NetsyncClient,
    data: *const u8,
    len: usize,
    out_frame: *mut u64,
) -> NetsyncResult {
    guard("netsync_client_lockstep_submit", || {
        if len > MAX_LOCKSTEP_INPUT {
            return Err(FfiError::new(
                NetsyncResult::NETSYNC_ERR_TOO_LARGE,
                format!("input of {len} bytes is over NETSYNC_MAX_LOCKSTEP_INPUT ({MAX_LOCKSTEP_INPUT})"),
            ));
        }
        let data = bytes(data, len)?;
        let frame = with_client(client, |c| c.lockstep_submit(data).map_err(client_error))?;
        if !out_frame.is_null() {
            // SAFETY: checked for NULL.
            unsafe { out_frame.write(frame) };
        }
        Ok(())
    })
}

/// Reads a caller's slice of up to any length (the callers bound it).
fn bytes<'a>(data: *const u8, len: usize) -> Result<&'a [u8], FfiError> {
    if len == 0 {
        return Ok(&[]);
    }
    if data.is_null() {
        return Err(FfiError::null("data"));
    }
    // SAFETY: non-NULL, and the caller passes `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(data, len) })
}

/// Takes the next confirmed frame (or the snapshot to start from) in
/// order: `*out` gets its header, `inputs` (room for `input_capacity`)
/// every member's input by client id, `buffer` (room for `capacity`
/// bytes) their bytes one after the other, or the snapshot's bytes.
/// `NETSYNC_WAIT`: the next frame is not confirmed yet (frames arrive with
/// `netsync_client_tick`). `NETSYNC_ERR_BUFFER_TOO_SMALL`: `out` has the
/// needed `input_count` and `size`, and the frame stays queued. `inputs`
/// and `buffer` may be NULL when their capacity is 0.
#[no_mangle]
pub extern "C" fn netsync_client_lockstep_next_frame(
    client: *mut NetsyncClient,
    out: *mut NetsyncLockstepFrame,
    inputs: *mut NetsyncLockstepInput,
    input_capacity: usize,
    buffer: *mut u8,
    capacity: usize,
) -> NetsyncResult {
    guard("netsync_client_lockstep_next_frame", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        if input_capacity > 0 && inputs.is_null() {
            return Err(FfiError::null("inputs"));
        }
        if capacity > 0 && buffer.is_null() {
            return Err(FfiError::null("buffer"));
        }
        with_client(client, |c| {
            let Some(item) = c.lockstep_peek() else {
                return Err(FfiError::wait());
            };
            let head = match item {
                LockstepItem::Snapshot { frame, data } => NetsyncLockstepFrame {
                    frame: *frame,
                    kind: NETSYNC_LOCKSTEP_ITEM_SNAPSHOT,
                    input_count: 0,
                    size: data.len(),
                },
                LockstepItem::Frame { frame, inputs } => NetsyncLockstepFrame {
                    frame: *frame,
                    kind: NETSYNC_LOCKSTEP_ITEM_FRAME,
                    input_count: inputs.len() as u32,
                    size: inputs.iter().map(|e| e.data.len()).sum(),
                },
            };
            if head.size > capacity || head.input_count as usize > input_capacity {
                // SAFETY: checked for NULL.
                unsafe { out.write(head) };
                return Err(FfiError::new(
                    NetsyncResult::NETSYNC_ERR_BUFFER_TOO_SMALL,
                    format!(
                        "frame {} needs {} inputs and {} bytes, room for {input_capacity} and {capacity}; it stays queued",
                        head.frame, head.input_count, head.size
                    ),
                ));
            }
            let item = c.lockstep_next().expect("peeked above");
            // SAFETY: sizes checked against the capacities the caller gave.
            unsafe {
                match &item {
                    LockstepItem::Snapshot { data, .. } => {
                        std::ptr::copy_nonoverlapping(data.as_ptr(), buffer, data.len());
                    }
                    LockstepItem::Frame {
                        inputs: entries, ..
                    } => {
                        let mut offset = 0usize;
                        for (i, e) in entries.iter().enumerate() {
                            inputs.add(i).write(NetsyncLockstepInput {
                                client_id: e.client,
                                flags: e.flags as u32,
                                offset: offset as u32,
                                size: e.data.len() as u32,
                            });
                            std::ptr::copy_nonoverlapping(
                                e.data.as_ptr(),
                                buffer.add(offset),
                                e.data.len(),
                            );
                            offset += e.data.len();
                        }
                    }
                }
                out.write(head);
            }
            Ok(())
        })
    })
}

/// Reports the hash of this member's game state after `frame` (a frame
/// it has taken). The relay compares the members' hashes and reports the
/// first frame that differs (`NETSYNC_LOCKSTEP_EVENT_DESYNC`). Optional;
/// `NETSYNC_ERR_INVALID_ARGUMENT` for a frame not taken yet,
/// `NETSYNC_ERR_WRONG_STATE` when not joined.
#[no_mangle]
pub extern "C" fn netsync_client_lockstep_report_hash(
    client: *mut NetsyncClient,
    frame: u64,
    hash: u64,
) -> NetsyncResult {
    guard("netsync_client_lockstep_report_hash", || {
        with_client(client, |c| {
            c.lockstep_report_hash(frame, hash).map_err(client_error)
        })
    })
}

/// Gives the relay the game state after `frame` (a frame this member has
/// taken; `len` up to `NETSYNC_MAX_LOCKSTEP_SNAPSHOT`): joiners start from
/// the newest snapshot and the frames after it, and the relay drops the
/// history before it. Provide one on `NETSYNC_LOCKSTEP_EVENT_SNAPSHOT_WANTED`
/// or whenever convenient, at most one a second (`NETSYNC_ERR_LIMIT`
/// sooner: a snapshot is up to 69 reliable messages).
#[no_mangle]
pub extern "C" fn netsync_client_lockstep_provide_snapshot(
    client: *mut NetsyncClient,
    frame: u64,
    data: *const u8,
    len: usize,
) -> NetsyncResult {
    guard("netsync_client_lockstep_provide_snapshot", || {
        if len > SNAPSHOT_LIMIT {
            return Err(FfiError::new(
                NetsyncResult::NETSYNC_ERR_TOO_LARGE,
                format!("snapshot of {len} bytes is over NETSYNC_MAX_LOCKSTEP_SNAPSHOT ({SNAPSHOT_LIMIT})"),
            ));
        }
        let data = bytes(data, len)?;
        with_client(client, |c| {
            c.lockstep_provide_snapshot(frame, data)
                .map_err(client_error)
        })
    })
}

fn event_of(e: LockstepEvent) -> NetsyncLockstepEvent {
    let (kind, client_id, frame, reason) = match e {
        LockstepEvent::Started { frame, .. } => (NETSYNC_LOCKSTEP_EVENT_STARTED, 0, frame, 0),
        LockstepEvent::MemberJoined { client, frame } => {
            (NETSYNC_LOCKSTEP_EVENT_MEMBER_JOINED, client, frame, 0)
        }
        LockstepEvent::MemberLeft { client, frame } => {
            (NETSYNC_LOCKSTEP_EVENT_MEMBER_LEFT, client, frame, 0)
        }
        LockstepEvent::MemberStalled { client, frame } => {
            (NETSYNC_LOCKSTEP_EVENT_MEMBER_STALLED, client, frame, 0)
        }
        LockstepEvent::MemberResumed { client, frame } => {
            (NETSYNC_LOCKSTEP_EVENT_MEMBER_RESUMED, client, frame, 0)
        }
        LockstepEvent::Desync { client, frame } => {
            (NETSYNC_LOCKSTEP_EVENT_DESYNC, client, frame, 0)
        }
        LockstepEvent::SnapshotWanted => (NETSYNC_LOCKSTEP_EVENT_SNAPSHOT_WANTED, 0, 0, 0),
        LockstepEvent::Refused { reason } => (NETSYNC_LOCKSTEP_EVENT_REFUSED, 0, 0, reason as u32),
        LockstepEvent::Restarted => (NETSYNC_LOCKSTEP_EVENT_RESTARTED, 0, 0, 0),
        LockstepEvent::Overflow => (NETSYNC_LOCKSTEP_EVENT_OVERFLOW, 0, 0, 0),
    };
    NetsyncLockstepEvent {
        kind,
        client_id,
        frame,
        reason,
    }
}

/// Pops the next lockstep event into `*out` and sets `*has_event` (false,
/// `*out` untouched, when none waits). Events arrive with ticks.
#[no_mangle]
pub extern "C" fn netsync_client_lockstep_poll_event(
    client: *mut NetsyncClient,
    out: *mut NetsyncLockstepEvent,
    has_event: *mut bool,
) -> NetsyncResult {
    guard("netsync_client_lockstep_poll_event", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        if has_event.is_null() {
            return Err(FfiError::null("has_event"));
        }
        let event = with_client(client, |c| Ok(c.lockstep_poll_event()))?;
        // SAFETY: both checked for NULL.
        unsafe {
            if let Some(e) = event {
                out.write(event_of(e));
            }
            has_event.write(event.is_some());
        }
        Ok(())
    })
}

/// Writes where this client stands in the match to `*out`.
#[no_mangle]
pub extern "C" fn netsync_client_lockstep_status(
    client: *mut NetsyncClient,
    out: *mut NetsyncLockstepStatus,
) -> NetsyncResult {
    guard("netsync_client_lockstep_status", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let (state, s) = with_client(client, |c| Ok((c.lockstep_state(), c.lockstep_status())))?;
        let status = NetsyncLockstepStatus {
            state: match state {
                LockstepState::Idle => NETSYNC_LOCKSTEP_STATE_IDLE,
                LockstepState::Joining => NETSYNC_LOCKSTEP_STATE_JOINING,
                LockstepState::Active => NETSYNC_LOCKSTEP_STATE_ACTIVE,
            },
            members: s.members as u32,
            input_delay: s.input_delay,
            sync_interval: s.sync_interval,
            first_frame: s.first_frame,
            next_input_frame: s.next_input,
            confirmed_frames: s.confirmed,
            next_frame: s.next_frame,
            frames_queued: s.queued as u64,
            events_dropped: s.events_dropped,
        };
        // SAFETY: checked for NULL.
        unsafe { out.write(status) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::lockstep::{ENTRY_FILLED, ENTRY_JOINED};
    use crate::wire::message::lockstep_refusal;

    #[test]
    fn exported_values_match_the_core_and_layouts_hold() {
        assert_eq!(NETSYNC_LOCKSTEP_INPUT_FILLED, ENTRY_FILLED as u32);
        assert_eq!(NETSYNC_LOCKSTEP_INPUT_JOINED, ENTRY_JOINED as u32);
        assert_eq!(NETSYNC_LOCKSTEP_REFUSED_FULL, lockstep_refusal::FULL as u32);
        assert_eq!(std::mem::size_of::<NetsyncLockstepFrame>(), 24);
        assert_eq!(std::mem::size_of::<NetsyncLockstepInput>(), 16);
        assert_eq!(std::mem::size_of::<NetsyncLockstepEvent>(), 24);
        assert_eq!(std::mem::size_of::<NetsyncLockstepStatus>(), 64);
    }
}
