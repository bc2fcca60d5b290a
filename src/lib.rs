//! netsync: keeps game objects in step between a relay server and many
//! clients over bad networks.
//!
//! Layers (folders):
//! - [`core`]: sans-IO algorithms (timeline interpolation, prediction,
//!   smoothing, sender-side filters). Time is always passed in.
//! - [`netsim`]: sans-IO network model (named profiles, seeded link) shared by
//!   the quality benchmark and the conditioner.
//! - [`quality`]: the deterministic quality benchmark (scenario, metrics).
//! - [`replay`]: recordings of clients and the relay, and their player.
//! - [`ffi`]: the C ABI, a thin shell over the layers above.

pub mod client;
pub mod core;
pub mod ffi;
#[doc(hidden)]
pub mod fuzzing;
pub mod net;
pub mod netsim;
pub mod quality;
pub mod replay;
pub mod server;
pub mod wire;
