//! `netsync_client_*`: what an engine calls every frame.

use std::ffi::c_char;
use std::net::SocketAddr;

use super::handles;
use super::result::{guard, guard_void, FfiError, NetsyncResult};
use super::send_filter::NetsyncSendFilterConfig;
use super::server::c_str;
use super::timeline::{mode_from, NetsyncTimelineConfig};
use super::types::{NetsyncSample, NetsyncTransform, TransformBatch};
use crate::client::{
    Client, ClientConfig, ClientError, ClientEvent, ConnectionState, DisconnectReason, Removal,
};
use crate::net::handshake::RefusalReason;
use crate::netsim::NetworkProfile;
use crate::server::send_rights::EntityKind;

/// Opaque client handle. Call it from one thread at a time (overlapping
/// calls fail with `NETSYNC_ERR_BUSY`); its network thread runs apart.
pub struct NetsyncClient {
    _private: [u8; 0],
}

const TYPE_NAME: &str = "NetsyncClient";

/// Connection states (`netsync_client_state`).
pub const NETSYNC_STATE_CONNECTING: u32 = 0;
pub const NETSYNC_STATE_CONNECTED: u32 = 1;
pub const NETSYNC_STATE_DISCONNECTED: u32 = 2;

/// Event kinds (`NetsyncClientEvent::kind`).
/// A connection attempt began (`reason`: the attempt number, 1 the
/// first; later ones follow a disconnect or a failed attempt).
pub const NETSYNC_EVENT_CONNECTING: u32 = 10;
pub const NETSYNC_EVENT_CONNECTED: u32 = 1;
pub const NETSYNC_EVENT_RECONNECTED: u32 = 2;
pub const NETSYNC_EVENT_DISCONNECTED: u32 = 3;
pub const NETSYNC_EVENT_ENTITY_APPEARED: u32 = 4;
pub const NETSYNC_EVENT_ENTITY_REMOVED: u32 = 5;
/// This client now holds the send right for `entity_id`: simulate it.
pub const NETSYNC_EVENT_RIGHT_GAINED: u32 = 6;
/// Another client (or nobody) holds it now: stop simulating it.
pub const NETSYNC_EVENT_RIGHT_LOST: u32 = 7;
/// The relay refused this client's claim (`reason`: `NETSYNC_CLAIM_*`).
pub const NETSYNC_EVENT_RIGHT_REFUSED: u32 = 8;
/// A scripted element (`entity_id`) started but cannot be shown here
/// (`reason`: `NETSYNC_SCRIPTED_REFUSED_*`).
pub const NETSYNC_EVENT_SCRIPTED_REFUSED: u32 = 9;

/// Why an entity was removed (`NetsyncClientEvent::reason` of ENTITY_REMOVED).
pub const NETSYNC_REMOVED_UNREGISTERED: u32 = 1;
pub const NETSYNC_REMOVED_OWNER_LEFT: u32 = 2;
/// It left this client's interest; it comes back with full state if it re-enters.
pub const NETSYNC_REMOVED_OUT_OF_INTEREST: u32 = 3;
/// Not heard of again after a reconnect.
pub const NETSYNC_REMOVED_STALE: u32 = 4;
/// A scripted element's life ended.
pub const NETSYNC_REMOVED_EXPIRED: u32 = 5;

/// Send-right kinds (`netsync_client_register_entity_kind`).
pub const NETSYNC_KIND_CONTROLLED: u32 = 0;
pub const NETSYNC_KIND_NEUTRAL: u32 = 1;
pub const NETSYNC_KIND_SERVER_OWNED: u32 = 2;

/// Why a claim was refused (`NetsyncClientEvent::reason` of RIGHT_REFUSED).
pub const NETSYNC_CLAIM_UNKNOWN_ENTITY: u32 = 1;
pub const NETSYNC_CLAIM_CONFLICT: u32 = 2;
pub const NETSYNC_CLAIM_NOT_NEUTRAL: u32 = 3;
/// What the claim says hit the object is neither controlled nor held by
/// the claimant.
pub const NETSYNC_CLAIM_NOT_YOUR_CONTROLLER: u32 = 4;
pub const NETSYNC_CLAIM_COOLDOWN: u32 = 5;
pub const NETSYNC_CLAIM_ALREADY_HOLDER: u32 = 6;
pub const NETSYNC_CLAIM_NOT_HOLDER: u32 = 7;
/// The object changed hands after the collision the claim reports (the
/// claim arrived late, or this client had not heard of the change yet).
pub const NETSYNC_CLAIM_STALE: u32 = 8;

