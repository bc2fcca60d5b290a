//! Dead reckoning (S3 point 7, S4): predicting a pose from a sample by its
//! first-order (velocity) or second-order (acceleration) rate.

use glam::Vec3;

use super::interpolate::integrate_rotation;
use super::pose::{Pose, Sample};

/// How far a prediction looks at the rates of change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Order {
    /// Position and rotation move with constant velocity.
    #[default]
    First,
    /// Position also follows the acceleration.
    Second,
}

/// The rates a prediction uses: the sample's own velocity (or one derived
/// from the previous sample) and an acceleration.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rates {
    pub velocity: Vec3,
    pub angular_velocity: Vec3,
    pub acceleration: Vec3,
}

impl Rates {
    /// Rates of `newest` given the sample before it (if any). Velocities the
    /// sample carries win over finite differences.
    pub fn estimate(previous: Option<&Sample>, newest: &Sample) -> Rates {
        let mut rates = Rates::default();
        // A new holder's first state does not continue the old holder's.
        let previous = previous.filter(|_| !newest.flags.new_source());
        let dt = previous
            .map(|p| (newest.server_time - p.server_time) as f32)
            .filter(|dt| *dt > 1e-6);
        rates.velocity = if newest.flags.has_velocity() {
            newest.velocity
        } else if let (Some(p), Some(dt)) = (previous, dt) {
            (newest.pose.position - p.pose.position) / dt
        } else {
            Vec3::ZERO
        };
        rates.angular_velocity = if newest.flags.has_angular_velocity() {
            newest.angular_velocity
        } else if let (Some(p), Some(dt)) = (previous, dt) {
            let delta = newest.pose.rotation * p.pose.rotation.inverse();
            let delta = if delta.w < 0.0 { -delta } else { delta };
            delta.to_scaled_axis() / dt
        } else {
            Vec3::ZERO
        };
        if let (Some(p), Some(dt)) = (previous, dt) {
            if newest.flags.has_velocity() && p.flags.has_velocity() {
                rates.acceleration = (newest.velocity - p.velocity) / dt;
            }
        }
        if newest.flags.teleport() {
            // A jump says nothing about motion.
            if !newest.flags.has_velocity() {
                rates.velocity = Vec3::ZERO;
            }
            if !newest.flags.has_angular_velocity() {
                rates.angular_velocity = Vec3::ZERO;
            }
            rates.acceleration = Vec3::ZERO;
        }
        rates
    }
}

/// The pose `tau` seconds after `pose`, moving with `rates`.
#[inline]
pub fn dead_reckon(pose: &Pose, rates: &Rates, tau: f32, order: Order) -> Pose {
    let mut position = pose.position + rates.velocity * tau;
    if order == Order::Second {
        position += rates.acceleration * (0.5 * tau * tau);
    }
    Pose {
        position,
        rotation: integrate_rotation(pose.rotation, rates.angular_velocity, tau),
    }
}

/// Velocity at `tau` seconds after the sample under `rates` and `order`.
#[inline]
pub fn velocity_after(rates: &Rates, tau: f32, order: Order) -> Vec3 {
    match order {
        Order::First => rates.velocity,
        Order::Second => rates.velocity + rates.acceleration * tau,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    #[test]
    fn second_order_follows_constant_acceleration() {
        let a = Sample::at(0.0, Vec3::ZERO, Quat::IDENTITY).with_velocity(Vec3::X);
        let b = Sample::at(1.0, Vec3::new(1.5, 0.0, 0.0), Quat::IDENTITY)
            .with_velocity(Vec3::new(2.0, 0.0, 0.0));
        let rates = Rates::estimate(Some(&a), &b);
        assert_eq!(rates.acceleration, Vec3::X);
        let p = dead_reckon(&b.pose, &rates, 1.0, Order::Second);
        // x(2) = 0 + 1*2 + 0.5*1*4 = 4
        assert!((p.position.x - 4.0).abs() < 1e-5);
        let p1 = dead_reckon(&b.pose, &rates, 1.0, Order::First);
        assert!((p1.position.x - 3.5).abs() < 1e-5);
    }

    #[test]
    fn finite_differences_when_no_velocity_is_sent() {
        let a = Sample::at(0.0, Vec3::ZERO, Quat::IDENTITY);
        let b = Sample::at(0.5, Vec3::new(0.0, 0.0, 1.0), Quat::from_rotation_y(0.5));
        let rates = Rates::estimate(Some(&a), &b);
        assert!(rates.velocity.distance(Vec3::new(0.0, 0.0, 2.0)) < 1e-5);
        assert!(rates.angular_velocity.distance(Vec3::new(0.0, 1.0, 0.0)) < 1e-4);
    }
}
