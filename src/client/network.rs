//! The client's network thread: handshake, laminar, clock probes, owned
//! state out through the send filter, snapshots in. It never blocks the
//! engine: everything crosses through channels.

use std::collections::{HashMap, VecDeque};
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
use crate::core::app_message::{AppMessage, AppMessageKind};
use crate::core::pose::Sample;
use crate::core::send_filter::SendFilter;
use crate::net::clock::NetClock;
use crate::net::handshake::{ClientHandshake, RefusalReason};
use crate::net::laminar_socket::ClientSocket;
use crate::net::raw_socket::{Conditioned, RawSocket, UdpTransport};
use crate::server::relay_server::{laminar_config, MAX_RELIABLE};
use crate::wire::batch;
use crate::wire::message::{
    kind, EntityUpdate, InterestSpec, Message, UpdatePacker, MAX_REDUNDANT,
};
use crate::wire::quantize::Precision;
use crate::wire::Writer;

/// Send intervals after a claim at which an unreliable copy follows the
/// reliable one (spaced so that one burst of loss cannot take them all).
const CLAIM_REPEAT_TICKS: [f64; 3] = [1.0, 2.0, 4.0];
/// Wait before asking a full relay again (s).
const FULL_RETRY: f64 = 2.0;
/// An owned entity's update that follows this many send ticks of silence
/// (or more) is sparse, and repeated.
const SPARSE_TICKS: u64 = 2;
/// Send ticks after a sparse update at which it goes again.
const REPEAT_AFTER_TICKS: [u64; 2] = [1, 3];
/// Loss repairs the relay announced that wait for their packets.
const MAX_PENDING_REPAIRS: usize = 16;
/// Copies of the goodbye (it is unreliable; one of them should arrive).
const GOODBYE_COPIES: usize = 3;

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
    /// Highest command number the relay has acknowledged.
    pub commands_acked: u64,
    /// Global commands delivered, and numbers skipped (missed while away
    /// for longer than the relay keeps them).
    pub global_commands: u64,
    pub global_gaps: u64,
    /// Snapshot packets from the relay that never arrived (reported to it).
    pub snapshots_lost: u64,
    /// Sparse owned states sent again (against loss on the way to the relay).
    pub states_repeated: u64,
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
            commands_acked: 0,
            global_commands: 0,
            global_gaps: 0,
            snapshots_lost: 0,
            states_repeated: 0,
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
    /// Closed by the engine: final.
    Closed,
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
    /// Send-right epochs as the relay announced them (the newest), and
    /// the epoch owned states are stamped with (the announced one, or the
    /// one a pending claim aims at).
    announced: HashMap<u64, u32>,
    epochs: HashMap<u64, u32>,
    /// Reliable messages that need no order (claims, rest reports), sent
    /// once connected.
    pending_reliable: Vec<Message>,
    /// Unreliable messages to send with the next send (loss reports).
    pending_unreliable: Vec<Message>,
    /// Reliable messages on the ordered stream, sent once welcomed.
    pending_ordered: Vec<Message>,
    /// Unreliable copies of claims, due at the times given.
    claim_repeats: Vec<(f64, Message)>,
    claim_seq: u32,
    /// True once the current relay's welcome arrived (the session and
    /// everything that must follow it can go).
    welcomed: bool,
    /// Every registration, sent again to a new relay after a reconnect.
    registrations: Vec<Message>,
    /// This client's session: the same across reconnects, so that the
    /// relay applies each command once.
    session: u64,
    /// Commands not yet acknowledged, resent after a reconnect.
    unacked: VecDeque<(u64, Message)>,
    /// Latest state of each synced component, resent after a reconnect.
    component_states: HashMap<(u64, u32), Vec<u8>>,
    state_seq: u64,
    interest: Option<InterestSpec>,
    entity_interests: HashMap<u64, (u32, u8)>,
    /// Relay process of the last welcome, and the last global command
    /// delivered from it.
    relay_instance: u64,
    last_global: u64,
    /// The next snapshot number expected from the relay.
    next_snapshot: Option<u16>,
    /// Repairs the relay announced: (first lost packet, last repair packet).
    repairs: Vec<(u16, u16)>,
    /// Owned-state send ticks so far, the tick each entity was last sent
    /// at, and sparse updates still to repeat: (update, stamp, tick sent).
    send_tick: u64,
    last_send_tick: HashMap<u64, u64>,
    repeats: HashMap<u64, (EntityUpdate, f64, u64)>,
    precision: Precision,
    ping_sequence: u32,
    pings: HashMap<u32, f64>,
    loss: LossMeter,
    next_send: f64,
    next_ping: f64,
    ever_connected: bool,
    seen_resyncs: u64,
    reported: Option<DisconnectReason>,
    engine_gone: bool,
    lockstep: LockstepLink,
}

