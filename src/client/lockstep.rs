//! A client's side of the relay's lockstep match (S4), sans-IO: the game
//! submits one input per frame within the sync window, and takes confirmed
//! frames in order (or a snapshot to start from); never a guess. Events
//! say who joined, left, stalled or came back at which frame, and where
//! the relay found the members' state hashes differ.

use std::collections::{BTreeMap, VecDeque};

use crate::wire::lockstep::{
    FramePart, LockstepEntry, ENTRY_FILLED, MAX_LOCKSTEP_INPUT, MAX_LOCKSTEP_SNAPSHOT,
    SNAPSHOT_CHUNK,
};
use crate::wire::message::{LockstepStart, Message, SnapshotChunk};

/// Most confirmed frames waiting for the game; a game that falls further
/// behind leaves the match (`Overflow`) rather than grow without end.
pub const MAX_QUEUED_FRAMES: usize = 1 << 18;
/// Most bytes of inputs waiting for the game.
pub const MAX_QUEUED_BYTES: usize = 64 << 20;
/// Most events waiting; beyond, the oldest are dropped.
pub const MAX_EVENTS: usize = 65_536;

/// Where this client stands in the match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockstepState {
    /// Not a member (never joined, left, refused).
    Idle,
    /// Asked to join (or rejoining after a reconnect); inputs wait.
    Joining,
    /// A member: inputs are taken.
    Active,
}

/// Something that happened in the match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockstepEvent {
    /// The relay accepted this client: its first frame and first input frame.
    Started { frame: u64, first_input: u64 },
    /// `client` is a member from `frame` on.
    MemberJoined { client: u32, frame: u64 },
    /// `client` is no longer a member from `frame` on.
    MemberLeft { client: u32, frame: u64 },
    /// The relay filled `client`'s input from `frame` on (it stalled).
    MemberStalled { client: u32, frame: u64 },
    /// `client`'s input counts again from `frame` on.
    MemberResumed { client: u32, frame: u64 },
    /// The state hashes differ first at `frame`; `client` is outside the
    /// majority (one event per such client).
    Desync { client: u32, frame: u64 },
    /// A joiner needs a snapshot: provide one when convenient.
    SnapshotWanted,
    /// The join was refused (`lockstep_refusal::*`).
    Refused { reason: u8 },
    /// The relay is a new process: the match starts over from frame 0.
    Restarted,
    /// The game did not take frames fast enough; this client left.
    Overflow,
}

/// What the game takes, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockstepItem {
    /// The game state after `frame`, from another member: load it, then
    /// go on with the frames after it.
    Snapshot { frame: u64, data: Vec<u8> },
    /// A confirmed frame: every member's input, by client id.
    Frame {
        frame: u64,
        inputs: Vec<LockstepEntry>,
    },
}

/// Why an input was not taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubmitError {
    /// Not a member yet, or `sync_interval` frames ahead of the newest
    /// confirmed one: try again after the next tick.
    Wait,
    NotJoined,
    TooLarge(usize),
}

/// Counters and where the match stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LockstepStatus {
    pub first_frame: u64,
    /// The frame the next submitted input is for.
    pub next_input: u64,
    /// Frames known confirmed (newest + 1).
    pub confirmed: u64,
    /// The frame number of the next frame the game takes.
    pub next_frame: u64,
    pub queued: usize,
    pub members: usize,
    pub input_delay: u32,
    pub sync_interval: u32,
    pub events_dropped: u64,
}

/// What the client must send because of a message or a call.
#[derive(Clone, Debug, PartialEq)]
pub enum Outgoing {
    Input { frame: u64, data: Vec<u8> },
    Leave,
}

#[derive(Debug)]
pub struct LockstepClient {
    state: LockstepState,
    start: Option<LockstepStart>,
    next_input: u64,
    /// Frames confirmed as far as this client knows (keyframe + 1).
    confirmed: u64,
    /// The number of the next complete frame the relay sends.
    expected: u64,
    /// Frames below this are queued or taken already (repeats dropped).
    received: u64,
    /// Frame number the game takes next.
    next_frame: u64,
    partial: Vec<LockstepEntry>,
    snapshot: Option<(u64, u32, Vec<u8>)>,
    queue: VecDeque<LockstepItem>,
    queued_bytes: usize,
    /// Members of the last frame received, and whether each was filled.
    members: BTreeMap<u32, bool>,
    members_known: bool,
    events: VecDeque<LockstepEvent>,
    events_dropped: u64,
}

