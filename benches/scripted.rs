//! Bytes per second for 500 scripted elements (S5) against sending the
//! same 500 elements' transforms as server-owned entity state, through
//! the sans-IO relay and its encoders on a simulated clock (no sockets,
//! deterministic). The elements follow the same paths either way, live
//! 20 to 40 s and are replaced when they expire, so the scene always
//! holds 500.
//!
//! Run: cargo bench --bench scripted

use std::collections::BTreeMap;
use std::sync::Arc;

use glam::Vec3;
use netsync::core::pose::Sample;
use netsync::core::scripted::{ScriptedConfig, ScriptedSet, Spawn};
use netsync::core::send_filter::{SendFilter, SendFilterConfig, SendPolicy};
use netsync::server::relay::{Outgoing, Relay, RelayConfig};
use netsync::wire::message::EntityUpdate;

const PATHS: &str = "\
netsync-paths 1
path 1
  speed 2
  end repeat
  segment steps=40 duration=0.05 turn_step=4.5
path 2
  speed 1.5
  segment steps=20 duration=0.1 turn=40 dir=left speed_step=0.02
  segment steps=20 duration=0.1 turn=80 dir=right speed=1.2 turn_step=-0.5
  segment steps=30 duration=0.1 turn=40 dir=left speed=0.8
path 3
  speed 3
  end repeat
  segment steps=25 duration=0.04 turn_step=3
  segment steps=25 duration=0.04 dir=right turn_step=3
";

const ELEMENTS: usize = 500;
const SECONDS: f64 = 120.0;
const WARMUP: f64 = 10.0;
/// IPv4 and UDP headers per datagram.
const IP_UDP: usize = 28;
/// laminar's headers: unreliable, and reliable ordered (acked + arranging).
const LAMINAR_UNRELIABLE: usize = 5;
const LAMINAR_ORDERED: usize = 16;

#[derive(Default)]
struct Count {
    payload: usize,
    wire: usize,
    messages: usize,
}

impl Count {
    fn add(&mut self, out: &Outgoing) {
        self.payload += out.payload.len();
        self.messages += 1;
        let laminar = if out.reliable {
            LAMINAR_ORDERED
        } else {
            LAMINAR_UNRELIABLE
        };
        self.wire += out.payload.len() + laminar + IP_UDP;
    }
}

/// The game: keeps 500 elements alive, replacing expired ones.
struct Game {
    rng: fastrand::Rng,
    next: u64,
    set: ScriptedSet,
    live: BTreeMap<u64, f64>,
    fingerprint: u64,
}

impl Game {
    fn new(config: Arc<ScriptedConfig>) -> Self {
        let fingerprint = config.fingerprint();
        let mut set = ScriptedSet::new(ELEMENTS * 2);
        set.set_config(config);
        Game {
            rng: fastrand::Rng::with_seed(7),
            next: 1,
            set,
            live: BTreeMap::new(),
            fingerprint,
        }
    }

    /// Expired elements out, new ones in (returned).
    fn refill(&mut self, now: f64) -> (Vec<u64>, Vec<Spawn>) {
        let expired: Vec<u64> = self
            .live
            .iter()
            .filter(|(_, &end)| end <= now)
            .map(|(&id, _)| id)
            .collect();
        for id in &expired {
            self.live.remove(id);
            self.set.remove(*id);
        }
        let mut spawns = Vec::new();
        while self.live.len() < ELEMENTS {
            let r = &mut self.rng;
            let s = Spawn {
                element: self.next,
                path: r.u32(1..=3),
                fingerprint: self.fingerprint,
                start: now + 0.5,
                life: 20.0 + r.f64() * 20.0,
                x: r.f64() * 100.0 - 50.0,
                y: r.f64() * 100.0 - 50.0,
                rotate: r.f64() * std::f64::consts::TAU,
            };
            self.next += 1;
            self.live.insert(s.element, s.end());
            self.set.insert(s).unwrap();
            spawns.push(s);
        }
        (expired, spawns)
    }

