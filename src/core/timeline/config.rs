//! Timeline settings: the interpolation mode and the knobs of each mode.

use crate::core::prediction::Order;
use crate::core::smoothing::SmoothingConfig;

/// How a timeline turns buffered samples into the pose shown now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum Mode {
    /// S1 exactly as written: first-packet anchor, delay starting at
    /// `literal_initial_delay`, shrink-only, uncapped linear extrapolation.
    Literal,
    /// Clock offset from many packets, delay following measured jitter and
    /// loss both ways, slewed time, capped extrapolation with smooth hold and
    /// blend-back.
    #[default]
    Adaptive,
    /// Constant delay behind the estimated server clock (`fixed_delay`).
    Fixed,
    /// The common approach of Unity libraries today: a buffer of
    /// 2 x send interval + jitter, +/-2 % time-scale, hold at the newest sample.
    Buffered,
    /// No buffer: dead reckoning to the estimated server time now (plus
    /// `prediction_lead`), corrections smoothed (S3 point 7, S4).
    Predicted,
}

impl Mode {
    pub const ALL: [Mode; 5] = [
        Mode::Literal,
        Mode::Adaptive,
        Mode::Fixed,
        Mode::Buffered,
        Mode::Predicted,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Literal => "literal",
            Mode::Adaptive => "adaptive",
            Mode::Fixed => "fixed",
            Mode::Buffered => "buffered",
            Mode::Predicted => "predicted",
        }
    }

    pub fn parse(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == name)
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// Settings of a [`super::Timeline`]. Times are in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimelineConfig {
    /// Mode of entities that have none of their own.
    pub mode: Mode,

    /// Fixed mode: delay behind the estimated server clock.
    pub fixed_delay: f64,

    /// Literal mode: S1's starting `t_delay`.
    pub literal_initial_delay: f64,
    /// Literal mode: S1's `m`, frames kept in the deque (>= 2).
    pub literal_frames: usize,

    /// Adaptive: share of time the render clock may run past the newest data.
    pub extrapolation_budget: f64,
    /// Adaptive: how much history the delay and clock estimates look at.
    pub estimate_window: f64,
    /// Adaptive: added to the computed delay.
    pub delay_margin: f64,
    /// Adaptive: bounds of the target delay.
    pub min_delay: f64,
    pub max_delay: f64,
    /// Adaptive and fixed: the render clock runs at most this much faster or
    /// slower than real time while it converges on its target (0.1 = 10 %).
    pub max_time_scale: f64,
    /// Adaptive and fixed: time constant of that convergence.
    pub slew_time: f64,
    /// Adaptive and fixed: a render clock further than this from its target
    /// jumps to it at once.
    pub hard_resync: f64,

    /// Adaptive and fixed: extrapolate at most this long past the newest data,
    /// then ease into a hold.
    pub max_extrapolation: f64,
    /// Adaptive and fixed: how long the ease into the hold takes (time constant).
    pub hold_ease: f64,
    /// Adaptive and fixed: time constant over which a correction (late data
    /// replacing an extrapolation) is blended out.
    pub blend_time: f64,
    /// Adaptive and fixed: corrections larger than this (m) snap.
    pub snap_distance: f32,

    /// Buffered: buffer = `buffered_multiplier` x send interval + jitter.
    pub buffered_multiplier: f64,
    /// Buffered: time-scale step when behind or ahead (0.02 = 2 %).
    pub buffered_time_scale: f64,

    /// Predicted: how far past the estimated arrival clock to show
    /// (one-way latency when known, 0 otherwise).
    pub prediction_lead: f64,
    /// Predicted: prediction order.
    pub prediction_order: Order,
    /// Predicted: how corrections are smoothed.
    pub smoothing: SmoothingConfig,

    /// Most samples kept per entity.
    pub max_samples_per_entity: usize,
    /// Most entities a timeline holds.
    pub max_entities: usize,
}

impl Default for TimelineConfig {
    fn default() -> Self {
        TimelineConfig {
            mode: Mode::Adaptive,
            fixed_delay: 0.1,
            literal_initial_delay: 0.1,
            literal_frames: 4,
            extrapolation_budget: 0.006,
            estimate_window: 20.0,
            delay_margin: 0.002,
            min_delay: 0.0,
            max_delay: 1.5,
            max_time_scale: 0.1,
            slew_time: 0.5,
            hard_resync: 1.0,
            max_extrapolation: 0.25,
            hold_ease: 0.1,
            blend_time: 0.15,
            snap_distance: 5.0,
            buffered_multiplier: 2.0,
            buffered_time_scale: 0.02,
            prediction_lead: 0.0,
            prediction_order: Order::Second,
            smoothing: SmoothingConfig::default(),
            max_samples_per_entity: 64,
            max_entities: 1 << 20,
        }
    }
}

impl TimelineConfig {
    /// Checks every range; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        let non_neg = |name: &str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(format!("{name} must be finite and >= 0 (got {v})"))
            }
        };
        let pos = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(format!("{name} must be finite and > 0 (got {v})"))
            }
        };
        non_neg("fixed_delay", self.fixed_delay)?;
        non_neg("literal_initial_delay", self.literal_initial_delay)?;
        if self.literal_frames < 2 || self.literal_frames > 1024 {
            return Err("literal_frames must be 2..=1024".into());
        }
        if !(self.extrapolation_budget >= 0.0 && self.extrapolation_budget < 1.0) {
            return Err("extrapolation_budget must be in [0, 1)".into());
        }
        pos("estimate_window", self.estimate_window)?;
        non_neg("delay_margin", self.delay_margin)?;
        non_neg("min_delay", self.min_delay)?;
        non_neg("max_delay", self.max_delay)?;
        if self.max_delay < self.min_delay {
            return Err("max_delay must be >= min_delay".into());
        }
        if !(self.max_time_scale > 0.0 && self.max_time_scale < 1.0) {
            return Err("max_time_scale must be in (0, 1)".into());
        }
        pos("slew_time", self.slew_time)?;
        pos("hard_resync", self.hard_resync)?;
        non_neg("max_extrapolation", self.max_extrapolation)?;
        pos("hold_ease", self.hold_ease)?;
        pos("blend_time", self.blend_time)?;
        if !(self.snap_distance.is_finite() && self.snap_distance > 0.0) {
            return Err("snap_distance must be finite and > 0".into());
        }
        pos("buffered_multiplier", self.buffered_multiplier)?;
        if !(self.buffered_time_scale > 0.0 && self.buffered_time_scale < 1.0) {
            return Err("buffered_time_scale must be in (0, 1)".into());
        }
        if !self.prediction_lead.is_finite() || self.prediction_lead.abs() > 10.0 {
            return Err("prediction_lead must be within +/-10 s".into());
        }
        self.smoothing.validate()?;
        if !(2..=4096).contains(&self.max_samples_per_entity) {
            return Err("max_samples_per_entity must be 2..=4096".into());
        }
        if self.max_entities == 0 {
            return Err("max_entities must be > 0".into());
        }
        Ok(())
    }
}
