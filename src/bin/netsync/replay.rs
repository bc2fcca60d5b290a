//! `netsync replay FILE`: summarises a recording and plays it back, one
//! line per second of recording time.

use std::ffi::OsString;
use std::time::{Duration, Instant};

use netsync::core::timeline::shown_flags;
use netsync::replay::{Player, RecordingKind};

use crate::args::value;

const HELP: &str = "\
netsync replay: summarise a recording and play it back

USAGE:
    netsync replay FILE [OPTIONS]

FILE is a recording written by `netsync demo --record`, `netsync relay
--record`, or a game through netsync_client_record (docs/replay.md).
Prints what it holds, then plays it through a timeline as a live client
would, one line per second of recording time: entities shown, how many
were extrapolated or held, and the pose of --entity.

OPTIONS:
    --speed X      Play at X times real time; 0 plays as fast as it can [default: 0]
    --from S       Start at recording time S [default: the start]
    --entity ID    Print this entity's shown position on every line
    --fps N        Ticks per second of recording time [default: 60]
";

pub fn run(args: Vec<OsString>) -> Result<(), String> {
    use lexopt::prelude::*;
    let mut file: Option<String> = None;
    let mut speed = 0.0f64;
    let mut from: Option<f64> = None;
    let mut entity: Option<u64> = None;
    let mut fps = 60.0f64;
    let mut parser = lexopt::Parser::from_args(args);
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Long("speed") => speed = value(&mut parser, "speed")?,
            Long("from") => from = Some(value(&mut parser, "from")?),
            Long("entity") => entity = Some(value(&mut parser, "entity")?),
            Long("fps") => fps = value(&mut parser, "fps")?,
            Long("help") | Short('h') => {
                print!("{HELP}");
                return Ok(());
            }
            Value(v) if file.is_none() => file = Some(v.to_string_lossy().into_owned()),
            other => return Err(format!("{}\n\n{HELP}", other.unexpected())),
        }
    }
    let file = file.ok_or_else(|| format!("which recording?\n\n{HELP}"))?;
    if !(speed.is_finite() && (0.0..=100.0).contains(&speed)) {
        return Err("--speed must be 0..=100".into());
    }
    if !(fps.is_finite() && (1.0..=1000.0).contains(&fps)) {
        return Err("--fps must be 1..=1000".into());
    }
    let mut player = Player::open(std::path::Path::new(&file)).map_err(|e| e.to_string())?;
    let s = player.summary().clone();
    println!("{file}");
    println!(
        "  {} recording{}, format version {}",
        match s.kind {
            RecordingKind::Client => "client",
            RecordingKind::Relay => "relay",
        },
        if s.client_id != 0 {
            format!(" of client id {}", s.client_id)
        } else {
            String::new()
        },
        netsync::replay::format::VERSION
    );
    println!(
        "  {:.2} s .. {:.2} s ({:.1} s), {} entries in {} blocks, {} entities",
        s.start,
        s.end,
        s.end - s.start,
        s.entries,
        s.blocks,
        s.entities
    );
    println!(
        "  {} bytes on disk, {} uncompressed ({:.1}x)",
        s.file_bytes,
        s.raw_bytes,
        s.raw_bytes as f64 / s.file_bytes.max(1) as f64
    );
    for (name, count) in &s.by_type {
        println!("  {count:>9} {name}");
    }
    let start = from.unwrap_or(s.start).max(s.start);
    let step = 1.0 / fps;
    let began = Instant::now();
    let mut t = start;
    let mut next_line = start;
    let mut shown = Vec::new();
    println!(
        "\n  time (s) | shown | extrapolated | held{}",
        if entity.is_some() {
            " | entity position"
        } else {
            ""
        }
    );
    while t <= s.end {
        if speed > 0.0 {
            let due = began + Duration::from_secs_f64((t - start) / speed);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        shown.clear();
        player.tick_at(t, |_, s| shown.push(*s))?;
        if t >= next_line {
            next_line += 1.0;
            let count = |flag: u32| shown.iter().filter(|s| s.flags & flag != 0).count();
            let pose = entity
                .and_then(|e| shown.iter().find(|s| s.entity == e))
                .map_or(String::new(), |s| {
                    let p = s.pose.position;
                    format!(" | ({:.3}, {:.3}, {:.3})", p.x, p.y, p.z)
                });
            println!(
                "  {t:>8.2} | {:>5} | {:>12} | {:>4}{pose}",
                shown.len(),
                count(shown_flags::EXTRAPOLATED),
                count(shown_flags::HELD)
            );
        }
        t += step;
    }
    Ok(())
}
