//! `netsync_send_filter_*`: the sender-side filter (send on change, dead
//! reckoning against the last sent state) for owned entities.

use super::handles;
use super::result::{guard, guard_void, FfiError};
use super::timeline::{order_code, order_from};
use super::types::NetsyncSample;
use crate::core::send_filter::{SendDecision, SendFilter, SendFilterConfig, SendPolicy};

/// Opaque send filter handle. Not thread-safe: calls on one handle must not
/// overlap (overlapping calls fail with `NETSYNC_ERR_BUSY`).
pub struct NetsyncSendFilter {
    _private: [u8; 0],
}

const TYPE_NAME: &str = "NetsyncSendFilter";

/// Send policies (`NetsyncSendFilterConfig::policy`).
pub const NETSYNC_SEND_ALWAYS: u32 = 0;
pub const NETSYNC_SEND_ON_CHANGE: u32 = 1;
pub const NETSYNC_SEND_DEAD_RECKONING: u32 = 2;

/// Decisions written by `netsync_send_filter_update`. Only
/// `NETSYNC_DECISION_SKIP` (0) means "do not send".
pub const NETSYNC_DECISION_SKIP: u32 = 0;
pub const NETSYNC_DECISION_FIRST: u32 = 1;
pub const NETSYNC_DECISION_ALWAYS: u32 = 2;
pub const NETSYNC_DECISION_CHANGED: u32 = 3;
pub const NETSYNC_DECISION_HEARTBEAT: u32 = 4;
pub const NETSYNC_DECISION_TELEPORT: u32 = 5;

/// Send filter settings; defaults from `netsync_send_filter_config_default`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NetsyncSendFilterConfig {
    /// `NETSYNC_SEND_*`. Default dead reckoning.
    pub policy: u32,
    /// Position error (m) that triggers a send. Default 0.01.
    pub position_threshold: f32,
    /// Rotation error (rad) that triggers a send. Default 1 degree.
    pub angle_threshold: f32,
    /// Velocity change (m/s or rad/s) that triggers a send (on change). Default 0.05.
    pub velocity_threshold: f32,
    /// Never send more often than this (s). Default 0.
    pub min_interval: f64,
    /// Send at least this often (s), > 0. Default 1.
    pub max_interval: f64,
    /// `NETSYNC_ORDER_*` the receiver predicts with. Default first.
    pub order: u32,
}

impl From<&SendFilterConfig> for NetsyncSendFilterConfig {
    fn from(c: &SendFilterConfig) -> Self {
        NetsyncSendFilterConfig {
            policy: match c.policy {
                SendPolicy::Always => NETSYNC_SEND_ALWAYS,
                SendPolicy::OnChange => NETSYNC_SEND_ON_CHANGE,
                SendPolicy::DeadReckoning => NETSYNC_SEND_DEAD_RECKONING,
            },
            position_threshold: c.position_threshold,
            angle_threshold: c.angle_threshold,
            velocity_threshold: c.velocity_threshold,
            min_interval: c.min_interval,
            max_interval: c.max_interval,
            order: order_code(c.order),
        }
    }
}

impl NetsyncSendFilterConfig {
    pub(crate) fn to_core(self) -> Result<SendFilterConfig, FfiError> {
        let config = SendFilterConfig {
            policy: match self.policy {
                NETSYNC_SEND_ALWAYS => SendPolicy::Always,
                NETSYNC_SEND_ON_CHANGE => SendPolicy::OnChange,
                NETSYNC_SEND_DEAD_RECKONING => SendPolicy::DeadReckoning,
                p => {
                    return Err(FfiError::invalid(format!(
                        "policy {p} is not a NETSYNC_SEND_*"
                    )))
                }
            },
            position_threshold: self.position_threshold,
            angle_threshold: self.angle_threshold,
            velocity_threshold: self.velocity_threshold,
            min_interval: self.min_interval,
            max_interval: self.max_interval,
            order: order_from(self.order)?,
        };
        config.validate().map_err(FfiError::invalid)?;
        Ok(config)
    }
}

