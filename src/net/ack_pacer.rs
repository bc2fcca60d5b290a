//! Prompt recovery of lost reliable packets under laminar, sans-IO.
//!
//! laminar acknowledges reliable packets only on reliable packets, and
//! declares one lost only once the peer has acknowledged a packet 33
//! sequence numbers newer. With a keep-alive every 100 ms as the only
//! other reliable traffic, a lost claim, registration or command waited
//! about 3.3 s for its resend, and held up every ordered message behind it.
//!
//! The pacer reads the headers of every datagram laminar sends and
//! receives (never the payload beyond its first byte) and says which
//! reliable packets the driver should send now:
//! - a peer's reliable message is answered within `ack_delay`, so its
//!   acknowledgement does not wait for the next keep-alive;
//! - a message of ours still unacknowledged after a retransmission
//!   timeout (smoothed RTT + 4 deviations, as in TCP, measured from
//!   laminar's own acks) is followed by a burst of one-byte `AckRequest`s
//!   that carries laminar's sequence 33 past it; the peer's answer makes
//!   laminar resend it about one RTT later. The timeout doubles while
//!   nothing is acknowledged, up to `max_rto`;
//! - an idle connection still sends a keep-alive every `idle_interval`.
//!
//! On a loss-free link this costs nothing but the answers; a loss costs
//! one burst of about 34 × 14 bytes of laminar header and payload.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;

use crate::wire::message::kind;

/// laminar resends a packet once the peer acknowledged one this many
/// sequence numbers newer (its `REDUNDANT_PACKET_ACKS_SIZE` + 1).
const DROP_DISTANCE: u16 = 33;
/// Most of our unacknowledged reliable packets tracked per peer.
const MAX_TRACKED: usize = 512;
/// Extra requests per burst, for losses within the burst.
const BURST_MARGIN: u16 = 3;

/// Timing of the pacer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacerConfig {
    /// Longest wait before a peer's reliable message is answered (s).
    pub ack_delay: f64,
    /// Keep-alive interval of an idle connection (s).
    pub idle_interval: f64,
    /// Bounds of the retransmission timeout (s).
    pub min_rto: f64,
    pub max_rto: f64,
}

impl Default for PacerConfig {
    fn default() -> Self {
        PacerConfig {
            ack_delay: 0.005,
            // Liveness rides on laminar's own traffic; this only keeps a
            // slow trickle of acks on an otherwise quiet connection.
            idle_interval: 0.5,
            min_rto: 0.05,
            max_rto: 1.0,
        }
    }
}

/// Reliable packets due now for one peer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Due {
    /// `AckRequest`s to send (a burst after a timeout).
    pub ack_requests: u16,
    /// A `KeepAlive` (an answer, or the idle keep-alive).
    pub keepalive: bool,
}

impl Due {
    pub fn is_empty(&self) -> bool {
        self.ack_requests == 0 && !self.keepalive
    }
}

/// What the pacer needs from a laminar datagram's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Reliable {
    seq: u16,
    /// The sender's acknowledgements (absent on later fragments).
    acks: Option<(u16, u32)>,
    /// Payload type: our message kind byte (None for fragments).
    first_byte: Option<u8>,
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

/// Reads laminar 0.5's header: protocol id (2), packet type, delivery,
/// ordering (1 each); reliable packets then carry seq, ack seq (2 each)
/// and the ack field (4), ordered or sequenced ones an arranging header
/// (3); fragments carry (seq 2, id 1, count 1) and, on the first, the
/// acked header.
fn parse(datagram: &[u8]) -> Option<Reliable> {
    const STANDARD: usize = 5;
    const ACKED: usize = 8;
    const ARRANGING: usize = 3;
    const FRAGMENT: usize = 4;
    if datagram.len() < STANDARD || datagram[3] != 1 {
        return None; // unreliable, or too short to be laminar's
    }
    let acked = |at: usize| -> Option<(u16, u16, u32)> {
        let h = datagram.get(at..at + ACKED)?;
        Some((
            be16(&h[0..2]),
            be16(&h[2..4]),
            u32::from_be_bytes([h[4], h[5], h[6], h[7]]),
        ))
    };
    match datagram[2] {
        0 => {
            let (seq, ack_seq, field) = acked(STANDARD)?;
            let arranging = if datagram[4] == 0 { 0 } else { ARRANGING };
            Some(Reliable {
                seq,
                acks: Some((ack_seq, field)),
                first_byte: datagram.get(STANDARD + ACKED + arranging).copied(),
            })
        }
        1 => {
            let f = datagram.get(STANDARD..STANDARD + FRAGMENT)?;
            let seq = be16(&f[0..2]);
            let acks = if f[2] == 0 {
                let (_, ack_seq, field) = acked(STANDARD + FRAGMENT)?;
                Some((ack_seq, field))
            } else {
                None
            };
            Some(Reliable {
                seq,
                acks,
                first_byte: None,
            })
        }
        _ => None,
    }
}

