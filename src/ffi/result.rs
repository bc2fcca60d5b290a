//! Result codes, the thread-local last error and the panic boundary.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Result of every fallible netsync call. `NETSYNC_OK` is 0; every other
/// value is a distinct failure whose detail `netsync_last_error` gives.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetsyncResult {
    /// Success.
    NETSYNC_OK = 0,
    /// A required pointer was NULL.
    NETSYNC_ERR_NULL_POINTER = 1,
    /// A value was out of range, not finite, or otherwise malformed.
    NETSYNC_ERR_INVALID_ARGUMENT = 2,
    /// The handle is NULL-free but not live: freed, foreign or of another type.
    NETSYNC_ERR_INVALID_HANDLE = 3,
    /// No entity with that id.
    NETSYNC_ERR_UNKNOWN_ENTITY = 4,
    /// The output array is too small; the required count was written.
    NETSYNC_ERR_BUFFER_TOO_SMALL = 5,
    /// The call is not valid in the object's current state.
    NETSYNC_ERR_WRONG_STATE = 6,
    /// Another thread is using this handle right now.
    NETSYNC_ERR_BUSY = 7,
    /// A configured limit (entities, sizes) would be exceeded.
    NETSYNC_ERR_LIMIT = 8,
    /// A bug inside netsync was caught; the handle involved may be unusable.
    NETSYNC_ERR_PANIC = 9,
    /// The operating system refused a socket operation (bind, send).
    NETSYNC_ERR_IO = 10,
    /// The component was never registered on this client.
    NETSYNC_ERR_UNKNOWN_COMPONENT = 11,
    /// The component is registered unsynced: nothing of it leaves the client.
    NETSYNC_ERR_UNSYNCED_COMPONENT = 12,
    /// A payload is larger than `NETSYNC_MAX_PAYLOAD`.
    NETSYNC_ERR_TOO_LARGE = 13,
    /// Only the holder of the entity's send right may do that.
    NETSYNC_ERR_NOT_HELD = 14,
    /// Not a failure: nothing to do yet (lockstep: the next frame is not
    /// confirmed, or the input would run more than the sync interval
    /// ahead). Call again after the next tick. `netsync_last_error` is
    /// left as it was.
    NETSYNC_WAIT = 15,
}

impl NetsyncResult {
    /// Every code, for bindings and tests.
    pub const ALL: [NetsyncResult; 16] = [
        NetsyncResult::NETSYNC_OK,
        NetsyncResult::NETSYNC_ERR_NULL_POINTER,
        NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT,
        NetsyncResult::NETSYNC_ERR_INVALID_HANDLE,
        NetsyncResult::NETSYNC_ERR_UNKNOWN_ENTITY,
        NetsyncResult::NETSYNC_ERR_BUFFER_TOO_SMALL,
        NetsyncResult::NETSYNC_ERR_WRONG_STATE,
        NetsyncResult::NETSYNC_ERR_BUSY,
        NetsyncResult::NETSYNC_ERR_LIMIT,
        NetsyncResult::NETSYNC_ERR_PANIC,
        NetsyncResult::NETSYNC_ERR_IO,
        NetsyncResult::NETSYNC_ERR_UNKNOWN_COMPONENT,
        NetsyncResult::NETSYNC_ERR_UNSYNCED_COMPONENT,
        NetsyncResult::NETSYNC_ERR_TOO_LARGE,
        NetsyncResult::NETSYNC_ERR_NOT_HELD,
        NetsyncResult::NETSYNC_WAIT,
    ];

