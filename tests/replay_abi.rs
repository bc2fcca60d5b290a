//! Recording and replay through the C ABI, on real UDP on loopback: a
//! client records, a replay of its file ticks like it did (same
//! transforms for the same times), seeks, changes speed; damaged files
//! and misuse get error codes with clear messages.

use std::ffi::{CStr, CString};
use std::ptr;
use std::time::{Duration, Instant};

use netsync::ffi::client::*;
use netsync::ffi::replay::*;
use netsync::ffi::result::{netsync_last_error, NetsyncResult};
use netsync::ffi::server::*;
use netsync::ffi::types::*;

mod common;
use common::*;

fn last_error() -> String {
    // SAFETY: the library returns a valid C string for this thread.
    unsafe { CStr::from_ptr(netsync_last_error()) }
        .to_string_lossy()
        .into_owned()
}

fn replay_tick_at(replay: *mut NetsyncReplay, t: f64) -> Vec<NetsyncTransform> {
    let mut out = [NetsyncTransform::default(); 16];
    let mut count = 0;
    assert_eq!(
        netsync_replay_tick_at(replay, t, out.as_mut_ptr(), 16, &mut count),
        OK,
        "{}",
        last_error()
    );
    out[..count].to_vec()
}

/// A relay, a mover (entity 7 on a circle) and a recording viewer, for
/// `seconds`; returns the recording's path and what the viewer showed
/// at each tick.
fn record_a_session(dir: &std::path::Path) -> (CString, Vec<(f64, Vec<NetsyncTransform>)>) {
    let server = start_server(0, 5.0);
    let port = port_of(server);
    let mover = connect(port, 5.0);
    let viewer = connect(port, 5.0);
    let path = CString::new(dir.join("viewer.nsrec").to_str().unwrap()).unwrap();
    assert_eq!(
        netsync_client_record(viewer, path.as_ptr()),
        OK,
        "{}",
        last_error()
    );
    assert_eq!(
        netsync_client_record(viewer, path.as_ptr()),
        NetsyncResult::NETSYNC_ERR_WRONG_STATE,
        "a second recording"
    );
    assert_eq!(netsync_client_register_entity(mover, 7), OK);
    let start = Instant::now();
    let mut live = Vec::new();
    while start.elapsed() < Duration::from_secs(3) {
        let now = start.elapsed().as_secs_f64();
        if let Some(st) = server_time(mover, now) {
            assert_eq!(netsync_client_set_entity_state(mover, &circle(7, st)), OK);
        }
        tick(mover, now);
        live.push((now, tick(viewer, now)));
        std::thread::sleep(Duration::from_millis(16));
    }
    assert_eq!(netsync_client_stop_recording(viewer), OK);
    assert_eq!(
        netsync_client_stop_recording(viewer),
        NetsyncResult::NETSYNC_ERR_WRONG_STATE
    );
    assert_eq!(
        netsync_client_record(viewer, path.as_ptr()),
        NetsyncResult::NETSYNC_ERR_WRONG_STATE
    );
    assert!(
        last_error().contains("before the first tick"),
        "{}",
        last_error()
    );
    netsync_client_free(mover);
    netsync_client_free(viewer);
    netsync_server_free(server);
    (path, live)
}

