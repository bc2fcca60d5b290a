//! The embedded server's game calls through the C ABI: server-owned
//! entities and components, commands from the server, and what the relay
//! hands the server (commands, client joins and leaves, refused calls).
//! Calls are queued for the relay thread and never wait on the network.

use super::handles;
use super::messages::{bytes_in, header, poll_into, NetsyncMessage};
use super::result::{guard, FfiError, NetsyncResult};
use super::server::{NetsyncServer, TYPE_NAME};
use super::types::NetsyncSample;
use crate::server::embedded::{GameEnd, ServerCall, ServerEvent};
use crate::server::relay::ServerCallError;
use crate::server::relay_server::RelayServer;
use crate::wire::message::EntityUpdate;

/// `NetsyncServerEvent::kind`: a client was admitted (`client_id`).
pub const NETSYNC_SERVER_EVENT_CLIENT_JOINED: u32 = 1;
/// `NetsyncServerEvent::kind`: a client left or timed out (`client_id`).
pub const NETSYNC_SERVER_EVENT_CLIENT_LEFT: u32 = 2;
/// `NetsyncServerEvent::kind`: the relay refused a queued call about
/// `entity_id` (`reason`: `NETSYNC_SERVER_REFUSED_*`).
pub const NETSYNC_SERVER_EVENT_CALL_REFUSED: u32 = 3;

/// The entity is a client's (controlled or neutral), not server-owned.
pub const NETSYNC_SERVER_REFUSED_NOT_SERVER_OWNED: u32 = 1;
pub const NETSYNC_SERVER_REFUSED_UNKNOWN_ENTITY: u32 = 2;
/// Nobody holds the entity, so nobody can take the command.
pub const NETSYNC_SERVER_REFUSED_NO_HOLDER: u32 = 3;
pub const NETSYNC_SERVER_REFUSED_TOO_LARGE: u32 = 4;
/// Over a configured limit (components per entity, live scripted elements).
pub const NETSYNC_SERVER_REFUSED_LIMIT: u32 = 5;
/// A value out of range (a scripted spawn).
pub const NETSYNC_SERVER_REFUSED_INVALID: u32 = 6;
/// `NetsyncServerEvent::kind`: the relay refused a scripted spawn
/// (`entity_id`: the element; `reason`: `NETSYNC_SERVER_REFUSED_*`); the
/// element exists nowhere.
pub const NETSYNC_SERVER_EVENT_SPAWN_REFUSED: u32 = 4;

/// `NetsyncServerEvent::kind`: lockstep: `client_id` sent no input for
/// frame `entity_id` within the stall timeout; the relay fills its input
/// (empty, flagged) until it sends again.
pub const NETSYNC_SERVER_EVENT_LOCKSTEP_STALLED: u32 = 5;
/// `NetsyncServerEvent::kind`: lockstep: `client_id`'s state hash for
/// frame `entity_id` differs from the majority's (one event per differing
/// client; the first differing frame is reported, once).
pub const NETSYNC_SERVER_EVENT_LOCKSTEP_DESYNC: u32 = 6;

/// One event of an embedded server.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetsyncServerEvent {
    /// `NETSYNC_SERVER_EVENT_*`.
    pub kind: u32,
    pub client_id: u32,
    /// The entity or scripted element; lockstep events: the frame.
    pub entity_id: u64,
    /// Refused calls: `NETSYNC_SERVER_REFUSED_*`.
    pub reason: u32,
}

