//! One entity on the timeline: its buffered samples, how a pose is read
//! from them at a render time, and the correction being blended out.

use glam::{Quat, Vec3};

use super::config::{Mode, TimelineConfig};
use crate::core::interpolate::{
    extrapolate_rotation, hermite, lerp, rotation_with_angular_velocity, slerp,
};
use crate::core::pose::{Pose, Sample};
use crate::core::prediction::{dead_reckon, velocity_after, Order, Rates};
use crate::core::smoothing::Smoother;

/// Bits of [`Shown::flags`](super::Shown).
pub mod shown_flags {
    /// The render time is past the newest data; the pose is extrapolated.
    pub const EXTRAPOLATED: u32 = 1;
    /// Extrapolated past the cap: easing into / holding the last pose.
    pub const HELD: u32 = 2;
    /// Predicted mode: dead reckoning to the present.
    pub const PREDICTED: u32 = 4;
    /// A correction (late data) is being blended out.
    pub const BLENDING: u32 = 8;
    /// A scripted element computed from its path and the server clock
    /// (S5), not from received state.
    pub const SCRIPTED: u32 = 16;
}
use shown_flags::*;

/// Longest a silent entity is dead-reckoned under frames that vouch for
/// it (s): the send filter's heartbeat (1 s by default) with room for one
/// lost heartbeat. Past it the usual extrapolation cap and hold apply.
const MAX_COVERED: f64 = 2.5;
/// Recent losses remembered for coverage ([`ReadContext::holes`]).
pub(crate) const LOSS_HOLES: usize = 4;
/// Time constant of the slowest blend-out of a correction (s).
const MAX_BLEND_SECONDS: f32 = 0.5;

/// What reading a pose needs to know besides the samples.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadContext {
    pub mode: Mode,
    pub render: f64,
    /// Newest frame server time: the sender vouches for dead reckoning of an
    /// entity without a newer sample up to here.
    pub coverage: f64,
    /// Newest frame times before detected losses, oldest first (negative
    /// infinity when unused): an entity's coverage stops at the first one
    /// after its newest sample.
    pub holes: [f64; LOSS_HOLES],
    /// Estimated frame interval, 0 when unknown.
    pub frame_interval: f64,
    pub max_extrapolation: f64,
    pub hold_ease: f64,
}

/// Result of adding a sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inserted {
    Newest,
    Middle,
    Duplicate,
    TooOld,
}

#[derive(Debug)]
pub(crate) struct Track {
    pub id: u64,
    pub mode: Option<Mode>,
    /// Sorted by server time. A plain vector: it holds a handful of
    /// samples, so dropping from the front is a tiny move, and reading
    /// (every frame) needs no ring arithmetic.
    samples: Vec<Sample>,
    rates: Rates,
    max_speed: f32,
    offset_position: Vec3,
    offset_rotation: Quat,
    has_offset: bool,
    pub last_render: Option<f64>,
    smoother: Option<Box<Smoother>>,
}