/// Disconnect reasons (`NetsyncClientEvent::reason`).
pub const NETSYNC_REASON_NONE: u32 = 0;
pub const NETSYNC_REASON_CONNECT_TIMEOUT: u32 = 1;
pub const NETSYNC_REASON_RELAY_TIMEOUT: u32 = 2;
pub const NETSYNC_REASON_VERSION_MISMATCH: u32 = 3;
pub const NETSYNC_REASON_RELAY_FULL: u32 = 4;
pub const NETSYNC_REASON_CLOSED: u32 = 5;
/// The relay runs in secure mode: connect with `netsync_client_connect_secure`.
pub const NETSYNC_REASON_TOKEN_REQUIRED: u32 = 6;
/// The client presented a connect token to a relay in plain mode.
pub const NETSYNC_REASON_NOT_SECURE: u32 = 7;
/// The connect token expired: get a new one from the game's backend.
pub const NETSYNC_REASON_TOKEN_EXPIRED: u32 = 8;
/// The connect token (or its client id) is in use by another connection;
/// the client retries while reconnecting is on.
pub const NETSYNC_REASON_TOKEN_IN_USE: u32 = 9;

/// Simulated networks for `NetsyncClientConfig::conditioner`.
pub const NETSYNC_NETWORK_NONE: u32 = 0;
pub const NETSYNC_NETWORK_LAN: u32 = 1;
pub const NETSYNC_NETWORK_GOOD: u32 = 2;
pub const NETSYNC_NETWORK_AVG: u32 = 3;
pub const NETSYNC_NETWORK_POOR: u32 = 4;
pub const NETSYNC_NETWORK_SPIKY: u32 = 5;
pub const NETSYNC_NETWORK_HOSTILE: u32 = 6;

/// Client settings; defaults from `netsync_client_config_default`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NetsyncClientConfig {
    /// How remote entities are shown.
    pub timeline: NetsyncTimelineConfig,
    /// When owned entities' states are worth sending.
    pub send_filter: NetsyncSendFilterConfig,
    /// Owned-state sends per second, 0.5..=1000. Default 30.
    pub send_rate: f64,
    /// Clock probes per second, 0.5..=1000. Default 10.
    pub ping_rate: f64,
    /// One connection attempt gives up after this long (s). Default 5.
    pub connect_timeout: f64,
    /// The relay counts as gone after this much silence (s). Default 5.
    pub idle_timeout: f64,
    /// 1: reconnect after losing the relay. Default 1.
    pub reconnect: u8,
    /// `NETSYNC_NETWORK_*`: put this client's traffic through a simulated
    /// network (tests and demos). Default none.
    pub conditioner: u32,
    /// Seed of the simulated network.
    pub conditioner_seed: u64,
}

/// One event (`netsync_client_poll_event`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetsyncClientEvent {
    /// `NETSYNC_EVENT_*`.
    pub kind: u32,
    /// Connected / reconnected: the id the relay gave this client.
    pub client_id: u32,
    /// Entity events: the entity.
    pub entity_id: u64,
    /// Disconnected: `NETSYNC_REASON_*`; entity removed: `NETSYNC_REMOVED_*`;
    /// right refused: `NETSYNC_CLAIM_*`; connecting: the attempt number.
    pub reason: u32,
}

