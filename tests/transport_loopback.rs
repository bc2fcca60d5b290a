//! The transport on real UDP sockets on loopback: handshake, then laminar
//! carries reliable messages both ways; spoofed and unadmitted traffic
//! creates no connection and no event.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use laminar::{Config, ConnectionManager, Packet, SocketEvent, VirtualConnection};
use netsync::net::clock::NetClock;
use netsync::net::handshake::{ClientHandshake, Handshake, PROTOCOL_VERSION};
use netsync::net::laminar_socket::{ClientSocket, RelaySocket};
use netsync::net::raw_socket::{RawSocket, UdpTransport};

type Relay = ConnectionManager<RelaySocket<UdpTransport>, VirtualConnection>;
type Client = ConnectionManager<ClientSocket<UdpTransport>, VirtualConnection>;

fn udp() -> UdpTransport {
    UdpTransport::bind("127.0.0.1:0".parse().unwrap(), 1 << 20).unwrap()
}

fn relay() -> (Relay, SocketAddr) {
    let socket = RelaySocket::new(udp(), 16, NetClock::real(), Default::default(), None);
    let addr = laminar::DatagramSocket::local_addr(&socket).unwrap();
    (ConnectionManager::new(socket, Config::default()), addr)
}

fn client(relay: SocketAddr, nonce: u64) -> Client {
    ConnectionManager::new(
        ClientSocket::new(udp(), relay, nonce, NetClock::real(), None),
        Config::default(),
    )
}

/// Polls both sides until `done` or two seconds pass.
fn pump(
    relay: &mut Relay,
    clients: &mut [&mut Client],
    mut done: impl FnMut(&mut Relay, &mut [&mut Client]) -> bool,
) -> bool {
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        let now = Instant::now();
        relay.manual_poll(now);
        for c in clients.iter_mut() {
            c.socket_mut().poll_handshake();
            c.manual_poll(now);
        }
        if done(relay, clients) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

#[test]
fn handshake_then_reliable_messages_both_ways() {
    let (mut relay, relay_addr) = relay();
    let mut a = client(relay_addr, 1);
    let mut b = client(relay_addr, 2);
    let admitted = pump(&mut relay, &mut [&mut a, &mut b], |_, cs| {
        cs.iter()
            .all(|c| matches!(c.socket().handshake(), ClientHandshake::Admitted { .. }))
    });
    assert!(admitted, "handshake did not complete");
    let ids: Vec<_> = relay
        .socket_mut()
        .take_admitted()
        .iter()
        .map(|(_, a)| a.client_id)
        .collect();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);

    a.event_sender()
        .send(Packet::reliable_ordered(
            relay_addr,
            b"from a".to_vec(),
            None,
        ))
        .unwrap();
    let mut a_addr = None;
    let got = pump(&mut relay, &mut [&mut a, &mut b], |r, _| {
        while let Ok(event) = r.event_receiver().try_recv() {
            if let SocketEvent::Packet(p) = event {
                assert_eq!(p.payload(), b"from a");
                a_addr = Some(p.addr());
                return true;
            }
        }
        false
    });
    assert!(got, "relay never got the packet");
    relay
        .event_sender()
        .send(Packet::reliable_ordered(
            a_addr.unwrap(),
            b"to a".to_vec(),
            None,
        ))
        .unwrap();
    let back = pump(&mut relay, &mut [&mut a, &mut b], |_, cs| {
        while let Ok(event) = cs[0].event_receiver().try_recv() {
            if let SocketEvent::Packet(p) = event {
                return p.payload() == b"to a";
            }
        }
        false
    });
    assert!(back, "client never got the reply");
}

#[test]
fn unadmitted_and_spoofed_traffic_creates_nothing() {
    let (mut relay, relay_addr) = relay();
    let mut raw = udp();
    // laminar-looking garbage and a hello that never completes.
    for i in 0..50u8 {
        raw.send(relay_addr, &[i; 40]).unwrap();
    }
    let hello = Handshake::Hello {
        version: PROTOCOL_VERSION,
        nonce: 7,
        token: None,
    }
    .encode();
    raw.send(relay_addr, &hello).unwrap();
    let forged = Handshake::Response {
        version: PROTOCOL_VERSION,
        nonce: 7,
        cookie: 12345,
        token: None,
    }
    .encode();
    raw.send(relay_addr, &forged).unwrap();
    let mut events = 0;
    pump(&mut relay, &mut [], |r, _| {
        while r.event_receiver().try_recv().is_ok() {
            events += 1;
        }
        r.socket().stats().dropped_unadmitted >= 50
    });
    let stats = relay.socket().stats();
    assert_eq!(events, 0, "an event escaped the gate");
    assert_eq!(stats.dropped_unadmitted, 50);
    assert_eq!(stats.dropped_handshakes, 1, "the forged response");
    assert_eq!(relay.socket().gate().admitted_count(), 0);
    // The hello was answered with a challenge no larger than it.
    let mut buf = [0u8; 1500];
    std::thread::sleep(Duration::from_millis(20));
    let (n, _) = raw.recv(&mut buf).unwrap();
    assert!(n <= hello.len());
}

#[test]
fn a_client_of_another_version_is_refused_with_its_reason() {
    let (mut relay, relay_addr) = relay();
    let mut raw = udp();
    let mut handshake = ClientHandshake::start(3);
    let hello = handshake.poll_as(0.0, PROTOCOL_VERSION + 1).unwrap();
    raw.send(relay_addr, &hello).unwrap();
    let mut buf = [0u8; 1500];
    let refused = pump(&mut relay, &mut [], |_, _| {
        if let Ok((n, _)) = raw.recv(&mut buf) {
            handshake.receive(&buf[..n], 0.0);
        }
        matches!(handshake, ClientHandshake::Refused(_))
    });
    assert!(refused);
    let ClientHandshake::Refused(reason) = handshake else {
        unreachable!()
    };
    assert!(
        reason.describe().contains("version mismatch"),
        "{}",
        reason.describe()
    );
}