impl Default for LockstepClient {
    fn default() -> Self {
        LockstepClient {
            state: LockstepState::Idle,
            start: None,
            next_input: 0,
            confirmed: 0,
            expected: 0,
            received: 0,
            next_frame: 0,
            partial: Vec::new(),
            snapshot: None,
            queue: VecDeque::new(),
            queued_bytes: 0,
            members: BTreeMap::new(),
            members_known: false,
            events: VecDeque::new(),
            events_dropped: 0,
        }
    }
}

fn item_bytes(item: &LockstepItem) -> usize {
    match item {
        LockstepItem::Snapshot { data, .. } => data.len() + 16,
        LockstepItem::Frame { inputs, .. } => {
            inputs.iter().map(|e| e.data.len() + 8).sum::<usize>() + 16
        }
    }
}

impl LockstepClient {
    pub fn state(&self) -> LockstepState {
        self.state
    }

    pub fn status(&self) -> LockstepStatus {
        let start = self.start.unwrap_or(LockstepStart {
            first_frame: 0,
            first_input: 0,
            confirmed: 0,
            input_delay: 0,
            sync_interval: 0,
            history_from: 0,
            snapshot: false,
        });
        LockstepStatus {
            first_frame: start.first_frame,
            next_input: self.next_input,
            confirmed: self.confirmed,
            next_frame: self.next_frame,
            queued: self.queue.len(),
            members: self.members.len(),
            input_delay: start.input_delay,
            sync_interval: start.sync_interval,
            events_dropped: self.events_dropped,
        }
    }

    fn event(&mut self, e: LockstepEvent) {
        if self.events.len() >= MAX_EVENTS {
            self.events.pop_front();
            self.events_dropped += 1;
        }
        self.events.push_back(e);
    }

    pub fn poll_event(&mut self) -> Option<LockstepEvent> {
        self.events.pop_front()
    }

    /// The game asks to join; true when the join must be sent.
    pub fn join(&mut self) -> bool {
        if self.state != LockstepState::Idle {
            return false;
        }
        self.state = LockstepState::Joining;
        true
    }

    /// The game leaves; true when the leave must be sent. Frames already
    /// queued stay for the game to take.
    pub fn leave(&mut self) -> bool {
        if self.state == LockstepState::Idle {
            return false;
        }
        self.state = LockstepState::Idle;
        self.start = None;
        true
    }

    /// Takes the game's input for its next frame; returns that frame.
    pub fn submit(&mut self, data: &[u8]) -> Result<(u64, Outgoing), SubmitError> {
        if data.len() > MAX_LOCKSTEP_INPUT {
            return Err(SubmitError::TooLarge(data.len()));
        }
        let Some(start) = self.start else {
            return Err(match self.state {
                LockstepState::Idle => SubmitError::NotJoined,
                _ => SubmitError::Wait,
            });
        };
        if self.state != LockstepState::Active {
            return Err(SubmitError::Wait);
        }
        // S4: no input past the keyframe (newest confirmed) + sync interval.
        if self.next_input >= self.confirmed + start.sync_interval as u64 {
            return Err(SubmitError::Wait);
        }
        let frame = self.next_input;
        self.next_input += 1;
        Ok((
            frame,
            Outgoing::Input {
                frame,
                data: data.to_vec(),
            },
        ))
    }

    /// The next item for the game, left queued.
    pub fn peek(&self) -> Option<&LockstepItem> {
        self.queue.front()
    }

    /// Takes the next item.
    pub fn pop(&mut self) -> Option<LockstepItem> {
        let item = self.queue.pop_front()?;
        self.queued_bytes -= item_bytes(&item);
        self.next_frame = match &item {
            LockstepItem::Snapshot { frame, .. } | LockstepItem::Frame { frame, .. } => frame + 1,
        };
        Some(item)
    }

