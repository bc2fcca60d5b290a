//! The client: clock estimate, session logic and (next) the network
//! thread and the engine-facing handle.

pub mod clock;
