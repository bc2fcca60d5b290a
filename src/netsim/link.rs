//! A seeded one-way link: latency with jitter, Gilbert-Elliott burst loss,
//! duplication, reordering, stalls and a bandwidth cap.

use super::profile::NetworkProfile;

/// One direction of a simulated path. Deterministic for a seed.
#[derive(Clone, Debug)]
pub struct Link {
    profile: NetworkProfile,
    rng: fastrand::Rng,
    in_loss_burst: bool,
    next_stall: f64,
    busy_until: f64,
}

impl Link {
    pub fn new(profile: NetworkProfile, seed: u64) -> Self {
        let mut rng = fastrand::Rng::with_seed(seed);
        let next_stall = if profile.stall_every > 0.0 {
            exponential(&mut rng, profile.stall_every)
        } else {
            f64::INFINITY
        };
        Link {
            profile,
            rng,
            in_loss_burst: false,
            next_stall,
            busy_until: 0.0,
        }
    }

    pub fn profile(&self) -> &NetworkProfile {
        &self.profile
    }

    /// Sends `size` bytes at `send_time` (non-decreasing across calls).
    /// Returns the arrival times: none when lost, two when duplicated.
    pub fn transmit(&mut self, send_time: f64, size: usize) -> ([f64; 2], usize) {
        let p = self.profile;
        if self.lost() {
            return ([0.0; 2], 0);
        }
        let mut depart = send_time;
        if p.bandwidth > 0.0 {
            depart = depart.max(self.busy_until) + size as f64 / p.bandwidth;
            self.busy_until = depart;
        }
        let mut arrivals = [self.delay(depart), 0.0];
        let mut count = 1;
        if p.duplicate > 0.0 && self.rng.f64() < p.duplicate {
            arrivals[1] = self.delay(depart);
            count = 2;
        }
        (arrivals, count)
    }

    fn lost(&mut self) -> bool {
        let p = self.profile;
        if p.loss <= 0.0 {
            return false;
        }
        if p.loss_burst <= 1.0 {
            return self.rng.f64() < p.loss;
        }
        // Gilbert-Elliott with every packet lost in the bad state: the bad
        // state lasts loss_burst packets on average and covers `loss` of them.
        let leave_bad = 1.0 / p.loss_burst;
        let enter_bad = (p.loss / (1.0 - p.loss)) * leave_bad;
        self.in_loss_burst = if self.in_loss_burst {
            self.rng.f64() >= leave_bad
        } else {
            self.rng.f64() < enter_bad
        };
        self.in_loss_burst
    }

    fn delay(&mut self, depart: f64) -> f64 {
        let p = self.profile;
        let spread = (normal(&mut self.rng) * 0.5).clamp(-1.0, 1.0) * p.jitter;
        let mut arrive = depart + (p.latency + spread).max(0.0);
        if p.reorder > 0.0 && self.rng.f64() < p.reorder {
            arrive += p.reorder_delay;
        }
        // Stalls: whatever would arrive during one arrives at its end.
        while self.next_stall + p.stall_length < arrive - p.latency {
            self.next_stall += p.stall_length + exponential(&mut self.rng, p.stall_every);
        }
        let stall_end = self.next_stall + p.stall_length;
        if arrive >= self.next_stall && arrive < stall_end {
            arrive = stall_end + self.rng.f64() * 0.002;
        }
        arrive
    }
}

fn exponential(rng: &mut fastrand::Rng, mean: f64) -> f64 {
    -mean * (1.0 - rng.f64()).ln()
}

/// Standard normal by Box-Muller.
fn normal(rng: &mut fastrand::Rng) -> f64 {
    let u1 = 1.0 - rng.f64();
    let u2 = rng.f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(profile: NetworkProfile, n: usize) -> (Vec<f64>, usize) {
        let mut link = Link::new(profile, 7);
        let mut delays = Vec::new();
        let mut delivered = 0;
        for i in 0..n {
            let t = i as f64 * 0.05;
            let (arr, count) = link.transmit(t, 100);
            delivered += count;
            if count > 0 {
                delays.push(arr[0] - t);
            }
        }
        (delays, delivered)
    }

    #[test]
    fn avg_profile_has_its_latency_jitter_and_loss() {
        let (delays, delivered) = run(NetworkProfile::AVG, 20_000);
        let mean = delays.iter().sum::<f64>() / delays.len() as f64;
        assert!((mean - 0.1).abs() < 0.002, "mean {mean}");
        assert!(delays
            .iter()
            .all(|d| (0.07 - 1e-9..=0.13 + 1e-9).contains(d)));
        let loss = 1.0 - delivered as f64 / 20_000.0;
        assert!((loss - 0.02).abs() < 0.005, "loss {loss}");
    }

    #[test]
    fn poor_profile_loses_in_bursts() {
        let mut link = Link::new(NetworkProfile::POOR, 3);
        let mut lost = 0;
        let mut bursts = 0;
        let mut previous_lost = false;
        for i in 0..50_000 {
            let (_, count) = link.transmit(i as f64 * 0.05, 100);
            let is_lost = count == 0;
            if is_lost {
                lost += 1;
                if !previous_lost {
                    bursts += 1;
                }
            }
            previous_lost = is_lost;
        }
        let share = lost as f64 / 50_000.0;
        let mean_burst = lost as f64 / bursts as f64;
        assert!((share - 0.10).abs() < 0.015, "loss {share}");
        assert!((mean_burst - 3.0).abs() < 0.4, "burst {mean_burst}");
    }

    #[test]
    fn spiky_profile_stalls_and_same_seed_repeats() {
        let (delays, _) = run(NetworkProfile::SPIKY, 4_000);
        assert!(delays.iter().any(|d| *d > 0.3), "no stall in 200 s");
        let again = run(NetworkProfile::SPIKY, 4_000).0;
        assert_eq!(delays, again);
    }

    #[test]
    fn bandwidth_cap_queues_packets() {
        let profile = NetworkProfile {
            bandwidth: 10_000.0,
            ..NetworkProfile::NONE
        };
        let mut link = Link::new(profile, 1);
        let (a, _) = link.transmit(0.0, 1000);
        let (b, _) = link.transmit(0.0, 1000);
        assert!((a[0] - 0.1).abs() < 1e-9 && (b[0] - 0.2).abs() < 1e-9);
    }
}
