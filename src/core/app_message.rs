//! Commands and component states as the game receives them (S2): opaque
//! bytes with where they came from and where they go.

/// What kind of message the game receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppMessageKind {
    /// A global command, numbered by the relay (every receiver sees the
    /// same numbers, in order).
    GlobalCommand,
    /// A command for a component of an entity this receiver holds (or,
    /// on the embedded server, a server-owned or unheld entity).
    ComponentCommand,
    /// The latest state of a synced component of a remote entity.
    ComponentState,
}

/// One message for the game.
#[derive(Clone, Debug, PartialEq)]
pub struct AppMessage {
    pub kind: AppMessageKind,
    /// Client id of the sender (0: the embedded server; for component
    /// states, the entity's holder is not carried and this is 0).
    pub sender: u32,
    /// Component messages: the entity (0 for global commands).
    pub entity: u64,
    /// Component messages: the component id (0 for global commands).
    pub component: u32,
    /// Global commands: the relay's number; component states: the
    /// version; component commands: 0.
    pub sequence: u64,
    /// Server time at which the relay handled it (component states: 0).
    pub server_time: f64,
    pub data: Vec<u8>,
}
