//! Smoothing of corrections (S4): when a new authoritative target arrives,
//! the shown pose moves to it over a smoothing time instead of jumping.
//!
//! Three curves, as in S4: linear (projective velocity blending towards the
//! latency-extrapolated target), a cubic Bezier through the four S4 points,
//! and exponential decay with a slow-down factor. The smoothing time is a
//! weighted average of the last N latencies; it is shortened when the target
//! stops; an optional facing of the motion direction turns the object the
//! way it moves. A new target always restarts from the pose shown now.

use glam::{Quat, Vec3};

use super::interpolate::{integrate_rotation, lerp, slerp};
use super::pose::Pose;

/// Which curve carries the shown pose to the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SmoothingKind {
    /// No smoothing: show the target at once.
    Snap,
    /// Blend from the old motion to the target's motion over the smoothing time.
    #[default]
    Linear,
    /// Cubic Bezier: start, start + v_current*T/3, end - v_target*T/3, end.
    Bezier,
    /// `pos += (target - pos) / slowdown_factor` per 60 Hz frame (rate independent).
    Exponential,
}

/// Settings of a [`Smoother`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SmoothingConfig {
    pub kind: SmoothingKind,
    /// How many recent latencies the smoothing time averages (1 to 16).
    pub latency_samples: usize,
    /// Bounds of the smoothing time in seconds.
    pub min_time: f32,
    pub max_time: f32,
    /// Exponential mode: fraction 1/slowdown_factor of the gap closed per 60 Hz frame.
    pub slowdown_factor: f32,
    /// Below this speed (m/s) the target counts as stopped ...
    pub stop_speed: f32,
    /// ... and the smoothing time is multiplied by this.
    pub stop_time_scale: f32,
    /// Turn the shown object to face its direction of motion (yaw about +Y,
    /// forward +Z) while it moves faster than `face_min_speed`.
    pub face_motion: bool,
    pub face_min_speed: f32,
    /// Beyond S4: the shown object never moves faster than this multiple
    /// of the fastest speed its target has shown (so a correction never
    /// looks like a jump); 0 turns the cap off.
    pub max_speed_ratio: f32,
    /// Corrections larger than this (m) snap instead of crawling.
    pub snap_distance: f32,
}

impl Default for SmoothingConfig {
    fn default() -> Self {
        SmoothingConfig {
            kind: SmoothingKind::Linear,
            latency_samples: 8,
            min_time: 0.05,
            max_time: 0.5,
            slowdown_factor: 5.0,
            stop_speed: 0.05,
            stop_time_scale: 0.5,
            face_motion: false,
            face_min_speed: 0.2,
            max_speed_ratio: 1.8,
            snap_distance: 5.0,
        }
    }
}

impl SmoothingConfig {
    /// Checks ranges; returns what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=MAX_LATENCIES).contains(&self.latency_samples) {
            return Err(format!("latency_samples must be 1..={MAX_LATENCIES}"));
        }
        if !(self.min_time.is_finite() && self.max_time.is_finite())
            || self.min_time < 0.0
            || self.max_time < self.min_time
        {
            return Err("smoothing times must satisfy 0 <= min_time <= max_time".into());
        }
        if !self.slowdown_factor.is_finite() || self.slowdown_factor < 1.0 {
            return Err("slowdown_factor must be >= 1".into());
        }
        if !(self.stop_speed.is_finite() && self.stop_speed >= 0.0) {
            return Err("stop_speed must be >= 0".into());
        }
        if !(self.stop_time_scale > 0.0 && self.stop_time_scale <= 1.0) {
            return Err("stop_time_scale must be in (0, 1]".into());
        }
        if !(self.face_min_speed.is_finite() && self.face_min_speed >= 0.0) {
            return Err("face_min_speed must be >= 0".into());
        }
        if !(self.max_speed_ratio.is_finite() && self.max_speed_ratio >= 0.0) {
            return Err("max_speed_ratio must be >= 0".into());
        }
        if !(self.snap_distance.is_finite() && self.snap_distance > 0.0) {
            return Err("snap_distance must be > 0".into());
        }
        Ok(())
    }
}

