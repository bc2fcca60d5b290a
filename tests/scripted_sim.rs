//! Scripted elements (S5) through the whole stack on an in-memory network
//! and a simulated clock: the embedded server keeps 500 elements alive for
//! ten minutes (spawning ahead of time, replacing expired and shot ones)
//! and a client under AVG shows each where the server computes it at the
//! same server time; a client whose clock jumps and drifts is resynced and
//! agrees again.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use common::sim::World;
use netsync::client::{ClientEvent, Removal};
use netsync::core::scripted::{ScriptedConfig, Spawn};
use netsync::core::timeline::shown_flags;
use netsync::netsim::NetworkProfile;

const PATHS: &str = "\
netsync-paths 1
plane xy
path 1          # lazy circles
  speed 2
  end repeat
  segment steps=40 duration=0.05 turn_step=4.5
path 2          # zig-zag, speeding up
  speed 1.5
  segment steps=20 duration=0.1 turn=40 dir=left speed_step=0.02
  segment steps=20 duration=0.1 turn=80 dir=right speed=1.2 turn_step=-0.5
  segment steps=30 duration=0.1 turn=40 dir=left speed=0.8
path 3          # a dash that slows, a turn, then still
  speed 5
  end stop
  segment steps=10 duration=0.2 speed_step=-0.2
  segment steps=5 duration=0.5 turn=90 speed=0.3
path 4          # an S, over and over
  speed 3
  end repeat
  segment steps=25 duration=0.04 turn_step=3
  segment steps=25 duration=0.04 dir=right turn_step=3
";

fn config() -> Arc<ScriptedConfig> {
    Arc::new(ScriptedConfig::parse(PATHS.as_bytes()).unwrap())
}

/// The server's side of the game: keeps `target` elements alive.
struct Spawner {
    rng: fastrand::Rng,
    next_id: u64,
    /// Live elements: id -> (end time, when it was spawned).
    live: BTreeMap<u64, (f64, f64)>,
    spawned: u64,
    shot: u64,
}

impl Spawner {
    fn spawn(&mut self, w: &mut World, now: f64) {
        let id = 1_000_000 + self.next_id;
        self.next_id += 1;
        let r = &mut self.rng;
        let spawn = Spawn {
            element: id,
            path: r.u32(1..=4),
            fingerprint: 0, // the game side fills it in
            start: now + 0.3 + r.f64() * 1.5,
            life: 20.0 + r.f64() * 40.0,
            x: r.f64() * 100.0 - 50.0,
            y: r.f64() * 100.0 - 50.0,
            rotate: r.f64() * std::f64::consts::TAU,
        };
        w.game.spawn(spawn).unwrap();
        self.live.insert(id, (spawn.end(), now));
        self.spawned += 1;
    }

    /// Replaces expired elements; now and then shoots one.
    fn play(&mut self, w: &mut World, now: f64, target: usize) {
        self.live.retain(|_, &mut (end, _)| end > now);
        if self.rng.u8(0..20) == 0 && !self.live.is_empty() {
            let victim = *self
                .live
                .keys()
                .nth(self.rng.usize(0..self.live.len()))
                .unwrap();
            w.game.despawn(victim).unwrap();
            self.live.remove(&victim);
            self.shot += 1;
        }
        while self.live.len() < target {
            self.spawn(w, now);
        }
    }
}

/// Every scripted element client `i` shows at `t` (engine time), by id.
fn shown(w: &mut World, i: usize, t: f64, events: &mut Vec<ClientEvent>) -> HashMap<u64, [f32; 3]> {
    let c = &mut w.sims[i].client;
    let mut out = HashMap::new();
    c.tick_with(t, |_, s| {
        if s.flags & shown_flags::SCRIPTED != 0 {
            out.insert(s.entity, s.pose.position.to_array());
        }
    })
    .unwrap();
    while let Some(e) = c.poll_event() {
        events.push(e);
    }
    out
}

