//! Components, commands and received messages (S2) through the C ABI:
//! `netsync_client_register_component`, `_set_component_state`,
//! `_send_global_command`, `_send_component_command`, `_poll_message`.

use super::client::{client_error, with_client, NetsyncClient};
use super::result::{guard, FfiError, NetsyncResult};
use crate::core::app_message::{AppMessage, AppMessageKind};
use crate::wire::message::MAX_PAYLOAD;

/// Largest payload of a command or component state (bytes).
pub const NETSYNC_MAX_PAYLOAD: usize = 960;
// A literal above so that cbindgen writes a number into the header.
const _: () = assert!(NETSYNC_MAX_PAYLOAD == MAX_PAYLOAD);

/// `NetsyncMessage::kind`: a global command (same order on every client).
pub const NETSYNC_MESSAGE_GLOBAL_COMMAND: u32 = 1;
/// `NetsyncMessage::kind`: a command for a component of an entity this
/// receiver holds (or, on an embedded server, one nobody holds).
pub const NETSYNC_MESSAGE_COMPONENT_COMMAND: u32 = 2;
/// `NetsyncMessage::kind`: the latest state of a synced component of a
/// remote entity.
pub const NETSYNC_MESSAGE_COMPONENT_STATE: u32 = 3;

/// A received command or component state; its bytes go to the caller's
/// buffer (`netsync_client_poll_message`, `netsync_server_poll_message`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NetsyncMessage {
    /// `NETSYNC_MESSAGE_*`.
    pub kind: u32,
    /// Client id of the sender; 0: the embedded server (and for component
    /// states, which carry no sender).
    pub sender: u32,
    /// Component messages: the entity (0 for global commands).
    pub entity_id: u64,
    /// Component messages: the component (0 for global commands).
    pub component_id: u32,
    /// Global commands: the relay's number (1, 2, 3 ...); component states:
    /// their version; component commands: 0.
    pub sequence: u64,
    /// Server time at which the relay handled it (component states: 0).
    pub server_time: f64,
    /// Payload bytes (written to the buffer), or the buffer size needed
    /// when the call returns `NETSYNC_ERR_BUFFER_TOO_SMALL`.
    pub size: usize,
}

/// Reads a caller's byte slice: NULL is fine for an empty one; the length
/// is checked before anything is read.
pub(crate) fn bytes_in<'a>(data: *const u8, len: usize) -> Result<&'a [u8], FfiError> {
    if len > MAX_PAYLOAD {
        return Err(FfiError::new(
            NetsyncResult::NETSYNC_ERR_TOO_LARGE,
            format!("payload of {len} bytes is over NETSYNC_MAX_PAYLOAD ({MAX_PAYLOAD})"),
        ));
    }
    if len == 0 {
        return Ok(&[]);
    }
    if data.is_null() {
        return Err(FfiError::null("data"));
    }
    // SAFETY: non-NULL, and the caller passes `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(data, len) })
}

/// The header of `message` for C.
pub(crate) fn header(message: &AppMessage) -> NetsyncMessage {
    NetsyncMessage {
        kind: match message.kind {
            AppMessageKind::GlobalCommand => NETSYNC_MESSAGE_GLOBAL_COMMAND,
            AppMessageKind::ComponentCommand => NETSYNC_MESSAGE_COMPONENT_COMMAND,
            AppMessageKind::ComponentState => NETSYNC_MESSAGE_COMPONENT_STATE,
        },
        sender: message.sender,
        entity_id: message.entity,
        component_id: message.component,
        sequence: message.sequence,
        server_time: message.server_time,
        size: message.data.len(),
    }
}

/// The common body of the two poll calls: `peek` looks at the next
/// message, `take` removes it once it was copied out.
pub(crate) fn poll_into(
    out: *mut NetsyncMessage,
    buffer: *mut u8,
    capacity: usize,
    has_message: *mut bool,
    peek: impl FnOnce() -> Result<Option<NetsyncMessage>, FfiError>,
    copy_and_take: impl FnOnce(&mut [u8]) -> Result<(), FfiError>,
) -> Result<(), FfiError> {
    if out.is_null() {
        return Err(FfiError::null("out"));
    }
    if has_message.is_null() {
        return Err(FfiError::null("has_message"));
    }
    if capacity > 0 && buffer.is_null() {
        return Err(FfiError::null("buffer"));
    }
    let Some(head) = peek()? else {
        // SAFETY: checked for NULL.
        unsafe { has_message.write(false) };
        return Ok(());
    };
    if head.size > capacity {
        // SAFETY: checked for NULL.
        unsafe { out.write(head) };
        return Err(FfiError::new(
            NetsyncResult::NETSYNC_ERR_BUFFER_TOO_SMALL,
            format!(
                "the next message has {} bytes but the buffer holds {capacity}; it stays queued",
                head.size
            ),
        ));
    }
    let target: &mut [u8] = if head.size == 0 {
        &mut []
    } else {
        // SAFETY: non-NULL (capacity >= size > 0) and `capacity` writable bytes.
        unsafe { std::slice::from_raw_parts_mut(buffer, head.size) }
    };
    copy_and_take(target)?;
    // SAFETY: checked for NULL.
    unsafe {
        out.write(head);
        has_message.write(true);
    }
    Ok(())
}

