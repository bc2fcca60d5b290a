//! Relay logic, sans-IO: clients join and leave, send the states of the
//! entities they hold, and on every send tick each client gets, within its
//! MTU and byte budget, the newest state of every entity in its interest
//! that it has not seen yet. Priority grows with the time an entity has
//! waited, so nothing starves under a tight budget. A client that joins
//! late, or that an entity enters the view of, gets the whole state, then
//! deltas. Commands (S2) are applied once per client session, global ones
//! numbered and broadcast to everyone, component ones routed to the
//! entity's holder or to the embedded server.

use std::collections::{BTreeMap, VecDeque};

use foldhash::{HashMap, HashMapExt, HashSet};

use crate::net::clock::next_in_phase;

use super::commands::{Admit, GlobalLog, Sessions};
use super::embedded::ServerEvent;
use super::interest::{Cell, InterestIndex};
use super::lockstep::{LockstepConfig, LockstepMatch, LockstepNote, LockstepStats};
use super::scripted::{RegistryError, ScriptedRegistry};
use super::send_rights::{EntityKind, Refusal, RightsConfig, SendRights};
use super::seq_window::SeqWindow;
use crate::core::app_message::{AppMessage, AppMessageKind};
use crate::core::scripted::Spawn;
use crate::replay::{Entry, Recorder, RecordingKind};
use crate::wire::batch;
use crate::wire::message::{
    entity_kind, EntityUpdate, InterestSpec, Message, RemovalReason, UpdatePacker, MAX_PAYLOAD,
};
use crate::wire::quantize::Precision;
use crate::wire::Writer;

/// Relay settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RelayConfig {
    /// Snapshot sends per second to each client.
    pub send_rate: f64,
    /// Largest datagram payload the relay builds (bytes).
    pub mtu: usize,
    /// Most snapshot bytes per client per send tick.
    pub budget_per_tick: usize,
    /// How far a client's server-time stamp may stray from the relay's clock.
    pub stamp_tolerance: f64,
    /// Most entities one client may control.
    pub max_entities_per_client: usize,
    pub precision: Precision,
    /// Send-right rules (claims, cooldown, rest).
    pub rights: RightsConfig,
    /// Interest grid cell edge (m, on the x-z plane); 0: no grid (regions
    /// and global views only).
    pub cell_size: f32,
    /// Most synced components with state per entity.
    pub max_components_per_entity: usize,
    /// Global commands kept for clients that reconnect.
    pub global_log_entries: usize,
    /// How long a client's session (its command numbering) outlives it (s).
    pub session_linger: f64,
    /// Most messages waiting for the embedded server to poll them (more
    /// are dropped and counted); 0 keeps none.
    pub server_inbox_capacity: usize,
    /// The lockstep match (S4).
    pub lockstep: LockstepConfig,
}

impl Default for RelayConfig {
    fn default() -> Self {
        RelayConfig {
            send_rate: 30.0,
            mtu: 1200,
            budget_per_tick: 16 * 1200,
            stamp_tolerance: 1.0,
            max_entities_per_client: 4096,
            precision: Precision::default(),
            rights: RightsConfig::default(),
            cell_size: 50.0,
            max_components_per_entity: 64,
            global_log_entries: 4096,
            session_linger: 300.0,
            server_inbox_capacity: 65_536,
            lockstep: LockstepConfig::default(),
        }
    }
}

/// One message for one client.
#[derive(Clone, Debug, PartialEq)]
pub struct Outgoing {
    pub client: u32,
    /// Reliable and ordered (small control messages) or unreliable (state).
    pub reliable: bool,
    pub payload: Vec<u8>,
}

/// Counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RelayStats {
    pub clients: usize,
    pub entities: usize,
    pub malformed: u64,
    /// State or requests for an entity the sender does not hold
    /// (including entities nobody has registered yet).
    pub rejected_not_owner: u64,
    /// State stamped too far from the relay's clock.
    pub rejected_stamp: u64,
    /// New entities or components refused over a configured limit.
    pub rejected_limit: u64,
    pub snapshot_bytes: u64,
    pub snapshot_packets: u64,
    /// Entity states sent again because a client reported their packet lost.
    pub snapshot_resends: u64,
    pub claims_granted: u64,
    pub claims_refused: u64,
    /// Rest reports from an earlier holding that arrived late (ignored).
    pub stale_rest_reports: u64,
    /// Copies of claims already applied (claims are sent more than once).
    pub claims_repeated: u64,
    /// Commands applied (global and component).
    pub commands: u64,
    /// Commands dropped as already applied (duplicates, resends).
    pub commands_duplicate: u64,
    /// Commands out of line or without a session.
    pub commands_refused: u64,
    /// Component commands for entities nobody knows.
    pub commands_unroutable: u64,
    /// Global commands sent again to reconnecting clients.
    pub globals_replayed: u64,
    /// Reconnecting clients that missed global commands no longer kept.
    pub global_history_gaps: u64,
    pub component_states: u64,
    /// Removals sent because an entity left a client's interest.
    pub interest_removals: u64,
    /// Messages for the embedded server dropped because its inbox was full.
    pub server_inbox_dropped: u64,
    pub lockstep: LockstepStats,
    /// Scripted elements live, and spawned so far.
    pub scripted_elements: usize,
    pub scripted_spawns: u64,
}

/// Why an embedded server's call was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerCallError {
    /// The entity is a client's (controlled or neutral), not the server's.
    NotServerOwned,
    UnknownEntity,
    /// Nobody holds the entity, so nobody can take the command.
    NoHolder,
    PayloadTooLarge,
    Limit,
    /// A spawn with a value out of range.
    InvalidSpawn,
    /// No live scripted element with that id.
    UnknownElement,
}

impl std::fmt::Display for ServerCallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ServerCallError::NotServerOwned => {
                "the entity is registered by a client, not server-owned"
            }
            ServerCallError::UnknownEntity => "no such entity",
            ServerCallError::NoHolder => "nobody holds the entity",
            ServerCallError::PayloadTooLarge => "payload larger than NETSYNC_MAX_PAYLOAD",
            ServerCallError::Limit => {
                "over a configured limit (components per entity, live scripted elements)"
            }
            ServerCallError::InvalidSpawn => "a spawn value is out of range",
            ServerCallError::UnknownElement => "no live scripted element with that id",
        })
    }
}

#[derive(Debug)]
struct Entity {
    update: EntityUpdate,
    server_time: f64,
    version: u64,
}

#[derive(Debug)]
struct Slot {
    version: u64,
    data: Vec<u8>,
}

#[derive(Debug, Default)]
struct Client {
    /// Per entity: version sent and when.
    sent: HashMap<u64, (u64, f64)>,
    /// Entities it controls (its interest focus).
    controlled: HashSet<u64>,
    interest: InterestSpec,
    /// Entities in its interest when its view was last computed (never
    /// those it holds), sorted.
    visible: Vec<u64>,
    /// When `visible` was computed (minus infinity: something it depends
    /// on changed since: interest, controlled entities, send rights) and
    /// the index's change count then ([`Relay::view_due`]).
    view_at: f64,
    view_changes: u64,
    /// Until when it sees nothing, its interest being on the way
    /// ([`INTEREST_GRACE`]; minus infinity once it declared one).
    awaiting_interest_until: f64,
    /// Claims applied (they arrive more than once).
    claims: SeqWindow,
    /// When its next snapshot is due ([`Relay::step`] spreads clients
    /// over the send interval).
    next_tick: f64,
    /// Number of its next snapshot packet.
    snapshot_seq: u16,
    /// Its last snapshot packets: (seq, [(entity, version)]).
    recent: VecDeque<(u16, Vec<(u64, u64)>)>,
    /// Losses it reported that are being repaired: (first lost packet,
    /// entities to send again).
    repairs: Vec<(u16, Vec<u64>)>,
}

impl Client {
    /// Has its view recomputed at its next tick.
    fn view_stale(&mut self) {
        self.view_at = f64::NEG_INFINITY;
    }
}

/// Longest a client's view goes without being recomputed (s): moves
/// between cells show up within it. Everything else that changes a view
/// (entities added or removed, regions, interest, rights) takes effect on
/// the client's next tick; recomputing on every tick was a tenth of a
/// relay's time at 1 000 clients.
const VIEW_REFRESH: f64 = 0.1;
/// How long a client that joined sees nothing while its interest is on
/// the way (s). The client library declares one right after the welcome
/// (the global view unless the game set another), so its first snapshot
/// already follows it; before, a client joining a big world got a tick or
/// two of the whole world and then the removals. A client that declares
/// none gets the default global view after this.
const INTEREST_GRACE: f64 = 0.5;
/// Within this long (s), a state with the same send counter as the one
/// stored is a repeat of it (the counter wraps after 256 sends).
const REPEAT_WINDOW: f64 = 0.5;
/// Snapshot packets remembered per client for loss reports.
const RECENT_SNAPSHOTS: usize = 64;
/// Loss reports per client being repaired at once (more: the oldest is
/// dropped, and the client falls back on its timeout).
const MAX_REPAIRS: usize = 8;

/// The relay's state.
#[derive(Debug)]
pub struct Relay {
    config: RelayConfig,
    clients: BTreeMap<u32, Client>,
    entities: HashMap<u64, Entity>,
    components: HashMap<u64, BTreeMap<u32, Slot>>,
    next_version: u64,
    outbox: Vec<Outgoing>,
    stats: RelayStats,
    scratch: Vec<(f64, u64)>,
    rights: SendRights,
    index: InterestIndex,
    sessions: Sessions,
    globals: GlobalLog,
    /// Which relay process this is (a client that reconnects to the same
    /// one may catch up on global commands).
    instance: u64,
    server_inbox: VecDeque<AppMessage>,
    server_events: Vec<ServerEvent>,
    view: Vec<u64>,
    focus: Vec<Cell>,
    /// Encoded updates of this step, shared by every client: where each
    /// entity's bytes lie in `encoded_bytes` (empty: it cannot be
    /// encoded). Both keep their memory from step to step.
    encoded: HashMap<u64, std::ops::Range<usize>>,
    encoded_bytes: Vec<u8>,
    /// The (entity, version) pairs of the snapshot being packed (reused).
    sent_now: Vec<(u64, u64)>,
    /// Recent right changes, repeated unreliably.
    repeats: Vec<RightRepeat>,
    /// Clients dropped because they said goodbye or came back on a new
    /// connection; the caller forgets their connections.
    displaced: Vec<u32>,
    /// When the once-per-interval work is next due ([`Relay::step`]).
    next_global: f64,
    /// How far behind the relay's clock owners' states arrive.
    owner_lateness: Lateness,
    keep_server_messages: bool,
    lockstep: LockstepMatch,
    scripted: ScriptedRegistry,
    /// Accepted states, right changes and commands, when recording.
    recorder: Option<Recorder>,
    /// The relay's clock at the latest public call that gave it (stamps
    /// recorded entries, also from calls that do not take the time).
    now: f64,
}