/// Client counters and estimates.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NetsyncClientStats {
    /// `NETSYNC_STATE_*`.
    pub state: u32,
    pub client_id: u32,
    /// Latest, smallest recent and jitter of the round trip (s).
    pub rtt: f64,
    pub rtt_min: f64,
    pub jitter: f64,
    /// Estimated server clock minus this client's clock (s).
    pub clock_offset: f64,
    pub clock_resyncs: u64,
    /// Share of recent clock probes lost on the round trip (0..1).
    pub loss: f64,
    /// Adaptive delay behind the freshest data, current and target (s).
    pub render_delay: f64,
    pub target_delay: f64,
    pub remote_entities: u64,
    pub frames_received: u64,
    pub frames_out_of_order: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub bytes_per_second_up: f64,
    pub bytes_per_second_down: f64,
    /// Datagrams that did not decode.
    pub malformed: u64,
    pub reconnects: u64,
    /// Owned states the send filter sent / held back.
    pub states_sent: u64,
    pub states_skipped: u64,
    /// Highest command number the relay acknowledged (commands are
    /// numbered from 1 in sending order).
    pub commands_acked: u64,
    /// Global commands delivered, and numbers missed while away for longer
    /// than the relay keeps them.
    pub global_commands: u64,
    pub global_gaps: u64,
    /// Received messages waiting for `netsync_client_poll_message`, and
    /// those dropped because the queue was full.
    pub messages_queued: u64,
    pub messages_dropped: u64,
    /// Predictions handed back after authority covered them / after the
    /// timeout; their error at the same server time, last and largest (m).
    pub predictions_confirmed: u64,
    pub predictions_timed_out: u64,
    pub prediction_error_last: f64,
    pub prediction_error_max: f64,
    /// Scripted elements known (started or not).
    pub scripted_elements: u64,
    /// Snapshot packets that never arrived (each one asked for again).
    pub snapshots_lost: u64,
    /// Sparse owned states sent a second or third time so one lost
    /// datagram does not hide a stop or a turn.
    pub states_repeated: u64,
}

fn network_code(profile: Option<NetworkProfile>) -> u32 {
    match profile.map(|p| p.name) {
        None => NETSYNC_NETWORK_NONE,
        Some("LAN") => NETSYNC_NETWORK_LAN,
        Some("GOOD") => NETSYNC_NETWORK_GOOD,
        Some("AVG") => NETSYNC_NETWORK_AVG,
        Some("POOR") => NETSYNC_NETWORK_POOR,
        Some("SPIKY") => NETSYNC_NETWORK_SPIKY,
        Some("HOSTILE") => NETSYNC_NETWORK_HOSTILE,
        Some(_) => NETSYNC_NETWORK_NONE,
    }
}

fn network_from(code: u32) -> Result<Option<NetworkProfile>, FfiError> {
    Ok(match code {
        NETSYNC_NETWORK_NONE => None,
        NETSYNC_NETWORK_LAN => Some(NetworkProfile::LAN),
        NETSYNC_NETWORK_GOOD => Some(NetworkProfile::GOOD),
        NETSYNC_NETWORK_AVG => Some(NetworkProfile::AVG),
        NETSYNC_NETWORK_POOR => Some(NetworkProfile::POOR),
        NETSYNC_NETWORK_SPIKY => Some(NetworkProfile::SPIKY),
        NETSYNC_NETWORK_HOSTILE => Some(NetworkProfile::HOSTILE),
        _ => {
            return Err(FfiError::invalid(format!(
                "conditioner {code} is not a NETSYNC_NETWORK_*"
            )))
        }
    })
}

impl NetsyncClientConfig {
    fn defaults() -> Self {
        let c = ClientConfig::new(SocketAddr::from(([127, 0, 0, 1], 7777)));
        NetsyncClientConfig {
            timeline: NetsyncTimelineConfig::from(&c.timeline),
            send_filter: NetsyncSendFilterConfig::from(&c.send_filter),
            send_rate: c.send_rate,
            ping_rate: c.ping_rate,
            connect_timeout: c.connect_timeout,
            idle_timeout: c.idle_timeout,
            reconnect: c.reconnect as u8,
            conditioner: network_code(c.conditioner),
            conditioner_seed: c.conditioner_seed,
        }
    }

    fn to_core(self, relay: SocketAddr) -> Result<ClientConfig, FfiError> {
        if self.reconnect > 1 {
            return Err(FfiError::invalid("reconnect must be 0 or 1"));
        }
        let mut c = ClientConfig::new(relay);
        c.timeline = self.timeline.to_core()?;
        c.send_filter = self.send_filter.to_core()?;
        c.send_rate = self.send_rate;
        c.ping_rate = self.ping_rate;
        c.connect_timeout = self.connect_timeout;
        c.idle_timeout = self.idle_timeout;
        c.reconnect = self.reconnect == 1;
        c.conditioner = network_from(self.conditioner)?;
        c.conditioner_seed = self.conditioner_seed;
        c.validate().map_err(FfiError::invalid)?;
        Ok(c)
    }
}

