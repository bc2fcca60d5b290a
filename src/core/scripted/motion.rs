//! Closed-form motion on a plane with a constant turn rate and a constant
//! acceleration: the one piece every scripted path is made of. Each call
//! does the same floating-point operations in the same order on every
//! machine, so a server and its clients get the same numbers for the same
//! inputs (no integration step, no accumulated drift).

/// Where an element is on its plane and where it heads (radians,
/// counter-clockwise from +X).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Kinematic {
    pub x: f64,
    pub y: f64,
    pub heading: f64,
}

/// Below this |turn rate x time| the closed forms lose digits to
/// cancellation (they divide by its square); the power series is exact
/// to rounding there.
const SERIES_BELOW: f64 = 1.0;
/// Terms of the series: |phi|^k / k! < 1e-19 from here on for |phi| < 1.
const SERIES_TERMS: usize = 22;

/// G(phi) = integral over t in [0, 1] of e^(i phi t), and
/// F(phi) = integral over t in [0, 1] of t e^(i phi t), as (re, im) pairs.
fn unit_integrals(phi: f64) -> ((f64, f64), (f64, f64)) {
    if phi.abs() < SERIES_BELOW {
        // Sum of (i phi)^k / k! times 1/(k+1) (for G) and 1/(k+2) (for F).
        let (mut g, mut f) = ((0.0, 0.0), (0.0, 0.0));
        let mut power = 1.0; // phi^k / k!
        for k in 0..SERIES_TERMS {
            let (gk, fk) = (power / (k + 1) as f64, power / (k + 2) as f64);
            // i^k cycles 1, i, -1, -i.
            match k % 4 {
                0 => (g.0, f.0) = (g.0 + gk, f.0 + fk),
                1 => (g.1, f.1) = (g.1 + gk, f.1 + fk),
                2 => (g.0, f.0) = (g.0 - gk, f.0 - fk),
                _ => (g.1, f.1) = (g.1 - gk, f.1 - fk),
            }
            power *= phi / (k + 1) as f64;
        }
        return (g, f);
    }
    let (s, c) = phi.sin_cos();
    let g = (s / phi, (1.0 - c) / phi);
    let phi2 = phi * phi;
    let f = ((c + phi * s - 1.0) / phi2, (s - phi * c) / phi2);
    (g, f)
}

/// The state after `time` seconds from `start`, moving at `speed` (m/s)
/// that grows by `accel` (m/s^2) while the heading turns at `turn_rate`
/// (rad/s). The caller keeps speed non-negative over the interval.
pub fn advance(start: Kinematic, speed: f64, accel: f64, turn_rate: f64, time: f64) -> Kinematic {
    if time <= 0.0 {
        return start;
    }
    // Displacement = e^(i heading) * (speed * t * G(w t) + accel * t^2 * F(w t)).
    let (g, f) = unit_integrals(turn_rate * time);
    let (a, b) = (speed * time, accel * time * time);
    let (p, q) = (a * g.0 + b * f.0, a * g.1 + b * f.1);
    let (s, c) = start.heading.sin_cos();
    Kinematic {
        x: start.x + (c * p - s * q),
        y: start.y + (s * p + c * q),
        heading: start.heading + turn_rate * time,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Midpoint integration with many small steps: the reference.
    fn integrate(start: Kinematic, speed: f64, accel: f64, turn: f64, time: f64) -> Kinematic {
        let n = 200_000;
        let dt = time / n as f64;
        let mut k = start;
        for i in 0..n {
            let t = (i as f64 + 0.5) * dt;
            let v = speed + accel * t;
            let h = start.heading + turn * t;
            k.x += v * h.cos() * dt;
            k.y += v * h.sin() * dt;
        }
        k.heading = start.heading + turn * time;
        k
    }

    #[test]
    fn matches_numerical_integration_on_both_sides_of_the_series_switch() {
        let start = Kinematic {
            x: 3.0,
            y: -2.0,
            heading: 0.7,
        };
        for &(speed, accel, turn, time) in &[
            (2.0, 0.0, 0.0, 3.0),
            (2.0, 0.5, 0.0, 3.0),
            (1.5, 0.2, 0.1, 2.0),   // phi 0.2: series
            (1.5, 0.2, -0.45, 2.0), // phi -0.9: series
            (1.5, 0.2, 0.55, 2.0),  // phi 1.1: closed form
            (4.0, -0.3, 2.5, 4.0),  // phi 10
            (0.0, 1.0, -1.0, 1.0),
            (3.0, 0.0, 1e-9, 10.0),
        ] {
            let exact = advance(start, speed, accel, turn, time);
            let reference = integrate(start, speed, accel, turn, time);
            let d = ((exact.x - reference.x).powi(2) + (exact.y - reference.y).powi(2)).sqrt();
            assert!(d < 1e-8, "{speed} {accel} {turn} {time}: off by {d}");
            assert!((exact.heading - reference.heading).abs() < 1e-12);
        }
    }

    #[test]
    fn the_series_and_the_closed_form_agree_at_the_switch() {
        for phi in [0.999_999, 1.0, 1.000_001, -1.0] {
            let ((gr, gi), (fr, fi)) = unit_integrals(phi);
            let (s, c) = f64::sin_cos(phi);
            assert!((gr - s / phi).abs() < 1e-14);
            assert!((gi - (1.0 - c) / phi).abs() < 1e-14);
            assert!((fr - (c + phi * s - 1.0) / (phi * phi)).abs() < 1e-13);
            assert!((fi - (s - phi * c) / (phi * phi)).abs() < 1e-13);
        }
    }

    #[test]
    fn splitting_an_interval_changes_nothing_that_matters() {
        // Two halves land where one whole does (within rounding): the
        // motion is continuous, whatever the evaluation times.
        let start = Kinematic {
            x: 0.0,
            y: 0.0,
            heading: 0.0,
        };
        let whole = advance(start, 2.0, 0.1, 0.8, 5.0);
        let half = advance(start, 2.0, 0.1, 0.8, 2.5);
        let halves = advance(half, 2.0 + 0.1 * 2.5, 0.1, 0.8, 2.5);
        assert!((whole.x - halves.x).abs() < 1e-12 && (whole.y - halves.y).abs() < 1e-12);
    }
}
