//! The timeline: per-entity sample buffers keyed by server time, the render
//! clocks of every mode, and the batch read that an engine calls once per
//! frame.
//!
//! Input is frames: `push_frame(now, server_time, samples)` says that a
//! snapshot stamped `server_time` arrived at client time `now` carrying
//! `samples`. Entities missing from a frame are taken as unchanged: their
//! sender's dead reckoning still holds (send on change), so they are not
//! counted as extrapolated until the render time passes the newest frame.

mod arrival_clock;
mod config;
mod delay_estimator;
mod render_clock;
mod track;

use std::collections::HashMap;
use std::fmt;

pub use arrival_clock::ArrivalClock;
pub use config::{Mode, TimelineConfig};
pub use delay_estimator::{smallest_delay_within, DelayEstimator};
pub use render_clock::{BufferedClock, Ema, LiteralClock, SlewedClock};
pub use track::shown_flags;

use crate::core::pose::{Pose, Sample};
use track::{Inserted, ReadContext, Track, LOSS_HOLES};

/// Most a sample's own time may differ from its frame's (relayed frames
/// mix owners whose states were true at different times).
pub const MAX_SAMPLE_SKEW: f64 = 10.0;
/// Longest gap in one entity's stream the adaptive delay covers, in
/// frame intervals.
const LOSS_GAP_FRAMES: f64 = 3.0;

/// Whether an entity moved between two of its samples (or was moving):
/// only then is a gap in its stream worth covering with delay.
fn moved(before: &Sample, after: &Sample) -> bool {
    const SPEED: f32 = 0.05; // m/s
    const SPIN: f32 = 0.05; // rad/s
    const DISTANCE: f32 = 0.01; // m
    before.velocity.length() > SPEED
        || before.angular_velocity.length() > SPIN
        || before.pose.position.distance(after.pose.position) > DISTANCE
}

/// One entity's pose for this frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shown {
    pub entity: u64,
    pub pose: Pose,
    /// Bits of [`shown_flags`].
    pub flags: u32,
}

/// What one frame's samples are inserted with.
#[derive(Clone, Copy, Debug)]
struct FrameArrival {
    /// Client time of arrival.
    now: f64,
    /// Clock offset in use (`server - client`).
    offset: f64,
    /// Newest frame time seen before this frame.
    coverage_before: f64,
}

/// Why a timeline call was refused. Nothing changed when it is returned.
#[derive(Clone, Debug, PartialEq)]
pub enum TimelineError {
    /// A number was not finite, a rotation degenerate, or a flag unknown.
    InvalidSample { entity: u64, reason: &'static str },
    /// `now` or a server time was not finite.
    InvalidTime(&'static str),
    /// `tick` was called with a time before the previous tick.
    TimeWentBackwards { previous: f64, now: f64 },
    /// The frame would exceed `max_entities`.
    TooManyEntities { limit: usize },
    /// No entity with that id.
    UnknownEntity(u64),
}

impl fmt::Display for TimelineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimelineError::InvalidSample { entity, reason } => {
                write!(f, "invalid sample for entity {entity}: {reason}")
            }
            TimelineError::InvalidTime(what) => write!(f, "{what} is not a finite number"),
            TimelineError::TimeWentBackwards { previous, now } => write!(
                f,
                "tick time went backwards: {now} after {previous}; pass a monotonic clock"
            ),
            TimelineError::TooManyEntities { limit } => {
                write!(f, "the timeline holds at most {limit} entities")
            }
            TimelineError::UnknownEntity(id) => write!(f, "no entity {id} on this timeline"),
        }
    }
}

impl std::error::Error for TimelineError {}

/// Counters and current estimates.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TimelineStats {
    pub entities: usize,
    pub frames: u64,
    pub frames_out_of_order: u64,
    pub samples: u64,
    pub samples_duplicate: u64,
    pub samples_too_old: u64,
    /// Samples that arrived after a gap in their entity's stream.
    pub sample_gaps: u64,
    /// Estimated `server_time - client_time` of the freshest data.
    pub clock_offset: f64,
    /// Adaptive mode's target delay behind that clock.
    pub target_delay: f64,
    /// Adaptive mode's current delay behind that clock.
    pub render_delay: f64,
    /// Adaptive render clock speed (1 = real time).
    pub time_scale: f64,
    /// Hard resyncs of the adaptive and fixed render clocks.
    pub resyncs: u64,
    /// Estimated interval between server frames.
    pub frame_interval: f64,
}