/// Pops the next received message into `*out` and its payload into
/// `buffer` (room for `capacity` bytes; `NETSYNC_MAX_PAYLOAD` always
/// suffices) and sets `*has_message`. Messages arrive with ticks. When the
/// payload does not fit, returns `NETSYNC_ERR_BUFFER_TOO_SMALL` with the
/// needed size in `out->size` and leaves the message queued.
#[no_mangle]
pub extern "C" fn netsync_client_poll_message(
    client: *mut NetsyncClient,
    out: *mut NetsyncMessage,
    buffer: *mut u8,
    capacity: usize,
    has_message: *mut bool,
) -> NetsyncResult {
    guard("netsync_client_poll_message", || {
        with_client(client, |c| {
            let peeked = c.peek_message().map(header);
            poll_into(
                out,
                buffer,
                capacity,
                has_message,
                || Ok(peeked),
                |target| {
                    let message = c.poll_message().expect("peeked above");
                    target.copy_from_slice(&message.data);
                    Ok(())
                },
            )
        })
    })
}

/// Declares component `component_id` of `entity_id` on this client (S2):
/// `synced` true sends its state and commands; false keeps everything of
/// it on this client (those calls then fail with
/// `NETSYNC_ERR_UNSYNCED_COMPONENT` and nothing is sent). Registering
/// again switches it.
#[no_mangle]
pub extern "C" fn netsync_client_register_component(
    client: *mut NetsyncClient,
    entity_id: u64,
    component_id: u32,
    synced: bool,
) -> NetsyncResult {
    guard("netsync_client_register_component", || {
        with_client(client, |c| {
            c.register_component(entity_id, component_id, synced);
            Ok(())
        })
    })
}

/// The latest state of a synced component of an entity this client holds
/// (`len` bytes, at most `NETSYNC_MAX_PAYLOAD`). Sent reliably, only when
/// it changed, to every client that sees the entity, and kept by the relay
/// for late joiners. `NETSYNC_ERR_NOT_HELD` when another client holds it.
#[no_mangle]
pub extern "C" fn netsync_client_set_component_state(
    client: *mut NetsyncClient,
    entity_id: u64,
    component_id: u32,
    data: *const u8,
    len: usize,
) -> NetsyncResult {
    guard("netsync_client_set_component_state", || {
        let data = bytes_in(data, len)?;
        with_client(client, |c| {
            c.set_component_state(entity_id, component_id, data)
                .map_err(client_error)
        })
    })
}

/// Sends a global command (`len` opaque bytes, at most
/// `NETSYNC_MAX_PAYLOAD`): reliably, once, to every client including this
/// one, in the same order everywhere, and to the embedded server. Queued
/// while disconnected and sent on (re)connection; `NETSYNC_ERR_LIMIT` when
/// too many wait for the relay.
#[no_mangle]
pub extern "C" fn netsync_client_send_global_command(
    client: *mut NetsyncClient,
    data: *const u8,
    len: usize,
) -> NetsyncResult {
    guard("netsync_client_send_global_command", || {
        let data = bytes_in(data, len)?;
        with_client(client, |c| {
            c.send_global_command(data).map_err(client_error)
        })
    })
}

/// Sends a command for synced component `component_id` of `entity_id`:
/// reliably, once, to whoever holds the entity (or the embedded server
/// when nobody does). The component must be registered synced here.
#[no_mangle]
pub extern "C" fn netsync_client_send_component_command(
    client: *mut NetsyncClient,
    entity_id: u64,
    component_id: u32,
    data: *const u8,
    len: usize,
) -> NetsyncResult {
    guard("netsync_client_send_component_command", || {
        let data = bytes_in(data, len)?;
        with_client(client, |c| {
            c.send_component_command(entity_id, component_id, data)
                .map_err(client_error)
        })
    })
}
