//! Relay throughput on real UDP sockets on loopback: N clients, each
//! owning one entity it sends at 30 Hz, in areas of 10 with interest
//! filters on (each hears its 9 neighbours), against the real relay
//! thread. Prints, for N = 100, 500, 1 000: the relay thread's CPU
//! seconds per second, and the hop latency p50 / p99 / max, both from
//! the relay's send tick to the receiving client ("after tick": what the
//! relay and the network add) and from the owner's send to the receiving
//! client ("end to end": includes waiting for the next 30 Hz tick).
//!
//! The clients are lightweight bots on one thread (one socket each,
//! polled together with epoll): they shake hands with the real
//! handshake, speak laminar's packet format (unreliable state out,
//! reliable keep-alives carrying acks as the client library sends them:
//! an answer to each reliable message, else one every 0.5 s) and decode
//! the relay's snapshots. Each bot sends on a phase of its own, as
//! players' frames do. Running
//! 1 000 full clients, each with its own network thread, would measure
//! the two cores' scheduler, not the relay.
//!
//! With `--flood`, each size runs twice: without and with a flood of
//! handshakes (about 20 000 hellos a second from 64 source ports, from a
//! thread beside the bots) during the measured window, side by side.
//!
//! Run: cargo bench --bench relay_throughput [-- --quick] [--flood]

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use glam::{Quat, Vec3};
use netsync::core::pose::Pose;
use netsync::net::clock::next_in_phase;
use netsync::net::handshake::ClientHandshake;
use netsync::server::relay_server::{RelayServer, RelayServerConfig};
use netsync::wire::message::{entity_kind, EntityUpdate, InterestSpec, Message};
use netsync::wire::quantize::Precision;

