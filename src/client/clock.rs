//! Server clock estimate from ping/pong (sans-IO): round-trip time,
//! jitter and the offset `server - client`, taken from the low-RTT
//! samples (their one-way halves are the most symmetric), plus S5's drift
//! check: when the client's elapsed time and the estimated server elapsed
//! time part by more than a threshold, resync on the newest sample.

use std::collections::VecDeque;

/// One answered probe.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Probe {
    rtt: f64,
    offset: f64,
}

/// Counters and current estimates.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClockStats {
    pub rtt: f64,
    pub rtt_min: f64,
    /// Mean absolute deviation of recent RTTs.
    pub jitter: f64,
    pub offset: f64,
    /// True once the welcome or a pong gave an offset.
    pub known: bool,
    pub samples: u64,
    pub resyncs: u64,
}

/// The estimator.
#[derive(Clone, Debug)]
pub struct ClockEstimator {
    window: usize,
    drift_threshold: f64,
    probes: VecDeque<Probe>,
    offset: Option<f64>,
    /// Consecutive probes that disagree with the estimate.
    outliers: u32,
    stats: ClockStats,
}

impl ClockEstimator {
    /// Keeps the last `window` probes; resyncs when drift exceeds
    /// `drift_threshold` seconds.
    pub fn new(window: usize, drift_threshold: f64) -> Self {
        ClockEstimator {
            window: window.max(1),
            drift_threshold,
            probes: VecDeque::new(),
            offset: None,
            outliers: 0,
            stats: ClockStats::default(),
        }
    }

    /// S5: the relay's time in its welcome, received at `client_now`
    /// (one-way latency unknown yet: assume zero until probes arrive).
    pub fn welcome(&mut self, server_time: f64, client_now: f64) {
        if self.offset.is_none() {
            self.offset = Some(server_time - client_now);
        }
    }

    /// A pong for a ping sent at `sent` came back at `received` carrying
    /// the relay's clock `server_time`.
    pub fn pong(&mut self, sent: f64, server_time: f64, received: f64) {
        let rtt = received - sent;
        if !((0.0..10.0).contains(&rtt) && server_time.is_finite()) {
            return;
        }
        let probe = Probe {
            rtt,
            offset: server_time - (sent + rtt / 2.0),
        };
        self.probes.push_back(probe);
        if self.probes.len() > self.window {
            self.probes.pop_front();
        }
        self.stats.samples += 1;
        self.stats.rtt = rtt;
        // S5 drift check: the newest probe's offset against the estimate.
        // A probe can be off by at most half its RTT (asymmetric paths), so
        // only a gap beyond that plus the threshold counts; three such
        // probes in a row resync on the newest.
        if let Some(current) = self.offset {
            if (probe.offset - current).abs() > self.drift_threshold + rtt / 2.0 {
                self.outliers += 1;
            } else {
                self.outliers = 0;
            }
            if self.outliers >= 3 {
                self.outliers = 0;
                self.stats.resyncs += 1;
                self.probes.clear();
                self.probes.push_back(probe);
            }
        }
        // The lowest-RTT quarter of the window, averaged.
        let mut by_rtt: Vec<Probe> = self.probes.iter().copied().collect();
        by_rtt.sort_by(|a, b| a.rtt.total_cmp(&b.rtt));
        let best = &by_rtt[..by_rtt.len().div_ceil(4)];
        let filtered = best.iter().map(|p| p.offset).sum::<f64>() / best.len() as f64;
        let mean_rtt = self.probes.iter().map(|p| p.rtt).sum::<f64>() / self.probes.len() as f64;
        self.stats.rtt_min = by_rtt[0].rtt;
        self.stats.jitter = self
            .probes
            .iter()
            .map(|p| (p.rtt - mean_rtt).abs())
            .sum::<f64>()
            / self.probes.len() as f64;
        if self.outliers == 0 {
            self.offset = Some(filtered);
        }
        self.stats.offset = self.offset.unwrap_or(0.0);
    }

    /// `server - client`, once anything arrived.
    pub fn offset(&self) -> Option<f64> {
        self.offset
    }

    /// Estimated server time at client time `client_now`.
    pub fn server_time(&self, client_now: f64) -> Option<f64> {
        self.offset.map(|o| client_now + o)
    }

    pub fn stats(&self) -> ClockStats {
        let mut s = self.stats;
        s.known = self.offset.is_some();
        s.offset = self.offset.unwrap_or(0.0);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_offset_through_asymmetric_jitter() {
        // Server clock = client + 100 s; one-way 20 ms + up to 30 ms jitter
        // on the way back only.
        let mut c = ClockEstimator::new(32, 0.5);
        let mut rng = fastrand::Rng::with_seed(1);
        for i in 0..64 {
            let sent = i as f64 * 0.2;
            let arrive = sent + 0.02;
            let server = arrive + 100.0;
            let back = arrive + 0.02 + rng.f64() * 0.03;
            c.pong(sent, server, back);
        }
        let o = c.offset().unwrap();
        assert!((o - 100.0).abs() < 0.004, "{o}");
        assert!(c.stats().rtt_min < 0.045);
        assert_eq!(c.stats().resyncs, 0);
    }

    #[test]
    fn drift_past_the_threshold_resyncs() {
        let mut c = ClockEstimator::new(16, 0.05);
        c.welcome(50.0, 0.0);
        for i in 0..10 {
            let t = i as f64;
            c.pong(t, t + 50.01, t + 0.02);
        }
        assert_eq!(c.stats().resyncs, 0);
        // The server clock jumps 0.3 s (a drifting or restarted clock).
        for i in 10..20 {
            let t = i as f64;
            c.pong(t, t + 50.31, t + 0.02);
        }
        assert_eq!(c.stats().resyncs, 1);
        assert!((c.offset().unwrap() - 50.3).abs() < 0.01);
    }
}
