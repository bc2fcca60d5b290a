//! The relay embedded in a game server, through the C ABI on real UDP on
//! loopback: server-owned entities and components reach the clients,
//! commands reach the server, the server's commands reach the clients,
//! and calls the relay refuses come back as events.

use std::ptr;
use std::time::{Duration, Instant};

use netsync::ffi::client::*;
use netsync::ffi::messages::*;
use netsync::ffi::result::NetsyncResult;
use netsync::ffi::server::*;
use netsync::ffi::server_game::*;

mod common;
use common::*;

const DOOR: u64 = 500;
const DOOR_STATE: u32 = 7;

/// Every message `poll` gives, with its bytes (read through one buffer).
fn messages(
    mut poll: impl FnMut(&mut NetsyncMessage, &mut [u8], &mut bool) -> NetsyncResult,
) -> Vec<(NetsyncMessage, Vec<u8>)> {
    let mut buffer = vec![0u8; NETSYNC_MAX_PAYLOAD];
    drain(|(m, bytes): &mut (NetsyncMessage, Vec<u8>), has| {
        let result = poll(m, &mut buffer, has);
        *bytes = buffer[..m.size.min(buffer.len())].to_vec();
        result
    })
}

fn server_messages(server: *mut NetsyncServer) -> Vec<(NetsyncMessage, Vec<u8>)> {
    messages(|m, buf, has| netsync_server_poll_message(server, m, buf.as_mut_ptr(), buf.len(), has))
}

fn client_messages(client: *mut NetsyncClient) -> Vec<(NetsyncMessage, Vec<u8>)> {
    messages(|m, buf, has| netsync_client_poll_message(client, m, buf.as_mut_ptr(), buf.len(), has))
}

fn client_id(client: *mut NetsyncClient) -> u32 {
    let mut stats = NetsyncClientStats::default();
    assert_eq!(netsync_client_stats(client, &mut stats), OK);
    stats.client_id
}

