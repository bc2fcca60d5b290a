//! The log sink: everything netsync (and laminar, through `log`) logs
//! reaches one callback the engine sets. Setting or clearing it waits for
//! calls in flight, so after `netsync_set_log_callback(NULL, ...)` returns
//! the old callback is never called again (safe before a domain reload).

use std::cell::Cell;
use std::ffi::{c_char, c_void, CString};
use std::sync::{OnceLock, RwLock};

use super::result::{guard, FfiError, NetsyncResult};

/// Receives one log record. `level`: 1 error, 2 warn, 3 info, 4 debug,
/// 5 trace. `target` and `message` are NUL-terminated UTF-8 valid only
/// during the call. Called from any netsync thread; must not unwind (throw)
/// and must not call `netsync_set_log_callback`.
pub type NetsyncLogCallback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        level: u32,
        target: *const c_char,
        message: *const c_char,
    ),
>;

/// Log levels for `max_level`.
pub const NETSYNC_LOG_OFF: u32 = 0;
pub const NETSYNC_LOG_ERROR: u32 = 1;
pub const NETSYNC_LOG_WARN: u32 = 2;
pub const NETSYNC_LOG_INFO: u32 = 3;
pub const NETSYNC_LOG_DEBUG: u32 = 4;
pub const NETSYNC_LOG_TRACE: u32 = 5;

#[derive(Clone, Copy)]
struct Sink {
    callback: unsafe extern "C" fn(*mut c_void, u32, *const c_char, *const c_char),
    user_data: usize,
}

fn sink() -> &'static RwLock<Option<Sink>> {
    static SINK: OnceLock<RwLock<Option<Sink>>> = OnceLock::new();
    SINK.get_or_init(|| RwLock::new(None))
}

thread_local! {
    static IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
}

struct Bridge;

impl log::Log for Bridge {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record) {
        if !self.enabled(record.metadata()) || IN_CALLBACK.with(|c| c.get()) {
            return;
        }
        let guard = sink().read().unwrap_or_else(|p| p.into_inner());
        let Some(sink) = *guard else { return };
        let text = |s: String| CString::new(s.replace('\0', " ")).unwrap_or_default();
        let target = text(record.target().to_string());
        let message = text(record.args().to_string());
        IN_CALLBACK.with(|c| c.set(true));
        // SAFETY: the engine registered this callback for exactly this call
        // shape; the strings live until it returns.
        unsafe {
            (sink.callback)(
                sink.user_data as *mut c_void,
                record.level() as u32,
                target.as_ptr(),
                message.as_ptr(),
            )
        };
        IN_CALLBACK.with(|c| c.set(false));
    }

    fn flush(&self) {}
}

static BRIDGE: Bridge = Bridge;

fn level_filter(level: u32) -> Option<log::LevelFilter> {
    Some(match level {
        NETSYNC_LOG_OFF => log::LevelFilter::Off,
        NETSYNC_LOG_ERROR => log::LevelFilter::Error,
        NETSYNC_LOG_WARN => log::LevelFilter::Warn,
        NETSYNC_LOG_INFO => log::LevelFilter::Info,
        NETSYNC_LOG_DEBUG => log::LevelFilter::Debug,
        NETSYNC_LOG_TRACE => log::LevelFilter::Trace,
        _ => return None,
    })
}

/// Sets (or with `callback` NULL, clears) the log sink and the most
/// verbose level passed to it (`NETSYNC_LOG_*`). Waits for calls in flight:
/// once it returns, a cleared callback is never called again. Thread-safe.
/// Fails with `NETSYNC_ERR_WRONG_STATE` from inside the callback, or when
/// the host process already installed another `log` logger (Rust hosts).
#[no_mangle]
pub extern "C" fn netsync_set_log_callback(
    callback: NetsyncLogCallback,
    user_data: *mut c_void,
    max_level: u32,
) -> NetsyncResult {
    let user_data = user_data as usize;
    guard("netsync_set_log_callback", || {
        if IN_CALLBACK.with(|c| c.get()) {
            return Err(FfiError::new(
                NetsyncResult::NETSYNC_ERR_WRONG_STATE,
                "cannot change the log callback from inside it",
            ));
        }
        let filter = level_filter(max_level)
            .ok_or_else(|| FfiError::invalid(format!("max_level {max_level} is not 0..=5")))?;
        static INSTALLED: OnceLock<bool> = OnceLock::new();
        let installed = *INSTALLED.get_or_init(|| log::set_logger(&BRIDGE).is_ok());
        if !installed {
            return Err(FfiError::new(
                NetsyncResult::NETSYNC_ERR_WRONG_STATE,
                "another `log` logger is installed in this process; netsync logs go there",
            ));
        }
        let mut slot = sink().write().unwrap_or_else(|p| p.into_inner());
        *slot = callback.map(|callback| Sink {
            callback,
            user_data,
        });
        log::set_max_level(if slot.is_some() {
            filter
        } else {
            log::LevelFilter::Off
        });
        Ok(())
    })
}

/// Sends one record through the log sink (tests and bindings use it to
/// check their callback wiring). `level` as in `NETSYNC_LOG_*`, 1..=5.
#[no_mangle]
pub extern "C" fn netsync_log_message(level: u32, message: *const c_char) -> NetsyncResult {
    guard("netsync_log_message", || {
        if message.is_null() {
            return Err(FfiError::null("message"));
        }
        let level = match level {
            NETSYNC_LOG_ERROR => log::Level::Error,
            NETSYNC_LOG_WARN => log::Level::Warn,
            NETSYNC_LOG_INFO => log::Level::Info,
            NETSYNC_LOG_DEBUG => log::Level::Debug,
            NETSYNC_LOG_TRACE => log::Level::Trace,
            _ => return Err(FfiError::invalid(format!("level {level} is not 1..=5"))),
        };
        // SAFETY: checked for NULL; the caller passes a NUL-terminated string.
        let text = unsafe { std::ffi::CStr::from_ptr(message) }.to_string_lossy();
        log::log!(target: "netsync::host", level, "{text}");
        Ok(())
    })
}
