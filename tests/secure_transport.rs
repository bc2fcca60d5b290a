//! Secure mode at the socket layer, on real UDP on loopback: only a
//! client with a valid token and its key is admitted; after that every
//! datagram is encrypted, and a replayed, altered or unencrypted one from
//! the admitted address never reaches laminar, and is counted.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use laminar::{Config, ConnectionManager, Packet, SocketEvent, VirtualConnection};
use netsync::net::clock::NetClock;
use netsync::net::handshake::{ClientHandshake, GateSecurity, RefusalReason};
use netsync::net::laminar_socket::{ClientSocket, RelaySocket};
use netsync::net::raw_socket::{RawSocket, UdpTransport};
use netsync::net::secure::token::unix_now;
use netsync::net::secure::{issue_token, ConnectToken, RelaySecret, SessionKeys};

/// A UDP socket that keeps a copy of every datagram it sends.
#[derive(Debug)]
struct Tap {
    udp: UdpTransport,
    sent: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl RawSocket for Tap {
    fn send(&mut self, to: SocketAddr, payload: &[u8]) -> std::io::Result<usize> {
        self.sent.lock().unwrap().push(payload.to_vec());
        self.udp.send(to, payload)
    }
    fn recv(&mut self, buffer: &mut [u8]) -> std::io::Result<(usize, SocketAddr)> {
        self.udp.recv(buffer)
    }
    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.udp.local_addr()
    }
}

type Relay = ConnectionManager<RelaySocket<UdpTransport>, VirtualConnection>;
type Client = ConnectionManager<ClientSocket<Tap>, VirtualConnection>;

fn udp() -> UdpTransport {
    UdpTransport::bind("127.0.0.1:0".parse().unwrap(), 1 << 20).unwrap()
}

fn secure_relay(secret: RelaySecret) -> (Relay, SocketAddr) {
    let udp = udp();
    let addr = udp.local_addr().unwrap();
    let security = GateSecurity::new(secret, addr);
    let socket = RelaySocket::new(
        udp,
        16,
        NetClock::real(),
        Default::default(),
        Some(security),
    );
    (ConnectionManager::new(socket, Config::default()), addr)
}

fn client(
    relay: SocketAddr,
    nonce: u64,
    token: Option<ConnectToken>,
) -> (Client, Arc<Mutex<Vec<Vec<u8>>>>) {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let tap = Tap {
        udp: udp(),
        sent: sent.clone(),
    };
    let socket = ClientSocket::new(tap, relay, nonce, NetClock::real(), token);
    (ConnectionManager::new(socket, Config::default()), sent)
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

fn admitted(c: &Client) -> bool {
    matches!(c.socket().handshake(), ClientHandshake::Admitted { .. })
}

fn payloads(relay: &mut Relay) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    while let Ok(event) = relay.event_receiver().try_recv() {
        if let SocketEvent::Packet(p) = event {
            got.push(p.payload().to_vec());
        }
    }
    got
}

#[test]
fn only_authentic_fresh_datagrams_reach_laminar() {
    let secret = RelaySecret::generate().unwrap();
    let (mut relay, relay_addr) = secure_relay(secret);
    let token = issue_token(&secret, 77, relay_addr, unix_now() + 60).unwrap();
    let (mut a, sent) = client(relay_addr, 1, Some(token));
    assert!(pump(&mut relay, &mut [&mut a], |_, cs| admitted(cs[0])));
    let admissions = relay.socket_mut().take_admitted();
    assert_eq!(admissions.len(), 1);
    assert_eq!(admissions[0].1.client_id, 77, "the token's client id");

    sent.lock().unwrap().clear();
    a.event_sender()
        .send(Packet::unreliable(relay_addr, b"secret move".to_vec()))
        .unwrap();
    let mut got = Vec::new();
    assert!(pump(&mut relay, &mut [&mut a], |r, _| {
        got.extend(payloads(r));
        !got.is_empty()
    }));
    assert_eq!(got, vec![b"secret move".to_vec()]);
    // On the wire it was not in the clear.
    let wire: Vec<Vec<u8>> = sent.lock().unwrap().clone();
    let sealed = wire
        .iter()
        .find(|d| d.len() > 11)
        .expect("the datagram was sent")
        .clone();
    assert!(!sealed.windows(11).any(|w| w == b"secret move"));

    // From the admitted address itself: the same datagram again, an
    // altered copy (its sequence number is spent: refused before it is
    // even decrypted), and laminar's plaintext all go nowhere.
    let inner = a.socket_mut().inner_mut();
    inner.udp.send(relay_addr, &sealed).unwrap();
    let mut altered = sealed.clone();
    let last = altered.len() - 1;
    altered[last] ^= 1;
    inner.udp.send(relay_addr, &altered).unwrap();
    inner.udp.send(relay_addr, b"plain laminar bytes").unwrap();
    let settled = pump(&mut relay, &mut [&mut a], |r, _| {
        got.extend(payloads(r));
        let s = r.socket().stats();
        s.dropped_replayed >= 2 && s.dropped_forged >= 1
    });
    let stats = relay.socket().stats();
    assert!(settled, "{stats:?}");
    assert_eq!(got.len(), 1, "nothing more reached laminar: {got:?}");
}

