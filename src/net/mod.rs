//! The transport layer: the stateless handshake that admits an address
//! before laminar sees it, and (next) the datagram sockets laminar runs on.

pub mod clock;
pub mod handshake;
pub mod laminar_socket;
pub mod memory;
pub mod proxy;
pub mod raw_socket;
pub(crate) mod worker;
