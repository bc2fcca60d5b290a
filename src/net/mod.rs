//! The transport layer: the stateless handshake that admits an address
//! before laminar sees it, the datagram sockets laminar runs on, and the
//! pacing of reliable traffic that makes laminar resend losses promptly.

pub mod ack_pacer;
pub mod clock;
pub mod handshake;
pub mod laminar_socket;
pub mod memory;
pub mod proxy;
pub mod raw_socket;
pub mod secure;
pub(crate) mod worker;
