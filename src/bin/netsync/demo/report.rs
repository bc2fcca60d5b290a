//! The demo's report: one row per client, printed and written as
//! markdown and JSON (the JSON is what the CI test reads).

use std::fmt::Write as _;

/// One client's figures at the end of a run.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ClientRow {
    pub client: usize,
    pub client_id: u32,
    pub rtt_ms: f64,
    pub jitter_ms: f64,
    pub render_delay_ms: f64,
    pub divergence_rms_m: f64,
    pub divergence_p99_m: f64,
    pub divergence_samples: usize,
    pub extrapolated_percent: f64,
    pub up_bytes_per_s: f64,
    pub down_bytes_per_s: f64,
    pub transfers: u64,
    pub refused: u64,
    pub claims: u64,
    /// The objects this client showed furthest from the truth:
    /// (entity, RMS m, worst m).
    pub worst_objects: Vec<(u64, f64, f32)>,
}

/// The run as a whole.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Summary {
    pub profile: String,
    pub clients: usize,
    pub objects: usize,
    pub duration_s: f64,
    pub seed: u64,
    pub rows: Vec<ClientRow>,
    /// Send-right changes the first client saw (every client sees them).
    pub right_changes: u64,
    /// Engine frames run, and how many of them started over a frame late.
    pub frames: u64,
    pub late_frames: u64,
    /// With `--record`: each client's recording replayed against its live run.
    pub replay: Vec<super::replay_check::ReplayCheck>,
}

impl Summary {
    pub fn table(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "| client | RTT (ms) | jitter (ms) | render delay (ms) | divergence RMS (m) | divergence p99 (m) | extrapolated | up (kB/s) | down (kB/s) | rights gained | refused claims |"
        );
        let _ = writeln!(t, "|---|---|---|---|---|---|---|---|---|---|---|");
        for r in &self.rows {
            let _ = writeln!(
                t,
                "| {} (id {}) | {:.0} | {:.1} | {:.0} | {:.3} | {:.3} | {:.2} % | {:.1} | {:.1} | {} | {} |",
                r.client,
                r.client_id,
                r.rtt_ms,
                r.jitter_ms,
                r.render_delay_ms,
                r.divergence_rms_m,
                r.divergence_p99_m,
                r.extrapolated_percent,
                r.up_bytes_per_s / 1e3,
                r.down_bytes_per_s / 1e3,
                r.transfers,
                r.refused,
            );
        }
        t
    }

    /// The summary as JSON (what the CI test reads).
    pub fn json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("plain numbers and strings");
        text.push('\n');
        text
    }
}
