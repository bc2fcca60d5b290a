//! The client's network thread: handshake, laminar, clock probes, owned
//! state out through the send filter, snapshots in. It never blocks the
//! engine: everything crosses through channels.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use laminar::{ConnectionManager, Packet, SocketEvent, VirtualConnection};

use super::clock::{ClockEstimator, ClockStats};
use super::config::ClientConfig;
use super::events::{ClientEvent, ConnectionState, DisconnectReason, FromNetwork, ToNetwork};
use super::loss::LossMeter;
use crate::core::pose::Sample;
use crate::core::send_filter::SendFilter;
use crate::net::handshake::ClientHandshake;
use crate::net::laminar_socket::ClientSocket;
use crate::net::raw_socket::{Conditioned, RawSocket, UdpTransport};
use crate::server::relay_server::laminar_config;
use crate::wire::message::{EntityUpdate, Message};
use crate::wire::quantize::Precision;
use crate::wire::Writer;

/// What the network thread shares for stats (read by the engine).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NetworkStats {
    pub state: ConnectionState,
    pub client_id: u32,
    pub clock: ClockStats,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub packets_received: u64,
    pub malformed: u64,
    pub reconnects: u64,
    /// Owned states the send filter let through / held back.
    pub states_sent: u64,
    pub states_skipped: u64,
    /// Share of recent clock probes that got no answer (round-trip loss).
    pub loss: f64,
}

impl Default for NetworkStats {
    fn default() -> Self {
        NetworkStats {
            state: ConnectionState::Connecting,
            client_id: 0,
            clock: ClockStats::default(),
            bytes_sent: 0,
            bytes_received: 0,
            packets_received: 0,
            malformed: 0,
            reconnects: 0,
            states_sent: 0,
            states_skipped: 0,
            loss: 0.0,
        }
    }
}

/// Any socket the client can run on: plain UDP or conditioned.
#[derive(Debug)]
pub(crate) enum AnySocket {
    Plain(UdpTransport),
    Conditioned(Box<Conditioned<UdpTransport>>),
}

impl RawSocket for AnySocket {
    fn send(&mut self, to: std::net::SocketAddr, payload: &[u8]) -> io::Result<usize> {
        match self {
            AnySocket::Plain(s) => s.send(to, payload),
            AnySocket::Conditioned(s) => s.send(to, payload),
        }
    }
    fn recv(&mut self, buffer: &mut [u8]) -> io::Result<(usize, std::net::SocketAddr)> {
        match self {
            AnySocket::Plain(s) => s.recv(buffer),
            AnySocket::Conditioned(s) => s.recv(buffer),
        }
    }
    fn local_addr(&self) -> io::Result<std::net::SocketAddr> {
        match self {
            AnySocket::Plain(s) => s.local_addr(),
            AnySocket::Conditioned(s) => s.local_addr(),
        }
    }
}

type Manager = ConnectionManager<ClientSocket<AnySocket>, VirtualConnection>;

fn open(config: &ClientConfig, attempt: u64) -> io::Result<Manager> {
    let bind = if config.relay.is_ipv4() {
        "0.0.0.0:0"
    } else {
        "[::]:0"
    };
    let udp = UdpTransport::bind(bind.parse().expect("literal address"), config.socket_buffer)?;
    let socket = match config.conditioner {
        Some(profile) => AnySocket::Conditioned(Box::new(Conditioned::new(
            udp,
            profile,
            config.conditioner_seed.wrapping_add(attempt),
        ))),
        None => AnySocket::Plain(udp),
    };
    let nonce = fastrand::u64(..);
    Ok(ConnectionManager::new(
        ClientSocket::new(socket, config.relay, nonce),
        laminar_config(config.idle_timeout),
    ))
}

pub(crate) struct Network {
    pub config: ClientConfig,
    pub epoch: Instant,
    pub to_engine: Sender<FromNetwork>,
    pub events: Sender<ClientEvent>,
    pub from_engine: Receiver<ToNetwork>,
    pub stop: Arc<AtomicBool>,
    pub stats: Arc<Mutex<NetworkStats>>,
}

