//! Plays a recording back through a timeline, like a live client: the
//! recorded entries go into a fresh [`Timeline`] in order, and ticking at
//! a recorded tick time gives exactly the transforms the live client got
//! at that time. Between recorded ticks, or at another speed, the
//! timeline interpolates as it would live.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::format::{read_recording, Entry, Recording, RecordingKind, ReplayError};
use crate::core::timeline::{Shown, Timeline, TimelineConfig};

/// Fastest playback speed.
pub const MAX_SPEED: f64 = 100.0;

/// What a recording holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub kind: RecordingKind,
    /// Id the relay gave the recording client (0: relay or never connected).
    pub client_id: u32,
    /// Times of the first and last entries.
    pub start: f64,
    pub end: f64,
    pub entries: u64,
    /// Entries per type name.
    pub by_type: BTreeMap<&'static str, u64>,
    /// Entities with at least one state.
    pub entities: u64,
    pub file_bytes: u64,
    pub raw_bytes: u64,
    pub blocks: u64,
}

/// A recording being played.
pub struct Player {
    entries: Vec<(f64, Entry)>,
    summary: Summary,
    state: Replayed,
    /// Next entry to apply.
    next: usize,
    /// Recording time of the last tick.
    position: Option<f64>,
    speed: f64,
    /// (engine time, recording time) the engine clock is mapped from.
    anchor: Option<(f64, f64)>,
    last_now: Option<f64>,
    seek_to: Option<f64>,
}

/// What the entries build up: the timeline and what the client did not
/// show from it. (Apart from the entries, so that applying one borrows
/// it instead of copying it.)
struct Replayed {
    timeline: Timeline,
    hidden: HashSet<u64>,
    rights: HashMap<u64, (u32, u32)>,
}

impl std::fmt::Debug for Player {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Player")
            .field("summary", &self.summary)
            .field("position", &self.position)
            .finish()
    }
}

impl Player {
    /// Opens the recording at `path`.
    pub fn open(path: &std::path::Path) -> Result<Player, ReplayError> {
        let bytes =
            std::fs::read(path).map_err(|e| ReplayError::Io(format!("{}: {e}", path.display())))?;
        Player::from_bytes(&bytes)
    }

    /// Opens a recording held in memory.
    pub fn from_bytes(bytes: &[u8]) -> Result<Player, ReplayError> {
        Ok(Player::new(read_recording(bytes)?))
    }

    fn new(recording: Recording) -> Player {
        let mut by_type = BTreeMap::new();
        let mut entities = HashSet::new();
        let mut client_id = 0;
        for (_, e) in &recording.entries {
            *by_type.entry(e.name()).or_insert(0) += 1;
            match e {
                Entry::Frame { samples, .. } => entities.extend(samples.iter().map(|s| s.0)),
                Entry::Identity { client_id: id } if client_id == 0 => client_id = *id,
                _ => {}
            }
        }
        let summary = Summary {
            kind: recording.kind,
            client_id,
            start: recording.entries.first().map_or(0.0, |e| e.0),
            end: recording.entries.last().map_or(0.0, |e| e.0),
            entries: recording.entries.len() as u64,
            by_type,
            entities: entities.len() as u64,
            file_bytes: recording.file_bytes,
            raw_bytes: recording.raw_bytes,
            blocks: recording.blocks,
        };
        Player {
            entries: recording.entries,
            summary,
            state: Replayed {
                timeline: fresh_timeline(TimelineConfig::default()),
                hidden: HashSet::new(),
                rights: HashMap::new(),
            },
            next: 0,
            position: None,
            speed: 1.0,
            anchor: None,
            last_now: None,
            seek_to: None,
        }
    }

    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// Recording time of the last tick.
    pub fn position(&self) -> Option<f64> {
        self.position
    }