/// True when `a` comes after `b` in wrapping sequence order.
fn newer(a: u16, b: u16) -> bool {
    a != b && a.wrapping_sub(b) < 0x8000
}

/// Bare keep-alive traffic: not itself worth acknowledging quickly.
fn is_keepalive(first_byte: Option<u8>) -> bool {
    first_byte == Some(kind::KEEP_ALIVE)
}

/// Pacing state of one peer.
#[derive(Clone, Debug)]
pub struct PeerPacer {
    config: PacerConfig,
    /// Our reliable messages the peer has not acknowledged: (seq, sent at).
    in_flight: VecDeque<(u16, f64)>,
    latest_seq: Option<u16>,
    last_reliable_sent: f64,
    /// Since when we owe the peer a reliable packet.
    owed_since: Option<f64>,
    srtt: Option<f64>,
    rttvar: f64,
    backoff: f64,
    last_burst: f64,
    stats: PacerStats,
}

/// What a pacer did, for stats and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PacerStats {
    pub bursts: u64,
    pub ack_requests: u64,
    pub answers: u64,
    /// Packets laminar will resend (acknowledged past without them).
    pub presumed_lost: u64,
    /// Smoothed RTT of reliable messages (s; 0 before the first sample).
    pub srtt: f64,
}

impl PeerPacer {
    pub fn new(config: PacerConfig) -> Self {
        PeerPacer {
            config,
            in_flight: VecDeque::new(),
            latest_seq: None,
            last_reliable_sent: f64::NEG_INFINITY,
            owed_since: None,
            srtt: None,
            rttvar: 0.0,
            backoff: 1.0,
            last_burst: f64::NEG_INFINITY,
            stats: PacerStats::default(),
        }
    }

    pub fn stats(&self) -> PacerStats {
        PacerStats {
            srtt: self.srtt.unwrap_or(0.0),
            ..self.stats
        }
    }

    /// Retransmission timeout before backoff.
    fn rto(&self) -> f64 {
        let rto = match self.srtt {
            Some(srtt) => srtt + 4.0 * self.rttvar + self.config.ack_delay,
            None => 0.25,
        };
        rto.clamp(self.config.min_rto, self.config.max_rto)
    }

    /// laminar sent `datagram` to the peer.
    pub fn on_sent(&mut self, datagram: &[u8], now: f64) {
        let Some(r) = parse(datagram) else {
            return;
        };
        self.latest_seq = Some(r.seq);
        if r.acks.is_some() {
            // Carries our acknowledgements: nothing is owed any more.
            self.last_reliable_sent = now;
            self.owed_since = None;
        }
        let tracked = r.first_byte != Some(kind::ACK_REQUEST) && !is_keepalive(r.first_byte);
        // Later fragments share the first one's sequence number.
        if tracked && self.in_flight.back().map(|e| e.0) != Some(r.seq) {
            if self.in_flight.len() == MAX_TRACKED {
                self.in_flight.pop_front();
            }
            self.in_flight.push_back((r.seq, now));
        }
    }

    /// laminar received `datagram` from the peer.
    pub fn on_received(&mut self, datagram: &[u8], now: f64) {
        let Some(r) = parse(datagram) else {
            return;
        };
        if !is_keepalive(r.first_byte) && self.owed_since.is_none() {
            self.owed_since = Some(now);
        }
        let Some((ack_seq, field)) = r.acks else {
            return;
        };
        let before = self.in_flight.len();
        let mut sample = None;
        let mut lost = 0;
        self.in_flight.retain(|&(seq, sent_at)| {
            let acked = seq == ack_seq || {
                let d = ack_seq.wrapping_sub(seq);
                (1..DROP_DISTANCE).contains(&d) && field & (1 << (d - 1)) != 0
            };
            if acked {
                sample = Some(now - sent_at);
                return false;
            }
            // Acknowledged past without it: laminar resends it now, under
            // a new sequence number that `on_sent` will track.
            if newer(ack_seq, seq) && ack_seq.wrapping_sub(seq) >= DROP_DISTANCE {
                lost += 1;
                return false;
            }
            true
        });
        self.stats.presumed_lost += lost;
        if let Some(rtt) = sample {
            match self.srtt {
                None => {
                    self.srtt = Some(rtt);
                    self.rttvar = rtt / 2.0;
                }
                Some(srtt) => {
                    self.rttvar = 0.75 * self.rttvar + 0.25 * (srtt - rtt).abs();
                    self.srtt = Some(0.875 * srtt + 0.125 * rtt);
                }
            }
        }
        if self.in_flight.len() < before {
            self.backoff = 1.0;
        }
    }