    /// Whether `frame` is one this client has taken (hashes are reported
    /// for those only).
    pub fn taken(&self, frame: u64) -> bool {
        frame < self.next_frame
    }

    /// The connection was lost and made again: a member rejoins (the
    /// network side sends the join), inputs wait for the new start.
    pub fn reconnected(&mut self) {
        if self.state == LockstepState::Active {
            self.state = LockstepState::Joining;
        }
        self.partial.clear();
        self.snapshot = None;
    }

    /// The relay is a new process: everything from the old match goes.
    pub fn restarted(&mut self) {
        self.queue.clear();
        self.queued_bytes = 0;
        self.partial.clear();
        self.snapshot = None;
        self.members.clear();
        self.members_known = false;
        (
            self.confirmed,
            self.expected,
            self.received,
            self.next_frame,
        ) = (0, 0, 0, 0);
        self.next_input = 0;
        if self.state == LockstepState::Active {
            self.state = LockstepState::Joining;
        }
        self.event(LockstepEvent::Restarted);
    }

    fn push(&mut self, item: LockstepItem) -> Option<Outgoing> {
        let bytes = item_bytes(&item);
        if self.queue.len() >= MAX_QUEUED_FRAMES || self.queued_bytes + bytes > MAX_QUEUED_BYTES {
            log::error!(target: "netsync::lockstep", "{} confirmed frames wait for the game: leaving the match", self.queue.len());
            self.event(LockstepEvent::Overflow);
            return self.leave().then_some(Outgoing::Leave);
        }
        self.queued_bytes += bytes;
        self.queue.push_back(item);
        None
    }

    /// A lockstep message from the relay; what must go back, if anything.
    pub fn on_message(&mut self, message: Message) -> Option<Outgoing> {
        match message {
            Message::LockstepStart(s) => {
                if self.state == LockstepState::Idle {
                    // The game left meanwhile: the relay must not wait for
                    // a member that will never send.
                    return Some(Outgoing::Leave);
                }
                self.state = LockstepState::Active;
                self.start = Some(s);
                self.next_input = s.first_input;
                self.confirmed = self.confirmed.max(s.confirmed);
                self.expected = s.history_from;
                self.partial.clear();
                self.event(LockstepEvent::Started {
                    frame: s.first_frame,
                    first_input: s.first_input,
                });
                None
            }
            Message::LockstepFrames { first, parts } => self.on_frames(first, parts),
            // An unreliable repeat of the newest frames: taken where it
            // continues what we have (its frames are whole, so a part in
            // progress is the same frame, complete here).
            Message::LockstepRecent { first, parts } => {
                if first > self.received || self.start.is_none() {
                    return None;
                }
                self.partial.clear();
                self.on_frames(first, parts)
            }
            Message::LockstepSnapshot(chunk) => self.on_snapshot(chunk),
            Message::LockstepResume { frame } => {
                self.next_input = self.next_input.max(frame);
                None
            }
            Message::LockstepDesync { frame, clients } => {
                for client in clients {
                    self.event(LockstepEvent::Desync { client, frame });
                }
                None
            }
            Message::LockstepRefused { reason } => {
                self.state = LockstepState::Idle;
                self.start = None;
                self.event(LockstepEvent::Refused { reason });
                None
            }
            Message::LockstepSnapshotWanted => {
                self.event(LockstepEvent::SnapshotWanted);
                None
            }
            _ => None,
        }
    }

    fn on_snapshot(&mut self, chunk: SnapshotChunk) -> Option<Outgoing> {
        if chunk.offset == 0 {
            self.snapshot = Some((chunk.frame, chunk.total, Vec::new()));
        }
        let (frame, total, data) = self.snapshot.as_mut()?;
        if *frame != chunk.frame || *total != chunk.total || data.len() != chunk.offset as usize {
            self.snapshot = None;
            return None;
        }
        data.extend_from_slice(&chunk.data);
        if data.len() < *total as usize {
            return None;
        }
        let (frame, _, data) = self.snapshot.take()?;
        self.received = frame + 1;
        self.expected = frame + 1;
        self.members_known = false;
        self.push(LockstepItem::Snapshot { frame, data })
    }