fn validate(sample: &Sample) -> Result<(), &'static str> {
    if !sample.pose.position.is_finite() {
        return Err("position is not finite");
    }
    if !sample.pose.rotation.is_finite() || sample.pose.rotation.length_squared() < 1e-12 {
        return Err("rotation is not a finite, non-zero quaternion");
    }
    if !sample.velocity.is_finite() || !sample.angular_velocity.is_finite() {
        return Err("velocity is not finite");
    }
    // NEW_SOURCE comes from the network client (a new holder's state).
    use crate::core::pose::SampleFlags;
    if sample.flags.0 & !(SampleFlags::ALL | SampleFlags::NEW_SOURCE) != 0 {
        return Err("unknown flag bits");
    }
    Ok(())
}

/// The client-side timeline of every remote entity.
pub struct Timeline {
    config: TimelineConfig,
    tracks: Vec<Track>,
    index: HashMap<u64, usize>,
    arrival: ArrivalClock,
    delay: DelayEstimator,
    adaptive_clock: SlewedClock,
    fixed_clock: SlewedClock,
    literal_clock: LiteralClock,
    buffered_clock: BufferedClock,
    newest_frame: Option<f64>,
    /// Newest frame times before recent losses ([`Timeline::note_loss`]),
    /// and the client times they are repaired by.
    holes: [f64; LOSS_HOLES],
    hole_ends: [f64; LOSS_HOLES],
    hole_keys: [u64; LOSS_HOLES],
    frame_interval: Option<f64>,
    /// `server - client` from a better source (ping/pong), when known.
    external_offset: Option<f64>,
    last_tick: Option<f64>,
    render: [f64; 5],
    stats: TimelineStats,
}

impl Timeline {
    /// A timeline with `config`, which must validate.
    pub fn new(config: TimelineConfig) -> Result<Self, String> {
        config.validate()?;
        Ok(Timeline {
            config,
            tracks: Vec::new(),
            index: HashMap::new(),
            arrival: ArrivalClock::new(config.estimate_window),
            delay: DelayEstimator::new(config.estimate_window, config.extrapolation_budget),
            adaptive_clock: SlewedClock::default(),
            fixed_clock: SlewedClock::default(),
            literal_clock: LiteralClock::new(config.literal_frames, config.literal_initial_delay),
            buffered_clock: BufferedClock::new(
                config.buffered_multiplier,
                config.buffered_time_scale,
            ),
            newest_frame: None,
            holes: [f64::NEG_INFINITY; LOSS_HOLES],
            hole_ends: [f64::NEG_INFINITY; LOSS_HOLES],
            hole_keys: [u64::MAX; LOSS_HOLES],
            frame_interval: None,
            external_offset: None,
            last_tick: None,
            render: [0.0; 5],
            stats: TimelineStats::default(),
        })
    }

    pub fn config(&self) -> &TimelineConfig {
        &self.config
    }

    pub fn len(&self) -> usize {
        self.tracks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tracks.is_empty()
    }

    pub fn contains(&self, entity: u64) -> bool {
        self.index.contains_key(&entity)
    }