pub(crate) fn client_error(e: ClientError) -> FfiError {
    use crate::core::timeline::TimelineError;
    let code = match e {
        ClientError::NotRegistered(_)
        | ClientError::RemoteEntity(_)
        | ClientError::Timeline(TimelineError::UnknownEntity(_)) => {
            NetsyncResult::NETSYNC_ERR_UNKNOWN_ENTITY
        }
        ClientError::AlreadyRegistered(_)
        | ClientError::SimulatedHere(_)
        | ClientError::NotConnected => NetsyncResult::NETSYNC_ERR_WRONG_STATE,
        ClientError::Io(_) | ClientError::RecordingFile(_) => NetsyncResult::NETSYNC_ERR_IO,
        ClientError::Recording(_) => NetsyncResult::NETSYNC_ERR_WRONG_STATE,
        ClientError::UnknownComponent { .. } => NetsyncResult::NETSYNC_ERR_UNKNOWN_COMPONENT,
        ClientError::UnsyncedComponent { .. } => NetsyncResult::NETSYNC_ERR_UNSYNCED_COMPONENT,
        ClientError::PayloadTooLarge(_) => NetsyncResult::NETSYNC_ERR_TOO_LARGE,
        ClientError::NotHeld(_) => NetsyncResult::NETSYNC_ERR_NOT_HELD,
        ClientError::TooManyPending => NetsyncResult::NETSYNC_ERR_LIMIT,
        ClientError::Wait => return FfiError::wait(),
        ClientError::NotMember => NetsyncResult::NETSYNC_ERR_WRONG_STATE,
        ClientError::InputTooLarge(_) | ClientError::SnapshotTooLarge(_) => {
            NetsyncResult::NETSYNC_ERR_TOO_LARGE
        }
        _ => NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT,
    };
    FfiError::new(code, e.to_string())
}

pub(crate) fn with_client<R>(
    client: *const NetsyncClient,
    f: impl FnOnce(&mut Client) -> Result<R, FfiError>,
) -> Result<R, FfiError> {
    handles::with(client as usize as u64, TYPE_NAME, f)
}

fn state_code(state: ConnectionState) -> u32 {
    match state {
        ConnectionState::Connecting => NETSYNC_STATE_CONNECTING,
        ConnectionState::Connected => NETSYNC_STATE_CONNECTED,
        ConnectionState::Disconnected => NETSYNC_STATE_DISCONNECTED,
    }
}

/// Writes the default settings to `*out`.
#[no_mangle]
pub extern "C" fn netsync_client_config_default(out: *mut NetsyncClientConfig) -> NetsyncResult {
    guard("netsync_client_config_default", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        // SAFETY: checked for NULL.
        unsafe { out.write(NetsyncClientConfig::defaults()) };
        Ok(())
    })
}

/// Starts connecting to the relay at `address` ("IP:port", e.g.
/// "127.0.0.1:7777" or "[::1]:7777"; resolve host names first) and returns
/// at once; watch `netsync_client_state` or the events. `config` NULL:
/// defaults. Free with `netsync_client_free`.
#[no_mangle]
pub extern "C" fn netsync_client_connect(
    config: *const NetsyncClientConfig,
    address: *const c_char,
    out: *mut *mut NetsyncClient,
) -> NetsyncResult {
    guard("netsync_client_connect", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let address = c_str(address, "address")?.ok_or_else(|| FfiError::null("address"))?;
        let relay: SocketAddr = address
            .parse()
            .map_err(|_| FfiError::invalid(format!("`{address}` is not IP:port")))?;
        connect_client(config, relay, None, out)
    })
}

