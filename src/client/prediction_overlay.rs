//! Local prediction of remote entities (S2 steps 1 and 5), sans-IO.
//!
//! A client that sends a command may show its expected result at once:
//! `predict(entity, state)` overrides the entity's shown pose with that
//! state, dead-reckoned to the present. The override lasts until the
//! timeline renders server time past the moment of the prediction with
//! authoritative data that covers it: then both are compared at the same
//! server time (the transit delay is accounted for by the comparison, not
//! guessed), the error is recorded, and the entity is handed back to the
//! timeline, which blends from the predicted pose into the authoritative
//! one with its speed-limited correction instead of jumping.

use std::collections::HashMap;

use crate::core::pose::{Pose, Sample};
use crate::core::prediction::{dead_reckon, Order, Rates};

/// How long a prediction may wait for authoritative data (s of server
/// time) before it is handed back anyway.
pub const PREDICTION_TIMEOUT: f64 = 2.0;

#[derive(Clone, Copy, Debug)]
struct Predicted {
    /// The predicted state, stamped with the server time it was made at.
    sample: Sample,
    /// The pose shown at the last tick.
    shown: Option<Pose>,
}

/// Counters of predictions.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PredictionStats {
    /// Predictions handed back after authoritative data covered them.
    pub confirmed: u64,
    /// Predictions handed back after the timeout, unconfirmed.
    pub timed_out: u64,
    /// Distance between prediction and authority at the same server time,
    /// for the last confirmed prediction and the largest so far (m).
    pub last_error: f32,
    pub max_error: f32,
}

/// What to do with a predicted entity this tick.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    /// Keep showing this pose.
    Show(Pose),
    /// Hand back to the timeline, blending from this pose.
    HandBack(Pose),
}

/// Every predicted entity of one client.
#[derive(Debug, Default)]
pub struct PredictionOverlay {
    entries: HashMap<u64, Predicted>,
    stats: PredictionStats,
}

fn rates_of(sample: &Sample) -> Rates {
    Rates {
        velocity: if sample.flags.has_velocity() {
            sample.velocity
        } else {
            glam::Vec3::ZERO
        },
        angular_velocity: if sample.flags.has_angular_velocity() {
            sample.angular_velocity
        } else {
            glam::Vec3::ZERO
        },
        acceleration: glam::Vec3::ZERO,
    }
}

/// `sample` dead-reckoned to server time `t` (never backwards).
fn pose_at(sample: &Sample, t: f64) -> Pose {
    let tau = (t - sample.server_time).max(0.0) as f32;
    dead_reckon(&sample.pose, &rates_of(sample), tau, Order::First)
}

impl PredictionOverlay {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn contains(&self, entity: u64) -> bool {
        self.entries.contains_key(&entity)
    }

    pub fn stats(&self) -> PredictionStats {
        self.stats
    }

    /// Shows `sample` (stamped with the current server time) for `entity`
    /// from now on; a newer prediction replaces an older one.
    pub fn predict(&mut self, entity: u64, sample: Sample) {
        let shown = self.entries.get(&entity).and_then(|p| p.shown);
        self.entries.insert(entity, Predicted { sample, shown });
    }

    /// Forgets `entity` (removed, or now simulated here).
    pub fn remove(&mut self, entity: u64) {
        self.entries.remove(&entity);
    }

    /// Decides for `entity` at server time `present`, given the timeline's
    /// render time, the newest authoritative sample time, and the pose the
    /// timeline shows at its render time.
    pub fn judge(
        &mut self,
        entity: u64,
        present: f64,
        render: f64,
        newest: Option<f64>,
        timeline_pose: Pose,
    ) -> Option<Verdict> {
        let p = self.entries.get_mut(&entity)?;
        let made = p.sample.server_time;
        let shown = pose_at(&p.sample, present);
        let covered = render >= made && newest.is_some_and(|t| t >= made);
        if covered {
            // Same server time on both sides: the prediction's error.
            let error = pose_at(&p.sample, render)
                .position
                .distance(timeline_pose.position);
            self.stats.confirmed += 1;
            self.stats.last_error = error;
            self.stats.max_error = self.stats.max_error.max(error);
            self.entries.remove(&entity);
            return Some(Verdict::HandBack(shown));
        }
        if present - made > PREDICTION_TIMEOUT {
            self.stats.timed_out += 1;
            self.entries.remove(&entity);
            return Some(Verdict::HandBack(shown));
        }
        p.shown = Some(shown);
        Some(Verdict::Show(shown))
    }

    /// Entities with a prediction, sorted.
    pub fn entities(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.entries.keys().copied().collect();
        v.sort_unstable();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Quat, Vec3};

    #[test]
    fn shows_the_prediction_until_authority_covers_it_then_hands_back() {
        let mut o = PredictionOverlay::default();
        // Predicted at server time 10: pushed to x = 1 moving at 2 m/s.
        o.predict(
            7,
            Sample::at(10.0, Vec3::X, Quat::IDENTITY).with_velocity(Vec3::X * 2.0),
        );
        let timeline = Pose::new(Vec3::ZERO, Quat::IDENTITY);
        // Render time still before the command: keep predicting (present 10.5).
        let v = o.judge(7, 10.5, 9.9, Some(10.2), timeline).unwrap();
        assert_eq!(v, Verdict::Show(Pose::new(Vec3::X * 2.0, Quat::IDENTITY)));
        // Rendering past 10 with data beyond it: compare at render time 10.1.
        let truth = Pose::new(Vec3::X * 1.25, Quat::IDENTITY);
        let v = o.judge(7, 10.6, 10.1, Some(10.3), truth).unwrap();
        assert!(matches!(v, Verdict::HandBack(p) if (p.position.x - 2.2).abs() < 1e-5));
        let s = o.stats();
        assert_eq!(s.confirmed, 1);
        assert!((s.last_error - 0.05).abs() < 1e-5, "{}", s.last_error);
        assert!(o.judge(7, 10.7, 10.2, Some(10.3), truth).is_none());
    }

    #[test]
    fn an_unconfirmed_prediction_times_out() {
        let mut o = PredictionOverlay::default();
        o.predict(1, Sample::at(0.0, Vec3::ONE, Quat::IDENTITY));
        let p = Pose::new(Vec3::ZERO, Quat::IDENTITY);
        assert!(matches!(
            o.judge(1, 1.0, 5.0, None, p),
            Some(Verdict::Show(_))
        ));
        assert!(matches!(
            o.judge(1, PREDICTION_TIMEOUT + 0.1, 5.0, None, p),
            Some(Verdict::HandBack(_))
        ));
        assert_eq!(o.stats().timed_out, 1);
    }
}
