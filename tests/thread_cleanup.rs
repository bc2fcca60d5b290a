//! `free` leaves no thread behind, so a Unity editor can reload the
//! library: the only test in its binary, so that it can count the
//! library's threads (named `netsync-*`) exactly. A relay, three clients
//! (one recording), the relay freed first while the clients are
//! connected, then each client: every free joins its threads before it
//! returns, within a bounded time.

use std::ffi::CString;
use std::time::{Duration, Instant};

use netsync::ffi::client::*;
use netsync::ffi::replay::netsync_client_record;
use netsync::ffi::server::*;

mod common;
use common::*;

/// Threads of this process whose name starts with `netsync-` (the
/// kernel keeps 15 bytes of a name: `netsync-recorde`).
fn library_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with("netsync-"))
        .count()
}

/// Waits (up to 1 s) for the count to become `n`: a new thread names
/// itself after it starts, and the kernel drops a joined thread's entry
/// a moment after the join returns.
fn expect_threads(n: usize, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(1);
    while library_threads() != n && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(library_threads(), n, "{what}");
}

fn state(client: *mut NetsyncClient) -> u32 {
    let mut s = 99;
    assert_eq!(netsync_client_state(client, &mut s), OK);
    s
}

/// Frees through `free` and returns how long it took.
fn timed(free: impl FnOnce()) -> Duration {
    let start = Instant::now();
    free();
    start.elapsed()
}

#[test]
fn every_free_joins_its_threads_before_it_returns() {
    assert_eq!(library_threads(), 0, "nothing runs before the first call");
    let server = start_server(0, 5.0);
    let port = port_of(server);
    expect_threads(1, "the relay's thread");
    let clients: Vec<_> = (0..3).map(|_| connect(port, 2.0)).collect();
    expect_threads(4, "one network thread per client");
    let deadline = Instant::now() + Duration::from_secs(5);
    while clients.iter().any(|&c| state(c) != NETSYNC_STATE_CONNECTED) {
        assert!(Instant::now() < deadline, "clients did not connect");
        std::thread::sleep(Duration::from_millis(10));
    }
    let dir = std::env::temp_dir().join(format!("netsync-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = CString::new(dir.join("c0.nsrec").to_str().unwrap()).unwrap();
    assert_eq!(netsync_client_record(clients[0], path.as_ptr()), OK);
    expect_threads(5, "and the recording's writer");

    // The relay goes first, under connected clients.
    let took = timed(|| netsync_server_free(server));
    assert!(took < Duration::from_secs(1), "relay free took {took:?}");
    expect_threads(4, "the relay's thread is joined");
    for (i, c) in clients.into_iter().enumerate() {
        let took = timed(|| netsync_client_free(c));
        assert!(took < Duration::from_secs(1), "client free took {took:?}");
        let left = 2 - i;
        expect_threads(
            left,
            &format!("after freeing client {i} (the first also stops its recording)"),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
