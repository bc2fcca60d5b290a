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
//!
//! In secure mode (a relay started with a secret, docs/security.md) both
//! requests carry the sealed part of a connect token, and the response
//! also a proof that the client holds the token's key: a captured token
//! admits nobody else. The client id is the token's.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::net::SocketAddr;

use super::secure::session::handshake_proof;
use super::secure::token::{unix_now, PRESENTED_LEN};
use super::secure::{ConnectToken, PresentedToken, RelaySecret, SessionKeys, TokenError};
use crate::wire::{DecodeError, Reader, Writer};

/// First bytes of every handshake datagram (laminar packets never start so).
pub const MAGIC: [u8; 4] = *b"NSYN";
/// Protocol version this build speaks.
pub const PROTOCOL_VERSION: u16 = 6;
/// Client requests are padded to this size.
pub const REQUEST_SIZE: usize = 64;
/// Requests that carry a connect token (secure mode) are padded to this.
pub const SECURE_REQUEST_SIZE: usize = 256;
const _: () = assert!(4 + 1 + 2 + 8 + 8 + 1 + PRESENTED_LEN + 16 <= SECURE_REQUEST_SIZE);
/// Why a secure handshake datagram was dropped without an answer (the
/// token did not open, or the proof did not match).
pub const DROP_BAD_TOKEN: &str = "connect token or proof does not verify";
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
    /// The relay runs in secure mode: connect with a token.
    TokenRequired,
    /// The client presented a token to a relay in plain mode.
    NotSecure,
    /// The token's expiry time has passed: ask the backend for a new one.
    TokenExpired,
    /// The token, or its client id, is in use by another live connection.
    TokenInUse,
}

impl RefusalReason {
    pub fn describe(&self) -> String {
        match self {
            RefusalReason::VersionMismatch { relay_version } => format!(
                "protocol version mismatch: this client speaks {PROTOCOL_VERSION}, the relay {relay_version}"
            ),
            RefusalReason::Full => "the relay is full".to_string(),
            RefusalReason::TokenRequired => {
                "the relay runs in secure mode: connect with a connect token".to_string()
            }
            RefusalReason::NotSecure => {
                "the relay runs in plain mode and takes no connect token".to_string()
            }
            RefusalReason::TokenExpired => "the connect token has expired".to_string(),
            RefusalReason::TokenInUse => {
                "the connect token (or its client id) is in use by another connection".to_string()
            }
        }
    }
}

