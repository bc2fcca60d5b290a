//! Adaptive target delay: the smallest delay that would have kept the
//! render clock within the newest data for all but `budget` of the recent
//! window (a windowed hindsight optimum, recomputed on every arrival).
//!
//! For a frame that arrives at `recv` when the newest server time held was
//! `prev`, a render clock `d` behind the estimated arrival clock reaches
//! `prev` before the frame is there whenever `d < recv + offset - prev`,
//! and then runs past the data for exactly `recv + offset - prev - d`
//! seconds. That requirement folds jitter, loss (a lost frame doubles the
//! gap) and stalls into one number per frame.

use std::collections::VecDeque;

#[derive(Clone, Copy, Debug)]
struct Arrival {
    receive_time: f64,
    previous_newest: f64,
}

/// Tracks arrivals and computes the target delay.
#[derive(Clone, Debug)]
pub struct DelayEstimator {
    window: f64,
    budget: f64,
    arrivals: VecDeque<Arrival>,
    scratch: Vec<f64>,
    target: Option<f64>,
}

impl DelayEstimator {
    pub fn new(window: f64, budget: f64) -> Self {
        DelayEstimator {
            window,
            budget,
            arrivals: VecDeque::new(),
            scratch: Vec::new(),
            target: None,
        }
    }

    /// Records an in-order frame: it arrived at `receive_time` while the
    /// newest server time held was `previous_newest`.
    pub fn on_frame(&mut self, receive_time: f64, previous_newest: f64) {
        self.arrivals.push_back(Arrival {
            receive_time,
            previous_newest,
        });
        let oldest = receive_time - self.window;
        while self
            .arrivals
            .front()
            .is_some_and(|a| a.receive_time < oldest)
        {
            self.arrivals.pop_front();
        }
    }

    /// Recomputes the target for the current clock `offset`.
    pub fn recompute(&mut self, offset: f64) -> Option<f64> {
        let (first, last) = match (self.arrivals.front(), self.arrivals.back()) {
            (Some(f), Some(l)) => (f.receive_time, l.receive_time),
            _ => return self.target,
        };
        self.scratch.clear();
        self.scratch.extend(
            self.arrivals
                .iter()
                .map(|a| a.receive_time + offset - a.previous_newest),
        );
        // Largest first.
        self.scratch
            .sort_unstable_by(|a, b| b.partial_cmp(a).unwrap_or(std::cmp::Ordering::Equal));
        let allowed = self.budget * (last - first);
        self.target = Some(smallest_delay_within(&self.scratch, allowed));
        self.target
    }

    pub fn target(&self) -> Option<f64> {
        self.target
    }
}

/// Smallest `d >= 0` with `sum(max(0, r - d)) <= allowed` over
/// `requirements` sorted largest first.
pub fn smallest_delay_within(requirements: &[f64], allowed: f64) -> f64 {
    let mut sum = 0.0;
    for (k, &r) in requirements.iter().enumerate() {
        sum += r;
        let count = (k + 1) as f64;
        let candidate = (sum - allowed) / count;
        let next = requirements.get(k + 1).copied().unwrap_or(0.0);
        if candidate >= next {
            return candidate.max(next).max(0.0);
        }
    }
    0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_zero_takes_the_largest_requirement() {
        assert_eq!(smallest_delay_within(&[0.3, 0.1, 0.05], 0.0), 0.3);
    }

    #[test]
    fn budget_absorbs_the_tallest_spikes() {
        // Excess above d: (0.3 - d) + (0.2 - d) = 0.1 -> d = 0.2.
        let d = smallest_delay_within(&[0.3, 0.2, 0.1, 0.05], 0.1);
        assert!((d - 0.2).abs() < 1e-12);
        // A small budget trims the top only: 0.3 - d = 0.05 -> 0.25.
        let d = smallest_delay_within(&[0.3, 0.2, 0.1], 0.05);
        assert!((d - 0.25).abs() < 1e-12);
    }

    #[test]
    fn steady_stream_needs_one_interval_plus_lateness() {
        let mut e = DelayEstimator::new(10.0, 0.0);
        // 20 Hz, 40 ms latency, one packet 30 ms late.
        for i in 1..100 {
            let st = i as f64 * 0.05;
            let late = if i == 50 { 0.03 } else { 0.0 };
            e.on_frame(st + 0.04 + late, st - 0.05);
        }
        let d = e.recompute(-0.04).unwrap();
        assert!((d - 0.08).abs() < 1e-9, "{d}");
    }
}
