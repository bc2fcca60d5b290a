//! Scripted elements on the relay (S5), sans-IO: the live spawns, kept
//! until their life ends so that every client that joins later gets them,
//! a few messages per send tick. The relay never computes a position:
//! every machine does, from the spawn and the shared clock.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::core::scripted::Spawn;
use crate::wire::message::Message;
use crate::wire::quantize::Precision;

/// Most live scripted elements on a relay.
pub const MAX_RELAY_ELEMENTS: usize = 65_536;
/// Spawns in one message: 20 of at most 64 bytes each stay well within
/// one laminar fragment.
const SPAWNS_PER_MESSAGE: usize = 16;
/// Catch-up messages per client per send tick (see the lockstep catch-up:
/// far below laminar's packets in flight).
const CATCH_UP_MESSAGES: usize = 16;

/// An f64 as a key that sorts like the number.
fn key(t: f64) -> i64 {
    let bits = t.to_bits() as i64;
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

#[derive(Debug, Default)]
pub struct ScriptedRegistry {
    elements: BTreeMap<u64, Spawn>,
    /// (end time, element) for expiry.
    ends: BTreeSet<(i64, u64)>,
    /// Clients still being sent the elements that were live when they
    /// joined: the next element id to send.
    catch_up: HashMap<u32, u64>,
    out: Vec<(u32, Vec<u8>)>,
    spawned: u64,
}

/// Why the relay refused a spawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegistryError {
    Limit,
    Invalid,
}

impl ScriptedRegistry {
    pub fn len(&self) -> usize {
        self.elements.len()
    }

    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    /// Spawns so far.
    pub fn spawned(&self) -> u64 {
        self.spawned
    }

