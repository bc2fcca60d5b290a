//! The live scripted elements of one machine (a client, or the game side
//! of an embedded server): spawns in, poses at a server time out, with
//! events when an element starts, expires or cannot be shown.

use std::collections::BTreeMap;
use std::sync::Arc;

use glam::{Quat, Vec3};

use super::config::{Path, Plane, ScriptedConfig};
use super::motion::Kinematic;
use super::path::{Cursor, MAX_SEGMENT_MOVES};
use super::spawn::{Spawn, SpawnError};
use crate::core::pose::Pose;

/// Why an element that has started is not shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// No path configuration is loaded here.
    NoConfig,
    /// The server spawned it with another configuration (fingerprints differ).
    ConfigMismatch,
    /// The path id is not in the configuration.
    UnknownPath,
    /// Its life needs more segment moves than allowed.
    TooLong,
}

/// What happened to an element during an evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetEvent {
    /// Its start time came: it is shown from now on.
    Appeared(u64),
    /// Its life ended (only for elements that had appeared).
    Expired(u64),
    /// It started but cannot be shown (once per element and configuration).
    Refused { element: u64, refusal: Refusal },
}

#[derive(Clone, Debug)]
struct Element {
    spawn: Spawn,
    cursor: Cursor,
    appeared: bool,
    refused: bool,
}

/// Live elements by id (in id order, so output order is the same everywhere).
#[derive(Clone, Debug)]
pub struct ScriptedSet {
    config: Option<Arc<ScriptedConfig>>,
    elements: BTreeMap<u64, Element>,
    capacity: usize,
}

fn origin(s: &Spawn) -> Kinematic {
    Kinematic {
        x: s.x,
        y: s.y,
        heading: s.rotate,
    }
}

/// The path an element follows under `config`, or why it cannot.
pub fn playable<'a>(config: Option<&'a ScriptedConfig>, s: &Spawn) -> Result<&'a Path, Refusal> {
    let config = config.ok_or(Refusal::NoConfig)?;
    if config.fingerprint() != s.fingerprint {
        return Err(Refusal::ConfigMismatch);
    }
    let path = config.path(s.path).ok_or(Refusal::UnknownPath)?;
    if path.moves_for(s.life) > MAX_SEGMENT_MOVES {
        return Err(Refusal::TooLong);
    }
    Ok(path)
}

/// An element's pose in netsync's frame: its plane mapped to 3D and its
/// heading as a rotation that turns +X (its forward axis) to its heading.
pub fn pose_of(plane: Plane, k: Kinematic) -> Pose {
    let (s, c) = (k.heading * 0.5).sin_cos();
    match plane {
        Plane::Xy => Pose::new(
            Vec3::new(k.x as f32, k.y as f32, 0.0),
            Quat::from_xyzw(0.0, 0.0, s as f32, c as f32),
        ),
        // +X towards +Z about +Y: minus the heading in glam's convention.
        Plane::Xz => Pose::new(
            Vec3::new(k.x as f32, 0.0, k.y as f32),
            Quat::from_xyzw(0.0, -s as f32, 0.0, c as f32),
        ),
    }
}

impl ScriptedSet {
    /// Keeps at most `capacity` live elements.
    pub fn new(capacity: usize) -> Self {
        ScriptedSet {
            config: None,
            elements: BTreeMap::new(),
            capacity,
        }
    }

    /// Uses `config` from now on; elements refused before are tried again.
    pub fn set_config(&mut self, config: Arc<ScriptedConfig>) {
        self.config = Some(config);
        for e in self.elements.values_mut() {
            e.refused = false;
            e.cursor = Cursor::start(origin(&e.spawn));
        }
    }

    pub fn config(&self) -> Option<&Arc<ScriptedConfig>> {
        self.config.as_ref()
    }

    /// Checks a spawn against this set's configuration (the server does,
    /// before it sends one).
    pub fn check(&self, s: &Spawn) -> Result<(), SpawnError> {
        s.validate()?;
        match playable(self.config.as_deref(), s) {
            Ok(_) => Ok(()),
            Err(Refusal::NoConfig) => Err(SpawnError::NoConfig),
            Err(Refusal::UnknownPath) => Err(SpawnError::UnknownPath(s.path)),
            Err(Refusal::ConfigMismatch) => Err(SpawnError::Invalid(
                "fingerprint differs from the loaded configuration",
            )),
            Err(Refusal::TooLong) => Err(SpawnError::TooLong {
                moves: self
                    .config
                    .as_ref()
                    .and_then(|c| c.path(s.path))
                    .map_or(0, |p| p.moves_for(s.life)),
            }),
        }
    }

