//! The client's network thread: handshake, laminar, clock probes, owned
//! state out through the send filter, snapshots in. It never blocks the
//! engine: everything crosses through channels.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use laminar::{ConnectionManager, Packet, SocketEvent, VirtualConnection};

use super::clock::{ClockEstimator, ClockStats};
use super::config::ClientConfig;
use super::events::{ClientEvent, ConnectionState, DisconnectReason, FromNetwork, ToNetwork};
use super::loss::LossMeter;
use crate::core::pose::Sample;
use crate::core::send_filter::SendFilter;
use crate::net::clock::NetClock;
use crate::net::handshake::ClientHandshake;
use crate::net::laminar_socket::ClientSocket;
use crate::net::raw_socket::{Conditioned, RawSocket, UdpTransport};
use crate::server::relay_server::laminar_config;
use crate::wire::message::{EntityUpdate, Message, UpdatePacker};
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

/// Makes the socket of each connection attempt (attempt number given).
pub type SocketFactory = Box<dyn FnMut(u64) -> io::Result<Box<dyn RawSocket>> + Send>;

/// Real UDP sockets, conditioned when the config asks.
pub(crate) fn udp_factory(config: &ClientConfig) -> SocketFactory {
    let config = *config;
    Box::new(move |attempt| {
        let bind = if config.relay.is_ipv4() {
            "0.0.0.0:0"
        } else {
            "[::]:0"
        };
        let udp = UdpTransport::bind(bind.parse().expect("literal address"), config.socket_buffer)?;
        Ok(match config.conditioner {
            Some(profile) => Box::new(Conditioned::new(
                udp,
                profile,
                config.conditioner_seed.wrapping_add(attempt),
            )),
            None => Box::new(udp),
        })
    })
}

type Manager = ConnectionManager<ClientSocket<Box<dyn RawSocket>>, VirtualConnection>;

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

/// The network side's ends of the channels to the engine side.
pub(crate) struct EngineLink {
    pub to_engine: Sender<FromNetwork>,
    pub events: Sender<ClientEvent>,
    pub from_engine: Receiver<ToNetwork>,
    pub shared: Arc<Mutex<NetworkStats>>,
}

/// The client's loop body over any socket and clock: the network thread
/// calls [`ClientDriver::step`] in real time; simulations on a manual clock.
pub struct ClientDriver {
    config: ClientConfig,
    clock: NetClock,
    factory: SocketFactory,
    link: EngineLink,
    stats: NetworkStats,
    attempt: u64,
    manager: Option<Manager>,
    phase: Phase,
    clock_estimate: ClockEstimator,
    filter: SendFilter,
    /// Per owned entity: its latest true state and when it was true.
    owned: HashMap<u64, (Sample, f64)>,
    /// Per owned entity: how many states were sent (wrapping).
    sequences: HashMap<u64, u8>,
    /// Send-right epochs as announced (or expected after a claim).
    epochs: HashMap<u64, u32>,
    /// Reliable messages the engine asked for, sent once connected.
    pending_reliable: Vec<Message>,
    /// Every registration, sent again to a new relay after a reconnect.
    registrations: Vec<Message>,
    precision: Precision,
    ping_sequence: u32,
    pings: HashMap<u32, f64>,
    loss: LossMeter,
    next_send: f64,
    next_ping: f64,
    next_keepalive: f64,
    ever_connected: bool,
    seen_resyncs: u64,
    reported: Option<DisconnectReason>,
    engine_gone: bool,
}

impl ClientDriver {
    pub(crate) fn new(
        config: ClientConfig,
        clock: NetClock,
        factory: SocketFactory,
        link: EngineLink,
    ) -> Self {
        let now = clock.now();
        let mut driver = ClientDriver {
            config,
            clock,
            factory,
            link,
            stats: NetworkStats::default(),
            attempt: 0,
            manager: None,
            phase: Phase::Handshaking { since: now },
            clock_estimate: ClockEstimator::new(64, 0.05),
            filter: SendFilter::new(config.send_filter),
            owned: HashMap::new(),
            sequences: HashMap::new(),
            epochs: HashMap::new(),
            pending_reliable: Vec::new(),
            registrations: Vec::new(),
            precision: Precision::default(),
            ping_sequence: 0,
            pings: HashMap::new(),
            loss: LossMeter::default(),
            next_send: 0.0,
            next_ping: 0.0,
            next_keepalive: 0.0,
            ever_connected: false,
            seen_resyncs: 0,
            reported: None,
            engine_gone: false,
        };
        driver.open();
        driver
    }

