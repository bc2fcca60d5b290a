//! Scripted elements (S5) through the C ABI: a path configuration handle
//! (parsed from a buffer or a file, validated with errors naming the line),
//! evaluation without any network, and the client's and embedded
//! server's calls.

use std::ffi::c_char;
use std::io::Read;
use std::sync::Arc;

use super::client::{with_client, NetsyncClient};
use super::handles;
use super::result::{guard, guard_void, FfiError, NetsyncResult};
use super::server::{c_str, NetsyncServer, TYPE_NAME as SERVER_TYPE};
use super::types::NetsyncTransform;
use crate::core::scripted::config::MAX_CONFIG_BYTES;
use crate::core::scripted::path::Cursor;
use crate::core::scripted::set::playable;
use crate::core::scripted::Refusal;
use crate::core::scripted::{pose_of, Kinematic, ScriptedConfig, Spawn, SpawnError};
use crate::core::timeline::shown_flags;
use crate::server::embedded::SpawnOrStopped;
use crate::server::relay_server::RelayServer;

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

/// `NetsyncTransform::flags`: a scripted element (S5), computed from its
/// path and the server clock.
pub const NETSYNC_TRANSFORM_SCRIPTED: u32 = 16;
const _: () = assert!(NETSYNC_TRANSFORM_SCRIPTED == shown_flags::SCRIPTED);

/// Opaque path configuration: parsed and validated, immutable, shared by
/// the clients and servers it is given to (free it whenever; they keep
/// their own reference).
pub struct NetsyncScriptedConfig {
    _private: [u8; 0],
}

const TYPE_NAME: &str = "NetsyncScriptedConfig";

/// One scripted element: the server spawns it, every machine computes it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NetsyncScriptedSpawn {
    /// Chosen by the server; shown in ticks as `entity_id`, so pick ids no
    /// entity uses.
    pub element_id: u64,
    /// A path of the configuration (ids from 1).
    pub path_id: u32,
    /// Server time it starts (s; may lie in the future).
    pub start: f64,
    /// How long it lives from `start` (s), above 0 and at most 86 400.
    pub life: f64,
    /// Where it starts on the configuration's plane (m, within 1e7).
    pub x: f64,
    pub y: f64,
    /// Its heading at the start (radians, counter-clockwise from +X).
    pub rotate: f64,
}

impl NetsyncScriptedSpawn {
    fn to_core(self, fingerprint: u64) -> Spawn {
        Spawn {
            element: self.element_id,
            path: self.path_id,
            fingerprint,
            start: self.start,
            life: self.life,
            x: self.x,
            y: self.y,
            rotate: self.rotate,
        }
    }
}

fn config_of(config: *const NetsyncScriptedConfig) -> Result<Arc<ScriptedConfig>, FfiError> {
    handles::with(
        config as usize as u64,
        TYPE_NAME,
        |c: &mut Arc<ScriptedConfig>| Ok(c.clone()),
    )
}

fn parsed(text: &[u8], what: &str) -> Result<ScriptedConfig, FfiError> {
    ScriptedConfig::parse(text).map_err(|e| {
        let code = if e.line == 0 && text.len() > MAX_CONFIG_BYTES {
            NetsyncResult::NETSYNC_ERR_TOO_LARGE
        } else {
            NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
        };
        FfiError::new(code, format!("{what}: {e}"))
    })
}

/// Parses and validates a path configuration from `len` bytes of text
/// (docs/scripted-paths.md; at most 1 MiB). On failure
/// `netsync_last_error` names the line and the field
/// (`NETSYNC_ERR_INVALID_ARGUMENT`). Free with `netsync_scripted_config_free`.
#[no_mangle]
pub extern "C" fn netsync_scripted_config_parse(
    text: *const u8,
    len: usize,
    out: *mut *mut NetsyncScriptedConfig,
) -> NetsyncResult {
    guard("netsync_scripted_config_parse", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        if len > MAX_CONFIG_BYTES {
            return Err(FfiError::new(
                NetsyncResult::NETSYNC_ERR_TOO_LARGE,
                format!("configuration of {len} bytes is over the limit of {MAX_CONFIG_BYTES}"),
            ));
        }
        let text: &[u8] = if len == 0 {
            &[]
        } else if text.is_null() {
            return Err(FfiError::null("text"));
        } else {
            // SAFETY: non-NULL, and the caller passes `len` readable bytes.
            unsafe { std::slice::from_raw_parts(text, len) }
        };
        let config = parsed(text, "configuration")?;
        handles::publish(out, Arc::new(config));
        Ok(())
    })
}