/// The server's positions at server time `at`, by id.
fn server_at(w: &mut World, at: f64) -> HashMap<u64, [f32; 3]> {
    let mut out = HashMap::new();
    w.game.scripted_at(at, |id, pose| {
        out.insert(id, pose.position.to_array());
    });
    out
}

fn distance(a: [f32; 3], b: [f32; 3]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| ((x - y) as f64).powi(2))
        .sum::<f64>()
        .sqrt()
}

#[test]
fn five_hundred_elements_agree_with_the_server_for_ten_minutes() {
    let mut w = World::new(21, NetworkProfile::AVG, 1, |_| {}, |_| {});
    let cfg = config();
    w.game.set_scripted_config(cfg.clone());
    w.sims[0].client.set_scripted_config(cfg);
    let mut spawner = Spawner {
        rng: fastrand::Rng::with_seed(4),
        next_id: 0,
        live: BTreeMap::new(),
        spawned: 0,
        shot: 0,
    };
    let mut events = Vec::new();
    let (mut worst, mut compared, mut ticks) = (0.0f64, 0u64, 0u64);
    let mut clock_error = 0.0f64;
    let mut t = 0.0;
    let mut next_game = 0.0;
    let end = 600.0;
    while t < end {
        w.step(t);
        if t >= next_game {
            next_game += 0.1;
            spawner.play(&mut w, t, 500);
            let client = shown(&mut w, 0, t, &mut events);
            let Some(at) = w.sims[0].client.scripted_time() else {
                t += 0.004;
                continue;
            };
            let server = server_at(&mut w, at);
            if t > 5.0 {
                ticks += 1;
                clock_error = clock_error.max((at - t).abs());
                for (id, p) in &client {
                    if let Some(q) = server.get(id) {
                        worst = worst.max(distance(*p, *q));
                        compared += 1;
                    }
                }
                // Every element the server spawned more than 2 s ago and
                // that is live at that time is shown (delivery is reliable).
                for (id, &(_, spawned_at)) in &spawner.live {
                    if server.contains_key(id) && t - spawned_at > 2.0 {
                        assert!(client.contains_key(id), "{t:.1} s: element {id} is missing");
                    }
                }
            }
        }
        t += 0.004;
    }
    let expired = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                ClientEvent::EntityRemoved {
                    reason: Removal::Expired,
                    ..
                }
            )
        })
        .count();
    let despawned = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                ClientEvent::EntityRemoved {
                    reason: Removal::Unregistered,
                    ..
                }
            )
        })
        .count();
    let appeared = events
        .iter()
        .filter(|e| matches!(e, ClientEvent::EntityAppeared { .. }))
        .count() as u64;
    eprintln!(
        "{compared} comparisons over {ticks} ticks: largest difference {worst:e} m; \
         {} spawned, {} shot, {appeared} appeared, {expired} expired, {despawned} despawned on the client; \
         clock estimate within {:.1} ms",
        spawner.spawned,
        spawner.shot,
        clock_error * 1e3
    );
    assert!(worst <= 1e-4, "positions differ by {worst} m");
    assert!(
        compared > ticks * 480,
        "{compared} comparisons in {ticks} ticks"
    );
    assert!(spawner.spawned > 5000, "{}", spawner.spawned);
    assert!(
        expired > 4000 && despawned > 100,
        "{expired} expired, {despawned} despawned"
    );
    assert!(appeared + 500 >= spawner.spawned);
    let relay = w.relay.stats().relay;
    assert!(
        relay.scripted_elements <= 600,
        "{}",
        relay.scripted_elements
    );
}