    fn open(&mut self) {
        match (self.factory)(self.attempt) {
            Ok(socket) => {
                let nonce = fastrand::u64(..);
                self.manager = Some(ConnectionManager::new(
                    ClientSocket::new(socket, self.config.relay, nonce, self.clock.clone()),
                    laminar_config(self.config.idle_timeout),
                ));
            }
            Err(e) => {
                log::error!(target: "netsync::client", "cannot open a socket: {e}");
                self.manager = None;
            }
        }
    }

    fn emit(&self, event: ClientEvent) {
        let _ = self.link.events.send(event);
    }

    /// True once the engine side is gone (the handle was dropped).
    pub fn engine_gone(&self) -> bool {
        self.engine_gone
    }

    /// Runs until `stop` is set, stepping in real time.
    pub(crate) fn run(mut self, stop: Arc<AtomicBool>) {
        while !stop.load(Ordering::Acquire) && !self.engine_gone {
            self.step();
            std::thread::sleep(Duration::from_micros(500));
        }
    }

    /// Does whatever is due now.
    pub fn step(&mut self) {
        let now = self.clock.now();
        self.take_engine_messages();
        if let Phase::Waiting { until } = self.phase {
            if now >= until {
                self.attempt += 1;
                self.open();
                self.phase = Phase::Handshaking { since: now };
                self.stats.state = ConnectionState::Connecting;
            }
        }
        if self.manager.is_none() {
            if !matches!(self.phase, Phase::Refused | Phase::Waiting { .. }) {
                self.phase = Phase::Waiting { until: now + 1.0 };
            }
            self.publish(now);
            return;
        }
        let lost = self.poll_network(now);
        self.advance_phase(now, lost);
        self.publish(now);
    }

    fn take_engine_messages(&mut self) {
        loop {
            match self.link.from_engine.try_recv() {
                Ok(ToNetwork::OwnedState {
                    entity,
                    sample,
                    local_time,
                }) => {
                    self.owned.insert(entity, (sample, local_time));
                }
                Ok(ToNetwork::Forget { entity }) => {
                    self.owned.remove(&entity);
                    self.sequences.remove(&entity);
                    self.filter.forget(entity);
                }
                Ok(ToNetwork::Register { entity, kind }) => {
                    self.pending_reliable
                        .push(Message::Register { entity, kind });
                }
                Ok(ToNetwork::Claim { mine, other }) => {
                    // Optimistic: send under the epoch a grant would give.
                    let next = self
                        .epochs
                        .get(&other)
                        .copied()
                        .unwrap_or(0)
                        .wrapping_add(1);
                    self.epochs.insert(other, next);
                    self.filter.forget(other);
                    self.pending_reliable.push(Message::Claim { mine, other });
                }
                Ok(ToNetwork::AtRest { entity }) => {
                    self.pending_reliable.push(Message::AtRest { entity });
                }
                Err(crossbeam_channel::TryRecvError::Empty) => return,
                Err(crossbeam_channel::TryRecvError::Disconnected) => {
                    self.engine_gone = true;
                    return;
                }
            }
        }
    }

    /// Polls laminar and handles what arrived; true when the relay was lost.
    fn poll_network(&mut self, now: f64) -> bool {
        let Some(m) = self.manager.as_mut() else {
            return false;
        };
        m.socket_mut().poll_handshake();
        m.manual_poll(self.clock.instant());
        let mut lost = false;
        let mut messages = Vec::new();
        while let Ok(event) = m.event_receiver().try_recv() {
            match event {
                SocketEvent::Packet(p) => {
                    self.stats.bytes_received += p.payload().len() as u64;
                    self.stats.packets_received += 1;
                    match Message::decode(p.payload(), &self.precision) {
                        Ok(message) => messages.push(message),
                        Err(e) => {
                            self.stats.malformed += 1;
                            log::debug!(target: "netsync::client", "malformed message: {e}");
                        }
                    }
                }
                SocketEvent::Timeout(_) | SocketEvent::Disconnect(_) => lost = true,
                SocketEvent::Connect(_) => {}
            }
        }
        for message in messages {
            self.on_message(message, now);
        }
        lost
    }

