//! Frame lockstep through the C ABI only, on real UDP on loopback: an
//! embedded relay with its lockstep settings, three clients that join,
//! submit one input per frame and take confirmed frames (NETSYNC_WAIT,
//! never a guess), report hashes, provide a snapshot for a late joiner;
//! the embedded server told of stalls and desyncs; and every misuse
//! answered with a code and a message.

use std::ffi::CStr;
use std::ptr;
use std::time::{Duration, Instant};

use netsync::ffi::client::*;
use netsync::ffi::lockstep::*;
use netsync::ffi::result::{netsync_last_error, NetsyncResult};
use netsync::ffi::server::*;
use netsync::ffi::server_game::*;

mod common;
use common::*;

const WAIT: NetsyncResult = NetsyncResult::NETSYNC_WAIT;

fn last_error() -> String {
    unsafe { CStr::from_ptr(netsync_last_error()) }
        .to_string_lossy()
        .into_owned()
}

fn status(c: *mut NetsyncClient) -> NetsyncLockstepStatus {
    let mut s = NetsyncLockstepStatus::default();
    assert_eq!(netsync_client_lockstep_status(c, &mut s), OK);
    s
}

fn lockstep_events(c: *mut NetsyncClient) -> Vec<NetsyncLockstepEvent> {
    drain(|e, has| netsync_client_lockstep_poll_event(c, e, has))
}

/// One player: a fold of every confirmed frame it took.
#[derive(Default)]
struct Game {
    state: u64,
    frames: u64,
    hashes: Vec<u64>,
    snapshot_loaded: Option<u64>,
    /// Reports a wrong hash from this frame on (a game that diverged).
    diverge_at: Option<u64>,
}

