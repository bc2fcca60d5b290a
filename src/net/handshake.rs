//! A stateless challenge handshake in front of laminar (sans-IO).
//!
//! ```text
//! client                                   relay
//!   Hello {version, nonce, padding}  --->    (no state kept)
//!                                    <---  Challenge {nonce, cookie}
//!   Response {nonce, cookie, pad}    --->    cookie = keyed hash(addr, nonce, window): admit
//!                                    <---  Accepted {nonce, client id}
//! ```
//!
//! A spoofed source never sees the cookie, so it can never be admitted and
//! creates no state and no event. Requests are padded so that every reply
//! before admission is smaller than the request that caused it (no
//! amplification). A wrong protocol version gets a named refusal.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::net::SocketAddr;

use crate::wire::{DecodeError, Reader, Writer};

/// First bytes of every handshake datagram (laminar packets never start so).
pub const MAGIC: [u8; 4] = *b"NSYN";
/// Protocol version this build speaks.
pub const PROTOCOL_VERSION: u16 = 4;
/// Client requests are padded to this size.
pub const REQUEST_SIZE: usize = 64;
/// Cookies are valid for the window they were made in and the next one.
pub const COOKIE_WINDOW: f64 = 10.0;

mod kind {
    pub const HELLO: u8 = 1;
    pub const CHALLENGE: u8 = 2;
    pub const RESPONSE: u8 = 3;
    pub const ACCEPTED: u8 = 4;
    pub const REFUSED: u8 = 5;
}

/// Why the relay refused a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusalReason {
    /// The client speaks another protocol version (the relay's is attached).
    VersionMismatch { relay_version: u16 },
    /// The relay has no room for another client.
    Full,
}

impl RefusalReason {
    pub fn describe(&self) -> String {
        match self {
            RefusalReason::VersionMismatch { relay_version } => format!(
                "protocol version mismatch: this client speaks {PROTOCOL_VERSION}, the relay {relay_version}"
            ),
            RefusalReason::Full => "the relay is full".to_string(),
        }
    }
}

/// A handshake datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handshake {
    Hello {
        version: u16,
        nonce: u64,
    },
    Challenge {
        nonce: u64,
        cookie: u64,
    },
    Response {
        version: u16,
        nonce: u64,
        cookie: u64,
    },
    Accepted {
        nonce: u64,
        client_id: u32,
    },
    Refused {
        nonce: u64,
        reason: RefusalReason,
    },
}

/// True when `datagram` is a handshake datagram (by its magic).
pub fn is_handshake(datagram: &[u8]) -> bool {
    datagram.len() >= 4 && datagram[..4] == MAGIC
}

impl Handshake {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.bytes(&MAGIC);
        match *self {
            Handshake::Hello { version, nonce } => {
                w.u8(kind::HELLO);
                w.u16(version);
                w.u64(nonce);
            }
            Handshake::Challenge { nonce, cookie } => {
                w.u8(kind::CHALLENGE);
                w.u64(nonce);
                w.u64(cookie);
            }
            Handshake::Response {
                version,
                nonce,
                cookie,
            } => {
                w.u8(kind::RESPONSE);
                w.u16(version);
                w.u64(nonce);
                w.u64(cookie);
            }
            Handshake::Accepted { nonce, client_id } => {
                w.u8(kind::ACCEPTED);
                w.u64(nonce);
                w.u32(client_id);
            }
            Handshake::Refused { nonce, reason } => {
                w.u8(kind::REFUSED);
                w.u64(nonce);
                match reason {
                    RefusalReason::VersionMismatch { relay_version } => {
                        w.u8(1);
                        w.u16(relay_version);
                    }
                    RefusalReason::Full => {
                        w.u8(2);
                        w.u16(PROTOCOL_VERSION);
                    }
                }
            }
        }
        if matches!(self, Handshake::Hello { .. } | Handshake::Response { .. }) {
            w.bytes.resize(REQUEST_SIZE, 0);
        }
        w.bytes
    }

    pub fn decode(datagram: &[u8]) -> Result<Handshake, DecodeError> {
        if !is_handshake(datagram) {
            return Err(DecodeError::Invalid {
                field: "magic",
                reason: "not a handshake datagram",
            });
        }
        let mut r = Reader::new(&datagram[4..]);
        let kind = r.u8("handshake type")?;
        let request = matches!(kind, kind::HELLO | kind::RESPONSE);
        if request && datagram.len() != REQUEST_SIZE {
            return Err(DecodeError::Invalid {
                field: "request",
                reason: "requests must be padded to REQUEST_SIZE",
            });
        }
        let message = match kind {
            kind::HELLO => Handshake::Hello {
                version: r.u16("version")?,
                nonce: r.u64("nonce")?,
            },
            kind::CHALLENGE => Handshake::Challenge {
                nonce: r.u64("nonce")?,
                cookie: r.u64("cookie")?,
            },
            kind::RESPONSE => Handshake::Response {
                version: r.u16("version")?,
                nonce: r.u64("nonce")?,
                cookie: r.u64("cookie")?,
            },
            kind::ACCEPTED => Handshake::Accepted {
                nonce: r.u64("nonce")?,
                client_id: r.u32("client id")?,
            },
            kind::REFUSED => {
                let nonce = r.u64("nonce")?;
                let code = r.u8("reason")?;
                let relay_version = r.u16("relay version")?;
                let reason = match code {
                    1 => RefusalReason::VersionMismatch { relay_version },
                    2 => RefusalReason::Full,
                    _ => {
                        return Err(DecodeError::Invalid {
                            field: "reason",
                            reason: "unknown refusal reason",
                        })
                    }
                };
                Handshake::Refused { nonce, reason }
            }
            _ => {
                return Err(DecodeError::Invalid {
                    field: "handshake type",
                    reason: "unknown handshake type",
                })
            }
        };
        if !request {
            r.finish()?;
        }
        Ok(message)
    }
}