/// What the network thread knows of the lockstep match: whether the game
/// joined (to join again after a reconnect), whether this connection's
/// join was accepted (inputs before that would be refused), and the
/// newest confirmed frame received (a rejoin names it and gets only what
/// follows).
#[derive(Debug, Default)]
struct LockstepLink {
    joined: bool,
    started: bool,
    have: Option<u64>,
    /// Inputs sent and not seen confirmed yet, oldest first: they go
    /// again (unreliably) a few at a time with every input, so a lost
    /// packet costs a few frames instead of laminar's resend.
    recent: VecDeque<(u64, Vec<u8>)>,
    /// Where the next repeat continues in `recent` (a frame number).
    cursor: u64,
    /// The newest confirmed frame number seen in any message, usable or
    /// not: past `have`, frames were lost or are late.
    seen: Option<u64>,
    /// Since when frame `.0` is missing while a later one was seen.
    gap: Option<(u64, f64)>,
    /// Unreliable messages to send on the next step.
    unreliable: Vec<Message>,
    /// When the newest inputs and `need` went last (they go again after
    /// `REPEAT_INTERVAL` without a new input).
    repeated_at: f64,
}

/// Most inputs kept for repeats (a sync interval's worth at most).
const KEPT_INPUTS: usize = 1024;
/// Bytes of repeated inputs in one message (small inputs: all of
/// `MAX_REDUNDANT`; large ones: fewer).
const REPEAT_BYTES: usize = 600;
/// A missing frame is asked for again only after this long (s): jitter
/// alone delivers later frames first all the time.
const GAP_GRACE: f64 = 0.06;
/// Longest time without an unreliable input message while a member: it
/// tells the relay which confirmed frame this client lacks (s).
const REPEAT_INTERVAL: f64 = 0.05;

impl LockstepLink {
    /// The inputs to repeat within one message: the newest, the oldest
    /// not seen confirmed, and the next few after the cursor in turn. The
    /// relay waits on an input somewhere past what this client saw
    /// confirmed (its news lags a round trip), so every unconfirmed input
    /// comes round every few messages.
    fn repeat(&mut self, now: f64) -> Message {
        let next = self.have.map_or(0, |h| h + 1);
        // Only a frame that is missing for a while is asked for (frames
        // in flight and reordered ones are not).
        let need = match (self.seen, self.gap) {
            (Some(seen), Some((frame, since))) if seen >= next && frame == next => {
                (now - since >= GAP_GRACE).then_some(next)
            }
            (Some(seen), _) if seen >= next => {
                self.gap = Some((next, now));
                None
            }
            _ => {
                self.gap = None;
                None
            }
        };
        let n = self.recent.len();
        let mut chosen: Vec<usize> = Vec::with_capacity(MAX_REDUNDANT);
        let mut bytes = 0;
        let mut take = |i: usize, chosen: &mut Vec<usize>, recent: &VecDeque<(u64, Vec<u8>)>| {
            if chosen.len() < MAX_REDUNDANT && !chosen.contains(&i) && bytes < REPEAT_BYTES {
                bytes += recent[i].1.len() + 4;
                chosen.push(i);
            }
        };
        if n > 0 {
            take(n - 1, &mut chosen, &self.recent);
            take(0, &mut chosen, &self.recent);
            let start = self.recent.partition_point(|(f, _)| *f < self.cursor);
            for k in 0..n {
                take((start + k) % n, &mut chosen, &self.recent);
            }
            if let Some(&last) = chosen.last() {
                self.cursor = self.recent[last].0 + 1;
            }
        }
        chosen.sort_unstable();
        let inputs = chosen
            .into_iter()
            .map(|i| (self.recent[i].0, self.recent[i].1.clone()))
            .collect();
        Message::LockstepInputs { need, inputs }
    }

    /// A confirmed frame `frame` exists (whether we can use it or not).
    fn saw(&mut self, frame: u64) {
        self.seen = Some(self.seen.map_or(frame, |s| s.max(frame)));
    }

