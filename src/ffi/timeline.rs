//! `netsync_timeline_*`: the sync core with no network ("bring your own
//! transport"). Push snapshots as they arrive, tick once per frame.

use super::handles;
use super::result::{guard, guard_void, FfiError, NetsyncResult};
use super::types::{NetsyncSample, NetsyncTransform};
use crate::core::prediction::Order;
use crate::core::smoothing::{SmoothingConfig, SmoothingKind};
use crate::core::timeline::{Mode, Timeline, TimelineConfig, TimelineError};
use crate::core::Sample;

/// Opaque timeline handle. Not thread-safe: calls on one handle must not
/// overlap (overlapping calls fail with `NETSYNC_ERR_BUSY`).
pub struct NetsyncTimeline {
    _private: [u8; 0],
}

const TYPE_NAME: &str = "NetsyncTimeline";

/// Most samples one `netsync_timeline_push` takes.
pub const NETSYNC_MAX_SAMPLES_PER_PUSH: usize = 1 << 20;

/// Interpolation modes (`NetsyncTimelineConfig::mode`, per-entity modes).
pub const NETSYNC_MODE_LITERAL: u32 = 0;
pub const NETSYNC_MODE_ADAPTIVE: u32 = 1;
pub const NETSYNC_MODE_FIXED: u32 = 2;
pub const NETSYNC_MODE_BUFFERED: u32 = 3;
pub const NETSYNC_MODE_PREDICTED: u32 = 4;
/// Per-entity mode: follow the timeline's mode.
pub const NETSYNC_MODE_INHERIT: u32 = 0xFFFF_FFFF;

/// Prediction orders.
pub const NETSYNC_ORDER_FIRST: u32 = 1;
pub const NETSYNC_ORDER_SECOND: u32 = 2;

/// Smoothing curves of predicted mode.
pub const NETSYNC_SMOOTHING_SNAP: u32 = 0;
pub const NETSYNC_SMOOTHING_LINEAR: u32 = 1;
pub const NETSYNC_SMOOTHING_BEZIER: u32 = 2;
pub const NETSYNC_SMOOTHING_EXPONENTIAL: u32 = 3;

/// Timeline settings. Get defaults from `netsync_timeline_config_default`,
/// change fields, pass to `netsync_timeline_new`. Times in seconds.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NetsyncTimelineConfig {
    /// `NETSYNC_MODE_*` of entities without their own mode. Default adaptive.
    pub mode: u32,
    /// Fixed mode: delay behind the estimated server clock. Default 0.1.
    pub fixed_delay: f64,
    /// Literal mode: starting delay (S1's t_delay). Default 0.1.
    pub literal_initial_delay: f64,
    /// Literal mode: frames kept (S1's m), 2..=1024. Default 4.
    pub literal_frames: u32,
    /// Adaptive: share of time allowed past the newest data, [0, 1). Default 0.006.
    pub extrapolation_budget: f64,
    /// Adaptive: history the clock and delay estimates use. Default 20.
    pub estimate_window: f64,
    /// Adaptive: added to the computed delay. Default 0.002.
    pub delay_margin: f64,
    /// Adaptive: bounds of the delay. Defaults 0 and 1.5.
    pub min_delay: f64,
    pub max_delay: f64,
    /// Adaptive/fixed: most the render clock speeds up or slows down, (0, 1). Default 0.1.
    pub max_time_scale: f64,
    /// Adaptive/fixed: time constant of render clock convergence. Default 0.5.
    pub slew_time: f64,
    /// Adaptive/fixed: render clock error that jumps instead of slewing. Default 1.0.
    pub hard_resync: f64,
    /// Adaptive/fixed: longest extrapolation before easing into a hold. Default 0.25.
    pub max_extrapolation: f64,
    /// Adaptive/fixed: time constant of the ease into the hold. Default 0.1.
    pub hold_ease: f64,
    /// Adaptive/fixed: time constant of blending out corrections. Default 0.15.
    pub blend_time: f64,
    /// Adaptive/fixed: corrections larger than this (m) snap. Default 5.
    pub snap_distance: f32,
    /// Buffered: buffer = multiplier x send interval + jitter. Default 2.
    pub buffered_multiplier: f64,
    /// Buffered: time-scale step, (0, 1). Default 0.02.
    pub buffered_time_scale: f64,
    /// Predicted: seconds past the arrival clock to show (one-way latency). Default 0.
    pub prediction_lead: f64,
    /// Predicted: `NETSYNC_ORDER_*`. Default second.
    pub prediction_order: u32,
    /// Predicted: `NETSYNC_SMOOTHING_*`. Default linear.
    pub smoothing_kind: u32,
    /// Predicted: latencies averaged for the smoothing time, 1..=16. Default 8.
    pub smoothing_latency_samples: u32,
    /// Predicted: bounds of the smoothing time. Defaults 0.05 and 0.5.
    pub smoothing_min_time: f32,
    pub smoothing_max_time: f32,
    /// Predicted, exponential: S4's slow-down factor, >= 1. Default 5.
    pub smoothing_slowdown_factor: f32,
    /// Predicted: below this speed the target counts as stopped. Default 0.05.
    pub smoothing_stop_speed: f32,
    /// Predicted: smoothing time factor when stopped, (0, 1]. Default 0.5.
    pub smoothing_stop_time_scale: f32,
    /// Predicted: 1 to face the direction of motion (yaw, forward +Z). Default 0.
    pub smoothing_face_motion: u8,
    /// Predicted: speed above which facing applies. Default 0.2.
    pub smoothing_face_min_speed: f32,
    /// Predicted: the shown object never moves faster than this multiple of
    /// its fastest target speed (no correction looks like a jump); 0 = off.
    /// Default 1.8.
    pub smoothing_max_speed_ratio: f32,
    /// Predicted: corrections larger than this (m) snap. Default 5.
    pub smoothing_snap_distance: f32,
    /// Most samples kept per entity, 2..=4096. Default 64.
    pub max_samples_per_entity: u32,
    /// Most entities, >= 1. Default 1048576.
    pub max_entities: u32,
}

