//! Frame lockstep on the relay (S4, made robust), sans-IO.
//!
//! Members send their input for each frame, at most `sync_interval`
//! frames past the newest confirmed one (the keyframe). A frame is
//! confirmed once every member's input for it is in, and goes to every
//! member in one order; a client only ever simulates confirmed frames.
//! What S4 leaves open, and what this adds:
//!
//! - **input delay**: a member's first `input_delay` frames are empty, so
//!   its input for "now" lands a few frames ahead and the round trip hides;
//! - **stalls**: a frame waits at most `stall_timeout` for a missing
//!   member (counted from its first input); then the member is marked
//!   stalled and its inputs are filled with empty ones, flagged, without
//!   waiting, until it sends again. Its next input brings it back from the
//!   first frame it can still make (`LockstepResume`);
//! - **late join and reconnect**: the joiner gets the last snapshot a
//!   member provided (or none) and every confirmed frame after it (or
//!   since frame 0), paced per send tick, then live frames. A reconnecting
//!   client names the newest frame it has and gets only what follows;
//! - **desync detection**: members may report a hash of their state after
//!   a frame; the first frame whose hashes differ is reported to every
//!   member with the clients outside the majority.
//!
//! Every buffer is bounded: inputs (size, frames ahead), members, history
//! (frames and bytes, kept from the last snapshot), snapshots, hashes.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

use crate::wire::lockstep::{
    FramePacker, FramePart, LockstepEntry, ENTRY_FILLED, ENTRY_JOINED, FRAMES_MESSAGE_LIMIT,
    MAX_LOCKSTEP_MEMBERS, MAX_LOCKSTEP_SNAPSHOT, MAX_REDUNDANT, SNAPSHOT_CHUNK,
};
use crate::wire::message::{lockstep_refusal, LockstepStart, Message, SnapshotChunk};
use crate::wire::quantize::Precision;

/// Reliable messages of catch-up per member per send tick: about 1 000 a
/// second at 30 Hz, far below laminar's 1 024 packets in flight per
/// connection on any round trip under a second.
const CATCH_UP_MESSAGES: usize = 32;
/// Least time between two snapshot requests (s).
const SNAPSHOT_REQUEST_INTERVAL: f64 = 5.0;
/// Confirmed frames repeated unreliably with every live send: a client
/// that lost one reliable message goes on with the next send instead of
/// waiting for laminar to resend it.
const RECENT_FRAMES: usize = 3;

/// Settings of the relay's lockstep match.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LockstepConfig {
    /// Frames between a member's input and the frame it is for.
    pub input_delay: u32,
    /// How far past the newest confirmed frame a member may send input.
    pub sync_interval: u32,
    /// How long a frame waits for a missing member before filling its
    /// input (s).
    pub stall_timeout: f64,
    /// No frame is confirmed before this many members joined.
    pub min_members: u32,
    pub max_members: u32,
    /// Most confirmed frames kept for joiners (after the last snapshot).
    pub history_frames: u32,
    /// Most bytes of confirmed frames kept for joiners.
    pub history_bytes: usize,
    /// How many frames back hashes are compared: a frame is judged when
    /// every member reported, or when it is this far behind.
    pub hash_window: u32,
}

impl Default for LockstepConfig {
    fn default() -> Self {
        LockstepConfig {
            input_delay: 3,
            sync_interval: 30,
            stall_timeout: 1.0,
            min_members: 1,
            max_members: 16,
            history_frames: 36_000,
            history_bytes: 16 << 20,
            hash_window: 600,
        }
    }
}

impl LockstepConfig {
    /// Checks every setting: the error is the setting as the command line
    /// spells it (`lockstep-sync-interval`) and the rule it breaks.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        if !(1..=1024).contains(&self.sync_interval) {
            return Err(("lockstep-sync-interval", "1..=1024 frames"));
        }
        if self.input_delay >= self.sync_interval {
            return Err(("lockstep-input-delay", "below the sync interval (frames)"));
        }
        if !(self.stall_timeout.is_finite() && (0.05..=600.0).contains(&self.stall_timeout)) {
            return Err(("lockstep-stall-timeout", "0.05..=600 s"));
        }
        if !(1..=MAX_LOCKSTEP_MEMBERS as u32).contains(&self.max_members) {
            return Err(("lockstep-max-members", "1..=64"));
        }
        if !(1..=self.max_members).contains(&self.min_members) {
            return Err(("lockstep-min-members", "1..=the most members"));
        }
        if !(1..=10_000_000).contains(&self.history_frames) {
            return Err(("lockstep-history-frames", "1..=10000000"));
        }
        if !(1 << 10..=1 << 30).contains(&self.history_bytes) {
            return Err(("lockstep-history-bytes", "1 KiB..=1 GiB"));
        }
        if !(1..=1_000_000).contains(&self.hash_window) {
            return Err(("lockstep-hash-window", "1..=1000000 frames"));
        }
        Ok(())
    }
}

/// Counters of the match.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LockstepStats {
    pub members: usize,
    /// Frames confirmed so far (the next frame's number).
    pub frames: u64,
    pub joins: u64,
    pub joins_refused: u64,
    pub leaves: u64,
    /// Members marked stalled, and inputs filled because of stalls.
    pub stalls: u64,
    pub filled: u64,
    pub resumes: u64,
    /// Inputs for frames already confirmed (dropped).
    pub late_inputs: u64,
    /// Inputs refused: not a member, past the window or in the delay.
    pub inputs_refused: u64,
    /// Inputs that arrived again (redundant copies).
    pub inputs_repeated: u64,
    /// Confirmed frames sent again because a member said it lacked them.
    pub repairs: u64,
    pub snapshots: u64,
    pub snapshots_refused: u64,
    pub desyncs: u64,
    pub history_frames: u64,
}