    /// What to send now.
    pub fn due(&mut self, now: f64) -> Due {
        let mut due = Due::default();
        if let Some(&(oldest, sent_at)) = self.in_flight.front() {
            let wait = self.rto() * self.backoff;
            if now - sent_at >= wait && now - self.last_burst >= wait {
                let latest = self.latest_seq.unwrap_or(oldest);
                let past = latest.wrapping_sub(oldest);
                let needed = DROP_DISTANCE.saturating_sub(past) + BURST_MARGIN;
                due.ack_requests = needed;
                self.last_burst = now;
                self.backoff = (self.backoff * 2.0).min(self.config.max_rto / self.rto());
                self.stats.bursts += 1;
                self.stats.ack_requests += needed as u64;
            }
        }
        if due.ack_requests == 0 {
            let answer = self
                .owed_since
                .is_some_and(|since| now - since >= self.config.ack_delay);
            if answer {
                self.stats.answers += 1;
            }
            due.keepalive = answer || now - self.last_reliable_sent >= self.config.idle_interval;
        }
        if !due.is_empty() {
            // Whatever goes out carries our acks; do not ask twice.
            self.last_reliable_sent = now;
            self.owed_since = None;
        }
        due
    }
}

/// Pacers of every peer of a relay.
#[derive(Debug, Default)]
pub struct Pacers {
    config: PacerConfig,
    /// Looked up for every datagram. A fixed hash seed keeps the order
    /// `due_each` visits peers in the same from run to run (deterministic
    /// simulations); only admitted addresses are keys, so nobody can pick
    /// keys to collide.
    peers: HashMap<SocketAddr, PeerPacer, foldhash::fast::FixedState>,
}

impl Pacers {
    pub fn new(config: PacerConfig) -> Self {
        Pacers {
            config,
            peers: HashMap::default(),
        }
    }

    pub fn on_sent(&mut self, addr: SocketAddr, datagram: &[u8], now: f64) {
        let config = self.config;
        self.peers
            .entry(addr)
            .or_insert_with(|| PeerPacer::new(config))
            .on_sent(datagram, now);
    }

    /// Only for peers already sent to (admitted ones).
    pub fn on_received(&mut self, addr: SocketAddr, datagram: &[u8], now: f64) {
        if let Some(p) = self.peers.get_mut(&addr) {
            p.on_received(datagram, now);
        }
    }

    /// Calls `each` with every peer that has reliable packets due now:
    /// one pass over the peers, no lookup per peer.
    pub fn due_each(&mut self, now: f64, mut each: impl FnMut(SocketAddr, Due)) {
        for (&addr, pacer) in self.peers.iter_mut() {
            let due = pacer.due(now);
            if !due.is_empty() {
                each(addr, due);
            }
        }
    }

    pub fn forget(&mut self, addr: &SocketAddr) {
        self.peers.remove(addr);
    }

    pub fn get(&self, addr: &SocketAddr) -> Option<&PeerPacer> {
        self.peers.get(addr)
    }