/// Counters and estimates of a timeline.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NetsyncTimelineStats {
    pub entities: u64,
    pub frames: u64,
    pub frames_out_of_order: u64,
    pub samples: u64,
    pub samples_duplicate: u64,
    pub samples_too_old: u64,
    /// Estimated server_time - client_time of the freshest data (s).
    pub clock_offset: f64,
    /// Adaptive target delay behind that clock (s).
    pub target_delay: f64,
    /// Adaptive current delay behind that clock (s).
    pub render_delay: f64,
    /// Adaptive render clock speed (1 = real time).
    pub time_scale: f64,
    pub resyncs: u64,
    /// Estimated interval between server frames (s).
    pub frame_interval: f64,
}

pub(crate) fn mode_from(code: u32) -> Result<Mode, FfiError> {
    Ok(match code {
        NETSYNC_MODE_LITERAL => Mode::Literal,
        NETSYNC_MODE_ADAPTIVE => Mode::Adaptive,
        NETSYNC_MODE_FIXED => Mode::Fixed,
        NETSYNC_MODE_BUFFERED => Mode::Buffered,
        NETSYNC_MODE_PREDICTED => Mode::Predicted,
        _ => {
            return Err(FfiError::invalid(format!(
                "mode {code} is not a NETSYNC_MODE_*"
            )))
        }
    })
}

fn mode_code(mode: Mode) -> u32 {
    match mode {
        Mode::Literal => NETSYNC_MODE_LITERAL,
        Mode::Adaptive => NETSYNC_MODE_ADAPTIVE,
        Mode::Fixed => NETSYNC_MODE_FIXED,
        Mode::Buffered => NETSYNC_MODE_BUFFERED,
        Mode::Predicted => NETSYNC_MODE_PREDICTED,
    }
}

fn smoothing_from(code: u32) -> Result<SmoothingKind, FfiError> {
    Ok(match code {
        NETSYNC_SMOOTHING_SNAP => SmoothingKind::Snap,
        NETSYNC_SMOOTHING_LINEAR => SmoothingKind::Linear,
        NETSYNC_SMOOTHING_BEZIER => SmoothingKind::Bezier,
        NETSYNC_SMOOTHING_EXPONENTIAL => SmoothingKind::Exponential,
        _ => {
            return Err(FfiError::invalid(format!(
                "smoothing_kind {code} is not a NETSYNC_SMOOTHING_*"
            )))
        }
    })
}

pub(crate) fn order_from(code: u32) -> Result<Order, FfiError> {
    match code {
        NETSYNC_ORDER_FIRST => Ok(Order::First),
        NETSYNC_ORDER_SECOND => Ok(Order::Second),
        _ => Err(FfiError::invalid(format!(
            "order {code} is not a NETSYNC_ORDER_*"
        ))),
    }
}

pub(crate) fn order_code(order: Order) -> u32 {
    match order {
        Order::First => NETSYNC_ORDER_FIRST,
        Order::Second => NETSYNC_ORDER_SECOND,
    }
}

