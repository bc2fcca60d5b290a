//! Scoring one contender frame by frame against the true paths.

use glam::Vec3;

use super::scenario::Trajectory;
use super::{percentile, rms, ModeResult};
use crate::core::interpolate::angle_between;
use crate::core::timeline::{shown_flags, Shown};

pub(super) struct Scorer<'a> {
    paths: &'a [Trajectory],
    align: Vec<f64>,
    present: Vec<f64>,
    angle_sq: f64,
    delays: Vec<f64>,
    extrapolated: u64,
    stalled: u64,
    jumps: u64,
    counted: u64,
    last_shown: Vec<Option<Vec3>>,
    previous: Option<(f64, f64)>,
}

impl<'a> Scorer<'a> {
    pub fn new(paths: &'a [Trajectory]) -> Self {
        Scorer {
            paths,
            align: Vec::new(),
            present: Vec::new(),
            angle_sq: 0.0,
            delays: Vec::new(),
            extrapolated: 0,
            stalled: 0,
            jumps: 0,
            counted: 0,
            last_shown: vec![None; paths.len()],
            previous: None,
        }
    }

    /// One client frame at true time `now` showing the render time `render`.
    pub fn frame(&mut self, now: f64, render: f64, shown: &[Shown], measuring: bool) {
        if measuring && !shown.is_empty() {
            self.delays.push(now - render);
        }
        for s in shown {
            let id = s.entity as usize;
            let p = s.pose.position;
            if measuring {
                self.entity(id, s, now, render);
            }
            self.last_shown[id] = Some(p);
        }
        self.previous = Some((now, render));
    }

    fn entity(&mut self, id: usize, s: &Shown, now: f64, render: f64) {
        let path = &self.paths[id];
        let p = s.pose.position;
        self.counted += 1;
        let truth_then = path.pose(render);
        let truth_now = path.pose(now);
        self.align.push(p.distance(truth_then.position) as f64);
        self.present.push(p.distance(truth_now.position) as f64);
        let angle = angle_between(s.pose.rotation, truth_now.rotation) as f64;
        self.angle_sq += angle * angle;
        if s.flags & (shown_flags::EXTRAPOLATED | shown_flags::HELD) != 0 {
            self.extrapolated += 1;
        }
        let (Some(prev), Some((prev_now, prev_render))) = (self.last_shown[id], self.previous)
        else {
            return;
        };
        let moved = p.distance(prev);
        // A stall: the path at this mode's render time moves, the object on
        // screen does not.
        let path_moved = truth_then
            .position
            .distance(path.pose(prev_render).position);
        if path_moved > 1e-3 && moved < 0.1 * path_moved {
            self.stalled += 1;
        }
        // A jump: more than twice what the true object can move in this frame.
        let limit = 2.0 * path.max_speed * (now - prev_now) as f32 + 1e-3;
        if moved > limit {
            self.jumps += 1;
        }
    }

    pub fn finish(mut self, label: &str) -> ModeResult {
        let counted = self.counted.max(1) as f64;
        ModeResult {
            label: label.to_string(),
            align_rms: rms(&self.align),
            align_p99: percentile(&mut self.align, 0.99),
            present_rms: rms(&self.present),
            present_p99: percentile(&mut self.present, 0.99),
            present_angle_rms: (self.angle_sq / counted).sqrt().to_degrees(),
            delay_mean: self.delays.iter().sum::<f64>() / self.delays.len().max(1) as f64,
            delay_p99: percentile(&mut self.delays, 0.99),
            extrapolated: self.extrapolated as f64 / counted,
            stalled: self.stalled as f64 / counted,
            jumps: self.jumps,
        }
    }
}
