//! Where an element is along its path at a time since it started: the
//! state at each segment start is the fold of whole-segment moves from
//! the spawn (the same operations in the same order everywhere), and the
//! time inside the segment is one closed-form move. A cursor keeps the
//! last segment start, so ticks that move forward cost one move each.

use std::f64::consts::TAU;

use super::config::{Path, PathEnd};
use super::motion::{advance, Kinematic};

/// Most whole-segment moves one element may ever need (bounds the work of
/// evaluating a long-lived repeating element from its spawn).
pub const MAX_SEGMENT_MOVES: u64 = 1_000_000;

/// A segment start already computed: segment `segment` of run `run`
/// (run 1, segment 0 is the end of the path for paths that do not repeat).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cursor {
    run: u64,
    segment: usize,
    /// The state at that segment's start, before its turn.
    at: Kinematic,
}

impl Cursor {
    /// The spawn: run 0, segment 0.
    pub fn start(origin: Kinematic) -> Self {
        Cursor {
            run: 0,
            segment: 0,
            at: origin,
        }
    }
}

impl Path {
    /// Whole-segment moves needed to evaluate an element at any time of a
    /// life of `life` seconds.
    pub fn moves_for(&self, life: f64) -> u64 {
        let n = self.segments.len() as u64;
        match self.end {
            PathEnd::Repeat => {
                let runs = (life / self.duration).ceil();
                if runs.is_finite() && runs < (u64::MAX / n.max(1)) as f64 {
                    (runs as u64 + 1) * n
                } else {
                    u64::MAX
                }
            }
            PathEnd::Continue | PathEnd::Stop => n,
        }
    }

    /// The state of segment `index` moved through to its end.
    fn through(&self, index: usize, at: Kinematic) -> Kinematic {
        let s = &self.segments[index];
        let start = Kinematic {
            heading: at.heading + s.turn,
            ..at
        };
        let mut end = advance(
            start,
            self.speed * s.speed,
            s.accel(),
            s.turn_rate(),
            s.duration(),
        );
        // Keep the heading small so that its sine and cosine stay exact.
        end.heading = end.heading.rem_euclid(TAU);
        end
    }

    /// Moves `cursor` to segment `segment` of run `run` (from the spawn
    /// `origin` again when the target lies behind it).
    fn seek(&self, origin: Kinematic, cursor: &mut Cursor, run: u64, segment: usize) {
        if (cursor.run, cursor.segment) > (run, segment) {
            *cursor = Cursor::start(origin);
        }
        let n = self.segments.len();
        while (cursor.run, cursor.segment) < (run, segment) {
            cursor.at = self.through(cursor.segment, cursor.at);
            cursor.segment += 1;
            if cursor.segment == n {
                cursor.segment = 0;
                cursor.run += 1;
            }
        }
    }

