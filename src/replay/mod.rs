//! Recording and replay (S2 point 7): a client or the relay writes what
//! it received and did, sequenced, time-stamped and compressed; a
//! [`player::Player`] ticks through a recording like a live client.
//! Format: [`format`] and docs/replay.md.

pub mod format;
pub mod player;
pub mod recorder;

pub use format::{Entry, RecordingKind, ReplayError};
pub use player::{Player, Summary};
pub use recorder::Recorder;
