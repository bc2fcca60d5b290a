//! Bytes on the wire: one transform update moving and at rest, and the
//! traffic of a 1 000-entity scene where 10 % move, with the sender-side
//! filter (dead reckoning) and without (send every tick), side by side.
//! Deterministic: the sans-IO relay and filter on a simulated clock.
//!
//! Run: cargo bench --bench wire_size

use glam::{Quat, Vec3};
use netsync::core::pose::{Pose, Sample};
use netsync::core::send_filter::{SendFilter, SendFilterConfig, SendPolicy};
use netsync::server::relay::{Relay, RelayConfig};
use netsync::wire::message::{entity_kind, EntityUpdate, Message, UpdatePacker};
use netsync::wire::quantize::Precision;
use netsync::wire::Writer;

fn update_size(moving: bool) -> usize {
    let mut w = Writer::new();
    EntityUpdate {
        entity: 1234,
        pose: Pose::new(Vec3::new(152.391, 1.5, -88.004), Quat::from_rotation_y(1.1)),
        velocity: moving.then_some(Vec3::new(3.2, 0.0, -1.4)),
        angular_velocity: moving.then_some(Vec3::new(0.0, 0.8, 0.0)),
        teleport: false,
        age: if moving { 0.012 } else { 0.0 },
        sequence: 7,
        epoch: 1,
    }
    .encode(&mut w, &Precision::default())
    .unwrap();
    w.len()
}

struct Traffic {
    up_bytes_per_s: f64,
    down_bytes_per_s: f64,
    updates_per_s: f64,
}

/// 1 000 entities, `moving` of them on circles, owned by client 1; client
/// 2 receives. 60 fps owner frames, 30 Hz sends, relay at 30 Hz.
fn scene(policy: SendPolicy, entities: u64, moving: u64, seconds: f64) -> Traffic {
    let config = RelayConfig::default();
    let p = config.precision;
    let mut relay = Relay::new(config);
    relay.join(1, 0.0);
    relay.join(2, 0.0);
    for entity in 0..entities {
        let register = Message::Register {
            entity,
            kind: entity_kind::CONTROLLED,
        };
        relay.receive(1, &register.to_bytes(&p).unwrap(), 0.0);
    }
    relay.drain().for_each(drop);
    let mut filter = SendFilter::new(SendFilterConfig {
        policy,
        ..Default::default()
    });
    let (mut up, mut down, mut updates) = (0usize, 0usize, 0usize);
    let mut sequences = vec![0u8; entities as usize];
    let warmup = 2.0;
    let mut t = 0.0;
    let mut frame = 0u64;
    while t < seconds {
        if frame % 2 == 0 {
            let mut batch = Vec::new();
            for id in 0..entities {
                let sample = if id < moving {
                    let a = t as f32 * 0.5 + id as f32;
                    let r = 10.0;
                    Sample::at(
                        t,
                        Vec3::new(a.cos() * r, 0.0, a.sin() * r),
                        Quat::from_rotation_y(a),
                    )
                    .with_velocity(Vec3::new(-a.sin() * r * 0.5, 0.0, a.cos() * r * 0.5))
                    .with_angular_velocity(Vec3::new(0.0, 0.5, 0.0))
                } else {
                    Sample::at(t, Vec3::new(id as f32, 0.0, 0.0), Quat::IDENTITY)
                };
                if filter.update(t, id, &sample).should_send() {
                    let mut update = EntityUpdate::from_sample(id, &sample);
                    // Numbered per entity as the client numbers them: the
                    // relay takes an equal number for a repeat.
                    sequences[id as usize] = sequences[id as usize].wrapping_add(1);
                    update.sequence = sequences[id as usize];
                    update.epoch = 1;
                    batch.push(update);
                }
            }
            // Packed as the client packs: by size within 1 200 bytes.
            let mut packer = UpdatePacker::owned_state(t, 1200);
            let mut w = Writer::new();
            for update in &batch {
                w.bytes.clear();
                update.encode(&mut w, &p).unwrap();
                packer.push(update.entity, &w.bytes);
            }
            for message in packer.finish(false) {
                if t >= warmup {
                    up += message.bytes.len() + 28; // plus IP/UDP headers
                }
                relay.receive(1, &message.bytes, t);
            }
            relay.tick(t);
            for out in relay.drain() {
                if out.client == 2 && t >= warmup {
                    down += out.payload.len() + 28;
                    if let Ok(Message::Snapshot { updates: u, .. }) =
                        Message::decode(&out.payload, &p)
                    {
                        updates += u.len();
                    }
                }
            }
        }
        frame += 1;
        t = frame as f64 / 60.0;
    }
    let span = seconds - warmup;
    Traffic {
        up_bytes_per_s: up as f64 / span,
        down_bytes_per_s: down as f64 / span,
        updates_per_s: updates as f64 / span,
    }
}

fn main() {
    println!("netsync wire size (default precision: 1 mm, 10-bit smallest-three rotation)");
    println!();
    println!("| transform update | bytes |");
    println!("|---|---|");
    println!(
        "| at rest (id, flags, position, rotation) | {} |",
        update_size(false)
    );
    println!(
        "| moving (+ velocity, angular velocity, age) | {} |",
        update_size(true)
    );
    println!();
    println!("Scene: 1 000 entities, 100 moving, 30 Hz sends, relay at 30 Hz, one receiver; bytes include 28 B of IP/UDP header per datagram (laminar's own header not counted).");
    println!();
    println!("| sender policy | up (kB/s) | down (kB/s) | updates received per s | bits per entity per s (down) |");
    println!("|---|---|---|---|---|");
    for (name, policy) in [
        ("dead reckoning (default)", SendPolicy::DeadReckoning),
        ("send on change", SendPolicy::OnChange),
        ("always (every tick)", SendPolicy::Always),
    ] {
        let t = scene(policy, 1000, 100, 22.0);
        println!(
            "| {name} | {:.1} | {:.1} | {:.0} | {:.0} |",
            t.up_bytes_per_s / 1e3,
            t.down_bytes_per_s / 1e3,
            t.updates_per_s,
            t.down_bytes_per_s * 8.0 / 1000.0
        );
    }
}