/// Connects a client from a C config (NULL: defaults) to `relay`, in
/// secure mode with `token`; `out` was checked for NULL.
pub(crate) fn connect_client(
    config: *const NetsyncClientConfig,
    relay: SocketAddr,
    token: Option<crate::net::secure::ConnectToken>,
    out: *mut *mut NetsyncClient,
) -> Result<(), FfiError> {
    let config = if config.is_null() {
        NetsyncClientConfig::defaults()
    } else {
        // SAFETY: checked for NULL.
        unsafe { *config }
    };
    let mut core = config.to_core(relay)?;
    core.token = token;
    let client = Client::connect(core).map_err(client_error)?;
    handles::publish(out, client);
    Ok(())
}

/// Stops the network thread and joins it (bounded), then frees the
/// client. NULL or a handle already freed is a no-op.
#[no_mangle]
pub extern "C" fn netsync_client_free(client: *mut NetsyncClient) {
    guard_void("netsync_client_free", || {
        handles::free::<Client, _>(client, TYPE_NAME, "netsync_client_free")
    })
}

/// Writes the connection state (`NETSYNC_STATE_*`) to `*out`.
#[no_mangle]
pub extern "C" fn netsync_client_state(client: *mut NetsyncClient, out: *mut u32) -> NetsyncResult {
    guard("netsync_client_state", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let state = with_client(client, |c| Ok(c.refresh_state()))?;
        // SAFETY: checked for NULL.
        unsafe { out.write(state_code(state)) };
        Ok(())
    })
}

/// Declares an entity this client owns (its id is the game's, the same on
/// every machine). `NETSYNC_ERR_WRONG_STATE` when already registered,
/// `NETSYNC_ERR_UNKNOWN_ENTITY` when another client owns it.
#[no_mangle]
pub extern "C" fn netsync_client_register_entity(
    client: *mut NetsyncClient,
    entity_id: u64,
) -> NetsyncResult {
    guard("netsync_client_register_entity", || {
        with_client(client, |c| c.register(entity_id).map_err(client_error))
    })
}

/// Declares an entity with its send-right kind (`NETSYNC_KIND_*`): a
/// controlled entity is this client's for good; a neutral object is
/// simulated by whoever holds its right (first to register, then whoever
/// hits it); a server-owned one only the server moves.
#[no_mangle]
pub extern "C" fn netsync_client_register_entity_kind(
    client: *mut NetsyncClient,
    entity_id: u64,
    kind: u32,
) -> NetsyncResult {
    guard("netsync_client_register_entity_kind", || {
        let kind = match kind {
            NETSYNC_KIND_CONTROLLED => EntityKind::Controlled,
            NETSYNC_KIND_NEUTRAL => EntityKind::Neutral,
            NETSYNC_KIND_SERVER_OWNED => EntityKind::ServerOwned,
            k => {
                return Err(FfiError::invalid(format!(
                    "kind {k} is not a NETSYNC_KIND_*"
                )))
            }
        };
        with_client(client, |c| {
            c.register_kind(entity_id, kind).map_err(client_error)
        })
    })
}

/// `mine` (an entity this client controls, or a neutral object it holds,
/// so that pushed objects knock over others) hit the neutral object
/// `other`: claims its send right. Optimistic: simulate and set `other`'s
/// state from now on; a RIGHT_GAINED or RIGHT_REFUSED event follows.
/// `NETSYNC_ERR_UNKNOWN_ENTITY` when `mine` is neither.
#[no_mangle]
pub extern "C" fn netsync_client_report_collision(
    client: *mut NetsyncClient,
    mine: u64,
    other: u64,
) -> NetsyncResult {
    guard("netsync_client_report_collision", || {
        with_client(client, |c| {
            c.report_collision(mine, other).map_err(client_error)
        })
    })
}

/// A neutral object this client holds is at rest: its right returns to nobody.
#[no_mangle]
pub extern "C" fn netsync_client_report_at_rest(
    client: *mut NetsyncClient,
    entity_id: u64,
) -> NetsyncResult {
    guard("netsync_client_report_at_rest", || {
        with_client(client, |c| {
            c.report_at_rest(entity_id).map_err(client_error)
        })
    })
}