/// A right change being repeated unreliably.
#[derive(Debug)]
struct RightRepeat {
    entity: u64,
    /// The encoded RightChanged.
    payload: Vec<u8>,
    /// Send intervals since the change.
    ticks: u8,
    /// New and former holder.
    involved: [Option<u32>; 2],
}

/// A right change also goes out unreliably on these send ticks after it
/// (spaced out, so that one long burst of loss cannot take them all): a
/// lost reliable message is only resent once laminar's ack window moves
/// past it (seconds on a lossy link), and every client must agree at once.
const RIGHT_REPEAT_TICKS: [u8; 5] = [1, 2, 4, 8, 16];
/// How many unreliable repeats each right change gets.
#[cfg(test)]
const RIGHT_REPEATS: u8 = RIGHT_REPEAT_TICKS.len() as u8;
/// Bytes of global commands kept for reconnecting clients.
const GLOBAL_LOG_BYTES: usize = 4 << 20;

impl Relay {
    pub fn new(config: RelayConfig) -> Self {
        Relay {
            config,
            clients: BTreeMap::new(),
            entities: HashMap::new(),
            components: HashMap::new(),
            next_version: 1,
            outbox: Vec::new(),
            stats: RelayStats::default(),
            scratch: Vec::new(),
            rights: SendRights::new(config.rights),
            index: InterestIndex::new(config.cell_size),
            sessions: Sessions::new(config.session_linger, 4 * 4096),
            globals: GlobalLog::new(config.global_log_entries, GLOBAL_LOG_BYTES),
            instance: fastrand::u64(1..),
            server_inbox: VecDeque::new(),
            server_events: Vec::new(),
            view: Vec::new(),
            focus: Vec::new(),
            repeats: Vec::new(),
            encoded: HashMap::new(),
            encoded_bytes: Vec::new(),
            sent_now: Vec::new(),
            displaced: Vec::new(),
            next_global: 0.0,
            owner_lateness: Lateness::default(),
            keep_server_messages: true,
            lockstep: LockstepMatch::new(config.lockstep, config.precision),
            scripted: ScriptedRegistry::default(),
            recorder: None,
            now: 0.0,
        }
    }

    pub fn config(&self) -> &RelayConfig {
        &self.config
    }

    pub fn stats(&self) -> RelayStats {
        let mut s = self.stats;
        s.clients = self.clients.len();
        s.entities = self.entities.len();
        s.lockstep = self.lockstep.stats();
        s.scripted_elements = self.scripted.len();
        s.scripted_spawns = self.scripted.spawned();
        s
    }

    /// Moves what the lockstep match and the scripted elements want to
    /// send into the outbox (all reliable and ordered).
    fn flush_side_channels(&mut self) {
        for note in self.lockstep.drain_notes() {
            if !self.keep_server_messages {
                continue; // a standalone relay: nobody to tell
            }
            match note {
                LockstepNote::Stalled { client, frame } => self
                    .server_events
                    .push(ServerEvent::LockstepStalled { client, frame }),
                LockstepNote::Desync { frame, clients } => self.server_events.extend(
                    clients
                        .into_iter()
                        .map(|client| ServerEvent::LockstepDesync { client, frame }),
                ),
            }
        }
        for (client, reliable, payload) in self.lockstep.drain() {
            self.outbox.push(Outgoing {
                client,
                reliable,
                payload,
            });
        }
        for (client, payload) in self.scripted.drain() {
            self.outbox.push(Outgoing {
                client,
                reliable: true,
                payload,
            });
        }
    }

