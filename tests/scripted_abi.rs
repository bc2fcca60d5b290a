//! Scripted elements through the C ABI only, on real UDP on loopback: the
//! path configuration from a buffer and a file (errors that name the
//! line), evaluation without a network, an embedded server that spawns
//! and despawns elements, clients that show them in their tick batch
//! where the configuration puts them, with appear, expire and refusal
//! events.

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::ptr;
use std::time::{Duration, Instant};

use netsync::ffi::client::*;
use netsync::ffi::result::{netsync_last_error, NetsyncResult};
use netsync::ffi::scripted::*;
use netsync::ffi::server::*;
use netsync::ffi::server_game::netsync_server_time;
use netsync::ffi::types::NetsyncTransform;

mod common;
use common::*;

const PATHS: &str = "\
netsync-paths 1
plane xz
path 1
  speed 3
  end repeat
  segment steps=20 duration=0.05 turn_step=9
path 2
  speed 2
  segment steps=10 duration=0.1 turn=45 speed_step=0.1
";

fn last_error() -> String {
    unsafe { CStr::from_ptr(netsync_last_error()) }
        .to_string_lossy()
        .into_owned()
}

fn parse(text: &str) -> Result<*mut NetsyncScriptedConfig, (NetsyncResult, String)> {
    let mut config = ptr::null_mut();
    match netsync_scripted_config_parse(text.as_ptr(), text.len(), &mut config) {
        r if r == OK => Ok(config),
        r => {
            assert!(config.is_null(), "written on failure");
            Err((r, last_error()))
        }
    }
}

fn spawn(element_id: u64, path_id: u32, start: f64, life: f64) -> NetsyncScriptedSpawn {
    NetsyncScriptedSpawn {
        element_id,
        path_id,
        start,
        life,
        x: element_id as f64 * 0.5,
        y: -3.0,
        rotate: 0.3,
    }
}