    /// Recorded ticks: the times a live client ticked at.
    pub fn tick_times(&self) -> impl Iterator<Item = f64> + '_ {
        self.entries
            .iter()
            .filter(|(_, e)| matches!(e, Entry::Tick))
            .map(|(t, _)| *t)
    }

    /// Holder and epoch of `entity`'s send right as of the last tick.
    pub fn right(&self, entity: u64) -> Option<(u32, u32)> {
        self.state.rights.get(&entity).copied()
    }

    /// Server time the timeline showed at the last tick.
    pub fn render_time(&self) -> f64 {
        let timeline = &self.state.timeline;
        timeline.render_time(timeline.config().mode)
    }

    /// Shows the recording at recording time `time` (the live client's
    /// engine clock), visiting every entity the live client showed from
    /// the network.
    pub fn tick_at<F: FnMut(usize, &Shown)>(
        &mut self,
        time: f64,
        mut visit: F,
    ) -> Result<usize, String> {
        if !time.is_finite() {
            return Err("time must be finite".into());
        }
        if self.position.is_some_and(|p| time < p) {
            self.rewind();
        }
        while let Some((t, entry)) = self.entries.get(self.next) {
            if *t > time {
                break;
            }
            self.next += 1;
            if matches!(entry, Entry::Tick) {
                if *t == time {
                    // The live tick at this time: the one we do below.
                    break;
                }
                let _ = self.state.timeline.tick_with(*t, |_, _| {});
                continue;
            }
            self.state.apply(entry);
        }
        let hidden = &self.state.hidden;
        let mut shown = 0;
        self.state
            .timeline
            .tick_with(time, |_, s| {
                if !hidden.contains(&s.entity) {
                    visit(shown, s);
                    shown += 1;
                }
            })
            .map_err(|e| e.to_string())?;
        self.position = Some(time);
        Ok(shown)
    }

    /// Shows the recording at engine time `now`: the first tick (and the
    /// first after a seek) starts playing there, then the recording runs
    /// at the set speed.
    pub fn tick<F: FnMut(usize, &Shown)>(&mut self, now: f64, visit: F) -> Result<usize, String> {
        if !now.is_finite() {
            return Err("now must be finite".into());
        }
        if let Some(target) = self.seek_to.take() {
            self.anchor = Some((now, target));
        }
        let (n0, r0) = *self.anchor.get_or_insert((now, self.summary.start));
        self.last_now = Some(now);
        self.tick_at(r0 + (now - n0) * self.speed, visit)
    }

    /// The next [`Player::tick`] shows recording time `time`.
    pub fn seek(&mut self, time: f64) -> Result<(), String> {
        if !time.is_finite() {
            return Err("seek time must be finite".into());
        }
        self.seek_to = Some(time);
        Ok(())
    }

    /// Plays on at `speed` times real time (0 pauses) from where it is.
    pub fn set_speed(&mut self, speed: f64) -> Result<(), String> {
        if !(speed.is_finite() && (0.0..=MAX_SPEED).contains(&speed)) {
            return Err(format!("speed must be in 0..={MAX_SPEED} (got {speed})"));
        }
        if let (Some((n0, r0)), Some(now)) = (self.anchor, self.last_now) {
            self.anchor = Some((now, r0 + (now - n0) * self.speed));
        }
        self.speed = speed;
        Ok(())
    }

    fn rewind(&mut self) {
        let s = &mut self.state;
        s.timeline = fresh_timeline(*s.timeline.config());
        s.hidden.clear();
        s.rights.clear();
        self.next = 0;
        self.position = None;
    }
}

impl Replayed {
    fn apply(&mut self, entry: &Entry) {
        let tl = &mut self.timeline;
        match entry {
            Entry::Config(c) => self.timeline = fresh_timeline(*c),
            Entry::Frame {
                at,
                vouched,
                samples,
            } => {
                let _ = tl.push_frame(*at, *vouched, samples);
            }
            Entry::Loss { key, until } => tl.note_loss(*key, *until),
            Entry::Repaired { key } => tl.loss_repaired(*key),
            Entry::ClockOffset(o) => {
                let _ = tl.set_clock_offset(Some(*o));
            }
            Entry::Remove { entity, .. } => {
                let _ = tl.remove(*entity);
            }
            Entry::StartFrom { entity, pose } => tl.start_from(*entity, *pose),
            Entry::Local { entity, sample } => {
                let _ = tl.record_local(*entity, *sample);
            }
            Entry::Reset => self.timeline = fresh_timeline(*tl.config()),
            Entry::Hidden(entities) => self.hidden = entities.iter().copied().collect(),
            Entry::Right {
                entity,
                holder,
                epoch,
            } => {
                self.rights.insert(*entity, (*holder, *epoch));
            }
            Entry::Identity { .. } | Entry::Tick | Entry::Message(_) => {}
        }
    }
}

/// A timeline with `config` (read back validated, so it cannot fail;
/// the default stands in if it somehow does).
fn fresh_timeline(config: TimelineConfig) -> Timeline {
    Timeline::new(config)
        .or_else(|_| Timeline::new(TimelineConfig::default()))
        .expect("the default timeline config is valid")
}
