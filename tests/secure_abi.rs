//! Secure mode through the C ABI, end to end on loopback: a relay started
//! with a secret, tokens issued by the "backend" call, two clients that
//! connect with them and see each other's entities move; a plain client
//! is refused by name; bad arguments get codes and messages.

use std::ffi::CString;
use std::ptr;
use std::time::{Duration, Instant};

use netsync::ffi::client::*;
use netsync::ffi::result::{netsync_last_error, NetsyncResult};
use netsync::ffi::security::*;
use netsync::ffi::server::*;

mod common;
use common::*;

fn last_error() -> String {
    // SAFETY: the library returns a NUL-terminated string it keeps alive.
    unsafe { std::ffi::CStr::from_ptr(netsync_last_error()) }
        .to_string_lossy()
        .into_owned()
}

fn token(secret: &[u8], client_id: u32, relay: &str) -> Vec<u8> {
    let relay = CString::new(relay).unwrap();
    let mut out = vec![0u8; NETSYNC_TOKEN_SIZE];
    let mut len = 0usize;
    assert_eq!(
        netsync_token_issue(
            secret.as_ptr(),
            secret.len(),
            client_id,
            relay.as_ptr(),
            60,
            out.as_mut_ptr(),
            out.len(),
            &mut len
        ),
        OK,
        "{}",
        last_error()
    );
    assert_eq!(len, NETSYNC_TOKEN_SIZE);
    out
}

#[test]
fn two_clients_with_tokens_exchange_state_and_a_plain_one_is_refused() {
    let mut secret = [0u8; NETSYNC_SECRET_SIZE];
    assert_eq!(
        netsync_secret_generate(secret.as_mut_ptr(), secret.len()),
        OK
    );
    assert_ne!(secret, [0u8; NETSYNC_SECRET_SIZE]);
    let bind = CString::new("127.0.0.1").unwrap();
    // SAFETY: plain numbers; overwritten with the defaults next.
    let mut config = unsafe { std::mem::zeroed::<NetsyncServerConfig>() };
    assert_eq!(netsync_server_config_default(&mut config), OK);
    config.port = 0;
    let mut server = ptr::null_mut();
    assert_eq!(
        netsync_server_start_secure(
            &config,
            bind.as_ptr(),
            secret.as_ptr(),
            secret.len(),
            ptr::null(),
            &mut server
        ),
        OK,
        "{}",
        last_error()
    );
    let port = port_of(server);
    let relay = format!("127.0.0.1:{port}");
    let ids = [1001u64, 1002];
    let clients: Vec<*mut NetsyncClient> = [501u32, 502]
        .iter()
        .map(|&client_id| {
            let t = token(&secret, client_id, &relay);
            let mut c = ptr::null_mut();
            assert_eq!(
                netsync_client_connect_secure(
                    ptr::null(),
                    ptr::null(),
                    t.as_ptr(),
                    t.len(),
                    &mut c
                ),
                OK,
                "{}",
                last_error()
            );
            c
        })
        .collect();
    for (c, id) in clients.iter().zip(ids) {
        assert_eq!(netsync_client_register_entity(*c, id), OK);
    }
    let plain = connect(port, 5.0);
    let start = Instant::now();
    let mut seen = [0usize; 2];
    while start.elapsed() < Duration::from_secs(3) {
        let now = start.elapsed().as_secs_f64();
        for (i, &c) in clients.iter().enumerate() {
            let _ = netsync_client_set_entity_state(c, &circle(ids[i], now));
            seen[i] = tick(c, now).len();
        }
        let _ = tick(plain, now);
        std::thread::sleep(Duration::from_millis(16));
    }
    assert_eq!(seen, [1, 1], "each sees the other's entity");
    for (&c, want) in clients.iter().zip([501u32, 502]) {
        let e = events(c);
        assert!(
            e.iter()
                .any(|e| e.kind == NETSYNC_EVENT_CONNECTED && e.client_id == want),
            "connected as the token's client id {want}: {e:?}"
        );
    }
    let refused = events(plain);
    assert!(
        refused
            .iter()
            .any(|e| e.kind == NETSYNC_EVENT_DISCONNECTED
                && e.reason == NETSYNC_REASON_TOKEN_REQUIRED),
        "{refused:?}"
    );
    let mut s = NetsyncServerStats::default();
    assert_eq!(netsync_server_stats(server, &mut s), OK);
    assert_eq!(s.clients, 2);
    assert_eq!(
        (s.dropped_forged, s.dropped_replayed, s.dropped_bad_token),
        (0, 0, 0)
    );

    // Bad arguments: codes and messages, nothing written.
    let mut out = vec![0u8; NETSYNC_TOKEN_SIZE];
    let mut len = 0usize;
    let addr = CString::new(relay.as_str()).unwrap();
    let issue = |secret_len: usize,
                 client: u32,
                 lifetime: u32,
                 cap: usize,
                 out: &mut [u8],
                 len: &mut usize| {
        netsync_token_issue(
            secret.as_ptr(),
            secret_len,
            client,
            addr.as_ptr(),
            lifetime,
            out.as_mut_ptr(),
            cap,
            len,
        )
    };
    assert_eq!(
        issue(31, 1, 60, out.len(), &mut out, &mut len),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    assert!(last_error().contains("32 bytes"), "{}", last_error());
    assert_eq!(
        issue(32, 0, 60, out.len(), &mut out, &mut len),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    assert_eq!(
        issue(32, 1, 0, out.len(), &mut out, &mut len),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    assert_eq!(
        issue(32, 1, 60, 10, &mut out, &mut len),
        NetsyncResult::NETSYNC_ERR_BUFFER_TOO_SMALL
    );
    assert_eq!(len, 0);
    let mut c = ptr::null_mut();
    assert_eq!(
        netsync_client_connect_secure(ptr::null(), ptr::null(), out.as_ptr(), 7, &mut c),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    let junk = vec![0u8; NETSYNC_TOKEN_SIZE];
    assert_eq!(
        netsync_client_connect_secure(ptr::null(), ptr::null(), junk.as_ptr(), junk.len(), &mut c),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    assert!(
        last_error().contains("not a netsync connect token"),
        "{}",
        last_error()
    );
    assert_eq!(
        netsync_client_connect_secure(
            ptr::null(),
            ptr::null(),
            ptr::null(),
            NETSYNC_TOKEN_SIZE,
            &mut c
        ),
        NetsyncResult::NETSYNC_ERR_NULL_POINTER
    );
    assert_eq!(
        netsync_secret_generate(out.as_mut_ptr(), 16),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    assert!(c.is_null());

    for c in clients {
        netsync_client_free(c);
    }
    netsync_client_free(plain);
    netsync_server_free(server);
}