    fn advance_phase(&mut self, now: f64, lost: bool) {
        match self.phase {
            Phase::Handshaking { since } => {
                let handshake = self
                    .manager
                    .as_ref()
                    .map(|m| m.socket().handshake().clone());
                match handshake {
                    Some(ClientHandshake::Admitted { client_id }) => self.admitted(client_id, now),
                    Some(ClientHandshake::Refused(reason)) => {
                        self.stats.state = ConnectionState::Disconnected;
                        self.emit(ClientEvent::Disconnected(DisconnectReason::Refused(reason)));
                        self.manager = None;
                        self.phase = Phase::Refused;
                    }
                    _ if now - since > self.config.connect_timeout => {
                        self.stats.state = ConnectionState::Disconnected;
                        if self.reported != Some(DisconnectReason::ConnectTimeout) {
                            self.emit(ClientEvent::Disconnected(DisconnectReason::ConnectTimeout));
                            self.reported = Some(DisconnectReason::ConnectTimeout);
                        }
                        self.manager = None;
                        self.phase = Phase::Waiting { until: now + 1.0 };
                    }
                    _ => {}
                }
            }
            Phase::Connected if lost => {
                self.stats.state = ConnectionState::Disconnected;
                self.emit(ClientEvent::Disconnected(DisconnectReason::RelayTimeout));
                self.reported = Some(DisconnectReason::RelayTimeout);
                self.manager = None;
                self.phase = Phase::Waiting {
                    until: if self.config.reconnect {
                        now + 0.5
                    } else {
                        f64::INFINITY
                    },
                };
            }
            Phase::Connected => {
                self.reported = None;
                self.send_due(now);
            }
            Phase::Waiting { .. } | Phase::Refused => {}
        }
    }

    fn admitted(&mut self, client_id: u32, now: f64) {
        self.stats.client_id = client_id;
        self.stats.state = ConnectionState::Connected;
        self.phase = Phase::Connected;
        if self.ever_connected {
            self.stats.reconnects += 1;
            let _ = self.link.to_engine.send(FromNetwork::Reset);
            self.emit(ClientEvent::Reconnected { client_id });
        } else {
            self.emit(ClientEvent::Connected { client_id });
        }
        self.ever_connected = true;
        // The relay (maybe a new one) must hear our entities and their
        // kinds again; its epochs start afresh.
        self.filter = SendFilter::new(self.config.send_filter);
        self.epochs.clear();
        self.pending_reliable = self.registrations.clone();
        // laminar needs a first packet to create the connection.
        self.next_keepalive = now;
    }

    fn send_due(&mut self, now: f64) {
        let Some(m) = self.manager.as_ref() else {
            return;
        };
        let sender = m.event_sender().clone();
        let relay = self.config.relay;
        let mut out: Vec<(Vec<u8>, bool)> = Vec::new();
        if now >= self.next_keepalive {
            self.next_keepalive = now + 0.1;
            out.push((encode(&Message::KeepAlive, &self.precision), true));
        }
        for message in std::mem::take(&mut self.pending_reliable) {
            out.push((encode(&message, &self.precision), true));
        }
        if now >= self.next_ping {
            self.next_ping = now + 1.0 / self.config.ping_rate;
            self.ping_sequence = self.ping_sequence.wrapping_add(1);
            self.pings.insert(self.ping_sequence, now);
            self.pings.retain(|_, &mut t| now - t < 10.0);
            self.loss.sent(self.ping_sequence, now);
            let ping = Message::Ping {
                sequence: self.ping_sequence,
                client_time: now,
            };
            out.push((encode(&ping, &self.precision), false));
        }
        if self.clock_estimate.stats().resyncs != self.seen_resyncs {
            // The relay's clock moved: resend everything on the new base.
            self.seen_resyncs = self.clock_estimate.stats().resyncs;
            self.filter = SendFilter::new(self.config.send_filter);
        }
        if now >= self.next_send {
            self.next_send = now + 1.0 / self.config.send_rate;
            if let Some(server_now) = self.clock_estimate.server_time(now) {
                let mut updates = Vec::new();
                // Sorted so that a simulation sends in a repeatable order.
                let mut owned: Vec<_> = self.owned.iter().collect();
                owned.sort_by_key(|(id, _)| **id);
                for (&entity, (sample, local_time)) in owned {
                    // Stamp with the server time the state was true at.
                    let stamp = self
                        .clock_estimate
                        .server_time(*local_time)
                        .unwrap_or(server_now);
                    if self.filter.update(stamp, entity, sample).should_send() {
                        let mut update = EntityUpdate::from_sample(entity, sample);
                        update.age = (server_now - stamp).max(0.0);
                        let sequence = self.sequences.entry(entity).or_insert(0);
                        *sequence = sequence.wrapping_add(1);
                        update.sequence = *sequence;
                        update.epoch = self.epochs.get(&entity).copied().unwrap_or(0);
                        updates.push(update);
                        self.stats.states_sent += 1;
                    } else {
                        self.stats.states_skipped += 1;
                    }
                }
                for payload in pack_owned_state(server_now, &updates, &self.precision) {
                    out.push((payload, false));
                }
            }
        }
        for (payload, reliable) in out {
            self.stats.bytes_sent += payload.len() as u64;
            let packet = if reliable {
                Packet::reliable_unordered(relay, payload)
            } else {
                Packet::unreliable(relay, payload)
            };
            let _ = sender.send(packet);
        }
    }