/// laminar 0.5's protocol id: CRC-16/X-25 of "laminar-0.1.0".
fn laminar_id() -> u16 {
    let mut crc: u16 = 0xFFFF;
    for &b in b"laminar-0.1.0" {
        crc ^= b as u16;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x8408
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// The area of 10 entity `entity` circles in.
fn area(entity: u64) -> u64 {
    (entity - 1) / 10
}

/// Where entity `entity` is at time `t`: circling in its area (areas
/// 500 m apart, so each bot sees exactly its area).
fn position(entity: u64, t: f64) -> Vec3 {
    let a = t as f32 * 0.5 + entity as f32;
    Vec3::new(
        area(entity) as f32 * 500.0 + 10.0 * a.cos(),
        0.0,
        10.0 * a.sin(),
    )
}

/// One bot client.
struct Bot {
    socket: UdpSocket,
    entity: u64,
    handshake: ClientHandshake,
    admitted: bool,
    /// laminar sequence state: ours, and the newest reliable one received
    /// with the 32 before it.
    seq: u16,
    remote_newest: Option<u16>,
    remote_field: u32,
    /// When its entity's registration and its interest last went (None:
    /// not yet). They go again while snapshots show the relay has not
    /// applied them: the bots do not retransmit lost reliable packets as
    /// laminar does, and a lost interest would leave the bot seeing the
    /// whole world.
    declared_at: Option<f64>,
    /// Per-send counter, as the client library numbers its updates (the
    /// relay takes an equal number as a repeat).
    sends: u8,
    /// When its next state and keep-alive go (s since the run started).
    next_send: f64,
    next_keepalive: f64,
    /// A reliable message of the relay's awaits our ack: answered at the
    /// end of this receive batch, as the client library answers within
    /// 5 ms (a keep-alive from the relay needs none).
    owes_ack: bool,
}

/// The bots' state rate (30 Hz) and idle keep-alive interval, as the
/// client library's (net::ack_pacer): a keep-alive carries the bot's acks
/// of the relay's reliable messages.
const SEND_INTERVAL: f64 = 1.0 / 30.0;
const KEEPALIVE_INTERVAL: f64 = 0.5;

impl Bot {
    /// laminar's header: protocol id, packet type, delivery, ordering
    /// (none: the bots send nothing ordered).
    fn header(&self, reliable: bool) -> Vec<u8> {
        let mut d = laminar_id().to_be_bytes().to_vec();
        d.extend_from_slice(&[0, reliable as u8, 0]);
        d
    }

    fn send_unreliable(&mut self, relay: SocketAddr, payload: &[u8]) {
        let mut d = self.header(false);
        d.extend_from_slice(payload);
        let _ = self.socket.send_to(&d, relay);
    }

    fn send_reliable(&mut self, relay: SocketAddr, payload: &[u8]) {
        let mut d = self.header(true);
        d.extend_from_slice(&self.seq.to_be_bytes());
        self.seq = self.seq.wrapping_add(1);
        d.extend_from_slice(&self.remote_newest.unwrap_or(0).to_be_bytes());
        d.extend_from_slice(&self.remote_field.to_be_bytes());
        d.extend_from_slice(payload);
        let _ = self.socket.send_to(&d, relay);
    }

    /// Registers its entity and declares its interest, in one reliable
    /// packet (the relay drops state for unregistered entities).
    fn declare(&mut self, relay: SocketAddr, t: f64, p: &Precision, interest: &[u8]) {
        self.declared_at = Some(t);
        let register = Message::Register {
            entity: self.entity,
            kind: entity_kind::CONTROLLED,
        }
        .to_bytes(p)
        .unwrap();
        let batch = netsync::wire::batch::pack([register, interest.to_vec()], 1024);
        self.send_reliable(relay, &batch[0]);
    }

    /// Its entity's state at relay time `now`; the first send declares
    /// the entity and the bot's interest before it, as the client library
    /// does.
    fn send_state(&mut self, relay: SocketAddr, t: f64, now: f64, p: &Precision, interest: &[u8]) {
        if self.declared_at.is_none() {
            self.declare(relay, t, p, interest);
        }
        self.sends = self.sends.wrapping_add(1);
        let state = Message::OwnedState {
            server_time: now,
            updates: vec![EntityUpdate {
                entity: self.entity,
                pose: Pose::new(position(self.entity, now), Quat::IDENTITY),
                velocity: Some(Vec3::X),
                angular_velocity: None,
                teleport: false,
                age: 0.0,
                sequence: self.sends,
                epoch: 1,
            }],
        }
        .to_bytes(p)
        .unwrap();
        self.send_unreliable(relay, &state);
    }

    /// Notes a reliable sequence number for our acks.
    fn saw(&mut self, seq: u16) {
        match self.remote_newest {
            None => self.remote_newest = Some(seq),
            Some(newest) => {
                let ahead = seq.wrapping_sub(newest);
                if ahead != 0 && ahead < 0x8000 {
                    self.remote_field = if ahead >= 32 {
                        0
                    } else {
                        (self.remote_field << ahead) | (1 << (ahead - 1))
                    };
                    self.remote_newest = Some(seq);
                } else {
                    let back = newest.wrapping_sub(seq);
                    if (1..=32).contains(&back) {
                        self.remote_field |= 1 << (back - 1);
                    }
                }
            }
        }
    }

    /// The message inside a laminar datagram from the relay, if any.
    fn open<'a>(&mut self, d: &'a [u8]) -> Option<&'a [u8]> {
        if d.len() < 5 || d[2] != 0 {
            return None; // heartbeats, fragments (the relay sends none)
        }
        if d[3] == 0 {
            return Some(&d[5..]);
        }
        let seq = u16::from_be_bytes([*d.get(5)?, *d.get(6)?]);
        self.saw(seq);
        let start = 13 + if d[4] == 0 { 0 } else { 3 };
        let payload = d.get(start..)?;
        let keepalive = Message::decode(payload, &Precision::default());
        self.owes_ack |= !matches!(keepalive, Ok(Message::KeepAlive));
        Some(payload)
    }
}

struct Run {
    clients: usize,
    /// Hellos the flood sent in the window (0: no flood).
    flood_hellos: u64,
    /// Growth of this process's resident memory while the run was up (MB).
    rss_growth_mb: f64,
    relay_cpu: f64,
    /// The relay's send ticks in the window (tick to last datagram sent).
    ticks: netsync::server::relay_server::TickTimes,
    after_tick: Vec<f64>,
    end_to_end: Vec<f64>,
    received: u64,
    expected: u64,
    bots_cpu: f64,
}

fn thread_cpu_seconds(name: &str) -> Option<f64> {
    let tick = 100.0; // USER_HZ on Linux
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path();
        let comm = std::fs::read_to_string(path.join("comm")).ok()?;
        if comm.trim() == name {
            let stat = std::fs::read_to_string(path.join("stat")).ok()?;
            let after = &stat[stat.rfind(')')? + 2..];
            let f: Vec<&str> = after.split_whitespace().collect();
            let utime: f64 = f.get(11)?.parse().ok()?;
            let stime: f64 = f.get(12)?.parse().ok()?;
            return Some((utime + stime) / tick);
        }
    }
    None
}

