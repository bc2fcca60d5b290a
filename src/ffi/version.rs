//! ABI version and the test hook for the panic boundary.

use super::result::{guard, NetsyncResult};

/// Major version of the C ABI: bindings refuse a library whose major differs.
pub const NETSYNC_ABI_VERSION_MAJOR: u32 = 0;
/// Minor version. From major 1 on, a minor only adds (old callers keep
/// working); while the major is 0, a minor may also change struct
/// layouts, so bindings require exactly the minor they were made for.
pub const NETSYNC_ABI_VERSION_MINOR: u32 = 9;
/// `(major << 16) | minor`.
pub const NETSYNC_ABI_VERSION: u32 = (NETSYNC_ABI_VERSION_MAJOR << 16) | NETSYNC_ABI_VERSION_MINOR;

/// The ABI version of the loaded library, `(major << 16) | minor`. Compare
/// its major with `NETSYNC_ABI_VERSION_MAJOR` from the header at load.
#[no_mangle]
pub extern "C" fn netsync_abi_version() -> u32 {
    NETSYNC_ABI_VERSION
}

/// Test hook: panics inside the library on purpose and returns what the
/// panic boundary makes of it (always `NETSYNC_ERR_PANIC`). Lets bindings
/// prove that a bug in netsync surfaces as an error, not a crash.
#[no_mangle]
pub extern "C" fn netsync_debug_panic() -> NetsyncResult {
    guard("netsync_debug_panic", || {
        panic!("deliberate panic requested through netsync_debug_panic")
    })
}
