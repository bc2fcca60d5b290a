//! The relay's network thread: UDP socket, handshake gate, laminar, and
//! the sans-IO [`Relay`] stepped in real time. Runs standalone
//! (`netsync relay`) or embedded (`netsync_server_*`).

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use foldhash::{HashMap, HashMapExt};

use laminar::{Config, ConnectionManager, Packet, SocketEvent, VirtualConnection};

use super::embedded::{link, GameEnd, RelayEnd, ServerEvent};
use super::relay::{Relay, RelayConfig, RelayStats};
use crate::net::ack_pacer::{PacerConfig, PacerStats};
use crate::net::clock::NetClock;
use crate::net::handshake::GateSecurity;
use crate::net::laminar_socket::{GateStats, RelaySocket};
use crate::net::raw_socket::{RawSocket, UdpTransport};
use crate::net::secure::RelaySecret;
use crate::net::worker::Worker;
use crate::wire::batch;
use crate::wire::message::Message;

/// Settings of a running relay.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RelayServerConfig {
    pub bind: SocketAddr,
    pub relay: RelayConfig,
    pub max_clients: usize,
    /// Silence after which a client is dropped (s).
    pub idle_timeout: f64,
    /// Interval of the reliable keep-alive that carries acks on an idle
    /// connection (s); answers and loss recovery go sooner (net::ack_pacer).
    pub keepalive_interval: f64,
    /// Kernel socket buffer size (bytes).
    pub socket_buffer: usize,
    /// Secure mode (docs/security.md): only clients with a connect token
    /// issued with this secret are admitted, and every datagram after the
    /// handshake is encrypted and authenticated. None: plain mode, for
    /// LAN and development.
    pub secret: Option<RelaySecret>,
    /// The address tokens name for this relay (what clients connect to,
    /// behind NAT the public one). None: the bound address; a relay bound
    /// to 0.0.0.0 then accepts tokens naming any IP with its port.
    pub public_address: Option<SocketAddr>,
}

impl Default for RelayServerConfig {
    fn default() -> Self {
        RelayServerConfig {
            bind: SocketAddr::from(([0, 0, 0, 0], 7777)),
            relay: RelayConfig::default(),
            max_clients: 1024,
            idle_timeout: 5.0,
            keepalive_interval: 0.5,
            socket_buffer: 8 << 20,
            secret: None,
            public_address: None,
        }
    }
}

