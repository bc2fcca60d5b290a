//! The engine-facing client: connect without blocking, register owned
//! entities, set their state each frame, tick once per frame for every
//! remote transform, poll events, read stats. Dropping it stops and joins
//! the network thread (bounded: the thread checks its stop flag every
//! half millisecond), so an editor can reload safely.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{unbounded, Receiver, Sender};

use super::config::ClientConfig;
use super::events::{ClientEvent, ConnectionState, FromNetwork, Removal, ToNetwork};
use super::lockstep::{
    LockstepClient, LockstepEvent, LockstepItem, LockstepState, LockstepStatus, Outgoing,
    SubmitError,
};
use super::network::{udp_factory, ClientDriver, EngineLink, NetworkStats, SocketFactory};
use super::prediction_overlay::{PredictionOverlay, PredictionStats, Verdict};
use super::recorded_timeline::RecordedTimeline;
use super::scripted::ScriptedClient;
use crate::core::app_message::{AppMessage, AppMessageKind};
use crate::core::pose::{Sample, SampleFlags};
use crate::core::scripted::{Kinematic, ScriptedConfig};
use crate::core::timeline::{shown_flags, Mode, Shown, Timeline, TimelineError, TimelineStats};
use crate::net::clock::NetClock;
use crate::net::worker::Worker;
use crate::server::send_rights::EntityKind;
use crate::wire::message::{
    entity_kind, InterestSpec, MAX_LOCKSTEP_INPUT, MAX_LOCKSTEP_SNAPSHOT, MAX_PAYLOAD, MAX_REGIONS,
    MAX_VIEW_RADIUS,
};
use crate::wire::quantize::WIRE_RANGE;

/// Most commands sent and not yet acknowledged by the relay.
pub const MAX_PENDING_COMMANDS: u64 = 4096;
/// Most received messages waiting for the game to poll them; beyond, the
/// oldest are dropped (and counted).
pub const MAX_QUEUED_MESSAGES: usize = 65_536;

/// Why a client call was refused.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientError {
    InvalidConfig(String),
    Io(String),
    NotRegistered(u64),
    AlreadyRegistered(u64),
    /// The entity is a remote one: another client owns it.
    RemoteEntity(u64),
    InvalidSample(&'static str),
    Timeline(TimelineError),
    /// The component was never registered on this client.
    UnknownComponent {
        entity: u64,
        component: u32,
    },
    /// The component is registered unsynced: nothing of it leaves the client.
    UnsyncedComponent {
        entity: u64,
        component: u32,
    },
    /// Only the holder of the entity's send right may do that.
    NotHeld(u64),
    /// The entity is simulated here (held or controlled): set its state instead.
    SimulatedHere(u64),
    PayloadTooLarge(usize),
    /// Too many commands wait for the relay's acknowledgement.
    TooManyPending,
    InvalidInterest(String),
    /// Needs the server clock, which is known once connected.
    NotConnected,
    /// Lockstep: nothing to take yet, or input too far ahead; call again
    /// after the next tick. Not a failure.
    Wait,
    /// Lockstep: this client is not a member of the match.
    NotMember,
    /// Lockstep: the game has not taken this frame yet.
    FrameNotTaken(u64),
    InputTooLarge(usize),
    SnapshotTooLarge(usize),
    /// A recording call in the wrong state (see the message).
    Recording(String),
    /// The recording file could not be created or written.
    RecordingFile(String),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::InvalidConfig(e) => write!(f, "invalid client config: {e}"),
            ClientError::Io(e) => write!(f, "cannot start the network thread: {e}"),
            ClientError::NotConnected => {
                write!(f, "not connected yet: the server clock is unknown")
            }
            ClientError::NotRegistered(id) => write!(f, "entity {id} is not registered as owned"),
            ClientError::AlreadyRegistered(id) => write!(f, "entity {id} is already registered"),
            ClientError::RemoteEntity(id) => write!(f, "entity {id} belongs to another client"),
            ClientError::InvalidSample(why) => write!(f, "invalid state: {why}"),
            ClientError::Timeline(e) => write!(f, "{e}"),
            ClientError::UnknownComponent { entity, component } => write!(
                f,
                "component {component} of entity {entity} is not registered on this client"
            ),
            ClientError::UnsyncedComponent { entity, component } => write!(
                f,
                "component {component} of entity {entity} is registered unsynced: nothing of it is sent"
            ),
            ClientError::NotHeld(id) => {
                write!(f, "this client does not hold the send right of entity {id}")
            }
            ClientError::SimulatedHere(id) => write!(
                f,
                "entity {id} is simulated by this client: set its state instead of predicting it"
            ),
            ClientError::PayloadTooLarge(len) => {
                write!(f, "payload of {len} bytes is over the limit of {MAX_PAYLOAD}")
            }
            ClientError::TooManyPending => write!(
                f,
                "too much is waiting for the relay ({MAX_PENDING_COMMANDS} commands, or a snapshot less than {SNAPSHOT_INTERVAL} s ago); try again later"
            ),
            ClientError::InvalidInterest(why) => write!(f, "invalid interest: {why}"),
            ClientError::Wait => write!(f, "not yet: call again after the next tick"),
            ClientError::NotMember => {
                write!(f, "this client is not a member of the lockstep match (join first)")
            }
            ClientError::FrameNotTaken(frame) => write!(
                f,
                "frame {frame} has not been taken by the game yet (take it with next_frame first)"
            ),
            ClientError::InputTooLarge(len) => write!(
                f,
                "lockstep input of {len} bytes is over the limit of {MAX_LOCKSTEP_INPUT}"
            ),
            ClientError::Recording(why) => write!(f, "recording: {why}"),
            ClientError::RecordingFile(why) => write!(f, "recording file: {why}"),
            ClientError::SnapshotTooLarge(len) => write!(
                f,
                "lockstep snapshot of {len} bytes is over the limit of {MAX_LOCKSTEP_SNAPSHOT}"
            ),
        }
    }
}

