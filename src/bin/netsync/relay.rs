//! `netsync relay`: the relay server, standalone.

use std::ffi::OsString;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use netsync::server::relay_server::{RelayServer, RelayServerConfig, SETTING_NAMES};

use crate::args::{stop_on_ctrl_c, value};

const HELP: &str = "\
netsync relay: the relay server

Admits clients with a challenge handshake, arbitrates who may speak for
each entity, and sends every client the states in its interest at the
send rate. Logs to stderr; stops cleanly on Ctrl-C.

Secure mode with --secret-file: only clients with a connect token issued
with that secret (`netsync token issue`) are admitted, and every datagram
after the handshake is encrypted and authenticated. Without it the relay
runs in plain mode (no authentication, no encryption: LAN, development)
and says so in its log. See docs/security.md.

OPTIONS:
    --bind ADDR                 Address and port [default: 0.0.0.0:7777]
    --secret-file FILE          Secure mode: the relay secret, 64 hex digits
                                (`netsync token new-secret`)
    --public-address ADDR       The address tokens name for this relay
                                [default: the bound address]
    --rate HZ                   Snapshot sends per second per client [default: 30]
    --max-clients N             [default: 1024]
    --max-entities-per-client N [default: 4096]
    --idle-timeout S            Drop a client silent this long [default: 5]
    --mtu BYTES                 Largest datagram payload [default: 1200]
    --budget BYTES              Most snapshot bytes per client per send [default: 19200]
    --cell-size M               Interest grid cell edge, 0 for no grid [default: 50]
    --claim-cooldown S          Claims refused this long after a transfer [default: 0.3]
    --rest-timeout S            A held neutral object silent this long returns
                                to nobody, 0 for never [default: 2]
    --neutral first-ready|nobody
                                First holder of a neutral object [default: first-ready]
    --lockstep-input-delay N    Lockstep: frames between input and its frame [default: 3]
    --lockstep-sync-interval N  Lockstep: how far past the newest confirmed frame
                                input may run [default: 30]
    --lockstep-stall-timeout S  Lockstep: a silent member's input is filled
                                empty after S seconds [default: 1]
    --lockstep-min-members N    Lockstep: members before frame 0 [default: 1]
    --lockstep-max-members N    [default: 16]
    --lockstep-history-frames N Confirmed frames kept for joiners [default: 36000]
    --lockstep-history-bytes N  ... and at most this many bytes of them [default: 16777216]
    --lockstep-hash-window N    Hashes compared up to N frames back [default: 600]
    --config FILE               Read `key = value` lines with the names above
                                (without --); flags after it win
    --record FILE               Record every accepted state, send-right change,
                                removal, command and component state
                                (docs/replay.md)
    --duration S                Stop after S seconds (for scripts) [default: run until Ctrl-C]
    -v, --verbose               Debug logging
";

pub fn run(args: Vec<OsString>) -> Result<(), String> {
    use lexopt::prelude::*;
    let mut config = RelayServerConfig::default();
    let mut verbose = false;
    let mut duration: Option<f64> = None;
    let mut record: Option<std::path::PathBuf> = None;
    let mut parser = lexopt::Parser::from_args(args);
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Long("duration") => duration = Some(value(&mut parser, "duration")?),
            Long("record") => record = Some(value::<String>(&mut parser, "record")?.into()),
            Long("config") => {
                let path: String = value(&mut parser, "config")?;
                apply_file(&mut config, &path)?;
            }
            Short('v') | Long("verbose") => verbose = true,
            Long("help") | Short('h') => {
                print!("{HELP}");
                return Ok(());
            }
            Long(key) if SETTING_NAMES.contains(&key) => {
                let key = key.to_string();
                let raw: String = value(&mut parser, &key)?;
                config
                    .set(&key, &raw)
                    .map_err(|e| format!("--{key}: {e}"))?;
            }
            other => return Err(format!("{}\n\n{HELP}", other.unexpected())),
        }
    }
    config
        .validate()
        .map_err(|e| format!("--{}: must be {}", e.setting, e.rule))?;
    crate::stderr_log::init(verbose);
    let stop = stop_on_ctrl_c()?;
    let relay = match &record {
        Some(path) => RelayServer::start_recording(config, path).map_err(|e| {
            format!(
                "cannot listen on {} and record to {}: {e}",
                config.bind,
                path.display()
            )
        })?,
        None => RelayServer::start(config)
            .map_err(|e| format!("cannot listen on {}: {e}", config.bind))?,
    };
    let started = Instant::now();
    let mut next_report = Duration::from_secs(5);
    while !stop.load(Ordering::SeqCst)
        && duration.is_none_or(|d| started.elapsed().as_secs_f64() < d)
    {
        std::thread::sleep(Duration::from_millis(50));
        if started.elapsed() >= next_report {
            next_report += Duration::from_secs(5);
            let s = relay.stats();
            log::info!(
                target: "netsync::relay",
                "{} clients, {} entities, {:.1} kB/s out, {} malformed, {} not-holder, {} unadmitted, {} claims granted, {} refused",
                s.relay.clients,
                s.relay.entities,
                s.bytes_sent as f64 / started.elapsed().as_secs_f64() / 1e3,
                s.relay.malformed,
                s.relay.rejected_not_owner,
                s.gate.dropped_unadmitted,
                s.relay.claims_granted,
                s.relay.claims_refused,
            );
        }
    }
    relay.stop();
    Ok(())
}

fn apply_file(config: &mut RelayServerConfig, path: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (key, val) = line
            .split_once('=')
            .ok_or_else(|| format!("{path}:{}: expected `key = value`", n + 1))?;
        config
            .set(key.trim(), val.trim())
            .map_err(|e| format!("{path}:{}: {e}", n + 1))?;
    }
    Ok(())
}
