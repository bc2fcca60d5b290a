//! Entry points of the fuzz targets (fuzz/, cargo-fuzz), in the library
//! so that a stable test replays the checked-in corpora through exactly
//! the code the fuzzers ran (tests/fuzz_corpus.rs). Each takes arbitrary
//! bytes and panics only on a broken invariant, never on bad input.

use std::net::SocketAddr;

use glam::{Quat, Vec3};

use crate::core::Sample;
use crate::net::handshake::{GateOutcome, GateSecurity, Gatekeeper, Handshake, PROTOCOL_VERSION};
use crate::net::secure::{issue_token, ConnectToken, RelaySecret};
use crate::server::relay::{Relay, RelayConfig};
use crate::wire::message::Message;
use crate::wire::quantize::Precision;
use crate::wire::update::EntityUpdate;
use crate::wire::Reader;

/// The fuzz targets, by name (fuzz/fuzz_targets/<name>.rs, fuzz/corpus/<name>/).
pub const TARGETS: [&str; 5] = [
    "wire_message",
    "handshake",
    "relay_session",
    "replay_reader",
    "scripted_config",
];

/// Runs target `name` on `data`; false for an unknown name.
pub fn run(name: &str, data: &[u8]) -> bool {
    match name {
        "wire_message" => wire_message(data),
        "handshake" => handshake(data),
        "relay_session" => relay_session(data),
        "replay_reader" => replay_reader(data),
        "scripted_config" => scripted_config(data),
        _ => return false,
    }
    true
}

/// Any datagram payload: decodes or is refused; what decodes encodes
/// again and that decodes too.
pub fn wire_message(data: &[u8]) {
    let p = Precision::default();
    // A packet: one message, or a batch of them (wire/batch.rs).
    let mut parts = Vec::new();
    for part in crate::wire::batch::split(data) {
        let Ok(bytes) = part else { break };
        parts.push(bytes.to_vec());
        if let Ok(message) = Message::decode(bytes, &p) {
            if let Ok(bytes) = message.to_bytes(&p) {
                Message::decode(&bytes, &p).expect("a re-encoded message decodes");
            }
        }
    }
    // What splits packs back into packets that split into the same parts.
    let packed = crate::wire::batch::pack(parts.clone(), usize::MAX);
    let again: Vec<Vec<u8>> = packed
        .iter()
        .flat_map(|p| {
            crate::wire::batch::split(p).map(|m| m.expect("a packed batch splits").to_vec())
        })
        .collect();
    assert_eq!(again, parts, "a batch repacks to the same messages");
}

/// The secret and address the handshake target's secure relay uses (the
/// seeds carry tokens issued with them).
pub const FUZZ_SECRET: RelaySecret = RelaySecret([0x5e; 32]);
pub fn fuzz_relay() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 7777))
}

/// Any handshake datagram, to a plain and to a secure relay: never a
/// reply larger than the request; tokens parse or are refused.
pub fn handshake(data: &[u8]) {
    let _ = Handshake::decode(data);
    let from = SocketAddr::from(([10, 0, 0, 2], 5000));
    let security = GateSecurity {
        secret: FUZZ_SECRET,
        relay: fuzz_relay(),
        unix_now: || 1_000,
    };
    for mut gate in [Gatekeeper::new(4), Gatekeeper::secure(4, security)] {
        // Twice: a repeated request takes the admitted path.
        for _ in 0..2 {
            match gate.handle(from, data, 0.0) {
                GateOutcome::Reply(r) | GateOutcome::Admitted { reply: r, .. } => {
                    assert!(r.len() <= data.len(), "amplification");
                }
                GateOutcome::Drop(_) => {}
            }
        }
    }
    if let Ok(token) = ConnectToken::from_bytes(data) {
        let _ = token.presented.open(&FUZZ_SECRET, fuzz_relay(), 1_000);
        assert_eq!(ConnectToken::from_bytes(&token.to_bytes()), Ok(token));
    }
    let mut r = Reader::new(data);
    if let Ok(t) = crate::net::secure::PresentedToken::read(&mut r) {
        let _ = t.open(&FUZZ_SECRET, fuzz_relay(), 1_000);
    }
}

/// A sequence of payloads from two clients on one relay, with time
/// passing: the relay never panics and its outgoing queue drains.
/// Layout: per packet `[flags][len]` then `len` bytes; flags bit 0: from
/// client 2; bit 1: a relay step after it; bit 2: the sender leaves and
/// joins again.
pub fn relay_session(data: &[u8]) {
    let mut relay = Relay::new(RelayConfig::default());
    let mut now = 0.0;
    relay.join(1, now);
    relay.join(2, now);
    let mut rest = data;
    while rest.len() >= 2 {
        let (flags, len) = (rest[0], rest[1] as usize);
        let len = len.min(rest.len() - 2);
        let payload = &rest[2..2 + len];
        rest = &rest[2 + len..];
        let client = 1 + u32::from(flags & 1);
        relay.receive(client, payload, now);
        if flags & 2 != 0 {
            now += 0.011;
            relay.step(now);
            relay.drain().for_each(drop);
        }
        if flags & 4 != 0 {
            relay.leave(client, now);
            relay.join(client, now);
        }
    }
    relay.tick(now + 0.1);
    relay.drain().for_each(drop);
}

