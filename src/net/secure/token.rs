//! Connect tokens: a game's backend, which holds the relay's secret,
//! issues one per player and session. The client keeps the public part
//! (relay address and the two session keys) and presents the sealed part
//! in its handshake; only the relay can open it.
//!
//! ```text
//! token (225 bytes, what the backend hands the client):
//!   "NSTK" | format: u8 = 1 | protocol: u16 | relay address: 19
//!   | client-to-relay key: 32 | relay-to-client key: 32 | presented: 135
//! presented (sent in the handshake):
//!   expires: u64 unix s | nonce: 24 | sealed: 103
//! sealed = XChaCha20-Poly1305(secret, nonce,
//!            ad = "NSTK" | format | protocol | expires,
//!            client id: u32 | relay address: 19 | both keys: 64)
//! address: family u8 (4 or 6) | 16 bytes of IP (v4 in the first 4) | port u16
//! ```
//! All integers little-endian.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use chacha20poly1305::aead::{AeadInPlace, KeyInit};
use chacha20poly1305::{Key, Tag, XChaCha20Poly1305, XNonce};

use crate::net::handshake::PROTOCOL_VERSION;
use crate::wire::{DecodeError, Reader, Writer};

pub const SECRET_LEN: usize = 32;
pub const KEY_LEN: usize = 32;
const MAGIC: [u8; 4] = *b"NSTK";
const FORMAT: u8 = 1;
const ADDRESS_LEN: usize = 19;
const PRIVATE_LEN: usize = 4 + ADDRESS_LEN + 2 * KEY_LEN;
/// Sealed part: the private fields and the AEAD tag.
pub const SEALED_LEN: usize = PRIVATE_LEN + 16;
/// What a client presents in its handshake.
pub const PRESENTED_LEN: usize = 8 + 24 + SEALED_LEN;
/// A whole token as the backend hands it out.
pub const TOKEN_LEN: usize = 4 + 1 + 2 + ADDRESS_LEN + 2 * KEY_LEN + PRESENTED_LEN;
/// Longest lifetime a token may be issued with (s): one day.
pub const MAX_LIFETIME: u64 = 86_400;

/// Why a token was not issued, read or accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenError {
    /// Not a token of this format (or of another protocol version).
    Malformed(String),
    /// The sealed part does not open with this relay's secret: forged,
    /// damaged, or issued for another relay.
    Forged,
    /// Its expiry time has passed.
    Expired,
    /// Issued for another relay address.
    WrongRelay,
    /// Client ids are 1..=4294967295; lifetimes 1..=86400 s.
    InvalidArgument(&'static str),
    /// The operating system gave no random bytes.
    Random(String),
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenError::Malformed(why) => write!(f, "not a netsync connect token: {why}"),
            TokenError::Forged => write!(
                f,
                "the connect token does not open with this relay's secret (forged, damaged or for another relay)"
            ),
            TokenError::Expired => write!(f, "the connect token has expired"),
            TokenError::WrongRelay => write!(f, "the connect token was issued for another relay address"),
            TokenError::InvalidArgument(why) => write!(f, "{why}"),
            TokenError::Random(e) => write!(f, "no random bytes from the operating system: {e}"),
        }
    }
}

impl std::error::Error for TokenError {}

impl From<DecodeError> for TokenError {
    fn from(e: DecodeError) -> Self {
        TokenError::Malformed(e.to_string())
    }
}

fn random<const N: usize>() -> Result<[u8; N], TokenError> {
    let mut bytes = [0u8; N];
    getrandom::getrandom(&mut bytes).map_err(|e| TokenError::Random(e.to_string()))?;
    Ok(bytes)
}

/// The relay's secret: whoever holds it can issue tokens for the relay.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RelaySecret(pub [u8; SECRET_LEN]);

impl fmt::Debug for RelaySecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RelaySecret(..)")
    }
}

impl RelaySecret {
    /// A new secret from the operating system's CSPRNG.
    pub fn generate() -> Result<Self, TokenError> {
        Ok(RelaySecret(random()?))
    }