/// Stats of a client: network, clock and timeline together.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClientStats {
    pub network: NetworkStats,
    pub timeline: TimelineStats,
    /// Bytes per second up and down over the last second or so.
    pub bytes_per_second_up: f64,
    pub bytes_per_second_down: f64,
    pub prediction: PredictionStats,
    /// Received messages dropped because the game did not poll them.
    pub messages_dropped: u64,
    /// Received messages waiting to be polled.
    pub messages_queued: usize,
    /// Scripted elements known (started or not).
    pub scripted_elements: usize,
}

/// Least time between two local states of a held object put into its
/// track (s): as often as states are usually sent.
const LOCAL_RECORD_INTERVAL: f64 = 1.0 / 30.0;

/// The state the engine last set for an entity it simulates.
#[derive(Clone, Copy, Debug)]
struct LocalState {
    sample: Sample,
    local_time: f64,
    /// Already put into the entity's track.
    recorded: bool,
}

/// A client of a relay.
pub struct Client {
    to_network: Sender<ToNetwork>,
    from_network: Receiver<FromNetwork>,
    connection_events: Receiver<ClientEvent>,
    /// The network thread (none when the caller steps the driver).
    worker: Option<Worker>,
    shared: Arc<Mutex<NetworkStats>>,
    clock: NetClock,
    /// engine clock - our clock, measured at the latest tick.
    engine_offset: Option<f64>,
    timeline: RecordedTimeline,
    owned: HashSet<u64>,
    events: VecDeque<ClientEvent>,
    state: ConnectionState,
    rate_window: (f64, u64, u64),
    rates: (f64, f64),
    /// After a reconnect: remote entities not heard of again by the
    /// deadline (engine time) are gone.
    stale: Option<(f64, HashSet<u64>)>,
    /// Last send counter seen per remote entity.
    /// Per remote entity: the owner's send counter and the epoch it sent
    /// under (a new holder counts afresh: no loss).
    sequences: HashMap<u64, (u8, u32)>,
    /// The id the relay gave this client (0 until connected).
    client_id: u32,
    /// Send rights as announced: holder (0 nobody) and epoch.
    rights: HashMap<u64, (u32, u32)>,
    /// Neutral objects claimed and not yet granted or refused, with the
    /// epoch a grant would carry.
    claims: HashMap<u64, u32>,
    /// Neutral objects the relay says this client holds.
    held: HashSet<u64>,
    /// The last state the engine set per entity it simulates, its local
    /// clock time, and whether the timeline has it yet (to blend from when
    /// the right moves away).
    last_local: HashMap<u64, LocalState>,
    /// Components registered here, and whether each is synced.
    components: HashMap<(u64, u32), bool>,
    /// Commands and component states for the game, in arrival order.
    messages: VecDeque<AppMessage>,
    messages_dropped: u64,
    /// Newest component-state version delivered per component.
    component_versions: HashMap<(u64, u32), u64>,
    /// Number of the next command this client sends.
    next_command: u64,
    overlay: PredictionOverlay,
    lockstep: LockstepClient,
    scripted: ScriptedClient,
    /// Events of the scripted elements, gathered during a tick.
    scripted_events: Vec<ClientEvent>,
    /// When the last lockstep snapshot was provided (our clock).
    snapshot_at: Option<f64>,
}

/// Least time between two lockstep snapshots a client provides (s): each
/// is up to 69 reliable messages, and laminar drops a connection with
/// too many in flight.
pub const SNAPSHOT_INTERVAL: f64 = 1.0;

/// How long after a reconnect an old remote entity may stay unconfirmed.
const RECONNECT_GRACE: f64 = 2.0;

impl Client {
    /// Starts connecting to `config.relay` in the background; returns at once.
    pub fn connect(config: ClientConfig) -> Result<Client, ClientError> {
        let factory = udp_factory(&config);
        let (mut client, driver) = Client::driven(config, NetClock::real(), factory)?;
        let worker = Worker::spawn("netsync-client", move |stop| driver.run(stop))
            .map_err(|e| ClientError::Io(e.to_string()))?;
        client.worker = Some(worker);
        Ok(client)
    }

