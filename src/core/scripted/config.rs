//! The path configuration of scripted elements (S5), sans-IO: a small
//! line-based text format (docs/scripted-paths.md), parsed and validated
//! with errors that name the line and the field.
//!
//! ```text
//! netsync-paths 1
//! plane xy
//! path 7
//!   speed 2.5
//!   end repeat
//!   segment steps=20 duration=0.05 turn=30 dir=left speed=1 turn_step=1.5 speed_step=0
//! ```
//!
//! Server and clients load the same file; its fingerprint travels with
//! every spawn, so a client with another configuration refuses the
//! element instead of showing it somewhere else.

use std::collections::BTreeMap;
use std::fmt;

/// Largest configuration text (bytes).
pub const MAX_CONFIG_BYTES: usize = 1 << 20;
/// Most paths in one configuration.
pub const MAX_PATHS: usize = 4096;
/// Most segments in one path.
pub const MAX_SEGMENTS: usize = 1024;
/// Most steps in one segment.
pub const MAX_STEPS: u32 = 1_000_000;
/// Shortest and longest step (s).
pub const MIN_STEP_DURATION: f64 = 0.001;
pub const MAX_STEP_DURATION: f64 = 3600.0;
/// Longest path, all segments together (s).
pub const MAX_PATH_DURATION: f64 = 1e7;
/// Largest base speed (m/s) and speed change per step (m/s).
pub const MAX_SPEED: f64 = 10_000.0;
/// Largest speed multiplier.
pub const MAX_SPEED_MULTIPLIER: f64 = 1000.0;
/// Largest turn, at the start of a segment or per step (degrees).
pub const MAX_TURN_DEGREES: f64 = 360.0;

/// The plane elements move on (netsync's frame: Y up).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Plane {
    /// x, y as given; rotation about +Z (2D games). The default.
    Xy,
    /// x on +X, y on +Z, at height 0; rotation about +Y (a 3D ground plane).
    Xz,
}

/// What an element does after the last segment of its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathEnd {
    /// Goes straight on with its final heading and speed (the default).
    Continue,
    /// Stays where the path ended.
    Stop,
    /// Starts the path again from where it is, heading as it heads.
    Repeat,
}

/// One segment: `steps` steps of `step_duration` seconds each. At its
/// start the heading turns by `turn` and the speed becomes the path's
/// speed times `speed`; every step then turns the heading by `turn_step`
/// and changes the speed by `speed_step`, spread evenly over the step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    pub steps: u32,
    /// Seconds per step.
    pub step_duration: f64,
    /// Turn at the segment's start (radians, counter-clockwise positive:
    /// from +X towards the plane's second axis).
    pub turn: f64,
    /// Speed multiplier.
    pub speed: f64,
    /// Turn per step (radians, same sense as `turn`).
    pub turn_step: f64,
    /// Speed change per step (m/s).
    pub speed_step: f64,
}

impl Segment {
    /// Seconds the segment lasts.
    pub fn duration(&self) -> f64 {
        self.steps as f64 * self.step_duration
    }
    /// Turn rate (rad/s).
    pub fn turn_rate(&self) -> f64 {
        self.turn_step / self.step_duration
    }
    /// Acceleration (m/s^2).
    pub fn accel(&self) -> f64 {
        self.speed_step / self.step_duration
    }
}

/// One path.
#[derive(Clone, Debug, PartialEq)]
pub struct Path {
    pub id: u32,
    /// Base speed (m/s) that segment multipliers scale.
    pub speed: f64,
    pub end: PathEnd,
    pub segments: Vec<Segment>,
    /// When each segment starts, from the path's start (s).
    pub(crate) starts: Vec<f64>,
    /// All segments together (s).
    pub(crate) duration: f64,
}

impl Path {
    /// Seconds one run of the path takes.
    pub fn duration(&self) -> f64 {
        self.duration
    }
}

/// A parsed and validated configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptedConfig {
    pub plane: Plane,
    paths: BTreeMap<u32, Path>,
    fingerprint: u64,
}

/// Why a configuration was refused: the line (1-based; 0 for the whole
/// text) and what was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

