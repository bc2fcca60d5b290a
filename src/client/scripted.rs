//! A client's scripted elements (S5): spawns from the relay, computed at
//! the estimated server time on every tick from the path configuration the
//! game loaded. After a reconnect the relay sends every live spawn again;
//! elements it does not send within a grace period were despawned while
//! this client was away and go.

use std::collections::HashSet;
use std::sync::Arc;

use super::events::{ClientEvent, Removal};
use crate::core::pose::Pose;
use crate::core::scripted::{Refusal, ScriptedConfig, ScriptedSet, SetEvent, Spawn};

/// Most live scripted elements a client keeps.
pub const MAX_CLIENT_ELEMENTS: usize = 65_536;

#[derive(Debug)]
pub struct ScriptedClient {
    set: ScriptedSet,
    /// After a reconnect: elements not spawned again by the deadline
    /// (engine time) are gone.
    stale: Option<(f64, HashSet<u64>)>,
    scratch: Vec<SetEvent>,
    /// Server time of the last evaluation.
    last_time: Option<f64>,
    refused_spawns: u64,
}

impl Default for ScriptedClient {
    fn default() -> Self {
        ScriptedClient {
            set: ScriptedSet::new(MAX_CLIENT_ELEMENTS),
            stale: None,
            scratch: Vec::new(),
            last_time: None,
            refused_spawns: 0,
        }
    }
}

impl ScriptedClient {
    pub fn set_config(&mut self, config: Arc<ScriptedConfig>) {
        self.set.set_config(config);
    }

    pub fn config(&self) -> Option<&Arc<ScriptedConfig>> {
        self.set.config()
    }

    /// Live elements (started or not).
    pub fn len(&self) -> usize {
        self.set.len()
    }

    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Spawns the relay could not be kept (over the limit).
    pub fn refused_spawns(&self) -> u64 {
        self.refused_spawns
    }

    /// Server time the elements were last computed at.
    pub fn last_time(&self) -> Option<f64> {
        self.last_time
    }

    pub fn spawn(&mut self, spawns: Vec<Spawn>) {
        for s in spawns {
            if let Some((_, stale)) = self.stale.as_mut() {
                stale.remove(&s.element);
            }
            if let Err(e) = self.set.insert(s) {
                self.refused_spawns += 1;
                log::warn!(target: "netsync::client", "scripted element {} not kept: {e}", s.element);
            }
        }
    }

    /// A despawn: the removal event, when the element had appeared.
    pub fn despawn(&mut self, element: u64) -> Option<ClientEvent> {
        self.set
            .remove(element)
            .filter(|&appeared| appeared)
            .map(|_| ClientEvent::EntityRemoved {
                entity: element,
                reason: Removal::Unregistered,
            })
    }

    /// A reconnect at engine time `now`: every element must be spawned
    /// again within `grace` seconds.
    pub fn reconnected(&mut self, now: f64, grace: f64) {
        let mut ids: HashSet<u64> = self.set.ids().collect();
        if let Some((_, still)) = self.stale.take() {
            ids.extend(still);
        }
        self.stale = Some((now + grace, ids));
    }

    /// The relay is a new process: its elements are all new.
    pub fn restarted(&mut self, events: &mut Vec<ClientEvent>) {
        for entity in self.set.clear() {
            events.push(ClientEvent::EntityRemoved {
                entity,
                reason: Removal::Stale,
            });
        }
        self.stale = None;
    }

    /// Every element at server time `t` (engine time `now` for the
    /// reconnect grace): events out, started elements visited in id order.
    pub fn evaluate(
        &mut self,
        now: f64,
        t: f64,
        events: &mut Vec<ClientEvent>,
        visit: impl FnMut(u64, Pose),
    ) -> usize {
        if let Some((deadline, _)) = &self.stale {
            if now >= *deadline {
                let (_, gone) = self.stale.take().unwrap_or_default();
                for id in gone {
                    if self.set.remove(id) == Some(true) {
                        events.push(ClientEvent::EntityRemoved {
                            entity: id,
                            reason: Removal::Stale,
                        });
                    }
                }
            }
        }
        self.last_time = Some(t);
        self.scratch.clear();
        let shown = self.set.evaluate(t, &mut self.scratch, visit);
        for e in self.scratch.drain(..) {
            events.push(match e {
                SetEvent::Appeared(entity) => ClientEvent::EntityAppeared { entity },
                SetEvent::Expired(entity) => ClientEvent::EntityRemoved {
                    entity,
                    reason: Removal::Expired,
                },
                SetEvent::Refused { element, refusal } => ClientEvent::ScriptedRefused {
                    element,
                    reason: refusal,
                },
            });
        }
        shown
    }

    /// One element's state at server time `t` (for games and tests that
    /// compare machines).
    pub fn state_at(&mut self, element: u64, t: f64) -> Option<crate::core::scripted::Kinematic> {
        self.set.state_at(element, t)
    }
}

/// Why an element is not shown, for the event.
pub fn refusal_name(r: Refusal) -> &'static str {
    match r {
        Refusal::NoConfig => "no path configuration loaded",
        Refusal::ConfigMismatch => "the server's path configuration differs",
        Refusal::UnknownPath => "unknown path",
        Refusal::TooLong => "its life needs too many segment moves",
    }
}