/// One connection attempt's life.
enum Phase {
    Handshaking {
        since: f64,
    },
    Connected,
    Waiting {
        until: f64,
    },
    /// Refused: final for this client.
    Refused,
}

impl Network {
    fn now(&self) -> f64 {
        self.epoch.elapsed().as_secs_f64()
    }

    fn emit(&self, event: ClientEvent) {
        let _ = self.events.send(event);
    }

    pub fn run(self) {
        let mut stats = NetworkStats::default();
        let mut attempt = 0u64;
        let mut manager = match open(&self.config, attempt) {
            Ok(m) => Some(m),
            Err(e) => {
                log::error!(target: "netsync::client", "cannot open a socket: {e}");
                None
            }
        };
        let mut phase = Phase::Handshaking { since: self.now() };
        let mut clock = ClockEstimator::new(64, 0.05);
        let mut filter = SendFilter::new(self.config.send_filter);
        // Per owned entity: its latest true state and when it was true.
        let mut owned: HashMap<u64, (Sample, f64)> = HashMap::new();
        let mut precision = Precision::default();
        let mut ping_sequence = 0u32;
        let mut pings: HashMap<u32, f64> = HashMap::new();
        let mut loss = LossMeter::default();
        let mut next_send = 0.0;
        let mut next_ping = 0.0;
        let mut next_keepalive = 0.0;
        let mut ever_connected = false;
        let mut seen_resyncs = 0u64;
        let mut reported_state = None;

        while !self.stop.load(Ordering::Acquire) {
            let now = self.now();
            // Engine -> network.
            loop {
                match self.from_engine.try_recv() {
                    Ok(ToNetwork::OwnedState {
                        entity,
                        sample,
                        local_time,
                    }) => {
                        owned.insert(entity, (sample, local_time));
                    }
                    Ok(ToNetwork::Forget { entity }) => {
                        owned.remove(&entity);
                        filter.forget(entity);
                    }
                    Err(crossbeam_channel::TryRecvError::Empty) => break,
                    Err(crossbeam_channel::TryRecvError::Disconnected) => return,
                }
            }
            if let Phase::Waiting { until } = phase {
                if now >= until {
                    attempt += 1;
                    manager = open(&self.config, attempt).ok();
                    phase = Phase::Handshaking { since: now };
                    stats.state = ConnectionState::Connecting;
                }
            }
            let Some(m) = manager.as_mut() else {
                std::thread::sleep(Duration::from_millis(5));
                if !matches!(phase, Phase::Refused | Phase::Waiting { .. }) {
                    phase = Phase::Waiting { until: now + 1.0 };
                }
                continue;
            };
            m.socket_mut().poll_handshake();
            m.manual_poll(Instant::now());
            let mut lost = false;
            while let Ok(event) = m.event_receiver().try_recv() {
                match event {
                    SocketEvent::Packet(p) => {
                        stats.bytes_received += p.payload().len() as u64;
                        stats.packets_received += 1;
                        match Message::decode(p.payload(), &precision) {
                            Ok(message) => {
                                if let Message::Pong { sequence, .. } = message {
                                    loss.answered(sequence);
                                }
                                self.on_message(
                                    message,
                                    now,
                                    &mut clock,
                                    &mut precision,
                                    &mut pings,
                                )
                            }
                            Err(e) => {
                                stats.malformed += 1;
                                log::debug!(target: "netsync::client", "malformed message: {e}");
                            }
                        }
                    }
                    SocketEvent::Timeout(_) | SocketEvent::Disconnect(_) => lost = true,
                    SocketEvent::Connect(_) => {}
                }
            }
            match phase {
                Phase::Handshaking { since } => match m.socket().handshake().clone() {
                    ClientHandshake::Admitted { client_id } => {
                        stats.client_id = client_id;
                        stats.state = ConnectionState::Connected;
                        phase = Phase::Connected;
                        if ever_connected {
                            stats.reconnects += 1;
                            let _ = self.to_engine.send(FromNetwork::Reset);
                            self.emit(ClientEvent::Reconnected { client_id });
                        } else {
                            self.emit(ClientEvent::Connected { client_id });
                        }
                        ever_connected = true;
                        // The relay must hear our owned entities again.
                        filter = SendFilter::new(self.config.send_filter);
                        // laminar needs a first packet to create the connection.
                        next_keepalive = now;
                    }
                    ClientHandshake::Refused(reason) => {
                        stats.state = ConnectionState::Disconnected;
                        self.emit(ClientEvent::Disconnected(DisconnectReason::Refused(reason)));
                        manager = None;
                        phase = Phase::Refused;
                    }
                    _ if now - since > self.config.connect_timeout => {
                        stats.state = ConnectionState::Disconnected;
                        if reported_state != Some(DisconnectReason::ConnectTimeout) {
                            self.emit(ClientEvent::Disconnected(DisconnectReason::ConnectTimeout));
                            reported_state = Some(DisconnectReason::ConnectTimeout);
                        }
                        manager = None;
                        phase = Phase::Waiting { until: now + 1.0 };
                    }
                    _ => {}
                },
                Phase::Connected if lost => {
                    stats.state = ConnectionState::Disconnected;
                    self.emit(ClientEvent::Disconnected(DisconnectReason::RelayTimeout));
                    reported_state = Some(DisconnectReason::RelayTimeout);
                    manager = None;
                    phase = if self.config.reconnect {
                        Phase::Waiting { until: now + 0.5 }
                    } else {
                        Phase::Waiting {
                            until: f64::INFINITY,
                        }
                    };
                }
                Phase::Connected => {
                    reported_state = None;
                    let sender = m.event_sender().clone();
                    let relay = self.config.relay;
                    let mut send = |payload: Vec<u8>, reliable: bool| {
                        stats.bytes_sent += payload.len() as u64;
                        let packet = if reliable {
                            Packet::reliable_unordered(relay, payload)
                        } else {
                            Packet::unreliable(relay, payload)
                        };
                        let _ = sender.send(packet);
                    };
                    if now >= next_keepalive {
                        next_keepalive = now + 0.1;
                        send(encode(&Message::KeepAlive, &precision), true);
                    }
                    if now >= next_ping {
                        next_ping = now + 1.0 / self.config.ping_rate;
                        ping_sequence = ping_sequence.wrapping_add(1);
                        pings.insert(ping_sequence, now);
                        loss.sent(ping_sequence, now);
                        pings.retain(|_, &mut t| now - t < 10.0);
                        send(
                            encode(
                                &Message::Ping {
                                    sequence: ping_sequence,
                                    client_time: now,
                                },
                                &precision,
                            ),
                            false,
                        );
                    }
                    if clock.stats().resyncs != seen_resyncs {
                        // The relay's clock moved: resend everything on the new base.
                        seen_resyncs = clock.stats().resyncs;
                        filter = SendFilter::new(self.config.send_filter);
                    }
                    if now >= next_send {
                        next_send = now + 1.0 / self.config.send_rate;
                        if let Some(server_now) = clock.server_time(now) {
                            let mut updates = Vec::new();
                            for (&entity, (sample, local_time)) in &owned {
                                // Stamp with the server time the state was true at.
                                let stamp = clock.server_time(*local_time).unwrap_or(server_now);
                                if filter.update(stamp, entity, sample).should_send() {
                                    let mut update = EntityUpdate::from_sample(entity, sample);
                                    update.age = (server_now - stamp).max(0.0);
                                    updates.push(update);
                                    stats.states_sent += 1;
                                } else {
                                    stats.states_skipped += 1;
                                }
                            }
                            for payload in pack_owned_state(server_now, &updates, &precision) {
                                send(payload, false);
                            }
                        }
                    }
                }
                Phase::Waiting { .. } | Phase::Refused => {}
            }
            stats.loss = loss.loss(now);
            self.publish(&stats, &clock);
            std::thread::sleep(Duration::from_micros(500));
        }
    }