/// Reads and parses a path configuration file (UTF-8 path, at most
/// 1 MiB). `NETSYNC_ERR_IO` when it cannot be read; parse errors as
/// `netsync_scripted_config_parse`, prefixed with the path.
#[no_mangle]
pub extern "C" fn netsync_scripted_config_load_file(
    path: *const c_char,
    out: *mut *mut NetsyncScriptedConfig,
) -> NetsyncResult {
    guard("netsync_scripted_config_load_file", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let path = c_str(path, "path")?.ok_or_else(|| FfiError::null("path"))?;
        let io = |e: std::io::Error| {
            FfiError::new(NetsyncResult::NETSYNC_ERR_IO, format!("{path}: {e}"))
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let mut text = Vec::new();
        // One byte more than allowed tells "too large" without reading it all.
        file.take(MAX_CONFIG_BYTES as u64 + 1)
            .read_to_end(&mut text)
            .map_err(io)?;
        let config = parsed(&text, path)?;
        handles::publish(out, Arc::new(config));
        Ok(())
    })
}

/// Frees a configuration handle (clients and servers that use it keep
/// theirs). NULL or a handle already freed is a no-op.
#[no_mangle]
pub extern "C" fn netsync_scripted_config_free(config: *mut NetsyncScriptedConfig) {
    guard_void("netsync_scripted_config_free", || {
        handles::free::<Arc<ScriptedConfig>, _>(config, TYPE_NAME, "netsync_scripted_config_free")
    })
}

/// The configuration's fingerprint: a hash of every value that shapes a
/// motion (not comments or spacing). Server and clients must load
/// configurations with the same fingerprint; every spawn carries it.
#[no_mangle]
pub extern "C" fn netsync_scripted_config_fingerprint(
    config: *const NetsyncScriptedConfig,
    out: *mut u64,
) -> NetsyncResult {
    guard("netsync_scripted_config_fingerprint", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let f = config_of(config)?.fingerprint();
        // SAFETY: checked for NULL.
        unsafe { out.write(f) };
        Ok(())
    })
}

/// The number of paths in the configuration.
#[no_mangle]
pub extern "C" fn netsync_scripted_config_path_count(
    config: *const NetsyncScriptedConfig,
    out: *mut u32,
) -> NetsyncResult {
    guard("netsync_scripted_config_path_count", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let n = config_of(config)?.len() as u32;
        // SAFETY: checked for NULL.
        unsafe { out.write(n) };
        Ok(())
    })
}

/// Computes one element at `server_time` without any network (bring
/// your own transport, or check a server's numbers): `*out` gets its
/// transform (`entity_id` = `element_id`, flags `NETSYNC_TRANSFORM_SCRIPTED`).
/// `NETSYNC_ERR_WRONG_STATE` before `start` or from `start + life` on;
/// `NETSYNC_ERR_INVALID_ARGUMENT` for a value out of range or an unknown path.
#[no_mangle]
pub extern "C" fn netsync_scripted_evaluate(
    config: *const NetsyncScriptedConfig,
    spawn: *const NetsyncScriptedSpawn,
    server_time: f64,
    out: *mut NetsyncTransform,
) -> NetsyncResult {
    guard("netsync_scripted_evaluate", || {
        if spawn.is_null() {
            return Err(FfiError::null("spawn"));
        }
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        if !server_time.is_finite() {
            return Err(FfiError::invalid("server_time must be finite"));
        }
        let config = config_of(config)?;
        // SAFETY: checked for NULL.
        let s = unsafe { *spawn }.to_core(config.fingerprint());
        s.validate().map_err(|e| FfiError::invalid(e.to_string()))?;
        let path = playable(Some(&config), &s).map_err(|_| {
            FfiError::invalid(
                match config.path(s.path) {
                    None => SpawnError::UnknownPath(s.path),
                    Some(p) => SpawnError::TooLong {
                        moves: p.moves_for(s.life),
                    },
                }
                .to_string(),
            )
        })?;
        if server_time < s.start || server_time >= s.end() {
            return Err(FfiError::new(
                NetsyncResult::NETSYNC_ERR_WRONG_STATE,
                format!(
                    "element {} lives from {} to {} s, not at {server_time}",
                    s.element,
                    s.start,
                    s.end()
                ),
            ));
        }
        let origin = Kinematic {
            x: s.x,
            y: s.y,
            heading: s.rotate,
        };
        let k = path.state_at(origin, server_time - s.start, &mut Cursor::start(origin));
        let t = NetsyncTransform::new(
            s.element,
            &pose_of(config.plane, k),
            NETSYNC_TRANSFORM_SCRIPTED,
        );
        // SAFETY: checked for NULL.
        unsafe { out.write(t) };
        Ok(())
    })
}

