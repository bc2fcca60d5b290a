//! Interest management and local prediction (S2) through the C ABI.

use super::client::{client_error, with_client, NetsyncClient};
use super::result::{guard, FfiError, NetsyncResult};
use super::types::NetsyncSample;
use crate::wire::message::{InterestSpec, MAX_REGIONS};

/// `netsync_client_set_interest` flag: see every entity (a spectator or
/// game-master view); areas are then ignored, device class still applies.
pub const NETSYNC_INTEREST_GLOBAL_VIEW: u32 = 1;
/// Most region ids one client may subscribe to.
pub const NETSYNC_MAX_REGIONS: usize = 192;
// A literal above so that cbindgen writes a number into the header.
const _: () = assert!(NETSYNC_MAX_REGIONS == MAX_REGIONS);

/// What this client hears about. Until it is called a client sees
/// everything. Without `NETSYNC_INTEREST_GLOBAL_VIEW` it sees entities in
/// grid cells within `radius` cells (0: the same cell) of the entities it
/// controls, on the relay's grid (x-z plane, `cell_size` metres), plus
/// entities placed in any of the `region_count` region ids at `regions`
/// (non-zero). `device_class` is compared with each entity's least class.
/// Entities leaving the interest give ENTITY_REMOVED with
/// `NETSYNC_REMOVED_OUT_OF_INTEREST`; entering ones arrive with full
/// state. Commands are never filtered.
#[no_mangle]
pub extern "C" fn netsync_client_set_interest(
    client: *mut NetsyncClient,
    flags: u32,
    device_class: u8,
    radius: u32,
    regions: *const u32,
    region_count: usize,
) -> NetsyncResult {
    guard("netsync_client_set_interest", || {
        if flags & !NETSYNC_INTEREST_GLOBAL_VIEW != 0 {
            return Err(FfiError::invalid(format!(
                "unknown interest flag bits {flags:#x}"
            )));
        }
        if region_count > MAX_REGIONS {
            return Err(FfiError::invalid(format!(
                "{region_count} regions, at most NETSYNC_MAX_REGIONS ({MAX_REGIONS})"
            )));
        }
        let regions: Vec<u32> = if region_count == 0 {
            Vec::new()
        } else if regions.is_null() {
            return Err(FfiError::null("regions"));
        } else {
            // SAFETY: non-NULL, `region_count` (bounded above) readable items.
            unsafe { std::slice::from_raw_parts(regions, region_count) }.to_vec()
        };
        let spec = InterestSpec {
            global_view: flags & NETSYNC_INTEREST_GLOBAL_VIEW != 0,
            device_class,
            radius,
            regions,
        };
        with_client(client, |c| c.set_interest(spec).map_err(client_error))
    })
}

/// Places an entity this client holds in region `region` (0: matched by
/// its grid cell) and sets the least device class that sees it (0: all).
#[no_mangle]
pub extern "C" fn netsync_client_set_entity_interest(
    client: *mut NetsyncClient,
    entity_id: u64,
    region: u32,
    min_class: u8,
) -> NetsyncResult {
    guard("netsync_client_set_entity_interest", || {
        with_client(client, |c| {
            c.set_entity_interest(entity_id, region, min_class)
                .map_err(client_error)
        })
    })
}

/// Shows `state` for the remote entity `state->entity_id` at once (the
/// expected result of a command this client just sent), dead-reckoned with
/// its velocity, until authoritative state covering this moment is shown;
/// then blends into it without a jump (S2). `now` is the engine clock as
/// passed to tick. `NETSYNC_ERR_WRONG_STATE` for an entity this client
/// simulates itself or before the server clock is known.
#[no_mangle]
pub extern "C" fn netsync_client_predict(
    client: *mut NetsyncClient,
    now: f64,
    state: *const NetsyncSample,
) -> NetsyncResult {
    guard("netsync_client_predict", || {
        if state.is_null() {
            return Err(FfiError::null("state"));
        }
        // SAFETY: checked for NULL.
        let state = unsafe { *state };
        let sample = state.to_core(0.0).map_err(FfiError::invalid)?;
        with_client(client, |c| {
            c.predict(state.entity_id, now, sample)
                .map_err(client_error)
        })
    })
}
