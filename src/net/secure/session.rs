//! Authenticated encryption of the datagrams of one admitted connection
//! (ChaCha20-Poly1305, one key per direction from the connect token).
//!
//! ```text
//! | 0xEC | sequence: u64 LE | ciphertext of laminar's datagram | tag: 16 |
//! ```
//! The nonce is the sequence number (never repeated under a key: each
//! direction has its own key and counter). The associated data binds
//! the datagram to this protocol version and client id.

use chacha20poly1305::aead::{AeadInPlace, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce, Tag};

use super::replay_window::ReplayWindow;
use super::token::SessionKeys;
use crate::net::handshake::PROTOCOL_VERSION;

/// First byte of an encrypted datagram (handshake datagrams start "NSYN").
pub const SECURE_MARK: u8 = 0xEC;
/// Bytes an encrypted datagram adds to laminar's.
pub const SECURE_OVERHEAD: usize = 1 + 8 + 16;
/// Nonce prefixes: data packets and the handshake's proof of key
/// possession never share a nonce under one key.
const DATA_NONCE: u8 = 0;
const PROOF_NONCE: u8 = 1;
const DERIVE_NONCE: u8 = 2;

fn nonce(prefix: u8, value: u64) -> Nonce {
    let mut n = [0u8; 12];
    n[0] = prefix;
    n[4..].copy_from_slice(&value.to_le_bytes());
    Nonce::from(n)
}

fn associated(client_id: u32) -> [u8; 7] {
    let mut ad = [0u8; 7];
    ad[0] = SECURE_MARK;
    ad[1..3].copy_from_slice(&PROTOCOL_VERSION.to_le_bytes());
    ad[3..].copy_from_slice(&client_id.to_le_bytes());
    ad
}

/// Why a datagram was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenError {
    /// Too short, or not an encrypted datagram.
    Malformed,
    /// Its sequence number was seen already, or is older than the window.
    Replayed,
    /// It does not authenticate under this connection's key.
    Forged,
}

/// Encrypts what one side sends.
pub struct Sealer {
    cipher: ChaCha20Poly1305,
    next: u64,
    ad: [u8; 7],
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sealer").field("next", &self.next).finish()
    }
}

impl Sealer {
    pub fn new(key: &[u8; 32], client_id: u32) -> Self {
        Sealer {
            cipher: ChaCha20Poly1305::new(Key::from_slice(key)),
            next: 0,
            ad: associated(client_id),
        }
    }

    /// Writes the encrypted datagram for `payload` into `out` (reused).
    pub fn seal(&mut self, payload: &[u8], out: &mut Vec<u8>) {
        let sequence = self.next;
        self.next += 1;
        out.clear();
        out.push(SECURE_MARK);
        out.extend_from_slice(&sequence.to_le_bytes());
        out.extend_from_slice(payload);
        let tag = self
            .cipher
            .encrypt_in_place_detached(&nonce(DATA_NONCE, sequence), &self.ad, &mut out[9..])
            .expect("payloads are far below ChaCha20's limit");
        out.extend_from_slice(&tag);
    }
}

/// Authenticates and decrypts what one side receives.
pub struct Opener {
    cipher: ChaCha20Poly1305,
    window: ReplayWindow,
    ad: [u8; 7],
}

impl std::fmt::Debug for Opener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opener").finish_non_exhaustive()
    }
}

impl Opener {
    pub fn new(key: &[u8; 32], client_id: u32) -> Self {
        Opener {
            cipher: ChaCha20Poly1305::new(Key::from_slice(key)),
            window: ReplayWindow::default(),
            ad: associated(client_id),
        }
    }

    /// Decrypts `datagram` in place; returns the plaintext inside it.
    pub fn open<'a>(&mut self, datagram: &'a mut [u8]) -> Result<&'a [u8], OpenError> {
        if datagram.len() < SECURE_OVERHEAD || datagram[0] != SECURE_MARK {
            return Err(OpenError::Malformed);
        }
        let mut seq = [0u8; 8];
        seq.copy_from_slice(&datagram[1..9]);
        let sequence = u64::from_le_bytes(seq);
        if !self.window.is_fresh(sequence) {
            return Err(OpenError::Replayed);
        }
        let end = datagram.len() - 16;
        let tag = *Tag::from_slice(&datagram[end..]);
        let body = &mut datagram[9..end];
        self.cipher
            .decrypt_in_place_detached(&nonce(DATA_NONCE, sequence), &self.ad, body, &tag)
            .map_err(|_| OpenError::Forged)?;
        self.window.accept(sequence);
        Ok(&datagram[9..end])
    }
}

/// The keys of one connection, derived from the token's keys and the
/// client's handshake nonce (fresh per attempt): a reconnect with the same
/// token starts its counters at 0 again under new keys, so no nonce is
/// ever used twice under one key. ChaCha20's keystream is the PRF.
pub fn derive_session(keys: &SessionKeys, client_nonce: u64) -> SessionKeys {
    let derive = |key: &[u8; 32]| {
        let cipher = ChaCha20Poly1305::new(Key::from_slice(key));
        let mut out = [0u8; 32];
        let _tag = cipher
            .encrypt_in_place_detached(
                &nonce(DERIVE_NONCE, client_nonce),
                b"netsync session",
                &mut out,
            )
            .expect("32 bytes always seal");
        out
    };
    SessionKeys {
        client_to_relay: derive(&keys.client_to_relay),
        relay_to_client: derive(&keys.relay_to_client),
    }
}

