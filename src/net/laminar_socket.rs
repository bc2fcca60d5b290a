//! laminar's `DatagramSocket` over our sockets, with the handshake in
//! front: on the relay only admitted addresses reach laminar; on a client
//! only the relay's address does, and only after admission. Every
//! datagram also passes the ack pacer, which says when reliable traffic
//! is due (net::ack_pacer).

use std::io;
use std::net::SocketAddr;

use super::ack_pacer::{Due, PacerConfig, PacerStats, Pacers, PeerPacer};
use super::clock::NetClock;
use super::handshake::{is_handshake, Admission, ClientHandshake, GateOutcome, Gatekeeper};
use super::raw_socket::RawSocket;

/// Counters of what the socket layer dropped or answered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GateStats {
    /// Datagrams from addresses that were never admitted.
    pub dropped_unadmitted: u64,
    /// Handshake datagrams dropped (malformed, bad cookie, ...).
    pub dropped_handshakes: u64,
    /// Replies sent before admission.
    pub handshake_replies: u64,
    /// Datagrams larger than laminar's receive buffer.
    pub dropped_oversized: u64,
}

/// The relay's socket: a [`Gatekeeper`] in front of laminar.
#[derive(Debug)]
pub struct RelaySocket<R: RawSocket> {
    inner: R,
    gate: Gatekeeper,
    clock: NetClock,
    admitted: Vec<(SocketAddr, Admission)>,
    stats: GateStats,
    pacers: Pacers,
}

impl<R: RawSocket> RelaySocket<R> {
    pub fn new(inner: R, max_clients: usize, clock: NetClock, pacing: PacerConfig) -> Self {
        RelaySocket {
            inner,
            gate: Gatekeeper::new(max_clients),
            clock,
            admitted: Vec::new(),
            stats: GateStats::default(),
            pacers: Pacers::new(pacing),
        }
    }

    /// Reliable packets due now for `addr`.
    pub fn pace(&mut self, addr: SocketAddr, now: f64) -> Due {
        self.pacers.due(addr, now)
    }

    pub fn pacer_stats(&self, addr: &SocketAddr) -> Option<PacerStats> {
        self.pacers.get(addr).map(PeerPacer::stats)
    }

    /// Pacing summed over every client.
    pub fn pacer_totals(&self) -> PacerStats {
        self.pacers.totals()
    }

    /// Addresses admitted since the last call.
    pub fn take_admitted(&mut self) -> Vec<(SocketAddr, Admission)> {
        std::mem::take(&mut self.admitted)
    }

    pub fn gate(&self) -> &Gatekeeper {
        &self.gate
    }

    /// Forgets an address: its datagrams are dropped until it shakes hands again.
    pub fn evict(&mut self, addr: &SocketAddr) -> Option<Admission> {
        self.pacers.forget(addr);
        self.gate.evict(addr)
    }

    pub fn stats(&self) -> GateStats {
        self.stats
    }

    pub fn inner_mut(&mut self) -> &mut R {
        &mut self.inner
    }
}

impl<R: RawSocket> laminar::DatagramSocket for RelaySocket<R> {
    fn send_packet(&mut self, addr: &SocketAddr, payload: &[u8]) -> io::Result<usize> {
        self.pacers.on_sent(*addr, payload, self.clock.now());
        self.inner.send(*addr, payload)
    }

    fn receive_packet<'a>(&mut self, buffer: &'a mut [u8]) -> io::Result<(&'a [u8], SocketAddr)> {
        loop {
            let (n, from) = self.inner.recv(buffer)?;
            if n >= buffer.len() {
                self.stats.dropped_oversized += 1;
                continue;
            }
            if is_handshake(&buffer[..n]) {
                let now = self.clock.now();
                match self.gate.handle(from, &buffer[..n], now) {
                    GateOutcome::Reply(reply) => {
                        self.stats.handshake_replies += 1;
                        let _ = self.inner.send(from, &reply);
                    }
                    GateOutcome::Admitted { reply, admission } => {
                        self.stats.handshake_replies += 1;
                        let _ = self.inner.send(from, &reply);
                        self.admitted.push((from, admission));
                    }
                    GateOutcome::Drop(_) => self.stats.dropped_handshakes += 1,
                }
                continue;
            }
            if self.gate.is_admitted(&from) {
                self.pacers
                    .on_received(from, &buffer[..n], self.clock.now());
                return Ok((&buffer[..n], from));
            }
            self.stats.dropped_unadmitted += 1;
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    fn is_blocking_mode(&self) -> bool {
        false
    }
}

/// A client's socket: talks to one relay, shakes hands first.
#[derive(Debug)]
pub struct ClientSocket<R: RawSocket> {
    inner: R,
    relay: SocketAddr,
    handshake: ClientHandshake,
    clock: NetClock,
    stats: GateStats,
    pacer: PeerPacer,
}

impl<R: RawSocket> ClientSocket<R> {
    pub fn new(inner: R, relay: SocketAddr, nonce: u64, clock: NetClock) -> Self {
        ClientSocket {
            inner,
            relay,
            handshake: ClientHandshake::start(nonce),
            clock,
            stats: GateStats::default(),
            pacer: PeerPacer::new(PacerConfig::default()),
        }
    }

    /// Reliable packets due now for the relay.
    pub fn pace(&mut self, now: f64) -> Due {
        self.pacer.due(now)
    }

    pub fn pacer_stats(&self) -> PacerStats {
        self.pacer.stats()
    }

    pub fn relay(&self) -> SocketAddr {
        self.relay
    }

    pub fn handshake(&self) -> &ClientHandshake {
        &self.handshake
    }

    pub fn stats(&self) -> GateStats {
        self.stats
    }

    /// Sends the handshake datagram due now, if any. Replies are taken in
    /// `receive_packet`, so laminar's poll drives both.
    pub fn poll_handshake(&mut self) {
        let now = self.clock.now();
        if let Some(request) = self.handshake.poll(now) {
            let _ = self.inner.send(self.relay, &request);
        }
    }

    pub fn inner_mut(&mut self) -> &mut R {
        &mut self.inner
    }
}

impl<R: RawSocket> laminar::DatagramSocket for ClientSocket<R> {
    fn send_packet(&mut self, addr: &SocketAddr, payload: &[u8]) -> io::Result<usize> {
        if *addr != self.relay || !matches!(self.handshake, ClientHandshake::Admitted { .. }) {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "not admitted by the relay yet",
            ));
        }
        self.pacer.on_sent(payload, self.clock.now());
        self.inner.send(*addr, payload)
    }

    fn receive_packet<'a>(&mut self, buffer: &'a mut [u8]) -> io::Result<(&'a [u8], SocketAddr)> {
        loop {
            let (n, from) = self.inner.recv(buffer)?;
            if from != self.relay {
                self.stats.dropped_unadmitted += 1;
                continue;
            }
            if n >= buffer.len() {
                self.stats.dropped_oversized += 1;
                continue;
            }
            if is_handshake(&buffer[..n]) {
                let now = self.clock.now();
                self.handshake.receive(&buffer[..n], now);
                continue;
            }
            if matches!(self.handshake, ClientHandshake::Admitted { .. }) {
                self.pacer.on_received(&buffer[..n], self.clock.now());
                return Ok((&buffer[..n], from));
            }
            self.stats.dropped_unadmitted += 1;
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    fn is_blocking_mode(&self) -> bool {
        false
    }
}
