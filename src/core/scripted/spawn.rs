//! A spawn (S5): which path an element follows, from when, for how long,
//! from where and heading which way. Everything a machine needs to compute
//! the element at any server time; nothing per frame crosses the network.

use std::fmt;

/// Longest life of an element (s): a day.
pub const MAX_LIFE: f64 = 86_400.0;
/// Farthest spawn position from the origin (m).
pub const MAX_COORDINATE: f64 = 1e7;

/// One element's spawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spawn {
    /// Chosen by the server; shares the id space of entities in a tick's
    /// output, so pick ids no entity uses.
    pub element: u64,
    pub path: u32,
    /// Fingerprint of the configuration the server spawned it with.
    pub fingerprint: u64,
    /// Server time the element starts (`bt`; may lie in the future).
    pub start: f64,
    /// How long it lives from `start` (`et`, s).
    pub life: f64,
    /// Where it starts on its plane (m).
    pub x: f64,
    pub y: f64,
    /// Its heading at the start (`rotate`, radians counter-clockwise from +X).
    pub rotate: f64,
}

/// Why a spawn cannot be accepted.
#[derive(Clone, Debug, PartialEq)]
pub enum SpawnError {
    /// A field is not finite or out of its range.
    Invalid(&'static str),
    /// The server has no path configuration loaded.
    NoConfig,
    UnknownPath(u32),
    /// Evaluating it over its life would take more than
    /// [`super::path::MAX_SEGMENT_MOVES`] segment moves (a repeating path
    /// of tiny segments living very long).
    TooLong {
        moves: u64,
    },
    /// Too many live elements.
    Limit(usize),
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpawnError::Invalid(why) => write!(f, "invalid spawn: {why}"),
            SpawnError::NoConfig => write!(f, "no path configuration is loaded"),
            SpawnError::UnknownPath(p) => write!(f, "path {p} is not in the configuration"),
            SpawnError::TooLong { moves } => write!(
                f,
                "the element would need {moves} segment moves over its life (at most {}): shorten its life or lengthen the path's segments",
                super::path::MAX_SEGMENT_MOVES
            ),
            SpawnError::Limit(n) => write!(f, "{n} scripted elements are alive already"),
        }
    }
}

impl std::error::Error for SpawnError {}

impl Spawn {
    /// Server time it expires.
    pub fn end(&self) -> f64 {
        self.start + self.life
    }

    /// Checks the numbers (the path is checked against a configuration
    /// where one is at hand).
    pub fn validate(&self) -> Result<(), SpawnError> {
        let bad = |why| Err(SpawnError::Invalid(why));
        if !self.start.is_finite() || self.start.abs() > 1e12 {
            return bad("start time must be finite");
        }
        if !(self.life.is_finite() && self.life > 0.0 && self.life <= MAX_LIFE) {
            return bad("life time must be above 0 and at most 86400 s");
        }
        if !(self.x.is_finite() && self.y.is_finite())
            || self.x.abs() > MAX_COORDINATE
            || self.y.abs() > MAX_COORDINATE
        {
            return bad("x and y must be finite and within 1e7 m");
        }
        if !self.rotate.is_finite() || self.rotate.abs() > 1e6 {
            return bad("rotate must be finite (radians)");
        }
        if self.path == 0 {
            return bad("path ids start at 1");
        }
        Ok(())
    }
}
