//! The quality benchmark: the same seeded motion sent over the same seeded
//! network traces to every interpolation mode, scored against the truth.
//!
//! Metrics, per mode and profile, over every entity and client frame after
//! a warm-up:
//! - alignment error: shown pose vs the true pose at the render's server time;
//! - presentation error: shown pose vs the true pose now;
//! - render delay: true server time now minus the render time;
//! - extrapolated: frames whose render time is past the newest data;
//! - stalled: frames where the object on screen stands still (moves < 10 %)
//!   while the path at the mode's render time moves;
//! - jumps: frames whose displacement exceeds twice the most the true
//!   object can move in that frame.

pub mod scenario;

mod report;
mod score;
mod trace;

pub use report::{check_targets, table};
pub use trace::{FrameArrival, NetworkTrace};

use crate::core::timeline::{Mode, Timeline, TimelineConfig};
use crate::netsim::NetworkProfile;
use score::Scorer;

/// One column of the comparison: a labelled timeline configuration.
#[derive(Clone, Debug)]
pub struct Contender {
    pub label: String,
    pub config: TimelineConfig,
}

impl Contender {
    pub fn new(label: &str, mode: Mode) -> Self {
        Contender {
            label: label.to_string(),
            config: TimelineConfig {
                mode,
                ..TimelineConfig::default()
            },
        }
    }

    /// literal, adaptive, fixed 100 ms, the buffered baseline, predicted.
    pub fn standard() -> Vec<Contender> {
        vec![
            Contender::new("literal", Mode::Literal),
            Contender::new("adaptive", Mode::Adaptive),
            Contender::new("fixed 100 ms", Mode::Fixed),
            Contender::new("baseline", Mode::Buffered),
            Contender::new("predicted", Mode::Predicted),
        ]
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct QualityConfig {
    pub seed: u64,
    pub entities: usize,
    /// Seconds of simulated play per profile.
    pub duration: f64,
    /// Seconds at the start left out of the figures.
    pub warmup: f64,
    /// Server snapshots per second.
    pub send_rate: f64,
    /// Client frames per second (each frame time varies by +/-15 %, with
    /// occasional hitches).
    pub frame_rate: f64,
    pub profiles: Vec<NetworkProfile>,
    pub contenders: Vec<Contender>,
}

impl Default for QualityConfig {
    fn default() -> Self {
        QualityConfig {
            seed: 1,
            entities: 16,
            duration: 90.0,
            warmup: 5.0,
            send_rate: 20.0,
            frame_rate: 60.0,
            profiles: NetworkProfile::BENCHMARK.to_vec(),
            contenders: Contender::standard(),
        }
    }
}

/// Figures of one contender on one profile.
#[derive(Clone, Debug, Default)]
pub struct ModeResult {
    pub label: String,
    pub align_rms: f64,
    pub align_p99: f64,
    pub present_rms: f64,
    pub present_p99: f64,
    /// Presentation error of the rotation, degrees.
    pub present_angle_rms: f64,
    pub delay_mean: f64,
    pub delay_p99: f64,
    pub extrapolated: f64,
    pub stalled: f64,
    pub jumps: u64,
}

/// Figures of every contender on one profile.
#[derive(Clone, Debug)]
pub struct ProfileResult {
    pub profile: &'static str,
    /// Smallest constant delay that keeps 99 % of this trace's frames
    /// within received data.
    pub hindsight_delay: f64,
    pub modes: Vec<ModeResult>,
}

/// Runs every contender on every profile.
pub fn run(config: &QualityConfig) -> Result<Vec<ProfileResult>, String> {
    if config.entities == 0 || config.duration <= config.warmup || config.send_rate <= 0.0 {
        return Err("need entities > 0, duration > warmup and send_rate > 0".into());
    }
    let paths = scenario::generate(config.seed, config.entities, config.duration + 2.0);
    config
        .profiles
        .iter()
        .enumerate()
        .map(|(i, profile)| {
            let trace =
                NetworkTrace::generate(config, *profile, config.seed ^ (i as u64 + 1) << 32);
            let hindsight_delay = trace.hindsight_delay(config.warmup, 0.99);
            let modes = config
                .contenders
                .iter()
                .map(|c| score(config, &trace, &paths, c))
                .collect::<Result<_, _>>()?;
            Ok(ProfileResult {
                profile: profile.name,
                hindsight_delay,
                modes,
            })
        })
        .collect()
}

fn score(
    config: &QualityConfig,
    trace: &NetworkTrace,
    paths: &[scenario::Trajectory],
    contender: &Contender,
) -> Result<ModeResult, String> {
    let mut timeline = Timeline::new(contender.config)?;
    let mode = contender.config.mode;
    let mut scorer = Scorer::new(paths);
    let mut samples = Vec::with_capacity(paths.len());
    let mut shown = Vec::with_capacity(paths.len());
    let mut next_arrival = 0;
    for &frame in &trace.frames {
        while let Some(a) = trace
            .arrivals
            .get(next_arrival)
            .filter(|a| a.client_time <= frame)
        {
            samples.clear();
            samples.extend(
                paths
                    .iter()
                    .enumerate()
                    .map(|(id, p)| (id as u64, p.sample(a.server_time))),
            );
            timeline
                .push_frame(a.client_time, a.server_time, &samples)
                .map_err(|e| e.to_string())?;
            next_arrival += 1;
        }
        shown.clear();
        timeline
            .tick_with(frame, |_, s| shown.push(*s))
            .map_err(|e| e.to_string())?;
        let true_now = trace.true_time(frame);
        let measuring = true_now >= config.warmup;
        scorer.frame(true_now, timeline.render_time(mode), &shown, measuring);
    }
    Ok(scorer.finish(&contender.label))
}

pub(crate) fn rms(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    (xs.iter().map(|x| x * x).sum::<f64>() / xs.len() as f64).sqrt()
}

/// The `q` quantile (nearest rank); sorts `xs`.
pub fn percentile(xs: &mut [f64], q: f64) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.sort_unstable_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let rank = ((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len());
    xs[rank - 1]
}
