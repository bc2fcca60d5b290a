//! Deterministic, seeded motion for the quality benchmark: entities that
//! drive, turn, change speed, stop, spin and change velocity abruptly (the
//! S4 example: 2 m/s along x, then 4 m/s along y after 10 ms).
//!
//! Motion is integrated at 1 kHz and stored, so the truth at any instant is
//! known to well under a millimetre.

use glam::{Quat, Vec3};

use crate::core::pose::{Pose, Sample};

const STEP: f64 = 0.001;

/// The true path of one entity.
#[derive(Clone, Debug)]
pub struct Trajectory {
    positions: Vec<Vec3>,
    yaws: Vec<f32>,
    velocities: Vec<Vec3>,
    yaw_rates: Vec<f32>,
    /// Fastest the entity ever moves (m/s).
    pub max_speed: f32,
}

impl Trajectory {
    fn index(&self, t: f64) -> (usize, f32) {
        let x = (t / STEP).max(0.0);
        let i = (x.floor() as usize).min(self.positions.len() - 2);
        (i, (x - i as f64).min(1.0) as f32)
    }

    /// True pose at time `t` (seconds since the start).
    pub fn pose(&self, t: f64) -> Pose {
        let (i, f) = self.index(t);
        let p = self.positions[i].lerp(self.positions[i + 1], f);
        let yaw = self.yaws[i] + (self.yaws[i + 1] - self.yaws[i]) * f;
        Pose::new(p, Quat::from_rotation_y(yaw))
    }

    /// The sample a server would send at `t`.
    pub fn sample(&self, t: f64) -> Sample {
        let (i, _) = self.index(t);
        let pose = self.pose(t);
        Sample::at(t, pose.position, pose.rotation)
            .with_velocity(self.velocities[i])
            .with_angular_velocity(Vec3::new(0.0, self.yaw_rates[i], 0.0))
    }
}

#[derive(Clone, Copy)]
enum Segment {
    /// Hold speed, turn at a rate (rad/s), spin the body at a rate.
    Drive { speed: f32, turn: f32, spin: f32 },
    /// Stand still, possibly spinning.
    Stop { spin: f32 },
    /// New heading and speed at once (a character controller's input change).
    Snap { heading: f32, speed: f32 },
}

/// Generates `count` trajectories of `duration` seconds from `seed`.
/// Entity 0 starts with the S4 example.
pub fn generate(seed: u64, count: usize, duration: f64) -> Vec<Trajectory> {
    (0..count)
        .map(|i| {
            trajectory(
                seed.wrapping_mul(1_000_003).wrapping_add(i as u64),
                duration,
                i == 0,
            )
        })
        .collect()
}

fn trajectory(seed: u64, duration: f64, s4_example: bool) -> Trajectory {
    let mut rng = fastrand::Rng::with_seed(seed);
    let steps = (duration / STEP).ceil() as usize + 2;
    let mut t = Trajectory {
        positions: Vec::with_capacity(steps),
        yaws: Vec::with_capacity(steps),
        velocities: Vec::with_capacity(steps),
        yaw_rates: Vec::with_capacity(steps),
        max_speed: 0.0,
    };
    let mut pos = Vec3::new(rng.f32() * 40.0 - 20.0, 0.0, rng.f32() * 40.0 - 20.0);
    let mut heading = rng.f32() * std::f32::consts::TAU;
    let mut speed = 0.0f32;
    let mut body = heading;
    let accel = 8.0; // m/s^2 towards a new speed
    let mut segment = Segment::Drive {
        speed: 2.0,
        turn: 0.0,
        spin: 0.0,
    };
    let mut segment_left = 0.0f64;
    if s4_example {
        heading = 0.0; // +x
        speed = 2.0;
        body = 0.0;
        segment = Segment::Drive {
            speed: 2.0,
            turn: 0.0,
            spin: 0.0,
        };
        segment_left = 0.010;
    }
    let mut s4_pending = s4_example;
    // During the S4 example's second segment the motion is along +y.
    let mut along_y = false;
    for _ in 0..steps {
        if segment_left <= 0.0 {
            if s4_pending {
                s4_pending = false;
                segment = Segment::Snap {
                    heading,
                    speed: 4.0,
                };
                segment_left = 1.0;
                along_y = true;
            } else {
                along_y = false;
                segment = pick(&mut rng, heading);
                segment_left = 0.3 + rng.f64() * 2.2;
            }
            if let Segment::Snap {
                heading: h,
                speed: s,
            } = segment
            {
                heading = h;
                speed = s;
                segment = Segment::Drive {
                    speed: s,
                    turn: 0.0,
                    spin: 0.0,
                };
            }
        }
        let (target_speed, turn, spin) = match segment {
            Segment::Drive { speed, turn, spin } => (speed, turn, spin),
            Segment::Stop { spin } => (0.0, 0.0, spin),
            Segment::Snap { speed, .. } => (speed, 0.0, 0.0),
        };
        let dv = (target_speed - speed).clamp(-accel * STEP as f32, accel * STEP as f32);
        speed += dv;
        heading += turn * STEP as f32;
        // The body faces the heading, plus any spin.
        let spin_rate = spin + turn;
        body += spin_rate * STEP as f32;
        // Heading 0 = +x, pi/2 = +z: motion on the ground plane (Y up).
        let velocity = if along_y {
            Vec3::new(0.0, speed, 0.0)
        } else {
            Vec3::new(heading.cos() * speed, 0.0, heading.sin() * speed)
        };
        t.positions.push(pos);
        t.yaws.push(body);
        t.velocities.push(velocity);
        t.yaw_rates.push(spin_rate);
        t.max_speed = t.max_speed.max(speed);
        pos += velocity * STEP as f32;
        segment_left -= STEP;
    }
    t
}

fn pick(rng: &mut fastrand::Rng, heading: f32) -> Segment {
    let roll = rng.f32();
    if roll < 0.40 {
        Segment::Drive {
            speed: 1.0 + rng.f32() * 5.0,
            turn: if rng.bool() {
                0.0
            } else {
                (rng.f32() - 0.5) * 4.0
            },
            spin: 0.0,
        }
    } else if roll < 0.55 {
        Segment::Stop {
            spin: if rng.f32() < 0.3 {
                (rng.f32() - 0.5) * 12.0
            } else {
                0.0
            },
        }
    } else if roll < 0.70 {
        Segment::Drive {
            speed: 1.0 + rng.f32() * 3.0,
            turn: 0.0,
            spin: (rng.f32() - 0.5) * 16.0,
        }
    } else if roll < 0.85 {
        Segment::Snap {
            heading: heading + (rng.f32() - 0.5) * std::f32::consts::PI * 1.5,
            speed: 1.0 + rng.f32() * 5.0,
        }
    } else {
        Segment::Drive {
            speed: 0.5 + rng.f32() * 7.0,
            turn: (rng.f32() - 0.5) * 2.0,
            spin: 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s4_example_turns_after_ten_milliseconds() {
        let t = &generate(1, 1, 2.0)[0];
        let early = t.sample(0.005);
        assert!(early.velocity.distance(Vec3::new(2.0, 0.0, 0.0)) < 1e-4);
        let late = t.sample(0.02);
        assert!(late.velocity.distance(Vec3::new(0.0, 4.0, 0.0)) < 1e-3);
    }

    #[test]
    fn same_seed_same_paths() {
        let a = generate(9, 3, 5.0);
        let b = generate(9, 3, 5.0);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.pose(4.321), y.pose(4.321));
        }
        assert_ne!(generate(10, 1, 5.0)[0].pose(4.0), a[0].pose(4.0));
    }
}
