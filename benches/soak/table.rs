//! The soak's game: 16 seats, each a client with 256 objects (248 it
//! controls, 8 neutral ones it brings into the world), moving on slow
//! circles; every seat bumps into neutral objects now and then (claims)
//! and sends a numbered global command twice a second. The same game runs
//! on the in-memory network and on loopback.

use glam::{Quat, Vec3};
use netsync::client::{Client, ClientEvent, ConnectionState};
use netsync::core::Sample;
use netsync::server::send_rights::EntityKind;

use crate::ledger::Ledger;

pub const SEATS: usize = 16;
pub const OBJECTS_PER_SEAT: u64 = 256;
pub const NEUTRAL_PER_SEAT: u64 = 8;
/// A command from every seat this often (s).
pub const COMMAND_INTERVAL: f64 = 0.5;
/// Collisions with neutral objects per seat per second, when active.
pub const CLAIMS_PER_SECOND: f64 = 0.5;
pub const FRAME: f64 = 1.0 / 60.0;

/// What the seats do in this part of a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Claims and disturbances.
    Active,
    /// No new claims: send rights must settle.
    Calm,
    /// No new commands either: everything sent must arrive.
    Drain,
}

fn base(slot: usize) -> u64 {
    (slot as u64 + 1) * 1000
}

pub fn controlled(slot: usize) -> std::ops::Range<u64> {
    base(slot)..base(slot) + OBJECTS_PER_SEAT - NEUTRAL_PER_SEAT
}

pub fn neutral(slot: usize) -> std::ops::Range<u64> {
    base(slot) + OBJECTS_PER_SEAT - NEUTRAL_PER_SEAT..base(slot) + OBJECTS_PER_SEAT
}

pub fn all_neutral() -> Vec<u64> {
    (0..SEATS).flat_map(neutral).collect()
}

/// Object `entity` on a circle of 5 m at 0.2 rad/s (1 m/s) around its
/// own spot on a grid.
fn motion(entity: u64, server_time: f64) -> (Vec3, Vec3) {
    let centre = Vec3::new(
        (entity % 64) as f32 * 12.0,
        0.0,
        (entity / 64) as f32 * 12.0,
    );
    let a = server_time as f32 * 0.2 + entity as f32;
    (
        centre + Vec3::new(a.cos(), 0.0, a.sin()) * 5.0,
        Vec3::new(-a.sin(), 0.0, a.cos()),
    )
}

/// The relay's holder and epoch of an entity.
pub type HolderOf<'a> = &'a dyn Fn(u64) -> Option<(Option<u32>, u32)>;

/// Counts over the whole run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    pub joins: u64,
    pub leaves: u64,
    pub reconnects: u64,
    pub claims: u64,
    pub gained: u64,
    pub lost: u64,
    pub refused: u64,
    /// Calls the library refused (named errors, never panics).
    pub api_errors: u64,
    pub messages_dropped: u64,
    pub global_gaps: u64,
}

pub struct Seat {
    pub client: Option<Client>,
    pub incarnation: u32,
    next_command: f64,
}

pub struct Table {
    pub seats: Vec<Seat>,
    pub ledger: Ledger,
    pub counters: Counters,
    pub rng: fastrand::Rng,
    neutral: Vec<u64>,
}

impl Table {
    pub fn new(seed: u64) -> Table {
        Table {
            seats: (0..SEATS)
                .map(|_| Seat {
                    client: None,
                    incarnation: 0,
                    next_command: 0.0,
                })
                .collect(),
            ledger: Ledger::default(),
            counters: Counters::default(),
            rng: fastrand::Rng::with_seed(seed),
            neutral: all_neutral(),
        }
    }

    /// `client` takes seat `slot`: a new incarnation with the seat's objects.
    pub fn join(&mut self, slot: usize, mut client: Client, now: f64) {
        for e in controlled(slot) {
            client.register(e).expect("register a controlled object");
        }
        for e in neutral(slot) {
            client
                .register_kind(e, EntityKind::Neutral)
                .expect("register a neutral object");
        }
        let seat = &mut self.seats[slot];
        seat.incarnation = self.ledger.incarnation();
        seat.next_command = now + COMMAND_INTERVAL;
        seat.client = Some(client);
        self.counters.joins += 1;
    }

    /// The seat's player quits; its client is gone.
    pub fn leave(&mut self, slot: usize) -> Option<Client> {
        self.counters.leaves += 1;
        self.settle(slot);
        self.seats[slot].client.take()
    }

