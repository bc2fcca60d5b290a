//! `netsync netsim`: a UDP proxy that puts any game's traffic through a
//! named network profile.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

use netsync::net::proxy::Proxy;
use netsync::netsim::NetworkProfile;

use crate::args::{stop_on_ctrl_c, value};

const HELP: &str = "\
netsync netsim: network conditioner proxy

Listens on --listen and forwards every datagram to --forward and back,
each direction through the profile's latency, jitter, loss, bursts,
duplication, reordering and stalls. Point your game client at --listen.

OPTIONS:
    --listen ADDR     e.g. 127.0.0.1:7778 (required)
    --forward ADDR    the real server, e.g. 127.0.0.1:7777 (required)
    --profile NAME    LAN, GOOD, AVG, POOR, SPIKY, HOSTILE, NONE [default: AVG]
    --seed N          [default: 1]
";

pub fn run(args: Vec<OsString>) -> Result<(), String> {
    use lexopt::prelude::*;
    let mut listen: Option<SocketAddr> = None;
    let mut forward: Option<SocketAddr> = None;
    let mut profile = NetworkProfile::AVG;
    let mut seed = 1u64;
    let mut parser = lexopt::Parser::from_args(args);
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Long("listen") => listen = Some(value(&mut parser, "listen")?),
            Long("forward") => forward = Some(value(&mut parser, "forward")?),
            Long("profile") => {
                let name: String = value(&mut parser, "profile")?;
                profile = NetworkProfile::by_name(&name).ok_or_else(|| {
                    format!(
                        "unknown profile `{name}`; known: {}",
                        NetworkProfile::names()
                    )
                })?;
            }
            Long("seed") => seed = value(&mut parser, "seed")?,
            Long("help") | Short('h') => {
                print!("{HELP}");
                return Ok(());
            }
            other => return Err(format!("{}\n\n{HELP}", other.unexpected())),
        }
    }
    let listen = listen.ok_or(format!("--listen is required\n\n{HELP}"))?;
    let forward = forward.ok_or(format!("--forward is required\n\n{HELP}"))?;
    crate::stderr_log::init(false);
    let stop = stop_on_ctrl_c()?;
    let mut proxy = Proxy::bind(listen, forward, profile, seed)
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    log::info!(target: "netsync::netsim", "{listen} -> {forward} through {}", profile.name);
    while !stop.load(Ordering::SeqCst) {
        if proxy.poll().map_err(|e| e.to_string())? == 0 {
            std::thread::sleep(Duration::from_micros(300));
        }
    }
    let s = proxy.stats();
    log::info!(target: "netsync::netsim", "stopped: {} to server, {} to clients", s.to_server, s.to_client);
    Ok(())
}