impl RelayServerConfig {
    /// Checks every setting; an error names the setting as the command
    /// line and config files spell it (`idle-timeout`).
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        let r = &self.relay;
        let in_range = |v: f64, lo: f64, hi: f64| v.is_finite() && (lo..=hi).contains(&v);
        let bad = |setting, rule| Err(InvalidSetting { setting, rule });
        if !in_range(r.send_rate, 1.0, 240.0) {
            return bad("rate", "1..=240 Hz");
        }
        if !(256..=1400).contains(&r.mtu) {
            return bad("mtu", "256..=1400 bytes");
        }
        if r.budget_per_tick < r.mtu {
            return bad("budget", "at least the mtu");
        }
        if self.max_clients == 0 {
            return bad("max-clients", ">= 1");
        }
        if r.max_entities_per_client == 0 {
            return bad("max-entities-per-client", ">= 1");
        }
        if !in_range(self.idle_timeout, 0.5, 600.0) {
            return bad("idle-timeout", "0.5..=600 s");
        }
        if !in_range(r.cell_size as f64, 0.0, 1e6) {
            return bad("cell-size", "0 (no grid) ..= 1e6 m");
        }
        if !in_range(r.rights.claim_cooldown, 0.0, 60.0) {
            return bad("claim-cooldown", "0..=60 s");
        }
        if !in_range(r.rights.rest_timeout, 0.0, 3600.0) {
            return bad("rest-timeout", "0 (never) ..= 3600 s");
        }
        if r.server_inbox_capacity > MAX_SERVER_INBOX {
            return bad("server-inbox", "0..=1048576 messages");
        }
        r.lockstep
            .validate()
            .map_err(|(setting, rule)| InvalidSetting { setting, rule })
    }

    /// Sets one setting by name (the command line's `--key value` and a
    /// config file's `key = value` share these names).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        fn parse<T: std::str::FromStr>(key: &str, value: &str) -> Result<T, String> {
            value
                .parse()
                .map_err(|_| format!("`{value}` is not a valid {key}"))
        }
        use super::send_rights::InitialHolder;
        match key {
            "bind" => self.bind = parse(key, value)?,
            "rate" => self.relay.send_rate = parse(key, value)?,
            "max-clients" => self.max_clients = parse(key, value)?,
            "max-entities-per-client" => self.relay.max_entities_per_client = parse(key, value)?,
            "idle-timeout" => self.idle_timeout = parse(key, value)?,
            "mtu" => self.relay.mtu = parse(key, value)?,
            "budget" => self.relay.budget_per_tick = parse(key, value)?,
            "cell-size" => self.relay.cell_size = parse(key, value)?,
            "claim-cooldown" => self.relay.rights.claim_cooldown = parse(key, value)?,
            "rest-timeout" => self.relay.rights.rest_timeout = parse(key, value)?,
            "lockstep-input-delay" => self.relay.lockstep.input_delay = parse(key, value)?,
            "lockstep-sync-interval" => self.relay.lockstep.sync_interval = parse(key, value)?,
            "lockstep-stall-timeout" => self.relay.lockstep.stall_timeout = parse(key, value)?,
            "lockstep-min-members" => self.relay.lockstep.min_members = parse(key, value)?,
            "lockstep-max-members" => self.relay.lockstep.max_members = parse(key, value)?,
            "lockstep-history-frames" => self.relay.lockstep.history_frames = parse(key, value)?,
            "lockstep-history-bytes" => self.relay.lockstep.history_bytes = parse(key, value)?,
            "lockstep-hash-window" => self.relay.lockstep.hash_window = parse(key, value)?,
            "secret-file" => {
                let text = std::fs::read_to_string(value)
                    .map_err(|e| format!("cannot read the secret file {value}: {e}"))?;
                self.secret =
                    Some(RelaySecret::from_hex(&text).map_err(|e| format!("{value}: {e}"))?);
            }
            "public-address" => self.public_address = Some(parse(key, value)?),
            "neutral" => {
                self.relay.rights.initial_holder = match value {
                    "first-ready" => InitialHolder::FirstReady,
                    "nobody" => InitialHolder::Nobody,
                    _ => return Err(format!("`{value}` is not first-ready or nobody")),
                }
            }
            _ => return Err(format!("unknown setting `{key}`")),
        }
        Ok(())
    }
}

/// A setting out of its range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidSetting {
    /// As the command line spells it (`idle-timeout`).
    pub setting: &'static str,
    pub rule: &'static str,
}

impl std::fmt::Display for InvalidSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} must be {}", self.setting, self.rule)
    }
}

/// Most messages an embedded server's inbox may be set to keep.
pub const MAX_SERVER_INBOX: usize = 1 << 20;

/// Every setting name [`RelayServerConfig::set`] takes.
pub const SETTING_NAMES: [&str; 21] = [
    "bind",
    "secret-file",
    "public-address",
    "rate",
    "max-clients",
    "max-entities-per-client",
    "idle-timeout",
    "mtu",
    "budget",
    "cell-size",
    "claim-cooldown",
    "rest-timeout",
    "neutral",
    "lockstep-input-delay",
    "lockstep-sync-interval",
    "lockstep-stall-timeout",
    "lockstep-min-members",
    "lockstep-max-members",
    "lockstep-history-frames",
    "lockstep-history-bytes",
    "lockstep-hash-window",
];

/// Everything a relay counts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RelayServerStats {
    pub relay: RelayStats,
    pub gate: GateStats,
    pub clients_joined: u64,
    pub clients_left: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Messages and events for the embedded server dropped because the
    /// game did not poll them.
    pub server_messages_dropped: u64,
    pub server_events_dropped: u64,
    /// Reliable-traffic pacing summed over the clients connected now.
    pub pacing: PacerStats,
    /// Durations of the send ticks so far.
    pub tick_times: TickTimes,
}