    /// A client whose network side the caller steps ([`ClientDriver::step`])
    /// on `clock` over sockets from `factory`: deterministic simulations.
    pub fn driven(
        config: ClientConfig,
        clock: NetClock,
        factory: SocketFactory,
    ) -> Result<(Client, ClientDriver), ClientError> {
        config.validate().map_err(ClientError::InvalidConfig)?;
        let timeline = Timeline::new(config.timeline).map_err(ClientError::InvalidConfig)?;
        let (to_network, from_engine) = unbounded();
        let (to_engine, from_network) = unbounded();
        let (events_tx, connection_events) = unbounded();
        let shared = Arc::new(Mutex::new(NetworkStats::default()));
        let link = EngineLink {
            to_engine,
            events: events_tx,
            from_engine,
            shared: shared.clone(),
        };
        let driver = ClientDriver::new(config, clock.clone(), factory, link);
        let client = Client {
            to_network,
            from_network,
            connection_events,
            worker: None,
            shared,
            clock,
            engine_offset: None,
            timeline: RecordedTimeline::new(timeline),
            owned: HashSet::new(),
            events: VecDeque::new(),
            state: ConnectionState::Connecting,
            rate_window: (0.0, 0, 0),
            rates: (0.0, 0.0),
            stale: None,
            sequences: HashMap::new(),
            client_id: 0,
            rights: HashMap::new(),
            claims: HashMap::new(),
            held: HashSet::new(),
            last_local: HashMap::new(),
            components: HashMap::new(),
            messages: VecDeque::new(),
            messages_dropped: 0,
            component_versions: HashMap::new(),
            next_command: 1,
            overlay: PredictionOverlay::default(),
            lockstep: LockstepClient::default(),
            scripted: ScriptedClient::default(),
            scripted_events: Vec::new(),
            snapshot_at: None,
        };
        Ok((client, driver))
    }

    pub fn state(&self) -> ConnectionState {
        self.state
    }

    /// Declares an entity this client controls and will send.
    pub fn register(&mut self, entity: u64) -> Result<(), ClientError> {
        self.register_kind(entity, EntityKind::Controlled)
    }

    /// Declares an entity with its send-right kind. A controlled entity is
    /// this client's for good; a neutral object is simulated by whoever
    /// holds its right (the first to register it, then whoever hits it);
    /// a server-owned one only the server moves.
    pub fn register_kind(&mut self, entity: u64, kind: EntityKind) -> Result<(), ClientError> {
        if kind == EntityKind::Controlled {
            if self.timeline.contains(entity) {
                return Err(ClientError::RemoteEntity(entity));
            }
            if !self.owned.insert(entity) {
                return Err(ClientError::AlreadyRegistered(entity));
            }
        }
        let code = match kind {
            EntityKind::Controlled => entity_kind::CONTROLLED,
            EntityKind::Neutral => entity_kind::NEUTRAL,
            EntityKind::ServerOwned => entity_kind::SERVER_OWNED,
        };
        let _ = self
            .to_network
            .send(ToNetwork::Register { entity, kind: code });
        Ok(())
    }

    /// True when this client holds (or is claiming) the right to send
    /// `entity`: simulate it locally and set its state.
    pub fn holds(&self, entity: u64) -> bool {
        self.owned.contains(&entity)
            || self.claims.contains_key(&entity)
            || self.held.contains(&entity)
    }

    /// `mine` (an entity this client controls) hit the neutral object
    /// `other`: claim its send right. Optimistic: from now on this client
    /// simulates and sends `other`; the relay decides, and an event says
    /// gained or refused.
    pub fn report_collision(&mut self, mine: u64, other: u64) -> Result<(), ClientError> {
        // A body this client controls, or a neutral object it holds.
        if !self.owned.contains(&mine) && !self.holds(mine) {
            return Err(ClientError::NotRegistered(mine));
        }
        if self.holds(other) {
            return Ok(());
        }
        let expected = self.rights.get(&other).map_or(1, |r| r.1.wrapping_add(1));
        self.claims.insert(other, expected);
        self.overlay.remove(other);
        let _ = self.to_network.send(ToNetwork::Claim { mine, other });
        Ok(())
    }

    /// A neutral object this client holds has come to rest: its right
    /// returns to nobody.
    pub fn report_at_rest(&mut self, entity: u64) -> Result<(), ClientError> {
        if !self.holds(entity) || self.owned.contains(&entity) {
            return Err(ClientError::NotRegistered(entity));
        }
        let _ = self.to_network.send(ToNetwork::AtRest { entity });
        Ok(())
    }

    /// Holder (0: nobody) and epoch of `entity` as last announced.
    pub fn right(&self, entity: u64) -> Option<(u32, u32)> {
        self.rights.get(&entity).copied()
    }

    pub fn unregister(&mut self, entity: u64) -> Result<(), ClientError> {
        if !self.owned.remove(&entity) {
            return Err(ClientError::NotRegistered(entity));
        }
        self.components.retain(|(e, _), _| *e != entity);
        let _ = self.to_network.send(ToNetwork::Unregister { entity });
        Ok(())
    }

    /// Declares a component of `entity` (S2). A synced component's state
    /// and commands travel; an unsynced one's never leave this client.
    /// Registering again changes whether it is synced.
    pub fn register_component(&mut self, entity: u64, component: u32, synced: bool) {
        self.components.insert((entity, component), synced);
    }

    /// Whether a component is registered, and synced.
    pub fn component_synced(&self, entity: u64, component: u32) -> Option<bool> {
        self.components.get(&(entity, component)).copied()
    }

    fn synced_component(&self, entity: u64, component: u32) -> Result<(), ClientError> {
        match self.components.get(&(entity, component)) {
            None => Err(ClientError::UnknownComponent { entity, component }),
            Some(false) => Err(ClientError::UnsyncedComponent { entity, component }),
            Some(true) => Ok(()),
        }
    }

    fn check_payload(data: &[u8]) -> Result<(), ClientError> {
        if data.len() > MAX_PAYLOAD {
            return Err(ClientError::PayloadTooLarge(data.len()));
        }
        Ok(())
    }

    fn take_command_number(&mut self) -> Result<u64, ClientError> {
        let acked = self.network_stats().commands_acked;
        if self.next_command - 1 - acked.min(self.next_command - 1) >= MAX_PENDING_COMMANDS {
            return Err(ClientError::TooManyPending);
        }
        let seq = self.next_command;
        self.next_command += 1;
        Ok(seq)
    }