/// A joiner's catch-up: the snapshot (if any) and the frames from
/// `next_frame` on, sent a few messages per send tick.
#[derive(Debug)]
struct CatchUp {
    snapshot: Option<(u64, Arc<Vec<u8>>, usize)>,
    next_frame: u64,
}

#[derive(Debug)]
struct Member {
    first_frame: u64,
    /// Frames below this that lack its input are filled with `fill_flags`
    /// instead of waited for (its input delay, a stall, a resume).
    fill_until: u64,
    fill_flags: u8,
    stalled: bool,
    /// None once it receives frames as they are confirmed.
    catch_up: Option<CatchUp>,
}

/// A snapshot being uploaded by a member.
#[derive(Debug)]
struct Upload {
    frame: u64,
    total: u32,
    data: Vec<u8>,
}

/// The relay's one lockstep match.
#[derive(Debug)]
pub struct LockstepMatch {
    config: LockstepConfig,
    precision: Precision,
    members: BTreeMap<u32, Member>,
    /// Gapped joiners waiting for a snapshot, with the frame they have.
    waiting: BTreeMap<u32, Option<u64>>,
    started: bool,
    /// The next frame to confirm (= frames confirmed).
    next: u64,
    /// Inputs of frames `next`, `next + 1` ... by member.
    pending: VecDeque<BTreeMap<u32, Vec<u8>>>,
    /// When the frame `next` got its first input, or became due with one.
    head_since: Option<f64>,
    history: VecDeque<Vec<LockstepEntry>>,
    history_start: u64,
    history_bytes: usize,
    snapshot: Option<(u64, Arc<Vec<u8>>)>,
    uploads: HashMap<u32, Upload>,
    wanted_at: Option<f64>,
    hashes: BTreeMap<u64, Vec<(u32, u64)>>,
    /// Frames below this were judged (or can no longer be).
    judged: u64,
    /// A desync was reported at this frame: judging waits for a snapshot
    /// past it (every later frame would differ too).
    desync_at: Option<u64>,
    out: Vec<(u32, bool, Vec<u8>)>,
    /// What the embedded server is told (drained with the messages).
    notes: Vec<LockstepNote>,
    stats: LockstepStats,
}

/// What the match tells the server's game, besides its clients.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockstepNote {
    /// `client` sent no input for `frame` in time: its input is filled.
    Stalled { client: u32, frame: u64 },
    /// Hashes for `frame` differ: `clients` are outside the majority.
    Desync { frame: u64, clients: Vec<u32> },
}

fn entries_size(entries: &[LockstepEntry]) -> usize {
    entries.iter().map(|e| e.size()).sum::<usize>() + 16
}

impl LockstepMatch {
    pub fn new(config: LockstepConfig, precision: Precision) -> Self {
        LockstepMatch {
            config,
            precision,
            members: BTreeMap::new(),
            waiting: BTreeMap::new(),
            started: false,
            next: 0,
            pending: VecDeque::new(),
            head_since: None,
            history: VecDeque::new(),
            history_start: 0,
            history_bytes: 0,
            snapshot: None,
            uploads: HashMap::new(),
            wanted_at: None,
            hashes: BTreeMap::new(),
            judged: 0,
            desync_at: None,
            out: Vec::new(),
            notes: Vec::new(),
            stats: LockstepStats::default(),
        }
    }

    pub fn config(&self) -> &LockstepConfig {
        &self.config
    }

    pub fn stats(&self) -> LockstepStats {
        LockstepStats {
            members: self.members.len(),
            frames: self.next,
            history_frames: self.history.len() as u64,
            ..self.stats
        }
    }