#[test]
fn an_embedded_server_moves_its_entities_and_trades_commands_with_clients() {
    let server = start_server_with(|_| {});
    let port = port_of(server);
    let clients = [connect(port, 5.0), connect(port, 5.0)];
    assert_eq!(netsync_client_register_entity(clients[0], 1), OK);
    assert_eq!(
        netsync_client_register_component(clients[0], DOOR, DOOR_STATE, true),
        OK
    );
    let start = Instant::now();
    let now = || start.elapsed().as_secs_f64();
    let mut sent = false;
    let mut shown_errors = Vec::new();
    let mut server_got = Vec::new();
    let mut client_got: [Vec<(NetsyncMessage, Vec<u8>)>; 2] = [vec![], vec![]];
    let mut client_events: [Vec<NetsyncClientEvent>; 2] = [vec![], vec![]];
    while now() < 3.0 {
        let t = now();
        // The server moves its door on a circle in server time.
        let mut st = 0.0;
        assert_eq!(netsync_server_time(server, &mut st), OK);
        assert_eq!(
            netsync_server_set_entity_state(server, &circle(DOOR, st)),
            OK
        );
        if !sent && t > 1.0 {
            sent = true;
            assert_eq!(
                netsync_server_set_component_state(server, DOOR, DOOR_STATE, b"open".as_ptr(), 4),
                OK
            );
            assert_eq!(
                netsync_server_send_global_command(server, b"round 2".as_ptr(), 7),
                OK
            );
            assert_eq!(
                netsync_client_send_component_command(
                    clients[0],
                    DOOR,
                    DOOR_STATE,
                    b"knock".as_ptr(),
                    5
                ),
                OK
            );
            assert_eq!(
                netsync_client_send_global_command(clients[1], b"gg".as_ptr(), 2),
                OK
            );
            // Entity 1 is client 0's: the server may not move it.
            assert_eq!(netsync_server_set_entity_state(server, &circle(1, st)), OK);
        }
        for (i, &c) in clients.iter().enumerate() {
            if let Some(cst) = server_time(c, t) {
                if i == 0 {
                    assert_eq!(netsync_client_set_entity_state(c, &circle(1, cst)), OK);
                }
            }
            let mut render = 0.0;
            let shown = tick(c, t);
            assert_eq!(
                netsync_client_render_time(
                    c,
                    netsync::ffi::timeline::NETSYNC_MODE_ADAPTIVE,
                    &mut render
                ),
                OK
            );
            if t > 1.5 {
                for s in shown.iter().filter(|s| s.entity_id == DOOR) {
                    let truth = circle(DOOR, render).position;
                    shown_errors.push(
                        ((s.position.x - truth.x).powi(2) + (s.position.z - truth.z).powi(2))
                            .sqrt(),
                    );
                }
            }
            client_got[i].extend(client_messages(c));
            client_events[i].extend(events(c));
        }
        server_got.extend(server_messages(server));
        std::thread::sleep(Duration::from_millis(16));
    }
    let ids = [client_id(clients[0]), client_id(clients[1])];

    // The door is shown where the server moves it.
    assert!(!shown_errors.is_empty(), "the server's entity never showed");
    let worst = shown_errors.iter().copied().fold(0.0, f32::max);
    eprintln!("server-owned entity: worst alignment {worst:.4} m");
    assert!(worst < 0.05, "server-owned entity shown {worst} m off");

    // Commands for the server: the component command for its door, and
    // every global command (its own and the client's).
    let command = server_got
        .iter()
        .find(|(m, _)| m.kind == NETSYNC_MESSAGE_COMPONENT_COMMAND)
        .expect("the component command never reached the server");
    assert_eq!(
        (
            command.0.sender,
            command.0.entity_id,
            command.0.component_id
        ),
        (ids[0], DOOR, DOOR_STATE)
    );
    assert_eq!(command.1, b"knock");
    let globals: Vec<&[u8]> = server_got
        .iter()
        .filter(|(m, _)| m.kind == NETSYNC_MESSAGE_GLOBAL_COMMAND)
        .map(|(_, d)| d.as_slice())
        .collect();
    assert_eq!(globals.len(), 2, "{globals:?}");

    // Both clients got both global commands in one order, and the door's
    // component state.
    let order = |got: &[(NetsyncMessage, Vec<u8>)]| -> Vec<(u64, u32, Vec<u8>)> {
        got.iter()
            .filter(|(m, _)| m.kind == NETSYNC_MESSAGE_GLOBAL_COMMAND)
            .map(|(m, d)| (m.sequence, m.sender, d.clone()))
            .collect()
    };
    assert_eq!(order(&client_got[0]), order(&client_got[1]));
    let mut heard: Vec<(u32, Vec<u8>)> = order(&client_got[0])
        .into_iter()
        .map(|(_, sender, data)| (sender, data))
        .collect();
    heard.sort();
    assert_eq!(
        heard,
        vec![(0, b"round 2".to_vec()), (ids[1], b"gg".to_vec())]
    );
    let numbers: Vec<u64> = order(&client_got[0]).iter().map(|g| g.0).collect();
    assert_eq!(numbers, vec![1, 2], "numbered 1, 2 in delivery order");
    for got in &client_got {
        let state = got
            .iter()
            .find(|(m, _)| m.kind == NETSYNC_MESSAGE_COMPONENT_STATE && m.entity_id == DOOR)
            .expect("the door's state never arrived");
        assert_eq!(state.1, b"open");
    }

    // The server heard both clients join and was told of its refused call.
    let heard = server_events(server);
    let joined: Vec<u32> = heard
        .iter()
        .filter(|e| e.kind == NETSYNC_SERVER_EVENT_CLIENT_JOINED)
        .map(|e| e.client_id)
        .collect();
    assert_eq!(joined.len(), 2);
    assert!(ids.iter().all(|id| joined.contains(id)));
    assert!(
        heard
            .iter()
            .any(|e| e.kind == NETSYNC_SERVER_EVENT_CALL_REFUSED
                && e.entity_id == 1
                && e.reason == NETSYNC_SERVER_REFUSED_NOT_SERVER_OWNED),
        "{heard:?}"
    );

    // Removing the door removes it everywhere.
    assert_eq!(netsync_server_remove_entity(server, DOOR), OK);
    let until = now() + 1.0;
    let mut removed = [false, false];
    while now() < until && !removed.iter().all(|r| *r) {
        for (i, &c) in clients.iter().enumerate() {
            tick(c, now());
            removed[i] |= events(c).iter().any(|e| {
                e.kind == NETSYNC_EVENT_ENTITY_REMOVED
                    && e.entity_id == DOOR
                    && e.reason == NETSYNC_REMOVED_UNREGISTERED
            });
        }
        std::thread::sleep(Duration::from_millis(16));
    }
    assert_eq!(removed, [true, true], "the door was not removed everywhere");
    for c in clients {
        netsync_client_free(c);
    }
    netsync_server_free(server);
}

