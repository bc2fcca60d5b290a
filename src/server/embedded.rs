//! The game side of an embedded relay (a host or dedicated-server build):
//! what the engine asks of the relay thread, and what the thread hands
//! back. Calls are queued and applied on the relay thread at its next
//! step, so the engine never waits on the network; a call the relay
//! refuses comes back as an event.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crossbeam_channel::{unbounded, Receiver, Sender};

use super::relay::{Relay, ServerCallError};
use super::scripted::MAX_RELAY_ELEMENTS;
use crate::core::app_message::AppMessage;
use crate::core::pose::Pose;
use crate::core::scripted::{Kinematic, ScriptedConfig, ScriptedSet, SetEvent, Spawn, SpawnError};
use crate::wire::message::EntityUpdate;

/// A call from the game, applied on the relay thread.
#[derive(Clone, Debug, PartialEq)]
pub enum ServerCall {
    /// State of a server-owned entity (declared on first use).
    SetState(EntityUpdate),
    /// A server-owned entity is gone.
    Remove {
        entity: u64,
    },
    ComponentState {
        entity: u64,
        component: u32,
        data: Vec<u8>,
    },
    GlobalCommand(Vec<u8>),
    ComponentCommand {
        entity: u64,
        component: u32,
        data: Vec<u8>,
    },
    /// A scripted element (S5), checked against the game's configuration.
    Spawn(Spawn),
    /// A scripted element ends early.
    Despawn {
        element: u64,
    },
}

impl ServerCall {
    /// The entity a call is about (0 for global commands).
    pub fn entity(&self) -> u64 {
        match self {
            ServerCall::SetState(u) => u.entity,
            ServerCall::Remove { entity }
            | ServerCall::ComponentState { entity, .. }
            | ServerCall::ComponentCommand { entity, .. } => *entity,
            ServerCall::GlobalCommand(_) => 0,
            ServerCall::Spawn(s) => s.element,
            ServerCall::Despawn { element } => *element,
        }
    }

    fn apply(self, relay: &mut Relay, now: f64) -> Result<(), ServerCallError> {
        match self {
            ServerCall::SetState(update) => relay.server_set_state(update, now),
            ServerCall::Remove { entity } => relay.server_remove(entity),
            ServerCall::ComponentState {
                entity,
                component,
                data,
            } => relay.server_component_state(entity, component, data),
            ServerCall::GlobalCommand(data) => relay.server_global_command(data, now),
            ServerCall::ComponentCommand {
                entity,
                component,
                data,
            } => relay.server_component_command(entity, component, data, now),
            ServerCall::Spawn(spawn) => relay.server_spawn_scripted(&[spawn]),
            ServerCall::Despawn { element } => relay.server_despawn_scripted(element),
        }
    }
}

/// What the relay thread tells the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerEvent {
    ClientJoined {
        client: u32,
    },
    ClientLeft {
        client: u32,
    },
    /// A queued call was refused.
    CallRefused {
        entity: u64,
        error: ServerCallError,
    },
    /// The relay refused a scripted spawn (over its limit): the element
    /// exists nowhere.
    SpawnRefused {
        element: u64,
        error: ServerCallError,
    },
    /// Lockstep: `client` sent no input for `frame` within the stall
    /// timeout; the relay fills its input until it sends again.
    LockstepStalled {
        client: u32,
        frame: u64,
    },
    /// Lockstep: `client`'s state hash for `frame` differs from the
    /// majority's (one event per differing client).
    LockstepDesync {
        client: u32,
        frame: u64,
    },
}

/// Most events kept for a game that does not poll them (newer ones are
/// dropped and counted).
const EVENT_CAPACITY: usize = 65_536;

/// A queue between the threads with a cap and no allocation up front
/// (a bounded crossbeam channel allocates every slot at once).
#[derive(Debug)]
struct Capped<T> {
    tx: Sender<T>,
    rx: Receiver<T>,
    queued: Arc<AtomicUsize>,
    capacity: usize,
}

impl<T> Capped<T> {
    fn new(capacity: usize) -> Self {
        let (tx, rx) = unbounded();
        Capped {
            tx,
            rx,
            queued: Arc::new(AtomicUsize::new(0)),
            capacity,
        }
    }