    /// The latest state of a synced component of an entity this client
    /// holds; it reaches every client that sees the entity (and late
    /// joiners), reliably and only when it changed.
    pub fn set_component_state(
        &mut self,
        entity: u64,
        component: u32,
        data: &[u8],
    ) -> Result<(), ClientError> {
        self.synced_component(entity, component)?;
        Self::check_payload(data)?;
        if !self.holds(entity) {
            return Err(ClientError::NotHeld(entity));
        }
        let _ = self.to_network.send(ToNetwork::ComponentState {
            entity,
            component,
            data: data.to_vec(),
        });
        Ok(())
    }

    /// A global command: every client (this one too) and the embedded
    /// server receive it once, in the same order everywhere.
    pub fn send_global_command(&mut self, data: &[u8]) -> Result<(), ClientError> {
        Self::check_payload(data)?;
        let seq = self.take_command_number()?;
        let _ = self.to_network.send(ToNetwork::GlobalCommand {
            seq,
            data: data.to_vec(),
        });
        Ok(())
    }

    /// A command for a synced component of `entity`, delivered once to
    /// whoever holds the entity (or to the embedded server when nobody does).
    pub fn send_component_command(
        &mut self,
        entity: u64,
        component: u32,
        data: &[u8],
    ) -> Result<(), ClientError> {
        self.synced_component(entity, component)?;
        Self::check_payload(data)?;
        let seq = self.take_command_number()?;
        let _ = self.to_network.send(ToNetwork::ComponentCommand {
            seq,
            entity,
            component,
            data: data.to_vec(),
        });
        Ok(())
    }

    /// The next received command or component state (they arrive with
    /// ticks), without taking it.
    pub fn peek_message(&self) -> Option<&AppMessage> {
        self.messages.front()
    }

    /// Takes the next received command or component state.
    pub fn poll_message(&mut self) -> Option<AppMessage> {
        self.messages.pop_front()
    }

    /// What this client hears about (S2 interest filters).
    pub fn set_interest(&mut self, spec: InterestSpec) -> Result<(), ClientError> {
        if spec.regions.len() > MAX_REGIONS {
            return Err(ClientError::InvalidInterest(format!(
                "{} regions, at most {MAX_REGIONS}",
                spec.regions.len()
            )));
        }
        if spec.radius > MAX_VIEW_RADIUS {
            return Err(ClientError::InvalidInterest(format!(
                "radius {} cells, at most {MAX_VIEW_RADIUS}",
                spec.radius
            )));
        }
        if spec.regions.contains(&0) {
            return Err(ClientError::InvalidInterest(
                "region 0 means \"on the grid\" and cannot be subscribed".into(),
            ));
        }
        let _ = self.to_network.send(ToNetwork::Interest(spec));
        Ok(())
    }

    /// Where an entity this client holds is matched (`region` 0: by its
    /// grid cell), and the least device class that sees it.
    pub fn set_entity_interest(
        &mut self,
        entity: u64,
        region: u32,
        min_class: u8,
    ) -> Result<(), ClientError> {
        if !self.holds(entity) {
            return Err(ClientError::NotHeld(entity));
        }
        let _ = self.to_network.send(ToNetwork::EntityInterest {
            entity,
            region,
            min_class,
        });
        Ok(())
    }

    /// Shows `sample` for a remote entity at once (the expected result of
    /// a command this client sent), until authoritative state covering
    /// this moment arrives; then blends into it (S2 steps 1 and 5).
    /// `sample.server_time` is ignored: the prediction is stamped now.
    pub fn predict(&mut self, entity: u64, now: f64, sample: Sample) -> Result<(), ClientError> {
        if self.holds(entity) {
            return Err(ClientError::SimulatedHere(entity));
        }
        if !self.timeline.contains(entity) {
            return Err(ClientError::Timeline(TimelineError::UnknownEntity(entity)));
        }
        if !sample.is_valid() {
            return Err(ClientError::InvalidSample(
                "values must be finite, the rotation non-zero and flags known",
            ));
        }
        let Some(present) = self.server_time(now) else {
            return Err(ClientError::NotConnected);
        };
        let mut stamped = sample;
        stamped.server_time = present;
        self.overlay.predict(entity, stamped);
        Ok(())
    }

    fn deliver(&mut self, message: AppMessage) {
        if message.kind == AppMessageKind::ComponentState {
            let key = (message.entity, message.component);
            let known = self.component_versions.entry(key).or_insert(0);
            if message.sequence <= *known {
                return;
            }
            *known = message.sequence;
        }
        self.timeline.note_message(&message);
        if self.messages.len() >= MAX_QUEUED_MESSAGES {
            self.messages.pop_front();
            self.messages_dropped += 1;
            log::warn!(target: "netsync::client", "message queue full: the oldest message was dropped (poll messages every frame)");
        }
        self.messages.push_back(message);
    }

