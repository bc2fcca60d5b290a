//! Hostile traffic against a real relay on loopback, with real clients
//! playing through it: a handshake flood from many source ports, and an
//! admitted client that sends forged claims, state for entities it does
//! not hold, truncated, malformed, oversized and replayed messages. All is
//! dropped and counted; the live clients notice nothing. Also: laminar's
//! own error about garbage reaches the engine's log sink, and a client
//! that goes silent is timed out and the others are told.
//! (benches/relay_throughput.rs -- --flood measures what the flood costs
//! them in hop latency and loss.)

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use glam::{Quat, Vec3};
use laminar::{Config, ConnectionManager, Packet, VirtualConnection};
use netsync::client::{Client, ClientConfig, ClientEvent, ConnectionState};
use netsync::core::pose::Pose;
use netsync::core::Sample;
use netsync::net::clock::NetClock;
use netsync::net::handshake::{ClientHandshake, Handshake, PROTOCOL_VERSION};
use netsync::net::laminar_socket::ClientSocket;
use netsync::net::raw_socket::{UdpTransport, MAX_DATAGRAM};
use netsync::server::relay_server::{RelayServer, RelayServerConfig, RelayServerStats};
use netsync::wire::message::{EntityUpdate, Message};
use netsync::wire::quantize::Precision;

fn relay() -> RelayServer {
    RelayServer::start(RelayServerConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        ..Default::default()
    })
    .unwrap()
}

/// A real client that owns entity `id` and moves it on a circle.
struct Player {
    client: Client,
    id: u64,
    messages: Vec<Vec<u8>>,
    /// Every event, with when it was polled.
    events: Vec<(Instant, ClientEvent)>,
    /// Frames in which the other player's entity was on screen.
    saw_other: usize,
}

impl Player {
    fn join(relay: SocketAddr, id: u64) -> Player {
        let mut client = Client::connect(ClientConfig::new(relay)).unwrap();
        client.register(id).unwrap();
        Player {
            client,
            id,
            messages: Vec::new(),
            events: Vec::new(),
            saw_other: 0,
        }
    }

    fn disconnects(&self) -> usize {
        self.events
            .iter()
            .filter(|(_, e)| matches!(e, ClientEvent::Disconnected(_)))
            .count()
    }

    fn frame(&mut self, now: f64, other: u64) {
        if let Some(st) = self.client.server_time(now) {
            let a = st as f32;
            let p = Vec3::new(a.cos(), 0.0, a.sin()) * 2.0;
            self.client
                .set_state(self.id, Sample::at(st, p, Quat::IDENTITY))
                .unwrap();
        }
        let mut seen = false;
        self.client
            .tick_with(now, |_, s| seen |= s.entity == other)
            .unwrap();
        self.saw_other += seen as usize;
        while let Some(e) = self.client.poll_event() {
            self.events.push((Instant::now(), e));
        }
        while let Some(m) = self.client.poll_message() {
            self.messages.push(m.data);
        }
    }
}

/// Plays both players at 60 Hz for `seconds`, calling `each` every frame.
fn play(players: &mut [Player; 2], start: Instant, seconds: f64, mut each: impl FnMut()) {
    let until = start.elapsed().as_secs_f64() + seconds;
    while start.elapsed().as_secs_f64() < until {
        let now = start.elapsed().as_secs_f64();
        let ids = [players[0].id, players[1].id];
        players[0].frame(now, ids[1]);
        players[1].frame(now, ids[0]);
        each();
        std::thread::sleep(Duration::from_millis(16));
    }
}

fn connected(players: &mut [Player; 2]) -> bool {
    players
        .iter_mut()
        .all(|p| p.client.refresh_state() == ConnectionState::Connected)
}

/// What a flood of handshakes got back.
#[derive(Debug, Default)]
struct FloodResult {
    hellos: u64,
    replies: u64,
    /// Largest reply minus its request (must never be positive).
    worst_growth: i64,
}