    /// Ids of every entity on the timeline.
    pub fn entity_ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.tracks.iter().map(|t| t.id)
    }

    /// Sets how far predicted mode looks past the arrival clock (the
    /// one-way latency, once a network layer knows it).
    pub fn set_prediction_lead(&mut self, lead: f64) -> Result<(), String> {
        let mut config = self.config;
        config.prediction_lead = lead;
        config.validate()?;
        self.config = config;
        Ok(())
    }

    /// Sets the mode of one entity (`None`: the timeline's mode).
    pub fn set_entity_mode(
        &mut self,
        entity: u64,
        mode: Option<Mode>,
    ) -> Result<(), TimelineError> {
        let &i = self
            .index
            .get(&entity)
            .ok_or(TimelineError::UnknownEntity(entity))?;
        let track = &mut self.tracks[i];
        if track.mode != mode {
            track.mode = mode;
            track.reset_presentation();
        }
        Ok(())
    }

    /// The entity was shown at `pose` by someone else (the engine's own
    /// simulation, until its send right moved away): start from there and
    /// blend into what the samples say, instead of jumping.
    pub fn start_from(&mut self, entity: u64, pose: Pose) {
        let Some(&i) = self.index.get(&entity) else {
            return;
        };
        let mode = self.tracks[i].mode.unwrap_or(self.config.mode);
        let Some(render) = self.tracks[i].last_render else {
            return;
        };
        if !matches!(mode, Mode::Adaptive | Mode::Fixed) || self.tracks[i].is_empty() {
            return;
        }
        let ctx = self.context(mode, render);
        let track = &mut self.tracks[i];
        let (raw, _) = track.read(&ctx);
        track.fold_correction(pose, raw, self.config.snap_distance);
    }

    /// A state of `entity` that this client simulates itself (it holds the
    /// send right), kept in the entity's track so that, when the right
    /// moves away, what is shown continues from the local simulation's
    /// recent past instead of from before the holding. Only for entities
    /// already on the timeline; no clock, delay or coverage estimate sees
    /// it.
    pub fn record_local(&mut self, entity: u64, sample: Sample) -> Result<(), TimelineError> {
        validate(&sample).map_err(|reason| TimelineError::InvalidSample { entity, reason })?;
        if !sample.server_time.is_finite() {
            return Err(TimelineError::InvalidTime("sample time"));
        }
        let &i = self
            .index
            .get(&entity)
            .ok_or(TimelineError::UnknownEntity(entity))?;
        let max_samples = self.config.max_samples_per_entity;
        let mut sample = sample;
        sample.flags.0 |= crate::core::pose::SampleFlags::LOCAL;
        self.tracks[i].insert(sample, max_samples, f64::NEG_INFINITY);
        Ok(())
    }

    /// Server time of the newest sample of `entity`.
    pub fn newest_time(&self, entity: u64) -> Option<f64> {
        let &i = self.index.get(&entity)?;
        self.tracks[i].newest().map(|s| s.server_time)
    }

    /// The mode `entity` is shown in.
    pub fn mode_of(&self, entity: u64) -> Option<Mode> {
        let &i = self.index.get(&entity)?;
        Some(self.tracks[i].mode.unwrap_or(self.config.mode))
    }

    /// Removes an entity.
    pub fn remove(&mut self, entity: u64) -> Result<(), TimelineError> {
        let i = self
            .index
            .remove(&entity)
            .ok_or(TimelineError::UnknownEntity(entity))?;
        self.tracks.swap_remove(i);
        if let Some(moved) = self.tracks.get(i) {
            self.index.insert(moved.id, i);
        }
        Ok(())
    }

    /// Render time (server seconds) of `mode` at the last tick.
    pub fn render_time(&self, mode: Mode) -> f64 {
        self.render[mode.index()]
    }

    /// The `server_time - client_time` the render clocks use: the one set
    /// with [`Timeline::set_clock_offset`], else the arrival estimate (the
    /// fastest packet of the window).
    pub fn clock_offset(&self) -> Option<f64> {
        self.external_offset.or_else(|| self.arrival.offset())
    }

    /// Uses a clock offset measured elsewhere (the client's ping/pong
    /// estimate of the server clock) instead of the arrival estimate. The
    /// adaptive delay then also covers the one-way latency. `None` goes
    /// back to the arrival estimate.
    pub fn set_clock_offset(&mut self, offset: Option<f64>) -> Result<(), TimelineError> {
        if offset.is_some_and(|o| !o.is_finite()) {
            return Err(TimelineError::InvalidTime("clock offset"));
        }
        self.external_offset = offset;
        Ok(())
    }

    pub fn stats(&self) -> TimelineStats {
        let mut s = self.stats;
        s.entities = self.tracks.len();
        s.clock_offset = self.clock_offset().unwrap_or(0.0);
        s.target_delay = self.adaptive_target();
        if let (Some(now), Some(offset)) = (self.last_tick, self.clock_offset()) {
            s.render_delay = now + offset - self.render[Mode::Adaptive.index()];
        }
        s.time_scale = self.adaptive_clock.scale();
        s.resyncs = self.adaptive_clock.resyncs() + self.fixed_clock.resyncs();
        s.frame_interval = self.frame_interval.unwrap_or(0.0);
        s
    }

    fn adaptive_target(&self) -> f64 {
        let c = &self.config;
        let base = self.delay.target().unwrap_or(c.fixed_delay);
        (base + c.delay_margin).clamp(c.min_delay, c.max_delay)
    }

    fn context(&self, mode: Mode, render: f64) -> ReadContext {
        ReadContext {
            mode,
            render,
            coverage: self.newest_frame.unwrap_or(f64::NEG_INFINITY),
            holes: self.holes,
            frame_interval: self.frame_interval.unwrap_or(0.0),
            max_extrapolation: self.config.max_extrapolation,
            hold_ease: self.config.hold_ease,
        }
    }

    /// Frames were lost after the newest one so far: for entities with no
    /// newer sample, nothing is vouched for past it (the lost frames may
    /// have changed them) until the loss `key` is repaired
    /// ([`Timeline::loss_repaired`]) or, at the latest, client time
    /// `repaired_by`. The network client calls it when snapshot numbers
    /// skip (and asks for the resend).
    pub fn note_loss(&mut self, key: u64, repaired_by: f64) {
        if let Some(newest) = self.newest_frame {
            self.holes.rotate_left(1);
            self.hole_ends.rotate_left(1);
            self.hole_keys.rotate_left(1);
            self.holes[LOSS_HOLES - 1] = newest;
            self.hole_ends[LOSS_HOLES - 1] = repaired_by;
            self.hole_keys[LOSS_HOLES - 1] = key;
        }
    }

    /// What the frames lost under `key` carried has arrived again: vouch
    /// past that loss.
    pub fn loss_repaired(&mut self, key: u64) {
        for (hole, &k) in self.holes.iter_mut().zip(&self.hole_keys) {
            if k == key {
                *hole = f64::NEG_INFINITY;
            }
        }
    }

    /// A snapshot stamped `server_time` arrived at client time `now` with
    /// `samples` (entity id, sample). `server_time` is the time the frame
    /// vouches for: the clock and delay estimates and the send-on-change
    /// coverage run on it. Each sample keeps its own server time (a relay
    /// forwards each owner's stamp; pass the oldest as the frame's time so
    /// that the delay covers the slowest path). Validates everything
    /// first: on error nothing changed.
    pub fn push_frame(
        &mut self,
        now: f64,
        server_time: f64,
        samples: &[(u64, Sample)],
    ) -> Result<(), TimelineError> {
        if !now.is_finite() {
            return Err(TimelineError::InvalidTime("now"));
        }
        if !server_time.is_finite() {
            return Err(TimelineError::InvalidTime("server_time"));
        }
        let mut new_entities = 0usize;
        for (entity, sample) in samples {
            validate(sample).map_err(|reason| TimelineError::InvalidSample {
                entity: *entity,
                reason,
            })?;
            if !sample.server_time.is_finite()
                || (sample.server_time - server_time).abs() > MAX_SAMPLE_SKEW
            {
                return Err(TimelineError::InvalidSample {
                    entity: *entity,
                    reason: "sample time is not finite or more than 10 s from its frame's",
                });
            }
            if !self.index.contains_key(entity) {
                new_entities += 1;
            }
        }
        if self.tracks.len() + new_entities > self.config.max_entities {
            return Err(TimelineError::TooManyEntities {
                limit: self.config.max_entities,
            });
        }

        self.stats.frames += 1;
        self.arrival.observe(now, server_time);
        let offset = self.clock_offset().unwrap_or(server_time - now);
        let previous_coverage = self.newest_frame;
        // The delay target is recomputed once per frame, not per sample:
        // it sorts its whole window, and a frame of thousands of entities
        // after a loss made that the client's main cost (benches/soak).
        let mut delay_changed = false;
        match self.newest_frame {
            Some(newest) if server_time < newest => self.stats.frames_out_of_order += 1,
            Some(newest) if server_time == newest => {}
            _ => {
                if let Some(newest) = self.newest_frame {
                    self.delay.on_frame(now, newest);
                    self.note_interval(server_time - newest);
                }
                self.buffered_clock.on_frame(now, server_time);
                self.newest_frame = Some(server_time);
                delay_changed = true;
            }
        }
        self.literal_clock.on_frame(now, server_time);

        // Entities that were held past the cap read differently once the
        // coverage moves; keep what they show continuous.
        if self.last_tick.is_some() && previous_coverage != self.newest_frame {
            self.fold_coverage_change(previous_coverage);
        }

        let arrival = FrameArrival {
            now,
            offset,
            coverage_before: previous_coverage.unwrap_or(f64::NEG_INFINITY),
        };
        let mut gap_from = None;
        for (entity, sample) in samples {
            if let Some(previous) = self.insert_sample(*entity, *sample, &arrival) {
                gap_from = Some(previous.min(gap_from.unwrap_or(f64::INFINITY)));
            }
        }
        // Entities' own gaps count as one arrival at the oldest of them:
        // the render clock runs past the data for a time, however many
        // entities it shows.
        if let Some(previous) = gap_from {
            self.delay.on_frame(now, previous);
            delay_changed = true;
        }
        if delay_changed {
            self.delay.recompute(offset);
        }
        Ok(())
    }

    fn note_interval(&mut self, gap: f64) {
        self.frame_interval = Some(match self.frame_interval {
            None => gap,
            // Losses double gaps: a gap far above the estimate barely moves it.
            Some(est) if gap > 1.8 * est => est + 0.01 * (gap - est).min(est),
            Some(est) => est + 0.1 * (gap - est),
        });
    }

    fn fold_coverage_change(&mut self, previous: Option<f64>) {
        let old = previous.unwrap_or(f64::NEG_INFINITY);
        let threshold = old + self.config.max_extrapolation;
        let held = |m: Mode| self.render[m.index()] > threshold;
        if !held(Mode::Adaptive) && !held(Mode::Fixed) {
            return;
        }
        for i in 0..self.tracks.len() {
            let mode = self.tracks[i].mode.unwrap_or(self.config.mode);
            if !matches!(mode, Mode::Adaptive | Mode::Fixed) || !held(mode) {
                continue;
            }
            let Some(render) = self.tracks[i].last_render else {
                continue;
            };
            let mut before_ctx = self.context(mode, render);
            before_ctx.coverage = old;
            let after_ctx = self.context(mode, render);
            let track = &mut self.tracks[i];
            let (before, _) = track.read(&before_ctx);
            let (after, _) = track.read(&after_ctx);
            track.fold_correction(before, after, self.config.snap_distance);
        }
    }

    /// Inserts one sample; returns the server time from which its entity's
    /// own stream had a gap worth covering with delay, if it had one.
    fn insert_sample(
        &mut self,
        entity: u64,
        sample: Sample,
        arrival: &FrameArrival,
    ) -> Option<f64> {
        let mut gap = None;
        let FrameArrival {
            now,
            offset: clock_offset,
            coverage_before,
        } = *arrival;
        self.stats.samples += 1;
        let i = match self.index.get(&entity) {
            Some(&i) => i,
            None => {
                self.tracks.push(Track::new(entity));
                self.index.insert(entity, self.tracks.len() - 1);
                self.tracks.len() - 1
            }
        };
        let mode = self.tracks[i].mode.unwrap_or(self.config.mode);
        let blended = matches!(mode, Mode::Adaptive | Mode::Fixed);
        // Only data that changes what reads at the last render time needs a
        // correction: a new newest sample does so only when the render time
        // had already passed the old newest one.
        let affects_reading = |track: &Track, render: f64| match track.newest() {
            Some(newest) if sample.server_time > newest.server_time => render >= newest.server_time,
            _ => true,
        };
        let last_render = self.tracks[i]
            .last_render
            .filter(|&r| blended && affects_reading(&self.tracks[i], r));
        let ctx = last_render.map(|r| self.context(mode, r));
        let max_samples = self.config.max_samples_per_entity;
        let track = &mut self.tracks[i];
        let previous_newest = track.newest().copied();
        let before = match (&ctx, track.is_empty()) {
            (Some(c), false) => Some(track.read(c).0),
            _ => None,
        };
        let outcome = track.insert(sample, max_samples, coverage_before);
        match outcome {
            Inserted::Duplicate => self.stats.samples_duplicate += 1,
            Inserted::TooOld => self.stats.samples_too_old += 1,
            Inserted::Newest | Inserted::Middle => {
                if sample.flags.teleport() {
                    track.reset_presentation();
                } else if let (Some(before), Some(c)) = (before, &ctx) {
                    let (after, _) = track.read(c);
                    track.fold_correction(before, after, self.config.snap_distance);
                }
                if outcome == Inserted::Newest && sample.flags.after_gap() {
                    // A loss on this entity's own stream: the delay may
                    // cover short gaps like this one, to interpolate across
                    // them, if the entity moves (a resting one loses
                    // nothing worth waiting for). Long ones are left to
                    // dead reckoning: the sender's updates are sparse on
                    // purpose, and one lost in seconds must not add
                    // seconds of delay for everything.
                    if let Some(previous) = previous_newest.filter(|p| moved(p, &sample)) {
                        let interval = self.frame_interval.unwrap_or(0.05).max(0.01);
                        let previous = previous
                            .server_time
                            .max(sample.server_time - LOSS_GAP_FRAMES * interval);
                        self.stats.sample_gaps += 1;
                        gap = Some(previous);
                    }
                }
                if outcome == Inserted::Newest && mode == Mode::Predicted {
                    let predicted_now = now + clock_offset + self.config.prediction_lead;
                    let latency = (predicted_now - sample.server_time).max(0.0) as f32;
                    track.retarget(now, latency, &self.config);
                }
            }
        }
        gap
    }

    /// Advances every render clock to `now` and reads every entity once.
    /// `visit(index, &shown)` is called per entity, in a stable order.
    /// Returns how many entities were visited.
    pub fn tick_with<F: FnMut(usize, &Shown)>(
        &mut self,
        now: f64,
        mut visit: F,
    ) -> Result<usize, TimelineError> {
        if !now.is_finite() {
            return Err(TimelineError::InvalidTime("now"));
        }
        if let Some(previous) = self.last_tick {
            if now < previous {
                return Err(TimelineError::TimeWentBackwards { previous, now });
            }
        }
        let dt = self.last_tick.map_or(0.0, |p| now - p);
        self.last_tick = Some(now);
        let Some(offset) = self.clock_offset() else {
            return Ok(0);
        };
        self.advance_clocks(now, offset);

        let config = self.config;
        for (hole, end) in self.holes.iter_mut().zip(self.hole_ends) {
            if end <= now {
                *hole = f64::NEG_INFINITY;
            }
        }
        let contexts = Mode::ALL.map(|m| self.context(m, self.render[m.index()]));
        for (i, track) in self.tracks.iter_mut().enumerate() {
            let mode = track.mode.unwrap_or(config.mode);
            let ctx = &contexts[mode.index()];
            let (pose, flags) = match mode {
                Mode::Adaptive | Mode::Fixed => track.present(ctx, &config, dt),
                Mode::Predicted => track.predict(now, ctx.render, &config),
                Mode::Literal | Mode::Buffered => {
                    track.last_render = Some(ctx.render);
                    track.read(ctx)
                }
            };
            if mode != Mode::Predicted {
                track.trim(ctx.render);
            } else if let Some(newest) = track.newest().map(|s| s.server_time) {
                track.trim(newest);
            }
            visit(
                i,
                &Shown {
                    entity: track.id,
                    pose,
                    flags,
                },
            );
        }
        Ok(self.tracks.len())
    }

    fn advance_clocks(&mut self, now: f64, offset: f64) {
        let c = self.config;
        let arrival_now = now + offset;
        let target = arrival_now - self.adaptive_target();
        self.render[Mode::Adaptive.index()] =
            self.adaptive_clock
                .advance(now, target, c.max_time_scale, c.slew_time, c.hard_resync);
        self.render[Mode::Fixed.index()] = self.fixed_clock.advance(
            now,
            arrival_now - c.fixed_delay,
            c.max_time_scale,
            c.slew_time,
            c.hard_resync,
        );
        if let Some(r) = self.literal_clock.render_time(now) {
            self.render[Mode::Literal.index()] = r;
        }
        if let Some(r) = self.buffered_clock.render_time(now) {
            self.render[Mode::Buffered.index()] = r;
        }
        self.render[Mode::Predicted.index()] = arrival_now + c.prediction_lead;
    }

    /// Convenience over [`Timeline::tick_with`] that fills `out`.
    pub fn tick(&mut self, now: f64, out: &mut Vec<Shown>) -> Result<(), TimelineError> {
        out.clear();
        self.tick_with(now, |_, s| out.push(*s))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