/// An admitted client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admission {
    pub client_id: u32,
    pub nonce: u64,
}

/// What the relay does with a handshake datagram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GateOutcome {
    /// Send this reply (never larger than the request).
    Reply(Vec<u8>),
    /// Newly admitted: send the reply; the address may now reach laminar.
    Admitted {
        reply: Vec<u8>,
        admission: Admission,
    },
    /// Drop silently (malformed, bad cookie, not a request).
    Drop(&'static str),
}

/// The relay's side: stateless until a valid response admits an address.
#[derive(Debug)]
pub struct Gatekeeper {
    key: RandomState,
    admitted: HashMap<SocketAddr, Admission>,
    next_client_id: u32,
    max_clients: usize,
}

impl Gatekeeper {
    pub fn new(max_clients: usize) -> Self {
        Gatekeeper {
            key: RandomState::new(),
            admitted: HashMap::new(),
            next_client_id: 1,
            max_clients,
        }
    }

    fn cookie(&self, from: SocketAddr, nonce: u64, window: i64) -> u64 {
        let mut h = self.key.build_hasher();
        match from {
            SocketAddr::V4(a) => {
                h.write(&a.ip().octets());
                h.write_u16(a.port());
            }
            SocketAddr::V6(a) => {
                h.write(&a.ip().octets());
                h.write_u16(a.port());
            }
        }
        h.write_u64(nonce);
        h.write_i64(window);
        h.finish()
    }

    pub fn is_admitted(&self, addr: &SocketAddr) -> bool {
        self.admitted.contains_key(addr)
    }

    pub fn admission(&self, addr: &SocketAddr) -> Option<Admission> {
        self.admitted.get(addr).copied()
    }

    /// Forgets an address (disconnect, timeout).
    pub fn evict(&mut self, addr: &SocketAddr) -> Option<Admission> {
        self.admitted.remove(addr)
    }

    pub fn admitted_count(&self) -> usize {
        self.admitted.len()
    }

    /// Handles one handshake datagram from `from` at relay time `now`.
    pub fn handle(&mut self, from: SocketAddr, datagram: &[u8], now: f64) -> GateOutcome {
        let outcome = self.decide(from, datagram, now);
        // Belt and braces: no reply may exceed the request that caused it.
        match &outcome {
            GateOutcome::Reply(r) | GateOutcome::Admitted { reply: r, .. }
                if r.len() > datagram.len() =>
            {
                GateOutcome::Drop("reply would exceed the request")
            }
            _ => outcome,
        }
    }