    /// Frames up to `newest` are confirmed: their inputs need no repeat.
    fn confirmed(&mut self, newest: u64) {
        let have = Some(self.have.map_or(newest, |h| h.max(newest)));
        self.have = have;
        while self.recent.front().is_some_and(|(f, _)| *f <= newest) {
            self.recent.pop_front();
        }
    }
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
            announced: HashMap::new(),
            epochs: HashMap::new(),
            pending_reliable: Vec::new(),
            pending_unreliable: Vec::new(),
            pending_ordered: Vec::new(),
            claim_repeats: Vec::new(),
            claim_seq: 0,
            welcomed: false,
            registrations: Vec::new(),
            session: fastrand::u64(1..),
            unacked: VecDeque::new(),
            component_states: HashMap::new(),
            state_seq: 0,
            interest: None,
            entity_interests: HashMap::new(),
            relay_instance: 0,
            last_global: 0,
            next_snapshot: None,
            repairs: Vec::new(),
            send_tick: 0,
            last_send_tick: HashMap::new(),
            repeats: HashMap::new(),
            precision: Precision::default(),
            ping_sequence: 0,
            pings: HashMap::new(),
            loss: LossMeter::default(),
            next_send: 0.0,
            next_ping: 0.0,
            ever_connected: false,
            seen_resyncs: 0,
            reported: None,
            engine_gone: false,
            lockstep: LockstepLink::default(),
        };
        driver.open();
        driver.emit(ClientEvent::Connecting { attempt: 1 });
        driver
    }

    fn open(&mut self) {
        match (self.factory)(self.attempt) {
            Ok(socket) => {
                let nonce = fastrand::u64(..);
                self.manager = Some(ConnectionManager::new(
                    ClientSocket::new(
                        socket,
                        self.config.relay,
                        nonce,
                        self.clock.clone(),
                        self.config.token,
                    ),
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
        self.say_goodbye();
    }

    /// Tells the relay this client is leaving (a few unreliable copies,
    /// sent now), so that the others see it go at once.
    pub fn say_goodbye(&mut self) {
        if !matches!(self.phase, Phase::Connected) {
            return;
        }
        let Some(m) = self.manager.as_mut() else {
            return;
        };
        let bye = encode(&Message::Goodbye, &self.precision);
        for _ in 0..GOODBYE_COPIES {
            let _ = m
                .event_sender()
                .send(Packet::unreliable(self.config.relay, bye.clone()));
        }
        m.manual_poll(self.clock.instant());
        self.manager = None;
        self.phase = Phase::Closed;
        self.stats.state = ConnectionState::Disconnected;
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
                self.emit(ClientEvent::Connecting {
                    attempt: self.attempt.saturating_add(1).min(u32::MAX as u64) as u32,
                });
            }
        }
        if self.manager.is_none() {
            if !matches!(
                self.phase,
                Phase::Refused | Phase::Closed | Phase::Waiting { .. }
            ) {
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
                    self.repeats.remove(&entity);
                    self.last_send_tick.remove(&entity);
                }
                Ok(ToNetwork::Register { entity, kind }) => {
                    let message = Message::Register { entity, kind };
                    self.registrations.push(message.clone());
                    self.ordered(message);
                }
                Ok(ToNetwork::Unregister { entity }) => {
                    self.repeats.remove(&entity);
                    self.last_send_tick.remove(&entity);
                    self.owned.remove(&entity);
                    self.sequences.remove(&entity);
                    self.filter.forget(entity);
                    self.registrations.retain(
                        |m| !matches!(m, Message::Register { entity: e, .. } if *e == entity),
                    );
                    self.component_states.retain(|(e, _), _| *e != entity);
                    self.entity_interests.remove(&entity);
                    self.ordered(Message::Unregister { entity });
                }
                Ok(ToNetwork::GlobalCommand { seq, data }) => {
                    let message = Message::GlobalCommandUp { seq, data };
                    self.unacked.push_back((seq, message.clone()));
                    self.ordered(message);
                }
                Ok(ToNetwork::ComponentCommand {
                    seq,
                    entity,
                    component,
                    data,
                }) => {
                    let message = Message::ComponentCommandUp {
                        seq,
                        entity,
                        component,
                        data,
                    };
                    self.unacked.push_back((seq, message.clone()));
                    self.ordered(message);
                }
                Ok(ToNetwork::ComponentState {
                    entity,
                    component,
                    data,
                }) => {
                    // Send on change: the game may set it every frame.
                    if self.component_states.get(&(entity, component)) == Some(&data) {
                        continue;
                    }
                    self.component_states
                        .insert((entity, component), data.clone());
                    let message = self.component_state_message(entity, component, data);
                    self.ordered(message);
                }
                Ok(ToNetwork::Interest(spec)) => {
                    self.interest = Some(spec.clone());
                    self.ordered(Message::Interest(spec));
                }
                Ok(ToNetwork::EntityInterest {
                    entity,
                    region,
                    min_class,
                }) => {
                    self.entity_interests.insert(entity, (region, min_class));
                    self.ordered(Message::EntityInterest {
                        entity,
                        region,
                        min_class,
                    });
                }
                Ok(ToNetwork::Claim { mine, other }) => {
                    // Optimistic: send under the epoch a grant would give.
                    // The claim names the epoch the relay last announced
                    // (not one an earlier, unanswered claim aimed at).
                    let seen = self.announced.get(&other).copied().unwrap_or(0);
                    self.epochs.insert(other, seen.wrapping_add(1));
                    self.filter.forget(other);
                    self.claim_seq = self.claim_seq.wrapping_add(1).max(1);
                    let claim = Message::Claim {
                        mine,
                        other,
                        epoch: seen,
                        seq: self.claim_seq,
                    };
                    // Every client must agree within a few send intervals,
                    // even when a burst of loss takes the first copy.
                    let now = self.clock.now();
                    let interval = 1.0 / self.config.send_rate;
                    for ticks in CLAIM_REPEAT_TICKS {
                        self.claim_repeats
                            .push((now + ticks * interval, claim.clone()));
                    }
                    self.pending_reliable.push(claim);
                }
                Ok(ToNetwork::AtRest { entity }) => {
                    let epoch = self.epochs.get(&entity).copied().unwrap_or(0);
                    self.pending_reliable
                        .push(Message::AtRest { entity, epoch });
                }
                Ok(ToNetwork::LockstepJoin) => {
                    self.lockstep.joined = true;
                    self.ordered(Message::LockstepJoin {
                        have: self.lockstep.have,
                    });
                }
                Ok(ToNetwork::LockstepLeave) => {
                    self.lockstep.joined = false;
                    self.lockstep.started = false;
                    self.ordered(Message::LockstepLeave);
                }
                // Inputs and hashes need order only by frame number (the
                // relay sorts them), so a lost one holds up nothing else.
                Ok(ToNetwork::LockstepInput { frame, data }) => {
                    if self.lockstep.started {
                        self.lockstep.recent.push_back((frame, data.clone()));
                        if self.lockstep.recent.len() > KEPT_INPUTS {
                            self.lockstep.recent.pop_front();
                        }
                        let now = self.clock.now();
                        let repeat = self.lockstep.repeat(now);
                        self.lockstep.unreliable.push(repeat);
                        self.lockstep.repeated_at = now;
                        self.pending_reliable
                            .push(Message::LockstepInput { frame, data });
                    }
                }
                Ok(ToNetwork::LockstepHash { frame, hash }) => {
                    if self.lockstep.started {
                        self.pending_reliable
                            .push(Message::LockstepHash { frame, hash });
                    }
                }
                Ok(ToNetwork::LockstepSnapshot { frame, data }) => {
                    if !self.lockstep.started {
                        log::warn!(target: "netsync::client", "lockstep snapshot of frame {frame} dropped: not a member on this connection");
                        continue;
                    }
                    if let Ok(chunks) =
                        crate::client::lockstep::LockstepClient::snapshot_chunks(frame, &data)
                    {
                        for chunk in chunks {
                            self.ordered(chunk);
                        }
                    }
                }
                Err(crossbeam_channel::TryRecvError::Empty) => return,
                Err(crossbeam_channel::TryRecvError::Disconnected) => {
                    self.engine_gone = true;
                    return;
                }
            }
        }
    }

    /// Queues a message for the ordered stream: it goes once the relay has
    /// welcomed this client; what is queued before that is covered by the
    /// catch-up that follows the welcome.
    fn ordered(&mut self, message: Message) {
        if self.welcomed {
            self.pending_ordered.push(message);
        }
    }

    fn component_state_message(&mut self, entity: u64, component: u32, data: Vec<u8>) -> Message {
        self.state_seq += 1;
        Message::ComponentStateUp {
            seq: self.state_seq,
            entity,
            component,
            data,
        }
    }

    /// After a welcome: the session first, then everything the relay must
    /// know again (it may be a new relay, or have lost this client).
    fn catch_up(&mut self, instance: u64, next_global: u64) {
        if instance != self.relay_instance {
            // Another relay process: its numbering of global commands starts here.
            if self.relay_instance != 0 && (self.lockstep.joined || self.lockstep.have.is_some()) {
                // And its lockstep match is a new one.
                let _ = self.link.to_engine.send(FromNetwork::LockstepRestarted);
            }
            self.lockstep.have = None;
            self.relay_instance = instance;
            self.last_global = next_global.saturating_sub(1);
        }
        // The interest right after the session, in the same packet: the
        // relay shows a joiner nothing until it has one (the default global
        // view when the game set none).
        let mut queue = vec![
            Message::Session {
                session: self.session,
                last_global: self.last_global,
            },
            Message::Interest(self.interest.clone().unwrap_or_default()),
        ];
        queue.extend(self.registrations.iter().cloned());
        let mut interests: Vec<_> = self.entity_interests.iter().collect();
        interests.sort_unstable_by_key(|(e, _)| **e);
        for (&entity, &(region, min_class)) in interests {
            queue.push(Message::EntityInterest {
                entity,
                region,
                min_class,
            });
        }
        queue.extend(self.unacked.iter().map(|(_, m)| m.clone()));
        let mut states: Vec<_> = self
            .component_states
            .iter()
            .map(|(&k, v)| (k, v.clone()))
            .collect();
        states.sort_unstable_by_key(|(k, _)| *k);
        for ((entity, component), data) in states {
            let message = self.component_state_message(entity, component, data);
            queue.push(message);
        }
        if self.lockstep.joined {
            queue.push(Message::LockstepJoin {
                have: self.lockstep.have,
            });
        }
        self.pending_ordered = queue;
        self.welcomed = true;
    }

    /// Notes snapshot packet `seq`; true when packets before it are missing,
    /// which are then reported to the relay (it sends their entities
    /// again). A late one (reordered) is no loss.
    fn snapshot_arrived(&mut self, seq: u16) -> Option<u16> {
        let Some(expected) = self.next_snapshot else {
            self.next_snapshot = Some(seq.wrapping_add(1));
            return None;
        };
        let ahead = seq.wrapping_sub(expected);
        if ahead >= 0x8000 {
            return None; // older than expected: arrived out of order
        }
        self.next_snapshot = Some(seq.wrapping_add(1));
        self.release_repairs();
        if ahead == 0 {
            return None;
        }
        self.stats.snapshots_lost += ahead as u64;
        let nack = Message::SnapshotNack {
            first: expected,
            count: ahead.min(u8::MAX as u16) as u8,
        };
        self.pending_unreliable.push(nack);
        Some(expected)
    }

    /// The relay says the loss reported from packet `first` on is
    /// repaired in packets up to `through`: once those have come (or been
    /// reported lost in turn), the timeline may vouch again.
    fn repaired(&mut self, first: u16, through: u16) {
        if self.repairs.len() == MAX_PENDING_REPAIRS {
            self.repairs.remove(0);
        }
        self.repairs.push((first, through));
        self.release_repairs();
    }

    fn release_repairs(&mut self) {
        let Some(next) = self.next_snapshot else {
            return;
        };
        let link = &self.link;
        self.repairs.retain(|&(first, through)| {
            // `through` is before the next expected packet (wrapping).
            let passed = next.wrapping_sub(through.wrapping_add(1)) < 0x8000;
            if passed {
                let _ = link.to_engine.send(FromNetwork::LossRepaired { first });
            }
            !passed
        });
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
                    for part in batch::split(p.payload()) {
                        match part.and_then(|m| Message::decode(m, &self.precision)) {
                            Ok(message) => messages.push(message),
                            Err(e) => {
                                self.stats.malformed += 1;
                                log::debug!(target: "netsync::client", "malformed message: {e}");
                            }
                        }
                    }
                }
                SocketEvent::Timeout(_) | SocketEvent::Disconnect(_) => lost = true,
                SocketEvent::Connect(_) => {}
            }
        }
        // Admission first: the relay's welcome may arrive in the same poll
        // as the handshake reply, and must land on the admitted connection.
        if matches!(self.phase, Phase::Handshaking { .. })
            && matches!(
                self.manager.as_ref().map(|m| m.socket().handshake()),
                Some(ClientHandshake::Admitted { .. })
            )
        {
            self.advance_phase(now, false);
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
                    Some(ClientHandshake::Admitted { client_id }) => self.admitted(client_id),
                    Some(ClientHandshake::Refused(reason)) => {
                        self.stats.state = ConnectionState::Disconnected;
                        let event = DisconnectReason::Refused(reason);
                        if self.reported != Some(event) {
                            self.emit(ClientEvent::Disconnected(event));
                            self.reported = Some(event);
                        }
                        self.manager = None;
                        self.phase = match reason {
                            // Another version will not change its mind, nor
                            // will a relay of the other mode; a token that
                            // expired needs a new one from the backend.
                            RefusalReason::VersionMismatch { .. }
                            | RefusalReason::TokenRequired
                            | RefusalReason::NotSecure
                            | RefusalReason::TokenExpired => Phase::Refused,
                            // The token's last connection may still be
                            // timing out on the relay: try again later.
                            RefusalReason::TokenInUse => Phase::Waiting {
                                until: if self.config.reconnect {
                                    now + FULL_RETRY
                                } else {
                                    f64::INFINITY
                                },
                            },
                            // A full relay may have room later.
                            RefusalReason::Full => Phase::Waiting {
                                until: if self.config.reconnect {
                                    now + FULL_RETRY
                                } else {
                                    f64::INFINITY
                                },
                            },
                        };
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
            Phase::Waiting { .. } | Phase::Refused | Phase::Closed => {}
        }
    }

    fn admitted(&mut self, client_id: u32) {
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
        self.announced.clear();
        // Everything ordered waits for the welcome (`catch_up`).
        self.welcomed = false;
        self.pending_ordered.clear();
        self.pending_reliable.clear();
        self.pending_unreliable.clear();
        // A new connection numbers its snapshots afresh.
        self.next_snapshot = None;
        self.repairs.clear();
        self.claim_repeats.clear();
        self.lockstep.started = false;
        self.lockstep.recent.clear();
        self.lockstep.unreliable.clear();
        self.lockstep.seen = None;
        self.lockstep.gap = None;
        // laminar needs a first packet to create the connection: the new
        // socket's pacer sends a keep-alive at once.
    }

    fn send_due(&mut self, now: f64) {
        let Some(m) = self.manager.as_mut() else {
            return;
        };
        let sender = m.event_sender().clone();
        let relay = self.config.relay;
        // (payload, delivery)
        let mut out: Vec<(Vec<u8>, Delivery)> = Vec::new();
        let due = m.socket_mut().pace(now);
        for _ in 0..due.ack_requests {
            out.push((
                encode(&Message::AckRequest, &self.precision),
                Delivery::Reliable,
            ));
        }
        if due.keepalive {
            out.push((
                encode(&Message::KeepAlive, &self.precision),
                Delivery::Reliable,
            ));
        }
        for message in std::mem::take(&mut self.pending_unreliable) {
            out.push((encode(&message, &self.precision), Delivery::Unreliable));
        }
        for message in std::mem::take(&mut self.pending_reliable) {
            out.push((encode(&message, &self.precision), Delivery::Reliable));
        }
        if self.welcomed {
            for message in std::mem::take(&mut self.pending_ordered) {
                let payload = encode(&message, &self.precision);
                if payload.len() > MAX_RELIABLE {
                    // laminar would fragment it and lose its ordering; the
                    // API's limits keep every message below this.
                    log::error!(target: "netsync::client", "ordered message of {} bytes dropped (limit {MAX_RELIABLE})", payload.len());
                    continue;
                }
                out.push((payload, Delivery::Ordered));
            }
        }
        if self.lockstep.started && now - self.lockstep.repeated_at >= REPEAT_INTERVAL {
            // Nothing new to send: say which frame we lack all the same.
            self.lockstep.repeated_at = now;
            let repeat = self.lockstep.repeat(now);
            self.lockstep.unreliable.push(repeat);
        }
        for message in self.lockstep.unreliable.drain(..) {
            out.push((encode(&message, &self.precision), Delivery::Unreliable));
        }
        let precision = self.precision;
        self.claim_repeats.retain(|(due, claim)| {
            if now < *due {
                return true;
            }
            out.push((encode(claim, &precision), Delivery::Unreliable));
            false
        });
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
            out.push((encode(&ping, &self.precision), Delivery::Unreliable));
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
                self.send_tick += 1;
                let tick = self.send_tick;
                // Sorted so that a simulation sends in a repeatable order.
                let mut owned: Vec<_> = self.owned.iter().collect();
                owned.sort_by_key(|(id, _)| **id);
                for (&entity, (sample, local_time)) in owned {
                    // No epoch yet: the relay has not announced the
                    // entity (its registration or the claim is on the
                    // way) and drops state for it; the announcement
                    // makes the filter send at once.
                    let Some(&epoch) = self.epochs.get(&entity).filter(|&&e| e != 0) else {
                        continue;
                    };
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
                        update.epoch = epoch;
                        updates.push(update);
                        self.stats.states_sent += 1;
                        // A sparse update (dead reckoning held for a while)
                        // may not be followed by another for a second: send
                        // it twice more, so that one loss on the way to the
                        // relay is not a second of wrong motion.
                        let last = self.last_send_tick.insert(entity, tick);
                        if last.is_none_or(|l| tick - l > SPARSE_TICKS) {
                            self.repeats.insert(entity, (update, stamp, tick));
                        } else {
                            self.repeats.remove(&entity);
                        }
                    } else {
                        self.stats.states_skipped += 1;
                        if let Some(&(mut update, stamp, at)) = self.repeats.get(&entity) {
                            let age = tick - at;
                            if REPEAT_AFTER_TICKS.contains(&age) {
                                update.age = (server_now - stamp).max(0.0);
                                updates.push(update);
                                self.stats.states_repeated += 1;
                            }
                            if age >= REPEAT_AFTER_TICKS[REPEAT_AFTER_TICKS.len() - 1] {
                                self.repeats.remove(&entity);
                            }
                        }
                    }
                }
                for payload in pack_owned_state(server_now, &updates, &self.precision) {
                    out.push((payload, Delivery::Unreliable));
                }
            }
        }
        // Reliable messages of a kind travel together (wire/batch.rs),
        // ordered ones in their order.
        let mut ordered = Vec::new();
        let mut unordered = Vec::new();
        for (payload, delivery) in out {
            match delivery {
                // Each ack request must be a packet of its own: a burst of
                // them carries laminar's sequence past a lost packet.
                Delivery::Reliable if payload.first() == Some(&kind::ACK_REQUEST) => {
                    self.stats.bytes_sent += payload.len() as u64;
                    let _ = sender.send(Packet::reliable_unordered(relay, payload));
                }
                Delivery::Reliable => unordered.push(payload),
                Delivery::Ordered => ordered.push(payload),
                Delivery::Unreliable => {
                    self.stats.bytes_sent += payload.len() as u64;
                    let _ = sender.send(Packet::unreliable(relay, payload));
                }
            }
        }
        for payload in batch::pack(ordered, MAX_RELIABLE) {
            self.stats.bytes_sent += payload.len() as u64;
            let _ = sender.send(Packet::reliable_ordered(relay, payload, Some(0)));
        }
        for payload in batch::pack(unordered, MAX_RELIABLE) {
            self.stats.bytes_sent += payload.len() as u64;
            let _ = sender.send(Packet::reliable_unordered(relay, payload));
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
                instance,
                next_global,
                ..
            } => {
                self.precision = precision;
                self.clock_estimate.welcome(server_time, now);
                self.catch_up(instance, next_global);
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
                seq,
                updates,
            } => {
                let after_loss = self.snapshot_arrived(seq);
                let samples = updates
                    .iter()
                    .map(|u| (u.entity, u.to_sample(server_time), u.sequence, u.epoch))
                    .collect();
                let _ = self.link.to_engine.send(FromNetwork::Frame {
                    arrival: now,
                    server_time,
                    samples,
                    after_loss,
                });
            }
            Message::EntityRemoved { entity, reason } => {
                let _ = self
                    .link
                    .to_engine
                    .send(FromNetwork::Removed { entity, reason });
            }
            Message::GlobalCommand {
                global_seq,
                sender,
                server_time,
                data,
            } => {
                // Replays after a reconnect may repeat what was delivered.
                if global_seq <= self.last_global {
                    return;
                }
                if global_seq > self.last_global + 1 {
                    self.stats.global_gaps += global_seq - self.last_global - 1;
                }
                self.last_global = global_seq;
                self.stats.global_commands += 1;
                let _ = self.link.to_engine.send(FromNetwork::App(AppMessage {
                    kind: AppMessageKind::GlobalCommand,
                    sender,
                    entity: 0,
                    component: 0,
                    sequence: global_seq,
                    server_time,
                    data,
                }));
            }
            Message::ComponentCommand {
                sender,
                entity,
                component,
                server_time,
                data,
            } => {
                let _ = self.link.to_engine.send(FromNetwork::App(AppMessage {
                    kind: AppMessageKind::ComponentCommand,
                    sender,
                    entity,
                    component,
                    sequence: 0,
                    server_time,
                    data,
                }));
            }
            Message::ComponentState {
                entity,
                component,
                version,
                data,
            } => {
                let _ = self.link.to_engine.send(FromNetwork::App(AppMessage {
                    kind: AppMessageKind::ComponentState,
                    sender: 0,
                    entity,
                    component,
                    sequence: version,
                    server_time: 0.0,
                    data,
                }));
            }
            Message::CommandAck { seq } => {
                while self.unacked.front().is_some_and(|(s, _)| *s <= seq) {
                    self.unacked.pop_front();
                }
                self.stats.commands_acked = self.stats.commands_acked.max(seq);
            }
            Message::SnapshotRepaired { first, through } => self.repaired(first, through),
            Message::KeepAlive
            | Message::AckRequest
            | Message::Goodbye
            | Message::SnapshotNack { .. }
            | Message::Ping { .. }
            | Message::OwnedState { .. } => {}
            Message::RightChanged {
                entity,
                holder,
                epoch,
            } => {
                // Changes also come as unreliable repeats, in any order:
                // only a newer epoch counts.
                let newer = self
                    .announced
                    .get(&entity)
                    .is_none_or(|&known| (epoch.wrapping_sub(known) as i32) > 0);
                if newer {
                    self.announced.insert(entity, epoch);
                    self.epochs.insert(entity, epoch);
                    // Granted: optimistic states sent before the grant may
                    // have reached the relay ahead of the claim and been
                    // dropped; send the state now, not at the next heartbeat.
                    if holder == self.stats.client_id {
                        self.filter.forget(entity);
                    }
                }
                let _ = self.link.to_engine.send(FromNetwork::Right {
                    entity,
                    holder,
                    epoch,
                });
            }
            Message::ClaimRefused { entity, reason } => {
                if let Some(&known) = self.announced.get(&entity) {
                    self.epochs.insert(entity, known);
                }
                let _ = self
                    .link
                    .to_engine
                    .send(FromNetwork::Refused { entity, reason });
            }
            Message::ScriptedSpawns(_) | Message::ScriptedDespawn { .. } => {
                let _ = self.link.to_engine.send(FromNetwork::Scripted(message));
            }
            Message::LockstepStart(_)
            | Message::LockstepFrames { .. }
            | Message::LockstepRecent { .. }
            | Message::LockstepSnapshot(_)
            | Message::LockstepResume { .. }
            | Message::LockstepDesync { .. }
            | Message::LockstepRefused { .. }
            | Message::LockstepSnapshotWanted => {
                self.track_lockstep(&message);
                let _ = self.link.to_engine.send(FromNetwork::Lockstep(message));
            }
            // Client -> relay messages: a relay never sends them.
            Message::Register { .. }
            | Message::Claim { .. }
            | Message::AtRest { .. }
            | Message::Session { .. }
            | Message::GlobalCommandUp { .. }
            | Message::ComponentCommandUp { .. }
            | Message::ComponentStateUp { .. }
            | Message::Interest(_)
            | Message::EntityInterest { .. }
            | Message::Unregister { .. }
            | Message::LockstepJoin { .. }
            | Message::LockstepLeave
            | Message::LockstepInput { .. }
            | Message::LockstepHash { .. }
            | Message::LockstepInputs { .. }
            | Message::LockstepSnapshotUp(_) => self.stats.malformed += 1,
        }
    }

    /// Follows the match on this connection: accepted, refused, and the
    /// newest frame (or snapshot) received.
    fn track_lockstep(&mut self, message: &Message) {
        match message {
            Message::LockstepStart(_) => self.lockstep.started = self.lockstep.joined,
            Message::LockstepRefused { .. } => {
                self.lockstep.joined = false;
                self.lockstep.started = false;
            }
            Message::LockstepFrames { first, parts } => {
                let complete = parts.iter().filter(|p| p.complete).count() as u64;
                if complete > 0 {
                    self.lockstep.confirmed(first + complete - 1);
                }
            }
            // Unreliable repeats count only where they continue what we
            // have (the engine side takes them only there too).
            Message::LockstepRecent { first, parts } => {
                let next = self.lockstep.have.map_or(0, |h| h + 1);
                if let Some(newest) = (parts.len() as u64).checked_sub(1).map(|n| first + n) {
                    self.lockstep.saw(newest);
                    if *first <= next && self.lockstep.started {
                        self.lockstep.confirmed(newest);
                    }
                }
            }
            Message::LockstepSnapshot(c)
                if c.offset as usize + c.data.len() == c.total as usize =>
            {
                self.lockstep.have = Some(c.frame);
            }
            _ => {}
        }
    }
}