/// Both directions of one connection, from one side's point of view.
#[derive(Debug)]
pub struct Session {
    pub sealer: Sealer,
    pub opener: Opener,
}

impl Session {
    /// The relay's end: opens what the client sends, seals what it gets.
    pub fn relay_end(keys: &SessionKeys, client_nonce: u64, client_id: u32) -> Self {
        let k = derive_session(keys, client_nonce);
        Session {
            sealer: Sealer::new(&k.relay_to_client, client_id),
            opener: Opener::new(&k.client_to_relay, client_id),
        }
    }

    /// The client's end.
    pub fn client_end(keys: &SessionKeys, client_nonce: u64, client_id: u32) -> Self {
        let k = derive_session(keys, client_nonce);
        Session {
            sealer: Sealer::new(&k.client_to_relay, client_id),
            opener: Opener::new(&k.relay_to_client, client_id),
        }
    }
}

/// The client's proof, in its handshake response, that it holds the
/// token's client-to-relay key (a captured token alone admits nobody).
/// `cookie` is unique per address, nonce and cookie window, so no two
/// proofs share a nonce under one key.
pub fn handshake_proof(key: &[u8; 32], nonce_value: u64, cookie: u64) -> [u8; 16] {
    let cipher = ChaCha20Poly1305::new(Key::from_slice(key));
    let mut ad = [0u8; 16];
    ad[..8].copy_from_slice(&nonce_value.to_le_bytes());
    ad[8..].copy_from_slice(&cookie.to_le_bytes());
    let tag = cipher
        .encrypt_in_place_detached(&nonce(PROOF_NONCE, cookie), &ad, &mut [])
        .expect("an empty message always seals");
    tag.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_datagram_opens_once_and_tampering_is_refused() {
        let key = [7u8; 32];
        let mut sealer = Sealer::new(&key, 3);
        let mut opener = Opener::new(&key, 3);
        let mut out = Vec::new();
        sealer.seal(b"hello relay", &mut out);
        assert_eq!(out.len(), 11 + SECURE_OVERHEAD);
        let mut copy = out.clone();
        assert_eq!(opener.open(&mut copy).unwrap(), b"hello relay");
        // The same datagram again: a replay.
        let mut again = out.clone();
        assert_eq!(opener.open(&mut again), Err(OpenError::Replayed));
        // A flipped bit, a wrong key, another client id: forged.
        sealer.seal(b"second", &mut out);
        let mut flipped = out.clone();
        flipped[12] ^= 1;
        assert_eq!(opener.open(&mut flipped), Err(OpenError::Forged));
        let mut other = Opener::new(&[8u8; 32], 3);
        assert_eq!(other.open(&mut out.clone()), Err(OpenError::Forged));
        let mut other_id = Opener::new(&key, 4);
        assert_eq!(other_id.open(&mut out.clone()), Err(OpenError::Forged));
        // The forgery did not burn the sequence number: the real one opens.
        assert_eq!(opener.open(&mut out).unwrap(), b"second");
        assert_eq!(
            opener.open(&mut [SECURE_MARK; 10]),
            Err(OpenError::Malformed)
        );
    }

    #[test]
    fn each_connection_gets_its_own_keys_and_both_ends_agree() {
        let keys = SessionKeys {
            client_to_relay: [1; 32],
            relay_to_client: [2; 32],
        };
        let a = derive_session(&keys, 1);
        assert_ne!(a, derive_session(&keys, 2));
        assert_ne!(a.client_to_relay, keys.client_to_relay);
        let mut relay = Session::relay_end(&keys, 9, 5);
        let mut client = Session::client_end(&keys, 9, 5);
        let mut out = Vec::new();
        client.sealer.seal(b"up", &mut out);
        assert_eq!(relay.opener.open(&mut out).unwrap(), b"up");
        relay.sealer.seal(b"down", &mut out);
        assert_eq!(client.opener.open(&mut out).unwrap(), b"down");
        // Another attempt's session (another nonce) cannot read it.
        let mut stale = Session::client_end(&keys, 10, 5);
        relay.sealer.seal(b"down", &mut out);
        assert_eq!(stale.opener.open(&mut out), Err(OpenError::Forged));
    }

    #[test]
    fn proofs_depend_on_key_nonce_and_cookie() {
        let p = handshake_proof(&[1; 32], 5, 9);
        assert_eq!(p, handshake_proof(&[1; 32], 5, 9));
        assert_ne!(p, handshake_proof(&[2; 32], 5, 9));
        assert_ne!(p, handshake_proof(&[1; 32], 6, 9));
        assert_ne!(p, handshake_proof(&[1; 32], 5, 10));
    }
}