    fn publish(&self, stats: &NetworkStats, clock: &ClockEstimator) {
        let mut s = *stats;
        s.clock = clock.stats();
        *self.stats.lock().unwrap_or_else(|p| p.into_inner()) = s;
    }

    fn on_message(
        &self,
        message: Message,
        now: f64,
        clock: &mut ClockEstimator,
        precision: &mut Precision,
        pings: &mut HashMap<u32, f64>,
    ) {
        match message {
            Message::Welcome {
                server_time,
                precision: p,
                ..
            } => {
                *precision = p;
                clock.welcome(server_time, now);
            }
            Message::Pong {
                sequence,
                server_time,
                ..
            } => {
                if let Some(sent) = pings.remove(&sequence) {
                    clock.pong(sent, server_time, now);
                }
            }
            Message::Snapshot {
                server_time,
                updates,
            } => {
                let samples = updates
                    .iter()
                    .map(|u| (u.entity, u.to_sample(server_time)))
                    .collect();
                let _ = self.to_engine.send(FromNetwork::Frame {
                    arrival: now,
                    server_time,
                    samples,
                });
            }
            Message::EntityRemoved { entity, .. } => {
                let _ = self.to_engine.send(FromNetwork::Removed { entity });
            }
            Message::KeepAlive => {}
            Message::Ping { .. } | Message::OwnedState { .. } => {}
        }
    }
}

