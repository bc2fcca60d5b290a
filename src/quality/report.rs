//! The side-by-side table and the targets the adaptive mode must meet.

use std::fmt::Write;

use super::ProfileResult;

/// Markdown table of every profile and contender.
pub fn table(results: &[ProfileResult]) -> String {
    let mut s = String::new();
    s.push_str(
        "| profile | mode | align RMS (m) | align p99 (m) | present RMS (m) | present p99 (m) \
         | present angle RMS (deg) | delay mean (ms) | delay p99 (ms) | extrapolated % \
         | stalled % | jumps |\n",
    );
    s.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for p in results {
        for m in &p.modes {
            let _ = writeln!(
                s,
                "| {} | {} | {:.4} | {:.4} | {:.4} | {:.4} | {:.2} | {:.1} | {:.1} | {:.2} | {:.2} | {} |",
                p.profile,
                m.label,
                m.align_rms,
                m.align_p99,
                m.present_rms,
                m.present_p99,
                m.present_angle_rms,
                m.delay_mean * 1e3,
                m.delay_p99 * 1e3,
                m.extrapolated * 100.0,
                m.stalled * 100.0,
                m.jumps
            );
        }
        let _ = writeln!(
            s,
            "| {} | *hindsight-optimal fixed delay* | | | | | | {:.1} | | 1.00 | | |",
            p.profile,
            p.hindsight_delay * 1e3
        );
    }
    s
}

/// The targets of the quality benchmark; returns each one missed.
/// `adaptive` must have the lowest presentation error of the reference
/// contenders (literal, fixed, baseline), extrapolate at most 1 % of
/// frames on AVG and 5 % on POOR, never jump, and keep its mean delay
/// within 1.25 x the hindsight-optimal fixed delay.
pub fn check_targets(results: &[ProfileResult]) -> Vec<String> {
    let mut missed = Vec::new();
    for p in results {
        let Some(adaptive) = p.modes.iter().find(|m| m.label == "adaptive") else {
            missed.push(format!("{}: no adaptive column", p.profile));
            continue;
        };
        for other in &p.modes {
            let reference = ["literal", "fixed 100 ms", "baseline"].contains(&other.label.as_str());
            if reference && other.present_rms <= adaptive.present_rms {
                missed.push(format!(
                    "{}: {} presentation RMS {:.4} <= adaptive {:.4}",
                    p.profile, other.label, other.present_rms, adaptive.present_rms
                ));
            }
        }
        let limit = match p.profile {
            "AVG" => Some(0.01),
            "POOR" => Some(0.05),
            _ => None,
        };
        if let Some(limit) = limit {
            if adaptive.extrapolated > limit {
                missed.push(format!(
                    "{}: adaptive extrapolated {:.2} % > {:.0} %",
                    p.profile,
                    adaptive.extrapolated * 100.0,
                    limit * 100.0
                ));
            }
        }
        if adaptive.jumps > 0 {
            missed.push(format!(
                "{}: adaptive jumped {} times",
                p.profile, adaptive.jumps
            ));
        }
        if adaptive.delay_mean > 1.25 * p.hindsight_delay {
            missed.push(format!(
                "{}: adaptive mean delay {:.1} ms > 1.25 x hindsight {:.1} ms",
                p.profile,
                adaptive.delay_mean * 1e3,
                p.hindsight_delay * 1e3
            ));
        }
    }
    missed
}
