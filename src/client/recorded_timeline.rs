//! The client's timeline, with an optional recording of everything that
//! changes it. Reads go straight through (`Deref`); every change goes
//! through a method here, so a recording cannot miss one, and a replay
//! that applies the entries in order rebuilds the same timeline.

use std::hash::BuildHasher;
use std::ops::Deref;
use std::path::Path;

use super::events::Removal;
use crate::core::app_message::AppMessage;
use crate::core::pose::{Pose, Sample};
use crate::core::timeline::{Shown, Timeline, TimelineError};
use crate::replay::format::{Entry, RecordingKind};
use crate::replay::recorder::Recorder;

pub(crate) struct RecordedTimeline {
    timeline: Timeline,
    recorder: Option<Recorder>,
    /// Engine time of the tick in progress (or the last one): the time
    /// entries are stamped with.
    now: f64,
    /// Last clock offset recorded (bits), to record changes only.
    clock_offset: Option<u64>,
    /// Digest of the last hidden set recorded.
    hidden: Option<u64>,
}

impl Deref for RecordedTimeline {
    type Target = Timeline;

    fn deref(&self) -> &Timeline {
        &self.timeline
    }
}

impl RecordedTimeline {
    pub fn new(timeline: Timeline) -> Self {
        RecordedTimeline {
            timeline,
            recorder: None,
            now: 0.0,
            clock_offset: None,
            hidden: None,
        }
    }

    /// Starts recording to `path` (only before the first tick, so that the
    /// recording holds the timeline's whole history).
    pub fn start_recording(&mut self, path: &Path) -> std::io::Result<()> {
        let mut recorder = Recorder::create(path, RecordingKind::Client)?;
        recorder.log(self.now, &Entry::Config(*self.timeline.config()));
        self.recorder = Some(recorder);
        Ok(())
    }

    pub fn is_recording(&self) -> bool {
        self.recorder.is_some()
    }

    /// Ends the recording, if any, and waits until the file is complete.
    pub fn stop_recording(&mut self) -> Result<(), String> {
        self.recorder.take().map_or(Ok(()), Recorder::finish)
    }

    fn log(&mut self, entry: impl FnOnce() -> Entry) {
        if let Some(r) = &mut self.recorder {
            r.log(self.now, &entry());
        }
    }

    /// A tick at engine time `now` begins.
    pub fn at(&mut self, now: f64) {
        self.now = now;
    }

    pub fn note_identity(&mut self, client_id: u32) {
        self.log(|| Entry::Identity { client_id });
    }

    pub fn note_right(&mut self, entity: u64, holder: u32, epoch: u32) {
        self.log(|| Entry::Right {
            entity,
            holder,
            epoch,
        });
    }

    pub fn note_message(&mut self, message: &AppMessage) {
        self.log(|| Entry::Message(message.clone()));
    }

    /// The entities the client simulates itself (shown from its engine,
    /// not the network); recorded when the set changes.
    pub fn note_hidden<'a>(&mut self, entities: impl Iterator<Item = &'a u64> + Clone) {
        if self.recorder.is_none() {
            return;
        }
        // Order-independent digest: no allocation unless the set changed.
        let state = foldhash::fast::FixedState::default();
        let digest = entities
            .clone()
            .fold(0u64, |acc, e| acc.wrapping_add(state.hash_one(e)));
        if self.hidden != Some(digest) {
            self.hidden = Some(digest);
            let mut list: Vec<u64> = entities.copied().collect();
            list.sort_unstable();
            list.dedup();
            self.log(|| Entry::Hidden(list));
        }
    }

    pub fn push_frame(
        &mut self,
        at: f64,
        vouched: f64,
        samples: &[(u64, Sample)],
    ) -> Result<(), TimelineError> {
        self.log(|| Entry::Frame {
            at,
            vouched,
            samples: samples.to_vec(),
        });
        self.timeline.push_frame(at, vouched, samples)
    }

    pub fn note_loss(&mut self, key: u64, until: f64) {
        self.log(|| Entry::Loss { key, until });
        self.timeline.note_loss(key, until)
    }

    pub fn loss_repaired(&mut self, key: u64) {
        self.log(|| Entry::Repaired { key });
        self.timeline.loss_repaired(key)
    }

    pub fn set_clock_offset(&mut self, offset: f64) -> Result<(), TimelineError> {
        if self.clock_offset != Some(offset.to_bits()) {
            self.clock_offset = Some(offset.to_bits());
            self.log(|| Entry::ClockOffset(offset));
        }
        self.timeline.set_clock_offset(Some(offset))
    }

    pub fn remove(&mut self, entity: u64, reason: Removal) -> Result<(), TimelineError> {
        self.log(|| Entry::Remove {
            entity,
            reason: reason as u32,
        });
        self.timeline.remove(entity)
    }

    pub fn start_from(&mut self, entity: u64, pose: Pose) {
        self.log(|| Entry::StartFrom { entity, pose });
        self.timeline.start_from(entity, pose)
    }

    pub fn record_local(&mut self, entity: u64, sample: Sample) -> Result<(), TimelineError> {
        self.log(|| Entry::Local { entity, sample });
        self.timeline.record_local(entity, sample)
    }

    /// Starts afresh with the same settings (a new relay).
    pub fn reset(&mut self) {
        if let Ok(fresh) = Timeline::new(*self.timeline.config()) {
            self.log(|| Entry::Reset);
            self.timeline = fresh;
            self.clock_offset = None;
        }
    }

    pub fn tick_with<F: FnMut(usize, &Shown)>(
        &mut self,
        now: f64,
        visit: F,
    ) -> Result<usize, TimelineError> {
        self.now = now;
        self.log(|| Entry::Tick);
        self.timeline.tick_with(now, visit)
    }
}
