//! The game side of an embedded relay (a host or dedicated-server build):
//! what the engine asks of the relay thread, and what the thread hands
//! back. Calls are queued and applied on the relay thread at its next
//! step, so the engine never waits on the network; a call the relay
//! refuses comes back as an event.

use crossbeam_channel::{bounded, unbounded, Receiver, Sender, TrySendError};

use super::relay::{Relay, ServerCallError};
use crate::core::app_message::AppMessage;
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
}

/// Most events kept for a game that does not poll them (older ones win).
const EVENT_CAPACITY: usize = 65_536;

/// The relay thread's end.
#[derive(Debug)]
pub(crate) struct RelayEnd {
    calls: Receiver<ServerCall>,
    events: Sender<ServerEvent>,
    inbox: Sender<AppMessage>,
    /// Messages and events dropped because the game did not poll them.
    pub dropped_messages: u64,
    pub dropped_events: u64,
}

/// The game's end.
#[derive(Debug)]
pub struct GameEnd {
    calls: Sender<ServerCall>,
    events: Receiver<ServerEvent>,
    inbox: Receiver<AppMessage>,
    peeked: Option<AppMessage>,
}

/// A connected pair; the inbox holds at most `inbox_capacity` messages.
pub(crate) fn link(inbox_capacity: usize) -> (GameEnd, RelayEnd) {
    let (calls_tx, calls_rx) = unbounded();
    let (events_tx, events_rx) = bounded(EVENT_CAPACITY);
    let (inbox_tx, inbox_rx) = bounded(inbox_capacity.max(1));
    (
        GameEnd {
            calls: calls_tx,
            events: events_rx,
            inbox: inbox_rx,
            peeked: None,
        },
        RelayEnd {
            calls: calls_rx,
            events: events_tx,
            inbox: inbox_tx,
            dropped_messages: 0,
            dropped_events: 0,
        },
    )
}

impl RelayEnd {
    /// Applies every queued call at relay time `now`.
    pub fn apply_calls(&mut self, relay: &mut Relay, now: f64) {
        while let Ok(call) = self.calls.try_recv() {
            let entity = call.entity();
            if let Err(error) = call.apply(relay, now) {
                log::debug!(target: "netsync::relay", "embedded server call on entity {entity} refused: {error}");
                self.event(ServerEvent::CallRefused { entity, error });
            }
        }
    }

    pub fn event(&mut self, event: ServerEvent) {
        if let Err(TrySendError::Full(_)) = self.events.try_send(event) {
            self.dropped_events += 1;
        }
    }

    /// Hands the relay's messages for the server to the game.
    pub fn deliver(&mut self, relay: &mut Relay) {
        for message in relay.drain_server_inbox() {
            if let Err(TrySendError::Full(_)) = self.inbox.try_send(message) {
                self.dropped_messages += 1;
            }
        }
    }
}

/// The relay thread is gone (it only stops when the server is freed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RelayStopped;

impl GameEnd {
    pub fn call(&self, call: ServerCall) -> Result<(), RelayStopped> {
        self.calls.send(call).map_err(|_| RelayStopped)
    }

    pub fn poll_event(&self) -> Option<ServerEvent> {
        self.events.try_recv().ok()
    }

    /// The next message for the server, left queued.
    pub fn peek_message(&mut self) -> Option<&AppMessage> {
        if self.peeked.is_none() {
            self.peeked = self.inbox.try_recv().ok();
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