fn encode(message: &Message, precision: &Precision) -> Vec<u8> {
    let mut w = Writer::new();
    let _ = message.encode(&mut w, precision);
    w.bytes
}

/// Largest owned-state datagram payload (safe MTU).
const OWNED_STATE_MTU: usize = 1200;

/// Owned-state messages of at most `OWNED_STATE_MTU` bytes each, packed by
/// encoded size (an update that cannot be encoded is skipped and logged).
fn pack_owned_state(
    server_time: f64,
    updates: &[EntityUpdate],
    precision: &Precision,
) -> Vec<Vec<u8>> {
    // Type, time and a count of up to three varint bytes.
    const HEADER: usize = 1 + 8 + 3;
    let mut out = Vec::new();
    let mut batch: Vec<EntityUpdate> = Vec::new();
    let mut size = HEADER;
    for update in updates {
        let mut w = Writer::new();
        if update.encode(&mut w, precision).is_err() {
            log::warn!(target: "netsync::client", "entity {}: state out of the wire's range, not sent", update.entity);
            continue;
        }
        if size + w.len() > OWNED_STATE_MTU && !batch.is_empty() {
            out.push(encode(
                &Message::OwnedState {
                    server_time,
                    updates: std::mem::take(&mut batch),
                },
                precision,
            ));
            size = HEADER;
        }
        size += w.len();
        batch.push(*update);
    }
    if !batch.is_empty() {
        out.push(encode(
            &Message::OwnedState {
                server_time,
                updates: batch,
            },
            precision,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::pose::Pose;
    use glam::{Quat, Vec3};

    #[test]
    fn owned_state_packs_within_the_mtu() {
        let updates: Vec<EntityUpdate> = (0..500u64)
            .map(|i| EntityUpdate {
                entity: i * 1_000_003,
                pose: Pose::new(
                    Vec3::splat(1000.0 + i as f32),
                    Quat::from_rotation_y(i as f32),
                ),
                velocity: Some(Vec3::splat(3.0)),
                angular_velocity: Some(Vec3::Y),
                teleport: false,
                age: 0.01,
            })
            .collect();
        let p = Precision::default();
        let packets = pack_owned_state(5.0, &updates, &p);
        let mut count = 0;
        for packet in &packets {
            assert!(packet.len() <= OWNED_STATE_MTU, "{}", packet.len());
            let Message::OwnedState { updates, .. } = Message::decode(packet, &p).unwrap() else {
                panic!()
            };
            count += updates.len();
        }
        assert_eq!(count, 500);
    }
}