/// A relay running on its own thread. Dropping it stops and joins it.
pub struct RelayServer {
    worker: Worker,
    local_addr: SocketAddr,
    stats: Arc<Mutex<RelayServerStats>>,
    clock: NetClock,
    game: Option<GameEnd>,
}

/// laminar settings shared by relay and clients: ordered reliable messages
/// must fit one fragment, so the fragment size is the ceiling we check.
pub(crate) fn laminar_config(idle_timeout: f64) -> Config {
    Config {
        idle_connection_timeout: Duration::from_secs_f64(idle_timeout),
        heartbeat_interval: Some(Duration::from_millis(250)),
        max_packets_in_flight: 1024,
        receive_buffer_max_size: crate::net::raw_socket::MAX_DATAGRAM,
        // Keep-alives and ack requests (one byte) are not resent: they
        // only carry acks (third_party/laminar/README-NETSYNC.md, 3).
        resend_min_payload: 2,
        // Heartbeats, resends on no news and timeouts may be 10 ms late;
        // a relay polling a thousand connections every 0.5 ms then
        // visits only those with traffic (README-NETSYNC.md, 4).
        full_update_interval: Duration::from_millis(10),
        ..Config::default()
    }
}

/// Largest reliable message: one laminar fragment (ordered delivery breaks
/// across fragments).
pub const MAX_RELIABLE: usize = 1024;

impl RelayServer {
    /// Binds and starts a standalone relay thread (no game side: messages
    /// for a server are not kept).
    pub fn start(config: RelayServerConfig) -> io::Result<RelayServer> {
        Self::launch(config, false, None)
    }

    /// [`RelayServer::start`], recording to `path` (docs/replay.md) until
    /// the relay stops.
    pub fn start_recording(
        config: RelayServerConfig,
        path: &std::path::Path,
    ) -> io::Result<RelayServer> {
        Self::launch(config, false, Some(path))
    }

    /// Binds and starts the relay thread with a game side
    /// ([`RelayServer::game`]): the embedded server of a host or
    /// dedicated-server build.
    pub fn start_embedded(config: RelayServerConfig) -> io::Result<RelayServer> {
        Self::launch(config, true, None)
    }

    /// [`RelayServer::start_embedded`], recording to `path` (when given)
    /// until the relay stops.
    pub fn start_embedded_recording(
        config: RelayServerConfig,
        path: Option<&std::path::Path>,
    ) -> io::Result<RelayServer> {
        Self::launch(config, true, path)
    }

    fn launch(
        config: RelayServerConfig,
        embedded: bool,
        record: Option<&std::path::Path>,
    ) -> io::Result<RelayServer> {
        let secure = config.secret.is_some();
        let udp = UdpTransport::bind(config.bind, config.socket_buffer)?;
        let clock = NetClock::real();
        let mut driver = RelayDriver::new(udp, config, clock.clone());
        if let Some(path) = record {
            driver.relay.record(path)?;
        }
        let game = embedded.then(|| driver.embed());
        let local_addr = driver.local_addr()?;
        let stats = Arc::new(Mutex::new(RelayServerStats::default()));
        let shared = stats.clone();
        let worker = Worker::spawn("netsync-relay", move |stop| {
            let mut next_publish = Instant::now();
            while !stop.load(Ordering::Acquire) {
                let started = Instant::now();
                driver.step();
                if Instant::now() >= next_publish {
                    next_publish += Duration::from_millis(50);
                    *shared.lock().unwrap_or_else(|p| p.into_inner()) = driver.stats();
                }
                // One step per interval, however long the step took.
                let next = started + driver.step_interval();
                if let Some(rest) = next.checked_duration_since(Instant::now()) {
                    std::thread::sleep(rest);
                }
            }
            log::info!(target: "netsync::relay", "relay stopped");
        })?;
        if secure {
            log::info!(target: "netsync::relay", "relay listening on {local_addr} (secure mode: connect tokens, encrypted datagrams)");
        } else {
            log::warn!(target: "netsync::relay", "relay listening on {local_addr} in PLAIN mode: no authentication, no encryption; for LAN and development only (start with a secret for public servers, docs/security.md)");
        }
        Ok(RelayServer {
            worker,
            local_addr,
            stats,
            clock,
            game,
        })
    }

