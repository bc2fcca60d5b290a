//! Which of a sender's numbered messages were already applied, for
//! messages sent more than once (claims go reliably and as unreliable
//! repeats): a window of the newest 64 numbers, as laminar's ack field.

/// Numbers 1, 2, 3 ... seen from one sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeqWindow {
    newest: u32,
    /// Bit i: `newest - 1 - i` was seen.
    older: u64,
}

impl SeqWindow {
    /// True the first time `seq` is offered; false for a repeat, for 0,
    /// and for numbers too far behind the newest to tell.
    pub fn first_time(&mut self, seq: u32) -> bool {
        if seq == 0 {
            return false;
        }
        if seq > self.newest {
            let shift = seq - self.newest;
            // The old newest moves into the window (0 is no number).
            let old_newest = if self.newest == 0 {
                0
            } else {
                1u64.checked_shl(shift - 1).unwrap_or(0)
            };
            self.older = self.older.checked_shl(shift).unwrap_or(0) | old_newest;
            self.newest = seq;
            return true;
        }
        let back = self.newest - seq;
        if back == 0 || back > 64 {
            return false;
        }
        let bit = 1u64 << (back - 1);
        let fresh = self.older & bit == 0;
        self.older |= bit;
        fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_number_passes_once_in_any_order() {
        let mut w = SeqWindow::default();
        assert!(!w.first_time(0));
        assert!(w.first_time(3));
        assert!(!w.first_time(3));
        assert!(w.first_time(1), "older but new");
        assert!(w.first_time(2));
        assert!(!w.first_time(1) && !w.first_time(2));
        assert!(w.first_time(70));
        assert!(!w.first_time(3), "64 behind: refused as too old");
        assert!(w.first_time(10), "within the window");
        assert!(!w.first_time(10));
        assert!(w.first_time(500));
        assert!(!w.first_time(70));
    }
}
