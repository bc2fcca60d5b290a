//! The soak's schedule, the same on either network: rounds of claims and
//! disturbances, each followed by a calm in which send rights must
//! settle, then a drain in which every command must arrive.

use std::time::Instant;

use netsync::client::Client;
use netsync::server::relay_server::RelayServerStats;

use crate::disturbance::{self, Change, ACTIVE, ROUND};
use crate::report::{rss_mb, Report};
use crate::table::{Phase, Table, FRAME, SEATS};

/// After the last round: no new commands for this long, so that all sent
/// arrive even through the HOSTILE profile's losses and resends.
pub const DRAIN: f64 = 20.0;
/// Most the process may grow from the end of the first round to the end.
pub const MAX_RSS_GROWTH_MB: f64 = 64.0;

/// A network the soak runs on.
pub trait World {
    /// Brings the network (and the relay) up to engine time `now`;
    /// returns the engine time it reached (later on a machine that fell
    /// behind real time).
    fn advance(&mut self, now: f64) -> f64;
    /// A new client for seat `slot`.
    fn spawn(&mut self, slot: usize) -> Client;
    /// Seat `slot`'s client quits.
    fn quit(&mut self, slot: usize, client: Client);
    /// Cuts (or restores) seat `slot`'s network; false when this world
    /// cannot (the seat quits instead).
    fn outage(&mut self, slot: usize, cut: bool) -> bool;
    /// Whether the world sees inside the relay (for [`World::holder`]).
    fn sees_relay(&self) -> bool;
    /// The relay's holder and epoch of `entity`.
    fn holder(&self, entity: u64) -> Option<(Option<u32>, u32)>;
    fn relay_stats(&self) -> RelayServerStats;
    /// What the network holds now, for the progress line ("" if nothing).
    fn describe(&self) -> String;
}

pub fn run(mode: &'static str, world: &mut impl World, seed: u64, seconds: f64) -> Report {
    let wall = Instant::now();
    let rounds = (seconds / ROUND).ceil().max(1.0) as usize;
    let seconds = rounds as f64 * ROUND;
    let mut table = Table::new(seed);
    for slot in 0..SEATS {
        let client = world.spawn(slot);
        table.join(slot, client, 0.0);
    }
    let mut violations = Vec::new();
    let mut settle = Vec::new();
    let (mut rss_after_warmup, mut rss_max) = (f64::NAN, 0.0f64);
    let mut round = 0;
    let mut plan = Vec::new();
    let mut agreed = false;
    let mut last_disagreement = String::new();
    let mut next_check = 0.0;
    let mut traffic = (0u64, 0u64);
    let mut t = 0.0;
    while t < seconds + DRAIN {
        t = world.advance(t);
        let round_start = round as f64 * ROUND;
        if t >= round_start + ROUND && round < rounds {
            if !agreed {
                violations.push(format!(
                    "round {round}: send rights never settled ({last_disagreement})"
                ));
            }
            let rss = rss_mb();
            rss_max = rss_max.max(rss);
            if round == 0 {
                rss_after_warmup = rss;
            }
            round += 1;
            agreed = false;
            let relay = world.relay_stats();
            eprintln!(
                "{mode}: round {round} of {rounds} done at {:.0} s of game time, {:.0} s wall, {rss:.0} MB; relay sent {:.0} kB, received {:.0} kB this round; relay pacing so far: {} bursts, {} ack requests, {} answers{}",
                t,
                wall.elapsed().as_secs_f64(),
                (relay.bytes_sent - traffic.0) as f64 / 1e3,
                (relay.bytes_received - traffic.1) as f64 / 1e3,
                relay.pacing.bursts,
                relay.pacing.ack_requests,
                relay.pacing.answers,
                world.describe()
            );
            traffic = (relay.bytes_sent, relay.bytes_received);
            // The first round only warms up; the last is followed by the drain.
            if round < rounds {
                plan = disturbance::plan(&mut table.rng, SEATS, round as f64 * ROUND);
            }
            continue;
        }
        for d in plan.iter_mut() {
            match d.due(t) {
                Some(Change::Begin) => {
                    let cut = !d.leave && world.outage(d.slot, true);
                    if !cut {
                        d.leave = true;
                        if let Some(client) = table.leave(d.slot) {
                            world.quit(d.slot, client);
                        }
                    }
                }
                Some(Change::End) if d.leave => {
                    let client = world.spawn(d.slot);
                    table.join(d.slot, client, t);
                }
                Some(Change::End) => {
                    world.outage(d.slot, false);
                }
                None => {}
            }
        }
        let phase = if t >= seconds {
            Phase::Drain
        } else if t - round_start < ACTIVE {
            Phase::Active
        } else {
            Phase::Calm
        };
        table.frame(t, phase);
        if phase == Phase::Calm && !agreed && t >= next_check {
            next_check = t + 0.1;
            let holder = |e: u64| world.holder(e);
            let relay = world.sees_relay().then_some(&holder as &dyn Fn(u64) -> _);
            match table.rights_agree(relay) {
                Ok(()) => {
                    agreed = true;
                    settle.push(t - (round_start + ACTIVE));
                }
                Err(e) => last_disagreement = e,
            }
        }
        t += FRAME;
    }
    if let Err(e) = table.rights_agree(None) {
        violations.push(format!("at the end: {e}"));
    }
    table.finish();
    let delivery = match table.ledger.verify(&table.live()) {
        Ok(d) => Some(d),
        Err(problems) => {
            violations.extend(problems);
            None
        }
    };
    let c = table.counters;
    if c.global_gaps + c.messages_dropped > 0 {
        violations.push(format!(
            "clients reported {} missed global commands and dropped {} messages",
            c.global_gaps, c.messages_dropped
        ));
    }
    let relay = world.relay_stats();
    if relay.relay.global_history_gaps > 0 {
        violations.push("the relay's command history ran out".into());
    }
    let rss_end = rss_mb();
    // Flat, not zero: allocators keep freed pages, and the ledger itself
    // grows by a few bytes per command.
    if rss_end - rss_after_warmup > MAX_RSS_GROWTH_MB {
        violations.push(format!(
            "memory grew {:.0} MB after the first round (limit {MAX_RSS_GROWTH_MB} MB)",
            rss_end - rss_after_warmup
        ));
    }
    Report {
        mode,
        seconds,
        wall: wall.elapsed().as_secs_f64(),
        settle,
        counters: c,
        delivery,
        violations,
        rss_after_warmup,
        rss_end,
        rss_max: rss_max.max(rss_end),
        relay,
        fingerprint: table.ledger.fingerprint(),
    }
}
