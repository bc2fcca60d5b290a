//! `netsync quality`: runs the quality benchmark and prints the table.

use std::ffi::OsString;

use netsync::netsim::NetworkProfile;
use netsync::quality::{check_targets, run as run_benchmark, table, QualityConfig};

use crate::args::value;

const HELP: &str = "\
netsync quality: interpolation quality benchmark

Sends the same seeded motion over the same seeded network traces to every
interpolation mode (literal, adaptive, fixed 100 ms, the buffered baseline of
today's Unity libraries, predicted) and prints one table.

OPTIONS:
    --profile NAME   One profile (LAN, GOOD, AVG, POOR, SPIKY, HOSTILE, NONE);
                     default: LAN, GOOD, AVG, POOR and SPIKY
    --duration S     Seconds of play per profile [default: 90]
    --entities N     Moving entities [default: 16]
    --send-rate HZ   Server snapshots per second [default: 20]
    --seed N         Seed of motion and network [default: 1]
    --check          Exit non-zero when the adaptive mode misses a target
";

pub fn run(args: Vec<OsString>) -> Result<(), String> {
    use lexopt::prelude::*;
    let mut config = QualityConfig::default();
    let mut check = false;
    let mut parser = lexopt::Parser::from_args(args);
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Long("profile") => {
                let name: String = parser
                    .value()
                    .map_err(|e| e.to_string())?
                    .string()
                    .map_err(|_| "profile name is not text")?;
                let profile = NetworkProfile::by_name(&name).ok_or_else(|| {
                    format!(
                        "unknown profile `{name}`; known: {}",
                        NetworkProfile::names()
                    )
                })?;
                config.profiles = vec![profile];
            }
            Long("duration") => config.duration = value(&mut parser, "duration")?,
            Long("entities") => config.entities = value(&mut parser, "entities")?,
            Long("send-rate") => config.send_rate = value(&mut parser, "send-rate")?,
            Long("seed") => config.seed = value(&mut parser, "seed")?,
            Long("check") => check = true,
            Long("help") | Short('h') => {
                print!("{HELP}");
                return Ok(());
            }
            other => return Err(format!("{}\n\n{HELP}", other.unexpected())),
        }
    }
    if config.entities == 0 || config.entities > 10_000 {
        return Err("--entities must be 1..=10000".into());
    }
    if !(config.duration > config.warmup && config.duration <= 3600.0) {
        return Err(format!("--duration must be in ({}, 3600]", config.warmup));
    }
    if !(config.send_rate >= 1.0 && config.send_rate <= 240.0) {
        return Err("--send-rate must be 1..=240".into());
    }
    eprintln!(
        "netsync quality: {} entities, {} s per profile, {} Hz snapshots, 60 fps client, seed {}",
        config.entities, config.duration, config.send_rate, config.seed
    );
    let results = run_benchmark(&config)?;
    print!("{}", table(&results));
    let missed = check_targets(&results);
    if missed.is_empty() {
        println!("\nadaptive meets every target.");
    } else {
        println!("\ntargets missed:");
        for m in &missed {
            println!("- {m}");
        }
        if check {
            return Err(format!("{} target(s) missed", missed.len()));
        }
    }
    Ok(())
}