#[test]
fn a_replay_shows_what_the_client_showed_and_refuses_damage() {
    let dir = std::env::temp_dir().join(format!("netsync-replay-abi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (path, live) = record_a_session(&dir);
    assert!(live
        .iter()
        .any(|(_, shown)| shown.iter().any(|t| t.entity_id == 7)));

    let mut replay = ptr::null_mut();
    assert_eq!(
        netsync_replay_open(path.as_ptr(), &mut replay),
        OK,
        "{}",
        last_error()
    );
    let mut info = NetsyncReplayInfo::default();
    assert_eq!(netsync_replay_info(replay, &mut info), OK);
    assert_eq!(info.kind, NETSYNC_RECORDING_CLIENT);
    assert_ne!(info.client_id, 0);
    assert_eq!(info.ticks, live.len() as u64);
    assert_eq!(info.entities, 1);
    assert!(
        info.frames > 50 && info.file_bytes > 0 && info.raw_bytes > 0,
        "{info:?}"
    );
    let mut position = 0.0;
    assert_eq!(
        netsync_replay_position(replay, &mut position),
        NetsyncResult::NETSYNC_ERR_WRONG_STATE
    );

    // Same times, same transforms, bit for bit.
    for (t, shown) in &live {
        assert_eq!(&replay_tick_at(replay, *t), shown, "at {t}");
    }
    // Going back replays from the start: the same again.
    let (t, shown) = &live[live.len() / 2];
    assert_eq!(&replay_tick_at(replay, *t), shown);
    assert_eq!(netsync_replay_position(replay, &mut position), OK);
    assert_eq!(position, *t);

    // On the engine's clock: seek, then play at double speed.
    assert_eq!(netsync_replay_seek(replay, 1.0), OK);
    assert_eq!(netsync_replay_set_speed(replay, 2.0), OK);
    let mut out = [NetsyncTransform::default(); 16];
    let mut count = 0;
    assert_eq!(
        netsync_replay_tick(replay, 500.0, out.as_mut_ptr(), 16, &mut count),
        OK
    );
    assert_eq!(netsync_replay_position(replay, &mut position), OK);
    assert_eq!(position, 1.0);
    assert_eq!(
        netsync_replay_tick(replay, 500.25, out.as_mut_ptr(), 16, &mut count),
        OK
    );
    assert_eq!(netsync_replay_position(replay, &mut position), OK);
    assert!((position - 1.5).abs() < 1e-9, "{position}");
    assert_eq!(count, 1);
    assert_eq!(
        netsync_replay_tick(replay, 501.0, ptr::null_mut(), 0, &mut count),
        NetsyncResult::NETSYNC_ERR_BUFFER_TOO_SMALL
    );
    assert_eq!(count, 1);

    // Misuse.
    assert_eq!(
        netsync_replay_set_speed(replay, f64::NAN),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    assert_eq!(
        netsync_replay_set_speed(replay, -1.0),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    assert_eq!(
        netsync_replay_seek(replay, f64::INFINITY),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    assert_eq!(
        netsync_replay_tick_at(replay, 1.0, out.as_mut_ptr(), 16, ptr::null_mut()),
        NetsyncResult::NETSYNC_ERR_NULL_POINTER
    );
    assert_eq!(
        netsync_replay_info(replay, ptr::null_mut()),
        NetsyncResult::NETSYNC_ERR_NULL_POINTER
    );
    netsync_replay_free(replay);
    assert_eq!(
        netsync_replay_info(replay, &mut info),
        NetsyncResult::NETSYNC_ERR_INVALID_HANDLE,
        "after free"
    );
    netsync_replay_free(replay); // twice: a no-op

    // Damaged files.
    let bytes = std::fs::read(path.to_str().unwrap()).unwrap();
    let open = |data: &[u8]| {
        let mut r = ptr::null_mut();
        let code = netsync_replay_open_buffer(data.as_ptr(), data.len(), &mut r);
        netsync_replay_free(r);
        (code, last_error())
    };
    let (code, message) = open(&bytes[..bytes.len() - 3]);
    assert_eq!(code, NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT);
    assert!(message.contains("truncated"), "{message}");
    let mut flipped = bytes.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x40;
    let (code, message) = open(&flipped);
    assert_eq!(code, NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT);
    assert!(message.contains("corrupt"), "{message}");
    let (code, message) = open(b"GIF89a not a recording");
    assert_eq!(code, NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT);
    assert!(message.contains("not a netsync recording"), "{message}");
    let mut newer = bytes.clone();
    newer[8] = 2;
    let (_, message) = open(&newer);
    assert!(message.contains("version 2 is not supported"), "{message}");
    let missing = CString::new(dir.join("missing.nsrec").to_str().unwrap()).unwrap();
    let mut r = ptr::null_mut();
    assert_eq!(
        netsync_replay_open(missing.as_ptr(), &mut r),
        NetsyncResult::NETSYNC_ERR_IO
    );
    assert_eq!(
        netsync_replay_open(ptr::null(), &mut r),
        NetsyncResult::NETSYNC_ERR_NULL_POINTER
    );
    assert_eq!(
        netsync_replay_open_buffer(ptr::null(), 4, &mut r),
        NetsyncResult::NETSYNC_ERR_NULL_POINTER
    );
    let nowhere = CString::new("/nonexistent-dir/x.nsrec").unwrap();
    let c = connect(1, 5.0);
    assert_eq!(
        netsync_client_record(c, nowhere.as_ptr()),
        NetsyncResult::NETSYNC_ERR_IO
    );
    netsync_client_free(c);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_embedded_server_records_states_rights_and_every_command() {
    use netsync::core::app_message::AppMessageKind;
    use netsync::ffi::messages::*;
    use netsync::replay::format::{read_recording, Entry, RecordingKind};

    let dir = std::env::temp_dir().join(format!("netsync-server-rec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("relay.nsrec");
    let c_path = CString::new(path.to_str().unwrap()).unwrap();
    let mut config = unsafe { std::mem::zeroed::<NetsyncServerConfig>() };
    assert_eq!(netsync_server_config_default(&mut config), OK);
    config.port = 0;
    let ip = CString::new("127.0.0.1").unwrap();
    // A file that cannot be created: an error naming it, nothing started.
    let mut server = ptr::null_mut();
    let bad = CString::new(dir.join("missing/relay.nsrec").to_str().unwrap()).unwrap();
    assert_eq!(
        netsync_server_start_recording(&config, ip.as_ptr(), bad.as_ptr(), &mut server),
        NetsyncResult::NETSYNC_ERR_IO
    );
    assert!(
        last_error().contains("missing/relay.nsrec"),
        "{}",
        last_error()
    );
    assert!(server.is_null());
    assert_eq!(
        netsync_server_start_recording(&config, ip.as_ptr(), ptr::null(), &mut server),
        NetsyncResult::NETSYNC_ERR_NULL_POINTER
    );
    assert_eq!(
        netsync_server_start_recording(&config, ip.as_ptr(), c_path.as_ptr(), &mut server),
        OK,
        "{}",
        last_error()
    );
    let port = port_of(server);
    let (owner, other) = (connect(port, 5.0), connect(port, 5.0));
    assert_eq!(netsync_client_register_entity(owner, 7), OK);
    assert_eq!(netsync_client_register_component(owner, 7, 3, true), OK);
    assert_eq!(netsync_client_register_component(other, 7, 3, true), OK);
    let start = Instant::now();
    let now = || start.elapsed().as_secs_f64();
    let mut sent = false;
    while now() < 2.0 {
        let t = now();
        assert_eq!(netsync_client_set_entity_state(owner, &circle(7, t)), OK);
        if t > 0.8 && !sent {
            sent = true;
            let hp = b"hp=9";
            assert_eq!(
                netsync_client_set_component_state(owner, 7, 3, hp.as_ptr(), hp.len()),
                OK
            );
            let open = b"open";
            assert_eq!(
                netsync_client_send_component_command(other, 7, 3, open.as_ptr(), open.len()),
                OK,
                "{}",
                last_error()
            );
            let go = b"go";
            assert_eq!(
                netsync_client_send_global_command(other, go.as_ptr(), go.len()),
                OK
            );
        }
        tick(owner, t);
        tick(other, t);
        std::thread::sleep(Duration::from_millis(16));
    }
    netsync_client_free(owner);
    netsync_client_free(other);
    netsync_server_free(server); // ends and completes the file

    let recording = read_recording(&std::fs::read(&path).unwrap()).expect("a whole recording");
    assert_eq!(recording.kind, RecordingKind::Relay);
    let frames = recording
        .entries
        .iter()
        .filter(
            |(_, e)| matches!(e, Entry::Frame { samples, .. } if samples.iter().any(|s| s.0 == 7)),
        )
        .count();
    assert!(frames > 5, "{frames} states of entity 7");
    assert!(recording.entries.iter().any(|(_, e)| matches!(
        e,
        Entry::Right {
            entity: 7,
            epoch: 1,
            ..
        }
    )));
    let message = |kind: AppMessageKind, data: &[u8]| {
        recording
            .entries
            .iter()
            .any(|(_, e)| matches!(e, Entry::Message(m) if m.kind == kind && m.data == data))
    };
    assert!(message(AppMessageKind::ComponentState, b"hp=9"));
    assert!(message(AppMessageKind::ComponentCommand, b"open"));
    assert!(message(AppMessageKind::GlobalCommand, b"go"));
    let _ = std::fs::remove_dir_all(&dir);
}
