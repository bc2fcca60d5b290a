//! `netsync_server_*`: the relay embedded in a host or dedicated server.

use std::ffi::{c_char, CStr};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;

use super::handles;
use super::result::{guard, guard_void, FfiError, NetsyncResult};
use crate::server::lockstep::LockstepConfig;
use crate::server::relay::RelayConfig;
use crate::server::relay_server::{RelayServer, RelayServerConfig};
use crate::server::send_rights::{InitialHolder, RightsConfig};

/// Opaque relay handle. Thread-safe to read stats from any one thread at
/// a time (overlapping calls fail with `NETSYNC_ERR_BUSY`).
pub struct NetsyncServer {
    _private: [u8; 0],
}

pub(crate) const TYPE_NAME: &str = "NetsyncServer";

/// `NetsyncServerConfig::neutral_initial_holder`: the first client that
/// registers a neutral object holds it (S3: first ready, first served).
pub const NETSYNC_NEUTRAL_FIRST_READY: u32 = 0;
/// `NetsyncServerConfig::neutral_initial_holder`: nobody holds a neutral
/// object until a client claims it by collision (the relay keeps it).
pub const NETSYNC_NEUTRAL_NOBODY: u32 = 1;

/// Relay settings; defaults from `netsync_server_config_default`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NetsyncServerConfig {
    /// UDP port; 0 picks a free one (read it with `netsync_server_port`). Default 7777.
    pub port: u16,
    /// Snapshot sends per second to each client, 1..=240. Default 30.
    pub send_rate: f64,
    /// Largest datagram payload the relay builds, 256..=1400 bytes. Default 1200.
    pub mtu: u32,
    /// Most snapshot bytes per client per send tick, >= mtu. Default 19200.
    pub budget_per_tick: u32,
    /// Most clients, >= 1. Default 1024.
    pub max_clients: u32,
    /// Most entities one client may own, >= 1. Default 4096.
    pub max_entities_per_client: u32,
    /// Silence after which a client is dropped (s), 0.5..=600. Default 5.
    pub idle_timeout: f64,
    /// Interest grid cell edge on the x-z plane (m), 0 (no grid: regions
    /// and global views only) ..= 1e6. Default 50.
    pub cell_size: f32,
    /// Claims on an object refused this long after it changed hands (s),
    /// 0..=60. Default 0.3.
    pub claim_cooldown: f64,
    /// A held neutral object whose holder sends no movement this long
    /// returns to nobody (s), 0 (never) ..= 3600. Default 2.
    pub rest_timeout: f64,
    /// `NETSYNC_NEUTRAL_*`. Default `NETSYNC_NEUTRAL_FIRST_READY`.
    pub neutral_initial_holder: u32,
    /// Most messages (commands for the server) kept until
    /// `netsync_server_poll_message` takes them, 0..=1048576; more are
    /// dropped and counted. 0: keep none (a server that only relays; its
    /// other calls and events still work). Default 65536.
    pub server_inbox_capacity: u32,
    /// Lockstep: frames between a member's input and the frame it is for,
    /// 0..lockstep_sync_interval. Default 3.
    pub lockstep_input_delay: u32,
    /// Lockstep: how far past the newest confirmed frame a member may
    /// send input (S4's sync interval), 1..=1024 frames. Default 30.
    pub lockstep_sync_interval: u32,
    /// Lockstep: a frame waits this long for a missing member's input,
    /// then fills it (empty, flagged) until the member sends again (s),
    /// 0.05..=600. Default 1.
    pub lockstep_stall_timeout: f64,
    /// Lockstep: no frame is confirmed before this many members joined,
    /// 1..=lockstep_max_members. Default 1.
    pub lockstep_min_members: u32,
    /// Lockstep: most members, 1..=64. Default 16.
    pub lockstep_max_members: u32,
    /// Lockstep: most confirmed frames kept for joiners after the last
    /// snapshot, 1..=10000000 (also at most `lockstep_history_bytes`).
    /// Default 36000.
    pub lockstep_history_frames: u32,
    /// Lockstep: most bytes of confirmed frames kept for joiners,
    /// 1024..=1073741824. Default 16777216 (16 MiB).
    pub lockstep_history_bytes: u64,
    /// Lockstep: state hashes are compared for frames up to this far
    /// behind the newest confirmed one (a frame is judged when every
    /// member reported it, or when it falls this far behind),
    /// 1..=1000000 frames. Default 600.
    pub lockstep_hash_window: u32,
}

