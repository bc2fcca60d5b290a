//! With `--record`: every client's recording is played back at the times
//! the client ticked, and what the replay shows is compared with what
//! the client showed live, transform by transform (bit for bit).

use std::path::Path;

use netsync::core::timeline::Shown;
use netsync::replay::Player;

/// Digest of one tick's shown transforms (order, entity, pose bits, flags).
pub fn digest(shown: &[Shown]) -> u64 {
    // FNV-1a: stable across runs and processes, unlike the std hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |v: u64| {
        for b in v.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for s in shown {
        eat(s.entity);
        for c in s
            .pose
            .position
            .to_array()
            .into_iter()
            .chain(s.pose.rotation.to_array())
        {
            eat(u64::from(c.to_bits()));
        }
        eat(u64::from(s.flags));
    }
    h
}

/// Outcome of replaying one client's recording.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ReplayCheck {
    pub client: usize,
    pub file: String,
    pub file_bytes: u64,
    pub ticks_live: usize,
    pub ticks_recorded: usize,
    /// Ticks whose replayed transforms differ from the live ones.
    pub ticks_differing: usize,
    pub transforms_compared: u64,
}

/// Replays `path` at every live tick time in `live` (time, digest).
pub fn check(client: usize, path: &Path, live: &[(f64, u64)]) -> Result<ReplayCheck, String> {
    let mut player = Player::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = ReplayCheck {
        client,
        file: path.display().to_string(),
        file_bytes: player.summary().file_bytes,
        ticks_live: live.len(),
        ticks_recorded: player.tick_times().count(),
        ..Default::default()
    };
    let mut shown = Vec::new();
    for &(t, expected) in live {
        shown.clear();
        player.tick_at(t, |_, s| shown.push(*s))?;
        out.transforms_compared += shown.len() as u64;
        if digest(&shown) != expected {
            out.ticks_differing += 1;
        }
    }
    Ok(out)
}