    /// False (and nothing queued) when full.
    fn push(&self, item: T) -> bool {
        if self.queued.load(Ordering::Acquire) >= self.capacity {
            return false;
        }
        self.queued.fetch_add(1, Ordering::AcqRel);
        self.tx.send(item).is_ok()
    }

    fn pop(&self) -> Option<T> {
        let item = self.rx.try_recv().ok()?;
        self.queued.fetch_sub(1, Ordering::AcqRel);
        Some(item)
    }

    fn len(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }

    fn share(&self) -> Self {
        Capped {
            tx: self.tx.clone(),
            rx: self.rx.clone(),
            queued: self.queued.clone(),
            capacity: self.capacity,
        }
    }
}

/// The relay thread's end.
#[derive(Debug)]
pub(crate) struct RelayEnd {
    calls: Receiver<ServerCall>,
    events: Capped<ServerEvent>,
    inbox: Capped<AppMessage>,
    /// Messages and events dropped because the game did not poll them.
    pub dropped_messages: u64,
    pub dropped_events: u64,
}

/// The game's end.
#[derive(Debug)]
pub struct GameEnd {
    calls: Sender<ServerCall>,
    events: Capped<ServerEvent>,
    inbox: Capped<AppMessage>,
    peeked: Option<AppMessage>,
    /// The scripted elements the game spawned, computed on the game's
    /// thread (hit tests need their positions; the relay never computes).
    scripted: ScriptedSet,
    scratch: Vec<SetEvent>,
}

/// A connected pair; the inbox keeps at most `inbox_capacity` messages (0:
/// none, the game only calls and hears events).
pub(crate) fn link(inbox_capacity: usize) -> (GameEnd, RelayEnd) {
    let (calls_tx, calls_rx) = unbounded();
    let events = Capped::new(EVENT_CAPACITY);
    let inbox = Capped::new(inbox_capacity);
    (
        GameEnd {
            calls: calls_tx,
            events: events.share(),
            inbox: inbox.share(),
            peeked: None,
            scripted: ScriptedSet::new(MAX_RELAY_ELEMENTS),
            scratch: Vec::new(),
        },
        RelayEnd {
            calls: calls_rx,
            events,
            inbox,
            dropped_messages: 0,
            dropped_events: 0,
        },
    )
}

impl RelayEnd {
    /// Applies every queued call at relay time `now`. Spawns in a row go
    /// out together (a few per message).
    pub fn apply_calls(&mut self, relay: &mut Relay, now: f64) {
        let mut spawns: Vec<Spawn> = Vec::new();
        while let Ok(call) = self.calls.try_recv() {
            if let ServerCall::Spawn(s) = call {
                spawns.push(s);
                continue;
            }
            self.spawn(relay, &mut spawns);
            let entity = call.entity();
            if let Err(error) = call.apply(relay, now) {
                log::debug!(target: "netsync::relay", "embedded server call on {entity} refused: {error}");
                self.event(ServerEvent::CallRefused { entity, error });
            }
        }
        self.spawn(relay, &mut spawns);
    }

    fn spawn(&mut self, relay: &mut Relay, spawns: &mut Vec<Spawn>) {
        if spawns.is_empty() || relay.server_spawn_scripted(spawns).is_ok() {
            spawns.clear();
            return;
        }
        // Over the limit together: as many as fit, one by one.
        for s in spawns.drain(..) {
            if let Err(error) = relay.server_spawn_scripted(&[s]) {
                log::warn!(target: "netsync::relay", "scripted element {} refused: {error}", s.element);
                self.event(ServerEvent::SpawnRefused {
                    element: s.element,
                    error,
                });
            }
        }
    }

    pub fn event(&mut self, event: ServerEvent) {
        if !self.events.push(event) {
            self.dropped_events += 1;
        }
    }

    /// Hands the relay's messages for the server to the game.
    pub fn deliver(&mut self, relay: &mut Relay) {
        for message in relay.drain_server_inbox() {
            if !self.inbox.push(message) {
                self.dropped_messages += 1;
            }
        }
        for event in relay.drain_server_events() {
            self.event(event);
        }
    }
}

/// The relay thread is gone (it only stops when the server is freed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RelayStopped;