const SEGMENT_KEYS: &str = "steps, duration, turn, dir, speed, turn_step, speed_step";

fn error(line: usize, message: impl Into<String>) -> ConfigError {
    ConfigError {
        line,
        message: message.into(),
    }
}

/// A finite number within `[min, max]`.
fn number(line: usize, what: &str, text: &str, min: f64, max: f64) -> Result<f64, ConfigError> {
    let v: f64 = text
        .parse()
        .map_err(|_| error(line, format!("{what}: `{text}` is not a number")))?;
    if !v.is_finite() || v < min || v > max {
        return Err(error(
            line,
            format!("{what} must be a finite number in [{min}, {max}], got `{text}`"),
        ));
    }
    Ok(v)
}

fn integer(line: usize, what: &str, text: &str, min: u64, max: u64) -> Result<u64, ConfigError> {
    let v: u64 = text
        .parse()
        .map_err(|_| error(line, format!("{what}: `{text}` is not a whole number")))?;
    if v < min || v > max {
        return Err(error(
            line,
            format!("{what} must be in {min}..={max}, got {v}"),
        ));
    }
    Ok(v)
}

/// A path being read, with the lines its fields came from.
struct Draft {
    line: usize,
    id: u32,
    speed: Option<(usize, f64)>,
    end: Option<PathEnd>,
    segments: Vec<(usize, Segment)>,
}

impl Draft {
    fn finish(self) -> Result<Path, ConfigError> {
        if self.segments.is_empty() {
            return Err(error(
                self.line,
                format!("path {} has no `segment` line", self.id),
            ));
        }
        let speed = self.speed.map_or(1.0, |(_, v)| v);
        let mut starts = Vec::with_capacity(self.segments.len());
        let mut duration = 0.0;
        for (line, s) in &self.segments {
            // The speed changes linearly over a segment: both ends must be
            // non-negative (a closed form cannot bounce at zero).
            let first = speed * s.speed;
            let last = first + s.steps as f64 * s.speed_step;
            if last < 0.0 {
                return Err(error(
                    *line,
                    format!(
                        "segment: the speed would fall below zero ({first} m/s plus {} steps of {} m/s)",
                        s.steps, s.speed_step
                    ),
                ));
            }
            starts.push(duration);
            duration += s.duration();
        }
        if duration > MAX_PATH_DURATION {
            return Err(error(
                self.line,
                format!(
                    "path {} lasts {duration} s, longer than {MAX_PATH_DURATION} s",
                    self.id
                ),
            ));
        }
        Ok(Path {
            id: self.id,
            speed,
            end: self.end.unwrap_or(PathEnd::Continue),
            segments: self.segments.into_iter().map(|(_, s)| s).collect(),
            starts,
            duration,
        })
    }
}

fn parse_segment(line: usize, fields: &[&str]) -> Result<Segment, ConfigError> {
    let mut seen: Vec<&str> = Vec::new();
    let (mut steps, mut duration) = (None, None);
    let (mut turn, mut speed, mut turn_step, mut speed_step) = (0.0, 1.0, 0.0, 0.0);
    let mut sense = 1.0;
    for field in fields {
        let Some((key, value)) = field.split_once('=') else {
            return Err(error(
                line,
                format!("segment: `{field}` is not key=value (keys: {SEGMENT_KEYS})"),
            ));
        };
        if seen.contains(&key) {
            return Err(error(line, format!("segment: `{key}` given twice")));
        }
        seen.push(key);
        let what = format!("segment {key}");
        match key {
            "steps" => steps = Some(integer(line, &what, value, 1, MAX_STEPS as u64)? as u32),
            "duration" => {
                duration = Some(number(
                    line,
                    &what,
                    value,
                    MIN_STEP_DURATION,
                    MAX_STEP_DURATION,
                )?)
            }
            "turn" => turn = number(line, &what, value, -MAX_TURN_DEGREES, MAX_TURN_DEGREES)?,
            "turn_step" => {
                turn_step = number(line, &what, value, -MAX_TURN_DEGREES, MAX_TURN_DEGREES)?
            }
            "speed" => speed = number(line, &what, value, 0.0, MAX_SPEED_MULTIPLIER)?,
            "speed_step" => speed_step = number(line, &what, value, -MAX_SPEED, MAX_SPEED)?,
            "dir" => {
                sense = match value {
                    "left" => 1.0,
                    "right" => -1.0,
                    _ => {
                        return Err(error(
                            line,
                            format!("segment dir must be left or right, got `{value}`"),
                        ))
                    }
                }
            }
            _ => {
                return Err(error(
                    line,
                    format!("segment: unknown key `{key}` (keys: {SEGMENT_KEYS})"),
                ))
            }
        }
    }
    let steps = steps.ok_or_else(|| error(line, "segment: `steps` is required"))?;
    let step_duration = duration.ok_or_else(|| error(line, "segment: `duration` is required"))?;
    Ok(Segment {
        steps,
        step_duration,
        turn: sense * turn.to_radians(),
        speed,
        turn_step: sense * turn_step.to_radians(),
        speed_step,
    })
}