/// Relay counters.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NetsyncServerStats {
    pub clients: u64,
    pub entities: u64,
    pub clients_joined: u64,
    pub clients_left: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub snapshot_packets: u64,
    /// Messages that did not decode.
    pub malformed: u64,
    /// State or requests for an entity the sender does not hold (or under
    /// an old send-right epoch).
    pub rejected_not_owner: u64,
    /// State stamped too far from the relay's clock.
    pub rejected_stamp: u64,
    /// Datagrams from addresses never admitted.
    pub dropped_unadmitted: u64,
    /// Handshake datagrams dropped (malformed, bad cookie).
    pub dropped_handshakes: u64,
    /// Send-right claims granted and refused.
    pub claims_granted: u64,
    pub claims_refused: u64,
    /// Commands applied, and dropped as duplicates or out of line.
    pub commands: u64,
    pub commands_duplicate: u64,
    pub commands_refused: u64,
    /// Component states accepted from holders.
    pub component_states: u64,
    /// Removals sent because an entity left a client's interest.
    pub interest_removals: u64,
    /// Messages and events for this server dropped because it did not
    /// poll them.
    pub server_messages_dropped: u64,
    pub server_events_dropped: u64,
    /// Lockstep: members, frames confirmed, members marked stalled, inputs
    /// filled for them, desyncs reported.
    pub lockstep_members: u64,
    pub lockstep_frames: u64,
    pub lockstep_stalls: u64,
    pub lockstep_filled: u64,
    pub lockstep_desyncs: u64,
    /// Scripted elements alive on the relay.
    pub scripted_elements: u64,
    /// Entity states sent again because a client reported the snapshot
    /// packet that carried them lost.
    pub snapshot_resends: u64,
    /// Secure mode: handshakes whose connect token did not open (forged,
    /// damaged, for another relay) or whose key proof was wrong.
    pub dropped_bad_token: u64,
    /// Secure mode: datagrams that did not authenticate.
    pub dropped_forged: u64,
    /// Secure mode: datagrams seen before or older than the replay window.
    pub dropped_replayed: u64,
}

impl From<&RelayServerConfig> for NetsyncServerConfig {
    fn from(c: &RelayServerConfig) -> Self {
        NetsyncServerConfig {
            port: c.bind.port(),
            send_rate: c.relay.send_rate,
            mtu: c.relay.mtu as u32,
            budget_per_tick: c.relay.budget_per_tick as u32,
            max_clients: c.max_clients as u32,
            max_entities_per_client: c.relay.max_entities_per_client as u32,
            idle_timeout: c.idle_timeout,
            cell_size: c.relay.cell_size,
            claim_cooldown: c.relay.rights.claim_cooldown,
            rest_timeout: c.relay.rights.rest_timeout,
            neutral_initial_holder: match c.relay.rights.initial_holder {
                InitialHolder::FirstReady => NETSYNC_NEUTRAL_FIRST_READY,
                InitialHolder::Nobody => NETSYNC_NEUTRAL_NOBODY,
            },
            server_inbox_capacity: c.relay.server_inbox_capacity.min(u32::MAX as usize) as u32,
            lockstep_input_delay: c.relay.lockstep.input_delay,
            lockstep_sync_interval: c.relay.lockstep.sync_interval,
            lockstep_stall_timeout: c.relay.lockstep.stall_timeout,
            lockstep_min_members: c.relay.lockstep.min_members,
            lockstep_max_members: c.relay.lockstep.max_members,
            lockstep_history_frames: c.relay.lockstep.history_frames,
            lockstep_history_bytes: c.relay.lockstep.history_bytes as u64,
            lockstep_hash_window: c.relay.lockstep.hash_window,
        }
    }
}