    fn publish(&mut self, now: f64) {
        self.stats.loss = self.loss.loss(now);
        let mut s = self.stats;
        s.clock = self.clock_estimate.stats();
        *self.link.shared.lock().unwrap_or_else(|p| p.into_inner()) = s;
    }

    fn on_message(&mut self, message: Message, now: f64) {
        match message {
            Message::Welcome {
                server_time,
                precision,
                ..
            } => {
                self.precision = precision;
                self.clock_estimate.welcome(server_time, now);
            }
            Message::Pong {
                sequence,
                server_time,
                ..
            } => {
                self.loss.answered(sequence);
                if let Some(sent) = self.pings.remove(&sequence) {
                    self.clock_estimate.pong(sent, server_time, now);
                }
            }
            Message::Snapshot {
                server_time,
                updates,
            } => {
                let samples = updates
                    .iter()
                    .map(|u| (u.entity, u.to_sample(server_time), u.sequence))
                    .collect();
                let _ = self.link.to_engine.send(FromNetwork::Frame {
                    arrival: now,
                    server_time,
                    samples,
                });
            }
            Message::EntityRemoved { entity, .. } => {
                let _ = self.link.to_engine.send(FromNetwork::Removed { entity });
            }
            Message::KeepAlive | Message::Ping { .. } | Message::OwnedState { .. } => {}
            Message::RightChanged {
                entity,
                holder,
                epoch,
            } => {
                self.epochs.insert(entity, epoch);
                let _ = self.link.to_engine.send(FromNetwork::Right {
                    entity,
                    holder,
                    epoch,
                });
            }
            Message::ClaimRefused { entity, reason } => {
                let _ = self
                    .link
                    .to_engine
                    .send(FromNetwork::Refused { entity, reason });
            }
            Message::Register { .. } | Message::Claim { .. } | Message::AtRest { .. } => {}
        }
    }
}

/// A control message's bytes (they carry no value that can fail).
fn encode(message: &Message, precision: &Precision) -> Vec<u8> {
    message.to_bytes(precision).unwrap_or_default()
}

/// Largest owned-state datagram payload (safe MTU).
const OWNED_STATE_MTU: usize = 1200;

/// Owned-state messages of at most `OWNED_STATE_MTU` bytes each (an
/// update that cannot be encoded is skipped and logged).
fn pack_owned_state(
    server_time: f64,
    updates: &[EntityUpdate],
    precision: &Precision,
) -> Vec<Vec<u8>> {
    let mut packer = UpdatePacker::owned_state(server_time, OWNED_STATE_MTU);
    let mut w = Writer::new();
    for update in updates {
        w.bytes.clear();
        if update.encode(&mut w, precision).is_err() {
            log::warn!(target: "netsync::client", "entity {}: state out of the wire's range, not sent", update.entity);
            continue;
        }
        packer.push(&w.bytes);
    }
    packer.finish()
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
                sequence: i as u8,
                epoch: 0,
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
