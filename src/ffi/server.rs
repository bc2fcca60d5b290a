//! `netsync_server_*`: the relay embedded in a host or dedicated server.

use std::ffi::{c_char, CStr};
use std::net::{IpAddr, SocketAddr};

use super::handles;
use super::result::{guard, guard_void, FfiError, NetsyncResult};
use crate::server::relay::RelayConfig;
use crate::server::relay_server::{RelayServer, RelayServerConfig};

/// Opaque relay handle. Thread-safe to read stats from any one thread at
/// a time (overlapping calls fail with `NETSYNC_ERR_BUSY`).
pub struct NetsyncServer {
    _private: [u8; 0],
}

const TYPE_NAME: &str = "NetsyncServer";

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
    /// State for an entity the sender does not own.
    pub rejected_not_owner: u64,
    /// State stamped too far from the relay's clock.
    pub rejected_stamp: u64,
    /// Datagrams from addresses never admitted.
    pub dropped_unadmitted: u64,
    /// Handshake datagrams dropped (malformed, bad cookie).
    pub dropped_handshakes: u64,
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
        }
    }
}

impl NetsyncServerConfig {
    pub(crate) fn to_core(self, ip: IpAddr) -> Result<RelayServerConfig, FfiError> {
        if !(self.send_rate.is_finite() && (1.0..=240.0).contains(&self.send_rate)) {
            return Err(FfiError::invalid("send_rate must be 1..=240"));
        }
        if !(256..=1400).contains(&self.mtu) {
            return Err(FfiError::invalid("mtu must be 256..=1400"));
        }
        if self.budget_per_tick < self.mtu {
            return Err(FfiError::invalid("budget_per_tick must be >= mtu"));
        }
        if self.max_clients == 0 || self.max_entities_per_client == 0 {
            return Err(FfiError::invalid(
                "max_clients and max_entities_per_client must be >= 1",
            ));
        }
        if !(self.idle_timeout.is_finite() && (0.5..=600.0).contains(&self.idle_timeout)) {
            return Err(FfiError::invalid("idle_timeout must be 0.5..=600 s"));
        }
        let defaults = RelayServerConfig::default();
        Ok(RelayServerConfig {
            bind: SocketAddr::new(ip, self.port),
            relay: RelayConfig {
                send_rate: self.send_rate,
                mtu: self.mtu as usize,
                budget_per_tick: self.budget_per_tick as usize,
                max_entities_per_client: self.max_entities_per_client as usize,
                ..defaults.relay
            },
            max_clients: self.max_clients as usize,
            idle_timeout: self.idle_timeout,
            ..defaults
        })
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
        let server = RelayServer::start(config.to_core(ip)?).map_err(|e| {
            FfiError::new(
                NetsyncResult::NETSYNC_ERR_IO,
                format!("cannot bind {ip}:{}: {e}", config.port),
            )
        })?;
        handles::publish(out, server);
        Ok(())
    })
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