    /// Every started element's state at `t`, velocity from a millisecond on.
    fn states(&mut self, t: f64) -> Vec<(u64, Sample)> {
        let ids: Vec<u64> = self.live.keys().copied().collect();
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let (Some(a), Some(b)) = (self.set.state_at(id, t), self.set.state_at(id, t + 1e-3))
            else {
                continue;
            };
            let pose = netsync::core::scripted::pose_of(self.set.plane(), a);
            let ahead = netsync::core::scripted::pose_of(self.set.plane(), b);
            let velocity: Vec3 = (ahead.position - pose.position) * 1000.0;
            out.push((
                id,
                Sample::at(t, pose.position, pose.rotation).with_velocity(velocity),
            ));
        }
        out
    }
}

/// The traffic to one client: `spawns` true sends spawns (S5); false sends
/// the transforms as entity state, through `filter` when given.
fn run(spawns: bool, filter: Option<SendFilterConfig>) -> (Count, Count) {
    let config = Arc::new(ScriptedConfig::parse(PATHS.as_bytes()).unwrap());
    let mut game = Game::new(config);
    let mut relay = Relay::new(RelayConfig::default());
    relay.join(1, 0.0);
    relay.drain().for_each(drop);
    let mut filter = filter.map(SendFilter::new);
    let mut steady = Count::default();
    let mut joining = Count::default();
    let tick = 1.0 / 30.0;
    let mut t = 0.0;
    let mut joined = false;
    while t < SECONDS {
        let (expired, new) = game.refill(t);
        if spawns {
            for id in expired {
                // Expiry needs no message: every machine knows the life.
                let _ = id;
            }
            if !new.is_empty() {
                relay.server_spawn_scripted(&new).unwrap();
            }
        } else {
            for id in expired {
                let _ = relay.server_remove(id);
                if let Some(f) = filter.as_mut() {
                    f.forget(id);
                }
            }
            for (id, sample) in game.states(t) {
                let send = filter
                    .as_mut()
                    .is_none_or(|f| f.update(t, id, &sample).should_send());
                if send {
                    relay
                        .server_set_state(EntityUpdate::from_sample(id, &sample), t)
                        .unwrap();
                }
            }
        }
        // A second client joins once the scene is full: what it costs.
        if !joined && t >= WARMUP {
            joined = true;
            relay.join(2, t);
        }
        relay.tick(t);
        for out in relay.drain() {
            match out.client {
                1 if t >= WARMUP => steady.add(&out),
                2 if t < WARMUP + 2.0 => joining.add(&out),
                _ => {}
            }
        }
        t += tick;
    }
    (steady, joining)
}

fn main() {
    println!(
        "netsync scripted elements: {ELEMENTS} elements living 20 to 40 s (replaced as they expire), \
         {SECONDS:.0} s simulated, relay at 30 Hz, one receiver; the sans-IO relay and encoders."
    );
    println!();
    println!("Steady state, per client (after {WARMUP:.0} s). On the wire adds 28 B of IP/UDP and laminar's header (5 B unreliable, 16 B reliable ordered) per datagram.");
    println!();
    println!(
        "| method | payload (B/s) | on the wire (B/s) | messages per s | a joiner's first 2 s (kB) |"
    );
    println!("|---|---|---|---|---|");
    let span = SECONDS - WARMUP;
    let rows = [
        ("scripted elements (S5 spawns)", true, None),
        ("transforms as state, every send tick", false, None),
        (
            "transforms as state, dead reckoning (1 cm, 1 deg)",
            false,
            Some(SendFilterConfig {
                policy: SendPolicy::DeadReckoning,
                ..Default::default()
            }),
        ),
    ];
    let mut results = Vec::new();
    for (name, spawns, filter) in rows {
        let (steady, joining) = run(spawns, filter);
        println!(
            "| {name} | {:.0} | {:.0} | {:.1} | {:.1} |",
            steady.payload as f64 / span,
            steady.wire as f64 / span,
            steady.messages as f64 / span,
            joining.wire as f64 / 1e3,
        );
        results.push(steady.wire as f64 / span);
    }
    println!();
    println!(
        "Scripted elements need {:.0}x fewer bytes than sending every tick, {:.0}x fewer than dead reckoning. \
         Each reliable message also costs the client about one 45 B acknowledgement up (the ack pacer's answer).",
        results[1] / results[0],
        results[2] / results[0]
    );
}