    /// As written by [`RelaySecret::to_hex`] (64 hex digits; surrounding
    /// whitespace, as in a file, is ignored).
    pub fn from_hex(text: &str) -> Result<Self, TokenError> {
        let bytes = from_hex(text.trim()).ok_or(TokenError::InvalidArgument(
            "a relay secret is 64 hex digits",
        ))?;
        let secret: [u8; SECRET_LEN] = bytes
            .try_into()
            .map_err(|_| TokenError::InvalidArgument("a relay secret is 64 hex digits"))?;
        Ok(RelaySecret(secret))
    }

    pub fn to_hex(&self) -> String {
        to_hex(&self.0)
    }
}

/// Lowercase hex of `bytes`.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Bytes of an even-length hex string.
pub fn from_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// The two keys of one session, one per direction.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SessionKeys {
    pub client_to_relay: [u8; KEY_LEN],
    pub relay_to_client: [u8; KEY_LEN],
}

impl fmt::Debug for SessionKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionKeys(..)")
    }
}

impl SessionKeys {
    fn write(&self, w: &mut Writer) {
        w.bytes(&self.client_to_relay);
        w.bytes(&self.relay_to_client);
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let mut keys = SessionKeys {
            client_to_relay: [0; KEY_LEN],
            relay_to_client: [0; KEY_LEN],
        };
        keys.client_to_relay
            .copy_from_slice(r.take(KEY_LEN, "key")?);
        keys.relay_to_client
            .copy_from_slice(r.take(KEY_LEN, "key")?);
        Ok(keys)
    }
}

/// The part of a token the client presents in its handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PresentedToken {
    pub expires: u64,
    nonce: [u8; 24],
    sealed: [u8; SEALED_LEN],
}

/// What the relay learns from a token that opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenedToken {
    pub client_id: u32,
    pub relay: SocketAddr,
    pub keys: SessionKeys,
    pub expires: u64,
    /// The seal's tag: identifies this token (one live connection each).
    pub id: [u8; 16],
}

/// A whole token, as the backend hands it to a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectToken {
    pub relay: SocketAddr,
    pub keys: SessionKeys,
    pub presented: PresentedToken,
}

fn associated(expires: u64) -> [u8; 15] {
    let mut ad = [0u8; 15];
    ad[..4].copy_from_slice(&MAGIC);
    ad[4] = FORMAT;
    ad[5..7].copy_from_slice(&PROTOCOL_VERSION.to_le_bytes());
    ad[7..].copy_from_slice(&expires.to_le_bytes());
    ad
}

fn write_address(w: &mut Writer, a: SocketAddr) {
    let mut ip = [0u8; 16];
    match a.ip() {
        IpAddr::V4(v4) => {
            w.u8(4);
            ip[..4].copy_from_slice(&v4.octets());
        }
        IpAddr::V6(v6) => {
            w.u8(6);
            ip = v6.octets();
        }
    }
    w.bytes(&ip);
    w.u16(a.port());
}

fn read_address(r: &mut Reader<'_>) -> Result<SocketAddr, DecodeError> {
    let family = r.u8("address family")?;
    let ip = r.take(16, "address")?;
    let port = r.u16("port")?;
    let ip = match family {
        4 => IpAddr::V4(Ipv4Addr::new(ip[0], ip[1], ip[2], ip[3])),
        6 => {
            let mut b = [0u8; 16];
            b.copy_from_slice(ip);
            IpAddr::V6(Ipv6Addr::from(b))
        }
        _ => {
            return Err(DecodeError::Invalid {
                field: "address family",
                reason: "neither 4 nor 6",
            })
        }
    };
    Ok(SocketAddr::new(ip, port))
}