/// The path configuration this client computes scripted elements with
/// (the server's: spawns made with another one are refused with
/// `NETSYNC_EVENT_SCRIPTED_REFUSED`). Elements already known are computed
/// with it from now on. The client keeps its own reference.
#[no_mangle]
pub extern "C" fn netsync_client_set_scripted_config(
    client: *mut NetsyncClient,
    config: *const NetsyncScriptedConfig,
) -> NetsyncResult {
    guard("netsync_client_set_scripted_config", || {
        let config = config_of(config)?;
        with_client(client, |c| {
            c.set_scripted_config(config);
            Ok(())
        })
    })
}

/// The server time the last tick computed scripted elements at: the
/// client's estimate of the relay's clock (the S5 shared clock).
/// `NETSYNC_ERR_WRONG_STATE` before a tick computed any.
#[no_mangle]
pub extern "C" fn netsync_client_scripted_time(
    client: *mut NetsyncClient,
    out: *mut f64,
) -> NetsyncResult {
    guard("netsync_client_scripted_time", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let t = with_client(client, |c| {
            c.scripted_time().ok_or_else(|| {
                FfiError::new(
                    NetsyncResult::NETSYNC_ERR_WRONG_STATE,
                    "no tick has computed scripted elements yet",
                )
            })
        })?;
        // SAFETY: checked for NULL.
        unsafe { out.write(t) };
        Ok(())
    })
}

fn with_game<R>(
    server: *const NetsyncServer,
    f: impl FnOnce(&mut crate::server::embedded::GameEnd) -> Result<R, FfiError>,
) -> Result<R, FfiError> {
    handles::with(
        server as usize as u64,
        SERVER_TYPE,
        |s: &mut RelayServer| {
            let game = s.game().ok_or_else(|| {
                FfiError::new(
                    NetsyncResult::NETSYNC_ERR_WRONG_STATE,
                    "this relay runs standalone: it has no game side",
                )
            })?;
            f(game)
        },
    )
}

/// The path configuration this server spawns scripted elements with.
/// Elements already spawned keep the fingerprint they were spawned with.
#[no_mangle]
pub extern "C" fn netsync_server_set_scripted_config(
    server: *mut NetsyncServer,
    config: *const NetsyncScriptedConfig,
) -> NetsyncResult {
    guard("netsync_server_set_scripted_config", || {
        let config = config_of(config)?;
        with_game(server, |g| {
            g.set_scripted_config(config);
            Ok(())
        })
    })
}