    /// The true state of an owned entity this frame; it goes out at the
    /// send rate when the send filter says it is worth it.
    pub fn set_state(&mut self, entity: u64, sample: Sample) -> Result<(), ClientError> {
        if !self.holds(entity) {
            return Err(ClientError::NotRegistered(entity));
        }
        if !sample.is_valid() {
            return Err(ClientError::InvalidSample(
                "values must be finite, the rotation non-zero and flags known",
            ));
        }
        let within = |v: glam::Vec3| v.abs().max_element() < WIRE_RANGE;
        if !(within(sample.pose.position)
            && within(sample.velocity)
            && within(sample.angular_velocity))
        {
            return Err(ClientError::InvalidSample(
                "position and velocities must be within +/-1e6 (the wire's range)",
            ));
        }
        let local_time = self.clock.now();
        self.last_local.insert(
            entity,
            LocalState {
                sample,
                local_time,
                recorded: false,
            },
        );
        let _ = self.to_network.send(ToNetwork::OwnedState {
            entity,
            sample,
            local_time,
        });
        Ok(())
    }

    fn absorb(&mut self, now: f64) {
        self.absorb_connection_events();
        let offset = now - self.clock.now();
        // The engine clock may be any monotonic clock: map our arrival
        // stamps onto it with the offset measured at this tick.
        let offset = *self.engine_offset.insert(offset);
        self.timeline.at(now);
        while let Ok(message) = self.from_network.try_recv() {
            match message {
                FromNetwork::Frame {
                    arrival,
                    server_time,
                    samples,
                    after_loss,
                } => {
                    if let Some(first) = after_loss {
                        // What the lost packets said is unknown: nothing
                        // is vouched for past the last frame before them,
                        // until the relay says it sent it again (or, if
                        // that word is lost too, until it must have).
                        let rtt = self.network_stats().clock.rtt.clamp(0.0, 2.0);
                        self.timeline
                            .note_loss(u64::from(first), now + 2.0 * rtt + 0.1);
                    }
                    let mut remote: Vec<(u64, Sample)> = Vec::with_capacity(samples.len());
                    for (entity, mut sample, sequence, epoch) in samples {
                        if self.owned.contains(&entity) {
                            continue;
                        }
                        // An entity known before a reconnect continues silently.
                        let returning = self
                            .stale
                            .as_mut()
                            .is_some_and(|(_, stale)| stale.remove(&entity));
                        if !returning && !self.timeline.contains(entity) {
                            self.events
                                .push_back(ClientEvent::EntityAppeared { entity });
                        }
                        // A jump in the owner's counter means states were lost.
                        // (A new holder's counter is its own: no loss.)
                        match self.sequences.insert(entity, (sequence, epoch)) {
                            Some((last, last_epoch)) if last_epoch == epoch => {
                                let step = sequence.wrapping_sub(last);
                                if step > 128 {
                                    // Older than what we have: keep the newer counter.
                                    self.sequences.insert(entity, (last, last_epoch));
                                } else if step > 1 {
                                    sample.flags.0 |= SampleFlags::AFTER_GAP;
                                }
                            }
                            Some(_) => sample.flags.0 |= SampleFlags::NEW_SOURCE,
                            None => {}
                        }
                        remote.push((entity, sample));
                    }
                    // Arrival can be a hair after `now` (the thread stamps
                    // after the engine read its clock): never push the future.
                    let at = (arrival + offset).min(now);
                    // The frame vouches for its oldest owner stamp: the
                    // adaptive delay then covers the slowest owner's path
                    // to the relay as well as the relay's path to us.
                    let vouched = remote
                        .iter()
                        .map(|(_, s)| s.server_time)
                        .fold(server_time, f64::min);
                    if let Err(e) = self.timeline.push_frame(at, vouched, &remote) {
                        log::debug!(target: "netsync::client", "frame dropped: {e}");
                    }
                }
                FromNetwork::LossRepaired { first } => {
                    self.timeline.loss_repaired(u64::from(first))
                }
                FromNetwork::Removed { entity, reason } => {
                    self.sequences.remove(&entity);
                    self.overlay.remove(entity);
                    self.component_versions.retain(|(e, _), _| *e != entity);
                    let reason: Removal = reason.into();
                    if self.timeline.remove(entity, reason).is_ok() {
                        self.events
                            .push_back(ClientEvent::EntityRemoved { entity, reason });
                    }
                }
                FromNetwork::App(message) => self.deliver(message),
                FromNetwork::Reset => {
                    // A new relay may run another clock: start the timeline
                    // afresh and remove, after a grace period, whatever
                    // does not come back.
                    let mut known: HashSet<u64> = self.timeline.entity_ids().collect();
                    if let Some((_, still)) = self.stale.take() {
                        known.extend(still);
                    }
                    self.timeline.reset();
                    // Send rights and ids belong to the old relay, and so
                    // does its numbering of component-state versions (a
                    // restarted relay starts again at 1): the relay sends
                    // every state in view again, delivered once more.
                    self.rights.clear();
                    self.component_versions.clear();
                    let dropped: Vec<u64> = self
                        .claims
                        .drain()
                        .map(|(e, _)| e)
                        .chain(self.held.drain())
                        .collect();
                    for entity in dropped {
                        self.events.push_back(ClientEvent::RightLost { entity });
                    }
                    self.stale = Some((now + RECONNECT_GRACE, known));
                    self.lockstep.reconnected();
                    self.scripted.reconnected(now, RECONNECT_GRACE);
                }
                FromNetwork::Right {
                    entity,
                    holder,
                    epoch,
                } => self.on_right(entity, holder, epoch),
                FromNetwork::Refused { entity, reason } => {
                    if self.claims.remove(&entity).is_some() {
                        self.give_back(entity);
                        self.events
                            .push_back(ClientEvent::RightRefused { entity, reason });
                    }
                }
                FromNetwork::Lockstep(message) => {
                    if let Some(Outgoing::Leave) = self.lockstep.on_message(message) {
                        let _ = self.to_network.send(ToNetwork::LockstepLeave);
                    }
                }
                FromNetwork::LockstepRestarted => self.lockstep.restarted(),
                FromNetwork::Scripted(message) => match message {
                    crate::wire::message::Message::ScriptedSpawns(spawns) => {
                        self.scripted.spawn(spawns)
                    }
                    crate::wire::message::Message::ScriptedDespawn { element } => {
                        if let Some(e) = self.scripted.despawn(element) {
                            self.events.push_back(e);
                        }
                    }
                    _ => {}
                },
            }
        }
        if let Some((deadline, _)) = &self.stale {
            if now >= *deadline {
                let (_, gone) = self.stale.take().unwrap_or_default();
                for entity in gone {
                    let _ = self.timeline.remove(entity, Removal::Stale);
                    self.overlay.remove(entity);
                    self.events.push_back(ClientEvent::EntityRemoved {
                        entity,
                        reason: Removal::Stale,
                    });
                }
            }
        }
    }