/// Hellos with fresh nonces from `ports` sockets, as fast as the sockets
/// take them, until `stop`.
fn flood(relay: SocketAddr, ports: usize, stop: Arc<AtomicBool>) -> FloodResult {
    let sockets: Vec<UdpSocket> = (0..ports)
        .map(|_| {
            let s = UdpSocket::bind("127.0.0.1:0").unwrap();
            s.set_nonblocking(true).unwrap();
            s
        })
        .collect();
    let mut result = FloodResult {
        worst_growth: i64::MIN,
        ..Default::default()
    };
    let mut buf = [0u8; 2048];
    let mut nonce = 1u64;
    while !stop.load(Ordering::Relaxed) {
        for s in &sockets {
            nonce += 1;
            let hello = Handshake::Hello {
                version: PROTOCOL_VERSION,
                nonce,
                token: None,
            }
            .encode();
            if s.send_to(&hello, relay).is_ok() {
                result.hellos += 1;
            }
            while let Ok((n, _)) = s.recv_from(&mut buf) {
                result.replies += 1;
                result.worst_growth = result.worst_growth.max(n as i64 - hello.len() as i64);
            }
        }
        // About 20 000 hellos a second: more than a relay's core answers
        // without noticing, less than starves the players' threads here.
        std::thread::sleep(Duration::from_micros(3_000));
    }
    result
}

#[test]
fn a_handshake_flood_admits_nobody_and_live_players_play_on() {
    let server = relay();
    let addr = server.local_addr();
    let start = Instant::now();
    let mut players = [Player::join(addr, 100), Player::join(addr, 200)];
    play(&mut players, start, 2.0, || {});
    assert!(connected(&mut players), "the players never connected");
    let before: RelayServerStats = server.stats();
    let seen_before = players[1].saw_other;

    let stop = Arc::new(AtomicBool::new(false));
    let flooder = {
        let stop = stop.clone();
        std::thread::spawn(move || flood(addr, 64, stop))
    };
    play(&mut players, start, 3.0, || {});
    stop.store(true, Ordering::Relaxed);
    let result = flooder.join().unwrap();
    let after = server.stats();
    eprintln!(
        "flood: {} hellos from 64 ports, {} replies; relay answered {} handshakes",
        result.hellos,
        result.replies,
        after.gate.handshake_replies - before.gate.handshake_replies
    );
    assert!(
        result.hellos > 10_000,
        "the flood was too small: {result:?}"
    );
    assert!(
        result.replies > 0,
        "the relay answered no hello: {result:?}"
    );
    assert!(
        result.worst_growth <= 0,
        "a reply before admission was {} bytes larger than its request",
        result.worst_growth
    );
    // Nobody was admitted, no state was kept for any of them (the
    // challenge is stateless: a cookie, not a pending table).
    assert_eq!(after.clients_joined, 2, "{after:?}");
    assert_eq!(after.relay.clients, 2);
    // The players never noticed: still connected, never dropped, each
    // still showing the other in nearly every frame of the flood.
    assert!(connected(&mut players));
    assert_eq!(players.iter().map(|p| p.disconnects()).sum::<usize>(), 0);
    let frames_in_flood = players[1].saw_other - seen_before;
    assert!(
        frames_in_flood > 120,
        "player 2 showed player 1 in only {frames_in_flood} frames of 3 s"
    );
    server.stop();
}

/// An admitted client speaking the real protocol, with nothing checked
/// on its side: it sends whatever the test gives it.
struct Rogue {
    manager: ConnectionManager<ClientSocket<UdpTransport>, VirtualConnection>,
    relay: SocketAddr,
}

impl Rogue {
    fn admit(relay: SocketAddr) -> Rogue {
        let udp = UdpTransport::bind("127.0.0.1:0".parse().unwrap(), 1 << 20).unwrap();
        let socket = ClientSocket::new(udp, relay, 0xBAD, NetClock::real(), None);
        let mut rogue = Rogue {
            manager: ConnectionManager::new(socket, Config::default()),
            relay,
        };
        let deadline = Instant::now() + Duration::from_secs(3);
        while !matches!(
            rogue.manager.socket().handshake(),
            ClientHandshake::Admitted { .. }
        ) {
            assert!(Instant::now() < deadline, "the rogue was never admitted");
            rogue.pump();
        }
        rogue
    }

    fn pump(&mut self) {
        self.manager.socket_mut().poll_handshake();
        self.manager.manual_poll(Instant::now());
        while self.manager.event_receiver().try_recv().is_ok() {}
        std::thread::sleep(Duration::from_millis(2));
    }

    fn send(&mut self, payload: Vec<u8>) {
        let packet = Packet::reliable_ordered(self.relay, payload, Some(0));
        self.manager.event_sender().send(packet).unwrap();
        self.pump();
    }
}