/// Pins thread `tid` (0: the calling one) to `cpu`; false when the
/// machine refuses (fewer CPUs, a restricted container).
fn pin(tid: i32, cpu: usize) -> bool {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes within it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// Thread id of the thread named `name` in this process.
fn thread_id(name: &str) -> Option<i32> {
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path();
        let comm = std::fs::read_to_string(path.join("comm")).ok()?;
        if comm.trim() == name {
            return path.file_name()?.to_str()?.parse().ok();
        }
    }
    None
}

fn self_thread_cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let Some(end) = stat.rfind(')') else {
        return 0.0;
    };
    let f: Vec<&str> = stat[end + 2..].split_whitespace().collect();
    let get = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (get(11) + get(12)) / 100.0
}

/// Whether runs pin the relay and the bots to a core each (`--shared`
/// leaves them to the scheduler on the same cores).
fn pinned_cpus() -> bool {
    !std::env::args().any(|a| a == "--shared")
}

fn unpin_self() {
    // SAFETY: as in `pin`, with every CPU the machine has.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for cpu in 0..std::thread::available_parallelism().map_or(1, |n| n.get()) {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// This process's resident memory (MB).
fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// Hellos with fresh nonces from 64 sockets until `stop`: a handshake
/// flood from many source ports. Returns how many were sent.
fn flood(relay: SocketAddr, stop: std::sync::Arc<std::sync::atomic::AtomicBool>) -> u64 {
    use netsync::net::handshake::{Handshake, PROTOCOL_VERSION};
    let sockets: Vec<UdpSocket> = (0..64)
        .map(|_| {
            let s = UdpSocket::bind("127.0.0.1:0").expect("bind");
            s.set_nonblocking(true).unwrap();
            s
        })
        .collect();
    let (mut sent, mut nonce) = (0u64, 0u64);
    let mut buf = [0u8; 2048];
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        for s in &sockets {
            nonce += 1;
            let hello = Handshake::Hello {
                version: PROTOCOL_VERSION,
                nonce,
                token: None,
            }
            .encode();
            sent += s.send_to(&hello, relay).is_ok() as u64;
            while s.recv_from(&mut buf).is_ok() {}
        }
        std::thread::sleep(Duration::from_micros(3_000));
    }
    sent
}

