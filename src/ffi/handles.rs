//! Handle registry: the pointers C sees are ids, never addresses, so a
//! freed, foreign or wrong-type handle is detected instead of dereferenced,
//! and ids are never reused (no ABA). Each object sits behind its own mutex
//! taken with `try_lock`: two threads using one handle at once get
//! `NETSYNC_ERR_BUSY` instead of a data race.

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, TryLockError};

use super::result::{FfiError, NetsyncResult};

type Object = Arc<dyn Any + Send + Sync>;

fn registry() -> &'static Mutex<HashMap<u64, Object>> {
    static REGISTRY: OnceLock<Mutex<HashMap<u64, Object>>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(HashMap::new()))
}

// Start far from small integers and step by 16 so that handles look like
// aligned pointers to tools, and a stray small integer is never live.
static NEXT_ID: AtomicU64 = AtomicU64::new(0x1000);

/// Registers `value` and returns its handle id.
pub(crate) fn insert<T: Send + 'static>(value: T) -> u64 {
    let id = NEXT_ID.fetch_add(16, Ordering::Relaxed);
    let object: Object = Arc::new(Mutex::new(value));
    registry()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id, object);
    id
}

fn lookup<T: Send + 'static>(id: u64, type_name: &str) -> Result<Arc<Mutex<T>>, FfiError> {
    if id == 0 {
        return Err(FfiError::null(type_name));
    }
    let object = registry()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&id)
        .cloned()
        .ok_or_else(|| {
            FfiError::new(
                NetsyncResult::NETSYNC_ERR_INVALID_HANDLE,
                format!("{type_name} handle {id:#x} is not live (freed or never created)"),
            )
        })?;
    object.downcast::<Mutex<T>>().map_err(|_| {
        FfiError::new(
            NetsyncResult::NETSYNC_ERR_INVALID_HANDLE,
            format!("handle {id:#x} is not a {type_name}"),
        )
    })
}

/// Runs `f` on the object behind handle `id`.
pub(crate) fn with<T: Send + 'static, R>(
    id: u64,
    type_name: &str,
    f: impl FnOnce(&mut T) -> Result<R, FfiError>,
) -> Result<R, FfiError> {
    let object = lookup::<T>(id, type_name)?;
    let mut guard = match object.try_lock() {
        Ok(g) => g,
        Err(TryLockError::WouldBlock) => {
            return Err(FfiError::new(
                NetsyncResult::NETSYNC_ERR_BUSY,
                format!("{type_name} is in use on another thread"),
            ))
        }
        Err(TryLockError::Poisoned(_)) => {
            return Err(FfiError::new(
                NetsyncResult::NETSYNC_ERR_PANIC,
                format!("{type_name} is unusable after an internal panic; free it"),
            ))
        }
    };
    f(&mut guard)
}

/// Unregisters handle `id`. The object is dropped once no call still uses
/// it. Returns false when the handle was not live.
pub(crate) fn remove<T: Send + 'static>(id: u64, type_name: &str) -> Result<bool, FfiError> {
    let mut map = registry().lock().unwrap_or_else(|p| p.into_inner());
    match map.get(&id) {
        None => Ok(false),
        Some(object) if object.is::<Mutex<T>>() => {
            map.remove(&id);
            Ok(true)
        }
        Some(_) => Err(FfiError::new(
            NetsyncResult::NETSYNC_ERR_INVALID_HANDLE,
            format!("handle {id:#x} is not a {type_name}"),
        )),
    }
}

/// Registers `value` and writes its handle to `*out` (checked for NULL
/// by the caller) as the opaque pointer type `H` the header declares.
pub(crate) fn publish<T: Send + 'static, H>(out: *mut *mut H, value: T) {
    let handle = insert(value);
    // SAFETY: the caller checked `out` for NULL; C owns the storage.
    unsafe { out.write(handle as usize as *mut H) };
}

/// The `_free` functions: NULL and handles no longer live are no-ops
/// (logged), a handle of another type is an error.
pub(crate) fn free<T: Send + 'static, H>(
    handle: *mut H,
    type_name: &str,
    function: &str,
) -> Result<(), FfiError> {
    let id = handle as usize as u64;
    if !handle.is_null() && !remove::<T>(id, type_name)? {
        log::warn!(target: "netsync::ffi", "{function}: handle {id:#x} is not live");
    }
    Ok(())
}

/// Number of live handles of every type (for leak checks in tests).
pub fn live_count() -> usize {
    registry().lock().unwrap_or_else(|p| p.into_inner()).len()
}
