//! The relay server: the sans-IO relay logic (who may speak for what, who
//! hears what, commands, packing within MTU and budget) and the thread
//! that runs it over laminar.

pub mod commands;
pub mod embedded;
pub mod interest;
pub mod lockstep;
pub mod relay;
pub mod relay_server;
pub mod scripted;
pub mod send_rights;
pub mod seq_window;