impl From<&TimelineConfig> for NetsyncTimelineConfig {
    fn from(c: &TimelineConfig) -> Self {
        let s = &c.smoothing;
        NetsyncTimelineConfig {
            mode: mode_code(c.mode),
            fixed_delay: c.fixed_delay,
            literal_initial_delay: c.literal_initial_delay,
            literal_frames: c.literal_frames as u32,
            extrapolation_budget: c.extrapolation_budget,
            estimate_window: c.estimate_window,
            delay_margin: c.delay_margin,
            min_delay: c.min_delay,
            max_delay: c.max_delay,
            max_time_scale: c.max_time_scale,
            slew_time: c.slew_time,
            hard_resync: c.hard_resync,
            max_extrapolation: c.max_extrapolation,
            hold_ease: c.hold_ease,
            blend_time: c.blend_time,
            snap_distance: c.snap_distance,
            buffered_multiplier: c.buffered_multiplier,
            buffered_time_scale: c.buffered_time_scale,
            prediction_lead: c.prediction_lead,
            prediction_order: order_code(c.prediction_order),
            smoothing_kind: match s.kind {
                SmoothingKind::Snap => NETSYNC_SMOOTHING_SNAP,
                SmoothingKind::Linear => NETSYNC_SMOOTHING_LINEAR,
                SmoothingKind::Bezier => NETSYNC_SMOOTHING_BEZIER,
                SmoothingKind::Exponential => NETSYNC_SMOOTHING_EXPONENTIAL,
            },
            smoothing_latency_samples: s.latency_samples as u32,
            smoothing_min_time: s.min_time,
            smoothing_max_time: s.max_time,
            smoothing_slowdown_factor: s.slowdown_factor,
            smoothing_stop_speed: s.stop_speed,
            smoothing_stop_time_scale: s.stop_time_scale,
            smoothing_face_motion: s.face_motion as u8,
            smoothing_face_min_speed: s.face_min_speed,
            smoothing_max_speed_ratio: s.max_speed_ratio,
            smoothing_snap_distance: s.snap_distance,
            max_samples_per_entity: c.max_samples_per_entity as u32,
            max_entities: c.max_entities.min(u32::MAX as usize) as u32,
        }
    }
}

impl NetsyncTimelineConfig {
    pub(crate) fn to_core(self) -> Result<TimelineConfig, FfiError> {
        if self.smoothing_face_motion > 1 {
            return Err(FfiError::invalid("smoothing_face_motion must be 0 or 1"));
        }
        let config = TimelineConfig {
            mode: mode_from(self.mode)?,
            fixed_delay: self.fixed_delay,
            literal_initial_delay: self.literal_initial_delay,
            literal_frames: self.literal_frames as usize,
            extrapolation_budget: self.extrapolation_budget,
            estimate_window: self.estimate_window,
            delay_margin: self.delay_margin,
            min_delay: self.min_delay,
            max_delay: self.max_delay,
            max_time_scale: self.max_time_scale,
            slew_time: self.slew_time,
            hard_resync: self.hard_resync,
            max_extrapolation: self.max_extrapolation,
            hold_ease: self.hold_ease,
            blend_time: self.blend_time,
            snap_distance: self.snap_distance,
            buffered_multiplier: self.buffered_multiplier,
            buffered_time_scale: self.buffered_time_scale,
            prediction_lead: self.prediction_lead,
            prediction_order: order_from(self.prediction_order)?,
            smoothing: SmoothingConfig {
                kind: smoothing_from(self.smoothing_kind)?,
                latency_samples: self.smoothing_latency_samples as usize,
                min_time: self.smoothing_min_time,
                max_time: self.smoothing_max_time,
                slowdown_factor: self.smoothing_slowdown_factor,
                stop_speed: self.smoothing_stop_speed,
                stop_time_scale: self.smoothing_stop_time_scale,
                face_motion: self.smoothing_face_motion == 1,
                face_min_speed: self.smoothing_face_min_speed,
                max_speed_ratio: self.smoothing_max_speed_ratio,
                snap_distance: self.smoothing_snap_distance,
            },
            max_samples_per_entity: self.max_samples_per_entity as usize,
            max_entities: self.max_entities as usize,
        };
        config.validate().map_err(FfiError::invalid)?;
        Ok(config)
    }
}

/// Owned by the registry behind a `NetsyncTimeline*`.
struct TimelineObject {
    timeline: Timeline,
    scratch: Vec<(u64, Sample)>,
}

fn id(timeline: *const NetsyncTimeline) -> u64 {
    timeline as usize as u64
}