/// Issues a token for `client_id` to connect to the relay at `relay`
/// (the address clients use), valid until unix time `expires`.
pub fn issue_token(
    secret: &RelaySecret,
    client_id: u32,
    relay: SocketAddr,
    expires: u64,
) -> Result<ConnectToken, TokenError> {
    if client_id == 0 {
        return Err(TokenError::InvalidArgument(
            "client ids are 1..=4294967295 (0 means nobody)",
        ));
    }
    let keys = SessionKeys {
        client_to_relay: random()?,
        relay_to_client: random()?,
    };
    let nonce: [u8; 24] = random()?;
    let mut private = Writer::new();
    private.u32(client_id);
    write_address(&mut private, relay);
    keys.write(&mut private);
    let mut sealed = [0u8; SEALED_LEN];
    sealed[..PRIVATE_LEN].copy_from_slice(&private.bytes);
    let cipher = XChaCha20Poly1305::new(Key::from_slice(&secret.0));
    let tag = cipher
        .encrypt_in_place_detached(
            XNonce::from_slice(&nonce),
            &associated(expires),
            &mut sealed[..PRIVATE_LEN],
        )
        .expect("a short message always seals");
    sealed[PRIVATE_LEN..].copy_from_slice(&tag);
    Ok(ConnectToken {
        relay,
        keys,
        presented: PresentedToken {
            expires,
            nonce,
            sealed,
        },
    })
}

impl PresentedToken {
    pub fn write(&self, w: &mut Writer) {
        w.u64(self.expires);
        w.bytes(&self.nonce);
        w.bytes(&self.sealed);
    }

    pub fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let expires = r.u64("token expiry")?;
        let mut nonce = [0u8; 24];
        nonce.copy_from_slice(r.take(24, "token nonce")?);
        let mut sealed = [0u8; SEALED_LEN];
        sealed.copy_from_slice(r.take(SEALED_LEN, "sealed token")?);
        Ok(PresentedToken {
            expires,
            nonce,
            sealed,
        })
    }

    /// Opens the sealed part with the relay's secret and checks it is
    /// for `relay` (an unspecified IP matches on the port alone) and not
    /// expired at unix time `now`.
    pub fn open(
        &self,
        secret: &RelaySecret,
        relay: SocketAddr,
        now: u64,
    ) -> Result<OpenedToken, TokenError> {
        let mut private = [0u8; PRIVATE_LEN];
        private.copy_from_slice(&self.sealed[..PRIVATE_LEN]);
        let tag = Tag::from_slice(&self.sealed[PRIVATE_LEN..]);
        let cipher = XChaCha20Poly1305::new(Key::from_slice(&secret.0));
        cipher
            .decrypt_in_place_detached(
                XNonce::from_slice(&self.nonce),
                &associated(self.expires),
                &mut private,
                tag,
            )
            .map_err(|_| TokenError::Forged)?;
        // Authentic from here on: the backend wrote these fields.
        let mut r = Reader::new(&private);
        let client_id = r.u32("client id")?;
        let named = read_address(&mut r)?;
        let keys = SessionKeys::read(&mut r)?;
        let same_ip = relay.ip().is_unspecified() || named.ip() == relay.ip();
        if named.port() != relay.port() || !same_ip {
            return Err(TokenError::WrongRelay);
        }
        if now >= self.expires {
            return Err(TokenError::Expired);
        }
        if client_id == 0 {
            return Err(TokenError::Forged);
        }
        let mut id = [0u8; 16];
        id.copy_from_slice(tag);
        Ok(OpenedToken {
            client_id,
            relay: named,
            keys,
            expires: self.expires,
            id,
        })
    }
}