/// Writes 1 to `*out` when this client holds (or is claiming) the right to
/// send `entity_id`, else 0.
#[no_mangle]
pub extern "C" fn netsync_client_holds(
    client: *mut NetsyncClient,
    entity_id: u64,
    out: *mut u8,
) -> NetsyncResult {
    guard("netsync_client_holds", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let holds = with_client(client, |c| Ok(c.holds(entity_id)))?;
        // SAFETY: checked for NULL.
        unsafe { out.write(holds as u8) };
        Ok(())
    })
}

/// The holder of `entity_id`'s send right as the relay last announced it:
/// `*holder` the client id (0: nobody, or the server) and `*epoch` the
/// number of changes so far. `NETSYNC_ERR_UNKNOWN_ENTITY` until the relay
/// has announced one (it does for every registered entity). A claim this
/// client has sent but the relay has not answered yet is not shown here:
/// `netsync_client_holds` says whether this client acts as the holder.
#[no_mangle]
pub extern "C" fn netsync_client_holder(
    client: *mut NetsyncClient,
    entity_id: u64,
    holder: *mut u32,
    epoch: *mut u32,
) -> NetsyncResult {
    guard("netsync_client_holder", || {
        if holder.is_null() {
            return Err(FfiError::null("holder"));
        }
        if epoch.is_null() {
            return Err(FfiError::null("epoch"));
        }
        let right = with_client(client, |c| Ok(c.right(entity_id)))?;
        let (h, e) = right.ok_or_else(|| {
            FfiError::new(
                NetsyncResult::NETSYNC_ERR_UNKNOWN_ENTITY,
                format!("no send right of entity {entity_id} announced yet"),
            )
        })?;
        // SAFETY: both checked for NULL.
        unsafe {
            holder.write(h);
            epoch.write(e);
        }
        Ok(())
    })
}

/// Stops owning and sending an entity.
#[no_mangle]
pub extern "C" fn netsync_client_unregister_entity(
    client: *mut NetsyncClient,
    entity_id: u64,
) -> NetsyncResult {
    guard("netsync_client_unregister_entity", || {
        with_client(client, |c| c.unregister(entity_id).map_err(client_error))
    })
}

/// The true state of an owned entity this frame (`state->entity_id`). It
/// goes out at the send rate when the send filter says it is worth it.
/// `NETSYNC_ERR_INVALID_ARGUMENT` for values that are not finite, a zero
/// rotation, unknown flags, or a position or velocity beyond +/-1e6 (the
/// wire's range at every precision).
#[no_mangle]
pub extern "C" fn netsync_client_set_entity_state(
    client: *mut NetsyncClient,
    state: *const NetsyncSample,
) -> NetsyncResult {
    guard("netsync_client_set_entity_state", || {
        if state.is_null() {
            return Err(FfiError::null("state"));
        }
        // SAFETY: checked for NULL.
        let state = unsafe { *state };
        let sample = state.to_core(0.0).map_err(FfiError::invalid)?;
        with_client(client, |c| {
            c.set_state(state.entity_id, sample).map_err(client_error)
        })
    })
}

/// Advances to engine time `now` (s, monotonic, unscaled) and writes every
/// remote entity's transform to `out` (room for `capacity`), the count to
/// `*out_count`. When entities outnumber `capacity` it returns
/// `NETSYNC_ERR_BUFFER_TOO_SMALL` with the needed count in `*out_count`; the
/// tick has happened and the first `capacity` transforms are written.
#[no_mangle]
pub extern "C" fn netsync_client_tick(
    client: *mut NetsyncClient,
    now: f64,
    out: *mut NetsyncTransform,
    capacity: usize,
    out_count: *mut usize,
) -> NetsyncResult {
    guard("netsync_client_tick", || {
        let batch = TransformBatch::new(out, capacity, out_count)?;
        with_client(client, |c| {
            let count = c.tick_with(now, batch.writer()).map_err(client_error)?;
            batch.finish(count)
        })
    })
}