fn state_for(entity: u64, server_time: f64) -> Vec<u8> {
    Message::OwnedState {
        server_time,
        updates: vec![EntityUpdate {
            entity,
            pose: Pose::new(Vec3::new(50.0, 0.0, 0.0), Quat::IDENTITY),
            velocity: None,
            angular_velocity: None,
            teleport: false,
            age: 0.0,
            sequence: 0,
            epoch: 0,
        }],
    }
    .to_bytes(&Precision::default())
    .unwrap()
}

#[test]
fn hostile_messages_from_an_admitted_client_are_dropped_and_counted() {
    let server = relay();
    let addr = server.local_addr();
    let start = Instant::now();
    let mut players = [Player::join(addr, 100), Player::join(addr, 200)];
    play(&mut players, start, 2.0, || {});
    assert!(connected(&mut players));
    let mut rogue = Rogue::admit(addr);
    let p = Precision::default();
    let before = server.stats();
    let now = server.server_time();

    // State for player 1's entity: not the rogue's to send.
    rogue.send(state_for(100, now));
    // A claim on player 2's entity with an entity the rogue never
    // registered: refused.
    rogue.send(
        Message::Claim {
            mine: 999,
            other: 200,
            epoch: 0,
            seq: 1,
        }
        .to_bytes(&p)
        .unwrap(),
    );
    // Truncated state, an unknown message type, a batch that lies about
    // its length, and a batch inside a batch.
    let full = state_for(300, now);
    rogue.send(full[..full.len() - 3].to_vec());
    rogue.send(vec![250, 1, 2, 3]);
    rogue.send(vec![44, 60, 1, 2]);
    rogue.send(vec![44, 2, 44, 0]);
    // The same command twice (a replay of the message, with a new
    // laminar sequence number): applied once.
    rogue.send(
        Message::Session {
            session: 0xFEED,
            last_global: 0,
        }
        .to_bytes(&p)
        .unwrap(),
    );
    let command = Message::GlobalCommandUp {
        seq: 1,
        data: b"only once".to_vec(),
    }
    .to_bytes(&p)
    .unwrap();
    rogue.send(command.clone());
    rogue.send(command);
    // A datagram larger than any the relay reads, from a plain socket.
    let raw = UdpSocket::bind("127.0.0.1:0").unwrap();
    raw.send_to(&vec![0u8; MAX_DATAGRAM + 100], addr).unwrap();

    play(&mut players, start, 1.5, || rogue.pump());
    let after = server.stats();
    let delta = |f: fn(&RelayServerStats) -> u64| f(&after) - f(&before);
    assert_eq!(delta(|s| s.relay.rejected_not_owner), 1, "{after:?}");
    assert!(delta(|s| s.relay.claims_refused) >= 1, "{after:?}");
    assert_eq!(delta(|s| s.relay.malformed), 4, "{after:?}");
    assert_eq!(delta(|s| s.relay.commands), 1, "{after:?}");
    assert_eq!(delta(|s| s.relay.commands_duplicate), 1, "{after:?}");
    assert_eq!(delta(|s| s.gate.dropped_oversized), 1, "{after:?}");
    // The players: the command once each, player 1's entity where its
    // owner put it (never at the rogue's x = 50), both still connected.
    for p in &players {
        let got: Vec<&Vec<u8>> = p.messages.iter().filter(|m| *m == b"only once").collect();
        assert_eq!(got.len(), 1, "{:?}", p.messages);
    }
    let mut shown = None;
    players[1]
        .client
        .tick_with(start.elapsed().as_secs_f64(), |_, s| {
            if s.entity == 100 {
                shown = Some(s.pose.position);
            }
        })
        .unwrap();
    let shown = shown.expect("player 1's entity is gone");
    assert!(shown.length() < 3.0, "the rogue moved it to {shown}");
    assert!(connected(&mut players));
    server.stop();
}

/// Records (level, target, message) the log sink passed on.
static LOGGED: std::sync::Mutex<Vec<(u32, String, String)>> = std::sync::Mutex::new(Vec::new());