    fn decide(&mut self, from: SocketAddr, datagram: &[u8], now: f64) -> GateOutcome {
        let Ok(message) = Handshake::decode(datagram) else {
            return GateOutcome::Drop("malformed handshake");
        };
        let window = (now / COOKIE_WINDOW).floor() as i64;
        match message {
            Handshake::Hello { version, nonce } => {
                if version != PROTOCOL_VERSION {
                    return GateOutcome::Reply(refusal(nonce, version_refusal()));
                }
                let cookie = self.cookie(from, nonce, window);
                GateOutcome::Reply(Handshake::Challenge { nonce, cookie }.encode())
            }
            Handshake::Response {
                version,
                nonce,
                cookie,
            } => {
                if version != PROTOCOL_VERSION {
                    return GateOutcome::Reply(refusal(nonce, version_refusal()));
                }
                let valid = cookie == self.cookie(from, nonce, window)
                    || cookie == self.cookie(from, nonce, window - 1);
                if !valid {
                    return GateOutcome::Drop("cookie does not match this address");
                }
                if let Some(existing) = self.admitted.get(&from) {
                    if existing.nonce == nonce {
                        // A repeated response (our Accepted was lost): same answer.
                        let client_id = existing.client_id;
                        return GateOutcome::Reply(
                            Handshake::Accepted { nonce, client_id }.encode(),
                        );
                    }
                }
                if self.admitted.len() >= self.max_clients && !self.admitted.contains_key(&from) {
                    return GateOutcome::Reply(refusal(nonce, RefusalReason::Full));
                }
                let admission = Admission {
                    client_id: self.next_client_id,
                    nonce,
                };
                self.next_client_id = self.next_client_id.wrapping_add(1).max(1);
                self.admitted.insert(from, admission);
                GateOutcome::Admitted {
                    reply: Handshake::Accepted {
                        nonce,
                        client_id: admission.client_id,
                    }
                    .encode(),
                    admission,
                }
            }
            _ => GateOutcome::Drop("not a request"),
        }
    }
}

fn version_refusal() -> RefusalReason {
    RefusalReason::VersionMismatch {
        relay_version: PROTOCOL_VERSION,
    }
}

fn refusal(nonce: u64, reason: RefusalReason) -> Vec<u8> {
    Handshake::Refused { nonce, reason }.encode()
}

/// The client's side of the handshake.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientHandshake {
    /// Sending hellos until a challenge comes back.
    Hello {
        nonce: u64,
        next_send: f64,
    },
    /// Sending the response until accepted.
    Responding {
        nonce: u64,
        cookie: u64,
        next_send: f64,
    },
    Admitted {
        client_id: u32,
    },
    Refused(RefusalReason),
}

/// Interval between handshake retries.
pub const RETRY_INTERVAL: f64 = 0.25;

impl ClientHandshake {
    pub fn start(nonce: u64) -> Self {
        ClientHandshake::Hello {
            nonce,
            next_send: f64::NEG_INFINITY,
        }
    }

    /// The datagram to send now, if any (retries every `RETRY_INTERVAL`).
    pub fn poll(&mut self, now: f64) -> Option<Vec<u8>> {
        self.poll_as(now, PROTOCOL_VERSION)
    }

    /// As [`Self::poll`], claiming `version` (tests of refusal use it).
    pub fn poll_as(&mut self, now: f64, version: u16) -> Option<Vec<u8>> {
        match self {
            ClientHandshake::Hello { nonce, next_send } if now >= *next_send => {
                *next_send = now + RETRY_INTERVAL;
                Some(
                    Handshake::Hello {
                        version,
                        nonce: *nonce,
                    }
                    .encode(),
                )
            }
            ClientHandshake::Responding {
                nonce,
                cookie,
                next_send,
            } if now >= *next_send => {
                *next_send = now + RETRY_INTERVAL;
                Some(
                    Handshake::Response {
                        version,
                        nonce: *nonce,
                        cookie: *cookie,
                    }
                    .encode(),
                )
            }
            _ => None,
        }
    }

