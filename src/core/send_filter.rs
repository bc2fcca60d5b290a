//! Sender-side filter (S4): decides each frame whether an owned entity's
//! state is worth sending. Every comparison is against the last *sent*
//! state (S4's `lastSyncedMoveInfo`), so small errors cannot pile up.

use std::collections::HashMap;

use glam::Vec3;

use super::interpolate::angle_between;
use super::pose::{Pose, Sample, SampleFlags};
use super::prediction::{dead_reckon, Order, Rates};

/// When to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SendPolicy {
    /// Every time the rate allows.
    Always,
    /// When the velocity, acceleration or spin changed (or, without
    /// velocities, the pose moved) past the thresholds.
    OnChange,
    /// When the receiver's dead reckoning from the last sent state would be
    /// off by more than the thresholds.
    #[default]
    DeadReckoning,
}

/// Settings of a [`SendFilter`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SendFilterConfig {
    pub policy: SendPolicy,
    /// Position error (m) that triggers a send.
    pub position_threshold: f32,
    /// Rotation error (rad) that triggers a send.
    pub angle_threshold: f32,
    /// Velocity change (m/s, or rad/s for spin) that triggers a send (OnChange).
    pub velocity_threshold: f32,
    /// Never send more often than this (s); 0 sends at most once per call.
    pub min_interval: f64,
    /// Always send at least this often (s), so a receiver knows the entity lives.
    pub max_interval: f64,
    /// Prediction order the receiver uses.
    pub order: Order,
}

impl Default for SendFilterConfig {
    fn default() -> Self {
        SendFilterConfig {
            policy: SendPolicy::DeadReckoning,
            position_threshold: 0.01,
            angle_threshold: 1.0_f32.to_radians(),
            velocity_threshold: 0.05,
            min_interval: 0.0,
            max_interval: 1.0,
            order: Order::First,
        }
    }
}

impl SendFilterConfig {
    pub fn validate(&self) -> Result<(), String> {
        let ok = |x: f32| x.is_finite() && x >= 0.0;
        if !ok(self.position_threshold) || !ok(self.angle_threshold) || !ok(self.velocity_threshold)
        {
            return Err("thresholds must be finite and >= 0".into());
        }
        if !(self.min_interval.is_finite() && self.min_interval >= 0.0) {
            return Err("min_interval must be finite and >= 0".into());
        }
        if !(self.max_interval.is_finite() && self.max_interval > 0.0) {
            return Err("max_interval must be finite and > 0".into());
        }
        Ok(())
    }
}

/// Why a state was sent (or not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendDecision {
    /// Nothing worth sending.
    Skip,
    /// First state of this entity.
    First,
    /// Policy `Always`.
    Always,
    /// The prediction or the state moved past a threshold.
    Changed,
    /// `max_interval` passed since the last send.
    Heartbeat,
    /// The caller flagged a teleport.
    Teleport,
}

impl SendDecision {
    pub fn should_send(self) -> bool {
        self != SendDecision::Skip
    }
}

#[derive(Clone, Copy, Debug)]
struct LastSent {
    time: f64,
    sample: Sample,
    rates: Rates,
}

/// Per-entity send decisions.
#[derive(Debug)]
pub struct SendFilter {
    config: SendFilterConfig,
    entities: HashMap<u64, LastSent>,
}

impl SendFilter {
    pub fn new(config: SendFilterConfig) -> Self {
        SendFilter {
            config,
            entities: HashMap::new(),
        }
    }

    pub fn config(&self) -> &SendFilterConfig {
        &self.config
    }

    /// Forgets an entity; its next update is sent.
    pub fn forget(&mut self, entity: u64) -> bool {
        self.entities.remove(&entity).is_some()
    }

    /// Entities currently tracked.
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// Decides for the true state of `entity` at `now` (the sample's
    /// `server_time` is ignored; `now` is used). When the answer sends, the
    /// state becomes the new reference.
    pub fn update(&mut self, now: f64, entity: u64, state: &Sample) -> SendDecision {
        let mut sample = *state;
        sample.server_time = now;
        let decision = match self.entities.get(&entity) {
            None => SendDecision::First,
            Some(last) => self.decide(now, last, &sample),
        };
        if decision.should_send() {
            let previous = self.entities.get(&entity).map(|l| l.sample);
            let mut rates = Rates::estimate(previous.as_ref(), &sample);
            if self.config.order == Order::First {
                rates.acceleration = Vec3::ZERO;
            }
            self.entities.insert(
                entity,
                LastSent {
                    time: now,
                    sample,
                    rates,
                },
            );
        }
        decision
    }

    fn decide(&self, now: f64, last: &LastSent, sample: &Sample) -> SendDecision {
        let since = now - last.time;
        if since < 0.0 {
            // The clock jumped back (a resynced server clock): whatever was
            // sent is on another time base; start over.
            return SendDecision::First;
        }
        if since < self.config.min_interval {
            return SendDecision::Skip;
        }
        if sample.flags.0 & SampleFlags::TELEPORT != 0 {
            return SendDecision::Teleport;
        }
        if self.config.policy == SendPolicy::Always {
            return SendDecision::Always;
        }
        if since >= self.config.max_interval {
            return SendDecision::Heartbeat;
        }
        let changed = match self.config.policy {
            SendPolicy::Always => true,
            SendPolicy::OnChange => self.state_changed(last, sample),
            SendPolicy::DeadReckoning => {
                let predicted = dead_reckon(
                    &last.sample.pose,
                    &last.rates,
                    since as f32,
                    self.config.order,
                );
                self.pose_off(&predicted, &sample.pose)
            }
        };
        if changed {
            SendDecision::Changed
        } else {
            SendDecision::Skip
        }
    }