impl NetsyncServerConfig {
    pub(crate) fn to_core(self, ip: IpAddr) -> Result<RelayServerConfig, FfiError> {
        let defaults = RelayServerConfig::default();
        let initial_holder = match self.neutral_initial_holder {
            NETSYNC_NEUTRAL_FIRST_READY => InitialHolder::FirstReady,
            NETSYNC_NEUTRAL_NOBODY => InitialHolder::Nobody,
            other => {
                return Err(FfiError::invalid(format!(
                    "neutral_initial_holder {other} is not a NETSYNC_NEUTRAL_* value"
                )))
            }
        };
        let config = RelayServerConfig {
            bind: SocketAddr::new(ip, self.port),
            relay: RelayConfig {
                send_rate: self.send_rate,
                mtu: self.mtu as usize,
                budget_per_tick: self.budget_per_tick as usize,
                max_entities_per_client: self.max_entities_per_client as usize,
                cell_size: self.cell_size,
                rights: RightsConfig {
                    claim_cooldown: self.claim_cooldown,
                    rest_timeout: self.rest_timeout,
                    initial_holder,
                },
                server_inbox_capacity: self.server_inbox_capacity as usize,
                lockstep: LockstepConfig {
                    input_delay: self.lockstep_input_delay,
                    sync_interval: self.lockstep_sync_interval,
                    stall_timeout: self.lockstep_stall_timeout,
                    min_members: self.lockstep_min_members,
                    max_members: self.lockstep_max_members,
                    history_frames: self.lockstep_history_frames,
                    // Clamped only to fit usize; the range check follows.
                    history_bytes: usize::try_from(self.lockstep_history_bytes)
                        .unwrap_or(usize::MAX),
                    hash_window: self.lockstep_hash_window,
                },
                ..defaults.relay
            },
            max_clients: self.max_clients as usize,
            idle_timeout: self.idle_timeout,
            ..defaults
        };
        config.validate().map_err(|e| {
            // The C field names: `idle_timeout`, not `idle-timeout`.
            let field = match e.setting {
                "rate" => "send_rate".to_string(),
                "budget" => "budget_per_tick".to_string(),
                "server-inbox" => "server_inbox_capacity".to_string(),
                other => other.replace('-', "_"),
            };
            FfiError::invalid(format!("{field} must be {}", e.rule))
        })?;
        Ok(config)
    }
}

/// Reads an optional NUL-terminated string argument.
pub(crate) fn c_str<'a>(s: *const c_char, what: &str) -> Result<Option<&'a str>, FfiError> {
    if s.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL; the caller passes a NUL-terminated string.
    let text = unsafe { CStr::from_ptr(s) };
    text.to_str()
        .map(Some)
        .map_err(|_| FfiError::invalid(format!("`{what}` is not UTF-8")))
}

/// Writes the default settings to `*out`.
#[no_mangle]
pub extern "C" fn netsync_server_config_default(out: *mut NetsyncServerConfig) -> NetsyncResult {
    guard("netsync_server_config_default", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        // SAFETY: checked for NULL.
        unsafe { out.write(NetsyncServerConfig::from(&RelayServerConfig::default())) };
        Ok(())
    })
}

/// Starts a relay on its own thread, listening on `bind_ip` ("0.0.0.0",
/// "127.0.0.1", "::"; NULL means "0.0.0.0") and `config->port` (`config`
/// NULL: defaults). Returns once the socket is bound.
#[no_mangle]
pub extern "C" fn netsync_server_start(
    config: *const NetsyncServerConfig,
    bind_ip: *const c_char,
    out: *mut *mut NetsyncServer,
) -> NetsyncResult {
    guard("netsync_server_start", || {
        start_server(config, bind_ip, None, out, |_| Ok(()))
    })
}

/// [`netsync_server_start`], recording everything the relay accepts and
/// sends on (states, send-right changes, removals, global and component
/// commands, component states) to the file at `path` (UTF-8) until
/// `netsync_server_free`; the format is docs/replay.md, read it with
/// `netsync_replay_open` or `netsync replay FILE`. A file that cannot be
/// created is `NETSYNC_ERR_IO`, before anything is bound.
#[no_mangle]
pub extern "C" fn netsync_server_start_recording(
    config: *const NetsyncServerConfig,
    bind_ip: *const c_char,
    path: *const c_char,
    out: *mut *mut NetsyncServer,
) -> NetsyncResult {
    guard("netsync_server_start_recording", || {
        let path = c_str(path, "path")?.ok_or_else(|| FfiError::null("path"))?;
        start_server(config, bind_ip, Some(Path::new(path)), out, |_| Ok(()))
    })
}