#[test]
fn a_client_whose_clock_jumps_and_drifts_is_resynced_and_agrees_again() {
    let mut w = World::new(8, NetworkProfile::GOOD, 1, |_| {}, |_| {});
    let cfg = config();
    w.game.set_scripted_config(cfg.clone());
    w.sims[0].client.set_scripted_config(cfg);
    let mut spawner = Spawner {
        rng: fastrand::Rng::with_seed(9),
        next_id: 0,
        live: BTreeMap::new(),
        spawned: 0,
        shot: 0,
    };
    let mut events = Vec::new();
    // Per tick: time, clock error (s), error against the server's true
    // present (m), error at the client's own server time (m).
    let mut log: Vec<(f64, f64, f64, f64)> = Vec::new();
    let mut t = 0.0;
    let mut next_game = 0.0;
    while t < 90.0 {
        // The client's clock jumps 0.3 s ahead at 30 s (a machine that
        // slept), then runs 3 % fast from 50 to 60 s.
        let rate = match t {
            t if (30.0..30.012).contains(&t) => 26.0,
            t if (50.0..60.0).contains(&t) => 1.03,
            _ => 1.0,
        };
        w.sims[0].clock.set_rate(rate);
        w.step(t);
        if t >= next_game {
            next_game += 0.05;
            spawner.play(&mut w, t, 100);
            let client = shown(&mut w, 0, t, &mut events);
            if let Some(at) = w.sims[0].client.scripted_time() {
                // The relay's clock is the world's: its present is `t`.
                let present = server_at(&mut w, t);
                let same = server_at(&mut w, at);
                let (mut off, mut own) = (0.0f64, 0.0f64);
                for (id, p) in &client {
                    if let Some(q) = present.get(id) {
                        off = off.max(distance(*p, *q));
                    }
                    if let Some(q) = same.get(id) {
                        own = own.max(distance(*p, *q));
                    }
                }
                log.push((t, at - t, off, own));
            }
        }
        t += 0.004;
    }
    let during = |from: f64, to: f64| log.iter().filter(move |e| e.0 >= from && e.0 < to);
    let max = |from: f64, to: f64, f: fn(&(f64, f64, f64, f64)) -> f64| {
        during(from, to).map(f).fold(0.0, f64::max)
    };
    let resyncs = w.sims[0].client.stats().network.clock.resyncs;
    eprintln!(
        "clock error: settled {:.1} ms, after the jump {:.0} ms, 3 s later {:.1} ms, while drifting {:.0} ms, 10 s after {:.1} ms; {resyncs} resyncs",
        max(20.0, 30.0, |e| e.1.abs()) * 1e3,
        max(30.0, 30.3, |e| e.1.abs()) * 1e3,
        max(33.0, 50.0, |e| e.1.abs()) * 1e3,
        max(50.0, 60.0, |e| e.1.abs()) * 1e3,
        max(70.0, 90.0, |e| e.1.abs()) * 1e3,
    );
    // At its own estimate of the server time, the client always shows
    // exactly what the server computes for that time.
    assert!(max(5.0, 90.0, |e| e.3) <= 1e-4);
    // Settled: within a few milliseconds, so within centimetres.
    assert!(max(20.0, 30.0, |e| e.1.abs()) < 0.005);
    assert!(max(20.0, 30.0, |e| e.2) < 0.05);
    // The jump shows, the drift check resyncs within a second, and the
    // elements are where the server has them again.
    assert!(max(30.0, 30.3, |e| e.1.abs()) > 0.2);
    assert!(max(30.0, 30.3, |e| e.2) > 0.3);
    assert!(max(31.0, 50.0, |e| e.1.abs()) < 0.005);
    assert!(max(31.0, 50.0, |e| e.2) < 0.05);
    // Drifting 3 % for 10 s: resynced as the error passes the threshold,
    // and in step again once the drift stops.
    assert!(max(50.0, 60.0, |e| e.1.abs()) > 0.02);
    assert!(resyncs >= 2, "{resyncs}");
    assert!(max(70.0, 90.0, |e| e.1.abs()) < 0.005);
    assert!(max(70.0, 90.0, |e| e.2) < 0.05);
}
