//! Relay logic, sans-IO: clients join and leave, send the states of the
//! entities they own, and on every send tick each client gets, within its
//! MTU and byte budget, the newest state of every other entity it has not
//! seen yet. Priority grows with the time an entity has waited, so nothing
//! starves under a tight budget. A client that joins late gets the whole
//! scene, then deltas.

use std::collections::{BTreeMap, HashMap};

use super::send_rights::{EntityKind, RightsConfig, SendRights};
use crate::wire::message::{entity_kind, EntityUpdate, Message, RemovalReason, UpdatePacker};
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
    /// Most entities one client may own.
    pub max_entities_per_client: usize,
    pub precision: Precision,
    /// Send-right rules (claims, cooldown, rest).
    pub rights: RightsConfig,
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
    /// State for an entity another client owns.
    pub rejected_not_owner: u64,
    /// State stamped too far from the relay's clock.
    pub rejected_stamp: u64,
    /// New entities refused over `max_entities_per_client`.
    pub rejected_limit: u64,
    pub snapshot_bytes: u64,
    pub snapshot_packets: u64,
    pub claims_granted: u64,
    pub claims_refused: u64,
}

#[derive(Debug)]
struct Entity {
    update: EntityUpdate,
    server_time: f64,
    version: u64,
}

#[derive(Debug, Default)]
struct Client {
    /// Per entity: version sent and when.
    sent: HashMap<u64, (u64, f64)>,
    owned: usize,
}

/// The relay's state.
#[derive(Debug)]
pub struct Relay {
    config: RelayConfig,
    clients: BTreeMap<u32, Client>,
    entities: HashMap<u64, Entity>,
    next_version: u64,
    outbox: Vec<Outgoing>,
    stats: RelayStats,
    scratch: Vec<(f64, u64)>,
    rights: SendRights,
    /// Encoded updates of this send tick, shared by every client.
    encoded: HashMap<u64, Vec<u8>>,
    /// Recent right changes: (entity, encoded RightChanged, send ticks
    /// since the change).
    repeats: Vec<(u64, Vec<u8>, u8)>,
}

/// A right change also goes out unreliably on these send ticks after it
/// (spaced out, so that one long burst of loss cannot take them all): a
/// lost reliable message is only resent once laminar's ack window moves
/// past it (seconds on a lossy link), and every client must agree at once.
const RIGHT_REPEAT_TICKS: [u8; 5] = [1, 2, 4, 8, 16];
/// How many unreliable repeats each right change gets.
#[cfg(test)]
const RIGHT_REPEATS: u8 = RIGHT_REPEAT_TICKS.len() as u8;

impl Relay {
    pub fn new(config: RelayConfig) -> Self {
        Relay {
            config,
            clients: BTreeMap::new(),
            entities: HashMap::new(),
            next_version: 1,
            outbox: Vec::new(),
            stats: RelayStats::default(),
            scratch: Vec::new(),
            rights: SendRights::new(config.rights),
            repeats: Vec::new(),
            encoded: HashMap::new(),
        }
    }

    pub fn config(&self) -> &RelayConfig {
        &self.config
    }

    pub fn stats(&self) -> RelayStats {
        let mut s = self.stats;
        s.clients = self.clients.len();
        s.entities = self.entities.len();
        s
    }