    /// Adds or replaces an element. Returns whether a replaced one had
    /// appeared (None: it is new).
    pub fn insert(&mut self, s: Spawn) -> Result<Option<bool>, SpawnError> {
        s.validate()?;
        if !self.elements.contains_key(&s.element) && self.elements.len() >= self.capacity {
            return Err(SpawnError::Limit(self.capacity));
        }
        let fresh = Element {
            spawn: s,
            cursor: Cursor::start(origin(&s)),
            appeared: false,
            refused: false,
        };
        Ok(self
            .elements
            .insert(s.element, fresh)
            .map(|old| old.appeared))
    }

    /// Removes an element; whether it had appeared (None: unknown).
    pub fn remove(&mut self, element: u64) -> Option<bool> {
        self.elements.remove(&element).map(|e| e.appeared)
    }

    /// Removes every element; the ids of those that had appeared.
    pub fn clear(&mut self) -> Vec<u64> {
        let shown = self
            .elements
            .values()
            .filter(|e| e.appeared)
            .map(|e| e.spawn.element)
            .collect();
        self.elements.clear();
        shown
    }

    pub fn len(&self) -> usize {
        self.elements.len()
    }

    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    /// Ids of the live elements, in order.
    pub fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.elements.keys().copied()
    }

    pub fn get(&self, element: u64) -> Option<&Spawn> {
        self.elements.get(&element).map(|e| &e.spawn)
    }

    /// Drops elements whose life ended by server time `t`, silently.
    pub fn prune(&mut self, t: f64) {
        self.elements.retain(|_, e| t < e.spawn.end());
    }

    /// Every element at server time `t`: expired ones leave (with an event
    /// if they had appeared), started ones are visited with their pose,
    /// in id order. Events go to `events`.
    pub fn evaluate(
        &mut self,
        t: f64,
        events: &mut Vec<SetEvent>,
        mut visit: impl FnMut(u64, Pose),
    ) -> usize {
        let config = self.config.clone();
        let mut shown = 0;
        self.elements.retain(|&id, e| {
            if t >= e.spawn.end() {
                if e.appeared {
                    events.push(SetEvent::Expired(id));
                }
                return false;
            }
            if t < e.spawn.start && !e.appeared {
                return true;
            }
            match playable(config.as_deref(), &e.spawn) {
                Ok(path) => {
                    if !e.appeared {
                        e.appeared = true;
                        events.push(SetEvent::Appeared(id));
                    }
                    let k = path.state_at(origin(&e.spawn), t - e.spawn.start, &mut e.cursor);
                    let plane = config.as_ref().map_or(Plane::Xy, |c| c.plane);
                    visit(id, pose_of(plane, k));
                    shown += 1;
                }
                Err(refusal) => {
                    if !e.refused {
                        e.refused = true;
                        events.push(SetEvent::Refused {
                            element: id,
                            refusal,
                        });
                    }
                }
            }
            true
        });
        shown
    }

    /// One element's state at server time `t` (None: unknown, not started,
    /// expired or not playable here). Changes nothing but its cursor.
    pub fn state_at(&mut self, element: u64, t: f64) -> Option<Kinematic> {
        let e = self.elements.get_mut(&element)?;
        if t < e.spawn.start || t >= e.spawn.end() {
            return None;
        }
        let path = playable(self.config.as_deref(), &e.spawn).ok()?;
        Some(path.state_at(origin(&e.spawn), t - e.spawn.start, &mut e.cursor))
    }

    /// The plane poses are mapped to.
    pub fn plane(&self) -> Plane {
        self.config.as_ref().map_or(Plane::Xy, |c| c.plane)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Arc<ScriptedConfig> {
        Arc::new(
            ScriptedConfig::parse(
                b"netsync-paths 1\npath 1\nspeed 2\nsegment steps=10 duration=0.1 turn_step=5\n",
            )
            .unwrap(),
        )
    }

    fn spawn(element: u64, start: f64, life: f64, fingerprint: u64) -> Spawn {
        Spawn {
            element,
            path: 1,
            fingerprint,
            start,
            life,
            x: 0.0,
            y: 0.0,
            rotate: 0.0,
        }
    }

    #[test]
    fn elements_appear_at_their_start_and_expire_with_events() {
        let c = config();
        let mut set = ScriptedSet::new(10);
        set.set_config(c.clone());
        set.insert(spawn(5, 1.0, 2.0, c.fingerprint())).unwrap();
        set.insert(spawn(6, 0.0, 10.0, c.fingerprint())).unwrap();
        let mut events = Vec::new();
        let mut seen = Vec::new();
        set.evaluate(0.5, &mut events, |id, _| seen.push(id));
        assert_eq!(seen, vec![6]);
        assert_eq!(events, vec![SetEvent::Appeared(6)]);
        events.clear();
        seen.clear();
        set.evaluate(1.0, &mut events, |id, _| seen.push(id));
        assert_eq!(seen, vec![5, 6], "in id order");
        assert_eq!(events, vec![SetEvent::Appeared(5)]);
        events.clear();
        set.evaluate(3.0, &mut events, |_, _| {});
        assert_eq!(events, vec![SetEvent::Expired(5)]);
        assert_eq!(set.len(), 1);
        assert_eq!(set.remove(6), Some(true));
        assert_eq!(set.remove(6), None);
    }

    #[test]
    fn unplayable_elements_are_refused_once_and_shown_after_the_right_config() {
        let c = config();
        let mut set = ScriptedSet::new(10);
        set.insert(spawn(1, 0.0, 10.0, c.fingerprint())).unwrap();
        set.insert(spawn(2, 0.0, 10.0, c.fingerprint() ^ 1))
            .unwrap();
        let mut events = Vec::new();
        set.evaluate(1.0, &mut events, |_, _| {});
        set.evaluate(1.1, &mut events, |_, _| {});
        assert_eq!(
            events,
            vec![
                SetEvent::Refused {
                    element: 1,
                    refusal: Refusal::NoConfig
                },
                SetEvent::Refused {
                    element: 2,
                    refusal: Refusal::NoConfig
                }
            ]
        );
        events.clear();
        set.set_config(c);
        let mut seen = Vec::new();
        set.evaluate(1.2, &mut events, |id, _| seen.push(id));
        assert_eq!(seen, vec![1]);
        assert_eq!(
            events,
            vec![
                SetEvent::Appeared(1),
                SetEvent::Refused {
                    element: 2,
                    refusal: Refusal::ConfigMismatch
                }
            ]
        );
    }

    #[test]
    fn limits_and_bad_spawns_are_refused() {
        let c = config();
        let mut set = ScriptedSet::new(1);
        set.set_config(c.clone());
        set.insert(spawn(1, 0.0, 1.0, c.fingerprint())).unwrap();
        assert_eq!(
            set.insert(spawn(1, 0.0, 2.0, c.fingerprint())),
            Ok(Some(false))
        );
        assert_eq!(
            set.insert(spawn(2, 0.0, 1.0, c.fingerprint())),
            Err(SpawnError::Limit(1))
        );
        assert!(set
            .check(&spawn(3, 0.0, f64::NAN, c.fingerprint()))
            .is_err());
        assert!(set.check(&spawn(3, 0.0, 0.0, c.fingerprint())).is_err());
        let mut s = spawn(3, 0.0, 1.0, c.fingerprint());
        s.path = 9;
        assert_eq!(set.check(&s), Err(SpawnError::UnknownPath(9)));
        let repeat = Arc::new(
            ScriptedConfig::parse(
                b"netsync-paths 1\npath 1\nend repeat\nsegment steps=1 duration=0.001\n",
            )
            .unwrap(),
        );
        set.set_config(repeat.clone());
        let long = spawn(3, 0.0, 86_400.0, repeat.fingerprint());
        assert!(matches!(set.check(&long), Err(SpawnError::TooLong { .. })));
    }

    #[test]
    fn poses_map_the_plane_and_turn_plus_x_to_the_heading() {
        let k = Kinematic {
            x: 1.0,
            y: 2.0,
            heading: 0.6,
        };
        let dir = Vec3::new(0.6f32.cos(), 0.6f32.sin(), 0.0);
        let p = pose_of(Plane::Xy, k);
        assert_eq!(p.position, Vec3::new(1.0, 2.0, 0.0));
        assert!((p.rotation * Vec3::X - dir).length() < 1e-6);
        let p = pose_of(Plane::Xz, k);
        assert_eq!(p.position, Vec3::new(1.0, 0.0, 2.0));
        assert!((p.rotation * Vec3::X - Vec3::new(dir.x, 0.0, dir.y)).length() < 1e-6);
    }
}
