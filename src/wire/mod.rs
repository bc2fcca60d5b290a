//! The wire format (docs/protocol.md): bounded readers and writers,
//! varints, quantization of transforms, and the messages that travel inside
//! laminar packets. Decoding never panics and never allocates more than
//! the input can justify; every error says what was wrong.

pub mod batch;
pub mod cursor;
pub mod lockstep;
pub mod message;
pub mod quantize;
pub mod update;
pub mod varint;

pub use cursor::{DecodeError, Reader, Writer};
