//! Secure mode through the C ABI (docs/security.md): relay secrets,
//! connect tokens for a game's backend, and the secure variants of
//! starting a relay and connecting a client.

use std::ffi::c_char;
use std::net::SocketAddr;

use super::client::{connect_client, NetsyncClientConfig};
use super::result::{guard, FfiError, NetsyncResult};
use super::server::{c_str, start_server, NetsyncServer, NetsyncServerConfig};
use crate::net::secure::token::{unix_now, MAX_LIFETIME, SECRET_LEN, TOKEN_LEN};
use crate::net::secure::{issue_token, ConnectToken, RelaySecret, TokenError};

/// Bytes of a relay secret.
pub const NETSYNC_SECRET_SIZE: usize = 32;
/// Bytes of a connect token.
pub const NETSYNC_TOKEN_SIZE: usize = 225;
// Literals for cbindgen; the core's sizes must match them.
const _: () = assert!(NETSYNC_SECRET_SIZE == SECRET_LEN && NETSYNC_TOKEN_SIZE == TOKEN_LEN);

fn token_error(e: TokenError) -> FfiError {
    let code = match e {
        TokenError::Random(_) => NetsyncResult::NETSYNC_ERR_IO,
        _ => NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT,
    };
    FfiError::new(code, e.to_string())
}

/// Reads exactly `expected` bytes from the caller.
fn exact<'a>(
    data: *const u8,
    len: usize,
    expected: usize,
    what: &str,
) -> Result<&'a [u8], FfiError> {
    if data.is_null() {
        return Err(FfiError::null(what));
    }
    if len != expected {
        return Err(FfiError::invalid(format!(
            "`{what}` must be {expected} bytes, got {len}"
        )));
    }
    // SAFETY: non-NULL, and the caller passes `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(data, len) })
}

fn secret_from(data: *const u8, len: usize) -> Result<RelaySecret, FfiError> {
    let bytes = exact(data, len, NETSYNC_SECRET_SIZE, "secret")?;
    let mut secret = [0u8; SECRET_LEN];
    secret.copy_from_slice(bytes);
    Ok(RelaySecret(secret))
}

/// Writes a new random relay secret (`NETSYNC_SECRET_SIZE` bytes, from
/// the operating system's CSPRNG) to `out`. Keep it on the relay and the
/// game's backend only.
#[no_mangle]
pub extern "C" fn netsync_secret_generate(out: *mut u8, len: usize) -> NetsyncResult {
    guard("netsync_secret_generate", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        if len != NETSYNC_SECRET_SIZE {
            return Err(FfiError::invalid(format!(
                "`len` must be NETSYNC_SECRET_SIZE ({NETSYNC_SECRET_SIZE}), got {len}"
            )));
        }
        let secret = RelaySecret::generate().map_err(token_error)?;
        // SAFETY: non-NULL, and the caller passes `len` writable bytes.
        unsafe { std::ptr::copy_nonoverlapping(secret.0.as_ptr(), out, len) };
        Ok(())
    })
}

/// Issues a connect token (for a game's backend): `client_id` (1 and up)
/// may connect to the relay at `relay_address` ("IP:port", as clients
/// reach it) started with `secret`, for `lifetime_seconds` (1..=86400)
/// from now. Writes `NETSYNC_TOKEN_SIZE` bytes to `out` (`capacity` at
/// least that) and the size to `*out_len`.
#[no_mangle]
pub extern "C" fn netsync_token_issue(
    secret: *const u8,
    secret_len: usize,
    client_id: u32,
    relay_address: *const c_char,
    lifetime_seconds: u32,
    out: *mut u8,
    capacity: usize,
    out_len: *mut usize,
) -> NetsyncResult {
    guard("netsync_token_issue", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        if out_len.is_null() {
            return Err(FfiError::null("out_len"));
        }
        let secret = secret_from(secret, secret_len)?;
        let address = c_str(relay_address, "relay_address")?
            .ok_or_else(|| FfiError::null("relay_address"))?;
        let relay: SocketAddr = address
            .parse()
            .map_err(|_| FfiError::invalid(format!("`{address}` is not IP:port")))?;
        if lifetime_seconds == 0 || u64::from(lifetime_seconds) > MAX_LIFETIME {
            return Err(FfiError::invalid(format!(
                "lifetime_seconds must be 1..={MAX_LIFETIME}, got {lifetime_seconds}"
            )));
        }
        if capacity < NETSYNC_TOKEN_SIZE {
            return Err(FfiError::new(
                NetsyncResult::NETSYNC_ERR_BUFFER_TOO_SMALL,
                format!("a token needs NETSYNC_TOKEN_SIZE ({NETSYNC_TOKEN_SIZE}) bytes, capacity is {capacity}"),
            ));
        }
        let expires = unix_now() + u64::from(lifetime_seconds);
        let token = issue_token(&secret, client_id, relay, expires).map_err(token_error)?;
        let bytes = token.to_bytes();
        // SAFETY: non-NULL, `capacity` >= the token's size.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, bytes.len());
            out_len.write(bytes.len());
        }
        Ok(())
    })
}

/// As `netsync_server_start`, in secure mode: only clients presenting a
/// connect token issued with `secret` are admitted, and every datagram
/// after the handshake is encrypted and authenticated. `public_address`
/// ("IP:port" that tokens name; NULL: the bound address, any IP when
/// bound to 0.0.0.0).
#[no_mangle]
pub extern "C" fn netsync_server_start_secure(
    config: *const NetsyncServerConfig,
    bind_ip: *const c_char,
    secret: *const u8,
    secret_len: usize,
    public_address: *const c_char,
    out: *mut *mut NetsyncServer,
) -> NetsyncResult {
    guard("netsync_server_start_secure", || {
        let secret = secret_from(secret, secret_len)?;
        let public = match c_str(public_address, "public_address")? {
            None => None,
            Some(text) => Some(text.parse::<SocketAddr>().map_err(|_| {
                FfiError::invalid(format!("`public_address` `{text}` is not IP:port"))
            })?),
        };
        start_server(config, bind_ip, None, out, |core| {
            core.secret = Some(secret);
            core.public_address = public;
            Ok(())
        })
    })
}

/// As `netsync_client_connect`, in secure mode with a connect token from
/// the game's backend (`token_len` = `NETSYNC_TOKEN_SIZE`). `address`
/// NULL: the relay address the token names.
#[no_mangle]
pub extern "C" fn netsync_client_connect_secure(
    config: *const NetsyncClientConfig,
    address: *const c_char,
    token: *const u8,
    token_len: usize,
    out: *mut *mut super::client::NetsyncClient,
) -> NetsyncResult {
    guard("netsync_client_connect_secure", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let bytes = exact(token, token_len, NETSYNC_TOKEN_SIZE, "token")?;
        let token = ConnectToken::from_bytes(bytes).map_err(token_error)?;
        let relay = match c_str(address, "address")? {
            None => token.relay,
            Some(text) => text
                .parse()
                .map_err(|_| FfiError::invalid(format!("`{text}` is not IP:port")))?,
        };
        connect_client(config, relay, Some(token), out)
    })
}
