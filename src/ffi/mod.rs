//! The C ABI: a thin shell over the Rust API. No logic lives here beyond
//! checking what crosses the boundary.
//!
//! Conventions (docs/c-api.md): every fallible call returns
//! [`NetsyncResult`]; outputs go through out-pointers written only on
//! success; [`netsync_last_error`] gives the detail of the last failure on
//! the calling thread; every export runs inside a panic boundary and
//! returns `NETSYNC_ERR_PANIC` instead of unwinding. Handles are opaque ids
//! checked against a registry, so a freed, foreign or wrong-type handle is
//! an error code, never a crash.

// The exports are called from C, where Rust's `unsafe` marker means
// nothing; each one checks its pointers for NULL and states its contract in
// the header. Rust callers (the integration tests) go through the same
// contract.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod client;
pub mod handles;
pub mod interest;
pub mod lockstep;
pub mod log_sink;
pub mod messages;
pub mod replay;
pub mod result;
pub mod scripted;
pub mod security;
pub mod send_filter;
pub mod server;
pub mod server_game;
pub mod timeline;
pub mod types;
pub mod version;

pub use result::NetsyncResult;