impl ConnectToken {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.bytes(&MAGIC);
        w.u8(FORMAT);
        w.u16(PROTOCOL_VERSION);
        write_address(&mut w, self.relay);
        self.keys.write(&mut w);
        self.presented.write(&mut w);
        debug_assert_eq!(w.bytes.len(), TOKEN_LEN);
        w.bytes
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Self, TokenError> {
        if bytes.len() != TOKEN_LEN {
            return Err(TokenError::Malformed(format!(
                "a token is {TOKEN_LEN} bytes, this is {}",
                bytes.len()
            )));
        }
        let mut r = Reader::new(bytes);
        if r.take(4, "magic")? != MAGIC {
            return Err(TokenError::Malformed("wrong magic".into()));
        }
        let format = r.u8("format")?;
        let protocol = r.u16("protocol")?;
        if format != FORMAT || protocol != PROTOCOL_VERSION {
            return Err(TokenError::Malformed(format!(
                "format {format} for protocol {protocol}; this build reads format {FORMAT} for protocol {PROTOCOL_VERSION}"
            )));
        }
        let relay = read_address(&mut r)?;
        let keys = SessionKeys::read(&mut r)?;
        let presented = PresentedToken::read(&mut r)?;
        r.finish()?;
        Ok(ConnectToken {
            relay,
            keys,
            presented,
        })
    }
}

/// Unix time now (s); 0 if the clock is before 1970.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relay() -> SocketAddr {
        "203.0.113.5:7777".parse().unwrap()
    }

    #[test]
    fn a_token_round_trips_and_opens_only_with_its_secret_and_relay() {
        let secret = RelaySecret([3; 32]);
        let token = issue_token(&secret, 42, relay(), 1_000).unwrap();
        let bytes = token.to_bytes();
        assert_eq!(bytes.len(), TOKEN_LEN);
        let back = ConnectToken::from_bytes(&bytes).unwrap();
        assert_eq!(back, token);
        let opened = back.presented.open(&secret, relay(), 999).unwrap();
        assert_eq!(opened.client_id, 42);
        assert_eq!(opened.keys, token.keys);
        // A relay bound to 0.0.0.0:7777 accepts it; one on another port not.
        let any: SocketAddr = "0.0.0.0:7777".parse().unwrap();
        assert!(back.presented.open(&secret, any, 999).is_ok());
        let other: SocketAddr = "203.0.113.5:7778".parse().unwrap();
        assert_eq!(
            back.presented.open(&secret, other, 999),
            Err(TokenError::WrongRelay)
        );
        assert_eq!(
            back.presented.open(&secret, relay(), 1_000),
            Err(TokenError::Expired)
        );
        assert_eq!(
            back.presented.open(&RelaySecret([4; 32]), relay(), 0),
            Err(TokenError::Forged)
        );
    }

    #[test]
    fn any_change_to_the_presented_part_is_a_forgery() {
        let secret = RelaySecret([3; 32]);
        let token = issue_token(&secret, 42, relay(), 1_000).unwrap();
        let mut bytes = token.to_bytes();
        let presented_at = TOKEN_LEN - PRESENTED_LEN;
        for i in [presented_at, presented_at + 9, TOKEN_LEN - 1] {
            let saved = bytes[i];
            bytes[i] ^= 0x40;
            let t = ConnectToken::from_bytes(&bytes).unwrap();
            // A later expiry written over the real one fails too.
            assert_eq!(
                t.presented.open(&secret, relay(), 0),
                Err(TokenError::Forged),
                "byte {i}"
            );
            bytes[i] = saved;
        }
        assert!(ConnectToken::from_bytes(&bytes[..TOKEN_LEN - 1]).is_err());
        bytes[0] = b'X';
        assert!(ConnectToken::from_bytes(&bytes).is_err());
    }

    #[test]
    fn client_id_zero_is_refused_and_secrets_read_back_from_hex() {
        let secret = RelaySecret::generate().unwrap();
        assert!(matches!(
            issue_token(&secret, 0, relay(), 10),
            Err(TokenError::InvalidArgument(_))
        ));
        let hex = secret.to_hex();
        assert_eq!(hex.len(), 64);
        assert_eq!(RelaySecret::from_hex(&format!(" {hex}\n")).unwrap(), secret);
        assert!(RelaySecret::from_hex("abc").is_err());
        assert!(RelaySecret::from_hex(&"zz".repeat(32)).is_err());
        assert_eq!(format!("{secret:?}"), "RelaySecret(..)");
    }
}