    /// Messages to send reliably and in order: (client, payload).
    pub fn drain(&mut self) -> std::vec::Drain<'_, (u32, Vec<u8>)> {
        self.out.drain(..)
    }

    fn encode(message: &Message, p: &Precision) -> Vec<u8> {
        message.to_bytes(p).unwrap_or_default()
    }

    /// Adds (or replaces) elements and sends them to `clients`.
    pub fn spawn(
        &mut self,
        spawns: &[Spawn],
        clients: &[u32],
        p: &Precision,
    ) -> Result<(), RegistryError> {
        let new = spawns
            .iter()
            .filter(|s| !self.elements.contains_key(&s.element))
            .count();
        if self.elements.len() + new > MAX_RELAY_ELEMENTS {
            return Err(RegistryError::Limit);
        }
        if spawns.iter().any(|s| s.validate().is_err()) {
            return Err(RegistryError::Invalid);
        }
        for s in spawns {
            if let Some(old) = self.elements.insert(s.element, *s) {
                self.ends.remove(&(key(old.end()), old.element));
            }
            self.ends.insert((key(s.end()), s.element));
            self.spawned += 1;
        }
        for batch in spawns.chunks(SPAWNS_PER_MESSAGE) {
            let payload = Self::encode(&Message::ScriptedSpawns(batch.to_vec()), p);
            for &c in clients {
                self.out.push((c, payload.clone()));
            }
        }
        Ok(())
    }

    /// Ends an element early; false when it is not live.
    pub fn despawn(&mut self, element: u64, clients: &[u32], p: &Precision) -> bool {
        let Some(old) = self.elements.remove(&element) else {
            return false;
        };
        self.ends.remove(&(key(old.end()), element));
        let payload = Self::encode(&Message::ScriptedDespawn { element }, p);
        for &c in clients {
            self.out.push((c, payload.clone()));
        }
        true
    }

    /// Forgets the elements whose life ended by `now` (every machine
    /// removes them itself).
    pub fn expire(&mut self, now: f64) {
        while let Some(&(end, element)) = self.ends.first() {
            if end > key(now) {
                break;
            }
            self.ends.pop_first();
            self.elements.remove(&element);
        }
    }

    /// A client joined: it gets every live element over the next ticks.
    pub fn joined(&mut self, client: u32) {
        if !self.elements.is_empty() {
            self.catch_up.insert(client, 0);
        }
    }

    pub fn left(&mut self, client: u32) {
        self.catch_up.remove(&client);
    }

    /// Once per send tick: the next live elements for each joiner.
    pub fn pump(&mut self, p: &Precision) {
        let mut done = Vec::new();
        let clients: Vec<(u32, u64)> = self.catch_up.iter().map(|(&c, &n)| (c, n)).collect();
        for (client, mut next) in clients {
            let mut batch = Vec::new();
            let mut sent = 0;
            for (&id, s) in self.elements.range(next..) {
                batch.push(*s);
                next = id.wrapping_add(1);
                if batch.len() == SPAWNS_PER_MESSAGE {
                    self.out.push((
                        client,
                        Self::encode(&Message::ScriptedSpawns(std::mem::take(&mut batch)), p),
                    ));
                    sent += 1;
                    if sent == CATCH_UP_MESSAGES {
                        break;
                    }
                }
            }
            if !batch.is_empty() {
                self.out
                    .push((client, Self::encode(&Message::ScriptedSpawns(batch), p)));
            }
            let finished = next == 0 || self.elements.range(next..).next().is_none();
            if finished {
                done.push(client);
            } else {
                self.catch_up.insert(client, next);
            }
        }
        for c in done {
            self.catch_up.remove(&c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spawn(element: u64, start: f64, life: f64) -> Spawn {
        Spawn {
            element,
            path: 1,
            fingerprint: 7,
            start,
            life,
            x: 1.0,
            y: 2.0,
            rotate: 0.5,
        }
    }

    fn spawned(r: &mut ScriptedRegistry, client: u32) -> Vec<u64> {
        let p = Precision::default();
        r.drain()
            .filter(|(c, _)| *c == client)
            .flat_map(|(_, b)| match Message::decode(&b, &p).unwrap() {
                Message::ScriptedSpawns(s) => s.into_iter().map(|s| s.element).collect(),
                _ => vec![],
            })
            .collect()
    }

    #[test]
    fn joiners_get_every_live_element_paced_and_expired_ones_go() {
        let p = Precision::default();
        let mut r = ScriptedRegistry::default();
        let spawns: Vec<Spawn> = (0..600).map(|i| spawn(i, 0.0, 10.0 + i as f64)).collect();
        r.spawn(&spawns, &[1], &p).unwrap();
        assert_eq!(spawned(&mut r, 1).len(), 600);
        r.expire(110.0); // elements 0..=100 are over
        assert_eq!(r.len(), 499);
        r.joined(2);
        let mut got = Vec::new();
        let mut pumps = 0;
        while got.len() < 499 {
            r.pump(&p);
            pumps += 1;
            let batch = spawned(&mut r, 2);
            assert!(batch.len() <= SPAWNS_PER_MESSAGE * (CATCH_UP_MESSAGES + 1));
            got.extend(batch);
        }
        assert!(pumps > 1, "paced");
        assert_eq!(got, (101..600).collect::<Vec<_>>());
        r.pump(&p);
        assert!(spawned(&mut r, 2).is_empty(), "done");
        assert!(r.despawn(300, &[2], &p));
        assert!(!r.despawn(300, &[2], &p));
    }

    #[test]
    fn the_relay_keeps_its_limit_and_refuses_bad_spawns() {
        let p = Precision::default();
        let mut r = ScriptedRegistry::default();
        let many: Vec<Spawn> = (0..MAX_RELAY_ELEMENTS as u64 + 1)
            .map(|i| spawn(i, 0.0, 1.0))
            .collect();
        assert_eq!(r.spawn(&many, &[], &p), Err(RegistryError::Limit));
        assert_eq!(
            r.spawn(&[spawn(1, 0.0, -1.0)], &[], &p),
            Err(RegistryError::Invalid)
        );
        // Replacing keeps one entry and its new end.
        r.spawn(&[spawn(1, 0.0, 1.0)], &[], &p).unwrap();
        r.spawn(&[spawn(1, 0.0, 5.0)], &[], &p).unwrap();
        r.expire(2.0);
        assert_eq!(r.len(), 1);
        r.expire(5.0);
        assert!(r.is_empty());
        assert!(key(-1.0) < key(0.0) && key(0.0) < key(1e-300) && key(2.0) < key(3.0));
    }
}
