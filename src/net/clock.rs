//! The time the network layer runs on: real (an `Instant` base) or
//! manual (a deterministic simulation advances it). laminar takes its
//! `Instant`s from here too, so a simulated run is repeatable.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The next time of a periodic event of period `interval` after the one
/// due at `at` ran at `now` (s): the first of its own phase after `now`.
/// Missed periods are skipped, never bunched: restarting every late one
/// from `now` gave them all one phase, so one stall (a slow step, a paused
/// virtual machine) made every later step of a relay serve all its clients
/// at once.
pub fn next_in_phase(at: f64, now: f64, interval: f64) -> f64 {
    at + (((now - at) / interval).floor().max(0.0) + 1.0) * interval
}

/// Seconds since a base, real or simulated. Cheap to clone; clones share
/// the same time.
#[derive(Clone, Debug)]
pub struct NetClock {
    base: Instant,
    manual: Option<Arc<AtomicU64>>,
    /// A simulated machine whose clock runs at its own rate.
    skew: Option<Arc<Mutex<Skew>>>,
}

/// A skewed view reads `value + (base - at) * rate`.
#[derive(Clone, Copy, Debug)]
struct Skew {
    at: f64,
    value: f64,
    rate: f64,
}

impl NetClock {
    /// Real time from now on.
    pub fn real() -> Self {
        NetClock {
            base: Instant::now(),
            manual: None,
            skew: None,
        }
    }

    /// Simulated time starting at 0; advance it with [`NetClock::set`].
    pub fn manual() -> Self {
        NetClock {
            base: Instant::now(),
            manual: Some(Arc::new(AtomicU64::new(0f64.to_bits()))),
            skew: None,
        }
    }

    /// A view of this simulated clock for one machine, whose rate can
    /// differ from now on ([`NetClock::set_rate`]): a client whose clock
    /// drifts. It reads the same as this clock until its rate changes.
    pub fn skewed(&self) -> NetClock {
        let now = self.base_now();
        NetClock {
            skew: Some(Arc::new(Mutex::new(Skew {
                at: now,
                value: now,
                rate: 1.0,
            }))),
            ..self.clone()
        }
    }

    /// Runs a skewed view at `rate` seconds per second of the base clock
    /// from now on (continuous, so never backwards for a positive rate).
    /// Does nothing on a clock that is not a skewed view.
    pub fn set_rate(&self, rate: f64) {
        if let Some(skew) = &self.skew {
            let base = self.base_now();
            let mut s = skew.lock().unwrap_or_else(|p| p.into_inner());
            let value = s.value + (base - s.at) * s.rate;
            *s = Skew {
                at: base,
                value,
                rate: rate.max(0.0),
            };
        }
    }

    fn base_now(&self) -> f64 {
        match &self.manual {
            Some(t) => f64::from_bits(t.load(Ordering::Acquire)),
            None => self.base.elapsed().as_secs_f64(),
        }
    }

    pub fn is_manual(&self) -> bool {
        self.manual.is_some()
    }

    /// Seconds since the base.
    pub fn now(&self) -> f64 {
        let base = self.base_now();
        match &self.skew {
            Some(skew) => {
                let s = *skew.lock().unwrap_or_else(|p| p.into_inner());
                s.value + (base - s.at) * s.rate
            }
            None => base,
        }
    }

    /// The same moment as an `Instant` (for laminar).
    pub fn instant(&self) -> Instant {
        match &self.manual {
            Some(_) => self.base + Duration::from_secs_f64(self.now().max(0.0)),
            None => Instant::now(),
        }
    }

    /// Sets simulated time (never backwards). Does nothing on a real clock.
    pub fn set(&self, seconds: f64) {
        if let Some(t) = &self.manual {
            let current = f64::from_bits(t.load(Ordering::Acquire));
            if seconds > current {
                t.store(seconds.to_bits(), Ordering::Release);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_is_shared_and_monotonic() {
        let c = NetClock::manual();
        let d = c.clone();
        c.set(1.5);
        assert_eq!(d.now(), 1.5);
        c.set(1.0);
        assert_eq!(d.now(), 1.5);
        assert_eq!(d.instant() - c.instant(), Duration::ZERO);
        let r = NetClock::real();
        assert!(!r.is_manual() && r.now() >= 0.0);
    }

    #[test]
    fn a_skewed_view_drifts_from_its_base_continuously() {
        let c = NetClock::manual();
        c.set(10.0);
        let d = c.skewed();
        assert_eq!(d.now(), 10.0);
        d.set_rate(1.5);
        c.set(12.0);
        assert_eq!(d.now(), 13.0);
        d.set_rate(1.0);
        c.set(14.0);
        assert_eq!(d.now(), 15.0);
        assert_eq!(c.now(), 14.0, "the base keeps its time");
        // Its instants follow its own time.
        assert_eq!(d.instant() - c.instant(), Duration::from_secs(1));
    }

    #[test]
    fn the_next_time_keeps_the_phase_and_skips_missed_ones() {
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(near(next_in_phase(1.0, 1.001, 0.1), 1.1));
        assert!(near(next_in_phase(1.0, 1.25, 0.1), 1.3));
        assert!(near(next_in_phase(1.0, 1.3, 0.1), 1.4));
    }
}
