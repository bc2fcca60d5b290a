//! Estimate of the server clock from snapshot arrivals: the offset
//! `server_time - receive_time` of the fastest packet over a sliding window
//! (many samples, never only the first; a slow packet cannot pull it back).

use std::collections::VecDeque;

/// Sliding-window maximum of `server_time - receive_time`.
#[derive(Clone, Debug)]
pub struct ArrivalClock {
    window: f64,
    /// (receive time, offset), offsets strictly decreasing from the front.
    candidates: VecDeque<(f64, f64)>,
}

impl ArrivalClock {
    pub fn new(window: f64) -> Self {
        ArrivalClock {
            window,
            candidates: VecDeque::new(),
        }
    }

    /// Records a packet stamped `server_time` that arrived at `receive_time`.
    pub fn observe(&mut self, receive_time: f64, server_time: f64) {
        let offset = server_time - receive_time;
        while self.candidates.back().is_some_and(|&(_, o)| o <= offset) {
            self.candidates.pop_back();
        }
        self.candidates.push_back((receive_time, offset));
        let oldest = receive_time - self.window;
        while self.candidates.len() > 1 && self.candidates.front().is_some_and(|&(t, _)| t < oldest)
        {
            self.candidates.pop_front();
        }
    }

    /// `server_time - client_time` of the freshest data, if any arrived.
    pub fn offset(&self) -> Option<f64> {
        self.candidates.front().map(|&(_, o)| o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_fastest_packet_of_the_window() {
        let mut c = ArrivalClock::new(1.0);
        c.observe(0.10, 0.0); // 100 ms
        c.observe(0.17, 0.1); // 70 ms: fastest
        c.observe(0.33, 0.2); // 130 ms
        assert!((c.offset().unwrap() - (-0.07)).abs() < 1e-12);
        // 1 s later the 70 ms packet has left the window.
        c.observe(1.3, 1.2);
        assert!((c.offset().unwrap() - (-0.1)).abs() < 1e-9);
    }
}