fn core_error(e: TimelineError) -> FfiError {
    let code = match e {
        TimelineError::UnknownEntity(_) => NetsyncResult::NETSYNC_ERR_UNKNOWN_ENTITY,
        TimelineError::TooManyEntities { .. } => NetsyncResult::NETSYNC_ERR_LIMIT,
        _ => NetsyncResult::NETSYNC_ERR_INVALID_ARGUMENT,
    };
    FfiError::new(code, e.to_string())
}

fn with_timeline<R>(
    timeline: *const NetsyncTimeline,
    f: impl FnOnce(&mut TimelineObject) -> Result<R, FfiError>,
) -> Result<R, FfiError> {
    handles::with(id(timeline), TYPE_NAME, f)
}

/// Writes the default settings to `*out`.
#[no_mangle]
pub extern "C" fn netsync_timeline_config_default(
    out: *mut NetsyncTimelineConfig,
) -> NetsyncResult {
    guard("netsync_timeline_config_default", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        // SAFETY: checked for NULL; the caller provides writable storage.
        unsafe { out.write(NetsyncTimelineConfig::from(&TimelineConfig::default())) };
        Ok(())
    })
}

/// Creates a timeline. `config` NULL uses the defaults. On success
/// `*out` receives the handle; free it with `netsync_timeline_free`.
#[no_mangle]
pub extern "C" fn netsync_timeline_new(
    config: *const NetsyncTimelineConfig,
    out: *mut *mut NetsyncTimeline,
) -> NetsyncResult {
    guard("netsync_timeline_new", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let config = if config.is_null() {
            TimelineConfig::default()
        } else {
            // SAFETY: checked for NULL; the caller passes a valid config.
            unsafe { *config }.to_core()?
        };
        let timeline = Timeline::new(config).map_err(FfiError::invalid)?;
        handles::publish(
            out,
            TimelineObject {
                timeline,
                scratch: Vec::new(),
            },
        );
        Ok(())
    })
}

/// Frees a timeline. NULL, or a handle already freed, is a no-op.
#[no_mangle]
pub extern "C" fn netsync_timeline_free(timeline: *mut NetsyncTimeline) {
    guard_void("netsync_timeline_free", || {
        handles::free::<TimelineObject, _>(timeline, TYPE_NAME, "netsync_timeline_free")
    })
}

/// A snapshot stamped `server_time` (server clock, s) arrived at client
/// time `now` (s, a monotonic clock) carrying `count` samples. Entities
/// not in it are taken as unchanged. `samples` may be NULL when `count`
/// is 0 (a heartbeat). Validates everything first: on error nothing changed.
#[no_mangle]
pub extern "C" fn netsync_timeline_push(
    timeline: *mut NetsyncTimeline,
    now: f64,
    server_time: f64,
    samples: *const NetsyncSample,
    count: usize,
) -> NetsyncResult {
    guard("netsync_timeline_push", || {
        if count > 0 && samples.is_null() {
            return Err(FfiError::null("samples"));
        }
        if count > NETSYNC_MAX_SAMPLES_PER_PUSH {
            return Err(FfiError::new(
                NetsyncResult::NETSYNC_ERR_LIMIT,
                format!("count {count} exceeds {NETSYNC_MAX_SAMPLES_PER_PUSH} samples per push"),
            ));
        }
        let input = if count == 0 {
            &[][..]
        } else {
            // SAFETY: non-NULL and the caller guarantees `count` readable items.
            unsafe { std::slice::from_raw_parts(samples, count) }
        };
        with_timeline(timeline, |object| {
            object.scratch.clear();
            for s in input {
                let sample = s.to_core(server_time).map_err(FfiError::invalid)?;
                object.scratch.push((s.entity_id, sample));
            }
            object
                .timeline
                .push_frame(now, server_time, &object.scratch)
                .map_err(core_error)
        })
    })
}

