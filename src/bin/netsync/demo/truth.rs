//! The true state of every object: every client records what its physics
//! says of what it simulates, stamped with its estimate of the server
//! clock and the send-right epoch it sends under. Only the client the
//! relay granted that epoch to is the truth (a refused claimant, or a
//! former holder that has not heard yet, simulates something else).
//! Viewers are judged against it at the server time they show.

use std::collections::HashMap;

use glam::Vec3;

/// How far a viewer's render time may run past the newest true sample
/// and still be judged (s): the holder steps in the same frame loop.
const AHEAD: f64 = 0.05;
/// Longest a former holder's stream overlaps the new one's (s): it stops
/// once it hears of the change, about one relay-to-client trip later.
const OVERLAP: f64 = 1.0;

#[derive(Clone, Copy, Debug)]
struct Said {
    t: f64,
    position: Vec3,
    client: u32,
    epoch: u32,
}

#[derive(Default)]
pub struct Truth {
    said: HashMap<u64, Vec<Said>>,
    /// Who the relay granted each epoch of each entity to, as announced.
    granted: HashMap<(u64, u32), u32>,
}

impl Truth {
    /// `client`, sending under `epoch`, had `entity` at `position` at
    /// server time `t`.
    pub fn record(&mut self, entity: u64, t: f64, position: Vec3, client: u32, epoch: u32) {
        let said = self.said.entry(entity).or_default();
        let s = Said {
            t,
            position,
            client,
            epoch,
        };
        // Mostly in order: insert from the back.
        let i = said.partition_point(|x| x.t <= t);
        said.insert(i, s);
    }

    /// The relay announced `holder` for `entity` at `epoch`.
    pub fn announce(&mut self, entity: u64, epoch: u32, holder: u32) {
        self.granted.insert((entity, epoch), holder);
    }

    fn valid(&self, entity: u64, s: &Said) -> bool {
        // Client ids start at 1: 0 is "nobody" (a neutral epoch), never a
        // sender, whatever a client not yet told its id recorded.
        s.client != 0 && self.granted.get(&(entity, s.epoch)) == Some(&s.client)
    }

    /// Where `entity` truly was at server time `t`; `held` says whether a
    /// client holds it now (if not, it rests where it was left). At a
    /// hand-over the former holder keeps simulating (and recording under
    /// its old epoch) until it hears: from the moment the new holder's
    /// stream begins, only the newest epoch counts.
    pub fn at(&self, entity: u64, t: f64, held: bool) -> Option<Vec3> {
        let said = self.said.get(&entity)?;
        let i = said.partition_point(|x| x.t <= t);
        let mut best: Option<&Said> = None;
        for s in said[..i].iter().rev() {
            if best.is_some_and(|b| b.t - s.t > OVERLAP) {
                break;
            }
            if self.valid(entity, s) && best.is_none_or(|b| s.epoch > b.epoch) {
                best = Some(s);
            }
        }
        let a = best?;
        let after = said[i..]
            .iter()
            .find(|s| s.epoch >= a.epoch && self.valid(entity, s));
        match after {
            Some(b) => {
                let f = ((t - a.t) / (b.t - a.t).max(1e-9)) as f32;
                Some(a.position.lerp(b.position, f))
            }
            None => (!held || t - a.t <= AHEAD).then_some(a.position),
        }
    }

    /// The true path of `entity`: (server time, position).
    pub fn path(&self, entity: u64) -> Vec<(f64, Vec3)> {
        let Some(said) = self.said.get(&entity) else {
            return Vec::new();
        };
        let mut newest_epoch = 0;
        let mut path = Vec::new();
        for s in said {
            if self.valid(entity, s) && s.epoch >= newest_epoch {
                newest_epoch = s.epoch;
                path.push((s.t, s.position));
            }
        }
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_granted_client_is_the_truth() {
        let mut t = Truth::default();
        t.announce(1, 1, 7);
        t.record(1, 1.0, Vec3::ZERO, 7, 1);
        t.record(1, 2.0, Vec3::X * 2.0, 7, 1);
        // Client 8 claimed at epoch 2 but the relay gave it to 9.
        t.record(1, 1.5, Vec3::splat(9.0), 8, 2);
        assert_eq!(t.at(1, 1.5, true), Some(Vec3::X));
        t.announce(1, 2, 9);
        t.record(1, 3.0, Vec3::X * 4.0, 9, 2);
        assert_eq!(t.at(1, 2.5, true), Some(Vec3::X * 3.0));
        assert_eq!(t.at(1, 0.5, true), None);
        assert_eq!(t.at(1, 3.02, true), Some(Vec3::X * 4.0));
        assert_eq!(t.at(1, 4.0, true), None, "the holder has not got there");
        assert_eq!(t.at(1, 4.0, false), Some(Vec3::X * 4.0), "at rest");
        assert_eq!(t.path(1).len(), 3);
        // Client 7 has not heard yet and goes on under epoch 1: stale.
        t.record(1, 3.5, Vec3::splat(50.0), 7, 1);
        t.record(1, 4.0, Vec3::X * 6.0, 9, 2);
        assert_eq!(t.at(1, 3.5, true), Some(Vec3::X * 5.0));
        assert_eq!(t.path(1).len(), 4);
        // Nobody holds it at epoch 3; a sender without an id is no truth.
        t.announce(1, 3, 0);
        t.record(1, 5.0, Vec3::splat(70.0), 0, 3);
        assert_eq!(t.at(1, 5.0, false), Some(Vec3::X * 6.0));
    }
}
