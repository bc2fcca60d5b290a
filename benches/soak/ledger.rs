//! Every global command the soak sends and receives, checked for
//! exactly-once, in-order delivery.
//!
//! A command carries (sender incarnation, its number within that
//! incarnation). The relay numbers global commands itself; every client
//! must see the relay's numbers without a gap or a repeat from its first
//! one on, every relay number must mean the same command everywhere, and
//! each sender's commands must appear as 1, 2, 3 ... in the relay's order.

use std::collections::BTreeMap;

use netsync::core::app_message::AppMessage;

/// One client's view: the relay numbers it received.
#[derive(Clone, Debug, Default)]
struct Receiver {
    first: Option<u64>,
    last: u64,
    count: u64,
    repeats: u64,
    gaps: u64,
}

#[derive(Debug, Default)]
pub struct Ledger {
    /// Commands sent, per incarnation.
    sent: Vec<u64>,
    receivers: Vec<Receiver>,
    /// Relay number -> (incarnation, number), as first seen.
    order: BTreeMap<u64, (u32, u64)>,
    /// Relay numbers seen with two different commands.
    mismatches: u64,
    /// Messages that were not soak commands.
    foreign: u64,
}

/// What a verified run delivered.
#[derive(Clone, Copy, Debug, Default)]
pub struct Delivery {
    pub sent: u64,
    pub received: u64,
}

impl Ledger {
    /// A new incarnation (a client that joined): its number.
    pub fn incarnation(&mut self) -> u32 {
        self.sent.push(0);
        self.receivers.push(Receiver::default());
        (self.sent.len() - 1) as u32
    }

    /// The payload of `incarnation`'s next command.
    pub fn next_command(&mut self, incarnation: u32) -> [u8; 12] {
        let n = &mut self.sent[incarnation as usize];
        *n += 1;
        let mut payload = [0u8; 12];
        payload[..4].copy_from_slice(&incarnation.to_le_bytes());
        payload[4..].copy_from_slice(&n.to_le_bytes());
        payload
    }

    /// `incarnation` was refused a send (nothing left): take the number back.
    pub fn unsent(&mut self, incarnation: u32) {
        self.sent[incarnation as usize] -= 1;
    }

    pub fn received(&mut self, receiver: u32, message: &AppMessage) {
        let Some(command) = decode(&message.data) else {
            self.foreign += 1;
            return;
        };
        let seq = message.sequence;
        let r = &mut self.receivers[receiver as usize];
        r.count += 1;
        match r.first {
            None => r.first = Some(seq),
            Some(_) if seq <= r.last => r.repeats += 1,
            Some(_) if seq != r.last + 1 => r.gaps += 1,
            Some(_) => {}
        }
        r.last = r.last.max(seq);
        match self.order.get(&seq) {
            Some(known) if *known != command => self.mismatches += 1,
            Some(_) => {}
            None => {
                self.order.insert(seq, command);
            }
        }
    }

    /// Checks the whole run. `live`: incarnations connected at the end,
    /// after a drain long enough for everything sent to arrive.
    pub fn verify(&self, live: &[u32]) -> Result<Delivery, Vec<String>> {
        let mut problems = Vec::new();
        let newest = self.order.keys().next_back().copied().unwrap_or(0);
        for (i, r) in self.receivers.iter().enumerate() {
            if r.repeats + r.gaps > 0 {
                problems.push(format!(
                    "incarnation {i} received {} repeats and {} gaps",
                    r.repeats, r.gaps
                ));
            }
            if live.contains(&(i as u32)) && r.last != newest {
                problems.push(format!(
                    "incarnation {i} ends at command {} of {newest}",
                    r.last
                ));
            }
        }
        if self.mismatches > 0 {
            problems.push(format!(
                "{} relay numbers meant different commands to different clients",
                self.mismatches
            ));
        }
        if self.foreign > 0 {
            problems.push(format!("{} messages were no soak command", self.foreign));
        }
        // Each sender's commands in the relay's order: 1, 2, 3 ...
        let mut next = vec![1u64; self.sent.len()];
        for (&seq, &(from, n)) in &self.order {
            let Some(expected) = next.get_mut(from as usize) else {
                problems.push(format!("relay number {seq}: unknown sender {from}"));
                continue;
            };
            if n != *expected {
                problems.push(format!(
                    "relay number {seq}: command {n} of incarnation {from}, expected {expected}"
                ));
            }
            *expected = n + 1;
        }
        for &i in live {
            let delivered = next[i as usize] - 1;
            if delivered != self.sent[i as usize] {
                problems.push(format!(
                    "incarnation {i} sent {} commands, {delivered} were delivered",
                    self.sent[i as usize]
                ));
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(Delivery {
            sent: self.sent.iter().sum(),
            received: self.receivers.iter().map(|r| r.count).sum(),
        })
    }

    /// A hash of the relay's order of commands (equal for equal runs).
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for (seq, cmd) in &self.order {
            (seq, cmd).hash(&mut h);
        }
        h.finish()
    }
}

fn decode(data: &[u8]) -> Option<(u32, u64)> {
    let incarnation = u32::from_le_bytes(data.get(..4)?.try_into().ok()?);
    let n = u64::from_le_bytes(data.get(4..12)?.try_into().ok()?);
    (data.len() == 12).then_some((incarnation, n))
}