    /// Takes a datagram from the relay; ignores what does not belong to
    /// this attempt (wrong nonce, wrong stage).
    pub fn receive(&mut self, datagram: &[u8], now: f64) {
        let Ok(message) = Handshake::decode(datagram) else {
            return;
        };
        let my_nonce = match self {
            ClientHandshake::Hello { nonce, .. } | ClientHandshake::Responding { nonce, .. } => {
                *nonce
            }
            _ => return,
        };
        match message {
            Handshake::Challenge { nonce, cookie } if nonce == my_nonce => {
                if matches!(self, ClientHandshake::Hello { .. }) {
                    *self = ClientHandshake::Responding {
                        nonce,
                        cookie,
                        next_send: now,
                    };
                }
            }
            Handshake::Accepted { nonce, client_id } if nonce == my_nonce => {
                if matches!(self, ClientHandshake::Responding { .. }) {
                    *self = ClientHandshake::Admitted { client_id };
                }
            }
            Handshake::Refused { nonce, reason } if nonce == my_nonce => {
                *self = ClientHandshake::Refused(reason);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    /// Runs the handshake between one client and a gatekeeper.
    fn connect(gate: &mut Gatekeeper, from: SocketAddr, nonce: u64) -> ClientHandshake {
        let mut client = ClientHandshake::start(nonce);
        for step in 0..10 {
            let now = step as f64 * 0.3;
            if let Some(request) = client.poll(now) {
                match gate.handle(from, &request, now) {
                    GateOutcome::Reply(r) | GateOutcome::Admitted { reply: r, .. } => {
                        assert!(r.len() <= request.len());
                        client.receive(&r, now);
                    }
                    GateOutcome::Drop(why) => panic!("dropped: {why}"),
                }
            }
        }
        client
    }

    #[test]
    fn a_client_is_admitted_with_an_id() {
        let mut gate = Gatekeeper::new(8);
        let a = connect(&mut gate, addr(1000), 11);
        let b = connect(&mut gate, addr(1001), 12);
        assert_eq!(a, ClientHandshake::Admitted { client_id: 1 });
        assert_eq!(b, ClientHandshake::Admitted { client_id: 2 });
        assert!(gate.is_admitted(&addr(1000)));
    }

    #[test]
    fn a_spoofed_source_cannot_complete_the_handshake() {
        let mut gate = Gatekeeper::new(8);
        // The attacker sends a hello "from" the victim's address and never
        // sees the challenge; guessing the cookie fails.
        let hello = Handshake::Hello {
            version: PROTOCOL_VERSION,
            nonce: 5,
        }
        .encode();
        assert!(matches!(
            gate.handle(addr(2000), &hello, 0.0),
            GateOutcome::Reply(_)
        ));
        for guess in 0..1000u64 {
            let response = Handshake::Response {
                version: PROTOCOL_VERSION,
                nonce: 5,
                cookie: guess,
            }
            .encode();
            assert!(matches!(
                gate.handle(addr(2000), &response, 0.0),
                GateOutcome::Drop(_)
            ));
        }
        // A real cookie from one address does not work from another.
        let mut client = ClientHandshake::start(9);
        let hello = client.poll(0.0).unwrap();
        let GateOutcome::Reply(challenge) = gate.handle(addr(3000), &hello, 0.0) else {
            panic!()
        };
        client.receive(&challenge, 0.0);
        let response = client.poll(0.0).unwrap();
        assert!(matches!(
            gate.handle(addr(3001), &response, 0.0),
            GateOutcome::Drop(_)
        ));
        assert_eq!(gate.admitted_count(), 0);
    }

    #[test]
    fn wrong_version_is_refused_by_name() {
        let mut gate = Gatekeeper::new(8);
        let mut client = ClientHandshake::start(1);
        let hello = client.poll_as(0.0, 99).unwrap();
        let GateOutcome::Reply(reply) = gate.handle(addr(1), &hello, 0.0) else {
            panic!()
        };
        client.receive(&reply, 0.0);
        let ClientHandshake::Refused(reason) = client else {
            panic!("{client:?}")
        };
        assert_eq!(
            reason,
            RefusalReason::VersionMismatch {
                relay_version: PROTOCOL_VERSION
            }
        );
        assert!(reason.describe().contains("version"));
    }

    #[test]
    fn full_relay_refuses_and_cookies_expire() {
        let mut gate = Gatekeeper::new(1);
        connect(&mut gate, addr(1), 1);
        let c = connect(&mut gate, addr(2), 2);
        assert_eq!(c, ClientHandshake::Refused(RefusalReason::Full));
        // A cookie two windows old is refused.
        let mut gate = Gatekeeper::new(4);
        let mut client = ClientHandshake::start(3);
        let hello = client.poll(0.0).unwrap();
        let GateOutcome::Reply(challenge) = gate.handle(addr(5), &hello, 0.0) else {
            panic!()
        };
        client.receive(&challenge, 0.0);
        let response = client.poll(0.0).unwrap();
        let late = 2.5 * COOKIE_WINDOW;
        assert!(matches!(
            gate.handle(addr(5), &response, late),
            GateOutcome::Drop(_)
        ));
    }

    #[test]
    fn unpadded_requests_and_garbage_are_dropped() {
        let mut gate = Gatekeeper::new(4);
        let mut short = Handshake::Hello {
            version: PROTOCOL_VERSION,
            nonce: 1,
        }
        .encode();
        short.truncate(20);
        assert!(matches!(
            gate.handle(addr(1), &short, 0.0),
            GateOutcome::Drop(_)
        ));
        let mut rng = fastrand::Rng::with_seed(4);
        for _ in 0..20_000 {
            let len = rng.usize(0..80);
            let mut bytes: Vec<u8> = (0..len).map(|_| rng.u8(..)).collect();
            if bytes.len() >= 5 {
                bytes[..4].copy_from_slice(&MAGIC);
            }
            if let GateOutcome::Reply(r) = gate.handle(addr(2), &bytes, 0.0) {
                assert!(r.len() <= bytes.len());
            }
        }
        assert_eq!(gate.admitted_count(), 0);
    }
}