impl ScriptedConfig {
    /// Parses and validates a configuration text.
    pub fn parse(bytes: &[u8]) -> Result<ScriptedConfig, ConfigError> {
        if bytes.len() > MAX_CONFIG_BYTES {
            return Err(error(
                0,
                format!(
                    "configuration of {} bytes is over the limit of {MAX_CONFIG_BYTES}",
                    bytes.len()
                ),
            ));
        }
        let text = std::str::from_utf8(bytes).map_err(|e| {
            let line = 1 + bytes[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            error(line, "not UTF-8 text")
        })?;
        let mut header = false;
        let mut plane: Option<Plane> = None;
        let mut paths: BTreeMap<u32, Path> = BTreeMap::new();
        let mut draft: Option<Draft> = None;
        for (index, raw) in text.split('\n').enumerate() {
            let line = index + 1;
            let content = raw.split('#').next().unwrap_or("");
            let fields: Vec<&str> = content.split_whitespace().collect();
            let Some((&keyword, rest)) = fields.split_first() else {
                continue;
            };
            if !header {
                if keyword != "netsync-paths" {
                    return Err(error(
                        line,
                        "the first line must be `netsync-paths 1` (format and version)",
                    ));
                }
                match rest {
                    ["1"] => header = true,
                    [v] => {
                        return Err(error(
                            line,
                            format!("format version `{v}` is not supported (this library reads 1)"),
                        ))
                    }
                    _ => return Err(error(line, "expected `netsync-paths 1`")),
                }
                continue;
            }
            let one = |what: &str| -> Result<&str, ConfigError> {
                match rest {
                    [v] => Ok(v),
                    _ => Err(error(line, format!("`{keyword}` takes one value: {what}"))),
                }
            };
            match keyword {
                "netsync-paths" => return Err(error(line, "`netsync-paths` given twice")),
                "plane" => {
                    if draft.is_some() || !paths.is_empty() {
                        return Err(error(line, "`plane` must come before the first path"));
                    }
                    if plane.is_some() {
                        return Err(error(line, "`plane` given twice"));
                    }
                    plane = Some(match one("xy or xz")? {
                        "xy" => Plane::Xy,
                        "xz" => Plane::Xz,
                        v => return Err(error(line, format!("plane must be xy or xz, got `{v}`"))),
                    });
                }
                "path" => {
                    if let Some(d) = draft.take() {
                        let p = d.finish()?;
                        paths.insert(p.id, p);
                    }
                    let id = integer(line, "path id", one("its id")?, 1, u32::MAX as u64)? as u32;
                    if paths.contains_key(&id) {
                        return Err(error(line, format!("path {id} is defined twice")));
                    }
                    if paths.len() >= MAX_PATHS {
                        return Err(error(line, format!("more than {MAX_PATHS} paths")));
                    }
                    draft = Some(Draft {
                        line,
                        id,
                        speed: None,
                        end: None,
                        segments: Vec::new(),
                    });
                }
                "speed" | "end" | "segment" => {
                    let Some(d) = draft.as_mut() else {
                        return Err(error(
                            line,
                            format!("`{keyword}` outside a path (start one with `path <id>`)"),
                        ));
                    };
                    match keyword {
                        "speed" => {
                            if d.speed.is_some() {
                                return Err(error(line, "`speed` given twice in this path"));
                            }
                            let v = number(line, "path speed", one("m/s")?, 0.0, MAX_SPEED)?;
                            if v <= 0.0 {
                                return Err(error(line, "path speed must be above 0"));
                            }
                            d.speed = Some((line, v));
                        }
                        "end" => {
                            if d.end.is_some() {
                                return Err(error(line, "`end` given twice in this path"));
                            }
                            d.end = Some(match one("continue, stop or repeat")? {
                                "continue" => PathEnd::Continue,
                                "stop" => PathEnd::Stop,
                                "repeat" => PathEnd::Repeat,
                                v => {
                                    return Err(error(
                                        line,
                                        format!("end must be continue, stop or repeat, got `{v}`"),
                                    ))
                                }
                            });
                        }
                        _ => {
                            if d.segments.len() >= MAX_SEGMENTS {
                                return Err(error(
                                    line,
                                    format!("path {} has more than {MAX_SEGMENTS} segments", d.id),
                                ));
                            }
                            d.segments.push((line, parse_segment(line, rest)?));
                        }
                    }
                }
                other => {
                    return Err(error(
                        line,
                        format!(
                        "unknown keyword `{other}` (expected plane, path, speed, end or segment)"
                    ),
                    ))
                }
            }
        }
        if !header {
            return Err(error(0, "empty configuration: expected `netsync-paths 1`"));
        }
        if let Some(d) = draft.take() {
            let p = d.finish()?;
            paths.insert(p.id, p);
        }
        if paths.is_empty() {
            return Err(error(0, "the configuration defines no path"));
        }
        let plane = plane.unwrap_or(Plane::Xy);
        let fingerprint = fingerprint(plane, &paths);
        Ok(ScriptedConfig {
            plane,
            paths,
            fingerprint,
        })
    }

    pub fn path(&self, id: u32) -> Option<&Path> {
        self.paths.get(&id)
    }

    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.paths.values()
    }

