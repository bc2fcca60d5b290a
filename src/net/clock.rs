//! The time the network layer runs on: real (an `Instant` base) or
//! manual (a deterministic simulation advances it). laminar takes its
//! `Instant`s from here too, so a simulated run is repeatable.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Seconds since a base, real or simulated. Cheap to clone; clones share
/// the same time.
#[derive(Clone, Debug)]
pub struct NetClock {
    base: Instant,
    manual: Option<Arc<AtomicU64>>,
}

impl NetClock {
    /// Real time from now on.
    pub fn real() -> Self {
        NetClock {
            base: Instant::now(),
            manual: None,
        }
    }

    /// Simulated time starting at 0; advance it with [`NetClock::set`].
    pub fn manual() -> Self {
        NetClock {
            base: Instant::now(),
            manual: Some(Arc::new(AtomicU64::new(0f64.to_bits()))),
        }
    }

    pub fn is_manual(&self) -> bool {
        self.manual.is_some()
    }

    /// Seconds since the base.
    pub fn now(&self) -> f64 {
        match &self.manual {
            Some(t) => f64::from_bits(t.load(Ordering::Acquire)),
            None => self.base.elapsed().as_secs_f64(),
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
}