fn run(clients: usize, seconds: f64, with_flood: bool) -> Run {
    let rss_before = rss_mb();
    let config = RelayServerConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        max_clients: clients + 16,
        ..Default::default()
    };
    let relay_server = RelayServer::start(config).expect("relay");
    let relay = relay_server.local_addr();
    // A core each, as a relay on its own machine: the relay thread on CPU
    // 0, these bots on CPU 1 (loopback delivery runs on the sender's CPU).
    let pinned =
        pinned_cpus() && thread_id("netsync-relay").is_some_and(|tid| pin(tid, 0)) && pin(0, 1);
    // Same process: the relay's clock as an Instant.
    let relay_epoch = Instant::now() - Duration::from_secs_f64(relay_server.server_time());
    let relay_now = || relay_epoch.elapsed().as_secs_f64();
    let p = Precision::default();
    let mut bots: Vec<Bot> = (0..clients)
        .map(|i| {
            let socket = UdpSocket::bind("127.0.0.1:0").expect("bind");
            socket.set_nonblocking(true).unwrap();
            Bot {
                socket,
                entity: i as u64 + 1,
                handshake: ClientHandshake::start(0x5EED_0000 + i as u64),
                admitted: false,
                seq: 0,
                remote_newest: None,
                remote_field: 0,
                declared_at: None,
                sends: 0,
                // Phases spread evenly over the intervals.
                next_send: SEND_INTERVAL * i as f64 / clients as f64,
                next_keepalive: KEEPALIVE_INTERVAL * i as f64 / clients as f64,
                owes_ack: false,
            }
        })
        .collect();
    let interest = Message::Interest(InterestSpec {
        global_view: false,
        device_class: 0,
        radius: 1,
        regions: vec![],
    })
    .to_bytes(&p)
    .unwrap();
    let keepalive = Message::KeepAlive.to_bytes(&p).unwrap();
    // epoll, not poll(2): the bots' thread shares the machine's two cores
    // with the relay, and scanning a thousand sockets every millisecond
    // cost it more than reading them.
    let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    assert!(epoll >= 0, "epoll_create1");
    for (i, b) in bots.iter().enumerate() {
        let mut interest = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: i as u64,
        };
        let added = unsafe {
            libc::epoll_ctl(
                epoll,
                libc::EPOLL_CTL_ADD,
                b.socket.as_raw_fd(),
                &mut interest,
            )
        };
        assert_eq!(added, 0, "epoll_ctl");
    }
    let mut ready_events = vec![libc::epoll_event { events: 0, u64: 0 }; 1024];
    let warmup = 3.0;
    let start = Instant::now();
    let mut after_tick = Vec::new();
    let mut end_to_end = Vec::new();
    let (mut received, mut sent_in_window, mut redeclared) = (0u64, 0u64, 0u64);
    let mut buf = [0u8; 2048];
    let mut relay_cpu_start = None;
    let mut bots_cpu_start = 0.0;
    let mut ticks_start = None;
    let stop_flood = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut flooder = None;
    loop {
        let t = start.elapsed().as_secs_f64();
        if t >= warmup + seconds {
            break;
        }
        let measuring = t >= warmup;
        if measuring && relay_cpu_start.is_none() {
            relay_cpu_start = thread_cpu_seconds("netsync-relay");
            bots_cpu_start = self_thread_cpu_seconds();
            ticks_start = Some(relay_server.stats().tick_times);
            if std::env::var_os("VERBOSE").is_some() {
                eprintln!(
                    "{clients} clients, warm-up done: relay {:?}",
                    relay_server.stats().relay
                );
            }
            if with_flood {
                let stop = stop_flood.clone();
                flooder = Some(std::thread::spawn(move || flood(relay, stop)));
            }
        }
        // Handshakes, then state at 30 Hz and idle keep-alives.
        for bot in bots.iter_mut().filter(|b| !b.admitted) {
            if let Some(request) = bot.handshake.poll(t) {
                let _ = bot.socket.send_to(&request, relay);
            }
        }
        // Each bot sends on its own phase, as players' frames do: a relay
        // never sees every client's state in the same millisecond.
        let now = relay_now();
        let mut sent_now = 0u64;
        for bot in bots.iter_mut().filter(|b| b.admitted) {
            // After a stall of this thread, each keeps its phase.
            if t >= bot.next_send {
                bot.next_send = next_in_phase(bot.next_send, t, SEND_INTERVAL);
                bot.send_state(relay, t, now, &p, &interest);
                sent_now += 1;
            }
            if t >= bot.next_keepalive {
                bot.next_keepalive = next_in_phase(bot.next_keepalive, t, KEEPALIVE_INTERVAL);
                bot.send_reliable(relay, &keepalive);
            }
        }
        if measuring {
            // Each of the 9 neighbours of every bot should hear it.
            sent_in_window += sent_now * 9;
        }
        // Receive whatever is ready, in 1 ms batches: one epoll_wait per
        // millisecond at most (arrival times are read per datagram, so
        // the batching adds at most 1 ms to a hop).
        let ready = unsafe {
            libc::epoll_wait(
                epoll,
                ready_events.as_mut_ptr(),
                ready_events.len() as libc::c_int,
                1,
            )
        };
        let batch_end = start + Duration::from_secs_f64((t * 1e3).floor() / 1e3 + 1e-3);
        if ready <= 0 {
            continue;
        }
        for event in &ready_events[..ready as usize] {
            let bot = &mut bots[event.u64 as usize];
            while let Ok((n, _)) = bot.socket.recv_from(&mut buf) {
                let arrived = relay_now();
                let datagram = &buf[..n];
                if !bot.admitted {
                    bot.handshake
                        .receive(datagram, start.elapsed().as_secs_f64());
                    bot.admitted = matches!(bot.handshake, ClientHandshake::Admitted { .. });
                    continue;
                }
                let Some(payload) = bot.open(datagram) else {
                    continue;
                };
                let Ok(Message::Snapshot {
                    server_time,
                    updates,
                    ..
                }) = Message::decode(payload, &p)
                else {
                    continue;
                };
                let t = start.elapsed().as_secs_f64();
                if updates.iter().any(|u| area(u.entity) != area(bot.entity))
                    && bot.declared_at.is_some_and(|at| t - at > 0.1)
                {
                    bot.declare(relay, t, &p, &interest);
                    redeclared += 1;
                }
                if !measuring {
                    continue;
                }
                for u in updates {
                    received += 1;
                    after_tick.push(arrived - server_time);
                    end_to_end.push(arrived - (server_time - u.age));
                }
            }
            if bot.owes_ack {
                bot.owes_ack = false;
                bot.send_reliable(relay, &keepalive);
                bot.next_keepalive = start.elapsed().as_secs_f64() + KEEPALIVE_INTERVAL;
            }
        }
        if let Some(rest) = batch_end.checked_duration_since(Instant::now()) {
            std::thread::sleep(rest);
        }
    }
    unsafe { libc::close(epoll) };
    stop_flood.store(true, std::sync::atomic::Ordering::Relaxed);
    let flood_hellos = flooder.map_or(0, |f| f.join().unwrap_or(0));
    let relay_cpu = match (relay_cpu_start, thread_cpu_seconds("netsync-relay")) {
        (Some(a), Some(b)) => (b - a) / seconds,
        _ => f64::NAN,
    };
    let bots_cpu = (self_thread_cpu_seconds() - bots_cpu_start) / seconds;
    let ticks = relay_server
        .stats()
        .tick_times
        .since(&ticks_start.unwrap_or_default());
    if pinned_cpus() {
        pin(0, 0); // undo for the next run's set-up
        unpin_self();
    }
    let _ = pinned;
    let rss_growth_mb = rss_mb() - rss_before;
    let admitted = bots.iter().filter(|b| b.admitted).count();
    if admitted < clients || std::env::var_os("VERBOSE").is_some() {
        eprintln!(
            "{clients} clients: {admitted} admitted, {redeclared} declarations repeated; relay {:?}",
            relay_server.stats()
        );
    }
    relay_server.stop();
    after_tick.sort_by(f64::total_cmp);
    end_to_end.sort_by(f64::total_cmp);
    Run {
        clients,
        flood_hellos,
        rss_growth_mb,
        relay_cpu,
        ticks,
        after_tick,
        end_to_end,
        received,
        expected: sent_in_window,
        bots_cpu,
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let floods: &[bool] = if std::env::args().any(|a| a == "--flood") {
        &[false, true]
    } else {
        &[false]
    };
    let seconds = if quick { 2.0 } else { 10.0 };
    let sizes: Vec<usize> = match std::env::var("CLIENTS") {
        Ok(list) => list
            .split(',')
            .filter_map(|n| n.trim().parse().ok())
            .collect(),
        Err(_) if quick => vec![100],
        Err(_) => vec![100, 500, 1000],
    };
    println!("Relay at 30 Hz on 127.0.0.1; clients in areas of 10 with interest on, each sending one entity at 30 Hz; {seconds} s measured after a 3 s warm-up. {}", if pinned_cpus() { "Relay thread pinned to CPU 0, bots to CPU 1." } else { "Relay and bots share the cores (--shared)." });
    println!();
    println!("| clients | handshake flood (hellos/s) | relay CPU (cores) | relay tick + send p50 / p99 (ms) | after tick p50 / p99 / max (ms) | end to end p50 / p99 / max (ms) | updates delivered | bot thread CPU (cores) | memory growth (MB) |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (&n, &with_flood) in sizes
        .iter()
        .flat_map(|n| floods.iter().map(move |f| (n, f)))
    {
        let r = run(n, seconds, with_flood);
        let ms = |v: &[f64], p: f64| percentile(v, p) * 1e3;
        println!(
            "| {} | {:.0} | {:.2} | {:.2} / {:.2} | {:.1} / {:.1} / {:.1} | {:.1} / {:.1} / {:.1} | {:.1} % | {:.2} | {:.0} |",
            r.clients,
            r.flood_hellos as f64 / seconds,
            r.relay_cpu,
            r.ticks.quantile(0.5) * 1e3,
            r.ticks.quantile(0.99) * 1e3,
            ms(&r.after_tick, 0.5),
            ms(&r.after_tick, 0.99),
            ms(&r.after_tick, 1.0),
            ms(&r.end_to_end, 0.5),
            ms(&r.end_to_end, 0.99),
            ms(&r.end_to_end, 1.0),
            100.0 * r.received as f64 / r.expected.max(1) as f64,
            r.bots_cpu,
            r.rss_growth_mb,
        );
    }
    println!();
    println!("\"relay tick + send\": inside the relay, from its send tick to the last of the tick's datagrams handed to the kernel (0.25 ms buckets, upper edges).");
    println!("\"after tick\": from the relay's send tick to the bot reading the datagram; \"end to end\": from the owner's send, so it includes the wait for the next tick (0 to 33 ms). Delivered: updates received / (owner sends x 9 neighbours); dead reckoning is off here, every send changes the state.");
}
