//! Send rights (S3, made safe), sans-IO: who may speak for each entity.
//!
//! Every entity has a kind. A *controlled* entity belongs to one client for
//! good; a *neutral* physics object is held by whoever last hit it (or by
//! nobody); a *server-owned* entity only the relay or embedded server
//! moves. Each change of holder raises the entity's epoch, and state is
//! accepted only from the current holder's connection with the current
//! epoch, so a former holder's late packets change nothing. Claims are
//! ordered by arrival at the relay: the first valid one wins, the rest are
//! refused, and a cooldown after each transfer stops ping-pong.

use std::collections::HashMap;

/// What an entity is, for send rights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntityKind {
    /// One client's, forever (a player's car).
    Controlled,
    /// A shared physics object; the holder changes by collision.
    Neutral,
    /// Moved by the server only.
    ServerOwned,
}

/// Who first holds a neutral object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialHolder {
    /// The first client that registers it (S3: first ready, first served).
    FirstReady,
    /// Nobody until someone hits it.
    Nobody,
}

/// Settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RightsConfig {
    /// After a transfer, claims on the same entity are refused this long (s).
    pub claim_cooldown: f64,
    /// A neutral object reported at rest this long returns to nobody (s);
    /// 0 disables the automatic return.
    pub rest_timeout: f64,
    pub initial_holder: InitialHolder,
}

impl Default for RightsConfig {
    fn default() -> Self {
        RightsConfig {
            claim_cooldown: 0.3,
            rest_timeout: 2.0,
            initial_holder: InitialHolder::FirstReady,
        }
    }
}

/// Why a request was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    UnknownEntity,
    /// Registered before with another kind or by another controller.
    Conflict,
    /// Only neutral objects change hands.
    NotNeutral,
    /// The claimant does not control the entity it says hit the object.
    NotYourController,
    /// The object changed hands too recently.
    Cooldown,
    /// The claimant already holds it.
    AlreadyHolder,
    /// Not the holder (releasing, or reporting rest).
    NotHolder,
    /// The object changed hands since the collision the claim reports.
    Stale,
}

impl Refusal {
    /// Code on the wire (`ClaimRefused::reason`).
    pub fn code(self) -> u8 {
        match self {
            Refusal::UnknownEntity => 1,
            Refusal::Conflict => 2,
            Refusal::NotNeutral => 3,
            Refusal::NotYourController => 4,
            Refusal::Cooldown => 5,
            Refusal::AlreadyHolder => 6,
            Refusal::NotHolder => 7,
            Refusal::Stale => 8,
        }
    }
}

/// A change to announce to every client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RightChange {
    pub entity: u64,
    /// Client holding the right now; `None`: nobody (or the server).
    pub holder: Option<u32>,
    pub epoch: u32,
    /// Who held it before this change (it must hear it lost the right).
    pub previous: Option<u32>,
}

#[derive(Clone, Copy, Debug)]
struct Right {
    kind: EntityKind,
    holder: Option<u32>,
    epoch: u32,
    changed_at: f64,
    /// When the holder last reported it moving (for the rest timeout).
    moving_at: f64,
}

/// The relay's table of rights.
#[derive(Debug, Default)]
pub struct SendRights {
    config: RightsConfig,
    rights: HashMap<u64, Right>,
    changes: Vec<RightChange>,
}

impl SendRights {
    pub fn new(config: RightsConfig) -> Self {
        SendRights {
            config,
            rights: HashMap::new(),
            changes: Vec::new(),
        }
    }