    /// Messages waiting to go out; the caller sends them.
    pub fn drain(&mut self) -> std::vec::Drain<'_, Outgoing> {
        self.outbox.drain(..)
    }

    /// A control message's bytes (they carry no value that can fail).
    fn encode(&self, message: &Message) -> Vec<u8> {
        message.to_bytes(&self.config.precision).unwrap_or_default()
    }

    /// A client was admitted at relay time `now`: welcome it; it will get
    /// the whole scene on the next send tick.
    pub fn join(&mut self, client: u32, now: f64) {
        self.clients.entry(client).or_default();
        let welcome = self.encode(&Message::Welcome {
            client_id: client,
            server_time: now,
            send_rate: self.config.send_rate.round().clamp(1.0, 1000.0) as u16,
            precision: self.config.precision,
        });
        self.outbox.push(Outgoing {
            client,
            reliable: true,
            payload: welcome,
        });
        // Who holds what, before any state.
        for change in self.rights.all() {
            let payload = self.encode(&right_changed(change));
            self.outbox.push(Outgoing {
                client,
                reliable: true,
                payload,
            });
        }
    }

    /// Holder of an entity, if it has send rights.
    pub fn holder(&self, entity: u64) -> Option<(Option<u32>, u32)> {
        self.rights.holder(entity)
    }

    /// Announces every send-right change since the last call to everyone.
    fn broadcast_rights(&mut self) {
        let changes: Vec<_> = self.rights.drain_changes().collect();
        for change in changes {
            let payload = self.encode(&right_changed(change));
            self.repeats
                .retain(|(entity, _, _)| *entity != change.entity);
            self.repeats.push((change.entity, payload.clone(), 0));
            for &client in self.clients.keys() {
                self.outbox.push(Outgoing {
                    client,
                    reliable: true,
                    payload: payload.clone(),
                });
            }
        }
    }

    fn refuse(&mut self, client: u32, entity: u64, reason: u8) {
        self.stats.claims_refused += 1;
        let payload = self.encode(&Message::ClaimRefused { entity, reason });
        self.outbox.push(Outgoing {
            client,
            reliable: true,
            payload,
        });
    }

    /// A client left or timed out at relay time `now`: the entities it
    /// controlled go (everyone is told), the neutral objects it held return
    /// to nobody (announced) and keep their last state.
    pub fn leave(&mut self, client: u32, now: f64) {
        if self.clients.remove(&client).is_none() {
            return;
        }
        for entity in self.rights.client_left(client, now) {
            self.entities.remove(&entity);
            self.announce_removal(entity, RemovalReason::OwnerLeft);
        }
        self.broadcast_rights();
    }

    fn announce_removal(&mut self, entity: u64, reason: RemovalReason) {
        let payload = self.encode(&Message::EntityRemoved { entity, reason });
        let recipients: Vec<u32> = self
            .clients
            .iter_mut()
            .filter_map(|(&id, c)| c.sent.remove(&entity).map(|_| id))
            .collect();
        for client in recipients {
            self.outbox.push(Outgoing {
                client,
                reliable: true,
                payload: payload.clone(),
            });
        }
    }

    /// A datagram's payload from an admitted client. The sender is the
    /// connection, never anything inside the payload.
    pub fn receive(&mut self, client: u32, payload: &[u8], now: f64) {
        if !self.clients.contains_key(&client) {
            return;
        }
        let message = match Message::decode(payload, &self.config.precision) {
            Ok(m) => m,
            Err(e) => {
                self.stats.malformed += 1;
                log::debug!(target: "netsync::relay", "client {client}: malformed message: {e}");
                return;
            }
        };
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
                self.outbox.push(Outgoing {
                    client,
                    reliable: false,
                    payload: pong,
                });
            }
            Message::OwnedState {
                server_time,
                updates,
            } => {
                if (server_time - now).abs() > self.config.stamp_tolerance {
                    self.stats.rejected_stamp += 1;
                    return;
                }
                for update in updates {
                    // Each state was true `age` before the message's stamp.
                    self.apply(client, server_time - update.age, update, now);
                }
                self.broadcast_rights();
            }
            Message::KeepAlive => {}
            Message::Register { entity, kind } => {
                let kind = match kind {
                    entity_kind::CONTROLLED => EntityKind::Controlled,
                    entity_kind::NEUTRAL => EntityKind::Neutral,
                    _ => EntityKind::ServerOwned,
                };
                if let Err(r) = self.rights.register(client, entity, kind, now) {
                    self.refuse(client, entity, r.code());
                }
                self.broadcast_rights();
            }
            Message::Claim { mine, other } => {
                match self.rights.claim(client, mine, other, now) {
                    Ok(_) => self.stats.claims_granted += 1,
                    Err(r) => self.refuse(client, other, r.code()),
                }
                self.broadcast_rights();
            }
            Message::AtRest { entity } => {
                if let Err(r) = self.rights.at_rest(client, entity, now) {
                    self.refuse(client, entity, r.code());
                }
                self.broadcast_rights();
            }
            // Only the relay sends the others.
            _ => self.stats.malformed += 1,
        }
    }

    fn apply(&mut self, client: u32, server_time: f64, update: EntityUpdate, now: f64) {
        let entity = update.entity;
        match self.rights.kind(entity) {
            None => {
                // State for an unknown entity: its sender controls it.
                let Some(c) = self.clients.get_mut(&client) else {
                    return;
                };
                if c.owned >= self.config.max_entities_per_client {
                    self.stats.rejected_limit += 1;
                    return;
                }
                c.owned += 1;
                let _ = self
                    .rights
                    .register(client, entity, EntityKind::Controlled, now);
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
        let version = self.next_version;
        match self.entities.get_mut(&entity) {
            Some(e) => {
                // Strictly newer: a duplicated or reordered datagram is applied once.
                if server_time > e.server_time {
                    e.update = update;
                    e.server_time = server_time;
                    e.version = version;
                    self.next_version += 1;
                }
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
                self.next_version += 1;
            }
        }
    }

    /// A send tick at relay time `now`: packs for every client what it has
    /// not seen, oldest-waiting first, within the MTU and the budget.
    pub fn tick(&mut self, now: f64) {
        self.rights.tick(now);
        self.broadcast_rights();
        for (_, payload, ticks) in self.repeats.iter_mut() {
            *ticks += 1;
            if !RIGHT_REPEAT_TICKS.contains(ticks) {
                continue;
            }
            for &client in self.clients.keys() {
                self.outbox.push(Outgoing {
                    client,
                    reliable: false,
                    payload: payload.clone(),
                });
            }
        }
        let last = RIGHT_REPEAT_TICKS[RIGHT_REPEAT_TICKS.len() - 1];
        self.repeats.retain(|(_, _, ticks)| *ticks < last);
        self.encoded.clear();
        let ids: Vec<u32> = self.clients.keys().copied().collect();
        for client in ids {
            self.pack_for(client, now);
        }
    }

    fn pack_for(&mut self, client: u32, now: f64) {
        let Some(c) = self.clients.get(&client) else {
            return;
        };
        // Candidates: entities of others with a version this client lacks,
        // ordered by how long they have waited (never sent: forever).
        self.scratch.clear();
        for (&id, e) in &self.entities {
            // Selective sync: the holder never gets its own entity back.
            if self
                .rights
                .holder(id)
                .is_some_and(|(h, _)| h == Some(client))
            {
                continue;
            }
            match c.sent.get(&id) {
                Some(&(v, _)) if v >= e.version => {}
                Some(&(_, at)) => self.scratch.push((now - at, id)),
                None => self.scratch.push((f64::INFINITY, id)),
            }
        }
        self.scratch
            .sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut budget = self.config.budget_per_tick;
        let mut packer = UpdatePacker::snapshot(now, self.config.mtu);
        let mut sent_now: Vec<(u64, u64)> = Vec::new();
        let p = self.config.precision;
        for &(_, id) in &self.scratch {
            let e = &self.entities[&id];
            // One encoding per entity per tick, shared by every client.
            let encoded = self.encoded.entry(id).or_insert_with(|| {
                let mut update = e.update;
                update.age = (now - e.server_time).max(0.0);
                let mut w = Writer::new();
                match update.encode(&mut w, &p) {
                    Ok(()) => w.bytes,
                    Err(_) => Vec::new(),
                }
            });
            if encoded.is_empty() {
                continue;
            }
            if encoded.len() > budget {
                break;
            }
            budget -= encoded.len();
            packer.push(encoded);
            sent_now.push((id, e.version));
        }
        let packets = packer.finish();
        if let Some(c) = self.clients.get_mut(&client) {
            for (id, version) in sent_now {
                c.sent.insert(id, (version, now));
            }
        }
        for payload in packets {
            self.stats.snapshot_bytes += payload.len() as u64;
            self.stats.snapshot_packets += 1;
            self.outbox.push(Outgoing {
                client,
                reliable: false,
                payload,
            });
        }
    }
}

fn right_changed(change: super::send_rights::RightChange) -> Message {
    Message::RightChanged {
        entity: change.entity,
        holder: change.holder.unwrap_or(0),
        epoch: change.epoch,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::pose::Pose;
    use glam::{Quat, Vec3};

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
                sequence: 0,
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
        relay.join(1, 10.0);
        relay.join(2, 10.0);
        let out = take(&mut relay);
        assert!(matches!(
            out[0],
            (1, true, Message::Welcome { client_id: 1, .. })
        ));
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
            .find(|(_, _, m)| matches!(m, Message::Snapshot { .. }))
            .unwrap();
        let Message::Snapshot {
            server_time,
            updates,
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
        relay.join(1, 0.0);
        relay.join(2, 0.0);
        relay.receive(1, &state(&[7], 1.0, 0.0), 0.0);
        relay.receive(2, &state(&[7], 99.0, 0.1), 0.1);
        assert_eq!(relay.stats().rejected_not_owner, 1);
        relay.join(3, 0.2);
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
        relay.join(1, 0.0);
        relay.receive(1, &state(&(0..50).collect::<Vec<_>>(), 1.0, 0.0), 0.0);
        relay.tick(0.03);
        relay.join(2, 1.0);
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
        relay.join(1, 0.0);
        relay.join(2, 0.0);
        let ids: Vec<u64> = (0..200).collect();
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
        relay.join(1, 0.0);
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
            relay.join(c, 0.0);
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
