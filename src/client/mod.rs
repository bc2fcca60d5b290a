//! The client: an engine-facing handle ([`Client`]) and a network thread
//! per handle (handshake, laminar, clock probes, owned state out,
//! snapshots in), talking only through channels.

pub mod clock;
pub mod config;
pub mod events;
pub mod handle;
pub mod lockstep;
mod loss;
mod network;
pub mod prediction_overlay;
mod recorded_timeline;
pub mod scripted;

pub use config::ClientConfig;
pub use events::{ClientEvent, ConnectionState, DisconnectReason, Removal};
pub use handle::{Client, ClientError, ClientStats};
pub use network::{ClientDriver, NetworkStats, SocketFactory};
