//! Soak: 16 clients x 256 objects on the HOSTILE profile (250 ms +/- 250,
//! 25 % loss, 25 % duplication, 30 % reordering) with random outages,
//! quits and rejoins, claims on shared objects and a stream of numbered
//! global commands. Twice: 15 simulated minutes on the in-memory network
//! (deterministic for a seed) and 5 real minutes on loopback.
//!
//! Checks, and exits non-zero when one fails: no panic; every global
//! command delivered to every client exactly once and in the same order
//! everywhere; send rights settled (every client agrees with the relay on
//! every shared object's holder and epoch) in the calm after each round of
//! disturbances; resident memory at the end within 64 MB of what it was
//! after the first round (both printed).
//!
//! Run: cargo bench --no-default-features --bench soak
//!      [-- --simulated-minutes M --real-minutes M --seed N --quick]
//! (`--quick`: one simulated and one real minute.)

mod disturbance;
mod ledger;
mod loopback;
mod report;
mod rounds;
mod simulated;
mod table;

use netsync::netsim::NetworkProfile;

fn value(args: &[String], name: &str) -> Option<f64> {
    let i = args.iter().position(|a| a == name)?;
    let v = args.get(i + 1)?;
    Some(
        v.parse()
            .unwrap_or_else(|_| panic!("{name} takes a number, not {v}")),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if std::env::var_os("SOAK_DEBUG").is_some() {
        let _ = log::set_logger(&StderrLog);
        log::set_max_level(log::LevelFilter::Info);
    }
    let quick = args.iter().any(|a| a == "--quick");
    let simulated_minutes =
        value(&args, "--simulated-minutes").unwrap_or(if quick { 1.0 } else { 15.0 });
    let real_minutes = value(&args, "--real-minutes").unwrap_or(if quick { 1.0 } else { 5.0 });
    let seed = value(&args, "--seed").unwrap_or(1.0) as u64;
    let profile = NetworkProfile::HOSTILE;
    println!(
        "Soak: {} clients x {} objects ({} shared), {} profile, seed {seed}; rounds of {} s: {} s of claims and disturbances, then calm.",
        table::SEATS,
        table::OBJECTS_PER_SEAT,
        table::NEUTRAL_PER_SEAT * table::SEATS as u64,
        profile.name,
        disturbance::ROUND,
        disturbance::ACTIVE,
    );
    println!();
    report::print_header();
    let mut failed = false;
    if simulated_minutes > 0.0 {
        let mut world = simulated::Simulated::new(seed, profile);
        let r = rounds::run("simulated", &mut world, seed, simulated_minutes * 60.0);
        r.print_row();
        r.print_violations();
        eprintln!(
            "simulated: command order fingerprint {:016x}",
            r.fingerprint
        );
        failed |= !r.violations.is_empty();
    }
    if real_minutes > 0.0 {
        let mut world = loopback::Loopback::new(profile);
        let r = rounds::run("loopback", &mut world, seed, real_minutes * 60.0);
        world.stop();
        r.print_row();
        r.print_violations();
        eprintln!("loopback: {} frames began late", world.late_frames);
        failed |= !r.violations.is_empty();
    }
    println!();
    println!("\"rights settled after\": from the last claim of a round to the first check (every 0.1 s) at which every client is connected and agrees on every shared object's holder and epoch (simulated: also with the relay). Commands: global commands sent, and deliveries counted at every receiving client.");
    if failed {
        eprintln!("soak FAILED");
        std::process::exit(1);
    }
}

/// SOAK_DEBUG=1: the library's log on stderr.
struct StderrLog;
impl log::Log for StderrLog {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.level() <= log::Level::Info
    }
    fn log(&self, r: &log::Record) {
        eprintln!("{} {}: {}", r.level(), r.target(), r.args());
    }
    fn flush(&self) {}
}