    /// Folds a departing client's counters into the run's.
    fn settle(&mut self, slot: usize) {
        if let Some(c) = &self.seats[slot].client {
            let s = c.stats();
            self.counters.reconnects += s.network.reconnects;
            self.counters.messages_dropped += s.messages_dropped;
            self.counters.global_gaps += s.network.global_gaps;
        }
    }

    /// Folds every client's counters in at the end of a run.
    pub fn finish(&mut self) {
        for slot in 0..SEATS {
            self.settle(slot);
        }
    }

    /// One engine frame of every seated client at engine time `now`.
    pub fn frame(&mut self, now: f64, phase: Phase) {
        for slot in 0..SEATS {
            let Seat {
                client,
                incarnation,
                next_command,
            } = &mut self.seats[slot];
            let Some(client) = client.as_mut() else {
                continue;
            };
            let mut errors = 0;
            if let Some(st) = client.server_time(now) {
                let moving = controlled(slot)
                    .chain(self.neutral.iter().copied().filter(|&e| client.holds(e)));
                let moving: Vec<u64> = moving.collect();
                for e in moving {
                    let (p, v) = motion(e, st);
                    errors += client
                        .set_state(e, Sample::at(st, p, Quat::IDENTITY).with_velocity(v))
                        .is_err() as u64;
                }
            }
            if phase == Phase::Active && self.rng.f64() < CLAIMS_PER_SECOND * FRAME {
                let other = self.neutral[self.rng.usize(..self.neutral.len())];
                if !client.holds(other) {
                    self.counters.claims += 1;
                    errors += client
                        .report_collision(controlled(slot).start, other)
                        .is_err() as u64;
                }
            }
            if phase != Phase::Drain && now >= *next_command {
                *next_command += COMMAND_INTERVAL;
                let payload = self.ledger.next_command(*incarnation);
                if client.send_global_command(&payload).is_err() {
                    self.ledger.unsent(*incarnation);
                    errors += 1;
                }
            }
            errors += client.tick_with(now, |_, _| {}).is_err() as u64;
            while let Some(e) = client.poll_event() {
                match e {
                    ClientEvent::RightGained { .. } => self.counters.gained += 1,
                    ClientEvent::RightLost { .. } => self.counters.lost += 1,
                    ClientEvent::RightRefused { .. } => self.counters.refused += 1,
                    _ => {}
                }
            }
            while let Some(m) = client.poll_message() {
                self.ledger.received(*incarnation, &m);
            }
            self.counters.api_errors += errors;
        }
    }

    /// Incarnations seated now.
    pub fn live(&self) -> Vec<u32> {
        self.seats
            .iter()
            .filter(|s| s.client.is_some())
            .map(|s| s.incarnation)
            .collect()
    }

    /// Whether every seated client is connected and all agree on the
    /// holder and epoch of every neutral object, exactly its holder
    /// believing it holds it, and (when given) as the relay has it.
    /// `Err` names the first disagreement.
    pub fn rights_agree(&mut self, relay: Option<HolderOf<'_>>) -> Result<(), String> {
        let mut clients = Vec::new();
        for (slot, seat) in self.seats.iter_mut().enumerate() {
            let Some(c) = seat.client.as_mut() else {
                continue;
            };
            if c.refresh_state() != ConnectionState::Connected {
                return Err(format!("seat {slot} is not connected"));
            }
            clients.push((slot, c.stats().network.client_id, &*c));
        }
        for &e in &self.neutral {
            let truth = match relay {
                Some(holder) => {
                    let (h, epoch) = holder(e).ok_or_else(|| {
                        let views: Vec<_> =
                            clients.iter().map(|(s, _, c)| (*s, c.right(e))).collect();
                        format!("the relay lost object {e}; clients see {views:?}")
                    })?;
                    Some((h.unwrap_or(0), epoch))
                }
                None => clients[0].2.right(e),
            };
            let Some((holder, epoch)) = truth else {
                return Err(format!("object {e}: seat {} has no view", clients[0].0));
            };
            for &(slot, id, c) in &clients {
                if c.right(e) != Some((holder, epoch)) {
                    return Err(format!(
                        "object {e}: seat {slot} sees {:?}, not ({holder}, {epoch})",
                        c.right(e)
                    ));
                }
                if c.holds(e) != (id == holder) {
                    return Err(format!(
                        "object {e}: seat {slot} (client {id}) believes it holds: {}; holder {holder}",
                        c.holds(e)
                    ));
                }
            }
        }
        Ok(())
    }
}
