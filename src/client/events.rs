//! What the engine hears from a client, and what the two threads say.

use crate::core::app_message::AppMessage;
use crate::core::pose::Sample;
use crate::core::scripted::Refusal;
use crate::net::handshake::RefusalReason;
use crate::wire::message::{InterestSpec, Message, RemovalReason};

/// Connection states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectionState {
    Connecting,
    Connected,
    Disconnected,
}

/// Why a client is not connected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DisconnectReason {
    /// No answer from the relay within the connect timeout.
    ConnectTimeout,
    /// The relay refused (a version mismatch, or full).
    Refused(RefusalReason),
    /// The relay went silent.
    RelayTimeout,
    /// The engine closed the client.
    Closed,
}

impl DisconnectReason {
    pub fn describe(&self) -> String {
        match self {
            DisconnectReason::ConnectTimeout => "no answer from the relay".into(),
            DisconnectReason::Refused(why) => format!("refused by the relay: {}", why.describe()),
            DisconnectReason::RelayTimeout => "the relay went silent".into(),
            DisconnectReason::Closed => "closed".into(),
        }
    }
}

/// Events the engine polls.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientEvent {
    /// A connection attempt began (`attempt` 1 is the first; later ones
    /// follow a disconnect, a refusal that may pass, or a timed-out try).
    Connecting {
        attempt: u32,
    },
    Connected {
        client_id: u32,
    },
    /// Admitted again after losing the relay; the full scene follows.
    Reconnected {
        client_id: u32,
    },
    Disconnected(DisconnectReason),
    EntityAppeared {
        entity: u64,
    },
    EntityRemoved {
        entity: u64,
        reason: Removal,
    },
    /// This client now holds the send right for `entity`.
    RightGained {
        entity: u64,
    },
    /// Another client (or nobody) holds it now; stop simulating it.
    RightLost {
        entity: u64,
    },
    /// The relay refused this client's claim on `entity` (reason code as
    /// on the wire: 3 not neutral, 4 not your controller, 5 cooldown, ...).
    RightRefused {
        entity: u64,
        reason: u8,
    },
    /// A scripted element started but cannot be shown here (no path
    /// configuration, another one than the server's, an unknown path).
    ScriptedRefused {
        element: u64,
        reason: Refusal,
    },
}

/// Why a remote entity went away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    /// Its owner unregistered it (or the server removed it).
    Unregistered,
    /// Its owner disconnected or timed out.
    OwnerLeft,
    /// It left this client's interest (it may come back).
    OutOfInterest,
    /// Not heard of again after a reconnect.
    Stale,
    /// A scripted element's life ended.
    Expired,
}

impl From<RemovalReason> for Removal {
    fn from(r: RemovalReason) -> Self {
        match r {
            RemovalReason::Unregistered => Removal::Unregistered,
            RemovalReason::OwnerLeft => Removal::OwnerLeft,
            RemovalReason::OutOfInterest => Removal::OutOfInterest,
        }
    }
}

/// Engine thread -> network thread.
#[derive(Clone, Debug)]
pub(crate) enum ToNetwork {
    /// Latest true state of an owned entity (sent at the send rate through
    /// the send filter), as of `local_time` (s since the client was created).
    OwnedState {
        entity: u64,
        sample: Sample,
        local_time: f64,
    },
    /// Stop sending an entity.
    Forget {
        entity: u64,
    },
    /// Declare an entity with its kind (`entity_kind::*`).
    Register {
        entity: u64,
        kind: u8,
    },
    /// `mine` hit the neutral object `other`: claim it, and send its state
    /// optimistically under the epoch a grant would give.
    Claim {
        mine: u64,
        other: u64,
    },
    /// A held neutral object is at rest.
    AtRest {
        entity: u64,
    },
    /// The engine unregistered an entity it controlled.
    Unregister {
        entity: u64,
    },
    /// A global command, numbered `seq` by the engine side.
    GlobalCommand {
        seq: u64,
        data: Vec<u8>,
    },
    /// A command for a component of `entity`, numbered like global ones.
    ComponentCommand {
        seq: u64,
        entity: u64,
        component: u32,
        data: Vec<u8>,
    },
    /// A synced component's latest state (of an entity this client holds).
    ComponentState {
        entity: u64,
        component: u32,
        data: Vec<u8>,
    },
    /// What this client wants to hear about.
    Interest(InterestSpec),
    /// Where an entity this client holds is matched, and who sees it.
    EntityInterest {
        entity: u64,
        region: u32,
        min_class: u8,
    },
    /// Join the relay's lockstep match (and again after every reconnect).
    LockstepJoin,
    LockstepLeave,
    /// This member's input for `frame`.
    LockstepInput {
        frame: u64,
        data: Vec<u8>,
    },
    /// The hash of this member's state after `frame`.
    LockstepHash {
        frame: u64,
        hash: u64,
    },
    /// The game state after `frame`, for joiners.
    LockstepSnapshot {
        frame: u64,
        data: Vec<u8>,
    },
}

/// Network thread -> engine thread.
#[derive(Clone, Debug)]
pub(crate) enum FromNetwork {
    /// A snapshot: arrival on the client's own clock (s since the client
    /// was created), the relay's stamp, and the samples with their own
    /// times and their owners' send counters.
    Frame {
        arrival: f64,
        server_time: f64,
        /// (entity, sample, owner's send counter, send-right epoch)
        samples: Vec<(u64, Sample, u8, u32)>,
        /// Snapshot packets before this one never arrived, the first of
        /// them numbered so: what they said is unknown (the relay has been
        /// asked to send it again).
        after_loss: Option<u16>,
    },
    /// The loss reported from snapshot packet `first` on is repaired.
    LossRepaired {
        first: u16,
    },
    Removed {
        entity: u64,
        reason: RemovalReason,
    },
    /// A command or component state for the game.
    App(AppMessage),
    /// Everything the relay sent before a reconnect is stale.
    Reset,
    /// The relay announced a holder (0: nobody) and epoch.
    Right {
        entity: u64,
        holder: u32,
        epoch: u32,
    },
    /// The relay refused our claim.
    Refused {
        entity: u64,
        reason: u8,
    },
    /// A lockstep message from the relay (start, frames, snapshot chunks,
    /// resume, desync, refusal, snapshot request).
    Lockstep(Message),
    /// The relay is a new process: the lockstep match starts over.
    LockstepRestarted,
    /// Scripted spawns or a despawn.
    Scripted(Message),
}
