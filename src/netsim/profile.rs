//! Named network profiles, shared by the quality benchmark and the
//! conditioner so that "AVG" means the same network everywhere.

/// How a one-way path behaves. Times in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NetworkProfile {
    pub name: &'static str,
    /// Mean one-way latency.
    pub latency: f64,
    /// Jitter amplitude: delays spread over latency +/- jitter (truncated
    /// normal, standard deviation jitter / 2).
    pub jitter: f64,
    /// Long-run share of packets lost.
    pub loss: f64,
    /// Mean length of a loss burst in packets (1 = independent losses).
    pub loss_burst: f64,
    /// Share of packets delivered twice.
    pub duplicate: f64,
    /// Share of packets held back by `reorder_delay` extra (arrive after later ones).
    pub reorder: f64,
    pub reorder_delay: f64,
    /// Mean time between stalls (0 = none); during a stall nothing is
    /// delivered, and everything sent in it arrives together at its end.
    pub stall_every: f64,
    pub stall_length: f64,
    /// Bytes per second the path carries (0 = unlimited).
    pub bandwidth: f64,
}

impl NetworkProfile {
    const PERFECT: NetworkProfile = NetworkProfile {
        name: "",
        latency: 0.0,
        jitter: 0.0,
        loss: 0.0,
        loss_burst: 1.0,
        duplicate: 0.0,
        reorder: 0.0,
        reorder_delay: 0.0,
        stall_every: 0.0,
        stall_length: 0.0,
        bandwidth: 0.0,
    };

    /// Same machine or LAN: 1 ms +/- 0.5.
    pub const LAN: NetworkProfile = NetworkProfile {
        name: "LAN",
        latency: 0.001,
        jitter: 0.0005,
        ..Self::PERFECT
    };
    /// Good broadband: 40 ms +/- 5.
    pub const GOOD: NetworkProfile = NetworkProfile {
        name: "GOOD",
        latency: 0.040,
        jitter: 0.005,
        ..Self::PERFECT
    };
    /// Average internet: 100 ms +/- 30, 2 % loss.
    pub const AVG: NetworkProfile = NetworkProfile {
        name: "AVG",
        latency: 0.100,
        jitter: 0.030,
        loss: 0.02,
        ..Self::PERFECT
    };
    /// Poor mobile: 200 ms +/- 80, 10 % loss in bursts, reordering.
    pub const POOR: NetworkProfile = NetworkProfile {
        name: "POOR",
        latency: 0.200,
        jitter: 0.080,
        loss: 0.10,
        loss_burst: 3.0,
        duplicate: 0.01,
        reorder: 0.05,
        reorder_delay: 0.060,
        ..Self::PERFECT
    };
    /// Decent link with occasional 500 ms stalls (Wi-Fi scans, bufferbloat).
    pub const SPIKY: NetworkProfile = NetworkProfile {
        name: "SPIKY",
        latency: 0.060,
        jitter: 0.010,
        loss: 0.01,
        stall_every: 8.0,
        stall_length: 0.5,
        ..Self::PERFECT
    };
    /// Hostile: 250 ms +/- 250, 25 % loss, 25 % duplication, 30 % reordering.
    pub const HOSTILE: NetworkProfile = NetworkProfile {
        name: "HOSTILE",
        latency: 0.250,
        jitter: 0.250,
        loss: 0.25,
        loss_burst: 2.0,
        duplicate: 0.25,
        reorder: 0.30,
        reorder_delay: 0.100,
        ..Self::PERFECT
    };
    /// No impairment at all.
    pub const NONE: NetworkProfile = NetworkProfile {
        name: "NONE",
        ..Self::PERFECT
    };

    /// Every named profile, mildest first.
    pub const ALL: [NetworkProfile; 7] = [
        Self::NONE,
        Self::LAN,
        Self::GOOD,
        Self::AVG,
        Self::POOR,
        Self::SPIKY,
        Self::HOSTILE,
    ];

    /// The profiles the quality benchmark reports.
    pub const BENCHMARK: [NetworkProfile; 5] =
        [Self::LAN, Self::GOOD, Self::AVG, Self::POOR, Self::SPIKY];

    /// Looks a profile up by name, ignoring case.
    pub fn by_name(name: &str) -> Option<NetworkProfile> {
        Self::ALL
            .into_iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
    }

    /// Names of every profile, for messages.
    pub fn names() -> String {
        Self::ALL.map(|p| p.name).join(", ")
    }
}
