//! The sans-IO sync core: every algorithm that decides what a player sees,
//! with time passed in. No sockets, threads or clocks live here.

pub mod app_message;
pub mod interpolate;
pub mod pose;
pub mod prediction;
pub mod scripted;
pub mod send_filter;
pub mod smoothing;
pub mod timeline;

pub use pose::{Pose, Sample, SampleFlags};
pub use timeline::{Mode, Timeline, TimelineConfig};
