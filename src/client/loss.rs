//! Round-trip loss from clock probes: the share of recent pings that got
//! no pong within a second.

use std::collections::VecDeque;

/// A probe is lost if unanswered this long.
const ANSWER_WITHIN: f64 = 1.0;
/// Probes the estimate looks at.
const WINDOW: usize = 64;

#[derive(Clone, Debug, Default)]
pub struct LossMeter {
    probes: VecDeque<(u32, f64, bool)>,
}

impl LossMeter {
    pub fn sent(&mut self, sequence: u32, at: f64) {
        self.probes.push_back((sequence, at, false));
        if self.probes.len() > WINDOW {
            self.probes.pop_front();
        }
    }

    pub fn answered(&mut self, sequence: u32) {
        if let Some(p) = self.probes.iter_mut().find(|p| p.0 == sequence) {
            p.2 = true;
        }
    }

    /// Share of decided probes (answered, or older than a second) lost.
    pub fn loss(&self, now: f64) -> f64 {
        let decided: Vec<bool> = self
            .probes
            .iter()
            .filter(|p| p.2 || now - p.1 > ANSWER_WITHIN)
            .map(|p| p.2)
            .collect();
        if decided.is_empty() {
            return 0.0;
        }
        decided.iter().filter(|a| !**a).count() as f64 / decided.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_unanswered_probes_once_they_are_late() {
        let mut m = LossMeter::default();
        for i in 0..10 {
            m.sent(i, i as f64 * 0.25);
            if i % 5 != 0 {
                m.answered(i);
            }
        }
        // Probe 5 (t = 1.25) is not late yet at 2.0; probe 0 is.
        assert!((m.loss(2.0) - 1.0 / 9.0).abs() < 1e-9);
        assert!((m.loss(5.0) - 0.2).abs() < 1e-9);
    }
}