/// Any bytes as a recording: read, or refused with an error.
pub fn replay_reader(data: &[u8]) {
    let _ = crate::replay::format::read_recording(data);
    if let Ok(mut player) = crate::replay::player::Player::from_bytes(data) {
        for t in [0.0, 0.5, 1.0, 1e9] {
            let _ = player.tick_at(t, |_, _| {});
        }
    }
}

/// Any bytes as a scripted-path configuration: parsed and validated, or
/// refused.
pub fn scripted_config(data: &[u8]) {
    let _ = crate::core::scripted::config::ScriptedConfig::parse(data);
}

/// Seeds for the corpora: valid inputs of each target, so the fuzzers
/// start from the paths real traffic takes. (name, target, bytes).
pub fn seeds() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let p = Precision::default();
    let encode = |m: Message| m.to_bytes(&p).expect("seed messages encode");
    let sample = Sample::at(1.0, Vec3::new(1.0, 2.0, 3.0), Quat::IDENTITY)
        .with_velocity(Vec3::X)
        .with_angular_velocity(Vec3::Y);
    let update = EntityUpdate::from_sample(42, &sample);
    let state = encode(Message::OwnedState {
        server_time: 1.0,
        updates: vec![update],
    });
    let register = encode(Message::Register {
        entity: 42,
        kind: 0,
    });
    let claim = encode(Message::Claim {
        mine: 42,
        other: 7,
        epoch: 1,
        seq: 1,
    });
    let command = encode(Message::GlobalCommandUp {
        seq: 1,
        data: b"fire".to_vec(),
    });
    let mut session = Vec::new();
    for (flags, payload) in [
        (0u8, &register),
        (2, &state),
        (1, &claim),
        (3, &command),
        (4, &state),
    ] {
        session.push(flags);
        session.push(payload.len() as u8);
        session.extend_from_slice(payload);
    }
    let token = issue_token(&FUZZ_SECRET, 9, fuzz_relay(), u64::MAX / 2)
        .expect("the OS gives random bytes");
    let hello = Handshake::Hello {
        version: PROTOCOL_VERSION,
        nonce: 3,
        token: Some(token.presented),
    }
    .encode();
    let plain_hello = Handshake::Hello {
        version: PROTOCOL_VERSION,
        nonce: 3,
        token: None,
    }
    .encode();
    let scripted = b"netsync-paths 1\nplane xz\npath 7\n  speed 2.5\n  end repeat\n  segment steps=20 duration=0.05 turn_step=4.5\n".to_vec();
    vec![
        ("client_recording", "replay_reader", recording(&sample)),
        ("owned_state", "wire_message", state.clone()),
        ("claim", "wire_message", claim.clone()),
        (
            "batch",
            "wire_message",
            crate::wire::batch::pack(vec![claim, state.clone()], usize::MAX).remove(0),
        ),
        ("global_command", "wire_message", command),
        ("session", "relay_session", session),
        ("secure_hello", "handshake", hello),
        ("plain_hello", "handshake", plain_hello),
        ("token", "handshake", token.to_bytes()),
        ("paths", "scripted_config", scripted),
    ]
}

/// A small client recording: configuration, identity, frames and ticks.
fn recording(sample: &Sample) -> Vec<u8> {
    use crate::replay::format::{encode_block, encode_entry, header};
    use crate::replay::{Entry, RecordingKind};
    let mut raw = crate::wire::Writer::new();
    let entries = [
        Entry::Config(crate::core::timeline::TimelineConfig::default()),
        Entry::Identity { client_id: 1 },
        Entry::ClockOffset(0.0),
        Entry::Frame {
            at: 1.0,
            vouched: 1.0,
            samples: vec![(42, *sample)],
        },
        Entry::Tick,
        Entry::Frame {
            at: 1.1,
            vouched: 1.1,
            samples: vec![(
                42,
                Sample {
                    server_time: 1.1,
                    ..*sample
                },
            )],
        },
        Entry::Tick,
    ];
    for (i, e) in entries.iter().enumerate() {
        encode_entry(&mut raw, 1.0 + 0.05 * i as f64, e);
    }
    let mut bytes = header(RecordingKind::Client).to_vec();
    bytes.extend(encode_block(0, entries.len() as u32, &raw.bytes));
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_seed_runs_through_its_target() {
        for (name, target, bytes) in seeds() {
            assert!(run(target, &bytes), "{name}: unknown target {target}");
        }
        let (_, _, rec) = seeds()
            .into_iter()
            .find(|s| s.0 == "client_recording")
            .unwrap();
        crate::replay::format::read_recording(&rec).unwrap();
        // The paths seed is a valid configuration, not just input.
        let (_, _, paths) = seeds().into_iter().find(|s| s.0 == "paths").unwrap();
        crate::core::scripted::ScriptedConfig::parse(&paths).unwrap();
        assert!(!run("nope", b""));
    }
}