    /// The relay's clock (s since it started): the server time clients
    /// share.
    pub fn server_time(&self) -> f64 {
        self.clock.now()
    }

    /// The game's end of an embedded relay (None for a standalone one).
    pub fn game(&mut self) -> Option<&mut GameEnd> {
        self.game.as_mut()
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub fn stats(&self) -> RelayServerStats {
        *self.stats.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stops the thread and waits for it (dropping does the same).
    pub fn stop(mut self) {
        self.worker.stop();
    }
}

/// The relay's loop body, over any socket and clock: the thread above
/// calls [`RelayDriver::step`] in real time; deterministic simulations
/// call it on a manual clock over an in-memory network.
pub struct RelayDriver<R: RawSocket> {
    manager: ConnectionManager<RelaySocket<R>, VirtualConnection>,
    relay: Relay,
    clock: NetClock,
    config: RelayServerConfig,
    /// Looked up for every datagram (never iterated).
    ids: HashMap<SocketAddr, u32>,
    addrs: HashMap<u32, SocketAddr>,
    stats: RelayServerStats,
    next_pace: f64,
    keepalive: Vec<u8>,
    ack_request: Vec<u8>,
    embedded: Option<RelayEnd>,
}

/// See [`RelayDriver::step_interval`].
const STEP_INTERVAL: Duration = Duration::from_micros(500);

/// How often the relay asks its pacers what is due (s): well inside the
/// 5 ms answer delay, without a pass over every client on every step.
const PACE_INTERVAL: f64 = 0.002;

impl<R: RawSocket> RelayDriver<R> {
    pub fn new(socket: R, config: RelayServerConfig, clock: NetClock) -> Self {
        let pacing = PacerConfig {
            idle_interval: config.keepalive_interval,
            ..PacerConfig::default()
        };
        let security = config.secret.map(|secret| {
            let bound = socket
                .local_addr()
                .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
            GateSecurity::new(secret, config.public_address.unwrap_or(bound))
        });
        let socket = RelaySocket::new(socket, config.max_clients, clock.clone(), pacing, security);
        let encode = |m: Message| m.to_bytes(&config.relay.precision).unwrap_or_default();
        let keepalive = encode(Message::KeepAlive);
        let ack_request = encode(Message::AckRequest);
        let mut relay = Relay::new(config.relay);
        // Until a game embeds it, nobody takes messages for the server.
        relay.keep_server_messages(false);
        RelayDriver {
            manager: ConnectionManager::new(socket, laminar_config(config.idle_timeout)),
            relay,
            clock,
            config,
            ids: HashMap::new(),
            addrs: HashMap::new(),
            stats: RelayServerStats::default(),
            next_pace: 0.0,
            keepalive,
            ack_request,
            embedded: None,
        }
    }

    /// Connects a game to this relay as its embedded server.
    pub fn embed(&mut self) -> GameEnd {
        let (game, relay) = link(self.config.relay.server_inbox_capacity);
        self.embedded = Some(relay);
        self.relay.keep_server_messages(true);
        game
    }

    /// A client the relay dropped because it came back on a new
    /// connection: its old address is no longer admitted.
    fn forget_connection(&mut self, id: u32) {
        if let Some(addr) = self.addrs.remove(&id) {
            // The same address may already carry the new connection.
            if self.ids.get(&addr) == Some(&id) {
                self.ids.remove(&addr);
                self.manager.socket_mut().evict(&addr);
            }
            self.stats.clients_left += 1;
            self.tell_game(ServerEvent::ClientLeft { client: id });
        }
    }

    fn tell_game(&mut self, event: ServerEvent) {
        if let Some(e) = self.embedded.as_mut() {
            e.event(event);
        }
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        laminar::DatagramSocket::local_addr(self.manager.socket())
    }

    pub fn stats(&self) -> RelayServerStats {
        let mut s = self.stats;
        s.relay = self.relay.stats();
        s.gate = self.manager.socket().stats();
        s.pacing = self.manager.socket().pacer_totals();
        if let Some(e) = &self.embedded {
            s.server_messages_dropped = e.dropped_messages;
            s.server_events_dropped = e.dropped_events;
        }
        s
    }

    /// How often the relay thread steps, however many clients it has.
    /// A step's fixed cost is small since laminar polls only busy
    /// connections (laminar patch 4), and a snapshot waits for the next
    /// step after its due time: at 1 000 clients a 0.5 ms step measured
    /// the same CPU as a 1 ms one and half the hop (docs/benchmarks.md).
    pub fn step_interval(&self) -> Duration {
        STEP_INTERVAL
    }

    /// Holder and epoch of an entity with send rights (simulations check
    /// that clients converge on it).
    pub fn holder(&self, entity: u64) -> Option<(Option<u32>, u32)> {
        self.relay.holder(entity)
    }

    /// Receives, handles, ticks and sends whatever is due now.
    pub fn step(&mut self) {
        // Output first, polled out at once: the snapshots due now leave in
        // this step, not the next.
        let now = self.clock.now();
        if let Some(e) = self.embedded.as_mut() {
            e.apply_calls(&mut self.relay, now);
        }
        let earliest_due = self.relay.step(now);
        if let Some(e) = self.embedded.as_mut() {
            e.deliver(&mut self.relay);
        }
        let sender = self.manager.event_sender().clone();
        if now >= self.next_pace {
            self.next_pace = now + PACE_INTERVAL;
            let (ack_request, keepalive) = (&self.ack_request, &self.keepalive);
            self.manager.socket_mut().pace_each(now, |addr, due| {
                for _ in 0..due.ack_requests {
                    let _ = sender.send(Packet::reliable_unordered(addr, ack_request.clone()));
                }
                if due.keepalive {
                    let _ = sender.send(Packet::reliable_unordered(addr, keepalive.clone()));
                }
            });
        }
        // Reliable messages per client, in order, batched (wire/batch.rs).
        let mut reliable: Vec<(u32, Vec<u8>)> = Vec::new();
        for out in self.relay.drain() {
            let Some(&addr) = self.addrs.get(&out.client) else {
                continue;
            };
            if !out.reliable {
                self.stats.bytes_sent += out.payload.len() as u64;
                let _ = sender.send(Packet::unreliable(addr, out.payload));
            } else if out.payload.len() > MAX_RELIABLE {
                // laminar would fragment it and lose its ordering.
                log::error!(target: "netsync::relay", "reliable message of {} bytes dropped (limit {MAX_RELIABLE})", out.payload.len());
            } else {
                reliable.push((out.client, out.payload));
            }
        }
        // A stable sort keeps each client's messages in their order.
        reliable.sort_by_key(|(client, _)| *client);
        for group in reliable.chunk_by_mut(|a, b| a.0 == b.0) {
            let addr = self.addrs[&group[0].0];
            let queue = group.iter_mut().map(|(_, payload)| std::mem::take(payload));
            for payload in batch::pack(queue, MAX_RELIABLE) {
                self.stats.bytes_sent += payload.len() as u64;
                let _ = sender.send(Packet::reliable_ordered(addr, payload, Some(0)));
            }
        }
        // Sent before laminar handles what arrived since the last step:
        // a backlog of input never delays the snapshots that are due.
        self.manager.send_queued(self.clock.instant());
        if let Some(due) = earliest_due {
            self.stats.tick_times.record(self.clock.now() - due);
        }
        self.manager.manual_poll(self.clock.instant());
        // Input, stamped with the time it was read; answers go next step.
        let now = self.clock.now();
        for (addr, admission) in self.manager.socket_mut().take_admitted() {
            self.ids.insert(addr, admission.client_id);
            self.addrs.insert(admission.client_id, addr);
            self.relay.join(admission.client_id, now);
            self.stats.clients_joined += 1;
            self.tell_game(ServerEvent::ClientJoined {
                client: admission.client_id,
            });
            log::info!(target: "netsync::relay", "client {} joined from {addr}", admission.client_id);
        }
        while let Ok(event) = self.manager.event_receiver().try_recv() {
            match event {
                SocketEvent::Packet(p) => {
                    self.stats.bytes_received += p.payload().len() as u64;
                    if let Some(&id) = self.ids.get(&p.addr()) {
                        self.relay.receive(id, p.payload(), now);
                    }
                    for old in self.relay.take_displaced() {
                        self.forget_connection(old);
                    }
                }
                SocketEvent::Timeout(addr) | SocketEvent::Disconnect(addr) => {
                    self.manager.socket_mut().evict(&addr);
                    if let Some(id) = self.ids.remove(&addr) {
                        self.addrs.remove(&id);
                        self.relay.leave(id, now);
                        self.stats.clients_left += 1;
                        self.tell_game(ServerEvent::ClientLeft { client: id });
                        log::info!(target: "netsync::relay", "client {id} left ({addr} went silent)");
                    }
                }
                SocketEvent::Connect(_) => {}
            }
        }
    }
}

/// How long the relay takes from a snapshot's due time to handing it to
/// the kernel (the worst of each step): the relay's own share of a hop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TickTimes {
    /// Counts per 0.25 ms bucket; the last one holds everything longer.
    pub buckets: [u32; TICK_BUCKETS],
}

/// Buckets of [`TickTimes`] (0.25 ms each: up to 16 ms, then overflow).
pub const TICK_BUCKETS: usize = 65;
const TICK_BUCKET: f64 = 0.000_25;

impl Default for TickTimes {
    fn default() -> Self {
        TickTimes {
            buckets: [0; TICK_BUCKETS],
        }
    }
}

impl TickTimes {
    fn record(&mut self, seconds: f64) {
        let i = ((seconds.max(0.0) / TICK_BUCKET) as usize).min(TICK_BUCKETS - 1);
        self.buckets[i] = self.buckets[i].saturating_add(1);
    }