    fn on_right(&mut self, entity: u64, holder: u32, epoch: u32) {
        // Changes also arrive as unreliable repeats: apply each epoch once,
        // and never go back to an older one (wrapping comparison).
        if let Some(&(_, known)) = self.rights.get(&entity) {
            if (epoch.wrapping_sub(known) as i32) <= 0 {
                return;
            }
        }
        let claim = self.claims.get(&entity).copied();
        let held_before = self.held.contains(&entity);
        self.rights.insert(entity, (holder, epoch));
        self.timeline.note_right(entity, holder, epoch);
        let mine_now = self.client_id != 0 && holder == self.client_id;
        if mine_now {
            self.claims.remove(&entity);
            self.overlay.remove(entity);
            // Controlled entities are ours anyway; only neutral ones move.
            if !self.owned.contains(&entity) {
                self.held.insert(entity);
            }
            if claim.is_some() || !held_before {
                self.events.push_back(ClientEvent::RightGained { entity });
            }
            return;
        }
        self.held.remove(&entity);
        match claim {
            // Someone else got the epoch our claim aimed at: the relay
            // orders claims, so ours lost, whatever its own answer (which
            // may be slow to come) says. Stop simulating now.
            Some(aimed) if (epoch.wrapping_sub(aimed) as i32) >= 0 => {
                self.claims.remove(&entity);
                self.give_back(entity);
                self.events.push_back(ClientEvent::RightRefused {
                    entity,
                    reason: crate::server::send_rights::Refusal::Cooldown.code(),
                });
            }
            Some(_) => {}
            None if held_before => {
                self.give_back(entity);
                self.events.push_back(ClientEvent::RightLost { entity });
            }
            None => {}
        }
    }

    /// The states of neutral objects simulated here go into their tracks
    /// (at most one per [`LOCAL_RECORD_INTERVAL`]), so that when the right moves away
    /// the track continues from this simulation's recent past, not from
    /// before this client took the object. `clock_offset`: server minus
    /// local clock.
    fn record_held(&mut self, clock_offset: f64) {
        for (&entity, local) in self.last_local.iter_mut() {
            if local.recorded || !self.held.contains(&entity) {
                continue;
            }
            let t = local.local_time + clock_offset;
            let due = self
                .timeline
                .newest_time(entity)
                .is_none_or(|newest| t - newest >= LOCAL_RECORD_INTERVAL);
            if due {
                let mut sample = local.sample;
                sample.server_time = t;
                let _ = self.timeline.record_local(entity, sample);
                local.recorded = true;
            }
        }
    }

    /// Stops simulating `entity` here: no more sends, and the shown pose
    /// starts from where the engine last had it, blending into the remote
    /// state instead of jumping.
    fn give_back(&mut self, entity: u64) {
        let _ = self.to_network.send(ToNetwork::Forget { entity });
        if let Some(local) = self.last_local.remove(&entity) {
            self.timeline.start_from(entity, local.sample.pose);
        }
    }

    /// Connection events, in order, ahead of anything a tick adds.
    fn absorb_connection_events(&mut self) {
        while let Ok(event) = self.connection_events.try_recv() {
            match &event {
                ClientEvent::Connected { client_id } | ClientEvent::Reconnected { client_id } => {
                    self.client_id = *client_id;
                    self.timeline.note_identity(*client_id);
                    self.state = ConnectionState::Connected
                }
                ClientEvent::Disconnected(_) => self.state = ConnectionState::Disconnected,
                ClientEvent::Connecting { .. } => self.state = ConnectionState::Connecting,
                _ => {}
            }
            self.events.push_back(event);
        }
    }

    /// Advances to engine time `now` and visits every remote entity's pose.
    pub fn tick_with<F: FnMut(usize, &Shown)>(
        &mut self,
        now: f64,
        mut visit: F,
    ) -> Result<usize, ClientError> {
        if !now.is_finite() {
            return Err(ClientError::Timeline(TimelineError::InvalidTime("now")));
        }
        self.absorb(now);
        let stats = self.network_stats();
        // Render time follows the ping/pong estimate of the server clock,
        // mapped onto the engine's clock. That clock already is the
        // server's present, so predicted mode needs no lead.
        if stats.clock.known {
            if let Some(engine_offset) = self.engine_offset {
                let _ = self
                    .timeline
                    .set_clock_offset(stats.clock.offset - engine_offset);
            }
        }
        self.update_rates(now, &stats);
        if stats.clock.known {
            self.record_held(stats.clock.offset);
        }
        let mut shown = self.tick_timeline(now, &mut visit)?;
        // Scripted elements (S5): computed at the estimated server time
        // now, in the same batch.
        if !self.scripted.is_empty() {
            if let Some(t) = self.server_time(now) {
                let mut events = std::mem::take(&mut self.scripted_events);
                self.scripted.evaluate(now, t, &mut events, |entity, pose| {
                    visit(
                        shown,
                        &Shown {
                            entity,
                            pose,
                            flags: shown_flags::SCRIPTED,
                        },
                    );
                    shown += 1;
                });
                self.events.extend(events.drain(..));
                self.scripted_events = events;
            }
        }
        Ok(shown)
    }

