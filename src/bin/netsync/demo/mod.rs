//! `netsync demo`: a headless multiplayer physics match on a bad network.
//! An in-process relay (or `--connect` to one) and N clients, each with
//! its own rapier3d world, each driving one ball through a field of
//! neutral obstacles and into a stack; collisions claim send rights
//! through the public client API. At the end: a table per client, a
//! JSON summary and SVG plots in the output folder.

mod agent;
mod metrics;
mod physics;
mod plots;
mod progress;
mod replay_check;
mod report;
mod scene;
mod truth;

use std::collections::HashMap;
use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use netsync::client::{Client, ClientConfig};
use netsync::net::secure::{issue_token, RelaySecret};
use netsync::netsim::NetworkProfile;
use netsync::server::relay_server::{RelayServer, RelayServerConfig};

use crate::args::value;
use agent::{Agent, Recording};
use report::{ClientRow, Summary};

const HELP: &str = "\
netsync demo: a multiplayer physics match on a simulated bad network

Runs a relay and N clients in this process over real UDP on 127.0.0.1,
each client's traffic through the network profile. Every client simulates
its own physics (rapier3d) and drives one ball along a scripted course
through the obstacles; hitting a neutral object claims its send right.
Prints a table per client and writes a summary and plots to --out.

OPTIONS:
    --clients N      Players, 1..=16 [default: 4]
    --objects N      Neutral obstacles besides the 10-box stack, 0..=500 [default: 50]
    --profile NAME   Network profile: LAN, GOOD, AVG, POOR, SPIKY, HOSTILE, NONE [default: AVG]
    --duration S     Seconds of play, 5..=3600 [default: 20]
    --seed N         Seed of the scene and the network [default: 1]
    --out DIR        Output folder [default: netsync-demo]
    --connect ADDR   Use the relay at ADDR (e.g. one `netsync relay` runs)
                     instead of one in this process
    --secure         Secure mode: the relay runs with a fresh secret and each
                     client connects with a connect token (docs/security.md);
                     every datagram is encrypted. Not with --connect
    --record         Record every client (and the in-process relay) to
                     --out/*.nsrec, then replay each client's recording at
                     its tick times and check it shows what it showed live
                     (`netsync replay FILE` plays one back)
";

/// The demo's settings.
#[derive(Clone, Debug)]
pub struct Options {
    pub clients: usize,
    pub objects: usize,
    pub profile: NetworkProfile,
    pub duration: f64,
    pub seed: u64,
    pub out: PathBuf,
    pub connect: Option<SocketAddr>,
    pub record: bool,
    pub secure: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            clients: 4,
            objects: 50,
            profile: NetworkProfile::AVG,
            duration: 20.0,
            seed: 1,
            out: PathBuf::from("netsync-demo"),
            connect: None,
            record: false,
            secure: false,
        }
    }
}

/// Engine frames per second, and physics steps (one per frame).
const FPS: f64 = 60.0;
/// Divergence counts from this time on (connect and settle before).
const WARM_UP: f64 = 4.0;

fn parse(args: Vec<OsString>) -> Result<Option<Options>, String> {
    use lexopt::prelude::*;
    let mut o = Options::default();
    let mut parser = lexopt::Parser::from_args(args);
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Long("clients") => o.clients = value(&mut parser, "clients")?,
            Long("objects") => o.objects = value(&mut parser, "objects")?,
            Long("profile") => {
                let name: String = value(&mut parser, "profile")?;
                o.profile = NetworkProfile::by_name(&name).ok_or_else(|| {
                    format!(
                        "--profile: unknown profile `{name}` (known: {})",
                        NetworkProfile::names()
                    )
                })?;
            }
            Long("duration") => o.duration = value(&mut parser, "duration")?,
            Long("seed") => o.seed = value(&mut parser, "seed")?,
            Long("out") => o.out = PathBuf::from(value::<String>(&mut parser, "out")?),
            Long("connect") => o.connect = Some(value(&mut parser, "connect")?),
            Long("record") => o.record = true,
            Long("secure") => o.secure = true,
            Long("help") | Short('h') => {
                print!("{HELP}");
                return Ok(None);
            }
            other => return Err(format!("{}\n\n{HELP}", other.unexpected())),
        }
    }
    if !(1..=16).contains(&o.clients) {
        return Err("--clients must be 1..=16".into());
    }
    if o.secure && o.connect.is_some() {
        return Err("--secure starts its own relay: it does not go with --connect (give the external relay --secret-file and its clients tokens)".into());
    }
    if o.objects > 500 {
        return Err("--objects must be 0..=500".into());
    }
    if !(o.duration.is_finite() && (5.0..=3600.0).contains(&o.duration)) {
        return Err("--duration must be 5..=3600 s".into());
    }
    Ok(Some(o))
}

pub fn run(args: Vec<OsString>) -> Result<(), String> {
    let Some(options) = parse(args)? else {
        return Ok(());
    };
    let summary = play(&options)?;
    print!("{}", summary.table());
    println!(
        "\n{} send-right changes; plots and summary in {}",
        summary.right_changes,
        options.out.display()
    );
    for r in &summary.replay {
        println!(
            "replay of client {} ({}, {} kB): {} ticks replayed, {} transforms, {} ticks differ",
            r.client,
            r.file,
            r.file_bytes / 1000,
            r.ticks_live,
            r.transforms_compared,
            r.ticks_differing
        );
    }
    if summary.replay.iter().any(|r| r.ticks_differing > 0) {
        return Err("a replay did not reproduce its live run".into());
    }
    Ok(())
}

/// Runs a match and writes its outputs; returns the summary.
pub fn play(o: &Options) -> Result<Summary, String> {
    std::fs::create_dir_all(&o.out)
        .map_err(|e| format!("cannot create {}: {e}", o.out.display()))?;
    let secret = if o.secure {
        Some(RelaySecret::generate().map_err(|e| e.to_string())?)
    } else {
        None
    };
    let relay = match o.connect {
        Some(_) => None,
        None => {
            let config = RelayServerConfig {
                bind: SocketAddr::from(([127, 0, 0, 1], 0)),
                secret,
                ..Default::default()
            };
            let started = if o.record {
                RelayServer::start_recording(config, &o.out.join("relay.nsrec"))
            } else {
                RelayServer::start(config)
            };
            Some(started.map_err(|e| format!("cannot start the relay: {e}"))?)
        }
    };
    let address = o
        .connect
        .or(relay.as_ref().map(RelayServer::local_addr))
        .expect("one or the other");
    let scene = scene::build(o.clients, o.objects, o.seed);
    let dt = 1.0 / FPS;
    let mut agents = Vec::new();
    for i in 0..o.clients {
        let mut config = ClientConfig::new(address);
        if o.profile.name != "NONE" {
            config.conditioner = Some(o.profile);
            config.conditioner_seed = o.seed.wrapping_mul(1000).wrapping_add(i as u64);
        }
        if let Some(secret) = &secret {
            // What a game's backend does for each player.
            let expires = netsync::net::secure::token::unix_now() + 3600;
            let token = issue_token(secret, i as u32 + 1, address, expires)
                .map_err(|e| format!("client {i}: {e}"))?;
            config.token = Some(token);
        }
        let mut client = Client::connect(config).map_err(|e| format!("client {i}: {e}"))?;
        if o.record {
            client
                .record(&recording_path(o, i))
                .map_err(|e| format!("client {i}: {e}"))?;
        }
        let mut agent = Agent::new(i, o.clients, client, &scene, dt as f32);
        agent.keep_digests = o.record;
        agents.push(agent);
    }
    let neutral: Vec<u64> = scene
        .iter()
        .filter(|b| b.player.is_none())
        .map(|b| b.entity)
        .collect();
    let viewer = if o.clients > 1 { 1 } else { 0 };
    // Every object, and the first client's ball, for the paths picture.
    let mut watched = neutral.clone();
    watched.push(scene::player_entity(0));
    let mut truth = truth::Truth::default();
    let mut holders: HashMap<u64, Vec<(f64, u32)>> = HashMap::new();
    let mut bar = progress::Bar::new(o.duration);
    let start = Instant::now();
    let mut frame = 0u64;
    let mut late_frames = 0u64;
    loop {
        // Frames at 60 Hz of real time (the network is real); the engine
        // clock is the real one, as in a game, even when a frame runs late.
        let due = start + Duration::from_secs_f64(frame as f64 * dt);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let now = start.elapsed().as_secs_f64();
        if now >= o.duration {
            break;
        }
        // A frame that starts a whole frame late: the machine is too slow
        // for 60 Hz of this many worlds (debug builds, busy machines).
        if now - frame as f64 * dt > dt {
            late_frames += 1;
        }
        for agent in agents.iter_mut() {
            let tracked: &[u64] = if agent.index == viewer { &watched } else { &[] };
            let mut rec = Recording {
                truth: &mut truth,
                measure_from: WARM_UP,
                tracked,
            };
            agent.frame(now, &mut rec);
        }
        // Who holds what, as the first client hears it from the relay.
        for &e in &neutral {
            if let Some((holder, _)) = agents[0].client.right(e) {
                let changes = holders.entry(e).or_default();
                if changes.last().is_none_or(|&(_, h)| h != holder) {
                    changes.push((now, holder));
                }
            }
        }
        let transfers: u64 = agents.iter().map(|a| a.metrics.transfers_in).sum();
        bar.show(now, transfers);
        frame += 1;
    }
    bar.finish();
    let mut summary = summarize(o, &agents, &holders);
    summary.frames = frame;
    summary.late_frames = late_frames;
    if o.record {
        for agent in agents.iter_mut() {
            agent
                .client
                .stop_recording()
                .map_err(|e| format!("client {}: {e}", agent.index))?;
            summary.replay.push(replay_check::check(
                agent.index,
                &recording_path(o, agent.index),
                &agent.tick_digests,
            )?);
        }
    }
    write_outputs(o, &summary, &agents, &truth, &holders, viewer)?;
    for agent in agents {
        agent.client.close();
    }
    if let Some(r) = relay {
        r.stop();
    }
    Ok(summary)
}

fn recording_path(o: &Options, client: usize) -> PathBuf {
    o.out.join(format!("client-{client}.nsrec"))
}

fn summarize(o: &Options, agents: &[Agent], holders: &HashMap<u64, Vec<(f64, u32)>>) -> Summary {
    let rows = agents
        .iter()
        .map(|a| {
            let s = a.client.stats();
            let m = &a.metrics;
            let delays: Vec<f64> = m.series.iter().filter_map(|b| b.delay()).collect();
            ClientRow {
                client: a.index,
                client_id: s.network.client_id,
                rtt_ms: s.network.clock.rtt * 1e3,
                jitter_ms: s.network.clock.jitter * 1e3,
                render_delay_ms: delays.iter().sum::<f64>() / delays.len().max(1) as f64 * 1e3,
                divergence_rms_m: m.rms(),
                divergence_p99_m: m.quantile(0.99),
                divergence_samples: m.divergence.len(),
                extrapolated_percent: 100.0 * m.extrapolated_share(),
                up_bytes_per_s: s.network.bytes_sent as f64 / o.duration,
                down_bytes_per_s: s.network.bytes_received as f64 / o.duration,
                transfers: m.transfers_in,
                refused: m.refused,
                claims: m.claims,
                worst_objects: m.worst_objects(3),
            }
        })
        .collect();
    Summary {
        profile: o.profile.name.to_string(),
        clients: o.clients,
        objects: o.objects,
        duration_s: o.duration,
        seed: o.seed,
        rows,
        right_changes: holders
            .values()
            .map(|c| c.len().saturating_sub(1) as u64)
            .sum(),
        frames: 0,
        late_frames: 0,
        replay: Vec::new(),
    }
}

fn write_outputs(
    o: &Options,
    summary: &Summary,
    agents: &[Agent],
    truth: &truth::Truth,
    holders: &HashMap<u64, Vec<(f64, u32)>>,
    viewer: usize,
) -> Result<(), String> {
    let write = |name: &str, text: String| {
        let path = o.out.join(name);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    write("summary.json", summary.json())?;
    write(
        "report.md",
        format!(
            "# netsync demo\n\n{} clients, {} obstacles and a 10-box stack, profile {}, {} s, seed {}.\n\n{}\n{} send-right changes.\n",
            o.clients, o.objects, summary.profile, o.duration, o.seed, summary.table(), summary.right_changes
        ),
    )?;
    let metrics: Vec<&metrics::Metrics> = agents.iter().map(|a| &a.metrics).collect();
    let mut csv = String::from("client,time_s,divergence_rms_m,render_delay_s\n");
    for (i, m) in metrics.iter().enumerate() {
        for (k, b) in m.series.iter().enumerate() {
            let t = (k as f64 + 0.5) * metrics::BUCKET;
            let f = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.5}"));
            csv.push_str(&format!("{i},{t:.2},{},{}\n", f(b.rms()), f(b.delay())));
        }
    }
    write("series.csv", csv)?;
    plots::divergence(&o.out.join("divergence.svg"), &metrics)?;
    plots::render_delay(&o.out.join("render_delay.svg"), &metrics)?;
    // The first client's ball and the two objects that travelled furthest.
    let travelled = |e: u64| -> f32 {
        truth
            .path(e)
            .windows(2)
            .map(|w| w[0].1.distance(w[1].1))
            .sum()
    };
    let mut furthest: Vec<(u64, f32)> = holders.keys().map(|&e| (e, travelled(e))).collect();
    furthest.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut shown_entities = vec![scene::player_entity(0)];
    shown_entities.extend(furthest.iter().take(2).map(|f| f.0));
    let tracked: Vec<_> = shown_entities
        .iter()
        .map(|&e| {
            let shown = agents[viewer]
                .shown_paths
                .iter()
                .filter(|p| p.0 == e)
                .map(|p| (p.1, p.2))
                .collect();
            plots::TrackedPath {
                entity: e,
                truth: truth.path(e),
                shown,
            }
        })
        .collect();
    plots::paths(&o.out.join("paths.svg"), &tracked, scene::ARENA)?;
    // The objects that changed hands most.
    let mut busiest: Vec<(u64, usize)> = holders.iter().map(|(&e, c)| (e, c.len())).collect();
    busiest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut rows: Vec<(u64, Vec<(f64, u32)>)> = busiest
        .iter()
        .take(16)
        .map(|&(e, _)| (e, holders[&e].clone()))
        .collect();
    rows.sort_by_key(|r| r.0);
    let ids: Vec<u32> = summary.rows.iter().map(|r| r.client_id).collect();
    plots::rights(&o.out.join("rights.svg"), &rows, &ids, o.duration)?;
    Ok(())
}