const MAX_LATENCIES: usize = 16;

/// Smoothing state of one entity.
#[derive(Clone, Debug)]
pub struct Smoother {
    config: SmoothingConfig,
    latencies: [f32; MAX_LATENCIES],
    latency_count: usize,
    latency_next: usize,
    // The current smoothing episode.
    start: Pose,
    start_velocity: Vec3,
    start_angular_velocity: Vec3,
    start_time: f64,
    duration: f32,
    // What was shown last.
    shown: Option<Pose>,
    shown_velocity: Vec3,
    shown_angular_velocity: Vec3,
    last_time: f64,
    /// Fastest target speed seen (m/s).
    max_speed: f32,
}

impl Smoother {
    pub fn new(config: SmoothingConfig) -> Self {
        Smoother {
            config,
            latencies: [0.0; MAX_LATENCIES],
            latency_count: 0,
            latency_next: 0,
            start: Pose::IDENTITY,
            start_velocity: Vec3::ZERO,
            start_angular_velocity: Vec3::ZERO,
            start_time: 0.0,
            duration: 0.0,
            shown: None,
            shown_velocity: Vec3::ZERO,
            shown_angular_velocity: Vec3::ZERO,
            last_time: 0.0,
            max_speed: 0.0,
        }
    }

    /// Forgets the shown pose: the next update snaps to its target.
    pub fn reset(&mut self) {
        self.shown = None;
        self.duration = 0.0;
    }

    /// Weighted average of the recent latencies (newest weighs most),
    /// clamped to the configured bounds.
    pub fn smoothing_time(&self) -> f32 {
        if self.latency_count == 0 {
            return self.config.min_time;
        }
        let n = self.latency_count.min(self.config.latency_samples);
        let (mut sum, mut weights) = (0.0, 0.0);
        for k in 0..n {
            // k = 0 is the newest.
            let idx = (self.latency_next + MAX_LATENCIES - 1 - k) % MAX_LATENCIES;
            let w = (n - k) as f32;
            sum += self.latencies[idx] * w;
            weights += w;
        }
        (sum / weights).clamp(self.config.min_time, self.config.max_time)
    }

    /// A new target arrived `latency` seconds after it was true, moving at
    /// `target_speed` (its measured speed, not a prediction). Restarts the
    /// smoothing from the pose shown now.
    pub fn retarget(&mut self, now: f64, latency: f32, target_speed: f32) {
        if target_speed.is_finite() {
            self.max_speed = self.max_speed.max(target_speed);
        }
        if latency.is_finite() && latency >= 0.0 {
            self.latencies[self.latency_next] = latency;
            self.latency_next = (self.latency_next + 1) % MAX_LATENCIES;
            self.latency_count = (self.latency_count + 1).min(MAX_LATENCIES);
        }
        let mut duration = self.smoothing_time();
        if target_speed < self.config.stop_speed {
            duration *= self.config.stop_time_scale;
        }
        if let Some(shown) = self.shown {
            self.start = shown;
            self.start_velocity = self.shown_velocity;
            self.start_angular_velocity = self.shown_angular_velocity;
        }
        self.start_time = now;
        self.duration = duration;
    }