fn id(filter: *const NetsyncSendFilter) -> u64 {
    filter as usize as u64
}

/// Writes the default settings to `*out`.
#[no_mangle]
pub extern "C" fn netsync_send_filter_config_default(
    out: *mut NetsyncSendFilterConfig,
) -> super::NetsyncResult {
    guard("netsync_send_filter_config_default", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        // SAFETY: checked for NULL.
        unsafe { out.write(NetsyncSendFilterConfig::from(&SendFilterConfig::default())) };
        Ok(())
    })
}

/// Creates a send filter (`config` NULL: defaults); free it with
/// `netsync_send_filter_free`.
#[no_mangle]
pub extern "C" fn netsync_send_filter_new(
    config: *const NetsyncSendFilterConfig,
    out: *mut *mut NetsyncSendFilter,
) -> super::NetsyncResult {
    guard("netsync_send_filter_new", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let config = if config.is_null() {
            SendFilterConfig::default()
        } else {
            // SAFETY: checked for NULL.
            unsafe { *config }.to_core()?
        };
        handles::publish(out, SendFilter::new(config));
        Ok(())
    })
}

/// Frees a send filter. NULL, or a handle already freed, is a no-op.
#[no_mangle]
pub extern "C" fn netsync_send_filter_free(filter: *mut NetsyncSendFilter) {
    guard_void("netsync_send_filter_free", || {
        handles::free::<SendFilter, _>(filter, TYPE_NAME, "netsync_send_filter_free")
    })
}

/// Feeds the true state of `state->entity_id` at time `now` (s) and writes
/// the decision (`NETSYNC_DECISION_*`; 0 = skip) to `*out_decision`. A
/// decision to send makes this state the reference for the next ones.
#[no_mangle]
pub extern "C" fn netsync_send_filter_update(
    filter: *mut NetsyncSendFilter,
    now: f64,
    state: *const NetsyncSample,
    out_decision: *mut u32,
) -> super::NetsyncResult {
    guard("netsync_send_filter_update", || {
        if state.is_null() {
            return Err(FfiError::null("state"));
        }
        if out_decision.is_null() {
            return Err(FfiError::null("out_decision"));
        }
        if !now.is_finite() {
            return Err(FfiError::invalid("now is not finite"));
        }
        // SAFETY: checked for NULL.
        let state = unsafe { *state };
        let sample = state.to_core(now).map_err(FfiError::invalid)?;
        let decision = handles::with(id(filter), TYPE_NAME, |f: &mut SendFilter| {
            Ok(f.update(now, state.entity_id, &sample))
        })?;
        let code = match decision {
            SendDecision::Skip => NETSYNC_DECISION_SKIP,
            SendDecision::First => NETSYNC_DECISION_FIRST,
            SendDecision::Always => NETSYNC_DECISION_ALWAYS,
            SendDecision::Changed => NETSYNC_DECISION_CHANGED,
            SendDecision::Heartbeat => NETSYNC_DECISION_HEARTBEAT,
            SendDecision::Teleport => NETSYNC_DECISION_TELEPORT,
        };
        // SAFETY: checked for NULL.
        unsafe { out_decision.write(code) };
        Ok(())
    })
}

/// Forgets an entity (its next update is sent);
/// `NETSYNC_ERR_UNKNOWN_ENTITY` when it was not tracked.
#[no_mangle]
pub extern "C" fn netsync_send_filter_forget(
    filter: *mut NetsyncSendFilter,
    entity_id: u64,
) -> super::NetsyncResult {
    guard("netsync_send_filter_forget", || {
        handles::with(id(filter), TYPE_NAME, |f: &mut SendFilter| {
            if f.forget(entity_id) {
                Ok(())
            } else {
                Err(FfiError::new(
                    super::NetsyncResult::NETSYNC_ERR_UNKNOWN_ENTITY,
                    format!("entity {entity_id} is not tracked by this filter"),
                ))
            }
        })
    })
}