impl From<ServerEvent> for NetsyncServerEvent {
    fn from(e: ServerEvent) -> Self {
        match e {
            ServerEvent::ClientJoined { client } => NetsyncServerEvent {
                kind: NETSYNC_SERVER_EVENT_CLIENT_JOINED,
                client_id: client,
                ..Default::default()
            },
            ServerEvent::ClientLeft { client } => NetsyncServerEvent {
                kind: NETSYNC_SERVER_EVENT_CLIENT_LEFT,
                client_id: client,
                ..Default::default()
            },
            ServerEvent::CallRefused { entity, error } => NetsyncServerEvent {
                kind: NETSYNC_SERVER_EVENT_CALL_REFUSED,
                entity_id: entity,
                reason: refusal_code(error),
                ..Default::default()
            },
            ServerEvent::SpawnRefused { element, error } => NetsyncServerEvent {
                kind: NETSYNC_SERVER_EVENT_SPAWN_REFUSED,
                entity_id: element,
                reason: refusal_code(error),
                ..Default::default()
            },
            ServerEvent::LockstepStalled { client, frame } => NetsyncServerEvent {
                kind: NETSYNC_SERVER_EVENT_LOCKSTEP_STALLED,
                client_id: client,
                entity_id: frame,
                ..Default::default()
            },
            ServerEvent::LockstepDesync { client, frame } => NetsyncServerEvent {
                kind: NETSYNC_SERVER_EVENT_LOCKSTEP_DESYNC,
                client_id: client,
                entity_id: frame,
                ..Default::default()
            },
        }
    }
}

fn refusal_code(error: ServerCallError) -> u32 {
    match error {
        ServerCallError::NotServerOwned => NETSYNC_SERVER_REFUSED_NOT_SERVER_OWNED,
        ServerCallError::UnknownEntity | ServerCallError::UnknownElement => {
            NETSYNC_SERVER_REFUSED_UNKNOWN_ENTITY
        }
        ServerCallError::NoHolder => NETSYNC_SERVER_REFUSED_NO_HOLDER,
        ServerCallError::PayloadTooLarge => NETSYNC_SERVER_REFUSED_TOO_LARGE,
        ServerCallError::Limit => NETSYNC_SERVER_REFUSED_LIMIT,
        ServerCallError::InvalidSpawn => NETSYNC_SERVER_REFUSED_INVALID,
    }
}

fn with_server<R>(
    server: *const NetsyncServer,
    f: impl FnOnce(&mut RelayServer) -> Result<R, FfiError>,
) -> Result<R, FfiError> {
    handles::with(server as usize as u64, TYPE_NAME, f)
}

/// The game's end of the server (every server started through the C API
/// has one).
fn game(server: &mut RelayServer) -> Result<&mut GameEnd, FfiError> {
    server.game().ok_or_else(|| {
        FfiError::new(
            NetsyncResult::NETSYNC_ERR_WRONG_STATE,
            "this relay runs standalone: it has no game side",
        )
    })
}

fn call(server: *const NetsyncServer, call: ServerCall) -> Result<(), FfiError> {
    with_server(server, |s| {
        game(s)?.call(call).map_err(|_| {
            FfiError::new(
                NetsyncResult::NETSYNC_ERR_WRONG_STATE,
                "the relay thread has stopped",
            )
        })
    })
}

/// The relay's clock (s since it started): the server time every
/// client's `netsync_client_server_time` estimates.
#[no_mangle]
pub extern "C" fn netsync_server_time(
    server: *const NetsyncServer,
    out: *mut f64,
) -> NetsyncResult {
    guard("netsync_server_time", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let t = with_server(server, |s| Ok(s.server_time()))?;
        // SAFETY: checked for NULL.
        unsafe { out.write(t) };
        Ok(())
    })
}

/// Moves server-owned entity `state->entity_id` (declared on first use;
/// stamped with the relay's clock when the relay thread applies it). An
/// entity a client registered is refused with a
/// `NETSYNC_SERVER_EVENT_CALL_REFUSED` event.
#[no_mangle]
pub extern "C" fn netsync_server_set_entity_state(
    server: *mut NetsyncServer,
    state: *const NetsyncSample,
) -> NetsyncResult {
    guard("netsync_server_set_entity_state", || {
        if state.is_null() {
            return Err(FfiError::null("state"));
        }
        // SAFETY: checked for NULL.
        let state = unsafe { *state };
        let sample = state.to_core(0.0).map_err(FfiError::invalid)?;
        let update = EntityUpdate::from_sample(state.entity_id, &sample);
        call(server, ServerCall::SetState(update))
    })
}