/// A handshake datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handshake {
    Hello {
        version: u16,
        nonce: u64,
        token: Option<PresentedToken>,
    },
    Challenge {
        nonce: u64,
        cookie: u64,
    },
    Response {
        version: u16,
        nonce: u64,
        cookie: u64,
        /// Secure mode: the token and the proof of holding its key.
        token: Option<(PresentedToken, [u8; 16])>,
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
            Handshake::Hello {
                version,
                nonce,
                token,
            } => {
                w.u8(kind::HELLO);
                w.u16(version);
                w.u64(nonce);
                w.u8(token.is_some().into());
                if let Some(t) = token {
                    t.write(&mut w);
                }
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
                token,
            } => {
                w.u8(kind::RESPONSE);
                w.u16(version);
                w.u64(nonce);
                w.u64(cookie);
                w.u8(token.is_some().into());
                if let Some((t, proof)) = token {
                    t.write(&mut w);
                    w.bytes(&proof);
                }
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
                    other => {
                        w.u8(refusal_code(other));
                        w.u16(PROTOCOL_VERSION);
                    }
                }
            }
        }
        match self {
            Handshake::Hello { token: None, .. } | Handshake::Response { token: None, .. } => {
                w.bytes.resize(REQUEST_SIZE, 0)
            }
            Handshake::Hello { .. } | Handshake::Response { .. } => {
                w.bytes.resize(SECURE_REQUEST_SIZE, 0)
            }
            _ => {}
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
        // Requests: the size their token flag promises, exactly.
        let padded = |r: &mut Reader<'_>| -> Result<bool, DecodeError> {
            let with_token = match r.u8("token flag")? {
                0 => false,
                1 => true,
                _ => {
                    return Err(DecodeError::Invalid {
                        field: "token flag",
                        reason: "neither 0 nor 1",
                    })
                }
            };
            let size = if with_token {
                SECURE_REQUEST_SIZE
            } else {
                REQUEST_SIZE
            };
            if datagram.len() != size {
                return Err(DecodeError::Invalid {
                    field: "request",
                    reason:
                        "requests must be padded to REQUEST_SIZE (SECURE_REQUEST_SIZE with a token)",
                });
            }
            Ok(with_token)
        };
        let message = match kind {
            kind::HELLO => {
                let version = r.u16("version")?;
                let nonce = r.u64("nonce")?;
                let token = if padded(&mut r)? {
                    Some(PresentedToken::read(&mut r)?)
                } else {
                    None
                };
                Handshake::Hello {
                    version,
                    nonce,
                    token,
                }
            }
            kind::CHALLENGE => Handshake::Challenge {
                nonce: r.u64("nonce")?,
                cookie: r.u64("cookie")?,
            },
            kind::RESPONSE => {
                let version = r.u16("version")?;
                let nonce = r.u64("nonce")?;
                let cookie = r.u64("cookie")?;
                let token = if padded(&mut r)? {
                    let t = PresentedToken::read(&mut r)?;
                    let mut proof = [0u8; 16];
                    proof.copy_from_slice(r.take(16, "proof")?);
                    Some((t, proof))
                } else {
                    None
                };
                Handshake::Response {
                    version,
                    nonce,
                    cookie,
                    token,
                }
            }
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
                    3 => RefusalReason::TokenRequired,
                    4 => RefusalReason::NotSecure,
                    5 => RefusalReason::TokenExpired,
                    6 => RefusalReason::TokenInUse,
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
    /// Secure mode: the session keys from the client's token.
    pub keys: Option<SessionKeys>,
    /// Secure mode: the token's id (one live connection per token).
    pub token: Option<[u8; 16]>,
}

/// What a relay in secure mode checks tokens with.
#[derive(Clone, Debug)]
pub struct GateSecurity {
    pub secret: RelaySecret,
    /// The relay's own address as tokens name it (an unspecified IP
    /// matches any token naming this port).
    pub relay: SocketAddr,
    /// Unix time in seconds, for token expiry.
    pub unix_now: fn() -> u64,
}

impl GateSecurity {
    pub fn new(secret: RelaySecret, relay: SocketAddr) -> Self {
        GateSecurity {
            secret,
            relay,
            unix_now,
        }
    }
}

fn refusal_code(reason: RefusalReason) -> u8 {
    match reason {
        RefusalReason::VersionMismatch { .. } => 1,
        RefusalReason::Full => 2,
        RefusalReason::TokenRequired => 3,
        RefusalReason::NotSecure => 4,
        RefusalReason::TokenExpired => 5,
        RefusalReason::TokenInUse => 6,
    }
}

/// Constant-time comparison of two proofs.
fn same_proof(a: &[u8; 16], b: &[u8; 16]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
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
    security: Option<GateSecurity>,
}

impl Gatekeeper {
    /// Plain mode: anyone who completes the handshake is admitted.
    pub fn new(max_clients: usize) -> Self {
        Gatekeeper {
            key: RandomState::new(),
            admitted: HashMap::new(),
            next_client_id: 1,
            max_clients,
            security: None,
        }
    }

    /// Secure mode: only clients with a valid connect token for this relay.
    pub fn secure(max_clients: usize, security: GateSecurity) -> Self {
        Gatekeeper {
            security: Some(security),
            ..Gatekeeper::new(max_clients)
        }
    }

    pub fn is_secure(&self) -> bool {
        self.security.is_some()
    }