    pub fn count(&self) -> u64 {
        self.buckets.iter().map(|&b| b as u64).sum()
    }

    /// The ticks recorded since `earlier` (a copy taken before).
    pub fn since(&self, earlier: &TickTimes) -> TickTimes {
        let mut d = TickTimes::default();
        for (i, b) in d.buckets.iter_mut().enumerate() {
            *b = self.buckets[i].saturating_sub(earlier.buckets[i]);
        }
        d
    }

    /// Upper edge of the bucket holding quantile `q` (s); infinite when it
    /// falls in the overflow bucket, 0 with no ticks.
    pub fn quantile(&self, q: f64) -> f64 {
        let total = self.count();
        if total == 0 {
            return 0.0;
        }
        let rank = (q.clamp(0.0, 1.0) * total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, &b) in self.buckets.iter().enumerate() {
            seen += b as u64;
            if seen >= rank {
                return if i == TICK_BUCKETS - 1 {
                    f64::INFINITY
                } else {
                    (i + 1) as f64 * TICK_BUCKET
                };
            }
        }
        f64::INFINITY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_times_give_bucket_quantiles_over_a_window() {
        let mut t = TickTimes::default();
        for _ in 0..98 {
            t.record(0.0003); // bucket 1: up to 0.5 ms
        }
        let before = t;
        t.record(0.0021); // up to 2.25 ms
        t.record(0.5); // overflow
        let near = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert_eq!(t.count(), 100);
        assert!(near(t.quantile(0.5), 0.0005));
        assert!(near(t.quantile(0.99), 0.00225));
        assert_eq!(t.quantile(1.0), f64::INFINITY);
        let window = t.since(&before);
        assert_eq!(window.count(), 2);
        assert!(near(window.quantile(0.5), 0.00225));
        assert_eq!(TickTimes::default().quantile(0.99), 0.0);
    }
}