/// Removes server-owned entity `entity_id` everywhere (clients get
/// `NETSYNC_EVENT_ENTITY_REMOVED`).
#[no_mangle]
pub extern "C" fn netsync_server_remove_entity(
    server: *mut NetsyncServer,
    entity_id: u64,
) -> NetsyncResult {
    guard("netsync_server_remove_entity", || {
        call(server, ServerCall::Remove { entity: entity_id })
    })
}

/// Sets the state of component `component_id` of server-owned
/// `entity_id` (`len` bytes, at most `NETSYNC_MAX_PAYLOAD`); clients that
/// see the entity get it reliably, late joiners too.
#[no_mangle]
pub extern "C" fn netsync_server_set_component_state(
    server: *mut NetsyncServer,
    entity_id: u64,
    component_id: u32,
    data: *const u8,
    len: usize,
) -> NetsyncResult {
    guard("netsync_server_set_component_state", || {
        let data = bytes_in(data, len)?.to_vec();
        call(
            server,
            ServerCall::ComponentState {
                entity: entity_id,
                component: component_id,
                data,
            },
        )
    })
}

/// Sends a global command from the server (sender 0) to every client, in
/// the one order every client sees.
#[no_mangle]
pub extern "C" fn netsync_server_send_global_command(
    server: *mut NetsyncServer,
    data: *const u8,
    len: usize,
) -> NetsyncResult {
    guard("netsync_server_send_global_command", || {
        let data = bytes_in(data, len)?.to_vec();
        call(server, ServerCall::GlobalCommand(data))
    })
}

/// Sends a command for component `component_id` of `entity_id` to the
/// client that holds it.
#[no_mangle]
pub extern "C" fn netsync_server_send_component_command(
    server: *mut NetsyncServer,
    entity_id: u64,
    component_id: u32,
    data: *const u8,
    len: usize,
) -> NetsyncResult {
    guard("netsync_server_send_component_command", || {
        let data = bytes_in(data, len)?.to_vec();
        call(
            server,
            ServerCall::ComponentCommand {
                entity: entity_id,
                component: component_id,
                data,
            },
        )
    })
}

/// Pops the next message for the server (every global command, and
/// component commands for server-owned or unheld entities) into `*out`
/// and its payload into `buffer`, like `netsync_client_poll_message`.
#[no_mangle]
pub extern "C" fn netsync_server_poll_message(
    server: *mut NetsyncServer,
    out: *mut NetsyncMessage,
    buffer: *mut u8,
    capacity: usize,
    has_message: *mut bool,
) -> NetsyncResult {
    guard("netsync_server_poll_message", || {
        with_server(server, |s| {
            let g = game(s)?;
            let peeked = g.peek_message().map(header);
            poll_into(
                out,
                buffer,
                capacity,
                has_message,
                || Ok(peeked),
                |target| {
                    let message = g.poll_message().expect("peeked above");
                    target.copy_from_slice(&message.data);
                    Ok(())
                },
            )
        })
    })
}

/// Pops the next server event into `*out` and sets `*has_event`.
#[no_mangle]
pub extern "C" fn netsync_server_poll_event(
    server: *mut NetsyncServer,
    out: *mut NetsyncServerEvent,
    has_event: *mut bool,
) -> NetsyncResult {
    guard("netsync_server_poll_event", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        if has_event.is_null() {
            return Err(FfiError::null("has_event"));
        }
        let event = with_server(server, |s| Ok(game(s)?.poll_event()))?;
        // SAFETY: both checked for NULL.
        unsafe {
            if let Some(e) = event {
                out.write(e.into());
            }
            has_event.write(event.is_some());
        }
        Ok(())
    })
}