/// Pops the next event into `*out` and sets `*has_event`; `*has_event` is
/// false (and `*out` untouched) when none is waiting.
#[no_mangle]
pub extern "C" fn netsync_client_poll_event(
    client: *mut NetsyncClient,
    out: *mut NetsyncClientEvent,
    has_event: *mut bool,
) -> NetsyncResult {
    guard("netsync_client_poll_event", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        if has_event.is_null() {
            return Err(FfiError::null("has_event"));
        }
        let event = with_client(client, |c| Ok(c.poll_event()))?;
        let converted = event.map(|e| match e {
            ClientEvent::Connecting { attempt } => NetsyncClientEvent {
                kind: NETSYNC_EVENT_CONNECTING,
                reason: attempt,
                ..Default::default()
            },
            ClientEvent::Connected { client_id } => NetsyncClientEvent {
                kind: NETSYNC_EVENT_CONNECTED,
                client_id,
                ..Default::default()
            },
            ClientEvent::Reconnected { client_id } => NetsyncClientEvent {
                kind: NETSYNC_EVENT_RECONNECTED,
                client_id,
                ..Default::default()
            },
            ClientEvent::Disconnected(reason) => NetsyncClientEvent {
                kind: NETSYNC_EVENT_DISCONNECTED,
                reason: match reason {
                    DisconnectReason::ConnectTimeout => NETSYNC_REASON_CONNECT_TIMEOUT,
                    DisconnectReason::RelayTimeout => NETSYNC_REASON_RELAY_TIMEOUT,
                    DisconnectReason::Refused(RefusalReason::VersionMismatch { .. }) => {
                        NETSYNC_REASON_VERSION_MISMATCH
                    }
                    DisconnectReason::Refused(RefusalReason::Full) => NETSYNC_REASON_RELAY_FULL,
                    DisconnectReason::Refused(RefusalReason::TokenRequired) => {
                        NETSYNC_REASON_TOKEN_REQUIRED
                    }
                    DisconnectReason::Refused(RefusalReason::NotSecure) => {
                        NETSYNC_REASON_NOT_SECURE
                    }
                    DisconnectReason::Refused(RefusalReason::TokenExpired) => {
                        NETSYNC_REASON_TOKEN_EXPIRED
                    }
                    DisconnectReason::Refused(RefusalReason::TokenInUse) => {
                        NETSYNC_REASON_TOKEN_IN_USE
                    }
                    DisconnectReason::Closed => NETSYNC_REASON_CLOSED,
                },
                ..Default::default()
            },
            ClientEvent::EntityAppeared { entity } => NetsyncClientEvent {
                kind: NETSYNC_EVENT_ENTITY_APPEARED,
                entity_id: entity,
                ..Default::default()
            },
            ClientEvent::EntityRemoved { entity, reason } => NetsyncClientEvent {
                kind: NETSYNC_EVENT_ENTITY_REMOVED,
                entity_id: entity,
                reason: match reason {
                    Removal::Unregistered => NETSYNC_REMOVED_UNREGISTERED,
                    Removal::OwnerLeft => NETSYNC_REMOVED_OWNER_LEFT,
                    Removal::OutOfInterest => NETSYNC_REMOVED_OUT_OF_INTEREST,
                    Removal::Stale => NETSYNC_REMOVED_STALE,
                    Removal::Expired => NETSYNC_REMOVED_EXPIRED,
                },
                ..Default::default()
            },
            ClientEvent::ScriptedRefused { element, reason } => NetsyncClientEvent {
                kind: NETSYNC_EVENT_SCRIPTED_REFUSED,
                entity_id: element,
                reason: super::scripted::refusal_code(reason),
                ..Default::default()
            },
            ClientEvent::RightGained { entity } => NetsyncClientEvent {
                kind: NETSYNC_EVENT_RIGHT_GAINED,
                entity_id: entity,
                ..Default::default()
            },
            ClientEvent::RightLost { entity } => NetsyncClientEvent {
                kind: NETSYNC_EVENT_RIGHT_LOST,
                entity_id: entity,
                ..Default::default()
            },
            ClientEvent::RightRefused { entity, reason } => NetsyncClientEvent {
                kind: NETSYNC_EVENT_RIGHT_REFUSED,
                entity_id: entity,
                reason: reason as u32,
                ..Default::default()
            },
        });
        // SAFETY: both checked for NULL.
        unsafe {
            has_event.write(converted.is_some());
            if let Some(e) = converted {
                out.write(e);
            }
        }
        Ok(())
    })
}