    /// The state `elapsed` seconds after the start at `origin` (negative
    /// elapsed times read as 0).
    pub fn state_at(&self, origin: Kinematic, elapsed: f64, cursor: &mut Cursor) -> Kinematic {
        let elapsed = elapsed.max(0.0);
        let n = self.segments.len();
        let (run, within) = match self.end {
            PathEnd::Repeat => {
                let run = (elapsed / self.duration).floor();
                let within = (elapsed - run * self.duration).clamp(0.0, self.duration);
                (run as u64, within)
            }
            _ if elapsed >= self.duration => {
                // Past the end: from the end state, straight on or still.
                self.seek(origin, cursor, 1, 0);
                let end = cursor.at;
                if self.end == PathEnd::Stop {
                    return end;
                }
                let last = &self.segments[n - 1];
                let speed = self.speed * last.speed + last.steps as f64 * last.speed_step;
                return advance(end, speed, 0.0, 0.0, elapsed - self.duration);
            }
            _ => (0, elapsed),
        };
        // The segment holding `within`: the last one starting at or before it.
        let segment = self
            .starts
            .partition_point(|&s| s <= within)
            .saturating_sub(1);
        self.seek(origin, cursor, run, segment);
        let s = &self.segments[segment];
        let start = Kinematic {
            heading: cursor.at.heading + s.turn,
            ..cursor.at
        };
        advance(
            start,
            self.speed * s.speed,
            s.accel(),
            s.turn_rate(),
            within - self.starts[segment],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::ScriptedConfig;
    use super::*;

    fn config(text: &str) -> ScriptedConfig {
        ScriptedConfig::parse(format!("netsync-paths 1\n{text}").as_bytes()).unwrap()
    }

    const ORIGIN: Kinematic = Kinematic {
        x: 1.0,
        y: 2.0,
        heading: 0.0,
    };

    #[test]
    fn straight_turning_and_past_the_end() {
        let c = config(
            "path 1\nspeed 2\nsegment steps=10 duration=0.1\n\
             path 2\nspeed 2\nend stop\nsegment steps=10 duration=0.1 turn=90\n\
             path 3\nsegment steps=4 duration=0.25 turn_step=90\n",
        );
        let mut cur = Cursor::start(ORIGIN);
        let p = c.path(1).unwrap();
        let k = p.state_at(ORIGIN, 0.5, &mut cur);
        assert!((k.x - 2.0).abs() < 1e-12 && (k.y - 2.0).abs() < 1e-12);
        // Continue: straight on after the end at the final speed.
        let k = p.state_at(ORIGIN, 3.0, &mut cur);
        assert!((k.x - 7.0).abs() < 1e-12, "{k:?}");
        // Stop: turned left 90 degrees at the start, then still after 1 s.
        let p = c.path(2).unwrap();
        let mut cur = Cursor::start(ORIGIN);
        let k = p.state_at(ORIGIN, 5.0, &mut cur);
        assert!(
            (k.x - 1.0).abs() < 1e-12 && (k.y - 4.0).abs() < 1e-12,
            "{k:?}"
        );
        // A full circle at 1 m/s in 1 s: back at the origin, heading 2 pi.
        let p = c.path(3).unwrap();
        let mut cur = Cursor::start(ORIGIN);
        let k = p.state_at(ORIGIN, 1.0, &mut cur);
        assert!(
            (k.x - 1.0).abs() < 1e-12 && (k.y - 2.0).abs() < 1e-12,
            "{k:?}"
        );
        let half = p.state_at(ORIGIN, 0.5, &mut Cursor::start(ORIGIN));
        // Diameter 1/pi, to the left of +X.
        assert!((half.y - 2.0 - 1.0 / std::f64::consts::PI).abs() < 1e-12);
    }

    #[test]
    fn a_cursor_gives_the_same_bits_as_a_fresh_evaluation() {
        let c = config(
            "path 1\nspeed 1.7\nend repeat\n\
             segment steps=7 duration=0.13 turn=20 speed=1.2 turn_step=3 speed_step=0.01\n\
             segment steps=3 duration=0.4 dir=right turn=45 turn_step=11 speed=0.5\n",
        );
        let p = c.path(1).unwrap();
        let origin = Kinematic {
            x: -3.0,
            y: 8.5,
            heading: 1.1,
        };
        let mut cur = Cursor::start(origin);
        let mut rng = fastrand::Rng::with_seed(3);
        let mut t = 0.0;
        for _ in 0..5000 {
            // Mostly forward, sometimes back in time.
            t = (t + rng.f64() * 0.05 - if rng.u8(0..100) == 0 { 0.5 } else { 0.0 }).max(0.0);
            let a = p.state_at(origin, t, &mut cur);
            let b = p.state_at(origin, t, &mut Cursor::start(origin));
            assert_eq!(a, b, "t = {t}");
        }
        assert!(t > 10.0);
    }

    #[test]
    fn positions_are_continuous_across_segments_and_runs() {
        let c = config(
            "path 1\nspeed 2\nend repeat\n\
             segment steps=5 duration=0.1 speed=1 turn_step=10 speed_step=0.1\n\
             segment steps=5 duration=0.2 turn_step=-5 speed=1.5\n",
        );
        let p = c.path(1).unwrap();
        let mut cur = Cursor::start(ORIGIN);
        let mut last = p.state_at(ORIGIN, 0.0, &mut cur);
        let dt = 1e-4;
        let mut t = 0.0;
        while t < 6.0 {
            t += dt;
            let k = p.state_at(ORIGIN, t, &mut cur);
            let d = ((k.x - last.x).powi(2) + (k.y - last.y).powi(2)).sqrt();
            // Top speed 3 m/s plus 0.5 from the steps: never a jump.
            assert!(d < 4.0 * dt, "jump of {d} m at {t}");
            last = k;
        }
        assert_eq!(
            p.moves_for(6.0),
            10,
            "four runs and one more, two segments each"
        );
    }
}