/// Advances to client time `now` (s, monotonic, never before the previous
/// tick) and writes every entity's transform to `out` (room for
/// `capacity`), the count to `*out_count`. When `capacity` is too small it
/// returns `NETSYNC_ERR_BUFFER_TOO_SMALL`, writes the needed count to
/// `*out_count` and changes nothing else. Allocates nothing in steady state.
#[no_mangle]
pub extern "C" fn netsync_timeline_tick(
    timeline: *mut NetsyncTimeline,
    now: f64,
    out: *mut NetsyncTransform,
    capacity: usize,
    out_count: *mut usize,
) -> NetsyncResult {
    guard("netsync_timeline_tick", || {
        if out_count.is_null() {
            return Err(FfiError::null("out_count"));
        }
        if capacity > 0 && out.is_null() {
            return Err(FfiError::null("out"));
        }
        with_timeline(timeline, |object| {
            let needed = object.timeline.len();
            if needed > capacity {
                // SAFETY: checked for NULL.
                unsafe { out_count.write(needed) };
                return Err(FfiError::new(
                    NetsyncResult::NETSYNC_ERR_BUFFER_TOO_SMALL,
                    format!("{needed} entities but room for {capacity}"),
                ));
            }
            let written = object
                .timeline
                .tick_with(now, |i, shown| {
                    // SAFETY: i < len <= capacity, and `out` holds `capacity` items.
                    unsafe {
                        out.add(i).write(NetsyncTransform::new(
                            shown.entity,
                            &shown.pose,
                            shown.flags,
                        ))
                    };
                })
                .map_err(core_error)?;
            // SAFETY: checked for NULL.
            unsafe { out_count.write(written) };
            Ok(())
        })
    })
}

/// Number of entities on the timeline (the capacity a tick needs).
#[no_mangle]
pub extern "C" fn netsync_timeline_entity_count(
    timeline: *const NetsyncTimeline,
    out: *mut usize,
) -> NetsyncResult {
    guard("netsync_timeline_entity_count", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let n = with_timeline(timeline, |object| Ok(object.timeline.len()))?;
        // SAFETY: checked for NULL.
        unsafe { out.write(n) };
        Ok(())
    })
}

/// Removes an entity; `NETSYNC_ERR_UNKNOWN_ENTITY` when it is not there.
#[no_mangle]
pub extern "C" fn netsync_timeline_remove(
    timeline: *mut NetsyncTimeline,
    entity_id: u64,
) -> NetsyncResult {
    guard("netsync_timeline_remove", || {
        with_timeline(timeline, |object| {
            object.timeline.remove(entity_id).map_err(core_error)
        })
    })
}

/// Sets one entity's mode (`NETSYNC_MODE_*`, or `NETSYNC_MODE_INHERIT`).
#[no_mangle]
pub extern "C" fn netsync_timeline_set_entity_mode(
    timeline: *mut NetsyncTimeline,
    entity_id: u64,
    mode: u32,
) -> NetsyncResult {
    guard("netsync_timeline_set_entity_mode", || {
        let mode = match mode {
            NETSYNC_MODE_INHERIT => None,
            code => Some(mode_from(code)?),
        };
        with_timeline(timeline, |object| {
            object
                .timeline
                .set_entity_mode(entity_id, mode)
                .map_err(core_error)
        })
    })
}

/// Sets predicted mode's lead past the arrival clock (s, |lead| <= 10).
#[no_mangle]
pub extern "C" fn netsync_timeline_set_prediction_lead(
    timeline: *mut NetsyncTimeline,
    lead: f64,
) -> NetsyncResult {
    guard("netsync_timeline_set_prediction_lead", || {
        with_timeline(timeline, |object| {
            object
                .timeline
                .set_prediction_lead(lead)
                .map_err(FfiError::invalid)
        })
    })
}

/// Server time (s) that `mode` showed at the last tick.
#[no_mangle]
pub extern "C" fn netsync_timeline_render_time(
    timeline: *const NetsyncTimeline,
    mode: u32,
    out: *mut f64,
) -> NetsyncResult {
    guard("netsync_timeline_render_time", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let mode = mode_from(mode)?;
        let t = with_timeline(timeline, |object| Ok(object.timeline.render_time(mode)))?;
        // SAFETY: checked for NULL.
        unsafe { out.write(t) };
        Ok(())
    })
}

/// Writes the timeline's counters and estimates to `*out`.
#[no_mangle]
pub extern "C" fn netsync_timeline_stats(
    timeline: *const NetsyncTimeline,
    out: *mut NetsyncTimelineStats,
) -> NetsyncResult {
    guard("netsync_timeline_stats", || {
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let s = with_timeline(timeline, |object| Ok(object.timeline.stats()))?;
        let stats = NetsyncTimelineStats {
            entities: s.entities as u64,
            frames: s.frames,
            frames_out_of_order: s.frames_out_of_order,
            samples: s.samples,
            samples_duplicate: s.samples_duplicate,
            samples_too_old: s.samples_too_old,
            clock_offset: s.clock_offset,
            target_delay: s.target_delay,
            render_delay: s.render_delay,
            time_scale: s.time_scale,
            resyncs: s.resyncs,
            frame_interval: s.frame_interval,
        };
        // SAFETY: checked for NULL.
        unsafe { out.write(stats) };
        Ok(())
    })
}