/// Why a spawn or despawn did not go out.
#[derive(Clone, Debug, PartialEq)]
pub enum SpawnOrStopped {
    Spawn(SpawnError),
    Stopped,
}

impl GameEnd {
    pub fn call(&self, call: ServerCall) -> Result<(), RelayStopped> {
        self.calls.send(call).map_err(|_| RelayStopped)
    }

    pub fn poll_event(&mut self) -> Option<ServerEvent> {
        let event = self.events.pop();
        if let Some(ServerEvent::SpawnRefused { element, .. }) = event {
            self.scripted.remove(element);
        }
        event
    }

    /// The path configuration scripted elements are spawned with.
    pub fn set_scripted_config(&mut self, config: Arc<ScriptedConfig>) {
        self.scripted.set_config(config);
    }

    /// Spawns a scripted element (S5) with the loaded configuration's
    /// fingerprint: checked here, then sent to every client reliably.
    pub fn spawn(&mut self, spawn: Spawn) -> Result<(), SpawnOrStopped> {
        let mut spawn = spawn;
        spawn.fingerprint = self.scripted.config().map_or(0, |c| c.fingerprint());
        self.scripted.check(&spawn).map_err(SpawnOrStopped::Spawn)?;
        self.scripted.insert(spawn).map_err(SpawnOrStopped::Spawn)?;
        self.call(ServerCall::Spawn(spawn))
            .map_err(|_| SpawnOrStopped::Stopped)
    }

    /// Ends a live scripted element early (clients get a removal event).
    pub fn despawn(&mut self, element: u64) -> Result<(), SpawnOrStopped> {
        if self.scripted.remove(element).is_none() {
            return Err(SpawnOrStopped::Spawn(SpawnError::Invalid(
                "no live scripted element with that id",
            )));
        }
        self.call(ServerCall::Despawn { element })
            .map_err(|_| SpawnOrStopped::Stopped)
    }

    /// Every live scripted element at server time `t`, in id order
    /// (expired ones are dropped).
    pub fn scripted_at(&mut self, t: f64, visit: impl FnMut(u64, Pose)) -> usize {
        self.scratch.clear();
        self.scripted.evaluate(t, &mut self.scratch, visit)
    }

    /// One scripted element's state at server time `t`.
    pub fn scripted_state_at(&mut self, element: u64, t: f64) -> Option<Kinematic> {
        self.scripted.state_at(element, t)
    }

    /// Live scripted elements (started or not).
    pub fn scripted_count(&self) -> usize {
        self.scripted.len()
    }

    /// The next message for the server, left queued.
    pub fn peek_message(&mut self) -> Option<&AppMessage> {
        if self.peeked.is_none() {
            self.peeked = self.inbox.pop();
        }
        self.peeked.as_ref()
    }

    pub fn poll_message(&mut self) -> Option<AppMessage> {
        self.peek_message();
        self.peeked.take()
    }

    /// Messages waiting.
    pub fn queued_messages(&self) -> usize {
        self.inbox.len() + self.peeked.is_some() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::app_message::AppMessageKind;

    fn message(n: u64) -> AppMessage {
        AppMessage {
            kind: AppMessageKind::GlobalCommand,
            sender: 1,
            entity: 0,
            component: 0,
            sequence: n,
            server_time: 0.0,
            data: vec![],
        }
    }

    #[test]
    fn the_inbox_keeps_its_cap_without_allocating_it() {
        // A cap of a billion costs nothing until used.
        let (mut game, relay) = link(1_000_000_000);
        assert!(relay.inbox.push(message(1)));
        assert_eq!(game.queued_messages(), 1);
        assert_eq!(game.poll_message().map(|m| m.sequence), Some(1));
        // A cap of two drops the third.
        let (mut game, relay) = link(2);
        assert!(relay.inbox.push(message(1)) && relay.inbox.push(message(2)));
        assert!(!relay.inbox.push(message(3)));
        assert_eq!(game.peek_message().map(|m| m.sequence), Some(1));
        assert_eq!(game.queued_messages(), 2);
        game.poll_message();
        assert!(relay.inbox.push(message(4)), "room again");
        // No inbox at all: calls and events still work.
        let (_, relay) = link(0);
        assert!(!relay.inbox.push(message(1)));
    }
}