    /// Changes since the last call, in order.
    pub fn drain_changes(&mut self) -> std::vec::Drain<'_, RightChange> {
        self.changes.drain(..)
    }

    pub fn holder(&self, entity: u64) -> Option<(Option<u32>, u32)> {
        self.rights.get(&entity).map(|r| (r.holder, r.epoch))
    }

    pub fn kind(&self, entity: u64) -> Option<EntityKind> {
        self.rights.get(&entity).map(|r| r.kind)
    }

    /// Every entity's current holder, for a client that joins late.
    pub fn all(&self) -> Vec<RightChange> {
        let mut all: Vec<RightChange> = self
            .rights
            .iter()
            .map(|(&entity, r)| RightChange {
                entity,
                holder: r.holder,
                epoch: r.epoch,
                previous: None,
            })
            .collect();
        all.sort_unstable_by_key(|c| c.entity);
        all
    }

    fn change(&mut self, entity: u64, holder: Option<u32>, now: f64) -> RightChange {
        let r = self.rights.get_mut(&entity).expect("caller checked");
        let previous = r.holder;
        r.holder = holder;
        r.epoch = r.epoch.wrapping_add(1);
        // The cooldown stops ping-pong between clients; a return to nobody
        // (rest, a holder leaving) is no transfer and blocks no claim.
        if holder.is_some() {
            r.changed_at = now;
        }
        r.moving_at = now;
        let change = RightChange {
            entity,
            holder,
            epoch: r.epoch,
            previous,
        };
        self.changes.push(change);
        change
    }

    /// `client` declares `entity` of `kind` (ready). Controlled entities
    /// belong to their first registrant; a neutral object's first
    /// registrant holds it when the config says first-ready.
    pub fn register(
        &mut self,
        client: u32,
        entity: u64,
        kind: EntityKind,
        now: f64,
    ) -> Result<RightChange, Refusal> {
        if let Some(r) = self.rights.get(&entity) {
            let same =
                r.kind == kind && (kind != EntityKind::Controlled || r.holder == Some(client));
            return if same {
                Ok(RightChange {
                    entity,
                    holder: r.holder,
                    epoch: r.epoch,
                    previous: r.holder,
                })
            } else {
                Err(Refusal::Conflict)
            };
        }
        let holder = match (kind, self.config.initial_holder) {
            (EntityKind::Controlled, _) => Some(client),
            (EntityKind::Neutral, InitialHolder::FirstReady) => Some(client),
            _ => None,
        };
        self.rights.insert(
            entity,
            Right {
                kind,
                holder: None,
                epoch: 0,
                changed_at: f64::NEG_INFINITY,
                moving_at: now,
            },
        );
        let change = self.change(entity, holder, now);
        if let Some(r) = self.rights.get_mut(&entity) {
            // The first assignment is no transfer: no cooldown after it.
            r.changed_at = f64::NEG_INFINITY;
        }
        Ok(change)
    }

    /// The embedded server declares an entity it moves itself.
    pub fn register_server(&mut self, entity: u64) -> Result<(), Refusal> {
        match self.rights.get(&entity) {
            Some(r) if r.kind == EntityKind::ServerOwned => Ok(()),
            Some(_) => Err(Refusal::Conflict),
            None => {
                self.rights.insert(
                    entity,
                    Right {
                        kind: EntityKind::ServerOwned,
                        holder: None,
                        epoch: 1,
                        changed_at: f64::NEG_INFINITY,
                        moving_at: 0.0,
                    },
                );
                // Announced like any registration: held by nobody (the server).
                self.changes.push(RightChange {
                    entity,
                    holder: None,
                    epoch: 1,
                    previous: None,
                });
                Ok(())
            }
        }
    }

    /// Forgets an entity (its controller unregistered it). Only the
    /// controller of a controlled entity may.
    pub fn unregister(&mut self, client: u32, entity: u64) -> Result<(), Refusal> {
        let r = self.rights.get(&entity).ok_or(Refusal::UnknownEntity)?;
        if r.kind != EntityKind::Controlled || r.holder != Some(client) {
            return Err(Refusal::NotHolder);
        }
        self.rights.remove(&entity);
        Ok(())
    }

    /// Forgets a server-owned entity.
    pub fn unregister_server(&mut self, entity: u64) -> Result<(), Refusal> {
        match self.rights.get(&entity) {
            Some(r) if r.kind == EntityKind::ServerOwned => {
                self.rights.remove(&entity);
                Ok(())
            }
            Some(_) => Err(Refusal::NotNeutral),
            None => Err(Refusal::UnknownEntity),
        }
    }

    /// True when state for `entity` from `client` stamped with `epoch` may
    /// be applied.
    pub fn accepts(&self, client: u32, entity: u64, epoch: u32) -> bool {
        self.rights
            .get(&entity)
            .is_some_and(|r| r.holder == Some(client) && r.epoch == epoch)
    }

    /// `client`'s entity `mine` hit the neutral object `other`.
    /// `client` says `mine` (an entity it controls or a neutral object it
    /// holds) hit neutral `other` while `other` was at `seen` (0: unknown,
    /// any epoch).
    pub fn claim(
        &mut self,
        client: u32,
        mine: u64,
        other: u64,
        seen: u32,
        now: f64,
    ) -> Result<RightChange, Refusal> {
        // What hit it must be the claimant's: a body it controls, or a
        // neutral object it holds (so that a pushed object can knock over
        // the next one, and a stack falls as a whole).
        let hitter = self.rights.get(&mine).ok_or(Refusal::UnknownEntity)?;
        if hitter.kind == EntityKind::ServerOwned || hitter.holder != Some(client) {
            return Err(Refusal::NotYourController);
        }
        let target = self.rights.get(&other).ok_or(Refusal::UnknownEntity)?;
        if target.kind != EntityKind::Neutral {
            return Err(Refusal::NotNeutral);
        }
        if target.holder == Some(client) {
            return Err(Refusal::AlreadyHolder);
        }
        if now - target.changed_at < self.config.claim_cooldown {
            return Err(Refusal::Cooldown);
        }
        if seen != 0 && seen != target.epoch {
            return Err(Refusal::Stale);
        }
        Ok(self.change(other, Some(client), now))
    }

    /// The holder says the object moves (keeps the right from timing out).
    pub fn moving(&mut self, client: u32, entity: u64, now: f64) {
        if let Some(r) = self.rights.get_mut(&entity) {
            if r.holder == Some(client) {
                r.moving_at = now;
            }
        }
    }

    /// The holder reports a neutral object at rest under `epoch` (0:
    /// unchecked): it returns to nobody. A report from an earlier holding
    /// by the same client is stale.
    pub fn at_rest(
        &mut self,
        client: u32,
        entity: u64,
        epoch: u32,
        now: f64,
    ) -> Result<RightChange, Refusal> {
        let r = self.rights.get(&entity).ok_or(Refusal::UnknownEntity)?;
        if r.kind != EntityKind::Neutral {
            return Err(Refusal::NotNeutral);
        }
        if r.holder != Some(client) {
            return Err(Refusal::NotHolder);
        }
        if epoch != 0 && epoch != r.epoch {
            return Err(Refusal::Stale);
        }
        Ok(self.change(entity, None, now))
    }

    /// A client left: its neutral objects return to nobody, its controlled
    /// entities are gone (returned so the caller can announce removals).
    pub fn client_left(&mut self, client: u32, now: f64) -> Vec<u64> {
        let mut released: Vec<u64> = self
            .rights
            .iter()
            .filter(|(_, r)| r.kind == EntityKind::Neutral && r.holder == Some(client))
            .map(|(&e, _)| e)
            .collect();
        released.sort_unstable();
        for e in released {
            self.change(e, None, now);
        }
        let mut removed: Vec<u64> = self
            .rights
            .iter()
            .filter(|(_, r)| r.kind == EntityKind::Controlled && r.holder == Some(client))
            .map(|(&e, _)| e)
            .collect();
        removed.sort_unstable();
        for e in &removed {
            self.rights.remove(e);
        }
        removed
    }

    /// Returns neutral objects whose holder has not reported them moving
    /// for `rest_timeout`.
    pub fn tick(&mut self, now: f64) {
        if self.config.rest_timeout <= 0.0 {
            return;
        }
        let mut resting: Vec<u64> = self
            .rights
            .iter()
            .filter(|(_, r)| {
                r.kind == EntityKind::Neutral
                    && r.holder.is_some()
                    && now - r.moving_at >= self.config.rest_timeout
            })
            .map(|(&e, _)| e)
            .collect();
        resting.sort_unstable();
        for e in resting {
            self.change(e, None, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> SendRights {
        let mut t = SendRights::new(RightsConfig::default());
        t.register(1, 10, EntityKind::Controlled, 0.0).unwrap();
        t.register(2, 20, EntityKind::Controlled, 0.0).unwrap();
        t.register(1, 100, EntityKind::Neutral, 0.0).unwrap();
        t.drain_changes().for_each(drop);
        t
    }

    #[test]
    fn first_ready_holds_and_only_the_holder_with_its_epoch_is_heard() {
        let t = table();
        let (holder, epoch) = t.holder(100).unwrap();
        assert_eq!(holder, Some(1));
        assert!(t.accepts(1, 100, epoch));
        assert!(!t.accepts(2, 100, epoch));
        assert!(!t.accepts(1, 100, epoch + 1));
        assert!(t.accepts(2, 20, t.holder(20).unwrap().1));
    }

    #[test]
    fn simultaneous_claims_first_wins_the_rest_are_refused() {
        let mut t = table();
        let granted = t.claim(2, 20, 100, 0, 1.0).unwrap();
        assert_eq!(granted.holder, Some(2));
        // Client 1 hit it in the same frame; its claim arrives second.
        assert_eq!(t.claim(1, 10, 100, 0, 1.0), Err(Refusal::Cooldown));
        // The old holder's late state is dropped; the new one's accepted.
        assert!(!t.accepts(1, 100, granted.epoch - 1));
        assert!(t.accepts(2, 100, granted.epoch));
        // After the cooldown a claim works again, if it saw the change.
        assert_eq!(
            t.claim(1, 10, 100, granted.epoch - 1, 1.5),
            Err(Refusal::Stale),
            "a collision from before the transfer, arriving late"
        );
        assert_eq!(
            t.claim(1, 10, 100, granted.epoch, 1.5).unwrap().holder,
            Some(1)
        );
        let changes: Vec<_> = t.drain_changes().collect();
        assert_eq!(changes.len(), 2);
        assert!(changes[1].epoch > changes[0].epoch);
    }

    #[test]
    fn claims_need_a_controlled_entity_of_yours_and_a_neutral_target() {
        let mut t = table();
        assert_eq!(t.claim(2, 10, 100, 0, 1.0), Err(Refusal::NotYourController));
        assert_eq!(t.claim(1, 10, 20, 0, 1.0), Err(Refusal::NotNeutral));
        assert_eq!(t.claim(1, 10, 999, 0, 1.0), Err(Refusal::UnknownEntity));
        assert_eq!(t.claim(1, 10, 100, 0, 1.0), Err(Refusal::AlreadyHolder));
        assert_eq!(
            t.register(2, 10, EntityKind::Controlled, 1.0),
            Err(Refusal::Conflict)
        );
        // A neutral object the claimant holds may claim the next one (a
        // pushed box knocks over another), but not one someone else holds.
        t.register(2, 101, EntityKind::Neutral, 1.0).unwrap();
        assert_eq!(t.claim(2, 101, 100, 0, 1.0).unwrap().holder, Some(2));
        assert_eq!(
            t.claim(1, 101, 100, 0, 2.0),
            Err(Refusal::NotYourController),
            "101 is client 2's"
        );
    }

    #[test]
    fn rest_and_disconnect_return_the_right() {
        let mut t = table();
        assert_eq!(t.at_rest(2, 100, 0, 1.0), Err(Refusal::NotHolder));
        assert_eq!(t.at_rest(1, 100, 0, 1.0).unwrap().holder, None);
        assert_eq!(t.claim(2, 20, 100, 0, 2.0).unwrap().holder, Some(2));
        // Silent holder: back to nobody after the rest timeout.
        t.moving(2, 100, 2.5);
        t.tick(4.0);
        assert_eq!(t.holder(100).unwrap().0, Some(2));
        t.tick(4.6);
        assert_eq!(t.holder(100).unwrap().0, None);
        assert_eq!(t.claim(2, 20, 100, 0, 5.0).unwrap().holder, Some(2));
        let removed = t.client_left(2, 6.0);
        assert_eq!(removed, vec![20]);
        assert_eq!(t.holder(100).unwrap().0, None);
        assert!(t.holder(20).is_none());
        // A new claim then works at once: a return to nobody starts no
        // cooldown (the grant at 5.0 did, and it is over).
        assert_eq!(t.claim(1, 10, 100, 0, 6.01).unwrap().holder, Some(1));
        assert_eq!(t.at_rest(1, 100, 0, 6.4).unwrap().holder, None);
        assert_eq!(t.claim(1, 10, 100, 0, 6.41).unwrap().holder, Some(1));
    }

    #[test]
    fn a_late_rest_report_from_an_earlier_holding_is_stale() {
        let mut t = table();
        let first = t.holder(100).unwrap().1;
        assert_eq!(t.at_rest(1, 100, first, 1.0).unwrap().holder, None);
        let again = t.claim(1, 10, 100, 0, 2.0).unwrap();
        // The report for `first` arrives again (a late resend): it must
        // not end the new holding.
        assert_eq!(t.at_rest(1, 100, first, 2.1), Err(Refusal::Stale));
        assert_eq!(t.holder(100).unwrap().0, Some(1));
        assert_eq!(t.at_rest(1, 100, again.epoch, 2.2).unwrap().holder, None);
    }
}
