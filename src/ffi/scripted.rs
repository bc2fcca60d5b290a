//! Scripted elements (S5) through the C ABI: a path configuration handle
//! (parsed from a buffer or a file, validated with errors naming the line),
//! evaluation without any network, and the client's and embedded
//! server's calls.

use crate::core::scripted::Refusal;

/// `NetsyncClientEvent::reason` of `NETSYNC_EVENT_SCRIPTED_REFUSED`: no
/// path configuration is loaded on this client.
pub const NETSYNC_SCRIPTED_REFUSED_NO_CONFIG: u32 = 1;
/// The server spawned it with another path configuration (fingerprints differ).
pub const NETSYNC_SCRIPTED_REFUSED_CONFIG_MISMATCH: u32 = 2;
/// Its path id is not in the configuration.
pub const NETSYNC_SCRIPTED_REFUSED_UNKNOWN_PATH: u32 = 3;
/// Its life would need too many segment moves to compute.
pub const NETSYNC_SCRIPTED_REFUSED_TOO_LONG: u32 = 4;

pub(crate) fn refusal_code(r: Refusal) -> u32 {
    match r {
        Refusal::NoConfig => NETSYNC_SCRIPTED_REFUSED_NO_CONFIG,
        Refusal::ConfigMismatch => NETSYNC_SCRIPTED_REFUSED_CONFIG_MISMATCH,
        Refusal::UnknownPath => NETSYNC_SCRIPTED_REFUSED_UNKNOWN_PATH,
        Refusal::TooLong => NETSYNC_SCRIPTED_REFUSED_TOO_LONG,
    }
}