/// Starts a relay from a C config and bind IP, with `adjust` applied to
/// the core settings (secure mode adds its secret there).
pub(crate) fn start_server(
    config: *const NetsyncServerConfig,
    bind_ip: *const c_char,
    record: Option<&Path>,
    out: *mut *mut NetsyncServer,
    adjust: impl FnOnce(&mut RelayServerConfig) -> Result<(), FfiError>,
) -> Result<(), FfiError> {
    if out.is_null() {
        return Err(FfiError::null("out"));
    }
    let ip: IpAddr = c_str(bind_ip, "bind_ip")?
        .unwrap_or("0.0.0.0")
        .parse()
        .map_err(|_| FfiError::invalid("`bind_ip` is not an IP address"))?;
    let config = if config.is_null() {
        NetsyncServerConfig::from(&RelayServerConfig::default())
    } else {
        // SAFETY: checked for NULL.
        unsafe { *config }
    };
    let mut core = config.to_core(ip)?;
    adjust(&mut core)?;
    if let Some(path) = record {
        // Checked here so that the error names the file, not the socket.
        std::fs::File::create(path).map_err(|e| {
            FfiError::new(
                NetsyncResult::NETSYNC_ERR_IO,
                format!("cannot create the recording {}: {e}", path.display()),
            )
        })?;
    }
    let server = RelayServer::start_embedded_recording(core, record).map_err(|e| {
        FfiError::new(
            NetsyncResult::NETSYNC_ERR_IO,
            format!("cannot bind {ip}:{}: {e}", config.port),
        )
    })?;
    handles::publish(out, server);
    Ok(())
}

/// The UDP port the relay listens on.
#[no_mangle]
pub extern "C" fn netsync_server_port(
    server: *const NetsyncServer,
    out: *mut u16,
) -> NetsyncResult {
    guard("netsync_server_port", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let port = handles::with(server as usize as u64, TYPE_NAME, |s: &mut RelayServer| {
            Ok(s.local_addr().port())
        })?;
        // SAFETY: checked for NULL.
        unsafe { out.write(port) };
        Ok(())
    })
}

/// Writes the relay's counters to `*out`.
#[no_mangle]
pub extern "C" fn netsync_server_stats(
    server: *const NetsyncServer,
    out: *mut NetsyncServerStats,
) -> NetsyncResult {
    guard("netsync_server_stats", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let s = handles::with(server as usize as u64, TYPE_NAME, |s: &mut RelayServer| {
            Ok(s.stats())
        })?;
        let stats = NetsyncServerStats {
            clients: s.relay.clients as u64,
            entities: s.relay.entities as u64,
            clients_joined: s.clients_joined,
            clients_left: s.clients_left,
            bytes_sent: s.bytes_sent,
            bytes_received: s.bytes_received,
            snapshot_packets: s.relay.snapshot_packets,
            malformed: s.relay.malformed,
            rejected_not_owner: s.relay.rejected_not_owner,
            rejected_stamp: s.relay.rejected_stamp,
            dropped_unadmitted: s.gate.dropped_unadmitted,
            dropped_handshakes: s.gate.dropped_handshakes,
            claims_granted: s.relay.claims_granted,
            claims_refused: s.relay.claims_refused,
            commands: s.relay.commands,
            commands_duplicate: s.relay.commands_duplicate,
            commands_refused: s.relay.commands_refused,
            component_states: s.relay.component_states,
            interest_removals: s.relay.interest_removals,
            server_messages_dropped: s.server_messages_dropped + s.relay.server_inbox_dropped,
            server_events_dropped: s.server_events_dropped,
            lockstep_members: s.relay.lockstep.members as u64,
            lockstep_frames: s.relay.lockstep.frames,
            lockstep_stalls: s.relay.lockstep.stalls,
            lockstep_filled: s.relay.lockstep.filled,
            lockstep_desyncs: s.relay.lockstep.desyncs,
            scripted_elements: s.relay.scripted_elements as u64,
            snapshot_resends: s.relay.snapshot_resends,
            dropped_bad_token: s.gate.dropped_bad_token,
            dropped_forged: s.gate.dropped_forged,
            dropped_replayed: s.gate.dropped_replayed,
        };
        // SAFETY: checked for NULL.
        unsafe { out.write(stats) };
        Ok(())
    })
}

/// Stops the relay and joins its thread (bounded: it checks its stop flag
/// every half millisecond). NULL or a handle already freed is a no-op.
#[no_mangle]
pub extern "C" fn netsync_server_free(server: *mut NetsyncServer) {
    guard_void("netsync_server_free", || {
        handles::free::<RelayServer, _>(server, TYPE_NAME, "netsync_server_free")
    })
}
