//! The network side of a quality run: when each server snapshot reaches
//! the client (on the client's own clock), and when the client draws.

use super::QualityConfig;
use crate::netsim::{Link, NetworkProfile};

/// The client clock starts this long after the server's and runs this
/// much fast, so that clock estimation is part of what is measured.
const CLIENT_CLOCK_START: f64 = 3.7;
const CLIENT_CLOCK_DRIFT: f64 = 20e-6;

/// One snapshot arriving at the client.
#[derive(Clone, Copy, Debug)]
pub struct FrameArrival {
    /// Client clock at arrival.
    pub client_time: f64,
    /// Server time the snapshot was taken.
    pub server_time: f64,
}

/// Arrivals and client frame times of one profile.
#[derive(Clone, Debug)]
pub struct NetworkTrace {
    pub arrivals: Vec<FrameArrival>,
    /// Client clock at each drawn frame.
    pub frames: Vec<f64>,
}

impl NetworkTrace {
    pub fn generate(config: &QualityConfig, profile: NetworkProfile, seed: u64) -> Self {
        let mut link = Link::new(profile, seed);
        let interval = 1.0 / config.send_rate;
        let mut arrivals = Vec::new();
        let count = (config.duration * config.send_rate).ceil() as usize;
        // Snapshot size: a realistic 16-entity packet.
        for k in 0..count {
            let st = k as f64 * interval;
            let (times, n) = link.transmit(st, 400);
            for &t in &times[..n] {
                arrivals.push(FrameArrival {
                    client_time: client_clock(t),
                    server_time: st,
                });
            }
        }
        arrivals.sort_by(|a, b| a.client_time.total_cmp(&b.client_time));

        let mut rng = fastrand::Rng::with_seed(seed ^ 0x5eed);
        let mut frames = Vec::new();
        let mut t = 0.0;
        let base = 1.0 / config.frame_rate;
        while t < config.duration {
            let mut dt = base * (1.0 + (rng.f64() - 0.5) * 0.3);
            if rng.f64() < 0.003 {
                dt += 0.05 + rng.f64() * 0.05; // a hitch
            }
            t += dt;
            frames.push(client_clock(t));
        }
        NetworkTrace { arrivals, frames }
    }

    /// True (server) time at a client clock reading.
    pub fn true_time(&self, client: f64) -> f64 {
        client / (1.0 + CLIENT_CLOCK_DRIFT) + CLIENT_CLOCK_START
    }

    /// Smallest constant delay behind true time that keeps `share` of the
    /// frames after `warmup` at or before the newest received snapshot.
    pub fn hindsight_delay(&self, warmup: f64, share: f64) -> f64 {
        let mut needed = Vec::new();
        let mut newest = f64::NEG_INFINITY;
        let mut next = 0;
        for &frame in &self.frames {
            while let Some(a) = self.arrivals.get(next).filter(|a| a.client_time <= frame) {
                newest = newest.max(a.server_time);
                next += 1;
            }
            let now = self.true_time(frame);
            if now >= warmup && newest.is_finite() {
                needed.push(now - newest);
            }
        }
        super::percentile(&mut needed, share)
    }
}

fn client_clock(true_time: f64) -> f64 {
    (true_time - CLIENT_CLOCK_START) * (1.0 + CLIENT_CLOCK_DRIFT)
}
