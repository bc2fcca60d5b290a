//! Which packet sequence numbers a receiver has already accepted: a
//! captured datagram sent again is refused, as are ones older than the
//! window (netcode's replay protection).

/// Sequence numbers remembered behind the newest one.
pub const REPLAY_WINDOW: u64 = 256;

#[derive(Clone, Debug, Default)]
pub struct ReplayWindow {
    /// Newest accepted sequence number plus one (0: none yet).
    top: u64,
    /// Bit `s % 256` is set when `s` (within the window) was accepted.
    seen: [u64; 4],
}

impl ReplayWindow {
    fn bit(sequence: u64) -> (usize, u64) {
        let i = (sequence % REPLAY_WINDOW) as usize;
        (i / 64, 1 << (i % 64))
    }

    /// True when `sequence` may be accepted: new, and inside the window.
    pub fn is_fresh(&self, sequence: u64) -> bool {
        if sequence >= self.top {
            return true;
        }
        if self.top - sequence > REPLAY_WINDOW {
            return false;
        }
        let (word, mask) = Self::bit(sequence);
        self.seen[word] & mask == 0
    }

    /// Records `sequence` as accepted (call only after it authenticated).
    pub fn accept(&mut self, sequence: u64) {
        if sequence >= self.top {
            // Clear the slots the window moves past.
            let advance = sequence + 1 - self.top;
            if advance >= REPLAY_WINDOW {
                self.seen = [0; 4];
            } else {
                for s in self.top..=sequence {
                    let (word, mask) = Self::bit(s);
                    self.seen[word] &= !mask;
                }
            }
            self.top = sequence + 1;
        }
        let (word, mask) = Self::bit(sequence);
        self.seen[word] |= mask;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_sequence_is_accepted_once_and_old_ones_never() {
        let mut w = ReplayWindow::default();
        assert!(w.is_fresh(0));
        w.accept(0);
        assert!(!w.is_fresh(0));
        // Reordered within the window: fine once.
        w.accept(10);
        assert!(w.is_fresh(5));
        w.accept(5);
        assert!(!w.is_fresh(5));
        assert!(!w.is_fresh(10));
        // Far ahead: everything before the window is refused.
        w.accept(1000);
        assert!(!w.is_fresh(1000 - REPLAY_WINDOW - 1));
        assert!(w.is_fresh(1000 - 200));
        assert!(!w.is_fresh(1000));
        // Slots reused after the window moved are fresh again.
        assert!(w.is_fresh(1000 - 1));
    }
}