impl Track {
    pub fn new(id: u64) -> Self {
        Track {
            id,
            mode: None,
            samples: Vec::with_capacity(4),
            rates: Rates::default(),
            max_speed: 0.0,
            offset_position: Vec3::ZERO,
            offset_rotation: Quat::IDENTITY,
            has_offset: false,
            last_render: None,
            smoother: None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    pub fn newest(&self) -> Option<&Sample> {
        self.samples.last()
    }

    /// Drops blending and smoothing state (mode change, teleport).
    pub fn reset_presentation(&mut self) {
        self.clear_offset();
        if let Some(s) = self.smoother.as_mut() {
            s.reset();
        }
    }

    fn clear_offset(&mut self) {
        self.offset_position = Vec3::ZERO;
        self.offset_rotation = Quat::IDENTITY;
        self.has_offset = false;
    }

    /// Adds a sample in server-time order. `coverage_before` is the newest
    /// frame time seen before this sample's frame.
    pub fn insert(
        &mut self,
        mut sample: Sample,
        max_samples: usize,
        coverage_before: f64,
    ) -> Inserted {
        let t = sample.server_time;
        // A received state supersedes this client's own simulation from
        // its time on: after a hand-over the new holder's stream must not
        // interleave with what this client simulated while it held the
        // object (two diverging paths, read alternately, would flicker).
        if !sample.flags.local()
            && self
                .samples
                .iter()
                .any(|s| s.flags.local() && s.server_time >= t)
        {
            self.samples
                .retain(|s| !(s.flags.local() && s.server_time >= t));
        }
        if !sample.flags.after_gap()
            && self.samples.last().is_some_and(|newest| {
                t > newest.server_time && coverage_before > newest.server_time
            })
        {
            sample.flags.0 |= crate::core::pose::SampleFlags::AFTER_SKIP;
        }
        let outcome = match self.samples.last() {
            None => {
                self.samples.push(sample);
                Inserted::Newest
            }
            Some(newest) if t > newest.server_time => {
                let previous = *newest;
                self.samples.push(sample);
                self.rates = Rates::estimate(Some(&previous), &sample);
                Inserted::Newest
            }
            Some(_) => {
                let at = self.samples.partition_point(|s| s.server_time < t);
                if self.samples.get(at).is_some_and(|s| s.server_time == t) {
                    return Inserted::Duplicate;
                }
                if at == 0 && self.samples.len() >= max_samples {
                    return Inserted::TooOld;
                }
                self.samples.insert(at, sample);
                Inserted::Middle
            }
        };
        if outcome == Inserted::Newest {
            if self.samples.len() == 1 {
                self.rates = Rates::estimate(None, &sample);
            }
            let speed = self.rates.velocity.length();
            if speed.is_finite() {
                self.max_speed = self.max_speed.max(speed);
            }
        }
        if self.samples.len() > max_samples {
            let excess = self.samples.len() - max_samples;
            self.samples.drain(..excess);
        }
        outcome
    }

    /// The pose the samples give at `c.render`, without corrections.
    #[inline(always)]
    pub fn read(&self, c: &ReadContext) -> (Pose, u32) {
        let n = self.samples.len();
        let newest = &self.samples[n - 1];
        let r = c.render;
        if r >= newest.server_time {
            return self.read_past_newest(c, newest);
        }
        let first = &self.samples[0];
        if r < first.server_time {
            return (first.pose, 0);
        }
        let mut i = n - 2;
        while self.samples[i].server_time > r {
            i -= 1;
        }
        let (a, b) = (&self.samples[i], &self.samples[i + 1]);
        if b.flags.teleport() {
            return (a.pose, 0);
        }
        let pose = match c.mode {
            Mode::Literal | Mode::Buffered => {
                let f = ((r - a.server_time) / (b.server_time - a.server_time)) as f32;
                Pose::new(
                    lerp(a.pose.position, b.pose.position, f),
                    slerp(a.pose.rotation, b.pose.rotation, f),
                )
            }
            _ => smooth_between(a, b, r, c.frame_interval),
        };
        (pose, 0)
    }

    #[cold]
    #[inline(never)]
    fn read_past_newest(&self, c: &ReadContext, newest: &Sample) -> (Pose, u32) {
        let r = c.render;
        let tau = r - newest.server_time;
        if newest.flags.local() {
            // This client's own last simulation of an object it gave up,
            // and nobody has sent since: no frame vouches for dead
            // reckoning it, and an object let go to nobody is at rest.
            return (newest.pose, 0);
        }
        match c.mode {
            Mode::Literal => {
                let n = self.samples.len();
                if n < 2 || tau <= 0.0 {
                    return (newest.pose, if tau > 0.0 { EXTRAPOLATED } else { 0 });
                }
                // S1: the interpolation formula with a > 1 on the last two frames.
                let a = &self.samples[n - 2];
                let f = ((r - a.server_time) / (newest.server_time - a.server_time)) as f32;
                let pose = Pose::new(
                    lerp(a.pose.position, newest.pose.position, f),
                    extrapolate_rotation(a.pose.rotation, newest.pose.rotation, f),
                );
                (pose, EXTRAPOLATED)
            }
            Mode::Buffered => (newest.pose, if r > c.coverage { HELD } else { 0 }),
            _ => {
                // Frames since the newest sample vouch that the sender saw
                // no need to send (its dead reckoning held), but only for
                // so long: a sender that holds an object sends at least a
                // heartbeat, so longer silence means nobody moves it.
                let vouched = c
                    .holes
                    .iter()
                    .copied()
                    .find(|&h| h >= newest.server_time)
                    .unwrap_or(c.coverage)
                    .min(c.coverage);
                let covered = (vouched - newest.server_time).clamp(0.0, MAX_COVERED);
                let (effective, flags) = if tau <= covered {
                    (tau, 0)
                } else {
                    let beyond = tau - covered;
                    if beyond <= c.max_extrapolation {
                        (tau, EXTRAPOLATED)
                    } else {
                        // Ease into a hold: the velocity decays smoothly to zero.
                        let over = beyond - c.max_extrapolation;
                        let eased = c.hold_ease * (1.0 - (-over / c.hold_ease).exp());
                        (covered + c.max_extrapolation + eased, EXTRAPOLATED | HELD)
                    }
                };
                let pose = dead_reckon(&newest.pose, &self.rates, effective as f32, Order::First);
                (pose, flags)
            }
        }
    }

    /// Adaptive / fixed: the pose to show, with the correction applied and
    /// decayed over `dt` (`dt` = 0 reads without decaying).
    #[inline(always)]
    pub fn present(&mut self, c: &ReadContext, config: &TimelineConfig, dt: f64) -> (Pose, u32) {
        let (raw, mut flags) = self.read(c);
        self.last_render = Some(c.render);
        if !self.has_offset {
            return (raw, flags);
        }
        if dt > 0.0 {
            let k = 1.0 - (-dt / config.blend_time).exp() as f32;
            let mut step = self.offset_position * k;
            // Never move the correction faster than the object itself moves, so
            // that blending out can never look like a jump; but a large
            // correction on a slow object (a refused claim that pushed it
            // here, say) still goes within a second or two.
            let floor = self.offset_position.length() / MAX_BLEND_SECONDS;
            let limit = (self.max_speed * 0.5).max(0.05).max(floor) * dt as f32;
            if step.length() > limit {
                step = step.normalize() * limit;
            }
            self.offset_position -= step;
            self.offset_rotation = slerp(self.offset_rotation, Quat::IDENTITY, k);
            // 1e-5 m and about 0.05 degrees: below what anyone can see.
            if self.offset_position.length_squared() < 1e-10
                && self.offset_rotation.w.abs() > 1.0 - 1e-7
            {
                self.clear_offset();
            }
        }
        flags |= BLENDING;
        let pose = Pose::new(
            raw.position + self.offset_position,
            (self.offset_rotation * raw.rotation).normalize(),
        );
        (pose, flags)
    }

    /// Adaptive / fixed: data changed what reads at the last render time
    /// (`before` -> `after`). Keeps the shown pose continuous by folding the
    /// difference into the correction.
    pub fn fold_correction(&mut self, before: Pose, after: Pose, snap_distance: f32) {
        if before.position.distance_squared(after.position) < 1e-12
            && before.rotation.dot(after.rotation).abs() > 1.0 - 1e-7
        {
            return;
        }
        self.offset_position += before.position - after.position;
        let after_rotation = if before.rotation.dot(after.rotation) < 0.0 {
            -after.rotation
        } else {
            after.rotation
        };
        self.offset_rotation =
            (self.offset_rotation * before.rotation * after_rotation.inverse()).normalize();
        self.has_offset = true;
        if self.offset_position.length() > snap_distance {
            self.clear_offset();
        }
    }

    /// Predicted mode: restart smoothing for a new newest sample.
    pub fn retarget(&mut self, now: f64, latency: f32, config: &TimelineConfig) {
        let speed = self.rates.velocity.length();
        let smoother = self
            .smoother
            .get_or_insert_with(|| Box::new(Smoother::new(config.smoothing)));
        smoother.retarget(now, latency, speed);
    }

    /// Predicted mode: dead reckoning to the render time, smoothed.
    pub fn predict(&mut self, now: f64, render: f64, config: &TimelineConfig) -> (Pose, u32) {
        let newest = self.samples[self.samples.len() - 1];
        let tau = (render - newest.server_time).max(0.0) as f32;
        let order = config.prediction_order;
        let target = dead_reckon(&newest.pose, &self.rates, tau, order);
        let velocity = velocity_after(&self.rates, tau, order);
        let smoother = self
            .smoother
            .get_or_insert_with(|| Box::new(Smoother::new(config.smoothing)));
        let pose = smoother.update(now, target, velocity, self.rates.angular_velocity);
        self.last_render = Some(render);
        (pose, PREDICTED)
    }

    /// Drops samples the render clock has passed (keeping one before it).
    #[inline]
    pub fn trim(&mut self, render: f64) {
        let passed = self
            .samples
            .iter()
            .skip(1)
            .take_while(|s| s.server_time <= render)
            .count();
        let drop = passed.min(self.samples.len().saturating_sub(2));
        if drop > 0 {
            self.samples.drain(..drop);
        }
    }
}

/// Adaptive / fixed interpolation between two samples: Hermite with
/// velocities, angular velocity for fast spins, and dead reckoning across a
/// gap where the sender sent nothing (send on change).
#[inline(always)]
fn smooth_between(a: &Sample, b: &Sample, r: f64, frame_interval: f64) -> Pose {
    let mut start = a.pose;
    let mut start_time = a.server_time;
    let mut start_velocity = a.velocity;
    let skipped = b.flags.0 & crate::core::pose::SampleFlags::AFTER_SKIP != 0;
    if skipped && frame_interval > 0.0 && b.server_time - a.server_time > 1.5 * frame_interval {
        // The sender skipped frames because `a` predicted well: follow that
        // prediction until the last frame interval before `b`.
        let a_rates = Rates {
            velocity: if a.flags.has_velocity() {
                a.velocity
            } else {
                Vec3::ZERO
            },
            angular_velocity: if a.flags.has_angular_velocity() {
                a.angular_velocity
            } else {
                Vec3::ZERO
            },
            acceleration: Vec3::ZERO,
        };
        let bend = b.server_time - frame_interval;
        if r < bend {
            return dead_reckon(&a.pose, &a_rates, (r - a.server_time) as f32, Order::First);
        }
        start = dead_reckon(
            &a.pose,
            &a_rates,
            (bend - a.server_time) as f32,
            Order::First,
        );
        start_time = bend;
        start_velocity = a_rates.velocity;
    }
    let span = (b.server_time - start_time) as f32;
    let f = ((r - start_time) as f32 / span).clamp(0.0, 1.0);
    let position = if a.flags.has_velocity() && b.flags.has_velocity() {
        hermite(
            start.position,
            start_velocity,
            b.pose.position,
            b.velocity,
            span,
            f,
        )
    } else {
        lerp(start.position, b.pose.position, f)
    };
    // Faster than a quarter turn per interval: slerp could take the short
    // way round, so follow the angular velocities instead.
    let half_turns = (a.angular_velocity + b.angular_velocity) * (0.5 * span);
    let fast_spin = a.flags.has_angular_velocity()
        && b.flags.has_angular_velocity()
        && half_turns.length_squared() > std::f32::consts::FRAC_PI_2 * std::f32::consts::FRAC_PI_2;
    let rotation = if fast_spin {
        rotation_with_angular_velocity(
            start.rotation,
            a.angular_velocity,
            b.pose.rotation,
            b.angular_velocity,
            span,
            f,
        )
    } else {
        slerp(start.rotation, b.pose.rotation, f)
    };
    Pose::new(position, rotation)
}
