//! What one soak run measured, and the table rows it prints.

use netsync::server::relay_server::RelayServerStats;

use crate::ledger::Delivery;
use crate::table::Counters;

pub struct Report {
    pub mode: &'static str,
    /// Game time covered (simulated or real seconds).
    pub seconds: f64,
    /// Wall-clock time the run took.
    pub wall: f64,
    /// Per calm window: seconds from the last claim until every client
    /// agreed on every neutral object.
    pub settle: Vec<f64>,
    pub counters: Counters,
    pub delivery: Option<Delivery>,
    /// Everything that broke a promise; empty on a good run.
    pub violations: Vec<String>,
    /// Resident memory after the first round, at the end, and the most (MB).
    pub rss_after_warmup: f64,
    pub rss_end: f64,
    pub rss_max: f64,
    pub relay: RelayServerStats,
    pub fingerprint: u64,
}

/// This process's resident memory (MB).
pub fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

pub fn print_header() {
    println!("| run | game time | wall time | joins / leaves / reconnects | claims / granted / refused | commands sent / delivered to clients | rights settled after p50 / max | RSS after 1st round / end / max (MB) | relay malformed / not-holder / oversized | verdict |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
}

impl Report {
    pub fn print_row(&self) {
        let mut settle = self.settle.clone();
        settle.sort_by(f64::total_cmp);
        let at = |q: f64| {
            settle
                .get(((settle.len().max(1) - 1) as f64 * q).round() as usize)
                .copied()
                .unwrap_or(f64::NAN)
        };
        let c = &self.counters;
        let (sent, received) = self.delivery.map_or((0, 0), |d| (d.sent, d.received));
        println!(
            "| {} | {:.0} s | {:.0} s | {} / {} / {} | {} / {} / {} | {} / {} | {:.1} s / {:.1} s | {:.0} / {:.0} / {:.0} | {} / {} / {} | {} |",
            self.mode,
            self.seconds,
            self.wall,
            c.joins,
            c.leaves,
            c.reconnects,
            c.claims,
            self.relay.relay.claims_granted,
            self.relay.relay.claims_refused,
            sent,
            received,
            at(0.5),
            at(1.0),
            self.rss_after_warmup,
            self.rss_end,
            self.rss_max,
            self.relay.relay.malformed,
            self.relay.relay.rejected_not_owner,
            self.relay.gate.dropped_oversized,
            if self.violations.is_empty() { "pass" } else { "FAIL" },
        );
    }

    pub fn print_violations(&self) {
        for v in self.violations.iter().take(20) {
            eprintln!("{}: {v}", self.mode);
        }
        if self.violations.len() > 20 {
            eprintln!("{}: ... {} more", self.mode, self.violations.len() - 20);
        }
    }
}