    /// Messages waiting to go out; the caller sends them.
    pub fn drain(&mut self) -> std::vec::Drain<'_, Outgoing> {
        self.outbox.drain(..)
    }

    /// Clients dropped since the last call because they said goodbye or
    /// reconnected on a new connection (already gone from the relay's
    /// state).
    pub fn take_displaced(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.displaced)
    }

    /// Messages for the embedded server (component commands for
    /// server-owned or unheld entities, and every global command).
    pub fn drain_server_inbox(&mut self) -> std::collections::vec_deque::Drain<'_, AppMessage> {
        self.server_inbox.drain(..)
    }

    /// Events for the embedded server (lockstep stalls and desyncs),
    /// kept only when [`Relay::keep_server_messages`] is on.
    pub fn drain_server_events(&mut self) -> std::vec::Drain<'_, ServerEvent> {
        self.server_events.drain(..)
    }

    /// A control message's bytes (they carry no value that can fail).
    fn encode(&self, message: &Message) -> Vec<u8> {
        message.to_bytes(&self.config.precision).unwrap_or_default()
    }

    fn send(&mut self, client: u32, reliable: bool, payload: Vec<u8>) {
        self.outbox.push(Outgoing {
            client,
            reliable,
            payload,
        });
    }

    /// Keep messages for an embedded server (the game side takes them
    /// each step and applies `server_inbox_capacity`); a standalone relay
    /// keeps none.
    pub fn keep_server_messages(&mut self, keep: bool) {
        self.keep_server_messages = keep;
    }

    fn queue_for_server(&mut self, message: AppMessage) {
        if !self.keep_server_messages {
            return; // a standalone relay: nobody handles them
        }
        // Drained every step; this only bounds a caller that never drains.
        if self.server_inbox.len() >= self.config.server_inbox_capacity.max(1) {
            self.stats.server_inbox_dropped += 1;
            return;
        }
        self.server_inbox.push_back(message);
    }

    fn holds(&self, client: u32, entity: u64) -> bool {
        self.rights
            .holder(entity)
            .is_some_and(|(h, _)| h == Some(client))
    }

    /// A client was admitted at relay time `now`: welcome it; it will get
    /// the scene in its interest on the next send tick.
    pub fn join(&mut self, client: u32, now: f64) {
        self.now = now;
        // A phase of the send interval of its own, spread by the golden
        // ratio so that any number of clients covers it evenly.
        let phase = (client as f64 * 0.618_033_988_75).fract();
        let interval = 1.0 / self.config.send_rate.max(1.0);
        let c = self.clients.entry(client).or_default();
        c.next_tick = now + phase * interval;
        c.view_stale();
        c.awaiting_interest_until = now + INTEREST_GRACE;
        let welcome = self.encode(&Message::Welcome {
            client_id: client,
            server_time: now,
            send_rate: self.config.send_rate.round().clamp(1.0, 1000.0) as u16,
            precision: self.config.precision,
            instance: self.instance,
            next_global: self.globals.next(),
        });
        self.send(client, true, welcome);
        // Who holds what comes with each entity as it enters this client's
        // view (update_view), not the whole table at once. Live scripted
        // elements follow over the next send ticks.
        self.scripted.joined(client);
    }

    /// Holder of an entity, if it has send rights.
    pub fn holder(&self, entity: u64) -> Option<(Option<u32>, u32)> {
        self.rights.holder(entity)
    }

    /// Announces every send-right change since the last call to the
    /// clients it concerns: those that see the entity, its new holder and
    /// its former one. (Announcing every change to every client made a
    /// thousand clients joining cost a million messages.)
    fn broadcast_rights(&mut self, now: f64) {
        let changes: Vec<_> = self.rights.drain_changes().collect();
        for change in changes {
            self.log(|| Entry::Right {
                entity: change.entity,
                holder: change.holder.unwrap_or(0),
                epoch: change.epoch,
            });
            if change.holder.is_none() && change.previous.is_some() {
                self.settle(change.entity, now);
            }
            let payload = self.encode(&right_changed(change));
            self.repeats.retain(|r| r.entity != change.entity);
            let involved = [change.holder, change.previous];
            // A client never sees what it holds: both views change.
            for client in involved.into_iter().flatten() {
                self.view_changed(client);
            }
            self.repeats.push(RightRepeat {
                entity: change.entity,
                payload: payload.clone(),
                ticks: 0,
                involved,
            });
            for client in self.concerned(change.entity, involved) {
                self.send(client, true, payload.clone());
            }
        }
    }

    /// A neutral object nobody holds any more (at rest, or its holder
    /// left) stays where it was last seen, still: its stored state loses
    /// its velocities and is stamped now, so that every viewer gets a
    /// final state to hold instead of dead-reckoning the last one's
    /// motion onward.
    fn settle(&mut self, entity: u64, now: f64) {
        let Some(e) = self.entities.get_mut(&entity) else {
            return;
        };
        let still = Some(glam::Vec3::ZERO);
        if e.update.velocity == still && e.update.angular_velocity == still {
            return;
        }
        // Zero rather than none: a sample without velocities would have
        // the viewer estimate them from the moving samples before it.
        e.update.velocity = still;
        e.update.angular_velocity = still;
        e.server_time = e.server_time.max(now);
        e.version = self.next_version;
        self.next_version += 1;
    }

    /// Clients that see `entity`, and the `involved` ones still connected.
    fn concerned(&self, entity: u64, involved: [Option<u32>; 2]) -> Vec<u32> {
        let mut ids: Vec<u32> = self
            .clients
            .iter()
            .filter(|(id, c)| {
                involved.contains(&Some(**id)) || c.visible.binary_search(&entity).is_ok()
            })
            .map(|(&id, _)| id)
            .collect();
        ids.dedup();
        ids
    }

    fn refuse(&mut self, client: u32, entity: u64, reason: u8) {
        self.stats.claims_refused += 1;
        let payload = self.encode(&Message::ClaimRefused { entity, reason });
        self.send(client, true, payload);
    }

    /// A client left or timed out at relay time `now`: the entities it
    /// controlled go (everyone is told), the neutral objects it held return
    /// to nobody (announced) and keep their last state.
    pub fn leave(&mut self, client: u32, now: f64) {
        self.now = now;
        if self.clients.remove(&client).is_none() {
            return;
        }
        self.sessions.client_left(client, now);
        for entity in self.rights.client_left(client, now) {
            self.forget(entity, RemovalReason::OwnerLeft);
        }
        self.broadcast_rights(now);
        self.scripted.left(client);
        self.lockstep.leave(client, now);
        self.flush_side_channels();
    }

    /// Drops an entity and tells whoever had it in view.
    fn forget(&mut self, entity: u64, reason: RemovalReason) {
        self.log(|| Entry::Remove {
            entity,
            reason: crate::client::Removal::from(reason) as u32,
        });
        self.entities.remove(&entity);
        self.components.remove(&entity);
        self.index.remove(entity);
        let payload = self.encode(&Message::EntityRemoved { entity, reason });
        let recipients: Vec<u32> = self
            .clients
            .iter_mut()
            .filter_map(|(&id, c)| {
                c.controlled.remove(&entity);
                c.sent.remove(&entity);
                let i = c.visible.binary_search(&entity).ok()?;
                c.visible.remove(i);
                Some(id)
            })
            .collect();
        for client in recipients {
            self.send(client, true, payload.clone());
        }
    }

    /// A datagram's payload from an admitted client. The sender is the
    /// connection, never anything inside the payload.
    pub fn receive(&mut self, client: u32, payload: &[u8], now: f64) {
        self.now = now;
        for part in batch::split(payload) {
            // A goodbye earlier in the batch removes the client.
            if !self.clients.contains_key(&client) {
                return;
            }
            match part.and_then(|m| Message::decode(m, &self.config.precision)) {
                Ok(message) => self.handle(client, message, now),
                Err(e) => {
                    self.stats.malformed += 1;
                    log::debug!(target: "netsync::relay", "client {client}: malformed message: {e}");
                }
            }
        }
    }

    fn handle(&mut self, client: u32, message: Message, now: f64) {
        match message {
            Message::Ping {
                sequence,
                client_time,
            } => {
                let pong = self.encode(&Message::Pong {
                    sequence,
                    client_time,
                    server_time: now,
                });
                self.send(client, false, pong);
            }
            Message::OwnedState {
                server_time,
                updates,
            } => {
                if (server_time - now).abs() > self.config.stamp_tolerance {
                    self.stats.rejected_stamp += 1;
                    return;
                }
                self.owner_lateness.observe(now - server_time);
                for update in updates {
                    // Each state was true `age` before the message's stamp.
                    self.apply(client, server_time - update.age, update, now);
                }
                self.broadcast_rights(now);
            }
            Message::KeepAlive | Message::AckRequest => {}
            Message::SnapshotNack { first, count } => self.resend_lost(client, first, count),
            Message::Goodbye => {
                log::info!(target: "netsync::relay", "client {client} said goodbye");
                self.leave(client, now);
                self.displaced.push(client);
            }
            Message::Register { entity, kind } => {
                let kind = match kind {
                    entity_kind::CONTROLLED => EntityKind::Controlled,
                    entity_kind::NEUTRAL => EntityKind::Neutral,
                    _ => EntityKind::ServerOwned,
                };
                self.register(client, entity, kind, now);
                self.broadcast_rights(now);
            }
            Message::Unregister { entity } => match self.rights.unregister(client, entity) {
                Ok(()) => self.forget(entity, RemovalReason::Unregistered),
                Err(_) => self.stats.rejected_not_owner += 1,
            },
            Message::Claim {
                mine,
                other,
                epoch,
                seq,
            } => {
                let first = self
                    .clients
                    .get_mut(&client)
                    .is_some_and(|c| c.claims.first_time(seq));
                if !first {
                    self.stats.claims_repeated += 1;
                    return;
                }
                match self.rights.claim(client, mine, other, epoch, now) {
                    Ok(_) => self.stats.claims_granted += 1,
                    Err(r) => self.refuse(client, other, r.code()),
                }
                self.broadcast_rights(now);
            }
            Message::AtRest { entity, epoch } => {
                match self.rights.at_rest(client, entity, epoch, now) {
                    // A late report from an earlier holding: the sender holds
                    // it again (or will hear it lost); nothing to answer.
                    Err(Refusal::Stale) => {
                        self.stats.stale_rest_reports += 1;
                    }
                    Err(r) => self.refuse(client, entity, r.code()),
                    Ok(_) => self.broadcast_rights(now),
                }
            }
            Message::Session {
                session,
                last_global,
            } => self.bind_session(client, session, last_global, now),
            Message::GlobalCommandUp { seq, data } => {
                if self.admit(client, seq) {
                    self.global_command(client, data, now);
                }
            }
            Message::ComponentCommandUp {
                seq,
                entity,
                component,
                data,
            } => {
                if self.admit(client, seq) {
                    self.component_command(client, entity, component, data, now);
                }
            }
            Message::ComponentStateUp {
                seq,
                entity,
                component,
                data,
            } => {
                if self.sessions.admit_state(client, seq) != Admit::Apply {
                    return;
                }
                if !self.holds(client, entity) {
                    self.stats.rejected_not_owner += 1;
                    return;
                }
                if let Err(e) = self.store_component(client, entity, component, data) {
                    log::debug!(target: "netsync::relay", "client {client}: component state refused: {e}");
                }
            }
            Message::Interest(spec) => {
                if let Some(c) = self.clients.get_mut(&client) {
                    c.interest = spec;
                    c.awaiting_interest_until = f64::NEG_INFINITY;
                    c.view_stale();
                }
            }
            Message::EntityInterest {
                entity,
                region,
                min_class,
            } => {
                if self.holds(client, entity) {
                    self.index.set_region(entity, region, min_class);
                } else {
                    self.stats.rejected_not_owner += 1;
                }
            }
            Message::LockstepJoin { have } => {
                self.lockstep.join(client, have, now);
                self.flush_side_channels();
            }
            Message::LockstepLeave => {
                self.lockstep.leave(client, now);
                self.flush_side_channels();
            }
            Message::LockstepInput { frame, data } => {
                self.lockstep.input(client, frame, data, now);
                self.flush_side_channels();
            }
            Message::LockstepInputs { need, inputs } => {
                self.lockstep.inputs(client, need, inputs, now);
                self.flush_side_channels();
            }
            Message::LockstepHash { frame, hash } => {
                self.lockstep.hash(client, frame, hash);
                self.flush_side_channels();
            }
            Message::LockstepSnapshotUp(chunk) => {
                self.lockstep.snapshot_chunk(client, chunk, now);
                self.flush_side_channels();
            }
            // Only the relay sends the others.
            _ => self.stats.malformed += 1,
        }
    }

    fn register(&mut self, client: u32, entity: u64, kind: EntityKind, now: f64) {
        let Some(c) = self.clients.get(&client) else {
            return;
        };
        let new = self.rights.holder(entity).is_none();
        if kind == EntityKind::Controlled
            && new
            && c.controlled.len() >= self.config.max_entities_per_client
        {
            self.stats.rejected_limit += 1;
            return;
        }
        match self.rights.register(client, entity, kind, now) {
            Ok(_) => {
                if kind == EntityKind::Controlled {
                    if let Some(c) = self.clients.get_mut(&client) {
                        c.controlled.insert(entity);
                        c.view_stale(); // a new focus
                    }
                }
                if !self.index.contains(entity) {
                    self.index.place(entity, None);
                }
            }
            Err(r) => self.refuse(client, entity, r.code()),
        }
    }

    fn bind_session(&mut self, client: u32, session: u64, last_global: u64, now: f64) {
        if let Some(old) = self.sessions.bind(client, session, now) {
            // The same client on a new connection: the old one is stale.
            // Dropping it frees its entities for the registrations that
            // follow on this connection.
            log::info!(target: "netsync::relay", "client {client} is client {old} reconnected; dropping the old connection");
            self.leave(old, now);
            self.displaced.push(old);
        }
        let (missed, gap) = self.globals.since(last_global);
        let missed: Vec<Vec<u8>> = missed.map(<[u8]>::to_vec).collect();
        if gap {
            self.stats.global_history_gaps += 1;
            log::warn!(target: "netsync::relay", "client {client}: missed global commands older than the relay keeps");
        }
        self.stats.globals_replayed += missed.len() as u64;
        for payload in missed {
            self.send(client, true, payload);
        }
    }

    fn admit(&mut self, client: u32, seq: u64) -> bool {
        match self.sessions.admit_command(client, seq) {
            Admit::Apply => {
                self.stats.commands += 1;
                true
            }
            Admit::Duplicate => {
                self.stats.commands_duplicate += 1;
                false
            }
            Admit::Refused => {
                self.stats.commands_refused += 1;
                false
            }
        }
    }

    /// Numbers a global command and sends it to everyone (its sender too,
    /// so every client sees one order) and to the embedded server.
    fn global_command(&mut self, sender: u32, data: Vec<u8>, now: f64) {
        let p = self.config.precision;
        let (global_seq, payload) = self.globals.append(|global_seq| {
            Message::GlobalCommand {
                global_seq,
                sender,
                server_time: now,
                data: data.clone(),
            }
            .to_bytes(&p)
            .unwrap_or_default()
        });
        let payload = payload.to_vec();
        // Only to clients that named their session: a connection that has
        // not yet is caught up from the log when it does, in order. Sent
        // before, a newer command overtook the catch-up and the client
        // dropped the older ones as already seen (found by benches/soak).
        let ids: Vec<u32> = self
            .clients
            .keys()
            .copied()
            .filter(|&c| self.sessions.is_bound(c))
            .collect();
        for client in ids {
            self.send(client, true, payload.clone());
        }
        let message = AppMessage {
            kind: AppMessageKind::GlobalCommand,
            sender,
            entity: 0,
            component: 0,
            sequence: global_seq,
            server_time: now,
            data,
        };
        self.log(|| Entry::Message(message.clone()));
        self.queue_for_server(message);
    }

    /// Routes a component command to the entity's holder, or to the
    /// embedded server when nobody holds it (server-owned, or at rest).
    fn component_command(
        &mut self,
        sender: u32,
        entity: u64,
        component: u32,
        data: Vec<u8>,
        now: f64,
    ) {
        let Some((holder, _)) = self.rights.holder(entity) else {
            self.stats.commands_unroutable += 1;
            log::debug!(target: "netsync::relay", "component command for unknown entity {entity} dropped");
            return;
        };
        let message = AppMessage {
            kind: AppMessageKind::ComponentCommand,
            sender,
            entity,
            component,
            sequence: 0,
            server_time: now,
            data,
        };
        self.log(|| Entry::Message(message.clone()));
        match holder {
            Some(holder) if self.clients.contains_key(&holder) => {
                let payload = self.encode(&Message::ComponentCommand {
                    sender,
                    entity,
                    component,
                    server_time: now,
                    data: message.data,
                });
                self.send(holder, true, payload);
            }
            _ => self.queue_for_server(message),
        }
    }

    /// Keeps a component's latest state (set by client `sender`, 0: the
    /// embedded server) and sends it to everyone who has the entity in
    /// view.
    fn store_component(
        &mut self,
        sender: u32,
        entity: u64,
        component: u32,
        data: Vec<u8>,
    ) -> Result<(), ServerCallError> {
        if data.len() > MAX_PAYLOAD {
            return Err(ServerCallError::PayloadTooLarge);
        }
        let full = self.components.get(&entity).is_some_and(|slots| {
            !slots.contains_key(&component) && slots.len() >= self.config.max_components_per_entity
        });
        if full {
            self.stats.rejected_limit += 1;
            return Err(ServerCallError::Limit);
        }
        let version = self.next_version;
        self.next_version += 1;
        self.stats.component_states += 1;
        let now = self.now;
        self.log(|| {
            Entry::Message(AppMessage {
                kind: AppMessageKind::ComponentState,
                sender,
                entity,
                component,
                sequence: version,
                server_time: now,
                data: data.clone(),
            })
        });
        let payload = self.encode(&Message::ComponentState {
            entity,
            component,
            version,
            data: data.clone(),
        });
        self.components
            .entry(entity)
            .or_default()
            .insert(component, Slot { version, data });
        if !self.index.contains(entity) {
            self.index.place(entity, None);
        }
        let viewers: Vec<u32> = self
            .clients
            .iter()
            .filter(|(_, c)| c.visible.binary_search(&entity).is_ok())
            .map(|(&id, _)| id)
            .collect();
        for client in viewers {
            self.send(client, true, payload.clone());
        }
        Ok(())
    }

    fn apply(&mut self, client: u32, server_time: f64, update: EntityUpdate, now: f64) {
        let entity = update.entity;
        match self.rights.kind(entity) {
            None => {
                // State for an entity nobody registered: dropped. Clients
                // register before they send (the registration is ordered
                // and reliable, state may overtake it and is sent again).
                // Taking such state as its sender's controlled entity let
                // a claimant's optimistic state, sent before the object's
                // registration arrived, make a shared object one client's
                // for good (found by benches/soak).
                self.stats.rejected_not_owner += 1;
                return;
            }
            Some(kind) => {
                let (holder, epoch) = self.rights.holder(entity).unwrap_or((None, 0));
                // Controlled entities never change hands, so their epoch
                // cannot be stale; neutral ones need the current epoch.
                let allowed = holder == Some(client)
                    && (kind == EntityKind::Controlled || update.epoch == epoch);
                if !allowed {
                    self.stats.rejected_not_owner += 1;
                    return;
                }
                let moving = update.velocity.is_some_and(|v| v.length() > 0.01)
                    || update.angular_velocity.is_some_and(|w| w.length() > 0.01);
                if kind == EntityKind::Neutral && moving {
                    self.rights.moving(client, entity, now);
                }
            }
        }
        self.store_state(update, server_time);
    }

    /// Keeps the newest state of an entity (strictly newer: a duplicated
    /// or reordered datagram is applied once) and places it on the grid.
    fn store_state(&mut self, update: EntityUpdate, server_time: f64) {
        let entity = update.entity;
        let version = self.next_version;
        match self.entities.get_mut(&entity) {
            // A repeat (the owner sends sparse updates more than once)
            // has the same send counter and epoch; its stamp, rebuilt
            // from a quantized age, may differ by a rounding step. (A new
            // holder counts from its own start, so its counter may equal
            // the last holder's.)
            Some(e)
                if server_time <= e.server_time
                    || (update.sequence == e.update.sequence
                        && update.epoch == e.update.epoch
                        && server_time - e.server_time < REPEAT_WINDOW) =>
            {
                return
            }
            Some(e) => {
                e.update = update;
                e.server_time = server_time;
                e.version = version;
            }
            None => {
                self.entities.insert(
                    entity,
                    Entity {
                        update,
                        server_time,
                        version,
                    },
                );
            }
        }
        self.next_version += 1;
        self.index.place(entity, Some(update.pose.position));
        if let Some(r) = &mut self.recorder {
            // `server_time` already is the state's stamp (message time
            // less age): keep it exactly rather than rebuild it.
            let mut sample = update.to_sample(server_time);
            sample.server_time = server_time;
            r.log(
                self.now,
                &Entry::Frame {
                    at: self.now,
                    vouched: server_time,
                    samples: vec![(entity, sample)],
                },
            );
        }
    }

    /// Records every state this relay accepts, every send-right change,
    /// removal and global command to `path` (format: docs/replay.md)
    /// until [`Relay::stop_recording`] or the relay is dropped.
    pub fn record(&mut self, path: &std::path::Path) -> std::io::Result<()> {
        let mut recorder = Recorder::create(path, RecordingKind::Relay)?;
        // Entries are stamped with the relay's clock: the server clock.
        recorder.log(self.now, &Entry::ClockOffset(0.0));
        self.recorder = Some(recorder);
        Ok(())
    }

    /// Ends the recording, if any, and waits until the file is complete.
    pub fn stop_recording(&mut self) -> Result<(), String> {
        self.recorder.take().map_or(Ok(()), Recorder::finish)
    }

    fn log(&mut self, entry: impl FnOnce() -> Entry) {
        if let Some(r) = &mut self.recorder {
            r.log(self.now, &entry());
        }
    }

    /// The embedded server moves a server-owned entity (declared on first use).
    pub fn server_set_state(
        &mut self,
        mut update: EntityUpdate,
        now: f64,
    ) -> Result<(), ServerCallError> {
        self.now = now;
        self.rights
            .register_server(update.entity)
            .map_err(|_| ServerCallError::NotServerOwned)?;
        // Every call is a new state: count it as an owner's send would be
        // counted, so it is not taken for a repeat of the last one.
        update.sequence = self
            .entities
            .get(&update.entity)
            .map_or(0, |e| e.update.sequence.wrapping_add(1));
        self.store_state(update, now);
        Ok(())
    }

    /// The embedded server sets a component's state on a server-owned entity.
    pub fn server_component_state(
        &mut self,
        entity: u64,
        component: u32,
        data: Vec<u8>,
    ) -> Result<(), ServerCallError> {
        self.rights
            .register_server(entity)
            .map_err(|_| ServerCallError::NotServerOwned)?;
        self.store_component(0, entity, component, data)
    }

    /// The embedded server removes a server-owned entity.
    pub fn server_remove(&mut self, entity: u64) -> Result<(), ServerCallError> {
        self.rights.unregister_server(entity).map_err(|r| match r {
            Refusal::UnknownEntity => ServerCallError::UnknownEntity,
            _ => ServerCallError::NotServerOwned,
        })?;
        self.forget(entity, RemovalReason::Unregistered);
        Ok(())
    }

    /// The embedded server sends a global command (sender 0).
    pub fn server_global_command(
        &mut self,
        data: Vec<u8>,
        now: f64,
    ) -> Result<(), ServerCallError> {
        if data.len() > MAX_PAYLOAD {
            return Err(ServerCallError::PayloadTooLarge);
        }
        self.now = now;
        self.global_command(0, data, now);
        Ok(())
    }

    /// The embedded server spawns scripted elements (S5): every client
    /// gets them now, and clients that join later while they live.
    pub fn server_spawn_scripted(&mut self, spawns: &[Spawn]) -> Result<(), ServerCallError> {
        let clients: Vec<u32> = self.clients.keys().copied().collect();
        let p = self.config.precision;
        let result = self.scripted.spawn(spawns, &clients, &p);
        self.flush_side_channels();
        result.map_err(|e| match e {
            RegistryError::Limit => ServerCallError::Limit,
            RegistryError::Invalid => ServerCallError::InvalidSpawn,
        })
    }

    /// The embedded server ends a scripted element before its life is over.
    pub fn server_despawn_scripted(&mut self, element: u64) -> Result<(), ServerCallError> {
        let clients: Vec<u32> = self.clients.keys().copied().collect();
        let p = self.config.precision;
        let known = self.scripted.despawn(element, &clients, &p);
        self.flush_side_channels();
        known.then_some(()).ok_or(ServerCallError::UnknownElement)
    }

    /// The embedded server sends a command to the holder of `entity`.
    pub fn server_component_command(
        &mut self,
        entity: u64,
        component: u32,
        data: Vec<u8>,
        now: f64,
    ) -> Result<(), ServerCallError> {
        if data.len() > MAX_PAYLOAD {
            return Err(ServerCallError::PayloadTooLarge);
        }
        match self.rights.holder(entity) {
            None => Err(ServerCallError::UnknownEntity),
            Some((Some(holder), _)) if self.clients.contains_key(&holder) => {
                self.component_command(0, entity, component, data, now);
                Ok(())
            }
            Some(_) => Err(ServerCallError::NoHolder),
        }
    }

    /// A send tick at relay time `now`: updates every client's view, then
    /// packs for every client what it has not seen, oldest-waiting first,
    /// within the MTU and the budget.
    /// The relay's work due at `now` when driven in small steps (every
    /// millisecond or so): the once-per-interval work when its time has
    /// come, and the snapshots of the clients whose phase is due. Each
    /// client gets a snapshot every send interval, but the clients are
    /// spread over the interval, so no one step sends to all of them
    /// (a relay that served 1 000 clients at once took 10 ms to send the
    /// tick, and the last client waited that long). Returns when the
    /// earliest snapshot served was due, if any was.
    pub fn step(&mut self, now: f64) -> Option<f64> {
        self.now = now;
        let interval = 1.0 / self.config.send_rate.max(1.0);
        // Stall timeouts are due at any moment, not on send ticks.
        self.lockstep.advance(now);
        self.flush_side_channels();
        if now >= self.next_global {
            self.global_tick(now);
            self.next_global = if now - self.next_global > interval {
                now + interval
            } else {
                self.next_global + interval
            };
        }
        let due: Vec<(u32, f64)> = self
            .clients
            .iter()
            .filter(|(_, c)| c.next_tick <= now)
            .map(|(&id, c)| (id, c.next_tick))
            .collect();
        if due.is_empty() {
            return None;
        }
        self.forget_encodings();
        let mut earliest = f64::INFINITY;
        for (client, at) in due {
            earliest = earliest.min(at);
            if self.view_due(client, now) {
                self.update_view(client, now);
            }
            self.pack_for(client, now);
            if let Some(c) = self.clients.get_mut(&client) {
                c.next_tick = next_in_phase(at, now, interval);
            }
        }
        Some(earliest)
    }

    /// A new step encodes entities afresh (their age has moved on).
    fn forget_encodings(&mut self) {
        self.encoded.clear();
        self.encoded_bytes.clear();
    }

    /// Every client's snapshot at once, and the once-per-interval work:
    /// for tests and simulations that step the relay tick by tick.
    pub fn tick(&mut self, now: f64) {
        self.now = now;
        self.lockstep.advance(now);
        self.global_tick(now);
        let ids: Vec<u32> = self.clients.keys().copied().collect();
        self.forget_encodings();
        for client in ids {
            self.update_view(client, now);
            self.pack_for(client, now);
        }
    }

    /// Rest timeouts, right-change repeats and command acks: once per
    /// send interval.
    fn global_tick(&mut self, now: f64) {
        self.rights.tick(now);
        self.broadcast_rights(now);
        let mut due = Vec::new();
        for r in self.repeats.iter_mut() {
            r.ticks += 1;
            if RIGHT_REPEAT_TICKS.contains(&r.ticks) {
                due.push((r.entity, r.payload.clone(), r.involved));
            }
        }
        for (entity, payload, involved) in due {
            for client in self.concerned(entity, involved) {
                self.send(client, false, payload.clone());
            }
        }
        let last = RIGHT_REPEAT_TICKS[RIGHT_REPEAT_TICKS.len() - 1];
        self.repeats.retain(|r| r.ticks < last);
        for (client, seq) in self.sessions.acks_due() {
            let payload = self.encode(&Message::CommandAck { seq });
            self.send(client, true, payload);
        }
        // Catch-up of joiners, a few messages each per tick.
        self.lockstep.pump();
        self.scripted.expire(now);
        let p = self.config.precision;
        self.scripted.pump(&p);
        self.flush_side_channels();
    }

    /// Whether `client`'s view must be recomputed before its snapshot.
    fn view_due(&self, client: u32, now: f64) -> bool {
        self.clients.get(&client).is_some_and(|c| {
            c.view_changes != self.index.changes() || now - c.view_at >= VIEW_REFRESH
        })
    }

    /// Has `client`'s view recomputed at its next tick.
    fn view_changed(&mut self, client: u32) {
        if let Some(c) = self.clients.get_mut(&client) {
            c.view_stale();
        }
    }

    /// Recomputes what `client` sees: entities leaving its interest are
    /// removed on its side, entities entering get their component states
    /// now and their transform in this tick's snapshot.
    fn update_view(&mut self, client: u32, now: f64) {
        let Some(c) = self.clients.get_mut(&client) else {
            return;
        };
        c.view_at = now;
        c.view_changes = self.index.changes();
        self.focus.clear();
        self.focus
            .extend(c.controlled.iter().filter_map(|&e| self.index.cell(e)));
        let mut view = std::mem::take(&mut self.view);
        if now >= c.awaiting_interest_until {
            self.index
                .visible(&c.interest, &self.focus, &c.visible, &mut view);
        } else {
            view.clear(); // its interest is on the way
        }
        // Selective sync: never what the client holds itself.
        let rights = &self.rights;
        view.retain(|&e| rights.holder(e).is_none_or(|(h, _)| h != Some(client)));
        // Both sorted: one merge finds who leaves and who enters.
        let (mut leaving, mut entering) = (Vec::new(), Vec::new());
        let (mut i, mut j) = (0, 0);
        while i < c.visible.len() || j < view.len() {
            match (c.visible.get(i), view.get(j)) {
                (Some(a), Some(b)) if a == b => (i, j) = (i + 1, j + 1),
                (Some(&a), Some(&b)) if a < b => {
                    leaving.push(a);
                    i += 1;
                }
                (Some(&a), None) => {
                    leaving.push(a);
                    i += 1;
                }
                (_, Some(&b)) => {
                    entering.push(b);
                    j += 1;
                }
                (None, None) => break,
            }
        }
        std::mem::swap(&mut c.visible, &mut view);
        self.view = view;
        for e in leaving {
            let told = c.sent.remove(&e).is_some() || self.components.contains_key(&e);
            // An entity the client now holds itself goes silently.
            let held = self
                .rights
                .holder(e)
                .is_some_and(|(h, _)| h == Some(client));
            if told && !held {
                self.stats.interest_removals += 1;
                let payload = Message::EntityRemoved {
                    entity: e,
                    reason: RemovalReason::OutOfInterest,
                }
                .to_bytes(&self.config.precision)
                .unwrap_or_default();
                self.outbox.push(Outgoing {
                    client,
                    reliable: true,
                    payload,
                });
            }
        }
        for e in entering {
            // Who holds it, before its state (claims need the epoch).
            if let Some((holder, epoch)) = self.rights.holder(e) {
                let payload = Message::RightChanged {
                    entity: e,
                    holder: holder.unwrap_or(0),
                    epoch,
                }
                .to_bytes(&self.config.precision)
                .unwrap_or_default();
                self.outbox.push(Outgoing {
                    client,
                    reliable: true,
                    payload,
                });
            }
            let Some(slots) = self.components.get(&e) else {
                continue;
            };
            for (&component, slot) in slots {
                let payload = Message::ComponentState {
                    entity: e,
                    component,
                    version: slot.version,
                    data: slot.data.clone(),
                }
                .to_bytes(&self.config.precision)
                .unwrap_or_default();
                self.outbox.push(Outgoing {
                    client,
                    reliable: true,
                    payload,
                });
            }
        }
    }

    fn pack_for(&mut self, client: u32, now: f64) {
        let Some(c) = self.clients.get(&client) else {
            return;
        };
        // Candidates: entities in view with a version this client lacks,
        // ordered by how long they have waited (never sent: forever).
        self.scratch.clear();
        for &id in &c.visible {
            let Some(e) = self.entities.get(&id) else {
                continue;
            };
            match c.sent.get(&id) {
                Some(&(v, _)) if v >= e.version => {}
                Some(&(_, at)) => self.scratch.push((now - at, id)),
                None => self.scratch.push((f64::INFINITY, id)),
            }
        }
        self.scratch
            .sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut budget = self.config.budget_per_tick;
        // Nothing new in view: an empty snapshot vouches that nothing
        // changed, up to the time owners' states would have arrived by.
        // Without it the gaps of send-on-change read as network delay,
        // and the client's render delay grows to cover them.
        let idle = self.scratch.is_empty() && !c.visible.is_empty();
        let time = if idle {
            now - self.owner_lateness.estimate()
        } else {
            now
        };
        let mut packer = UpdatePacker::snapshot(time, c.snapshot_seq, self.config.mtu);
        let mut sent_now = std::mem::take(&mut self.sent_now);
        sent_now.clear();
        let p = self.config.precision;
        for &(_, id) in &self.scratch {
            let e = &self.entities[&id];
            // One encoding per entity per step, shared by every client.
            let range = match self.encoded.get(&id) {
                Some(range) => range.clone(),
                None => {
                    let start = self.encoded_bytes.len();
                    let mut update = e.update;
                    update.age = (now - e.server_time).max(0.0);
                    let mut w = Writer::with(std::mem::take(&mut self.encoded_bytes));
                    if update.encode(&mut w, &p).is_err() {
                        w.bytes.truncate(start); // never sent
                    }
                    self.encoded_bytes = w.bytes;
                    let range = start..self.encoded_bytes.len();
                    self.encoded.insert(id, range.clone());
                    range
                }
            };
            let encoded = &self.encoded_bytes[range];
            if encoded.is_empty() {
                continue;
            }
            if encoded.len() > budget {
                break;
            }
            budget -= encoded.len();
            packer.push(id, encoded);
            sent_now.push((id, e.version));
        }
        let next_seq = packer.next_seq();
        let packets = packer.finish(idle);
        if let Some(c) = self.clients.get_mut(&client) {
            for &(id, version) in &sent_now {
                c.sent.insert(id, (version, now));
            }
            c.snapshot_seq = packets.last().map_or(next_seq, |p| p.seq.wrapping_add(1));
            // What each packet carried, for a client that reports it lost.
            for p in &packets {
                // The oldest record's allocation carries the newest.
                let mut carried = match c.recent.len() {
                    RECENT_SNAPSHOTS => c.recent.pop_front().map(|r| r.1).unwrap_or_default(),
                    _ => Vec::with_capacity(p.tags.len()),
                };
                carried.clear();
                carried.extend(
                    p.tags
                        .iter()
                        .filter_map(|id| sent_now.iter().find(|s| s.0 == *id).copied()),
                );
                c.recent.push_back((p.seq, carried));
            }
        }
        self.sent_now = sent_now;
        for p in packets {
            self.stats.snapshot_bytes += p.bytes.len() as u64;
            self.stats.snapshot_packets += 1;
            self.send(client, false, p.bytes);
        }
        self.announce_repairs(client);
    }

    /// Tells `client` which of its loss reports are repaired: every entity
    /// the lost packets carried has gone again (or left its view), in
    /// packets up to the last one sent.
    fn announce_repairs(&mut self, client: u32) {
        let Some(c) = self.clients.get_mut(&client) else {
            return;
        };
        if c.repairs.is_empty() {
            return;
        }
        let through = c.snapshot_seq.wrapping_sub(1);
        let mut done = Vec::new();
        c.repairs.retain(|(first, entities)| {
            let repaired = entities
                .iter()
                .all(|e| c.sent.contains_key(e) || c.visible.binary_search(e).is_err());
            if repaired {
                done.push(*first);
            }
            !repaired
        });
        for first in done {
            let payload = self.encode(&Message::SnapshotRepaired { first, through });
            self.send(client, false, payload);
        }
    }

    /// `client` never got snapshot packets `first .. first + count`: what
    /// they carried goes again at its next tick, unless something newer
    /// went since.
    fn resend_lost(&mut self, client: u32, first: u16, count: u8) {
        let Some(c) = self.clients.get_mut(&client) else {
            return;
        };
        let mut again = Vec::new();
        let mut known = true;
        for k in 0..count.min(RECENT_SNAPSHOTS as u8) {
            let seq = first.wrapping_add(k as u16);
            let Some((_, carried)) = c.recent.iter().find(|r| r.0 == seq) else {
                known = false;
                continue;
            };
            for &(entity, version) in carried {
                if c.sent.get(&entity).is_some_and(|s| s.0 == version) {
                    c.sent.remove(&entity);
                    again.push(entity);
                    self.stats.snapshot_resends += 1;
                }
            }
        }
        // Only a loss whose every packet is known can be declared repaired.
        if known && count as usize <= RECENT_SNAPSHOTS {
            if c.repairs.len() == MAX_REPAIRS {
                c.repairs.remove(0);
            }
            c.repairs.push((first, again));
        }
    }
}