fn fold(h: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(h ^ 0x9E37, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Takes every confirmed frame through the C ABI.
fn take_frames(c: *mut NetsyncClient, g: &mut Game) {
    let mut inputs = [NetsyncLockstepInput::default(); 8];
    let mut buffer = [0u8; 512];
    loop {
        let mut f = NetsyncLockstepFrame::default();
        let r = netsync_client_lockstep_next_frame(
            c,
            &mut f,
            inputs.as_mut_ptr(),
            inputs.len(),
            buffer.as_mut_ptr(),
            buffer.len(),
        );
        if r == WAIT {
            return;
        }
        assert_eq!(r, OK, "{}", last_error());
        if f.kind == NETSYNC_LOCKSTEP_ITEM_SNAPSHOT {
            g.state = u64::from_le_bytes(buffer[..8].try_into().unwrap());
            g.frames = f.frame + 1;
            g.snapshot_loaded = Some(f.frame);
            g.hashes.resize(g.frames as usize, 0);
            continue;
        }
        assert_eq!(f.kind, NETSYNC_LOCKSTEP_ITEM_FRAME);
        assert_eq!(f.frame, g.frames, "frames in order, none skipped");
        g.state = fold(g.state, &f.frame.to_le_bytes());
        for i in &inputs[..f.input_count as usize] {
            g.state = fold(g.state, &i.client_id.to_le_bytes());
            let bytes = &buffer[i.offset as usize..(i.offset + i.size) as usize];
            g.state = fold(g.state, bytes);
        }
        g.hashes.push(g.state);
        g.frames += 1;
        let hash = match g.diverge_at {
            Some(at) if f.frame >= at => g.state ^ 1,
            _ => g.state,
        };
        assert_eq!(netsync_client_lockstep_report_hash(c, f.frame, hash), OK);
    }
}

#[test]
fn three_clients_play_in_lockstep_through_the_c_abi() {
    let server = start_server_with(|c| {
        c.lockstep_min_members = 3;
        c.lockstep_input_delay = 2;
        c.lockstep_sync_interval = 10;
        c.lockstep_stall_timeout = 2.0;
    });
    let port = port_of(server);
    let clients: Vec<_> = (0..3).map(|_| connect(port, 5.0)).collect();
    for &c in &clients {
        assert_eq!(netsync_client_lockstep_join(c), OK);
        assert_eq!(status(c).state, NETSYNC_LOCKSTEP_STATE_JOINING);
    }
    let mut games: Vec<Game> = (0..3).map(|_| Game::default()).collect();
    let start = Instant::now();
    let now = || start.elapsed().as_secs_f64();
    let mut waits = 0;
    while games.iter().any(|g| g.frames < 600) && now() < 20.0 {
        for (i, &c) in clients.iter().enumerate() {
            let input = [i as u8; 4];
            let mut frame = 0u64;
            match netsync_client_lockstep_submit(c, input.as_ptr(), input.len(), &mut frame) {
                r if r == OK => {}
                r if r == WAIT => waits += 1,
                r => panic!("{r:?}: {}", last_error()),
            }
            tick(c, now());
            take_frames(c, &mut games[i]);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    for (i, g) in games.iter().enumerate() {
        assert!(
            g.frames >= 600,
            "client {i} took {} frames in {:.1} s",
            g.frames,
            now()
        );
    }
    let common = games.iter().map(|g| g.hashes.len()).min().unwrap();
    for g in &games[1..] {
        assert_eq!(
            g.hashes[..common],
            games[0].hashes[..common],
            "identical frames"
        );
    }
    assert!(waits > 0, "the sync interval held clients back");
    let s = status(clients[0]);
    assert_eq!(s.state, NETSYNC_LOCKSTEP_STATE_ACTIVE);
    assert_eq!((s.members, s.input_delay, s.sync_interval), (3, 2, 10));
    assert!(s.next_input_frame <= s.confirmed_frames + 10);
    let e = lockstep_events(clients[0]);
    assert_eq!(e[0].kind, NETSYNC_LOCKSTEP_EVENT_STARTED);
    assert_eq!(
        e.iter()
            .filter(|e| e.kind == NETSYNC_LOCKSTEP_EVENT_MEMBER_JOINED)
            .count(),
        3
    );
    assert!(!e.iter().any(|e| e.kind == NETSYNC_LOCKSTEP_EVENT_DESYNC));

    // Client 0 provides a snapshot; a late joiner starts from it.
    let at = games[0].frames - 1;
    let state = games[0].hashes[at as usize];
    assert_eq!(
        netsync_client_lockstep_provide_snapshot(clients[0], at, state.to_le_bytes().as_ptr(), 8),
        OK
    );
    let late = connect(port, 5.0);
    assert_eq!(netsync_client_lockstep_join(late), OK);
    let mut late_game = Game::default();
    let started = now();
    while late_game.frames < at + 200 && now() < started + 10.0 {
        for (i, &c) in clients.iter().enumerate() {
            let input = [i as u8; 4];
            let r = netsync_client_lockstep_submit(c, input.as_ptr(), 4, ptr::null_mut());
            assert!(r == OK || r == WAIT);
            tick(c, now());
            take_frames(c, &mut games[i]);
        }
        let r = netsync_client_lockstep_submit(late, [9u8].as_ptr(), 1, ptr::null_mut());
        assert!(r == OK || r == WAIT, "{r:?}");
        tick(late, now());
        take_frames(late, &mut late_game);
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(
        late_game.snapshot_loaded,
        Some(at),
        "started from the snapshot"
    );
    let end = (late_game.frames.min(games[0].frames)) as usize;
    assert!(end > at as usize + 100);
    assert_eq!(
        late_game.hashes[at as usize + 1..end],
        games[0].hashes[at as usize + 1..end],
        "the joiner agrees from the snapshot on"
    );
    // The relay publishes its counters every 50 ms.
    std::thread::sleep(Duration::from_millis(100));
    let mut stats = NetsyncServerStats::default();
    assert_eq!(netsync_server_stats(server, &mut stats), OK);
    assert_eq!(stats.lockstep_members, 4);
    assert_eq!(stats.lockstep_desyncs, 0);
    assert!(stats.lockstep_frames >= end as u64);
    for c in clients.into_iter().chain([late]) {
        netsync_client_free(c);
    }
    netsync_server_free(server);
}

#[test]
fn lockstep_misuse_gets_codes_and_messages() {
    let server = start_server_with(|c| c.lockstep_max_members = 1);
    let port = port_of(server);
    let c = connect(port, 5.0);
    // Not joined: submit and hash are refused, next_frame waits.
    assert_eq!(
        netsync_client_lockstep_submit(c, [1u8].as_ptr(), 1, ptr::null_mut()),
        NetsyncResult::NETSYNC_ERR_WRONG_STATE
    );
    assert!(last_error().contains("not a member"), "{}", last_error());
    assert_eq!(
        netsync_client_lockstep_report_hash(c, 0, 1),
        NetsyncResult::NETSYNC_ERR_WRONG_STATE
    );
    let mut f = NetsyncLockstepFrame::default();
    assert_eq!(
        netsync_client_lockstep_next_frame(c, &mut f, ptr::null_mut(), 0, ptr::null_mut(), 0),
        WAIT
    );
    // Sizes and pointers.
    let big = vec![0u8; NETSYNC_MAX_LOCKSTEP_INPUT + 1];
    assert_eq!(
        netsync_client_lockstep_submit(c, big.as_ptr(), big.len(), ptr::null_mut()),
        NetsyncResult::NETSYNC_ERR_TOO_LARGE
    );
    assert!(last_error().contains("NETSYNC_MAX_LOCKSTEP_INPUT"));
    assert_eq!(
        netsync_client_lockstep_submit(c, ptr::null(), 3, ptr::null_mut()),
        NetsyncResult::NETSYNC_ERR_NULL_POINTER
    );
    let huge = vec![0u8; NETSYNC_MAX_LOCKSTEP_SNAPSHOT + 1];
    assert_eq!(
        netsync_client_lockstep_provide_snapshot(c, 0, huge.as_ptr(), huge.len()),
        NetsyncResult::NETSYNC_ERR_TOO_LARGE
    );
    assert_eq!(
        netsync_client_lockstep_next_frame(
            c,
            ptr::null_mut(),
            ptr::null_mut(),
            0,
            ptr::null_mut(),
            0
        ),
        NetsyncResult::NETSYNC_ERR_NULL_POINTER
    );
    assert_eq!(
        netsync_client_lockstep_next_frame(c, &mut f, ptr::null_mut(), 4, ptr::null_mut(), 0),
        NetsyncResult::NETSYNC_ERR_NULL_POINTER
    );
    assert_eq!(
        netsync_client_lockstep_status(c, ptr::null_mut()),
        NetsyncResult::NETSYNC_ERR_NULL_POINTER
    );
    assert_eq!(
        netsync_client_lockstep_join(ptr::null_mut()),
        NetsyncResult::NETSYNC_ERR_NULL_POINTER
    );
    // Waiting is not a failure: the last error is left alone.
    let before = last_error();
    assert_eq!(
        netsync_client_lockstep_next_frame(c, &mut f, ptr::null_mut(), 0, ptr::null_mut(), 0),
        WAIT
    );
    assert_eq!(last_error(), before);
    // Join, play a few frames; a buffer too small keeps the frame queued.
    assert_eq!(netsync_client_lockstep_join(c), OK);
    let start = Instant::now();
    let now = || start.elapsed().as_secs_f64();
    let mut got = NetsyncResult::NETSYNC_WAIT;
    while now() < 5.0 && got == WAIT {
        let r = netsync_client_lockstep_submit(c, b"abcdef".as_ptr(), 6, ptr::null_mut());
        assert!(r == OK || r == WAIT);
        tick(c, now());
        // Frames 0..input_delay are empty: look for one with bytes.
        loop {
            let r = netsync_client_lockstep_next_frame(
                c,
                &mut f,
                ptr::null_mut(),
                0,
                ptr::null_mut(),
                0,
            );
            if r == NetsyncResult::NETSYNC_ERR_BUFFER_TOO_SMALL && f.size > 0 {
                got = r;
                break;
            }
            if r == WAIT {
                break;
            }
            // An empty frame with one input needs room for that input.
            assert_eq!(r, NetsyncResult::NETSYNC_ERR_BUFFER_TOO_SMALL);
            let mut one = [NetsyncLockstepInput::default(); 1];
            assert_eq!(
                netsync_client_lockstep_next_frame(
                    c,
                    &mut f,
                    one.as_mut_ptr(),
                    1,
                    ptr::null_mut(),
                    0
                ),
                OK
            );
            assert_eq!(one[0].size, 0);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(got, NetsyncResult::NETSYNC_ERR_BUFFER_TOO_SMALL);
    assert_eq!((f.input_count, f.size), (1, 6), "the needs are written");
    let waiting = f.frame;
    let mut inputs = [NetsyncLockstepInput::default(); 1];
    let mut buffer = [0u8; 6];
    assert_eq!(
        netsync_client_lockstep_next_frame(
            c,
            &mut f,
            inputs.as_mut_ptr(),
            1,
            buffer.as_mut_ptr(),
            6
        ),
        OK
    );
    assert_eq!((f.frame, &buffer), (waiting, b"abcdef"), "it stayed queued");
    // A hash for a frame not taken yet, a snapshot of one.
    assert_eq!(
        netsync_client_lockstep_report_hash(c, f.frame + 1000, 1),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    assert_eq!(
        netsync_client_lockstep_provide_snapshot(c, f.frame + 1000, ptr::null(), 0),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    // One snapshot a second at most.
    assert_eq!(
        netsync_client_lockstep_provide_snapshot(c, f.frame, b"state".as_ptr(), 5),
        OK
    );
    assert_eq!(
        netsync_client_lockstep_provide_snapshot(c, f.frame, b"state".as_ptr(), 5),
        NetsyncResult::NETSYNC_ERR_LIMIT
    );
    // A second client finds the match full.
    let full = connect(port, 5.0);
    assert_eq!(netsync_client_lockstep_join(full), OK);
    let mut refused = None;
    while now() < 10.0 && refused.is_none() {
        tick(full, now());
        refused = lockstep_events(full)
            .into_iter()
            .find(|e| e.kind == NETSYNC_LOCKSTEP_EVENT_REFUSED);
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        refused.map(|e| e.reason),
        Some(NETSYNC_LOCKSTEP_REFUSED_FULL)
    );
    assert_eq!(status(full).state, NETSYNC_LOCKSTEP_STATE_IDLE);
    // Settings out of range are named.
    let mut config = unsafe { std::mem::zeroed::<NetsyncServerConfig>() };
    assert_eq!(netsync_server_config_default(&mut config), OK);
    config.lockstep_input_delay = config.lockstep_sync_interval;
    let mut bad = ptr::null_mut();
    assert_eq!(
        netsync_server_start(&config, ptr::null(), &mut bad),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    assert!(
        last_error().contains("lockstep_input_delay"),
        "{}",
        last_error()
    );
    assert!(bad.is_null());
    netsync_client_free(full);
    netsync_client_free(c);
    netsync_server_free(server);
}

#[test]
fn the_embedded_server_hears_of_stalls_and_desyncs_and_sets_every_lockstep_limit() {
    let mut defaults = unsafe { std::mem::zeroed::<NetsyncServerConfig>() };
    assert_eq!(netsync_server_config_default(&mut defaults), OK);
    assert_eq!(
        (
            defaults.lockstep_history_bytes,
            defaults.lockstep_hash_window
        ),
        (16 << 20, 600)
    );
    let refused = try_start_server_with(|c| c.lockstep_hash_window = 0);
    assert_eq!(refused, Err(NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT));
    assert!(
        last_error().contains("lockstep_hash_window"),
        "{}",
        last_error()
    );
    let refused = try_start_server_with(|c| c.lockstep_history_bytes = 10);
    assert_eq!(refused, Err(NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT));
    assert!(
        last_error().contains("lockstep_history_bytes"),
        "{}",
        last_error()
    );

    let server = start_server_with(|c| {
        c.lockstep_min_members = 3;
        c.lockstep_input_delay = 1;
        c.lockstep_sync_interval = 8;
        c.lockstep_stall_timeout = 0.3;
        c.lockstep_hash_window = 32;
        c.lockstep_history_bytes = 1 << 20;
    });
    let port = port_of(server);
    let clients: Vec<_> = (0..3).map(|_| connect(port, 5.0)).collect();
    for &c in &clients {
        assert_eq!(netsync_client_lockstep_join(c), OK);
    }
    let mut games: Vec<Game> = (0..3).map(|_| Game::default()).collect();
    games[2].diverge_at = Some(40);
    let start = Instant::now();
    let now = || start.elapsed().as_secs_f64();
    // All three play to frame 120; then client 2 stops sending input.
    let mut events = Vec::new();
    let (mut desync, mut stalled) = (None, None);
    while (desync.is_none() || stalled.is_none()) && now() < 20.0 {
        for (i, &c) in clients.iter().enumerate() {
            if i == 2 && games[2].frames >= 120 {
                continue;
            }
            let input = [i as u8; 2];
            let r = netsync_client_lockstep_submit(c, input.as_ptr(), 2, ptr::null_mut());
            assert!(r == OK || r == WAIT, "{r:?}: {}", last_error());
            tick(c, now());
            take_frames(c, &mut games[i]);
        }
        for e in server_events(server) {
            match e.kind {
                NETSYNC_SERVER_EVENT_LOCKSTEP_DESYNC => desync = Some(e),
                NETSYNC_SERVER_EVENT_LOCKSTEP_STALLED => stalled = Some(e),
                _ => {}
            }
            events.push(e);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    // Ids are known once connected.
    let ids: Vec<u32> = clients
        .iter()
        .map(|&c| {
            let mut s = NetsyncClientStats::default();
            assert_eq!(netsync_client_stats(c, &mut s), OK);
            s.client_id
        })
        .collect();
    let desync = desync.expect("the server heard of the desync");
    assert_eq!((desync.client_id, desync.entity_id), (ids[2], 40));
    let desyncs = events
        .iter()
        .filter(|e| e.kind == NETSYNC_SERVER_EVENT_LOCKSTEP_DESYNC)
        .count();
    assert_eq!(desyncs, 1, "only the diverging client, once: {events:?}");
    let stalled = stalled.expect("the server heard of the stall");
    assert_eq!(stalled.client_id, ids[2]);
    assert!(
        stalled.entity_id >= 120,
        "stalled at frame {}",
        stalled.entity_id
    );
    for c in clients {
        netsync_client_free(c);
    }
    netsync_server_free(server);
}