    /// Opens a presented token; a refusal to send, or a silent drop.
    fn check_token(
        &self,
        nonce: u64,
        token: &PresentedToken,
    ) -> Result<super::secure::OpenedToken, GateOutcome> {
        let security = self.security.as_ref().expect("secure mode");
        match token.open(&security.secret, security.relay, (security.unix_now)()) {
            Ok(opened) => Ok(opened),
            Err(TokenError::Expired) => Err(GateOutcome::Reply(refusal(
                nonce,
                RefusalReason::TokenExpired,
            ))),
            Err(_) => Err(GateOutcome::Drop(DROP_BAD_TOKEN)),
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
            Handshake::Hello {
                version,
                nonce,
                token,
            } => {
                if version != PROTOCOL_VERSION {
                    return GateOutcome::Reply(refusal(nonce, version_refusal()));
                }
                match (self.is_secure(), token) {
                    (false, Some(_)) => {
                        return GateOutcome::Reply(refusal(nonce, RefusalReason::NotSecure))
                    }
                    (true, None) => {
                        return GateOutcome::Reply(refusal(nonce, RefusalReason::TokenRequired))
                    }
                    (true, Some(t)) => {
                        if let Err(outcome) = self.check_token(nonce, &t) {
                            return outcome;
                        }
                    }
                    (false, None) => {}
                }
                let cookie = self.cookie(from, nonce, window);
                GateOutcome::Reply(Handshake::Challenge { nonce, cookie }.encode())
            }
            Handshake::Response {
                version,
                nonce,
                cookie,
                token,
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
                let opened = match (self.is_secure(), token) {
                    (false, Some(_)) => {
                        return GateOutcome::Reply(refusal(nonce, RefusalReason::NotSecure))
                    }
                    (true, None) => {
                        return GateOutcome::Reply(refusal(nonce, RefusalReason::TokenRequired))
                    }
                    (true, Some((t, proof))) => {
                        let opened = match self.check_token(nonce, &t) {
                            Ok(o) => o,
                            Err(outcome) => return outcome,
                        };
                        let expected = handshake_proof(&opened.keys.client_to_relay, nonce, cookie);
                        if !same_proof(&proof, &expected) {
                            return GateOutcome::Drop(DROP_BAD_TOKEN);
                        }
                        // One live connection per token and per client id
                        // (the same address may come back: a reconnect).
                        let in_use = self.admitted.iter().any(|(addr, a)| {
                            *addr != from
                                && (a.token == Some(opened.id) || a.client_id == opened.client_id)
                        });
                        if in_use {
                            return GateOutcome::Reply(refusal(nonce, RefusalReason::TokenInUse));
                        }
                        Some(opened)
                    }
                    (false, None) => None,
                };
                if self.admitted.len() >= self.max_clients && !self.admitted.contains_key(&from) {
                    return GateOutcome::Reply(refusal(nonce, RefusalReason::Full));
                }
                let admission = match opened {
                    Some(o) => Admission {
                        client_id: o.client_id,
                        nonce,
                        keys: Some(o.keys),
                        token: Some(o.id),
                    },
                    None => {
                        let id = self.next_client_id;
                        self.next_client_id = self.next_client_id.wrapping_add(1).max(1);
                        Admission {
                            client_id: id,
                            nonce,
                            keys: None,
                            token: None,
                        }
                    }
                };
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
        self.poll_with(now, version, None)
    }

    /// As [`Self::poll`], presenting a connect token and proving its
    /// client-to-relay key (secure mode).
    pub fn poll_with(
        &mut self,
        now: f64,
        version: u16,
        token: Option<&ConnectToken>,
    ) -> Option<Vec<u8>> {
        match self {
            ClientHandshake::Hello { nonce, next_send } if now >= *next_send => {
                *next_send = now + RETRY_INTERVAL;
                Some(
                    Handshake::Hello {
                        version,
                        nonce: *nonce,
                        token: token.map(|t| t.presented),
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
                        token: token.map(|t| {
                            let key = &t.keys.client_to_relay;
                            (t.presented, handshake_proof(key, *nonce, *cookie))
                        }),
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
            token: None,
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
                token: None,
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
            token: None,
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