unsafe extern "C" fn keep_log(
    _user: *mut std::ffi::c_void,
    level: u32,
    target: *const std::ffi::c_char,
    message: *const std::ffi::c_char,
) {
    let text = |p| {
        unsafe { std::ffi::CStr::from_ptr(p) }
            .to_string_lossy()
            .into_owned()
    };
    LOGGED
        .lock()
        .unwrap()
        .push((level, text(target), text(message)));
}

#[test]
fn laminar_errors_about_garbage_from_an_admitted_address_reach_the_log_sink() {
    use laminar::DatagramSocket;
    use netsync::ffi::log_sink::*;
    assert_eq!(
        netsync_set_log_callback(Some(keep_log), std::ptr::null_mut(), NETSYNC_LOG_WARN),
        netsync::ffi::result::NetsyncResult::NETSYNC_OK
    );
    let server = relay();
    let addr = server.local_addr();
    let mut rogue = Rogue::admit(addr);
    // Past the handshake the relay hands datagrams from this address to
    // laminar: bytes that are no laminar packet make laminar log an error.
    let before = server.stats();
    rogue
        .manager
        .socket_mut()
        .send_packet(&addr, &[0xFF, 0xFF, 0x00])
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(3);
    let from_laminar = || {
        LOGGED
            .lock()
            .unwrap()
            .iter()
            .find(|(_, target, _)| target.starts_with("laminar"))
            .cloned()
    };
    while from_laminar().is_none() && Instant::now() < deadline {
        rogue.pump();
    }
    let after = server.stats();
    netsync_set_log_callback(None, std::ptr::null_mut(), NETSYNC_LOG_OFF);
    let (level, target, message) = from_laminar().expect("laminar's error reached the sink");
    assert_eq!(level, NETSYNC_LOG_ERROR, "{target}: {message}");
    assert!(message.contains("incomming packet"), "{target}: {message}");
    // And nothing else happened: no new client, the rogue still admitted.
    assert_eq!(after.relay.clients, before.relay.clients, "{after:?}");
    server.stop();
}

/// A client that goes silent (no goodbye: its process hung or its
/// network went) is timed out by the relay after `idle_timeout`; the
/// entity it controlled is removed for everyone else, who are told why.
#[test]
fn a_silent_client_is_timed_out_and_the_others_are_told() {
    use netsync::client::Removal;
    let server = RelayServer::start(RelayServerConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        idle_timeout: 1.0,
        ..Default::default()
    })
    .unwrap();
    let addr = server.local_addr();
    let start = Instant::now();
    let mut watcher = Player::join(addr, 100);
    let mut rogue = Rogue::admit(addr);
    let p = Precision::default();
    rogue.send(
        Message::Register {
            entity: 700,
            kind: netsync::wire::message::entity_kind::CONTROLLED,
        }
        .to_bytes(&p)
        .unwrap(),
    );
    // The silent one's entity reaches the watcher while it still talks.
    let appeared = |w: &Player| {
        w.events
            .iter()
            .any(|(_, e)| matches!(e, ClientEvent::EntityAppeared { entity: 700 }))
    };
    let removed = |w: &Player| {
        w.events.iter().find_map(|(at, e)| match e {
            ClientEvent::EntityRemoved {
                entity: 700,
                reason,
            } => Some((*reason, *at)),
            _ => None,
        })
    };
    let mut silent_since = None;
    while start.elapsed() < Duration::from_secs(8) && removed(&watcher).is_none() {
        if silent_since.is_none() {
            rogue.send(state_for(700, server.server_time()));
            if appeared(&watcher) {
                // From now on the rogue sends nothing, not even acks.
                silent_since = Some(Instant::now());
            }
        }
        watcher.frame(start.elapsed().as_secs_f64(), 700);
        std::thread::sleep(Duration::from_millis(16));
    }
    assert!(appeared(&watcher), "the entity never reached the watcher");
    let (reason, at) = removed(&watcher).expect("the watcher was never told");
    assert_eq!(reason, Removal::OwnerLeft);
    let after = at - silent_since.unwrap();
    assert!(
        after >= Duration::from_millis(900) && after < Duration::from_secs(4),
        "removed {after:?} after the client went silent (idle timeout 1 s)"
    );
    // The relay publishes its stats every 50 ms: the told watcher may
    // be ahead of them.
    let published = Instant::now();
    while server.stats().relay.clients != 1 && published.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(server.stats().relay.clients, 1, "only the watcher is left");
    assert_eq!(watcher.disconnects(), 0);
    server.stop();
}
