//! The relay server: the sans-IO relay logic (who owns what, what each
//! client still needs, packing within MTU and budget) and, next, the thread
//! that runs it over laminar.

pub mod relay;
pub mod relay_server;
pub mod send_rights;
