//! Interest management at S2's scale: 1 000 clients in 100 areas, each
//! moving one entity in its area at 30 Hz, plus one global-view observer.
//! Bytes each client receives per second with the filters on (radius 1
//! cell) and off (every client sees everything), side by side, on the
//! sans-IO relay with a simulated clock.
//!
//! Run: cargo bench --bench interest

#[path = "../tests/common/area_scene.rs"]
mod area_scene;

use area_scene::AreaScene;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let seconds = if quick { 1.5 } else { 4.0 };
    println!("1 000 clients in 100 areas of 10, 30 Hz sends and relay ticks, {seconds} s (the first second not measured)");
    println!();
    println!("| interest | down per client, mean (B/s) | down per client, max (B/s) | entities heard per client | clients that heard of area 0 | relay time per tick (ms) |");
    println!("|---|---|---|---|---|---|");
    // `--on` or `--off` runs one side alone (for profiling).
    let sides: Vec<bool> = match (
        std::env::args().any(|a| a == "--on"),
        std::env::args().any(|a| a == "--off"),
    ) {
        (true, false) => vec![true],
        (false, true) => vec![false],
        _ => vec![true, false],
    };
    for interest in sides {
        let scene = AreaScene {
            areas: 100,
            clients_per_area: 10,
            interest,
            seconds,
            rate: 30.0,
        };
        let out = scene.run();
        let n = out.down_bytes.len() as f64;
        let per_s: Vec<f64> = out
            .down_bytes
            .iter()
            .map(|&b| b as f64 / out.measured_seconds)
            .collect();
        let mean = per_s.iter().sum::<f64>() / n;
        let max = per_s.iter().copied().fold(0.0, f64::max);
        let heard = out.received.iter().map(|r| r.len()).sum::<usize>() as f64 / n;
        println!(
            "| {} | {:.0} | {:.0} | {:.1} | {} | {:.2} |",
            if interest {
                "on (radius 1 cell)"
            } else {
                "off (global view)"
            },
            mean,
            max,
            heard,
            out.heard_of_area_0,
            out.relay_time.as_secs_f64() * 1e3 / out.ticks as f64
        );
    }
    println!();
    println!("Bytes are snapshot payloads as built by the relay (no laminar, IP or UDP headers).");
}