#[test]
fn a_captured_token_without_its_key_admits_nobody() {
    let secret = RelaySecret::generate().unwrap();
    let (mut relay, relay_addr) = secure_relay(secret);
    let token = issue_token(&secret, 5, relay_addr, unix_now() + 60).unwrap();
    // The attacker saw the presented part on the wire, not the keys.
    let stolen = ConnectToken {
        keys: SessionKeys {
            client_to_relay: [9; 32],
            relay_to_client: [9; 32],
        },
        ..token
    };
    let (mut thief, _) = client(relay_addr, 2, Some(stolen));
    assert!(!pump(&mut relay, &mut [&mut thief], |_, cs| admitted(
        cs[0]
    )));
    assert!(relay.socket().stats().dropped_bad_token > 0);
    assert!(relay.socket_mut().take_admitted().is_empty());
    // The owner still gets in; then the same token from another address
    // is refused while the first connection lives.
    let (mut owner, _) = client(relay_addr, 3, Some(token));
    assert!(pump(&mut relay, &mut [&mut owner], |_, cs| admitted(cs[0])));
    let (mut again, _) = client(relay_addr, 4, Some(token));
    assert!(pump(&mut relay, &mut [&mut again], |_, cs| matches!(
        cs[0].socket().handshake(),
        ClientHandshake::Refused(RefusalReason::TokenInUse)
    )));
}

#[test]
fn modes_and_expiry_are_refused_by_name() {
    let secret = RelaySecret::generate().unwrap();
    let (mut relay, relay_addr) = secure_relay(secret);
    let refused = |relay: &mut Relay, c: &mut Client, want: RefusalReason| {
        pump(relay, &mut [c], |_, cs| {
            cs[0].socket().handshake() == &ClientHandshake::Refused(want)
        })
    };
    let (mut plain, _) = client(relay_addr, 1, None);
    assert!(refused(
        &mut relay,
        &mut plain,
        RefusalReason::TokenRequired
    ));
    let old = issue_token(&secret, 6, relay_addr, unix_now() - 1).unwrap();
    let (mut late, _) = client(relay_addr, 2, Some(old));
    assert!(refused(&mut relay, &mut late, RefusalReason::TokenExpired));
    // A token for this address from another secret: dropped, no answer.
    let other = issue_token(&RelaySecret([1; 32]), 6, relay_addr, unix_now() + 60).unwrap();
    let (mut forged, _) = client(relay_addr, 3, Some(other));
    assert!(!pump(&mut relay, &mut [&mut forged], |_, cs| !matches!(
        cs[0].socket().handshake(),
        ClientHandshake::Hello { .. }
    )));
    assert!(relay.socket().stats().dropped_bad_token > 0);

    // A plain relay refuses a token by name.
    let udp = udp();
    let plain_addr = udp.local_addr().unwrap();
    let socket = RelaySocket::new(udp, 16, NetClock::real(), Default::default(), None);
    let mut plain_relay: Relay = ConnectionManager::new(socket, Config::default());
    let token = issue_token(&secret, 6, plain_addr, unix_now() + 60).unwrap();
    let (mut secure_client, _) = client(plain_addr, 4, Some(token));
    assert!(refused(
        &mut plain_relay,
        &mut secure_client,
        RefusalReason::NotSecure
    ));
}