    fn on_frames(&mut self, first: u64, parts: Vec<FramePart>) -> Option<Outgoing> {
        if first != self.expected {
            // Repeats (a catch-up overlapping live frames) start earlier;
            // a part in progress belongs to no frame then.
            self.partial.clear();
            if first > self.expected {
                log::error!(target: "netsync::lockstep", "frames {} to {} never arrived", self.expected, first - 1);
            }
        }
        let mut frame = first;
        let mut out = None;
        for part in parts {
            self.partial.extend(part.entries);
            if !part.complete {
                continue;
            }
            let inputs = std::mem::take(&mut self.partial);
            // Repeats of older frames never move the expectation back.
            self.expected = self.expected.max(frame + 1);
            self.confirmed = self.confirmed.max(frame + 1);
            if frame >= self.received {
                self.received = frame + 1;
                self.member_events(frame, &inputs);
                out = out.or(self.push(LockstepItem::Frame { frame, inputs }));
            }
            frame += 1;
        }
        out
    }

    fn member_events(&mut self, frame: u64, inputs: &[LockstepEntry]) {
        let now: BTreeMap<u32, bool> = inputs
            .iter()
            .map(|e| (e.client, e.flags & ENTRY_FILLED != 0))
            .collect();
        if self.members_known {
            let mut events = Vec::new();
            for (&client, &filled) in &now {
                match self.members.get(&client) {
                    None => events.push(LockstepEvent::MemberJoined { client, frame }),
                    Some(false) if filled => {
                        events.push(LockstepEvent::MemberStalled { client, frame })
                    }
                    Some(true) if !filled => {
                        events.push(LockstepEvent::MemberResumed { client, frame })
                    }
                    _ => {}
                }
            }
            for &client in self.members.keys() {
                if !now.contains_key(&client) {
                    events.push(LockstepEvent::MemberLeft { client, frame });
                }
            }
            for e in events {
                self.event(e);
            }
        } else if self
            .start
            .is_some_and(|s| s.history_from == 0 && frame == 0)
        {
            // From the very start: the first members joined here.
            for &client in now.keys() {
                self.event(LockstepEvent::MemberJoined { client, frame });
            }
        }
        self.members = now;
        self.members_known = true;
    }