/// How a message travels.
#[derive(Clone, Copy, Debug)]
enum Delivery {
    Unreliable,
    /// Reliable, any order (keep-alives, claims, rest reports).
    Reliable,
    /// Reliable, in order (the session, commands, registrations and
    /// everything that depends on them).
    Ordered,
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
        packer.push(update.entity, &w.bytes);
    }
    packer.finish(false).into_iter().map(|p| p.bytes).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::pose::Pose;
    use glam::{Quat, Vec3};

    #[test]
    fn every_unconfirmed_input_is_repeated_in_turn() {
        let mut link = LockstepLink {
            have: Some(9),
            ..Default::default()
        };
        for f in 10..50u64 {
            link.recent.push_back((f, vec![f as u8]));
        }
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..4 {
            let Message::LockstepInputs { need, inputs } = link.repeat(0.0) else {
                panic!()
            };
            assert_eq!(need, None, "nothing seen lost");
            assert!(inputs.len() <= MAX_REDUNDANT);
            // The newest and the oldest every time.
            assert!(inputs.iter().any(|(f, _)| *f == 49) && inputs.iter().any(|(f, _)| *f == 10));
            seen.extend(inputs.iter().map(|(f, _)| *f));
        }
        assert_eq!(seen.len(), 40, "all 40 came round within 4 messages");
        link.saw(12);
        let Message::LockstepInputs { need, .. } = link.repeat(1.0) else {
            panic!()
        };
        assert_eq!(need, None, "frame 12 exists, 10 may still come");
        let Message::LockstepInputs { need, .. } = link.repeat(1.0 + 2.0 * GAP_GRACE) else {
            panic!()
        };
        assert_eq!(need, Some(10), "10 is missing for a while: lost");
        link.confirmed(29);
        assert_eq!(link.recent.front().map(|r| r.0), Some(30));
        assert_eq!(link.have, Some(29));
        // Big inputs: fewer per message, within the byte budget.
        link.recent = (30..50u64).map(|f| (f, vec![0; 256])).collect();
        let Message::LockstepInputs { inputs, .. } = link.repeat(2.0) else {
            panic!()
        };
        assert!(inputs.len() <= 3, "{}", inputs.len());
    }

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
