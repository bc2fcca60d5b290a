//! The main job end to end: a short `netsync demo --record` (relay and
//! three clients with physics over loopback UDP through the AVG
//! profile), then its outputs: every client converged, send rights
//! changed hands, every client's recording replayed bit for bit, and
//! `netsync replay` reads the files and refuses a damaged one.
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};
use std::process::Command;

fn netsync() -> Command {
    Command::new(env!("CARGO_BIN_EXE_netsync"))
}

fn out_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("netsync-demo-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Mean per-client divergence RMS over the last `seconds` of series.csv.
fn final_rms(series: &str, clients: usize, from: f64) -> Vec<f64> {
    let mut sums = vec![(0.0, 0usize); clients];
    for line in series.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (Ok(client), Ok(t)) = (f[0].parse::<usize>(), f[1].parse::<f64>()) else {
            panic!("bad series line `{line}`");
        };
        if let Ok(rms) = f[2].parse::<f64>() {
            if t >= from {
                sums[client].0 += rms;
                sums[client].1 += 1;
            }
        }
    }
    sums.iter().map(|(s, n)| s / (*n).max(1) as f64).collect()
}

#[test]
fn a_short_demo_converges_hands_rights_over_and_replays_exactly() {
    let out = out_dir();
    let run = netsync()
        .args([
            "demo",
            "--clients",
            "3",
            "--objects",
            "30",
            "--duration",
            "12",
        ])
        .args(["--profile", "AVG", "--seed", "3", "--record", "--out"])
        .arg(&out)
        .output()
        .expect("netsync runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "demo failed:\n{stdout}\n{stderr}");
    println!("{stdout}");

    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    println!(
        "{} frames, {} late",
        summary["frames"], summary["late_frames"]
    );
    let rows = summary["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let mut transfers = 0;
    for row in rows {
        let client = &row["client"];
        assert!(row["divergence_samples"].as_u64().unwrap() > 1000, "{row}");
        // Whole-run figures are printed, not bounded: a body launched in
        // a hand-over can put single runs at metres (docs/demo.md, known
        // issues). Convergence is judged at the end, below.
        println!(
            "client {client}: divergence RMS {} m, p99 {} m",
            row["divergence_rms_m"], row["divergence_p99_m"]
        );
        assert!(
            row["rtt_ms"].as_f64().unwrap() > 100.0,
            "AVG adds latency: {row}"
        );
        assert!(row["up_bytes_per_s"].as_f64().unwrap() > 0.0);
        transfers += row["transfers"].as_u64().unwrap();
    }
    assert!(transfers > 0, "no send right changed hands");
    assert!(summary["right_changes"].as_u64().unwrap() > 0);

    // Converged: in the last three seconds remote objects are close to
    // their holders' truth on every screen (typically under 3 cm). The
    // median client within 20 cm; every client within 50 cm, since a
    // hand-over late in the run can leave one screen still blending at
    // the very end.
    let series = std::fs::read_to_string(out.join("series.csv")).unwrap();
    let mut end = final_rms(&series, 3, 9.0);
    println!("divergence RMS over the last 3 s per client: {end:?}");
    let worst: Vec<&serde_json::Value> = rows.iter().map(|r| &r["worst_objects"]).collect();
    assert!(
        end.iter().all(|&e| e < 0.5),
        "a client did not converge: {end:?} m; worst objects per client: {worst:?}"
    );
    end.sort_by(f64::total_cmp);
    assert!(
        end[1] < 0.2,
        "divergence at the end: {end:?} m; worst objects per client: {worst:?}"
    );

    let replays = summary["replay"].as_array().unwrap();
    assert_eq!(replays.len(), 3);
    for r in replays {
        assert!(r["ticks_live"].as_u64().unwrap() > 500, "{r}");
        assert_eq!(r["ticks_live"], r["ticks_recorded"], "{r}");
        assert!(r["transforms_compared"].as_u64().unwrap() > 10_000, "{r}");
        assert_eq!(r["ticks_differing"].as_u64(), Some(0), "{r}");
    }
    for picture in [
        "divergence.svg",
        "render_delay.svg",
        "paths.svg",
        "rights.svg",
    ] {
        let svg = std::fs::read_to_string(out.join(picture)).unwrap();
        assert!(svg.starts_with("<svg"), "{picture}");
    }

    replay_command_reads_and_refuses(&out);
    let _ = std::fs::remove_dir_all(&out);
}

fn replay_command_reads_and_refuses(out: &Path) {
    for (file, kind) in [
        ("relay.nsrec", "relay recording"),
        ("client-0.nsrec", "client recording"),
    ] {
        let run = netsync()
            .args(["replay"])
            .arg(out.join(file))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(
            run.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(stdout.contains(kind), "{stdout}");
        assert!(stdout.contains(" frame\n"), "{stdout}");
    }
    let bytes = std::fs::read(out.join("client-1.nsrec")).unwrap();
    let cut = out.join("cut.nsrec");
    std::fs::write(&cut, &bytes[..bytes.len() - 7]).unwrap();
    let run = netsync().arg("replay").arg(&cut).output().unwrap();
    assert!(!run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("truncated"), "{stderr}");
}