    /// The pose to show at `now`, given where the target is at `now` and how
    /// it moves.
    pub fn update(
        &mut self,
        now: f64,
        target: Pose,
        target_velocity: Vec3,
        target_angular_velocity: Vec3,
    ) -> Pose {
        let Some(previous) = self.shown else {
            return self.remember(now, target, target_velocity, target_angular_velocity);
        };
        if previous.position.distance(target.position) > self.config.snap_distance {
            self.duration = 0.0;
            return self.remember(now, target, target_velocity, target_angular_velocity);
        }
        let dt = (now - self.last_time).max(0.0) as f32;
        let elapsed = (now - self.start_time).max(0.0) as f32;
        let alpha = if self.duration > 0.0 {
            (elapsed / self.duration).min(1.0)
        } else {
            1.0
        };
        let mut pose = match self.config.kind {
            SmoothingKind::Snap => target,
            _ if alpha >= 1.0 && self.config.kind != SmoothingKind::Exponential => target,
            SmoothingKind::Linear => {
                let carried = self.start.position + self.start_velocity * elapsed;
                let rot =
                    integrate_rotation(self.start.rotation, self.start_angular_velocity, elapsed);
                Pose::new(
                    lerp(carried, target.position, alpha),
                    slerp(rot, target.rotation, alpha),
                )
            }
            SmoothingKind::Bezier => {
                let t_total = self.duration;
                let remaining = t_total - elapsed;
                let end = target.position + target_velocity * remaining;
                let p0 = self.start.position;
                let p1 = p0 + self.start_velocity * (t_total / 3.0);
                let p2 = end - target_velocity * (t_total / 3.0);
                let u = 1.0 - alpha;
                let position = p0 * (u * u * u)
                    + p1 * (3.0 * u * u * alpha)
                    + p2 * (3.0 * u * alpha * alpha)
                    + end * (alpha * alpha * alpha);
                let rot =
                    integrate_rotation(self.start.rotation, self.start_angular_velocity, elapsed);
                let w = alpha * alpha * (3.0 - 2.0 * alpha);
                Pose::new(position, slerp(rot, target.rotation, w))
            }
            SmoothingKind::Exponential => {
                let k = 1.0 - (1.0 - 1.0 / self.config.slowdown_factor).powf(dt * 60.0);
                Pose::new(
                    lerp(previous.position, target.position, k),
                    slerp(previous.rotation, target.rotation, k),
                )
            }
        };
        if self.config.kind != SmoothingKind::Snap && self.config.max_speed_ratio > 0.0 && dt > 0.0
        {
            let step = pose.position - previous.position;
            let limit = (self.max_speed * self.config.max_speed_ratio).max(0.05) * dt;
            if step.length() > limit {
                pose.position = previous.position + step.normalize() * limit;
            }
        }
        if self.config.face_motion && dt > 0.0 {
            let v = (pose.position - previous.position) / dt;
            let flat = Vec3::new(v.x, 0.0, v.z);
            if flat.length() > self.config.face_min_speed {
                let facing = Quat::from_rotation_y(flat.x.atan2(flat.z));
                let k = 1.0 - (-dt / 0.1).exp();
                pose.rotation = slerp(previous.rotation, facing, k);
            } else {
                pose.rotation = previous.rotation;
            }
        }
        self.remember(now, pose, target_velocity, target_angular_velocity)
    }