    /// The timeline's part of a tick: every remote entity this client does
    /// not simulate, with predictions shown until authority covers them.
    fn tick_timeline<F: FnMut(usize, &Shown)>(
        &mut self,
        now: f64,
        visit: &mut F,
    ) -> Result<usize, ClientError> {
        // What this client simulates itself is not shown from the network.
        // Owned entities never enter the timeline; held or claimed neutral
        // objects may, and are few: no lookup at all when there are none.
        self.timeline
            .note_hidden(self.claims.keys().chain(self.held.iter()));
        if self.claims.is_empty() && self.held.is_empty() && self.overlay.is_empty() {
            return self
                .timeline
                .tick_with(now, |i, s| visit(i, s))
                .map_err(ClientError::Timeline);
        }
        // Predicted entities (few): judged against last tick's render time.
        let present = self.server_time(now);
        let judged: Vec<(u64, f64, Option<f64>)> = self
            .overlay
            .entities()
            .into_iter()
            .map(|e| {
                let mode = self
                    .timeline
                    .mode_of(e)
                    .unwrap_or(self.timeline.config().mode);
                (
                    e,
                    self.timeline.render_time(mode),
                    self.timeline.newest_time(e),
                )
            })
            .collect();
        let mut handed_back = Vec::new();
        let mut shown = 0;
        let (claims, held, overlay) = (&self.claims, &self.held, &mut self.overlay);
        self.timeline
            .tick_with(now, |_, s| {
                if claims.contains_key(&s.entity) || held.contains(&s.entity) {
                    return;
                }
                let verdict = match (present, judged.iter().find(|j| j.0 == s.entity)) {
                    (Some(present), Some(&(_, render, newest))) => {
                        overlay.judge(s.entity, present, render, newest, s.pose)
                    }
                    _ => None,
                };
                let pose = match verdict {
                    Some(Verdict::Show(p)) => p,
                    Some(Verdict::HandBack(p)) => {
                        handed_back.push((s.entity, p));
                        p
                    }
                    None => s.pose,
                };
                visit(shown, &Shown { pose, ..*s });
                shown += 1;
            })
            .map_err(ClientError::Timeline)?;
        // The timeline blends from the predicted pose into its own.
        for (entity, pose) in handed_back {
            self.timeline.start_from(entity, pose);
        }
        Ok(shown)
    }

    fn update_rates(&mut self, now: f64, stats: &NetworkStats) {
        let (since, up, down) = self.rate_window;
        if since == 0.0 {
            self.rate_window = (now, stats.bytes_sent, stats.bytes_received);
        } else if now - since >= 1.0 {
            let dt = now - since;
            self.rates = (
                (stats.bytes_sent - up) as f64 / dt,
                (stats.bytes_received - down) as f64 / dt,
            );
            self.rate_window = (now, stats.bytes_sent, stats.bytes_received);
        }
    }

    /// Estimated server time at engine time `now`, once the relay's clock
    /// is known (after the welcome; refined by every pong).
    pub fn server_time(&self, now: f64) -> Option<f64> {
        let stats = self.network_stats();
        if stats.state != ConnectionState::Connected && stats.clock.samples == 0 {
            return None;
        }
        let offset = self.engine_offset?;
        stats
            .clock
            .known
            .then_some(now - offset + stats.clock.offset)
    }

    /// Records everything this client's timeline is fed, its ticks, send
    /// rights and messages to `path` (format: docs/replay.md), until
    /// [`Client::stop_recording`] or the client is dropped. Only before
    /// the first tick, so that the recording holds the whole history.
    pub fn record(&mut self, path: &std::path::Path) -> Result<(), ClientError> {
        if self.timeline.is_recording() {
            return Err(ClientError::Recording("already recording".into()));
        }
        if self.engine_offset.is_some() {
            return Err(ClientError::Recording(
                "a recording must start before the first tick".into(),
            ));
        }
        self.timeline.start_recording(path).map_err(|e| {
            ClientError::RecordingFile(format!("cannot create {}: {e}", path.display()))
        })
    }

    /// Ends the recording and waits until the file is complete.
    pub fn stop_recording(&mut self) -> Result<(), ClientError> {
        if !self.timeline.is_recording() {
            return Err(ClientError::Recording("not recording".into()));
        }
        self.timeline
            .stop_recording()
            .map_err(ClientError::RecordingFile)
    }

    /// Entities the timeline shows.
    pub fn remote_count(&self) -> usize {
        self.timeline.len()
    }

    /// Server time the timeline showed (for `mode`) at the last tick.
    pub fn render_time(&self, mode: Mode) -> f64 {
        self.timeline.render_time(mode)
    }