#[test]
fn server_calls_check_their_arguments_and_the_servers_mode() {
    // No inbox: its calls work, messages for it are dropped and counted.
    let server = start_server_with(|c| c.server_inbox_capacity = 0);
    assert_eq!(
        netsync_server_send_global_command(server, b"x".as_ptr(), 1),
        OK
    );
    let deadline = Instant::now() + Duration::from_secs(1);
    let mut stats = NetsyncServerStats::default();
    while stats.server_messages_dropped == 0 && Instant::now() < deadline {
        assert_eq!(netsync_server_stats(server, &mut stats), OK);
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(stats.server_messages_dropped, 1);
    let mut m = NetsyncMessage::default();
    let mut has = true;
    assert_eq!(
        netsync_server_poll_message(server, &mut m, ptr::null_mut(), 0, &mut has),
        OK
    );
    assert!(!has);
    netsync_server_free(server);
    // A capacity past the limit is refused with its name.
    let mut config = unsafe { std::mem::zeroed::<NetsyncServerConfig>() };
    assert_eq!(netsync_server_config_default(&mut config), OK);
    config.server_inbox_capacity = u32::MAX;
    let mut other = ptr::null_mut();
    assert_eq!(
        netsync_server_start(&config, ptr::null(), &mut other),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    assert!(other.is_null());

    let server = start_server_with(|_| {});
    let big = vec![0u8; NETSYNC_MAX_PAYLOAD + 1];
    assert_eq!(
        netsync_server_send_global_command(server, big.as_ptr(), big.len()),
        NetsyncResult::NETSYNC_ERR_TOO_LARGE
    );
    assert_eq!(
        netsync_server_send_global_command(server, ptr::null(), 3),
        NetsyncResult::NETSYNC_ERR_NULL_POINTER
    );
    assert_eq!(
        netsync_server_set_entity_state(server, ptr::null()),
        NetsyncResult::NETSYNC_ERR_NULL_POINTER
    );
    let mut bad = circle(9, 0.0);
    bad.position.x = f32::NAN;
    assert_eq!(
        netsync_server_set_entity_state(server, &bad),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    let mut t = 0.0;
    assert_eq!(
        netsync_server_time(server, ptr::null_mut()),
        NetsyncResult::NETSYNC_ERR_NULL_POINTER
    );
    assert_eq!(netsync_server_time(server, &mut t), OK);
    assert!((0.0..10.0).contains(&t));
    assert_eq!(
        netsync_server_poll_event(server, ptr::null_mut(), &mut has),
        NetsyncResult::NETSYNC_ERR_NULL_POINTER
    );
    // Removing what is not there comes back as an event.
    assert_eq!(netsync_server_remove_entity(server, 12345), OK);
    let deadline = Instant::now() + Duration::from_secs(1);
    let mut refused = false;
    while Instant::now() < deadline && !refused {
        refused = server_events(server).iter().any(|e| {
            e.kind == NETSYNC_SERVER_EVENT_CALL_REFUSED
                && e.entity_id == 12345
                && e.reason == NETSYNC_SERVER_REFUSED_UNKNOWN_ENTITY
        });
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(refused);
    // A config with an unknown neutral rule is refused with a message.
    let mut config = unsafe { std::mem::zeroed::<NetsyncServerConfig>() };
    assert_eq!(netsync_server_config_default(&mut config), OK);
    config.neutral_initial_holder = 9;
    let mut other = ptr::null_mut();
    assert_eq!(
        netsync_server_start(&config, ptr::null(), &mut other),
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
    );
    netsync_server_free(server);
    assert_eq!(
        netsync_server_remove_entity(server, 1),
        NetsyncResult::NETSYNC_ERR_INVALID_HANDLE
    );
}