    fn remember(
        &mut self,
        now: f64,
        pose: Pose,
        target_velocity: Vec3,
        target_angular_velocity: Vec3,
    ) -> Pose {
        let dt = (now - self.last_time) as f32;
        self.shown_velocity = match self.shown {
            Some(prev) if dt > 1e-4 => (pose.position - prev.position) / dt,
            _ => target_velocity,
        };
        self.shown_angular_velocity = target_angular_velocity;
        self.shown = Some(pose);
        self.last_time = now;
        pose
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(kind: SmoothingKind) -> (f32, Vec3) {
        // Object shown at the origin moving +x at 2 m/s; the new target moves +y
        // at 4 m/s from (0.2, 0, 0) (the S4 example's turn).
        let config = SmoothingConfig {
            kind,
            ..Default::default()
        };
        let mut s = Smoother::new(config);
        let v0 = Vec3::new(2.0, 0.0, 0.0);
        let mut now = 0.0;
        s.update(now, Pose::IDENTITY, v0, Vec3::ZERO);
        now += 1.0 / 60.0;
        s.update(now, Pose::new(v0 / 60.0, Quat::IDENTITY), v0, Vec3::ZERO);
        s.retarget(now, 0.1, 4.0);
        let v1 = Vec3::new(0.0, 4.0, 0.0);
        let origin = Vec3::new(0.2, 0.0, 0.0);
        let mut max_step: f32 = 0.0;
        let mut last = v0 / 60.0;
        let mut pose = Pose::IDENTITY;
        for i in 0..60 {
            now += 1.0 / 60.0;
            let target = Pose::new(origin + v1 * (i as f32 / 60.0), Quat::IDENTITY);
            pose = s.update(now, target, v1, Vec3::ZERO);
            max_step = max_step.max(pose.position.distance(last));
            last = pose.position;
        }
        let target_end = origin + v1 * (59.0 / 60.0);
        (max_step, pose.position - target_end)
    }

    #[test]
    fn every_curve_converges_without_jumps() {
        for kind in [
            SmoothingKind::Linear,
            SmoothingKind::Bezier,
            SmoothingKind::Exponential,
        ] {
            let (max_step, err) = run(kind);
            // The target itself moves 4/60 m a frame; the gap was 0.2 m.
            assert!(max_step < 0.2, "{kind:?} stepped {max_step}");
            // Exponential smoothing trails a moving target by v*dt*(f-1) by design.
            let bound = if kind == SmoothingKind::Exponential {
                4.0 / 60.0 * 4.0 + 0.01
            } else {
                0.02
            };
            assert!(err.length() < bound, "{kind:?} ended {err:?} away");
        }
        let (max_step, _) = run(SmoothingKind::Snap);
        assert!(max_step > 0.15);
    }

    #[test]
    fn smoothing_time_is_a_weighted_average_shortened_when_stopping() {
        let mut s = Smoother::new(SmoothingConfig::default());
        s.retarget(0.0, 0.1, 1.0);
        s.retarget(0.0, 0.2, 1.0);
        // weights 2 (newest) and 1
        assert!((s.smoothing_time() - (0.2 * 2.0 + 0.1) / 3.0).abs() < 1e-6);
        s.update(0.0, Pose::IDENTITY, Vec3::ZERO, Vec3::ZERO);
        s.retarget(0.0, 0.2, 0.0);
        assert!((s.duration - s.smoothing_time() * 0.5).abs() < 1e-6);
    }

    #[test]
    fn corrections_never_outrun_the_object_and_huge_ones_snap() {
        let mut s = Smoother::new(SmoothingConfig::default());
        let v = Vec3::new(1.0, 0.0, 0.0);
        s.update(0.0, Pose::IDENTITY, v, Vec3::ZERO);
        // The authoritative pose turns out 1 m ahead, arriving with a 50 ms
        // latency: S4 alone would cover it in 50 ms (20 m/s).
        s.retarget(0.0, 0.05, 1.0);
        let mut last = Vec3::ZERO;
        for i in 1..120 {
            let t = i as f64 / 60.0;
            let target = Pose::new(Vec3::new(1.0, 0.0, 0.0) + v * t as f32, Quat::IDENTITY);
            let p = s.update(t, target, v, Vec3::ZERO).position;
            assert!(p.distance(last) <= 1.8 / 60.0 + 1e-5, "frame {i}");
            last = p;
        }
        assert!(last.distance(Vec3::new(1.0, 0.0, 0.0) + v * 2.0) < 0.05);
        let far = Pose::new(Vec3::new(100.0, 0.0, 0.0), Quat::IDENTITY);
        assert_eq!(s.update(2.1, far, v, Vec3::ZERO).position, far.position);
    }

    #[test]
    fn faces_the_direction_of_motion() {
        let config = SmoothingConfig {
            kind: SmoothingKind::Snap,
            face_motion: true,
            ..Default::default()
        };
        let mut s = Smoother::new(config);
        let v = Vec3::new(1.0, 0.0, 0.0);
        let mut pose = Pose::IDENTITY;
        for i in 0..60 {
            let t = i as f64 / 60.0;
            pose = s.update(t, Pose::new(v * t as f32, Quat::IDENTITY), v, Vec3::ZERO);
        }
        let forward = pose.rotation * Vec3::Z;
        assert!(forward.distance(Vec3::X) < 0.05, "{forward:?}");
    }
}