    /// The snapshot chunks to upload for the game state after `frame`.
    pub fn snapshot_chunks(frame: u64, data: &[u8]) -> Result<Vec<Message>, usize> {
        if data.len() > MAX_LOCKSTEP_SNAPSHOT {
            return Err(data.len());
        }
        let total = data.len() as u32;
        let mut chunks: Vec<Message> = data
            .chunks(SNAPSHOT_CHUNK)
            .enumerate()
            .map(|(i, c)| {
                Message::LockstepSnapshotUp(SnapshotChunk {
                    frame,
                    total,
                    offset: (i * SNAPSHOT_CHUNK) as u32,
                    data: c.to_vec(),
                })
            })
            .collect();
        if chunks.is_empty() {
            chunks.push(Message::LockstepSnapshotUp(SnapshotChunk {
                frame,
                total: 0,
                offset: 0,
                data: Vec::new(),
            }));
        }
        Ok(chunks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::lockstep::ENTRY_JOINED;

    fn start(first: u64, history_from: u64) -> Message {
        Message::LockstepStart(LockstepStart {
            first_frame: first,
            first_input: first + 2,
            confirmed: first,
            input_delay: 2,
            sync_interval: 4,
            history_from,
            snapshot: false,
        })
    }

    fn entry(client: u32, flags: u8, data: &[u8]) -> LockstepEntry {
        LockstepEntry {
            client,
            flags,
            data: data.to_vec(),
        }
    }

    fn frames(first: u64, frames: Vec<Vec<LockstepEntry>>) -> Message {
        Message::LockstepFrames {
            first,
            parts: frames
                .into_iter()
                .map(|entries| FramePart {
                    complete: true,
                    entries,
                })
                .collect(),
        }
    }

    #[test]
    fn inputs_wait_for_the_start_and_stay_within_the_window() {
        let mut c = LockstepClient::default();
        assert_eq!(c.submit(b"x"), Err(SubmitError::NotJoined));
        assert!(c.join());
        assert!(!c.join(), "once");
        assert_eq!(c.submit(b"x"), Err(SubmitError::Wait));
        c.on_message(start(0, 0));
        assert_eq!(
            c.poll_event(),
            Some(LockstepEvent::Started {
                frame: 0,
                first_input: 2
            })
        );
        // Window: frames below confirmed (0) + 4.
        assert_eq!(c.submit(b"a").unwrap().0, 2);
        assert_eq!(c.submit(b"b").unwrap().0, 3);
        assert_eq!(c.submit(b"c"), Err(SubmitError::Wait));
        c.on_message(frames(0, vec![vec![entry(1, ENTRY_JOINED, b"")]]));
        assert_eq!(c.submit(b"c").unwrap().0, 4);
        assert_eq!(
            c.submit(&[0; MAX_LOCKSTEP_INPUT + 1]),
            Err(SubmitError::TooLarge(MAX_LOCKSTEP_INPUT + 1))
        );
        // A resume moves the next input forward, never back.
        c.on_message(Message::LockstepResume { frame: 3 });
        assert_eq!(c.status().next_input, 5);
    }

    #[test]
    fn frames_assemble_from_parts_in_order_and_repeats_are_dropped() {
        let mut c = LockstepClient::default();
        c.join();
        c.on_message(start(0, 0));
        c.on_message(Message::LockstepFrames {
            first: 0,
            parts: vec![
                FramePart {
                    complete: false,
                    entries: vec![entry(1, ENTRY_JOINED, b"a")],
                },
                FramePart {
                    complete: true,
                    entries: vec![entry(2, ENTRY_JOINED, b"b")],
                },
                FramePart {
                    complete: true,
                    entries: vec![entry(1, 0, b"c"), entry(2, 0, b"d")],
                },
            ],
        });
        // A repeat of frame 1 (catch-up overlapping) changes nothing.
        c.on_message(frames(1, vec![vec![entry(1, 0, b"c"), entry(2, 0, b"d")]]));
        let mut got = Vec::new();
        while let Some(item) = c.pop() {
            got.push(item);
        }
        assert_eq!(got.len(), 2);
        assert_eq!(
            got[0],
            LockstepItem::Frame {
                frame: 0,
                inputs: vec![entry(1, ENTRY_JOINED, b"a"), entry(2, ENTRY_JOINED, b"b")]
            }
        );
        assert!(c.taken(1) && !c.taken(2));
        assert_eq!(c.status().next_frame, 2);
    }

    #[test]
    fn unreliable_repeats_fill_gaps_only_where_they_continue() {
        let mut c = LockstepClient::default();
        c.join();
        c.on_message(start(0, 0));
        let frame = |f: u8| vec![entry(1, 0, &[f])];
        let recent = |first: u64, frames: Vec<Vec<LockstepEntry>>| {
            let Message::LockstepFrames { first, parts } = super::tests::frames(first, frames)
            else {
                unreachable!()
            };
            Message::LockstepRecent { first, parts }
        };
        c.on_message(frames(0, vec![frame(0), frame(1)]));
        // Frames 3 and 4 without 2: a gap, not taken.
        c.on_message(recent(3, vec![frame(3), frame(4)]));
        assert_eq!(c.status().confirmed, 2);
        // 1 to 3: continues (1 is a repeat).
        c.on_message(recent(1, vec![frame(1), frame(2), frame(3)]));
        // An old repeat changes nothing; the reliable copies come late.
        c.on_message(recent(0, vec![frame(0)]));
        c.on_message(frames(2, vec![frame(2), frame(3), frame(4)]));
        let mut got = Vec::new();
        while let Some(LockstepItem::Frame { frame, inputs }) = c.pop() {
            got.push((frame, inputs[0].data[0]));
        }
        assert_eq!(got, vec![(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)]);
    }

    #[test]
    fn events_follow_membership_stalls_and_desyncs() {
        let mut c = LockstepClient::default();
        c.join();
        c.on_message(start(0, 0));
        c.poll_event();
        c.on_message(frames(
            0,
            vec![
                vec![entry(1, ENTRY_JOINED, b"")],
                vec![entry(1, 0, b""), entry(2, ENTRY_JOINED, b"")],
                vec![entry(1, 0, b""), entry(2, ENTRY_FILLED, b"")],
                vec![entry(1, 0, b""), entry(2, ENTRY_FILLED, b"")],
                vec![entry(1, 0, b""), entry(2, 0, b"x")],
                vec![entry(2, 0, b"x")],
            ],
        ));
        c.on_message(Message::LockstepDesync {
            frame: 3,
            clients: vec![2],
        });
        c.on_message(Message::LockstepSnapshotWanted);
        let events: Vec<_> = std::iter::from_fn(|| c.poll_event()).collect();
        assert_eq!(
            events,
            vec![
                LockstepEvent::MemberJoined {
                    client: 1,
                    frame: 0
                },
                LockstepEvent::MemberJoined {
                    client: 2,
                    frame: 1
                },
                LockstepEvent::MemberStalled {
                    client: 2,
                    frame: 2
                },
                LockstepEvent::MemberResumed {
                    client: 2,
                    frame: 4
                },
                LockstepEvent::MemberLeft {
                    client: 1,
                    frame: 5
                },
                LockstepEvent::Desync {
                    client: 2,
                    frame: 3
                },
                LockstepEvent::SnapshotWanted,
            ]
        );
    }

    #[test]
    fn a_joiner_gets_the_snapshot_first_then_the_frames_after_it() {
        let mut c = LockstepClient::default();
        c.join();
        c.on_message(Message::LockstepStart(LockstepStart {
            first_frame: 500,
            first_input: 502,
            confirmed: 500,
            input_delay: 2,
            sync_interval: 4,
            history_from: 401,
            snapshot: true,
        }));
        let data: Vec<u8> = (0..2000u32).map(|i| (i * 7) as u8).collect();
        for m in LockstepClient::snapshot_chunks(400, &data).unwrap() {
            let Message::LockstepSnapshotUp(chunk) = m else {
                panic!()
            };
            c.on_message(Message::LockstepSnapshot(chunk));
        }
        c.on_message(frames(401, vec![vec![entry(1, 0, b"")]]));
        assert_eq!(
            c.pop(),
            Some(LockstepItem::Snapshot {
                frame: 400,
                data: data.clone()
            })
        );
        assert!(matches!(
            c.pop(),
            Some(LockstepItem::Frame { frame: 401, .. })
        ));
        // The window counts from what the relay had confirmed at the start.
        assert_eq!(c.submit(b"").unwrap().0, 502);
        assert!(LockstepClient::snapshot_chunks(0, &vec![0; MAX_LOCKSTEP_SNAPSHOT + 1]).is_err());
        assert_eq!(LockstepClient::snapshot_chunks(0, &[]).unwrap().len(), 1);
    }

    #[test]
    fn a_refusal_or_a_restart_says_so_and_resets() {
        let mut c = LockstepClient::default();
        c.join();
        c.on_message(Message::LockstepRefused { reason: 1 });
        assert_eq!(c.state(), LockstepState::Idle);
        assert_eq!(c.poll_event(), Some(LockstepEvent::Refused { reason: 1 }));
        c.join();
        c.on_message(start(0, 0));
        c.on_message(frames(0, vec![vec![entry(1, ENTRY_JOINED, b"")]]));
        c.reconnected();
        assert_eq!(c.submit(b""), Err(SubmitError::Wait));
        c.restarted();
        assert_eq!(c.status().queued, 0);
        assert_eq!(c.status().confirmed, 0);
        assert_eq!(c.state(), LockstepState::Joining);
        // Left before the relay's answer came: the answer is declined.
        assert!(c.leave());
        assert_eq!(c.on_message(start(0, 0)), Some(Outgoing::Leave));
    }
}