    /// The next event, if any (connection events arrive without a tick;
    /// entity events come with ticks).
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.absorb_connection_events();
        self.events.pop_front()
    }

    /// The connection state as of the latest event.
    pub fn refresh_state(&mut self) -> ConnectionState {
        self.absorb_connection_events();
        self.state
    }

    fn network_stats(&self) -> NetworkStats {
        *self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn stats(&self) -> ClientStats {
        ClientStats {
            network: self.network_stats(),
            timeline: self.timeline.stats(),
            bytes_per_second_up: self.rates.0,
            bytes_per_second_down: self.rates.1,
            prediction: self.overlay.stats(),
            messages_dropped: self.messages_dropped,
            messages_queued: self.messages.len(),
            scripted_elements: self.scripted.len(),
        }
    }

    /// Joins the relay's lockstep match (S4). The relay answers with the
    /// first frame (a `Started` event), and after every reconnect this
    /// client joins again by itself.
    pub fn lockstep_join(&mut self) {
        if self.lockstep.join() {
            let _ = self.to_network.send(ToNetwork::LockstepJoin);
        }
    }

    /// Leaves the lockstep match; frames already received stay to be taken.
    pub fn lockstep_leave(&mut self) {
        if self.lockstep.leave() {
            let _ = self.to_network.send(ToNetwork::LockstepLeave);
        }
    }

    pub fn lockstep_state(&self) -> LockstepState {
        self.lockstep.state()
    }

    pub fn lockstep_status(&self) -> LockstepStatus {
        self.lockstep.status()
    }

    /// The game's input for its next frame; returns the frame it is for.
    /// [`ClientError::Wait`] while joining, or when `sync_interval` frames
    /// past the newest confirmed one (S4: a client that runs ahead waits).
    pub fn lockstep_submit(&mut self, data: &[u8]) -> Result<u64, ClientError> {
        match self.lockstep.submit(data) {
            Ok((frame, Outgoing::Input { frame: f, data })) => {
                let _ = self
                    .to_network
                    .send(ToNetwork::LockstepInput { frame: f, data });
                Ok(frame)
            }
            Ok((frame, Outgoing::Leave)) => Ok(frame),
            Err(SubmitError::Wait) => Err(ClientError::Wait),
            Err(SubmitError::NotJoined) => Err(ClientError::NotMember),
            Err(SubmitError::TooLarge(n)) => Err(ClientError::InputTooLarge(n)),
        }
    }

    /// The next confirmed frame (or snapshot to start from), left queued;
    /// None: wait (frames arrive with ticks).
    pub fn lockstep_peek(&self) -> Option<&LockstepItem> {
        self.lockstep.peek()
    }

    /// Takes the next confirmed frame or snapshot.
    pub fn lockstep_next(&mut self) -> Option<LockstepItem> {
        self.lockstep.pop()
    }

    /// Reports the hash of this client's state after `frame` (a frame the
    /// game has taken); the relay compares members' hashes.
    pub fn lockstep_report_hash(&mut self, frame: u64, hash: u64) -> Result<(), ClientError> {
        if self.lockstep.state() == LockstepState::Idle {
            return Err(ClientError::NotMember);
        }
        if !self.lockstep.taken(frame) {
            return Err(ClientError::FrameNotTaken(frame));
        }
        let _ = self
            .to_network
            .send(ToNetwork::LockstepHash { frame, hash });
        Ok(())
    }

    /// Gives the relay the game state after `frame` (a frame the game has
    /// taken), for joiners to start from. At most one per
    /// [`SNAPSHOT_INTERVAL`] ([`ClientError::TooManyPending`] otherwise).
    pub fn lockstep_provide_snapshot(
        &mut self,
        frame: u64,
        data: &[u8],
    ) -> Result<(), ClientError> {
        if data.len() > MAX_LOCKSTEP_SNAPSHOT {
            return Err(ClientError::SnapshotTooLarge(data.len()));
        }
        if self.lockstep.state() != LockstepState::Active {
            return Err(ClientError::NotMember);
        }
        if !self.lockstep.taken(frame) {
            return Err(ClientError::FrameNotTaken(frame));
        }
        let now = self.clock.now();
        if self
            .snapshot_at
            .is_some_and(|at| now - at < SNAPSHOT_INTERVAL)
        {
            return Err(ClientError::TooManyPending);
        }
        self.snapshot_at = Some(now);
        let _ = self.to_network.send(ToNetwork::LockstepSnapshot {
            frame,
            data: data.to_vec(),
        });
        Ok(())
    }

    /// The next lockstep event (they arrive with ticks).
    pub fn lockstep_poll_event(&mut self) -> Option<LockstepEvent> {
        self.lockstep.poll_event()
    }

    /// Uses `config` for scripted elements from now on (the same
    /// configuration as the server's: its fingerprint comes with every
    /// spawn).
    pub fn set_scripted_config(&mut self, config: std::sync::Arc<ScriptedConfig>) {
        self.scripted.set_config(config);
    }

    /// Scripted elements known (started or not).
    pub fn scripted_count(&self) -> usize {
        self.scripted.len()
    }

    /// Server time the scripted elements were computed at in the last tick.
    pub fn scripted_time(&self) -> Option<f64> {
        self.scripted.last_time()
    }

    /// One scripted element's state at server time `t` (None: unknown, not
    /// started or over, or not playable here).
    pub fn scripted_state_at(&mut self, element: u64, t: f64) -> Option<Kinematic> {
        self.scripted.state_at(element, t)
    }

    /// Stops and joins the network thread (dropping does the same).
    pub fn close(mut self) {
        if let Some(w) = self.worker.as_mut() {
            w.stop();
        }
    }
}
