//! Sans-IO network model: named profiles and a seeded link that turns a
//! send time into zero, one or two arrival times. The quality benchmark
//! uses it directly; the socket conditioner wraps the same link.

mod link;
mod profile;

pub use link::Link;
pub use profile::NetworkProfile;