    /// Sums over every peer (`srtt`: the mean).
    pub fn totals(&self) -> PacerStats {
        let mut t = PacerStats::default();
        for p in self.peers.values() {
            let s = p.stats();
            t.bursts += s.bursts;
            t.ack_requests += s.ack_requests;
            t.answers += s.answers;
            t.presumed_lost += s.presumed_lost;
            t.srtt += s.srtt;
        }
        if !self.peers.is_empty() {
            t.srtt /= self.peers.len() as f64;
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reliable unordered laminar packet carrying `payload`.
    fn reliable(seq: u16, ack_seq: u16, field: u32, payload: &[u8]) -> Vec<u8> {
        let mut d = vec![0xAB, 0xCD, 0, 1, 0];
        d.extend_from_slice(&seq.to_be_bytes());
        d.extend_from_slice(&ack_seq.to_be_bytes());
        d.extend_from_slice(&field.to_be_bytes());
        d.extend_from_slice(payload);
        d
    }

    const CLAIM: &[u8] = &[kind::CLAIM, 1, 2];

    #[test]
    fn parses_laminar_headers_of_every_kind() {
        assert_eq!(parse(&[0, 0, 0, 0, 0, 9]), None, "unreliable");
        assert_eq!(parse(&[0, 0, 0, 1]), None, "short");
        let r = parse(&reliable(7, 3, 0b101, CLAIM)).unwrap();
        assert_eq!((r.seq, r.acks, r.first_byte), (7, Some((3, 5)), Some(9)));
        // Ordered: a 3-byte arranging header before the payload.
        let mut ordered = reliable(8, 3, 0, &[0, 0, 0]);
        ordered[4] = 2;
        ordered.push(kind::REGISTER);
        assert_eq!(parse(&ordered).unwrap().first_byte, Some(kind::REGISTER));
        // Fragments: the first carries the acked header, later ones not.
        let mut first = vec![0, 0, 1, 1, 2, 0, 9, 0, 2];
        first.extend_from_slice(&reliable(9, 4, 1, &[])[5..]);
        let r = parse(&first).unwrap();
        assert_eq!((r.seq, r.acks), (9, Some((4, 1))));
        let r = parse(&[0, 0, 1, 1, 2, 0, 9, 1, 2, 77]).unwrap();
        assert_eq!((r.seq, r.acks), (9, None));
        assert_eq!(parse(&[0, 0, 1, 1, 2, 0]), None, "cut fragment header");
    }

    #[test]
    fn answers_messages_but_not_keepalives() {
        let mut p = PeerPacer::new(PacerConfig {
            idle_interval: 0.1,
            ..PacerConfig::default()
        });
        p.on_sent(&reliable(0, 0, 0, &[kind::KEEP_ALIVE]), 0.0);
        p.on_received(&reliable(0, 0, 0, &[kind::KEEP_ALIVE]), 0.01);
        assert!(p.due(0.05).is_empty(), "a keep-alive needs no answer");
        p.on_received(&reliable(1, 0, 0, CLAIM), 0.05);
        assert!(p.due(0.052).is_empty(), "within the ack delay");
        assert_eq!(
            p.due(0.056),
            Due {
                ack_requests: 0,
                keepalive: true
            }
        );
        assert!(p.due(0.06).is_empty(), "answered once");
        p.on_received(&reliable(2, 0, 0, &[kind::ACK_REQUEST]), 0.07);
        assert!(p.due(0.08).keepalive, "requests are answered");
        assert!(p.due(0.179).is_empty());
        assert!(p.due(0.181).keepalive, "idle keep-alive");
    }

    #[test]
    fn an_unacknowledged_message_triggers_a_burst_past_laminars_drop_distance() {
        let mut p = PeerPacer::new(PacerConfig::default());
        // An RTT sample of 100 ms sets the timeout near 100 + 4 x 50 ms.
        p.on_sent(&reliable(0, 0, 0, CLAIM), 0.0);
        p.on_received(&reliable(0, 0, 0, &[kind::KEEP_ALIVE]), 0.1);
        assert!(p.in_flight.is_empty());
        // Seq 1 is lost; 2 keep-alives follow.
        p.on_sent(&reliable(1, 0, 0, CLAIM), 1.0);
        p.on_sent(&reliable(2, 0, 0, &[kind::KEEP_ALIVE]), 1.05);
        p.on_sent(&reliable(3, 0, 0, &[kind::KEEP_ALIVE]), 1.1);
        let rto = p.rto();
        assert!((0.29..0.32).contains(&rto), "rto {rto}");
        assert_eq!(p.due(1.0 + rto - 0.01).ack_requests, 0);
        let due = p.due(1.0 + rto + 0.001);
        assert_eq!(due.ack_requests, 33 - 2 + BURST_MARGIN);
        // The peer saw the burst up to seq 36 without seq 1: presumed lost.
        p.on_received(&reliable(5, 36, u32::MAX >> 1, &[kind::KEEP_ALIVE]), 1.5);
        assert!(p.in_flight.is_empty());
        assert_eq!(p.stats().presumed_lost, 1);
    }

    #[test]
    fn bursts_back_off_while_nothing_is_acknowledged() {
        let mut p = PeerPacer::new(PacerConfig::default());
        p.on_sent(&reliable(0, 0, 0, CLAIM), 0.0);
        let mut bursts = Vec::new();
        let mut t = 0.0;
        while t < 4.0 {
            if p.due(t).ack_requests > 0 {
                bursts.push(t);
            }
            t += 0.001;
        }
        let gaps: Vec<f64> = bursts.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.windows(2).all(|g| g[1] >= g[0] - 1e-9), "{gaps:?}");
        assert!(gaps.last().unwrap() <= &1.001, "capped at max_rto");
        assert!(bursts.len() >= 4 && bursts.len() < 10, "{bursts:?}");
    }

    #[test]
    fn wrapping_sequences_and_fragments_are_tracked_once() {
        let mut p = PeerPacer::new(PacerConfig::default());
        p.on_sent(&reliable(65535, 0, 0, CLAIM), 0.0);
        let mut frag = vec![0, 0, 1, 1, 0, 0, 0, 1, 2];
        p.on_sent(&frag, 0.0);
        frag[7] = 0; // first fragment with the acked header
        frag.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
        p.on_sent(&frag, 0.0);
        assert_eq!(p.in_flight.len(), 2);
        // ack seq 0 with bit 0 set acknowledges 65535 and 0.
        p.on_received(&reliable(1, 0, 1, &[kind::KEEP_ALIVE]), 0.1);
        assert!(p.in_flight.is_empty());
    }
}