/// Estimated server time at engine time `now` (s). The clock an owner
/// stamps its physics with. `NETSYNC_ERR_WRONG_STATE` before the relay's
/// clock is known (and before the first tick).
#[no_mangle]
pub extern "C" fn netsync_client_server_time(
    client: *mut NetsyncClient,
    now: f64,
    out: *mut f64,
) -> NetsyncResult {
    guard("netsync_client_server_time", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let t = with_client(client, |c| {
            c.server_time(now).ok_or_else(|| {
                FfiError::new(
                    NetsyncResult::NETSYNC_ERR_WRONG_STATE,
                    "the relay's clock is not known yet (connect and tick first)",
                )
            })
        })?;
        // SAFETY: checked for NULL.
        unsafe { out.write(t) };
        Ok(())
    })
}

/// Server time that `mode` showed at the last tick.
#[no_mangle]
pub extern "C" fn netsync_client_render_time(
    client: *mut NetsyncClient,
    mode: u32,
    out: *mut f64,
) -> NetsyncResult {
    guard("netsync_client_render_time", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let mode = mode_from(mode)?;
        let t = with_client(client, |c| Ok(c.render_time(mode)))?;
        // SAFETY: checked for NULL.
        unsafe { out.write(t) };
        Ok(())
    })
}

/// Writes the client's counters and estimates to `*out`.
#[no_mangle]
pub extern "C" fn netsync_client_stats(
    client: *mut NetsyncClient,
    out: *mut NetsyncClientStats,
) -> NetsyncResult {
    guard("netsync_client_stats", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let s = with_client(client, |c| {
            c.refresh_state();
            Ok(c.stats())
        })?;
        let n = s.network;
        let stats = NetsyncClientStats {
            state: state_code(n.state),
            client_id: n.client_id,
            rtt: n.clock.rtt,
            rtt_min: n.clock.rtt_min,
            jitter: n.clock.jitter,
            clock_offset: n.clock.offset,
            clock_resyncs: n.clock.resyncs,
            loss: n.loss,
            render_delay: s.timeline.render_delay,
            target_delay: s.timeline.target_delay,
            remote_entities: s.timeline.entities as u64,
            frames_received: s.timeline.frames,
            frames_out_of_order: s.timeline.frames_out_of_order,
            bytes_sent: n.bytes_sent,
            bytes_received: n.bytes_received,
            bytes_per_second_up: s.bytes_per_second_up,
            bytes_per_second_down: s.bytes_per_second_down,
            malformed: n.malformed,
            reconnects: n.reconnects,
            states_sent: n.states_sent,
            states_skipped: n.states_skipped,
            commands_acked: n.commands_acked,
            global_commands: n.global_commands,
            global_gaps: n.global_gaps,
            messages_queued: s.messages_queued as u64,
            messages_dropped: s.messages_dropped,
            predictions_confirmed: s.prediction.confirmed,
            predictions_timed_out: s.prediction.timed_out,
            prediction_error_last: s.prediction.last_error as f64,
            prediction_error_max: s.prediction.max_error as f64,
            scripted_elements: s.scripted_elements as u64,
            snapshots_lost: n.snapshots_lost,
            states_repeated: n.states_repeated,
        };
        // SAFETY: checked for NULL.
        unsafe { out.write(stats) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::send_rights::Refusal;

    #[test]
    fn claim_codes_are_the_relays() {
        for (refusal, code) in [
            (Refusal::UnknownEntity, NETSYNC_CLAIM_UNKNOWN_ENTITY),
            (Refusal::Conflict, NETSYNC_CLAIM_CONFLICT),
            (Refusal::NotNeutral, NETSYNC_CLAIM_NOT_NEUTRAL),
            (
                Refusal::NotYourController,
                NETSYNC_CLAIM_NOT_YOUR_CONTROLLER,
            ),
            (Refusal::Cooldown, NETSYNC_CLAIM_COOLDOWN),
            (Refusal::AlreadyHolder, NETSYNC_CLAIM_ALREADY_HOLDER),
            (Refusal::NotHolder, NETSYNC_CLAIM_NOT_HOLDER),
            (Refusal::Stale, NETSYNC_CLAIM_STALE),
        ] {
            assert_eq!(refusal.code() as u32, code, "{refusal:?}");
        }
    }
}