#[test]
fn configurations_parse_from_buffers_and_files_with_errors_that_name_the_line() {
    let a = parse(PATHS).unwrap();
    let (r, e) = parse("netsync-paths 1\npath 1\n  segment steps=5\n").unwrap_err();
    assert_eq!(r, NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT);
    assert!(
        e.contains("line 3") && e.contains("`duration` is required"),
        "{e}"
    );
    let (r, e) = parse("netsync-paths 1\npath 1\nsegment steps=1 duration=1 dir=up\n").unwrap_err();
    assert_eq!(r, NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT);
    assert!(
        e.contains("line 3: segment dir must be left or right"),
        "{e}"
    );
    let big = vec![b'#'; (1 << 20) + 1];
    let mut out = ptr::null_mut();
    assert_eq!(
        netsync_scripted_config_parse(big.as_ptr(), big.len(), &mut out),
        NetsyncResult::NETSYNC_ERR_TOO_LARGE
    );
    assert_eq!(
        netsync_scripted_config_parse(ptr::null(), 4, &mut out),
        NetsyncResult::NETSYNC_ERR_NULL_POINTER
    );
    // The same text from a file: the same fingerprint (comments do not count).
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fish.paths");
    std::fs::write(&path, format!("# fish\n{PATHS}")).unwrap();
    let cpath = CString::new(path.to_str().unwrap()).unwrap();
    let mut b = ptr::null_mut();
    assert_eq!(
        netsync_scripted_config_load_file(cpath.as_ptr(), &mut b),
        OK
    );
    let (mut fa, mut fb, mut paths) = (0u64, 0u64, 0u32);
    assert_eq!(netsync_scripted_config_fingerprint(a, &mut fa), OK);
    assert_eq!(netsync_scripted_config_fingerprint(b, &mut fb), OK);
    assert_eq!(netsync_scripted_config_path_count(b, &mut paths), OK);
    assert_eq!((fa, paths), (fb, 2));
    std::fs::write(&path, "netsync-paths 1\npath 1\n").unwrap();
    let mut c = ptr::null_mut();
    assert_eq!(
        netsync_scripted_config_load_file(cpath.as_ptr(), &mut c),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    assert!(
        last_error().contains("fish.paths: line 2: path 1 has no `segment` line"),
        "{}",
        last_error()
    );
    let missing = CString::new("/nonexistent/netsync.paths").unwrap();
    assert_eq!(
        netsync_scripted_config_load_file(missing.as_ptr(), &mut c),
        NetsyncResult::NETSYNC_ERR_IO
    );
    // Evaluating needs a live element on a known path.
    let mut t = NetsyncTransform::default();
    assert_eq!(
        netsync_scripted_evaluate(a, &spawn(7, 1, 10.0, 5.0), 12.0, &mut t),
        OK
    );
    assert_eq!((t.entity_id, t.flags), (7, NETSYNC_TRANSFORM_SCRIPTED));
    assert_eq!(t.position.y, 0.0, "the xz plane");
    assert_eq!(
        netsync_scripted_evaluate(a, &spawn(7, 1, 10.0, 5.0), 9.0, &mut t),
        NetsyncResult::NETSYNC_ERR_WRONG_STATE
    );
    assert_eq!(
        netsync_scripted_evaluate(a, &spawn(7, 1, 10.0, 5.0), 15.0, &mut t),
        NetsyncResult::NETSYNC_ERR_WRONG_STATE
    );
    assert_eq!(
        netsync_scripted_evaluate(a, &spawn(7, 9, 10.0, 5.0), 12.0, &mut t),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    assert!(last_error().contains("path 9"), "{}", last_error());
    assert_eq!(
        netsync_scripted_evaluate(a, &spawn(7, 1, 10.0, f64::NAN), 12.0, &mut t),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    netsync_scripted_config_free(a);
    netsync_scripted_config_free(b);
    netsync_scripted_config_free(ptr::null_mut());
    assert_eq!(
        netsync_scripted_evaluate(a, &spawn(7, 1, 10.0, 5.0), 12.0, &mut t),
        NetsyncResult::NETSYNC_ERR_INVALID_HANDLE
    );
}

#[test]
fn an_embedded_server_spawns_elements_that_clients_show_where_the_paths_put_them() {
    let server = start_server_with(|_| {});
    let port = port_of(server);
    let config = parse(PATHS).unwrap();
    let other = parse(&PATHS.replace("turn_step=9", "turn_step=8")).unwrap();
    // No configuration yet: refused with a reason.
    assert_eq!(
        netsync_server_spawn_scripted(server, &spawn(1, 1, 0.0, 1.0)),
        NetsyncResult::NETSYNC_ERR_WRONG_STATE
    );
    assert_eq!(netsync_server_set_scripted_config(server, config), OK);
    assert_eq!(
        netsync_server_spawn_scripted(server, &spawn(1, 3, 0.0, 1.0)),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    assert!(last_error().contains("path 3"), "{}", last_error());
    assert_eq!(
        netsync_server_spawn_scripted(server, &spawn(1, 1, 0.0, -1.0)),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    assert_eq!(
        netsync_server_despawn_scripted(server, 12345),
        NetsyncResult::NETSYNC_ERR_UNKNOWN_ENTITY
    );
    // Three clients: the right configuration, another one, none.
    let clients = [connect(port, 5.0), connect(port, 5.0), connect(port, 5.0)];
    assert_eq!(netsync_client_set_scripted_config(clients[0], config), OK);
    assert_eq!(netsync_client_set_scripted_config(clients[1], other), OK);
    let start = Instant::now();
    let now = || start.elapsed().as_secs_f64();
    // Let everyone connect, then spawn 40 elements half a second ahead:
    // ten live 1.5 s, the rest 20 s.
    while now() < 0.5 {
        for &c in &clients {
            tick(c, now());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut st = 0.0;
    assert_eq!(netsync_server_time(server, &mut st), OK);
    let spawns: Vec<NetsyncScriptedSpawn> = (1..=40)
        .map(|i| {
            spawn(
                100 + i,
                1 + (i % 2) as u32,
                st + 0.5,
                if i <= 10 { 1.5 } else { 20.0 },
            )
        })
        .collect();
    for s in &spawns {
        assert_eq!(netsync_server_spawn_scripted(server, s), OK);
    }
    let by_id: HashMap<u64, NetsyncScriptedSpawn> =
        spawns.iter().map(|s| (s.element_id, *s)).collect();
    let mut events: [Vec<NetsyncClientEvent>; 3] = Default::default();
    let mut worst = 0.0f32;
    let mut most = 0;
    let mut despawned = false;
    while now() < 3.5 {
        for (i, &c) in clients.iter().enumerate() {
            let mut out = vec![NetsyncTransform::default(); 64];
            let mut count = 0;
            assert_eq!(
                netsync_client_tick(c, now(), out.as_mut_ptr(), out.len(), &mut count),
                OK
            );
            events[i].extend(common::events(c));
            if i != 0 {
                assert_eq!(count, 0, "client {i} shows nothing it cannot compute");
                continue;
            }
            let mut at = 0.0;
            if netsync_client_scripted_time(c, &mut at) != OK {
                continue;
            }
            let shown: Vec<_> = out[..count]
                .iter()
                .filter(|t| t.flags == NETSYNC_TRANSFORM_SCRIPTED)
                .collect();
            most = most.max(shown.len());
            for t in shown {
                let mut expect = NetsyncTransform::default();
                assert_eq!(
                    netsync_scripted_evaluate(config, &by_id[&t.entity_id], at, &mut expect),
                    OK
                );
                let d = (t.position.x - expect.position.x).abs()
                    + (t.position.z - expect.position.z).abs();
                worst = worst.max(d);
            }
        }
        if !despawned && now() > 2.5 {
            despawned = true;
            assert_eq!(netsync_server_despawn_scripted(server, 140), OK);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(most, 40, "every element shown in the tick batch");
    assert!(worst < 1e-4, "{worst}");
    let removed = |e: &[NetsyncClientEvent], reason: u32| {
        e.iter()
            .filter(|e| e.kind == NETSYNC_EVENT_ENTITY_REMOVED && e.reason == reason)
            .map(|e| e.entity_id)
            .collect::<Vec<_>>()
    };
    let appeared = events[0]
        .iter()
        .filter(|e| e.kind == NETSYNC_EVENT_ENTITY_APPEARED)
        .count();
    assert_eq!(appeared, 40);
    let mut expired = removed(&events[0], NETSYNC_REMOVED_EXPIRED);
    expired.sort();
    assert_eq!(expired, (101..=110).collect::<Vec<_>>());
    assert_eq!(removed(&events[0], NETSYNC_REMOVED_UNREGISTERED), vec![140]);
    let refusals = |e: &[NetsyncClientEvent]| {
        e.iter()
            .filter(|e| e.kind == NETSYNC_EVENT_SCRIPTED_REFUSED)
            .map(|e| e.reason)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        refusals(&events[1]),
        vec![NETSYNC_SCRIPTED_REFUSED_CONFIG_MISMATCH; 40]
    );
    assert_eq!(
        refusals(&events[2]),
        vec![NETSYNC_SCRIPTED_REFUSED_NO_CONFIG; 40]
    );
    // The server computes the same elements at its own clock.
    assert_eq!(netsync_server_time(server, &mut st), OK);
    let mut out = [NetsyncTransform::default(); 4];
    let mut count = 0;
    assert_eq!(
        netsync_server_scripted_tick(server, st, out.as_mut_ptr(), out.len(), &mut count),
        NetsyncResult::NETSYNC_ERR_BUFFER_TOO_SMALL
    );
    assert_eq!(count, 29, "40 spawned, 10 expired, 1 despawned");
    let mut expect = NetsyncTransform::default();
    assert_eq!(
        netsync_scripted_evaluate(config, &by_id[&out[0].entity_id], st, &mut expect),
        OK
    );
    assert_eq!(out[0], expect);
    let mut s = NetsyncServerStats::default();
    assert_eq!(netsync_server_stats(server, &mut s), OK);
    assert_eq!(s.scripted_elements, 29);
    let mut cs = NetsyncClientStats::default();
    assert_eq!(netsync_client_stats(clients[0], &mut cs), OK);
    assert_eq!(cs.scripted_elements, 29);
    for c in clients {
        netsync_client_free(c);
    }
    netsync_scripted_config_free(config);
    netsync_scripted_config_free(other);
    netsync_server_free(server);
}
