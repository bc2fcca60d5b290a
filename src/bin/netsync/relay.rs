//! `netsync relay`: the relay server, standalone.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use netsync::server::relay_server::{RelayServer, RelayServerConfig};

use crate::args::{stop_on_ctrl_c, value};

const HELP: &str = "\
netsync relay: the relay server

Admits clients with a challenge handshake, records who owns each entity,
and sends every client the others' states at the send rate. Logs to
stderr; stops cleanly on Ctrl-C. Plain mode: no encryption (LAN, development).

OPTIONS:
    --bind ADDR            Address and port to listen on [default: 0.0.0.0:7777]
    --rate HZ              Snapshot sends per second per client [default: 30]
    --max-clients N        [default: 1024]
    --idle-timeout S       Drop a client silent this long [default: 5]
    --mtu BYTES            Largest datagram payload [default: 1200]
    --config FILE          Read `key = value` lines (bind, rate, max-clients,
                           idle-timeout, mtu); flags after it win
    --duration S           Stop after S seconds (for scripts) [default: run until Ctrl-C]
    -v, --verbose          Debug logging
";

pub fn run(args: Vec<OsString>) -> Result<(), String> {
    use lexopt::prelude::*;
    let mut config = RelayServerConfig::default();
    let mut verbose = false;
    let mut duration: Option<f64> = None;
    let mut parser = lexopt::Parser::from_args(args);
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Long("bind") => config.bind = value(&mut parser, "bind")?,
            Long("rate") => config.relay.send_rate = value(&mut parser, "rate")?,
            Long("max-clients") => config.max_clients = value(&mut parser, "max-clients")?,
            Long("idle-timeout") => config.idle_timeout = value(&mut parser, "idle-timeout")?,
            Long("mtu") => config.relay.mtu = value(&mut parser, "mtu")?,
            Long("duration") => duration = Some(value(&mut parser, "duration")?),
            Long("config") => {
                let path: String = value(&mut parser, "config")?;
                apply_file(&mut config, &path)?;
            }
            Short('v') | Long("verbose") => verbose = true,
            Long("help") | Short('h') => {
                print!("{HELP}");
                return Ok(());
            }
            other => return Err(format!("{}\n\n{HELP}", other.unexpected())),
        }
    }
    validate(&config)?;
    crate::stderr_log::init(verbose);
    let stop = stop_on_ctrl_c()?;
    let relay =
        RelayServer::start(config).map_err(|e| format!("cannot listen on {}: {e}", config.bind))?;
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
                "{} clients, {} entities, {:.1} kB/s out, {} malformed, {} not-owner, {} unadmitted",
                s.relay.clients,
                s.relay.entities,
                s.bytes_sent as f64 / started.elapsed().as_secs_f64() / 1e3,
                s.relay.malformed,
                s.relay.rejected_not_owner,
                s.gate.dropped_unadmitted
            );
        }
    }
    relay.stop();
    Ok(())
}

fn validate(c: &RelayServerConfig) -> Result<(), String> {
    if !(c.relay.send_rate.is_finite() && (1.0..=240.0).contains(&c.relay.send_rate)) {
        return Err("--rate must be 1..=240".into());
    }
    if !(256..=1400).contains(&c.relay.mtu) {
        return Err("--mtu must be 256..=1400".into());
    }
    if c.max_clients == 0 {
        return Err("--max-clients must be >= 1".into());
    }
    if !(c.idle_timeout.is_finite() && (0.5..=600.0).contains(&c.idle_timeout)) {
        return Err("--idle-timeout must be 0.5..=600".into());
    }
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
        let (key, val) = (key.trim(), val.trim());
        let bad = || format!("{path}:{}: `{val}` is not a valid {key}", n + 1);
        match key {
            "bind" => config.bind = val.parse::<SocketAddr>().map_err(|_| bad())?,
            "rate" => config.relay.send_rate = val.parse().map_err(|_| bad())?,
            "max-clients" => config.max_clients = val.parse().map_err(|_| bad())?,
            "idle-timeout" => config.idle_timeout = val.parse().map_err(|_| bad())?,
            "mtu" => config.relay.mtu = val.parse().map_err(|_| bad())?,
            _ => return Err(format!("{path}:{}: unknown key `{key}`", n + 1)),
        }
    }
    Ok(())
}
