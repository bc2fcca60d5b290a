//! Client settings.

use std::net::SocketAddr;

use crate::core::send_filter::SendFilterConfig;
use crate::core::timeline::TimelineConfig;
use crate::netsim::NetworkProfile;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClientConfig {
    pub relay: SocketAddr,
    /// How remote entities are shown.
    pub timeline: TimelineConfig,
    /// When owned entities' states are worth sending.
    pub send_filter: SendFilterConfig,
    /// Owned-state sends per second.
    pub send_rate: f64,
    /// Clock probes per second.
    pub ping_rate: f64,
    /// Give up one connection attempt after this long (s).
    pub connect_timeout: f64,
    /// The relay counts as gone after this much silence (s).
    pub idle_timeout: f64,
    /// Keep trying to reconnect after losing the relay.
    pub reconnect: bool,
    /// Put this client's traffic through a simulated network (tests, demos).
    pub conditioner: Option<NetworkProfile>,
    pub conditioner_seed: u64,
    /// Kernel socket buffer size (bytes).
    pub socket_buffer: usize,
    /// Secure mode: the connect token the game's backend issued for this
    /// client and relay (docs/security.md). None: plain mode.
    pub token: Option<crate::net::secure::ConnectToken>,
}

impl ClientConfig {
    pub fn new(relay: SocketAddr) -> Self {
        ClientConfig {
            relay,
            timeline: TimelineConfig::default(),
            send_filter: SendFilterConfig::default(),
            send_rate: 30.0,
            ping_rate: 10.0,
            connect_timeout: 5.0,
            idle_timeout: 5.0,
            reconnect: true,
            conditioner: None,
            conditioner_seed: 1,
            socket_buffer: 1 << 20,
            token: None,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        self.timeline.validate()?;
        self.send_filter.validate()?;
        let rate = |v: f64| v.is_finite() && (0.5..=1000.0).contains(&v);
        if !rate(self.send_rate) || !rate(self.ping_rate) {
            return Err("send_rate and ping_rate must be in [0.5, 1000]".into());
        }
        let time = |v: f64| v.is_finite() && (0.1..=600.0).contains(&v);
        if !time(self.connect_timeout) || !time(self.idle_timeout) {
            return Err("timeouts must be in [0.1, 600] s".into());
        }
        Ok(())
    }
}