/// A high percentile of recent lateness samples (s): how long after its
/// stamp an owner's state reaches the relay (path delay and clock error).
#[derive(Debug, Default)]
struct Lateness {
    recent: VecDeque<f64>,
    /// 95th percentile, refreshed every few samples.
    p95: f64,
    since_refresh: u32,
}

impl Lateness {
    const KEEP: usize = 256;

    fn observe(&mut self, lateness: f64) {
        if !lateness.is_finite() {
            return;
        }
        if self.recent.len() == Self::KEEP {
            self.recent.pop_front();
        }
        self.recent.push_back(lateness.max(0.0));
        self.since_refresh += 1;
        if self.since_refresh >= 32 || self.recent.len() < 32 {
            self.since_refresh = 0;
            let mut sorted: Vec<f64> = self.recent.iter().copied().collect();
            sorted.sort_by(f64::total_cmp);
            self.p95 = sorted[(sorted.len() - 1) * 95 / 100];
        }
    }

    fn estimate(&self) -> f64 {
        self.p95
    }
}

fn right_changed(change: super::send_rights::RightChange) -> Message {
    Message::RightChanged {
        entity: change.entity,
        holder: change.holder.unwrap_or(0),
        epoch: change.epoch,
    }
}

/// Tests declare entities and interests as a client does, through the
/// wire.
#[cfg(test)]
impl Relay {
    /// Admits `client`, which declares the default (global) interest at
    /// once, as the client library does after the welcome.
    fn join_seeing_all(&mut self, client: u32, now: f64) {
        self.join(client, now);
        let mut w = Writer::new();
        Message::Interest(InterestSpec::default())
            .encode(&mut w, &self.config.precision)
            .unwrap();
        self.receive(client, &w.bytes, now);
    }

