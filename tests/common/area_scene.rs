//! S2's large session on the sans-IO relay: clients in areas far apart,
//! each moving one controlled entity around its area, and one
//! global-view observer. Shared by the interest test and the interest
//! benchmark (`benches/interest.rs` includes this file).

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use glam::{Quat, Vec3};
use netsync::core::pose::Pose;
use netsync::server::relay::{Relay, RelayConfig};
use netsync::wire::message::{EntityUpdate, InterestSpec, Message};

/// Distance between area centres (m): many cells apart at the default
/// 50 m cell size.
pub const AREA_SPACING: f32 = 500.0;

/// The scene's shape.
#[derive(Clone, Copy, Debug)]
pub struct AreaScene {
    pub areas: u32,
    pub clients_per_area: u32,
    /// Interest filters on (radius 1 cell) or off (every client sees all).
    pub interest: bool,
    pub seconds: f64,
    /// Send and tick rate (Hz).
    pub rate: f64,
}

/// What the scene measured.
#[derive(Debug, Default)]
pub struct AreaOutcome {
    /// Per client (1-based index - 1): every entity it received state for.
    pub received: Vec<HashSet<u64>>,
    /// The observer's received entities.
    pub observer: HashSet<u64>,
    /// Bytes sent to each player client over the measured window.
    pub down_bytes: Vec<u64>,
    /// Clients that received anything about area 0's entities.
    pub heard_of_area_0: usize,
    /// Wall time the relay spent in `receive` and `tick`.
    pub relay_time: Duration,
    pub ticks: u64,
    pub measured_seconds: f64,
}

impl AreaScene {
    pub fn clients(&self) -> u32 {
        self.areas * self.clients_per_area
    }

    /// Area of client (and entity) `id`, counted from 1.
    pub fn area_of(&self, id: u64) -> u32 {
        ((id - 1) / self.clients_per_area as u64) as u32
    }

    fn centre(&self, area: u32) -> Vec3 {
        let side = (self.areas as f32).sqrt().ceil() as u32;
        Vec3::new(
            (area % side) as f32 * AREA_SPACING,
            0.0,
            (area / side) as f32 * AREA_SPACING,
        )
    }

    /// Where entity `id` is at `t`: on a 10 m circle round its area's centre.
    fn pose(&self, id: u64, t: f64) -> (Vec3, Vec3) {
        let a = t as f32 * 0.3 + id as f32;
        let offset = Vec3::new(a.cos(), 0.0, a.sin()) * 10.0;
        let velocity = Vec3::new(-a.sin(), 0.0, a.cos()) * 3.0;
        (self.centre(self.area_of(id)) + offset, velocity)
    }

    pub fn run(&self) -> AreaOutcome {
        let config = RelayConfig {
            send_rate: self.rate,
            ..RelayConfig::default()
        };
        let p = config.precision;
        let mut relay = Relay::new(config);
        let n = self.clients();
        let observer = n + 1;
        let mut relay_time = Duration::ZERO;
        let encode = |m: &Message| m.to_bytes(&p).expect("encodable");
        let timed = |relay_time: &mut Duration, f: &mut dyn FnMut()| {
            let start = Instant::now();
            f();
            *relay_time += start.elapsed();
        };
        for c in 1..=observer {
            relay.join(c, 0.0);
        }
        let spec = if self.interest {
            InterestSpec {
                global_view: false,
                device_class: 0,
                radius: 1,
                regions: vec![],
            }
        } else {
            InterestSpec::default()
        };
        for c in 1..=n {
            relay.receive(c, &encode(&Message::Interest(spec.clone())), 0.0);
            // Each client's one entity (its own id), declared as a client does.
            let register = Message::Register {
                entity: c as u64,
                kind: netsync::wire::message::entity_kind::CONTROLLED,
            };
            relay.receive(c, &encode(&register), 0.0);
        }
        relay.drain().for_each(drop);
        let warmup = 1.0;
        let mut out = AreaOutcome {
            received: vec![HashSet::new(); n as usize],
            down_bytes: vec![0; n as usize],
            ..Default::default()
        };
        let mut heard: HashMap<u32, bool> = HashMap::new();
        let dt = 1.0 / self.rate;
        let mut t = dt;
        while t < self.seconds {
            let mut states = Vec::with_capacity(n as usize);
            for c in 1..=n {
                let (position, velocity) = self.pose(c as u64, t);
                states.push(encode(&Message::OwnedState {
                    server_time: t,
                    updates: vec![EntityUpdate {
                        entity: c as u64,
                        pose: Pose::new(position, Quat::IDENTITY),
                        velocity: Some(velocity),
                        angular_velocity: None,
                        teleport: false,
                        age: 0.0,
                        sequence: (t * self.rate) as u8,
                        epoch: 0,
                    }],
                }));
            }
            timed(&mut relay_time, &mut || {
                for (i, bytes) in states.iter().enumerate() {
                    relay.receive(i as u32 + 1, bytes, t);
                }
                relay.tick(t);
            });
            out.ticks += 1;
            for o in relay.drain() {
                let Ok(Message::Snapshot { updates, .. }) = Message::decode(&o.payload, &p) else {
                    continue;
                };
                let ids = updates.iter().map(|u| u.entity);
                if o.client == observer {
                    out.observer.extend(ids);
                    continue;
                }
                let i = o.client as usize - 1;
                if t >= warmup {
                    out.down_bytes[i] += o.payload.len() as u64;
                }
                for id in ids {
                    if self.area_of(id) == 0 {
                        heard.insert(o.client, true);
                    }
                    out.received[i].insert(id);
                }
            }
            t += dt;
        }
        out.heard_of_area_0 = heard.len();
        out.relay_time = relay_time;
        out.measured_seconds = self.seconds - warmup;
        out
    }
}