    pub fn len(&self) -> usize {
        self.paths.len()
    }

    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// A hash of every value that shapes a motion (not of the text: comments
    /// and spacing do not count). Equal on every machine for equal paths.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

/// FNV-1a over the values in a fixed order (exact bits of every float).
fn fingerprint(plane: Plane, paths: &BTreeMap<u32, Path>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(b"netsync-paths 1");
    eat(&[plane as u8]);
    for p in paths.values() {
        eat(&p.id.to_le_bytes());
        eat(&p.speed.to_bits().to_le_bytes());
        eat(&[p.end as u8]);
        eat(&(p.segments.len() as u32).to_le_bytes());
        for s in &p.segments {
            eat(&s.steps.to_le_bytes());
            for v in [s.step_duration, s.turn, s.speed, s.turn_step, s.speed_step] {
                eat(&v.to_bits().to_le_bytes());
            }
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "\
# fish paths
netsync-paths 1
plane xz

path 7            # a lazy circle
  speed 2.5
  end repeat
  segment steps=20 duration=0.05 turn=30 dir=left speed=1 turn_step=1.5 speed_step=0
  segment steps=10 duration=0.1 dir=right turn_step=3

path 8
  segment steps=1 duration=1
";

    fn err(text: &str) -> ConfigError {
        ScriptedConfig::parse(text.as_bytes()).expect_err("should be refused")
    }

    #[test]
    fn a_documented_example_parses_with_defaults_and_signs() {
        let c = ScriptedConfig::parse(GOOD.as_bytes()).unwrap();
        assert_eq!(c.plane, Plane::Xz);
        assert_eq!(c.len(), 2);
        let p = c.path(7).unwrap();
        assert_eq!((p.speed, p.end), (2.5, PathEnd::Repeat));
        assert_eq!(p.segments.len(), 2);
        assert!((p.segments[0].turn - 30f64.to_radians()).abs() < 1e-15);
        assert!((p.segments[1].turn_step + 3f64.to_radians()).abs() < 1e-15);
        assert_eq!(p.segments[1].speed, 1.0);
        assert!((p.duration() - 2.0).abs() < 1e-12);
        assert_eq!(p.starts, vec![0.0, 1.0]);
        let q = c.path(8).unwrap();
        assert_eq!((q.speed, q.end), (1.0, PathEnd::Continue));
        // CRLF line ends and tabs are fine.
        let crlf = GOOD.replace('\n', "\r\n").replace("  ", "\t");
        assert_eq!(ScriptedConfig::parse(crlf.as_bytes()).unwrap(), c);
    }

    #[test]
    fn the_fingerprint_follows_values_not_text() {
        let a = ScriptedConfig::parse(GOOD.as_bytes()).unwrap();
        let spaced = GOOD
            .replace("# a lazy circle", "")
            .replace("speed 2.5", "speed   2.50");
        let b = ScriptedConfig::parse(spaced.as_bytes()).unwrap();
        assert_eq!(a.fingerprint(), b.fingerprint());
        let changed = GOOD.replace("turn_step=1.5", "turn_step=1.5000001");
        let c = ScriptedConfig::parse(changed.as_bytes()).unwrap();
        assert_ne!(a.fingerprint(), c.fingerprint());
        let plane = GOOD.replace("plane xz", "plane xy");
        assert_ne!(
            a.fingerprint(),
            ScriptedConfig::parse(plane.as_bytes())
                .unwrap()
                .fingerprint()
        );
    }

    #[test]
    fn every_error_names_its_line_and_field() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 0, "empty configuration"),
            ("# only a comment\n", 0, "empty configuration"),
            ("path 1\n", 1, "first line must be `netsync-paths 1`"),
            ("netsync-paths 2\n", 1, "version `2` is not supported"),
            ("netsync-paths\n", 1, "expected `netsync-paths 1`"),
            ("netsync-paths 1\n", 0, "defines no path"),
            ("netsync-paths 1\nnetsync-paths 1\n", 2, "given twice"),
            ("netsync-paths 1\nplane xw\n", 2, "plane must be xy or xz"),
            (
                "netsync-paths 1\nplane xy\nplane xz\n",
                3,
                "`plane` given twice",
            ),
            (
                "netsync-paths 1\npath 1\nsegment steps=1 duration=1\nplane xy\n",
                4,
                "before the first path",
            ),
            (
                "netsync-paths 1\npath 0\n",
                2,
                "path id must be in 1..=4294967295",
            ),
            (
                "netsync-paths 1\npath 4294967296\n",
                2,
                "path id must be in",
            ),
            ("netsync-paths 1\npath x\n", 2, "`x` is not a whole number"),
            ("netsync-paths 1\npath -3\n", 2, "not a whole number"),
            ("netsync-paths 1\npath 1 2\n", 2, "`path` takes one value"),
            (
                "netsync-paths 1\npath 1\n",
                2,
                "path 1 has no `segment` line",
            ),
            (
                "netsync-paths 1\npath 1\nsegment steps=1 duration=1\npath 1\n",
                4,
                "defined twice",
            ),
            ("netsync-paths 1\nspeed 2\n", 2, "outside a path"),
            (
                "netsync-paths 1\nsegment steps=1 duration=1\n",
                2,
                "outside a path",
            ),
            ("netsync-paths 1\npath 1\nspeed 0\n", 3, "above 0"),
            ("netsync-paths 1\npath 1\nspeed nan\n", 3, "finite number"),
            ("netsync-paths 1\npath 1\nspeed inf\n", 3, "finite number"),
            (
                "netsync-paths 1\npath 1\nspeed 1e9\n",
                3,
                "finite number in [0, 10000]",
            ),
            (
                "netsync-paths 1\npath 1\nspeed 1\nspeed 2\n",
                4,
                "`speed` given twice",
            ),
            (
                "netsync-paths 1\npath 1\nend loop\n",
                3,
                "end must be continue, stop or repeat",
            ),
            (
                "netsync-paths 1\npath 1\nend stop\nend stop\n",
                4,
                "`end` given twice",
            ),
            (
                "netsync-paths 1\npath 1\nsegment duration=1\n",
                3,
                "`steps` is required",
            ),
            (
                "netsync-paths 1\npath 1\nsegment steps=1\n",
                3,
                "`duration` is required",
            ),
            (
                "netsync-paths 1\npath 1\nsegment steps=0 duration=1\n",
                3,
                "segment steps must be in 1..=1000000",
            ),
            (
                "netsync-paths 1\npath 1\nsegment steps=1.5 duration=1\n",
                3,
                "not a whole number",
            ),
            (
                "netsync-paths 1\npath 1\nsegment steps=1 duration=0\n",
                3,
                "segment duration must be a finite number in [0.001, 3600]",
            ),
            (
                "netsync-paths 1\npath 1\nsegment steps=1 duration=1 turn=361\n",
                3,
                "segment turn must be",
            ),
            (
                "netsync-paths 1\npath 1\nsegment steps=1 duration=1 turn_step=-400\n",
                3,
                "segment turn_step must be",
            ),
            (
                "netsync-paths 1\npath 1\nsegment steps=1 duration=1 speed=-1\n",
                3,
                "segment speed must be",
            ),
            (
                "netsync-paths 1\npath 1\nsegment steps=1 duration=1 dir=up\n",
                3,
                "dir must be left or right",
            ),
            (
                "netsync-paths 1\npath 1\nsegment steps=1 duration=1 spd=2\n",
                3,
                "unknown key `spd`",
            ),
            (
                "netsync-paths 1\npath 1\nsegment steps=1 duration=1 steps=2\n",
                3,
                "`steps` given twice",
            ),
            (
                "netsync-paths 1\npath 1\nsegment steps 1\n",
                3,
                "`steps` is not key=value",
            ),
            (
                "netsync-paths 1\npath 1\nsegment steps=1 duration=1 speed_step=x\n",
                3,
                "`x` is not a number",
            ),
            (
                "netsync-paths 1\npath 1\nspeed 1\nsegment steps=10 duration=1 speed_step=-0.2\n",
                4,
                "speed would fall below zero",
            ),
            (
                "netsync-paths 1\npath 1\nsegment steps=1 duration=1\nwobble 3\n",
                4,
                "unknown keyword `wobble`",
            ),
            (
                "netsync-paths 1\npath 1\nsegment steps=1000000 duration=3600\n",
                2,
                "longer than",
            ),
        ];
        for (text, line, needle) in cases {
            let e = err(text);
            assert_eq!(e.line, *line, "{text:?}: {e}");
            assert!(e.to_string().contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn bad_bytes_sizes_and_counts_are_refused() {
        let e = ScriptedConfig::parse(b"netsync-paths 1\npath 1\n\xff\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("UTF-8"));
        let big = vec![b'#'; MAX_CONFIG_BYTES + 1];
        assert!(err(std::str::from_utf8(&big).unwrap())
            .message
            .contains("over the limit"));
        let mut many = String::from("netsync-paths 1\npath 1\n");
        for _ in 0..=MAX_SEGMENTS {
            many.push_str("segment steps=1 duration=1\n");
        }
        assert!(err(&many).message.contains("more than 1024 segments"));
        let mut paths = String::from("netsync-paths 1\n");
        for i in 1..=MAX_PATHS + 1 {
            paths.push_str(&format!("path {i}\nsegment steps=1 duration=1\n"));
        }
        assert!(err(&paths).message.contains("more than 4096 paths"));
    }

    #[test]
    fn fuzzed_text_never_panics() {
        let mut rng = fastrand::Rng::with_seed(5);
        let words = [
            "netsync-paths",
            "1",
            "path",
            "segment",
            "speed",
            "end",
            "plane",
            "xy",
            "repeat",
            "steps=",
            "duration=",
            "turn=",
            "dir=left",
            "=",
            "#",
            "\n",
            " ",
            "1e308",
            "-0",
            "0.001",
            "nan",
            "9999999999",
        ];
        for _ in 0..20_000 {
            let mut text = String::from("netsync-paths 1\n");
            for _ in 0..rng.usize(0..30) {
                text.push_str(words[rng.usize(0..words.len())]);
                if rng.bool() {
                    text.push_str(&rng.u32(0..2000).to_string());
                }
                text.push(if rng.u8(0..4) == 0 { '\n' } else { ' ' });
            }
            let _ = ScriptedConfig::parse(text.as_bytes());
        }
    }
}