    fn register_controlled(&mut self, client: u32, ids: &[u64], now: f64) {
        for &entity in ids {
            let mut w = Writer::new();
            Message::Register {
                entity,
                kind: entity_kind::CONTROLLED,
            }
            .encode(&mut w, &self.config.precision)
            .unwrap();
            self.receive(client, &w.bytes, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::pose::Pose;
    use glam::{Quat, Vec3};

    /// A distinct send counter per send time, as an owner's would be
    /// (the relay drops a repeat of the same counter).
    pub(super) fn send_counter(t: f64) -> u8 {
        ((t * 100.0).round() as u64 % 256) as u8
    }

    fn state(entities: &[u64], x: f32, t: f64) -> Vec<u8> {
        let updates = entities
            .iter()
            .map(|&entity| EntityUpdate {
                entity,
                pose: Pose::new(Vec3::new(x, 0.0, entity as f32), Quat::IDENTITY),
                velocity: Some(Vec3::X),
                angular_velocity: None,
                teleport: false,
                age: 0.0,
                sequence: send_counter(t),
                epoch: 0,
            })
            .collect();
        let mut w = Writer::new();
        Message::OwnedState {
            server_time: t,
            updates,
        }
        .encode(&mut w, &Precision::default())
        .unwrap();
        w.bytes
    }

    /// Decoded messages per client from the outbox.
    fn take(relay: &mut Relay) -> Vec<(u32, bool, Message)> {
        let p = relay.config().precision;
        relay
            .drain()
            .map(|o| {
                (
                    o.client,
                    o.reliable,
                    Message::decode(&o.payload, &p).unwrap(),
                )
            })
            .collect()
    }

    fn snapshot_entities(out: &[(u32, bool, Message)], client: u32) -> Vec<u64> {
        let mut ids: Vec<u64> = out
            .iter()
            .filter(|(c, _, _)| *c == client)
            .flat_map(|(_, _, m)| match m {
                Message::Snapshot { updates, .. } => updates.iter().map(|u| u.entity).collect(),
                _ => vec![],
            })
            .collect();
        ids.sort();
        ids
    }

    #[test]
    fn welcome_then_others_state_but_never_your_own() {
        let mut relay = Relay::new(RelayConfig::default());
        relay.join_seeing_all(1, 10.0);
        relay.join_seeing_all(2, 10.0);
        let out = take(&mut relay);
        assert!(matches!(
            out[0],
            (1, true, Message::Welcome { client_id: 1, .. })
        ));
        relay.register_controlled(1, &[100, 101], 10.0);
        relay.register_controlled(2, &[200], 10.0);
        relay.receive(1, &state(&[100, 101], 1.0, 10.0), 10.01);
        relay.receive(2, &state(&[200], 2.0, 10.0), 10.01);
        relay.tick(10.02);
        let out = take(&mut relay);
        assert_eq!(snapshot_entities(&out, 1), vec![200]);
        assert_eq!(snapshot_entities(&out, 2), vec![100, 101]);
        // Nothing new: no state sent (right-change repeats may go out).
        relay.tick(10.05);
        let out = take(&mut relay);
        assert!(snapshot_entities(&out, 1).is_empty() && snapshot_entities(&out, 2).is_empty());
        // The owner's stamp travels as an age.
        relay.receive(1, &state(&[100], 1.5, 10.06), 10.07);
        relay.tick(10.10);
        let out = take(&mut relay);
        let snapshot = out
            .iter()
            .find(|(c, _, m)| *c == 2 && matches!(m, Message::Snapshot { .. }))
            .unwrap();
        let Message::Snapshot {
            server_time,
            updates,
            ..
        } = &snapshot.2
        else {
            panic!()
        };
        let sample = updates[0].to_sample(*server_time);
        assert!((sample.server_time - 10.06).abs() < 2e-4);
    }

    #[test]
    fn only_the_owner_speaks_for_an_entity() {
        let mut relay = Relay::new(RelayConfig::default());
        relay.join_seeing_all(1, 0.0);
        relay.join_seeing_all(2, 0.0);
        relay.register_controlled(1, &[7], 0.0);
        relay.receive(1, &state(&[7], 1.0, 0.0), 0.0);
        relay.receive(2, &state(&[7], 99.0, 0.1), 0.1);
        assert_eq!(relay.stats().rejected_not_owner, 1);
        // State for an entity nobody registered is dropped, not adopted.
        relay.receive(2, &state(&[8], 5.0, 0.1), 0.1);
        assert_eq!(relay.stats().rejected_not_owner, 2);
        assert_eq!(relay.holder(8), None);
        relay.join_seeing_all(3, 0.2);
        take(&mut relay);
        relay.tick(0.2);
        let out = take(&mut relay);
        let x = out
            .iter()
            .find_map(|(c, _, m)| match (c, m) {
                (3, Message::Snapshot { updates, .. }) => Some(updates[0].pose.position.x),
                _ => None,
            })
            .unwrap();
        assert!(
            (x - 1.0).abs() < 1e-3,
            "the intruder's state got through: {x}"
        );
    }

    #[test]
    fn late_joiner_gets_the_whole_scene_and_leavers_are_announced() {
        let mut relay = Relay::new(RelayConfig::default());
        relay.join_seeing_all(1, 0.0);
        let ids: Vec<u64> = (0..50).collect();
        relay.register_controlled(1, &ids, 0.0);
        relay.receive(1, &state(&ids, 1.0, 0.0), 0.0);
        relay.tick(0.03);
        relay.join_seeing_all(2, 1.0);
        take(&mut relay);
        relay.tick(1.03);
        let out = take(&mut relay);
        assert_eq!(snapshot_entities(&out, 2), (0..50).collect::<Vec<_>>());
        relay.leave(1, 2.0);
        let out = take(&mut relay);
        let removed: Vec<u64> = out
            .iter()
            .filter_map(|(c, reliable, m)| match m {
                Message::EntityRemoved { entity, reason } if *c == 2 && *reliable => {
                    assert_eq!(*reason, RemovalReason::OwnerLeft);
                    Some(*entity)
                }
                _ => None,
            })
            .collect();
        assert_eq!(removed.len(), 50);
        assert_eq!(relay.stats().entities, 0);
    }

    #[test]
    fn a_tight_budget_delivers_everything_over_ticks_within_the_mtu() {
        let config = RelayConfig {
            budget_per_tick: 600,
            mtu: 300,
            ..Default::default()
        };
        let mut relay = Relay::new(config);
        relay.join_seeing_all(1, 0.0);
        relay.join_seeing_all(2, 0.0);
        let ids: Vec<u64> = (0..200).collect();
        relay.register_controlled(1, &ids, 0.0);
        relay.receive(1, &state(&ids, 1.0, 0.0), 0.0);
        take(&mut relay);
        let mut seen = std::collections::BTreeSet::new();
        for tick in 0..40 {
            relay.tick(tick as f64 * 0.033);
            for o in relay.drain() {
                assert!(o.payload.len() <= 300, "packet of {}", o.payload.len());
                if let Ok(Message::Snapshot { updates, .. }) =
                    Message::decode(&o.payload, &config.precision)
                {
                    seen.extend(updates.iter().map(|u| u.entity));
                }
            }
        }
        assert_eq!(seen.len(), 200, "entities starved");
    }

    #[test]
    fn pings_malformed_input_and_bad_stamps() {
        let mut relay = Relay::new(RelayConfig::default());
        relay.join_seeing_all(1, 0.0);
        take(&mut relay);
        let mut w = Writer::new();
        Message::Ping {
            sequence: 4,
            client_time: 1.25,
        }
        .encode(&mut w, &Precision::default())
        .unwrap();
        relay.receive(1, &w.bytes, 5.0);
        let out = take(&mut relay);
        assert_eq!(
            out[0].2,
            Message::Pong {
                sequence: 4,
                client_time: 1.25,
                server_time: 5.0
            }
        );
        relay.receive(1, &[0xFF, 1, 2], 5.0);
        relay.receive(1, &state(&[1], 0.0, 100.0), 5.0);
        relay.receive(9, &state(&[1], 0.0, 5.0), 5.0); // not a client: ignored
        let s = relay.stats();
        assert_eq!((s.malformed, s.rejected_stamp, s.entities), (1, 1, 0));
    }
}

#[cfg(test)]
mod rights_tests {
    use super::*;

    fn encode(m: Message) -> Vec<u8> {
        let mut w = Writer::new();
        m.encode(&mut w, &Precision::default()).unwrap();
        w.bytes
    }

    #[test]
    fn right_changes_repeat_unreliably_to_everyone() {
        let mut relay = Relay::new(RelayConfig::default());
        for c in 1..=3 {
            relay.join_seeing_all(c, 0.0);
        }
        relay.receive(
            1,
            &encode(Message::Register {
                entity: 10,
                kind: entity_kind::CONTROLLED,
            }),
            0.1,
        );
        relay.receive(
            3,
            &encode(Message::Register {
                entity: 100,
                kind: entity_kind::NEUTRAL,
            }),
            0.1,
        );
        relay.drain().for_each(drop);
        for k in 0..6 {
            relay.tick(0.2 + k as f64 * 0.033);
        }
        relay.drain().for_each(drop);
        relay.receive(
            1,
            &encode(Message::Claim {
                mine: 10,
                other: 100,
                epoch: 1,
                seq: 1,
            }),
            1.0,
        );
        let p = Precision::default();
        let mut unreliable_repeats = HashMap::new();
        for k in 0..20 {
            relay.tick(1.0 + k as f64 * 0.033);
            for o in relay.drain() {
                if let Ok(Message::RightChanged {
                    entity: 100,
                    holder: 1,
                    ..
                }) = Message::decode(&o.payload, &p)
                {
                    if !o.reliable {
                        *unreliable_repeats.entry(o.client).or_insert(0) += 1;
                    }
                }
            }
        }
        assert_eq!(unreliable_repeats.len(), 3, "{unreliable_repeats:?}");
        assert!(unreliable_repeats
            .values()
            .all(|&n| n == RIGHT_REPEATS as i32));
    }
}

#[cfg(test)]
mod s2_tests {
    //! Commands, components and interest (S2) on the sans-IO relay.
    use super::*;
    use crate::core::pose::Pose;
    use glam::{Quat, Vec3};
    use tests::send_counter;

    fn bytes(m: Message) -> Vec<u8> {
        m.to_bytes(&Precision::default()).unwrap()
    }

    fn at(entity: u64, x: f32, z: f32, t: f64) -> Vec<u8> {
        bytes(Message::OwnedState {
            server_time: t,
            updates: vec![EntityUpdate {
                entity,
                pose: Pose::new(Vec3::new(x, 0.0, z), Quat::IDENTITY),
                velocity: None,
                angular_velocity: None,
                teleport: false,
                age: 0.0,
                sequence: send_counter(t),
                epoch: 0,
            }],
        })
    }

    fn decoded(relay: &mut Relay) -> Vec<(u32, Message)> {
        let p = relay.config().precision;
        relay
            .drain()
            .map(|o| (o.client, Message::decode(&o.payload, &p).unwrap()))
            .collect()
    }

    fn session(relay: &mut Relay, client: u32, session: u64) {
        relay.receive(
            client,
            &bytes(Message::Session {
                session,
                last_global: 0,
            }),
            0.0,
        );
    }

    #[test]
    fn global_commands_are_numbered_once_and_reach_everyone() {
        let mut relay = Relay::new(RelayConfig::default());
        for c in 1..=3 {
            relay.join_seeing_all(c, 0.0);
            session(&mut relay, c, 100 + c as u64);
        }
        relay.drain().for_each(drop);
        let cmd = |seq, data: &[u8]| {
            bytes(Message::GlobalCommandUp {
                seq,
                data: data.to_vec(),
            })
        };
        relay.receive(2, &cmd(1, b"a"), 1.0);
        relay.receive(2, &cmd(1, b"a"), 1.0); // duplicate
        relay.receive(3, &cmd(1, b"b"), 1.1);
        relay.receive(2, &cmd(3, b"x"), 1.2); // out of line
        relay.tick(1.3);
        let out = decoded(&mut relay);
        for client in 1..=3 {
            let got: Vec<(u64, u32, Vec<u8>)> = out
                .iter()
                .filter_map(|(c, m)| match m {
                    Message::GlobalCommand {
                        global_seq,
                        sender,
                        data,
                        ..
                    } if *c == client => Some((*global_seq, *sender, data.clone())),
                    _ => None,
                })
                .collect();
            assert_eq!(got, vec![(1, 2, b"a".to_vec()), (2, 3, b"b".to_vec())]);
        }
        let acks: Vec<(u32, u64)> = out
            .iter()
            .filter_map(|(c, m)| match m {
                Message::CommandAck { seq } => Some((*c, *seq)),
                _ => None,
            })
            .collect();
        assert_eq!(acks, vec![(2, 1), (3, 1)]);
        let inbox: Vec<AppMessage> = relay.drain_server_inbox().collect();
        assert_eq!(inbox.len(), 2);
        let s = relay.stats();
        assert_eq!(
            (s.commands, s.commands_duplicate, s.commands_refused),
            (2, 1, 1)
        );
        // Client 2 reconnects as 4 after seeing only command 1: it gets 2.
        relay.leave(2, 2.0);
        relay.join_seeing_all(4, 2.1);
        relay.drain().for_each(drop);
        relay.receive(
            4,
            &bytes(Message::Session {
                session: 102,
                last_global: 1,
            }),
            2.1,
        );
        let replayed: Vec<u64> = decoded(&mut relay)
            .into_iter()
            .filter_map(|(_, m)| match m {
                Message::GlobalCommand { global_seq, .. } => Some(global_seq),
                _ => None,
            })
            .collect();
        assert_eq!(replayed, vec![2]);
        // Its resend of command 1 is a duplicate; 2 is new.
        relay.receive(4, &cmd(1, b"a"), 2.2);
        relay.receive(4, &cmd(2, b"c"), 2.2);
        assert_eq!(relay.stats().commands, 3);
    }

    #[test]
    fn component_commands_go_to_the_holder_or_the_server() {
        let mut relay = Relay::new(RelayConfig::default());
        relay.join_seeing_all(1, 0.0);
        relay.join_seeing_all(2, 0.0);
        session(&mut relay, 1, 11);
        session(&mut relay, 2, 22);
        relay.register_controlled(1, &[10], 0.0);
        relay.receive(1, &at(10, 0.0, 0.0, 0.0), 0.0); // 1 controls 10
        relay
            .server_set_state(
                EntityUpdate::from_sample(
                    500,
                    &crate::core::pose::Sample::at(0.0, Vec3::ONE, Quat::IDENTITY),
                ),
                0.0,
            )
            .unwrap();
        relay.drain().for_each(drop);
        let cmd = |seq, entity| {
            bytes(Message::ComponentCommandUp {
                seq,
                entity,
                component: 7,
                data: b"open".to_vec(),
            })
        };
        relay.receive(2, &cmd(1, 10), 1.0);
        relay.receive(2, &cmd(2, 500), 1.0);
        relay.receive(2, &cmd(3, 999), 1.0);
        let out = decoded(&mut relay);
        assert!(out.iter().any(|(c, m)| *c == 1
            && matches!(
                m,
                Message::ComponentCommand {
                    sender: 2,
                    entity: 10,
                    component: 7,
                    ..
                }
            )));
        assert!(!out
            .iter()
            .any(|(c, m)| *c == 2 && matches!(m, Message::ComponentCommand { .. })));
        let inbox: Vec<AppMessage> = relay.drain_server_inbox().collect();
        assert_eq!(inbox.len(), 1);
        assert_eq!(
            (inbox[0].kind, inbox[0].entity, inbox[0].sender),
            (AppMessageKind::ComponentCommand, 500, 2)
        );
        assert_eq!(relay.stats().commands_unroutable, 1);
        // The server cannot move a client's entity.
        let foreign = EntityUpdate::from_sample(
            10,
            &crate::core::pose::Sample::at(0.0, Vec3::ONE, Quat::IDENTITY),
        );
        assert_eq!(
            relay.server_set_state(foreign, 1.0),
            Err(ServerCallError::NotServerOwned)
        );
    }

    #[test]
    fn component_state_only_from_the_holder_and_late_viewers_get_it() {
        let mut relay = Relay::new(RelayConfig::default());
        relay.join_seeing_all(1, 0.0);
        relay.join_seeing_all(2, 0.0);
        session(&mut relay, 1, 11);
        session(&mut relay, 2, 22);
        relay.register_controlled(1, &[10], 0.0);
        relay.receive(1, &at(10, 0.0, 0.0, 0.0), 0.0);
        relay.tick(0.0);
        relay.drain().for_each(drop);
        let state = |seq, data: &[u8]| {
            bytes(Message::ComponentStateUp {
                seq,
                entity: 10,
                component: 3,
                data: data.to_vec(),
            })
        };
        relay.receive(2, &state(1, b"forged"), 0.1);
        relay.receive(1, &state(1, b"hp=9"), 0.1);
        relay.receive(1, &state(1, b"hp=9"), 0.1); // duplicate
        let out = decoded(&mut relay);
        let states: Vec<(u32, Vec<u8>)> = out
            .iter()
            .filter_map(|(c, m)| match m {
                Message::ComponentState { data, .. } => Some((*c, data.clone())),
                _ => None,
            })
            .collect();
        // To the viewer only, never echoed to the holder, never the forgery.
        assert_eq!(states, vec![(2, b"hp=9".to_vec())]);
        assert_eq!(relay.stats().rejected_not_owner, 1);
        // A late joiner gets the stored state with the entity.
        relay.join_seeing_all(3, 1.0);
        relay.tick(1.0);
        let out = decoded(&mut relay);
        assert!(out.iter().any(|(c, m)| *c == 3
            && matches!(m, Message::ComponentState { entity: 10, data, .. } if data == b"hp=9")));
    }

    /// Client `client` sees only its own cell, or everything.
    fn set_interest(relay: &mut Relay, client: u32, global_view: bool, t: f64) {
        let spec = InterestSpec {
            global_view,
            device_class: 0,
            radius: 0,
            regions: vec![],
        };
        relay.receive(client, &bytes(Message::Interest(spec)), t);
    }

    /// Clients 1 and 2 on a 10 m grid: 1's entity 10 stands in cell
    /// (0, 0) and 1 looks at that cell only; 2's entity 20 is three cells
    /// away, and 2 also registers `more` (not placed yet).
    fn client_1_looks_at_its_cell_only(relay: &mut Relay, more: &[u64]) {
        relay.join_seeing_all(1, 0.0);
        relay.join_seeing_all(2, 0.0);
        relay.register_controlled(1, &[10], 0.0);
        relay.register_controlled(2, &[&[20], more].concat(), 0.0);
        relay.receive(1, &at(10, 5.0, 5.0, 0.0), 0.0);
        set_interest(relay, 1, false, 0.0);
        relay.receive(2, &at(20, 35.0, 5.0, 0.0), 0.0);
    }

    #[test]
    fn entities_enter_and_leave_a_clients_interest() {
        let mut relay = Relay::new(RelayConfig {
            cell_size: 10.0,
            ..Default::default()
        });
        client_1_looks_at_its_cell_only(&mut relay, &[]);
        relay.tick(0.05);
        let out = decoded(&mut relay);
        let snap_for = |out: &[(u32, Message)], client| {
            out.iter()
                .filter(|(c, _)| *c == client)
                .flat_map(|(_, m)| match m {
                    Message::Snapshot { updates, .. } => {
                        updates.iter().map(|u| u.entity).collect::<Vec<_>>()
                    }
                    _ => vec![],
                })
                .collect::<Vec<_>>()
        };
        assert!(snap_for(&out, 1).is_empty());
        assert_eq!(snap_for(&out, 2), vec![10], "2 has a global view");
        // 20 walks into cell (0, 0): client 1 gets it in full.
        relay.receive(2, &at(20, 6.0, 6.0, 0.1), 0.1);
        relay.tick(0.15);
        let out = decoded(&mut relay);
        assert_eq!(snap_for(&out, 1), vec![20]);
        // One cell out: still kept (hysteresis); three cells out: removed.
        relay.receive(2, &at(20, 15.0, 5.0, 0.2), 0.2);
        relay.tick(0.25);
        let out = decoded(&mut relay);
        assert!(!out
            .iter()
            .any(|(_, m)| matches!(m, Message::EntityRemoved { .. })));
        relay.receive(2, &at(20, 35.0, 5.0, 0.3), 0.3);
        relay.tick(0.35);
        let out = decoded(&mut relay);
        assert!(out.iter().any(|(c, m)| *c == 1
            && matches!(
                m,
                Message::EntityRemoved {
                    entity: 20,
                    reason: RemovalReason::OutOfInterest
                }
            )));
        assert_eq!(relay.stats().interest_removals, 1);
    }

    /// Clients served by each 1 ms step over a send interval (35 steps)
    /// from `from`, and how many distinct clients that was.
    fn served_per_step(relay: &mut Relay, from: f64) -> (Vec<usize>, usize) {
        let mut all: Vec<u32> = Vec::new();
        let per_step = (0..35)
            .map(|k| {
                relay.step(from + k as f64 * 0.001);
                let mut clients: Vec<u32> = relay
                    .drain()
                    .filter(|o| o.payload.first() == Some(&crate::wire::message::kind::SNAPSHOT))
                    .map(|o| o.client)
                    .collect();
                clients.sort_unstable();
                clients.dedup();
                all.extend(&clients);
                clients.len()
            })
            .collect();
        all.sort_unstable();
        all.dedup();
        (per_step, all.len())
    }

    #[test]
    fn send_ticks_stay_spread_after_a_stall() {
        let mut relay = Relay::new(RelayConfig::default());
        for client in 1..=100 {
            relay.join_seeing_all(client, 0.0);
        }
        // Every client sees an entity of another's: a snapshot each tick.
        relay.register_controlled(1, &[1], 0.0);
        relay.register_controlled(2, &[2], 0.0);
        relay.drain().for_each(drop);
        let (per_step, served) = served_per_step(&mut relay, 0.0);
        assert_eq!(served, 100, "{per_step:?}");
        // The relay thread stalls for 0.3 s: every client is late at once.
        relay.step(0.334);
        relay.drain().for_each(drop);
        let (per_step, served) = served_per_step(&mut relay, 0.335);
        assert_eq!(served, 100, "{per_step:?}");
        // 100 clients over 35 steps: a handful each, not all in one.
        assert!(per_step.iter().all(|&n| n <= 10), "{per_step:?}");
    }

    /// Steps the relay every millisecond over [from, to) and returns when
    /// each entity first reached each client in a snapshot: (client,
    /// entity, time).
    fn first_sights(relay: &mut Relay, from: f64, to: f64) -> Vec<(u32, u64, f64)> {
        let mut seen: Vec<(u32, u64, f64)> = Vec::new();
        let mut t = from;
        while t < to {
            relay.step(t);
            for (c, m) in decoded(relay) {
                let Message::Snapshot { updates, .. } = m else {
                    continue;
                };
                for u in updates {
                    if !seen.iter().any(|s| s.0 == c && s.1 == u.entity) {
                        seen.push((c, u.entity, t));
                    }
                }
            }
            t += 0.001;
        }
        seen
    }

    /// [`first_sights`] of one client: (entity, time).
    fn first_seen(relay: &mut Relay, client: u32, from: f64, to: f64) -> Vec<(u64, f64)> {
        first_sights(relay, from, to)
            .into_iter()
            .filter(|s| s.0 == client)
            .map(|s| (s.1, s.2))
            .collect()
    }

    #[test]
    fn views_follow_moves_within_the_refresh_and_other_changes_at_once() {
        let mut relay = Relay::new(RelayConfig {
            cell_size: 10.0,
            ..Default::default()
        });
        let tick = 1.0 / relay.config().send_rate + 0.002;
        client_1_looks_at_its_cell_only(&mut relay, &[40]);
        relay.receive(2, &at(40, 500.0, 500.0, 0.0), 0.0);
        assert!(first_seen(&mut relay, 1, 0.0, 0.2).is_empty());
        // 20 walks into client 1's cell: seen within a refresh and a tick.
        relay.receive(2, &at(20, 6.0, 6.0, 0.2), 0.2);
        let seen = first_seen(&mut relay, 1, 0.2, 0.5);
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!(seen[0].1 - 0.2 <= VIEW_REFRESH + tick, "{seen:?}");
        // A new entity, placed by its first state a tick after it was
        // registered: on client 1's next tick.
        relay.register_controlled(2, &[30], 0.5);
        assert!(first_seen(&mut relay, 1, 0.5, 0.55).is_empty());
        relay.receive(2, &at(30, 7.0, 7.0, 0.55), 0.55);
        let seen = first_seen(&mut relay, 1, 0.55, 0.8);
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!(seen[0].1 - 0.55 <= tick, "{seen:?}");
        // A wider interest: at once too.
        set_interest(&mut relay, 1, true, 0.8);
        let seen = first_seen(&mut relay, 1, 0.8, 1.0);
        assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), vec![40]);
        assert!(seen[0].1 - 0.8 <= tick, "{seen:?}");
    }

    #[test]
    fn a_claimed_entity_leaves_the_claimers_snapshots_at_once() {
        let mut relay = Relay::new(RelayConfig::default());
        relay.join_seeing_all(1, 0.0);
        relay.join_seeing_all(3, 0.0);
        relay.register_controlled(1, &[10], 0.0);
        relay.receive(
            3,
            &bytes(Message::Register {
                entity: 100,
                kind: entity_kind::NEUTRAL,
            }),
            0.0,
        );
        let (holder, epoch) = relay.holder(100).unwrap();
        assert_eq!(holder, Some(3), "the first to register holds it");
        // State of 100 from its holder, moving (x grows with time).
        let moving = |epoch: u32, t: f64| {
            bytes(Message::OwnedState {
                server_time: t,
                updates: vec![EntityUpdate {
                    entity: 100,
                    pose: Pose::new(Vec3::new(t as f32, 0.0, 0.0), Quat::IDENTITY),
                    velocity: Some(Vec3::X),
                    angular_velocity: None,
                    teleport: false,
                    age: 0.0,
                    sequence: send_counter(t),
                    epoch,
                }],
            })
        };
        relay.receive(3, &moving(epoch, 0.0), 0.0);
        let seen = first_seen(&mut relay, 1, 0.0, 0.5);
        assert!(seen.iter().any(|s| s.0 == 100), "1 sees 100: {seen:?}");
        relay.receive(
            1,
            &bytes(Message::Claim {
                mine: 10,
                other: 100,
                epoch,
                seq: 1,
            }),
            0.5,
        );
        let (holder, epoch) = relay.holder(100).unwrap();
        assert_eq!(holder, Some(1), "the claim is granted");
        // 1 now moves 100 itself (a state every step, so that any tick
        // would have news of it): none of its states come back to it.
        for ms in 500..1000u32 {
            let t = ms as f64 / 1000.0;
            relay.receive(1, &moving(epoch, t), t);
            relay.step(t);
            for (c, m) in decoded(&mut relay) {
                if let Message::Snapshot { updates, .. } = m {
                    assert!(
                        c != 1 || updates.iter().all(|u| u.entity != 100),
                        "its own entity echoed back at {t}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_joiner_sees_nothing_until_its_interest_arrives_or_the_grace_ends() {
        let mut relay = Relay::new(RelayConfig {
            cell_size: 10.0,
            ..Default::default()
        });
        // Client 1 is in the world with entity 10 far from the joiners.
        relay.join_seeing_all(1, 0.0);
        relay.register_controlled(1, &[10], 0.0);
        relay.receive(1, &at(10, 500.0, 500.0, 0.0), 0.0);
        relay.join(2, 1.0);
        relay.join(3, 1.0);
        // 2's interest arrives a round trip later: it never sees 10.
        let early = first_sights(&mut relay, 1.0, 1.1);
        assert!(early.iter().all(|s| s.0 == 1), "{early:?}");
        relay.register_controlled(2, &[20], 1.1);
        relay.receive(2, &at(20, 5.0, 5.0, 1.1), 1.1);
        set_interest(&mut relay, 2, false, 1.1);
        let later = first_sights(&mut relay, 1.1, 2.0);
        assert!(later.iter().all(|s| s.0 != 2), "{later:?}");
        assert_eq!(relay.stats().interest_removals, 0);
        // 3 declares none: the global view once the grace is over.
        let mut seen: Vec<_> = later.iter().filter(|s| s.0 == 3).collect();
        seen.sort_by_key(|s| s.1);
        assert_eq!(seen.iter().map(|s| s.1).collect::<Vec<_>>(), vec![10, 20]);
        assert!(seen.iter().all(|s| s.2 >= 1.0 + INTEREST_GRACE), "{seen:?}");
    }
}
