//! The soak's disturbances: each round some seats lose their network for
//! a while (long outages time out and reconnect on a new socket) or quit
//! and come back as a new client.

/// One seat's trouble in one round, in engine time.
#[derive(Clone, Copy, Debug)]
pub struct Disturbance {
    pub slot: usize,
    /// Quits and rejoins (else: its network is cut both ways).
    pub leave: bool,
    pub start: f64,
    pub end: f64,
    begun: bool,
    ended: bool,
}

/// What a disturbance does now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Begin,
    End,
}

/// Seconds of a round: claims and trouble first, then calm.
pub const ROUND: f64 = 30.0;
pub const ACTIVE: f64 = 18.0;

/// One to three seats' trouble for the round starting at `round_start`:
/// beginning 1 to 6 s in, lasting 0.5 to 10 s (the client's idle timeout
/// is 5 s, so about half the outages end in a reconnect), all over before
/// the calm.
pub fn plan(rng: &mut fastrand::Rng, seats: usize, round_start: f64) -> Vec<Disturbance> {
    let count = rng.usize(1..=3);
    let mut slots: Vec<usize> = (0..seats).collect();
    rng.shuffle(&mut slots);
    slots
        .into_iter()
        .take(count)
        .map(|slot| {
            let start = round_start + 1.0 + rng.f64() * 5.0;
            Disturbance {
                slot,
                leave: rng.f64() < 0.4,
                start,
                end: start + 0.5 + rng.f64() * 9.5,
                begun: false,
                ended: false,
            }
        })
        .collect()
}

impl Disturbance {
    /// Whether it begins or ends at `now` (each happens once).
    pub fn due(&mut self, now: f64) -> Option<Change> {
        if !self.begun && now >= self.start {
            self.begun = true;
            return Some(Change::Begin);
        }
        if self.begun && !self.ended && now >= self.end {
            self.ended = true;
            return Some(Change::End);
        }
        None
    }
}
