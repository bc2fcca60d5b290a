//! Scripted elements (S5): elements that every machine computes from a
//! shared path configuration and the shared server clock, so that
//! hundreds of them cost a spawn each on the network and nothing per
//! frame. Sans-IO: parse a configuration, evaluate an element at a server
//! time; the client and the embedded server keep a [`ScriptedSet`].

pub mod config;
pub mod motion;
pub mod path;
pub mod set;
pub mod spawn;

pub use config::{ConfigError, Path, PathEnd, Plane, ScriptedConfig, Segment};
pub use motion::Kinematic;
pub use set::{pose_of, Refusal, ScriptedSet, SetEvent};
pub use spawn::{Spawn, SpawnError};