/// Spawns a scripted element (S5): checked against the loaded
/// configuration, sent reliably to every client (and to clients that
/// join while it lives), computed on every machine from the shared clock.
/// `NETSYNC_ERR_WRONG_STATE` without a configuration,
/// `NETSYNC_ERR_INVALID_ARGUMENT` for a value out of range or an unknown
/// path, `NETSYNC_ERR_LIMIT` past 65 536 live elements or a life that
/// would need more than a million segment moves. An element with the id
/// of a live one replaces it.
#[no_mangle]
pub extern "C" fn netsync_server_spawn_scripted(
    server: *mut NetsyncServer,
    spawn: *const NetsyncScriptedSpawn,
) -> NetsyncResult {
    guard("netsync_server_spawn_scripted", || {
        if spawn.is_null() {
            return Err(FfiError::null("spawn"));
        }
        // SAFETY: checked for NULL.
        let spawn = unsafe { *spawn }.to_core(0);
        with_game(server, |g| {
            g.spawn(spawn).map_err(|e| match e {
                SpawnOrStopped::Stopped => FfiError::new(
                    NetsyncResult::NETSYNC_ERR_WRONG_STATE,
                    "the relay thread has stopped",
                ),
                SpawnOrStopped::Spawn(e) => {
                    let code = match e {
                        SpawnError::NoConfig => NetsyncResult::NETSYNC_ERR_WRONG_STATE,
                        SpawnError::Limit(_) | SpawnError::TooLong { .. } => {
                            NetsyncResult::NETSYNC_ERR_LIMIT
                        }
                        SpawnError::Invalid(_) | SpawnError::UnknownPath(_) => {
                            NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT
                        }
                    };
                    FfiError::new(code, format!("element {}: {e}", spawn.element))
                }
            })
        })
    })
}

/// Ends a live scripted element early (a fish that was shot): clients get
/// `NETSYNC_EVENT_ENTITY_REMOVED` with `NETSYNC_REMOVED_UNREGISTERED`.
/// `NETSYNC_ERR_UNKNOWN_ENTITY` when no live element has that id.
#[no_mangle]
pub extern "C" fn netsync_server_despawn_scripted(
    server: *mut NetsyncServer,
    element_id: u64,
) -> NetsyncResult {
    guard("netsync_server_despawn_scripted", || {
        with_game(server, |g| {
            g.despawn(element_id).map_err(|e| match e {
                SpawnOrStopped::Stopped => FfiError::new(
                    NetsyncResult::NETSYNC_ERR_WRONG_STATE,
                    "the relay thread has stopped",
                ),
                SpawnOrStopped::Spawn(_) => FfiError::new(
                    NetsyncResult::NETSYNC_ERR_UNKNOWN_ENTITY,
                    format!("no live scripted element {element_id}"),
                ),
            })
        })
    })
}

/// Computes every scripted element this server spawned at `server_time`
/// (pass `netsync_server_time`: the clock clients share) into `out` (room
/// for `capacity`), the count to `*out_count`, in id order; elements whose
/// life ended are dropped. Like `netsync_client_tick`:
/// `NETSYNC_ERR_BUFFER_TOO_SMALL` with the needed count.
#[no_mangle]
pub extern "C" fn netsync_server_scripted_tick(
    server: *mut NetsyncServer,
    server_time: f64,
    out: *mut NetsyncTransform,
    capacity: usize,
    out_count: *mut usize,
) -> NetsyncResult {
    guard("netsync_server_scripted_tick", || {
        if out_count.is_null() {
            return Err(FfiError::null("out_count"));
        }
        if capacity > 0 && out.is_null() {
            return Err(FfiError::null("out"));
        }
        if !server_time.is_finite() {
            return Err(FfiError::invalid("server_time must be finite"));
        }
        with_game(server, |g| {
            let mut count = 0usize;
            g.scripted_at(server_time, |id, pose| {
                if count < capacity {
                    // SAFETY: count < capacity and `out` holds `capacity` items.
                    unsafe {
                        out.add(count).write(NetsyncTransform::new(
                            id,
                            &pose,
                            NETSYNC_TRANSFORM_SCRIPTED,
                        ))
                    };
                }
                count += 1;
            });
            // SAFETY: checked for NULL.
            unsafe { out_count.write(count) };
            if count > capacity {
                return Err(FfiError::new(
                    NetsyncResult::NETSYNC_ERR_BUFFER_TOO_SMALL,
                    format!("{count} elements but room for {capacity}; the first {capacity} were written"),
                ));
            }
            Ok(())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spawn_struct_has_the_header_layout() {
        assert_eq!(std::mem::size_of::<NetsyncScriptedSpawn>(), 56);
        assert_eq!(std::mem::align_of::<NetsyncScriptedSpawn>(), 8);
    }
}