    fn pose_off(&self, a: &Pose, b: &Pose) -> bool {
        a.position.distance(b.position) > self.config.position_threshold
            || angle_between(a.rotation, b.rotation) > self.config.angle_threshold
    }

    fn state_changed(&self, last: &LastSent, sample: &Sample) -> bool {
        let t = self.config.velocity_threshold;
        let with_velocity = sample.flags.has_velocity() && last.sample.flags.has_velocity();
        if with_velocity {
            // S4: skip while speed, acceleration and direction are unchanged.
            let dt = (sample.server_time - last.time).max(1e-6) as f32;
            let accel = (sample.velocity - last.sample.velocity) / dt;
            if sample.velocity.distance(last.sample.velocity) > t
                || accel.distance(last.rates.acceleration) > t / dt.max(1e-3)
            {
                return true;
            }
            if sample.flags.has_angular_velocity()
                && sample
                    .angular_velocity
                    .distance(last.sample.angular_velocity)
                    > t
            {
                return true;
            }
            // A velocity that does not explain the motion still needs a send.
            let predicted = dead_reckon(&last.sample.pose, &last.rates, dt, Order::First);
            return self.pose_off(&predicted, &sample.pose);
        }
        self.pose_off(&last.sample.pose, &sample.pose)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    fn moving(t: f64, v: Vec3) -> Sample {
        Sample::at(t, v * t as f32, Quat::IDENTITY).with_velocity(v)
    }

    #[test]
    fn dead_reckoning_skips_predictable_motion_and_sends_on_turns() {
        let mut f = SendFilter::new(SendFilterConfig::default());
        let v = Vec3::new(2.0, 0.0, 0.0);
        assert_eq!(f.update(0.0, 1, &moving(0.0, v)), SendDecision::First);
        let mut sends = 0;
        for i in 1..60 {
            let t = i as f64 / 60.0;
            if f.update(t, 1, &moving(t, v)).should_send() {
                sends += 1;
            }
        }
        assert_eq!(sends, 0, "straight line needs no updates within a second");
        // Turn after 0.5 s: now 4 m/s along y (S4 example).
        let t = 0.5 + 1.0 / 60.0;
        let turn = Sample::at(t, Vec3::new(1.0, 4.0 / 60.0, 0.0), Quat::IDENTITY)
            .with_velocity(Vec3::new(0.0, 4.0, 0.0));
        assert_eq!(f.update(t, 1, &turn), SendDecision::Changed);
    }

    #[test]
    fn error_never_accumulates_below_threshold() {
        // Drift of 0.004 m per frame, threshold 0.01: a send at least every 3 frames.
        // An accelerating object sent without velocities: the receiver predicts
        // from the last two sent samples, exactly as the filter does.
        let mut f = SendFilter::new(SendFilterConfig::default());
        let mut sent: Vec<Sample> = Vec::new();
        let mut max_err: f32 = 0.0;
        let mut sends = 0;
        for i in 0..600 {
            let t = i as f64 / 60.0;
            let p = Vec3::new(0.5 * (t * t) as f32, 0.0, 0.0);
            let s = Sample::at(t, p, Quat::IDENTITY);
            if f.update(t, 7, &s).should_send() {
                sent.push(s);
                sends += 1;
            }
            let last = sent.last().unwrap();
            let rates = Rates::estimate(sent.iter().rev().nth(1), last);
            let predicted = dead_reckon(
                &last.pose,
                &rates,
                (t - last.server_time) as f32,
                Order::First,
            );
            max_err = max_err.max(p.distance(predicted.position));
        }
        assert!(max_err <= 0.0101, "receiver error reached {max_err}");
        assert!(sends < 300, "{sends} sends for 600 frames");
    }

    #[test]
    fn heartbeat_min_interval_and_teleport() {
        let config = SendFilterConfig {
            min_interval: 0.05,
            max_interval: 0.5,
            ..Default::default()
        };
        let mut f = SendFilter::new(config);
        let still = Sample::at(0.0, Vec3::ZERO, Quat::IDENTITY);
        f.update(0.0, 1, &still);
        assert_eq!(f.update(0.01, 1, &still.teleport()), SendDecision::Skip);
        assert_eq!(f.update(0.06, 1, &still.teleport()), SendDecision::Teleport);
        assert_eq!(f.update(0.3, 1, &still), SendDecision::Skip);
        assert_eq!(f.update(0.6, 1, &still), SendDecision::Heartbeat);
        assert!(f.forget(1));
        assert_eq!(f.update(0.61, 1, &still), SendDecision::First);
        // A clock that jumps back re-anchors instead of going silent.
        assert_eq!(f.update(0.2, 1, &still), SendDecision::First);
    }

    #[test]
    fn on_change_ignores_constant_velocity() {
        let config = SendFilterConfig {
            policy: SendPolicy::OnChange,
            ..Default::default()
        };
        let mut f = SendFilter::new(config);
        let v = Vec3::new(1.0, 0.0, 0.0);
        f.update(0.0, 1, &moving(0.0, v));
        assert_eq!(f.update(0.1, 1, &moving(0.1, v)), SendDecision::Skip);
        let faster = Vec3::new(1.5, 0.0, 0.0);
        let s = Sample::at(0.2, Vec3::new(0.2, 0.0, 0.0), Quat::IDENTITY).with_velocity(faster);
        assert_eq!(f.update(0.2, 1, &s), SendDecision::Changed);
    }
}