    /// Messages to send: (client, reliable and ordered, payload).
    pub fn drain(&mut self) -> std::vec::Drain<'_, (u32, bool, Vec<u8>)> {
        self.out.drain(..)
    }

    /// Stalls and desyncs since the last call, for the server's game.
    pub fn drain_notes(&mut self) -> std::vec::Drain<'_, LockstepNote> {
        self.notes.drain(..)
    }

    pub fn is_member(&self, client: u32) -> bool {
        self.members.contains_key(&client)
    }

    fn send(&mut self, client: u32, message: &Message) {
        match message.to_bytes(&self.precision) {
            Ok(payload) => self.out.push((client, true, payload)),
            Err(e) => log::error!(target: "netsync::lockstep", "cannot encode {message:?}: {e:?}"),
        }
    }

    fn broadcast(&mut self, message: &Message) {
        let ids: Vec<u32> = self.members.keys().copied().collect();
        for id in ids {
            self.send(id, message);
        }
    }

    /// `client` asks to join; `have` is the newest frame it has (it was a
    /// member before, on this relay).
    pub fn join(&mut self, client: u32, have: Option<u64>, now: f64) {
        if self.members.contains_key(&client) || self.waiting.contains_key(&client) {
            return;
        }
        if self.members.len() + self.waiting.len() >= self.config.max_members as usize {
            self.stats.joins_refused += 1;
            self.send(
                client,
                &Message::LockstepRefused {
                    reason: lockstep_refusal::FULL,
                },
            );
            return;
        }
        match self.plan(have) {
            Some((snapshot, from)) => self.admit(client, snapshot, from, now),
            None => {
                // The history no longer reaches back far enough: wait for
                // a snapshot, and ask the members for one.
                self.waiting.insert(client, have);
                self.want_snapshot(now);
            }
        }
    }

    /// Where a joiner's catch-up starts: (with the snapshot, first frame).
    fn plan(&self, have: Option<u64>) -> Option<(bool, u64)> {
        let from = match have {
            Some(h) if h < self.next => h + 1,
            _ => 0,
        };
        if from >= self.history_start {
            return Some((false, from));
        }
        match &self.snapshot {
            Some((s, _)) if s + 1 >= self.history_start => Some((true, s + 1)),
            _ => None,
        }
    }

    fn admit(&mut self, client: u32, snapshot: bool, from: u64, now: f64) {
        let first = self.next;
        let d = self.config.input_delay as u64;
        let catch_up = CatchUp {
            snapshot: if snapshot {
                self.snapshot
                    .as_ref()
                    .map(|(frame, data)| (*frame, data.clone(), 0))
            } else {
                None
            },
            next_frame: from,
        };
        let live = catch_up.snapshot.is_none() && from >= self.next;
        self.members.insert(
            client,
            Member {
                first_frame: first,
                fill_until: first + d,
                fill_flags: 0,
                stalled: false,
                catch_up: (!live).then_some(catch_up),
            },
        );
        self.stats.joins += 1;
        log::info!(target: "netsync::lockstep", "client {client} joins the match at frame {first} (catch-up from frame {from}{})", if snapshot { ", with a snapshot" } else { "" });
        self.send(
            client,
            &Message::LockstepStart(LockstepStart {
                first_frame: first,
                first_input: first + d,
                confirmed: self.next,
                input_delay: self.config.input_delay,
                sync_interval: self.config.sync_interval,
                history_from: from,
                snapshot,
            }),
        );
        self.advance(now);
    }

    /// `client` left the match or the relay.
    pub fn leave(&mut self, client: u32, now: f64) {
        self.waiting.remove(&client);
        self.uploads.remove(&client);
        if self.members.remove(&client).is_none() {
            return;
        }
        for p in self.pending.iter_mut() {
            p.remove(&client);
        }
        self.stats.leaves += 1;
        log::info!(target: "netsync::lockstep", "client {client} left the match before frame {}", self.next);
        self.advance(now);
    }

    /// `client`'s input for `frame`.
    pub fn input(&mut self, client: u32, frame: u64, data: Vec<u8>, now: f64) {
        self.take_input(client, frame, data);
        self.advance(now);
    }

    /// `client`'s inputs again (the unreliable copies that make a lost
    /// packet cost nothing), and `need`, the first confirmed frame it lacks
    /// while it saw a later one: what it lacks goes again at once,
    /// unreliably, instead of after laminar's resend.
    pub fn inputs(
        &mut self,
        client: u32,
        need: Option<u64>,
        inputs: Vec<(u64, Vec<u8>)>,
        now: f64,
    ) {
        // Frames confirmed by these very inputs go out live anyway.
        let known = self.next;
        for (frame, data) in inputs {
            self.take_input(client, frame, data);
        }
        self.advance(now);
        let live = self
            .members
            .get(&client)
            .is_some_and(|m| m.catch_up.is_none());
        let Some(need) = need else {
            return;
        };
        if live && need < known && need >= self.history_start {
            self.stats.repairs += 1;
            if let Some(payload) = self.recent(need, MAX_REDUNDANT) {
                self.out.push((client, false, payload));
            }
        }
    }

    /// Confirmed frames from `first` on (at most `count`) as one
    /// unreliable repeat, if they fit one message.
    fn recent(&self, first: u64, count: usize) -> Option<Vec<u8>> {
        let from = first.checked_sub(self.history_start)? as usize;
        let parts: Vec<FramePart> = self
            .history
            .range(from..self.history.len().min(from + count))
            .map(|entries| FramePart {
                complete: true,
                entries: entries.clone(),
            })
            .collect();
        if parts.is_empty() {
            return None;
        }
        let payload = Message::LockstepRecent { first, parts }
            .to_bytes(&self.precision)
            .ok()?;
        (payload.len() <= FRAMES_MESSAGE_LIMIT).then_some(payload)
    }

    fn take_input(&mut self, client: u32, frame: u64, data: Vec<u8>) {
        let (next, d, s) = (
            self.next,
            self.config.input_delay as u64,
            self.config.sync_interval as u64,
        );
        let Some(m) = self.members.get_mut(&client) else {
            self.stats.inputs_refused += 1;
            return;
        };
        if m.stalled {
            // Back from a stall: its input counts again from the first
            // frame it can still reach in time.
            let resume = frame.max(next + d);
            m.stalled = false;
            m.fill_until = resume;
            m.fill_flags = ENTRY_FILLED;
            self.stats.resumes += 1;
            log::info!(target: "netsync::lockstep", "client {client} is back; its input counts again from frame {resume}");
            self.send(client, &Message::LockstepResume { frame: resume });
        }
        let Some(m) = self.members.get(&client) else {
            return;
        };
        if frame < next {
            self.stats.late_inputs += 1;
        } else if frame < m.fill_until || frame >= next + s {
            self.stats.inputs_refused += 1;
        } else {
            let index = (frame - next) as usize;
            while self.pending.len() <= index {
                self.pending.push_back(BTreeMap::new());
            }
            match self.pending[index].entry(client) {
                std::collections::btree_map::Entry::Occupied(_) => self.stats.inputs_repeated += 1,
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(data);
                }
            }
        }
    }

    /// Confirms every frame that can be confirmed at `now`: all inputs in,
    /// or missing members past the stall timeout.
    pub fn advance(&mut self, now: f64) {
        let mut confirmed: Vec<(u64, Vec<LockstepEntry>)> = Vec::new();
        loop {
            if !self.started {
                if self.members.len() < self.config.min_members as usize {
                    break;
                }
                self.started = true;
            }
            if self.members.is_empty() {
                break;
            }
            let f = self.next;
            let head_inputs = self.pending.front().map_or(0, |p| p.len());
            if head_inputs > 0 && self.head_since.is_none() {
                self.head_since = Some(now);
            }
            let head = self.pending.front();
            let missing: Vec<u32> = self
                .members
                .iter()
                .filter(|(id, m)| {
                    m.first_frame <= f
                        && f >= m.fill_until
                        && !head.is_some_and(|p| p.contains_key(id))
                })
                .map(|(&id, _)| id)
                .collect();
            if !missing.is_empty() {
                match self.head_since {
                    Some(since) if now - since >= self.config.stall_timeout => {
                        for id in missing {
                            if let Some(m) = self.members.get_mut(&id) {
                                m.stalled = true;
                                m.fill_until = u64::MAX;
                                m.fill_flags = ENTRY_FILLED;
                            }
                            self.stats.stalls += 1;
                            self.notes.push(LockstepNote::Stalled {
                                client: id,
                                frame: f,
                            });
                            log::warn!(target: "netsync::lockstep", "client {id} sent no input for frame {f} within {} s: filled until it sends again", self.config.stall_timeout);
                        }
                    }
                    _ => break,
                }
            }
            // Only fills of stalled members and nobody playing at all:
            // hold the frame rather than run an empty match.
            let stall_filled = self.members.iter().any(|(id, m)| {
                m.first_frame <= f
                    && m.fill_flags & ENTRY_FILLED != 0
                    && f < m.fill_until
                    && !head.is_some_and(|p| p.contains_key(id))
            });
            let anyone_playing = self.pending.iter().any(|p| !p.is_empty());
            if stall_filled && !anyone_playing {
                break;
            }
            let entries = self.confirm_head();
            confirmed.push((f, entries));
        }
        if !confirmed.is_empty() {
            self.send_live(&confirmed);
            self.judge();
            if self.history.len() * 4 >= self.config.history_frames as usize * 3
                || self.history_bytes * 4 >= self.config.history_bytes * 3
            {
                self.want_snapshot(now);
            }
        }
    }

    /// Confirms frame `next`, keeps it in the history and returns it.
    fn confirm_head(&mut self) -> Vec<LockstepEntry> {
        let f = self.next;
        let mut inputs = self.pending.pop_front().unwrap_or_default();
        let mut entries = Vec::with_capacity(self.members.len());
        for (&id, m) in &self.members {
            if m.first_frame > f {
                continue;
            }
            let joined = if m.first_frame == f { ENTRY_JOINED } else { 0 };
            let entry = match inputs.remove(&id) {
                Some(data) => LockstepEntry {
                    client: id,
                    flags: joined,
                    data,
                },
                None => {
                    let flags = if f < m.fill_until { m.fill_flags } else { 0 };
                    if flags & ENTRY_FILLED != 0 {
                        self.stats.filled += 1;
                    }
                    LockstepEntry {
                        client: id,
                        flags: flags | joined,
                        data: Vec::new(),
                    }
                }
            };
            entries.push(entry);
        }
        self.next += 1;
        self.head_since = None;
        self.history_bytes += entries_size(&entries);
        self.history.push_back(entries.clone());
        self.trim_history(None);
        entries
    }

    /// Drops the oldest frames over the caps, or (`to`) before a snapshot,
    /// never one a member still has to catch up on.
    fn trim_history(&mut self, to: Option<u64>) {
        let keep_from = self
            .members
            .values()
            .filter_map(|m| m.catch_up.as_ref().map(|c| c.next_frame))
            .min()
            .unwrap_or(u64::MAX);
        loop {
            let over = self.history.len() > self.config.history_frames as usize
                || self.history_bytes > self.config.history_bytes
                || to.is_some_and(|t| self.history_start < t);
            if !over || self.history_start >= keep_from {
                break;
            }
            let Some(frame) = self.history.pop_front() else {
                break;
            };
            self.history_bytes -= entries_size(&frame);
            self.history_start += 1;
        }
        // A snapshot is only of use while the frames after it are kept.
        if self
            .snapshot
            .as_ref()
            .is_some_and(|(s, _)| s + 1 < self.history_start)
        {
            self.snapshot = None;
        }
    }

    /// Sends newly confirmed frames to every member that is not catching up.
    fn send_live(&mut self, frames: &[(u64, Vec<LockstepEntry>)]) {
        let live: Vec<u32> = self
            .members
            .iter()
            .filter(|(_, m)| m.catch_up.is_none())
            .map(|(&id, _)| id)
            .collect();
        if live.is_empty() {
            return;
        }
        let mut packer = FramePacker::new();
        for (f, entries) in frames {
            packer.push(*f, entries);
        }
        for (first, parts) in packer.finish() {
            let message = Message::LockstepFrames { first, parts };
            let Ok(payload) = message.to_bytes(&self.precision) else {
                continue;
            };
            for &id in &live {
                self.out.push((id, true, payload.clone()));
            }
        }
        // The newest frames again, unreliably, when they fit one message.
        let count = RECENT_FRAMES.min(self.history.len()) as u64;
        if let Some(payload) = self.recent(self.next - count, count as usize) {
            for &id in &live {
                self.out.push((id, false, payload.clone()));
            }
        }
    }

    /// Once per send tick: the next messages of every member's catch-up.
    pub fn pump(&mut self) {
        let ids: Vec<u32> = self
            .members
            .iter()
            .filter(|(_, m)| m.catch_up.is_some())
            .map(|(&id, _)| id)
            .collect();
        for id in ids {
            self.pump_member(id);
        }
    }

    fn pump_member(&mut self, id: u32) {
        let Some(mut c) = self.members.get_mut(&id).and_then(|m| m.catch_up.take()) else {
            return;
        };
        let mut budget = CATCH_UP_MESSAGES;
        let mut snapshot_sent = false;
        if let Some((frame, data, offset)) = c.snapshot.as_mut() {
            // At least one chunk, even for an empty snapshot.
            while budget > 0 {
                let end = (*offset + SNAPSHOT_CHUNK).min(data.len());
                let chunk = SnapshotChunk {
                    frame: *frame,
                    total: data.len() as u32,
                    offset: *offset as u32,
                    data: data[*offset..end].to_vec(),
                };
                self.out.push((
                    id,
                    true,
                    Message::LockstepSnapshot(chunk)
                        .to_bytes(&self.precision)
                        .unwrap_or_default(),
                ));
                budget -= 1;
                *offset = end;
                if end >= data.len() {
                    snapshot_sent = true;
                    break;
                }
            }
        }
        if snapshot_sent {
            c.snapshot = None;
        }
        if c.snapshot.is_none() && budget > 0 {
            let mut packer = FramePacker::new();
            let mut pushed = 0usize;
            // About fifty small frames fit a message; the budget bounds
            // the messages, not the frames.
            while c.next_frame < self.next && pushed < budget * 64 {
                let index = (c.next_frame - self.history_start) as usize;
                let Some(entries) = self.history.get(index) else {
                    break;
                };
                packer.push(c.next_frame, entries);
                c.next_frame += 1;
                pushed += 1;
            }
            for (first, parts) in packer.finish() {
                self.send(id, &Message::LockstepFrames { first, parts });
            }
        }
        let done = c.snapshot.is_none() && c.next_frame >= self.next;
        if let Some(m) = self.members.get_mut(&id) {
            m.catch_up = (!done).then_some(c);
        }
        // Frames it no longer needs may go now.
        self.trim_history(None);
    }

    /// A chunk of a snapshot from member `client`.
    pub fn snapshot_chunk(&mut self, client: u32, chunk: SnapshotChunk, now: f64) {
        if !self.members.contains_key(&client) {
            self.stats.snapshots_refused += 1;
            return;
        }
        if chunk.offset == 0 {
            let capacity = (chunk.total as usize).min(MAX_LOCKSTEP_SNAPSHOT);
            self.uploads.insert(
                client,
                Upload {
                    frame: chunk.frame,
                    total: chunk.total,
                    data: Vec::with_capacity(capacity),
                },
            );
        }
        let Some(u) = self.uploads.get_mut(&client) else {
            self.stats.snapshots_refused += 1;
            return;
        };
        if u.frame != chunk.frame || u.total != chunk.total || u.data.len() != chunk.offset as usize
        {
            // Out of line (the ordered stream makes this a bug): start over.
            self.uploads.remove(&client);
            self.stats.snapshots_refused += 1;
            return;
        }
        u.data.extend_from_slice(&chunk.data);
        if u.data.len() >= u.total as usize {
            if let Some(u) = self.uploads.remove(&client) {
                self.accept_snapshot(client, u.frame, u.data, now);
            }
        }
    }

    fn accept_snapshot(&mut self, client: u32, frame: u64, data: Vec<u8>, now: f64) {
        let newer = self.snapshot.as_ref().is_none_or(|(s, _)| frame > *s);
        if frame >= self.next || !newer || frame + 1 < self.history_start {
            self.stats.snapshots_refused += 1;
            log::debug!(target: "netsync::lockstep", "snapshot of frame {frame} from client {client} not used (confirmed {}, history from {})", self.next, self.history_start);
            return;
        }
        log::info!(target: "netsync::lockstep", "snapshot of frame {frame} ({} bytes) from client {client}", data.len());
        self.snapshot = Some((frame, Arc::new(data)));
        self.stats.snapshots += 1;
        self.wanted_at = None;
        self.trim_history(Some(frame + 1));
        // Hashes before it no longer matter; after a desync, the match
        // starts over from it.
        if self.desync_at.is_some_and(|d| d <= frame) {
            self.desync_at = None;
        }
        if self.judged <= frame {
            self.judged = frame + 1;
            self.hashes = self.hashes.split_off(&(frame + 1));
        }
        let waiting: Vec<(u32, Option<u64>)> =
            std::mem::take(&mut self.waiting).into_iter().collect();
        for (id, have) in waiting {
            match self.plan(have) {
                Some((snapshot, from)) => self.admit(id, snapshot, from, now),
                None => {
                    self.waiting.insert(id, have);
                }
            }
        }
    }

    fn want_snapshot(&mut self, now: f64) {
        if self
            .wanted_at
            .is_some_and(|t| now - t < SNAPSHOT_REQUEST_INTERVAL)
        {
            return;
        }
        self.wanted_at = Some(now);
        self.broadcast(&Message::LockstepSnapshotWanted);
    }

    /// Member `client`'s hash of its state after `frame`.
    pub fn hash(&mut self, client: u32, frame: u64, hash: u64) {
        let window = self.config.hash_window as u64;
        if !self.members.contains_key(&client)
            || frame >= self.next
            || frame < self.judged
            || frame + window < self.next
        {
            return;
        }
        let reports = self.hashes.entry(frame).or_default();
        if reports.iter().any(|&(c, _)| c == client) {
            return;
        }
        reports.push((client, hash));
        while let Some((&f, _)) = self.hashes.first_key_value() {
            if f + window >= self.next {
                break;
            }
            self.hashes.pop_first();
        }
        self.judge();
    }

    /// Compares the hashes of every frame that can be judged, in order;
    /// reports the first that differs.
    fn judge(&mut self) {
        let window = self.config.hash_window as u64;
        while self.judged < self.next && self.desync_at.is_none() {
            let f = self.judged;
            let expired = f + window < self.next;
            if !expired {
                let Some(reports) = self.hashes.get(&f) else {
                    break;
                };
                // Every member of that frame that is still here reported.
                let Some(entries) = f
                    .checked_sub(self.history_start)
                    .and_then(|i| self.history.get(i as usize))
                else {
                    break;
                };
                let all_in = entries.iter().all(|e| {
                    !self.members.contains_key(&e.client)
                        || reports.iter().any(|&(c, _)| c == e.client)
                });
                if !all_in {
                    break;
                }
            }
            if let Some(reports) = self.hashes.remove(&f) {
                self.compare(f, reports);
            }
            self.judged += 1;
        }
    }

    fn compare(&mut self, frame: u64, reports: Vec<(u32, u64)>) {
        let mut groups: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
        for &(c, h) in &reports {
            groups.entry(h).or_default().push(c);
        }
        if groups.len() < 2 {
            return;
        }
        let largest = groups.values().map(Vec::len).max().unwrap_or(0);
        let majority = (largest * 2 > reports.len())
            .then(|| groups.values().find(|g| g.len() == largest).cloned())
            .flatten()
            .unwrap_or_default();
        let mut clients: Vec<u32> = reports
            .iter()
            .map(|&(c, _)| c)
            .filter(|c| !majority.contains(c))
            .collect();
        clients.sort_unstable();
        self.stats.desyncs += 1;
        self.desync_at = Some(frame);
        log::warn!(target: "netsync::lockstep", "desync at frame {frame}: clients {clients:?} differ");
        self.notes.push(LockstepNote::Desync {
            frame,
            clients: clients.clone(),
        });
        self.broadcast(&Message::LockstepDesync { frame, clients });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> LockstepConfig {
        LockstepConfig {
            input_delay: 2,
            sync_interval: 8,
            stall_timeout: 1.0,
            ..Default::default()
        }
    }

    /// Two members start together.
    fn together() -> LockstepConfig {
        LockstepConfig {
            min_members: 2,
            ..config()
        }
    }

    /// Every message out, decoded, per client.
    fn out(m: &mut LockstepMatch) -> Vec<(u32, Message)> {
        let p = Precision::default();
        m.drain()
            .filter(|(_, reliable, _)| *reliable)
            .map(|(c, _, b)| (c, Message::decode(&b, &p).unwrap()))
            .collect()
    }

    /// Confirmed frames a client received: (frame, entries).
    fn frames_of(messages: &[(u32, Message)], client: u32) -> Vec<(u64, Vec<LockstepEntry>)> {
        let mut frames = Vec::new();
        let mut partial: Vec<LockstepEntry> = Vec::new();
        for (c, m) in messages {
            if *c != client {
                continue;
            }
            if let Message::LockstepFrames { first, parts } = m {
                let mut f = *first;
                for p in parts {
                    partial.extend(p.entries.iter().cloned());
                    if p.complete {
                        frames.push((f, std::mem::take(&mut partial)));
                        f += 1;
                    }
                }
            }
        }
        frames
    }

    #[test]
    fn frames_confirm_when_every_member_sent_and_delay_frames_are_empty() {
        let mut m = LockstepMatch::new(together(), Precision::default());
        m.join(1, None, 0.0);
        let mut start = out(&mut m);
        assert!(frames_of(&start, 1).is_empty(), "waits for two members");
        m.join(2, None, 0.0);
        start.extend(out(&mut m));
        assert!(start.contains(&(
            1,
            Message::LockstepStart(LockstepStart {
                first_frame: 0,
                first_input: 2,
                confirmed: 0,
                input_delay: 2,
                sync_interval: 8,
                history_from: 0,
                snapshot: false,
            })
        )));
        // Frames 0 and 1 are the input delay: empty for both, at once.
        let f = frames_of(&start, 1);
        assert_eq!(f, frames_of(&start, 2), "everyone gets the same frames");
        assert_eq!(f.len(), 2);
        assert_eq!(
            f[0].1[0],
            LockstepEntry {
                client: 1,
                flags: ENTRY_JOINED,
                data: vec![]
            }
        );
        // Frame 2 needs both.
        m.input(1, 2, b"a2".to_vec(), 0.1);
        assert!(out(&mut m).is_empty());
        m.input(2, 2, b"b2".to_vec(), 0.1);
        let got = out(&mut m);
        let f = frames_of(&got, 2);
        assert_eq!(f, frames_of(&got, 1));
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].0, &f[0].1[0].data, &f[0].1[1].data),
            (2, &b"a2".to_vec(), &b"b2".to_vec())
        );
        // Inputs ahead of the other member's wait in order.
        m.input(2, 3, b"b3".to_vec(), 0.2);
        m.input(2, 4, b"b4".to_vec(), 0.2);
        assert!(out(&mut m).is_empty());
        m.input(1, 3, b"a3".to_vec(), 0.2);
        m.input(1, 4, b"a4".to_vec(), 0.2);
        let f = frames_of(&out(&mut m), 1);
        assert_eq!(f.iter().map(|x| x.0).collect::<Vec<_>>(), vec![3, 4]);
        assert_eq!(m.stats().frames, 5);
    }

    #[test]
    fn inputs_past_the_window_late_or_repeated_are_refused() {
        let mut m = LockstepMatch::new(config(), Precision::default());
        m.join(1, None, 0.0);
        out(&mut m);
        // Frames 0, 1 confirmed (delay): window is frames 2..=9.
        m.input(1, 10, vec![], 0.0);
        assert_eq!(m.stats().inputs_refused, 1);
        m.input(1, 1, vec![], 0.0);
        assert_eq!(m.stats().late_inputs, 1);
        m.input(9, 2, vec![], 0.0);
        assert_eq!(m.stats().inputs_refused, 2, "not a member");
        m.input(1, 3, vec![1], 0.0);
        m.input(1, 3, vec![2], 0.0);
        assert_eq!(m.stats().inputs_repeated, 1);
        m.input(1, 2, vec![], 0.0);
        assert_eq!(m.stats().frames, 4);
    }

    #[test]
    fn a_stalled_member_is_filled_and_comes_back_by_resume() {
        let mut m = LockstepMatch::new(together(), Precision::default());
        m.join(1, None, 0.0);
        m.join(2, None, 0.0);
        // Both play frames 2..=3; then 2 stops.
        for f in 2..4 {
            m.input(1, f, vec![1], 0.0);
            m.input(2, f, vec![2], 0.0);
        }
        out(&mut m);
        m.input(1, 4, vec![1], 1.0);
        m.advance(1.9);
        assert!(
            frames_of(&out(&mut m), 1).is_empty(),
            "waits before the timeout"
        );
        m.advance(2.0);
        let f = frames_of(&out(&mut m), 1);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].1[1].flags, ENTRY_FILLED);
        assert_eq!(m.stats().stalls, 1);
        // From now on no waiting for it.
        for f in 5..9 {
            m.input(1, f, vec![1], 2.1);
        }
        let f = frames_of(&out(&mut m), 1);
        assert_eq!(f.len(), 4);
        assert!(f.iter().all(|(_, e)| e[1].flags == ENTRY_FILLED));
        assert_eq!(m.stats().filled, 5);
        // It sends a late input: told to resume at 9 + delay 2 = 11.
        m.input(2, 5, vec![2], 2.2);
        let got = out(&mut m);
        assert!(got.contains(&(2, Message::LockstepResume { frame: 11 })));
        // Frames 9, 10 are still filled; 11 waits for it.
        m.input(1, 9, vec![1], 2.3);
        m.input(1, 10, vec![1], 2.3);
        m.input(1, 11, vec![1], 2.3);
        let f = frames_of(&out(&mut m), 1);
        assert_eq!(f.iter().map(|x| x.0).collect::<Vec<_>>(), vec![9, 10]);
        m.input(2, 11, vec![2], 2.4);
        let f = frames_of(&out(&mut m), 1);
        assert_eq!(
            f[0].1[1],
            LockstepEntry {
                client: 2,
                flags: 0,
                data: vec![2]
            }
        );
    }

    #[test]
    fn repeated_inputs_count_once_and_a_member_that_lacks_frames_gets_them_again() {
        let mut m = LockstepMatch::new(config(), Precision::default());
        m.join(1, None, 0.0);
        m.drain();
        m.inputs(1, None, vec![(2, vec![1]), (3, vec![2])], 0.0);
        m.inputs(1, Some(4), vec![(3, vec![9]), (4, vec![3])], 0.0);
        assert_eq!(m.stats().frames, 5);
        assert_eq!(m.stats().inputs_repeated, 0, "3 was confirmed: late");
        assert_eq!(m.stats().late_inputs, 1);
        // It says it lacks frames from 1 on: they go again, unreliably.
        m.drain();
        m.inputs(1, Some(1), vec![], 0.1);
        let p = Precision::default();
        let repairs: Vec<Message> = m
            .drain()
            .filter(|(_, reliable, _)| !reliable)
            .map(|(_, _, b)| Message::decode(&b, &p).unwrap())
            .collect();
        let Some(Message::LockstepRecent { first: 1, parts }) = repairs.first() else {
            panic!("{repairs:?}")
        };
        assert_eq!(parts.len(), 4);
        assert_eq!(parts[1].entries[0].data, vec![1]);
        assert_eq!(m.stats().repairs, 1);
    }

    #[test]
    fn nobody_playing_holds_the_match_and_leavers_release_it() {
        let mut m = LockstepMatch::new(together(), Precision::default());
        m.join(1, None, 0.0);
        m.join(2, None, 0.0);
        for f in 2..5 {
            m.input(1, f, vec![1], 0.0);
        }
        m.advance(5.0); // 2 stalls at frame 2
        assert_eq!((m.stats().stalls, m.stats().frames), (1, 5));
        // 1 leaves, 3 joins: its delay frames and 2's fills are nobody
        // playing, so they wait for 3's first input.
        m.leave(1, 5.0);
        m.join(3, None, 5.0);
        m.advance(20.0);
        assert_eq!(m.stats().frames, 5, "no frames run on empty");
        m.input(3, 7, vec![3], 20.0);
        m.pump();
        let f = frames_of(&out(&mut m), 3);
        assert_eq!(
            f.iter().map(|x| x.0).collect::<Vec<_>>(),
            (0..8).collect::<Vec<_>>()
        );
        assert_eq!(
            f[7].1,
            vec![
                LockstepEntry {
                    client: 2,
                    flags: ENTRY_FILLED,
                    data: vec![]
                },
                LockstepEntry {
                    client: 3,
                    flags: 0,
                    data: vec![3]
                },
            ]
        );
        m.leave(2, 20.0);
        m.input(3, 8, vec![3], 20.0);
        let f = frames_of(&out(&mut m), 3);
        assert_eq!(f[0].1.len(), 1);
        assert_eq!(m.stats().members, 1);
    }

    #[test]
    fn a_late_joiner_catches_up_from_frame_zero_then_from_a_snapshot() {
        let mut m = LockstepMatch::new(config(), Precision::default());
        m.join(1, None, 0.0);
        for f in 2..3000 {
            m.input(1, f, vec![f as u8; 10], 0.0);
        }
        out(&mut m);
        m.join(2, None, 1.0);
        let got = out(&mut m);
        let Some((_, Message::LockstepStart(s))) = got.first() else {
            panic!("{got:?}")
        };
        assert_eq!(
            (s.first_frame, s.history_from, s.snapshot),
            (3000, 0, false)
        );
        // Paced: one pump sends a part of the history, within its budget.
        m.pump();
        let first = out(&mut m);
        assert!(first.len() <= CATCH_UP_MESSAGES + 1, "{}", first.len());
        let mut seen = frames_of(&first, 2);
        assert!(!seen.is_empty() && seen.len() < 3000);
        while seen.len() < 3000 {
            m.pump();
            let more = frames_of(&out(&mut m), 2);
            assert!(!more.is_empty());
            seen.extend(more);
        }
        assert_eq!(
            seen.iter().map(|f| f.0).collect::<Vec<_>>(),
            (0..3000).collect::<Vec<_>>()
        );
        assert_eq!(seen[100].1[0].data, vec![100u8; 10]);
        // Live from now on, with the joiner in the frame.
        m.input(1, 3000, vec![1], 1.1);
        m.input(1, 3001, vec![1], 1.1);
        m.input(2, 3002, vec![2], 1.1);
        m.input(1, 3002, vec![1], 1.1);
        let f = frames_of(&out(&mut m), 2);
        assert_eq!(
            f.iter().map(|x| x.0).collect::<Vec<_>>(),
            vec![3000, 3001, 3002]
        );
        // A snapshot of frame 2950 in two chunks: history before it goes.
        let data: Vec<u8> = (0..1500u32).map(|i| i as u8).collect();
        m.snapshot_chunk(
            1,
            SnapshotChunk {
                frame: 2950,
                total: 1500,
                offset: 0,
                data: data[..960].to_vec(),
            },
            2.0,
        );
        m.snapshot_chunk(
            1,
            SnapshotChunk {
                frame: 2950,
                total: 1500,
                offset: 960,
                data: data[960..].to_vec(),
            },
            2.0,
        );
        assert_eq!(m.stats().snapshots, 1);
        assert_eq!(m.history_start, 2951);
        m.join(3, None, 2.0);
        for _ in 0..5 {
            m.pump();
        }
        let got = out(&mut m);
        let mut snapshot: Vec<u8> = Vec::new();
        for (c, msg) in &got {
            if let (3, Message::LockstepSnapshot(chunk)) = (c, msg) {
                assert_eq!(chunk.frame, 2950);
                assert_eq!(chunk.offset as usize, snapshot.len());
                snapshot.extend(&chunk.data);
            }
        }
        assert_eq!(snapshot, data);
        let f = frames_of(&got, 3);
        assert_eq!(f.first().unwrap().0, 2951);
        assert_eq!(f.last().unwrap().0, 3002);
        // A reconnecting member names its newest frame: only what follows.
        m.join(4, Some(2999), 2.0);
        m.pump();
        let got = out(&mut m);
        let f = frames_of(&got, 4);
        assert_eq!(
            f.iter().map(|x| x.0).collect::<Vec<_>>(),
            vec![3000, 3001, 3002]
        );
    }

    #[test]
    fn a_capped_history_asks_for_a_snapshot_and_a_joiner_waits_for_it() {
        let mut m = LockstepMatch::new(
            LockstepConfig {
                history_frames: 40,
                ..config()
            },
            Precision::default(),
        );
        m.join(1, None, 0.0);
        for f in 2..100 {
            m.input(1, f, vec![], 0.0);
        }
        let got = out(&mut m);
        assert!(got.contains(&(1, Message::LockstepSnapshotWanted)));
        assert_eq!(m.history.len(), 40);
        m.join(2, None, 10.0);
        let got = out(&mut m);
        assert!(!got.iter().any(|(c, _)| *c == 2), "waits");
        assert!(got.contains(&(1, Message::LockstepSnapshotWanted)));
        m.snapshot_chunk(
            1,
            SnapshotChunk {
                frame: 99,
                total: 3,
                offset: 0,
                data: vec![1, 2, 3],
            },
            10.0,
        );
        let got = out(&mut m);
        assert!(matches!(
            got[0],
            (
                2,
                Message::LockstepStart(LockstepStart {
                    snapshot: true,
                    history_from: 100,
                    ..
                })
            )
        ));
        // Members over the cap are refused.
        let mut small = LockstepMatch::new(
            LockstepConfig {
                max_members: 1,
                min_members: 1,
                ..config()
            },
            Precision::default(),
        );
        small.join(1, None, 0.0);
        small.join(2, None, 0.0);
        assert!(out(&mut small).contains(&(
            2,
            Message::LockstepRefused {
                reason: lockstep_refusal::FULL
            }
        )));
    }

    #[test]
    fn the_first_differing_frame_is_reported_with_the_minority() {
        let mut m = LockstepMatch::new(config(), Precision::default());
        for c in 1..=3 {
            m.join(c, None, 0.0);
        }
        for f in 2..30 {
            for c in 1..=3 {
                m.input(c, f, vec![c as u8], 0.0);
            }
        }
        out(&mut m);
        for f in 0..30 {
            for c in 1..=3 {
                let wrong = c == 3 && f >= 17;
                m.hash(c, f, if wrong { 99 } else { f });
            }
        }
        let got = out(&mut m);
        let desyncs: Vec<_> = got
            .iter()
            .filter(|(c, msg)| *c == 1 && matches!(msg, Message::LockstepDesync { .. }))
            .collect();
        assert_eq!(
            desyncs,
            vec![&(
                1,
                Message::LockstepDesync {
                    frame: 17,
                    clients: vec![3]
                }
            )],
            "once, at the first frame"
        );
        // Two members that disagree: both are named.
        let mut m = LockstepMatch::new(config(), Precision::default());
        m.join(1, None, 0.0);
        m.join(2, None, 0.0);
        for f in 2..5 {
            m.input(1, f, vec![], 0.0);
            m.input(2, f, vec![], 0.0);
        }
        out(&mut m);
        m.hash(1, 3, 1);
        m.hash(2, 3, 2);
        // Frame 3 waits for frames 0..=2 to be judged: reports for them
        // never come, so it is judged once they fall out of the window.
        assert!(out(&mut m).is_empty());
        for f in 0..3 {
            m.hash(1, f, 0);
            m.hash(2, f, 0);
        }
        assert!(out(&mut m).contains(&(
            1,
            Message::LockstepDesync {
                frame: 3,
                clients: vec![1, 2]
            }
        )));
    }

    #[test]
    fn settings_out_of_range_are_named() {
        assert!(LockstepConfig::default().validate().is_ok());
        let bad = [
            LockstepConfig {
                sync_interval: 0,
                ..Default::default()
            },
            LockstepConfig {
                input_delay: 30,
                ..Default::default()
            },
            LockstepConfig {
                stall_timeout: f64::NAN,
                ..Default::default()
            },
            LockstepConfig {
                max_members: 65,
                ..Default::default()
            },
            LockstepConfig {
                min_members: 17,
                ..Default::default()
            },
            LockstepConfig {
                history_frames: 0,
                ..Default::default()
            },
        ];
        for c in bad {
            assert!(
                c.validate().unwrap_err().0.starts_with("lockstep-"),
                "{c:?}"
            );
        }
    }
}