    fn name(self) -> &'static std::ffi::CStr {
        match self {
            NetsyncResult::NETSYNC_OK => c"NETSYNC_OK",
            NetsyncResult::NETSYNC_ERR_NULL_POINTER => c"NETSYNC_ERR_NULL_POINTER",
            NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT => c"NETSYNC_ERR_INVALID_ARGUMENT",
            NetsyncResult::NETSYNC_ERR_INVALID_HANDLE => c"NETSYNC_ERR_INVALID_HANDLE",
            NetsyncResult::NETSYNC_ERR_UNKNOWN_ENTITY => c"NETSYNC_ERR_UNKNOWN_ENTITY",
            NetsyncResult::NETSYNC_ERR_BUFFER_TOO_SMALL => c"NETSYNC_ERR_BUFFER_TOO_SMALL",
            NetsyncResult::NETSYNC_ERR_WRONG_STATE => c"NETSYNC_ERR_WRONG_STATE",
            NetsyncResult::NETSYNC_ERR_BUSY => c"NETSYNC_ERR_BUSY",
            NetsyncResult::NETSYNC_ERR_LIMIT => c"NETSYNC_ERR_LIMIT",
            NetsyncResult::NETSYNC_ERR_PANIC => c"NETSYNC_ERR_PANIC",
            NetsyncResult::NETSYNC_ERR_IO => c"NETSYNC_ERR_IO",
            NetsyncResult::NETSYNC_ERR_UNKNOWN_COMPONENT => c"NETSYNC_ERR_UNKNOWN_COMPONENT",
            NetsyncResult::NETSYNC_ERR_UNSYNCED_COMPONENT => c"NETSYNC_ERR_UNSYNCED_COMPONENT",
            NetsyncResult::NETSYNC_ERR_TOO_LARGE => c"NETSYNC_ERR_TOO_LARGE",
            NetsyncResult::NETSYNC_ERR_NOT_HELD => c"NETSYNC_ERR_NOT_HELD",
            NetsyncResult::NETSYNC_WAIT => c"NETSYNC_WAIT",
        }
    }
}

/// A failure on its way out through the boundary.
#[derive(Debug)]
pub struct FfiError {
    pub code: NetsyncResult,
    pub message: String,
}

impl FfiError {
    pub fn new(code: NetsyncResult, message: impl Into<String>) -> Self {
        FfiError {
            code,
            message: message.into(),
        }
    }
    pub fn null(what: &str) -> Self {
        Self::new(
            NetsyncResult::NETSYNC_ERR_NULL_POINTER,
            format!("`{what}` is NULL"),
        )
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT, message)
    }
    /// `NETSYNC_WAIT`: not a failure, so it carries no message.
    pub fn wait() -> Self {
        Self::new(NetsyncResult::NETSYNC_WAIT, String::new())
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: String) {
    let c = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

/// Runs `body` inside the panic boundary of export `name`.
pub(crate) fn guard(
    name: &'static str,
    body: impl FnOnce() -> Result<(), FfiError>,
) -> NetsyncResult {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => NetsyncResult::NETSYNC_OK,
        // Waiting is the normal answer of a poll: no log, and the last
        // failure stays readable.
        Ok(Err(e)) if e.code == NetsyncResult::NETSYNC_WAIT => e.code,
        Ok(Err(e)) => {
            log::debug!(target: "netsync::ffi", "{name}: {}", e.message);
            set_last_error(format!("{name}: {}", e.message));
            e.code
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            log::error!(target: "netsync::ffi", "{name}: internal panic: {what}");
            set_last_error(format!("{name}: internal panic: {what}"));
            NetsyncResult::NETSYNC_ERR_PANIC
        }
    }
}

/// Runs `body` inside the panic boundary where the export returns nothing
/// (the `_free` functions): failures are only logged.
pub(crate) fn guard_void(name: &'static str, body: impl FnOnce() -> Result<(), FfiError>) {
    let _ = guard(name, body);
}

/// Static name of a result code ("NETSYNC_OK", ...); "NETSYNC_UNKNOWN"
/// for a value that is not a code. Never NULL, never freed.
#[no_mangle]
pub extern "C" fn netsync_result_str(code: i32) -> *const c_char {
    NetsyncResult::ALL
        .into_iter()
        .find(|r| *r as i32 == code)
        .map_or(c"NETSYNC_UNKNOWN".as_ptr(), |r| r.name().as_ptr())
}

/// Detail of the last failed netsync call on the calling thread, as a
/// NUL-terminated UTF-8 string ("" when none failed yet). The pointer stays
/// valid until the next failing netsync call on this thread; copy it.
#[no_mangle]
pub extern "C" fn netsync_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}
