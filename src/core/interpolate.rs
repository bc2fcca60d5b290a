//! Interpolation primitives: linear and Hermite positions, shortest-path
//! rotations, and rotations driven by angular velocity.

use glam::{Quat, Vec3};

/// Linear interpolation; `t` outside [0, 1] extrapolates.
#[inline]
pub fn lerp(a: Vec3, b: Vec3, t: f32) -> Vec3 {
    a + (b - a) * t
}

/// Cubic Hermite between `p0` (velocity `v0`) and `p1` (velocity `v1`) over
/// an interval of `dt` seconds, at fraction `t` in [0, 1].
#[inline]
pub fn hermite(p0: Vec3, v0: Vec3, p1: Vec3, v1: Vec3, dt: f32, t: f32) -> Vec3 {
    let t2 = t * t;
    let t3 = t2 * t;
    let h00 = 2.0 * t3 - 3.0 * t2 + 1.0;
    let h10 = t3 - 2.0 * t2 + t;
    let h01 = -2.0 * t3 + 3.0 * t2;
    let h11 = t3 - t2;
    p0 * h00 + v0 * (h10 * dt) + p1 * h01 + v1 * (h11 * dt)
}

/// Shortest-path spherical interpolation. Close rotations use a normalised
/// lerp, which is indistinguishable there and several times cheaper.
#[inline(always)]
pub fn slerp(a: Quat, b: Quat, t: f32) -> Quat {
    let mut dot = a.dot(b);
    let b = if dot < 0.0 {
        dot = -dot;
        -b
    } else {
        b
    };
    if dot > 0.9995 {
        // Under ~3.6 degrees apart: nlerp error is below 1e-6 rad, and the
        // blend's length is within 3e-4 of 1, where one Newton step
        // normalises to 1e-7 without a square root or a division.
        let q = a * (1.0 - t) + b * t;
        return q * (1.5 - 0.5 * q.length_squared());
    }
    let theta = dot.min(1.0).acos();
    let sin_theta = theta.sin();
    let wa = ((1.0 - t) * theta).sin() / sin_theta;
    let wb = (t * theta).sin() / sin_theta;
    (a * wa + b * wb).normalize()
}

/// Rotation `q` advanced by the world-space angular velocity `omega` over
/// `dt` seconds.
#[inline]
pub fn integrate_rotation(q: Quat, omega: Vec3, dt: f32) -> Quat {
    let rotvec = omega * dt;
    if rotvec.length_squared() < 1e-18 {
        return q;
    }
    (Quat::from_scaled_axis(rotvec) * q).normalize()
}

/// Continues the rotation change from `a` to `b` by fraction `t` (`t` > 1
/// extrapolates along the same axis; S1's formula with a > 1).
pub fn extrapolate_rotation(a: Quat, b: Quat, t: f32) -> Quat {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    let delta = (b * a.inverse()).normalize();
    let (axis, angle) = delta.to_axis_angle();
    if !angle.is_finite() || angle.abs() < 1e-9 {
        return b;
    }
    (Quat::from_axis_angle(axis, angle * (t - 1.0)) * b).normalize()
}

/// Rotation between two samples that carry angular velocities. Each end is
/// carried towards the other by its own angular velocity and the two are
/// blended with a smoothstep weight, so that spins faster than half a turn
/// per interval keep their direction (a plain slerp would take the short way
/// round).
pub fn rotation_with_angular_velocity(
    a: Quat,
    omega_a: Vec3,
    b: Quat,
    omega_b: Vec3,
    dt: f32,
    t: f32,
) -> Quat {
    let from_a = integrate_rotation(a, omega_a, t * dt);
    let from_b = integrate_rotation(b, omega_b, -(1.0 - t) * dt);
    let w = t * t * (3.0 - 2.0 * t);
    slerp(from_a, from_b, w)
}

/// Angle in radians between two rotations (shortest way).
#[inline]
pub fn angle_between(a: Quat, b: Quat) -> f32 {
    let d = a.dot(b).abs().min(1.0);
    2.0 * d.acos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hermite_hits_ends_and_matches_linear_motion() {
        let p0 = Vec3::new(0.0, 0.0, 0.0);
        let v = Vec3::new(2.0, 0.0, 0.0);
        let p1 = p0 + v * 0.05;
        assert!(hermite(p0, v, p1, v, 0.05, 0.0).distance(p0) < 1e-6);
        assert!(hermite(p0, v, p1, v, 0.05, 1.0).distance(p1) < 1e-6);
        let mid = hermite(p0, v, p1, v, 0.05, 0.5);
        assert!(mid.distance(lerp(p0, p1, 0.5)) < 1e-6);
    }

    #[test]
    fn slerp_takes_the_short_way_and_keeps_unit_length() {
        let a = Quat::from_rotation_y(0.1);
        let b = -Quat::from_rotation_y(0.5); // same rotation, other hemisphere
        let m = slerp(a, b, 0.5);
        assert!((m.length() - 1.0).abs() < 1e-5);
        assert!(angle_between(m, Quat::from_rotation_y(0.3)) < 1e-3);
        let far = slerp(Quat::IDENTITY, Quat::from_rotation_y(2.0), 0.25);
        assert!(angle_between(far, Quat::from_rotation_y(0.5)) < 1e-3);
    }

    #[test]
    fn fast_spin_keeps_direction_with_angular_velocity() {
        // 270 degrees per 0.1 s: the short way would go backwards.
        let omega = Vec3::new(0.0, 1.5 * std::f32::consts::PI / 0.1, 0.0);
        let a = Quat::IDENTITY;
        let b = integrate_rotation(a, omega, 0.1);
        let mid = rotation_with_angular_velocity(a, omega, b, omega, 0.1, 0.5);
        let expected = integrate_rotation(a, omega, 0.05);
        assert!(angle_between(mid, expected) < 1e-3);
    }

    #[test]
    fn extrapolated_rotation_continues_the_turn() {
        let a = Quat::from_rotation_y(0.0);
        let b = Quat::from_rotation_y(0.2);
        let c = extrapolate_rotation(a, b, 2.0);
        assert!(angle_between(c, Quat::from_rotation_y(0.4)) < 1e-4);
    }
}
