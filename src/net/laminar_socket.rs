//! laminar's `DatagramSocket` over our sockets, with the handshake in
//! front: on the relay only admitted addresses reach laminar; on a client
//! only the relay's address does, and only after admission. Every
//! datagram also passes the ack pacer, which says when reliable traffic
//! is due (net::ack_pacer). In secure mode every datagram after the
//! handshake is sealed and opened here (net::secure), so laminar only
//! ever sees authenticated, unreplayed plaintext.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;

use super::ack_pacer::{Due, PacerConfig, PacerStats, Pacers, PeerPacer};
use super::clock::NetClock;
use super::handshake::{
    is_handshake, Admission, ClientHandshake, GateOutcome, GateSecurity, Gatekeeper, DROP_BAD_TOKEN,
};
use super::raw_socket::RawSocket;
use super::secure::{ConnectToken, OpenError, Session};

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
    /// Secure mode: handshakes whose token did not open (forged, damaged,
    /// for another relay) or whose proof of the token's key was wrong.
    pub dropped_bad_token: u64,
    /// Secure mode: datagrams that did not authenticate (forged, damaged,
    /// or not encrypted).
    pub dropped_forged: u64,
    /// Secure mode: datagrams seen before, or older than the replay window.
    pub dropped_replayed: u64,
}

impl GateStats {
    fn count_open_error(&mut self, e: OpenError) {
        match e {
            OpenError::Replayed => self.dropped_replayed += 1,
            OpenError::Malformed | OpenError::Forged => self.dropped_forged += 1,
        }
    }
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
    /// Secure mode: the encryption of each admitted address.
    sessions: HashMap<SocketAddr, Session>,
    /// Reused buffer for sealed datagrams.
    sealed: Vec<u8>,
}

impl<R: RawSocket> RelaySocket<R> {
    /// `security`: secure mode (connect tokens, encryption), else plain.
    pub fn new(
        inner: R,
        max_clients: usize,
        clock: NetClock,
        pacing: PacerConfig,
        security: Option<GateSecurity>,
    ) -> Self {
        let gate = match security {
            Some(s) => Gatekeeper::secure(max_clients, s),
            None => Gatekeeper::new(max_clients),
        };
        RelaySocket {
            inner,
            gate,
            clock,
            admitted: Vec::new(),
            stats: GateStats::default(),
            pacers: Pacers::new(pacing),
            sessions: HashMap::new(),
            sealed: Vec::with_capacity(2048),
        }
    }

    /// Calls `each` with every admitted address that has reliable packets
    /// due now (a pacer starts with the first datagram sent to it).
    pub fn pace_each(&mut self, now: f64, each: impl FnMut(SocketAddr, Due)) {
        self.pacers.due_each(now, each)
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
        self.sessions.remove(addr);
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
        if self.gate.is_secure() {
            let Some(session) = self.sessions.get_mut(addr) else {
                return Err(io::Error::new(
                    io::ErrorKind::NotConnected,
                    "no secure session with this address",
                ));
            };
            session.sealer.seal(payload, &mut self.sealed);
            self.inner.send(*addr, &self.sealed)?;
            return Ok(payload.len());
        }
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
                        if let Some(keys) = &admission.keys {
                            let session =
                                Session::relay_end(keys, admission.nonce, admission.client_id);
                            self.sessions.insert(from, session);
                        }
                        self.admitted.push((from, admission));
                    }
                    GateOutcome::Drop(why) if why == DROP_BAD_TOKEN => {
                        self.stats.dropped_bad_token += 1
                    }
                    GateOutcome::Drop(_) => self.stats.dropped_handshakes += 1,
                }
                continue;
            }
            // Secure mode: an admitted address is one with a session.
            let (start, end) = if self.gate.is_secure() {
                let Some(session) = self.sessions.get_mut(&from) else {
                    self.stats.dropped_unadmitted += 1;
                    continue;
                };
                match session.opener.open(&mut buffer[..n]) {
                    Ok(plain) => (9, 9 + plain.len()),
                    Err(e) => {
                        self.stats.count_open_error(e);
                        continue;
                    }
                }
            } else if self.gate.is_admitted(&from) {
                (0, n)
            } else {
                self.stats.dropped_unadmitted += 1;
                continue;
            };
            self.pacers
                .on_received(from, &buffer[start..end], self.clock.now());
            return Ok((&buffer[start..end], from));
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
    nonce: u64,
    handshake: ClientHandshake,
    clock: NetClock,
    stats: GateStats,
    pacer: PeerPacer,
    /// Secure mode: the connect token, and once admitted the session.
    token: Option<ConnectToken>,
    session: Option<Session>,
    sealed: Vec<u8>,
}

impl<R: RawSocket> ClientSocket<R> {
    /// `token`: secure mode (the relay must run with the token's secret).
    pub fn new(
        inner: R,
        relay: SocketAddr,
        nonce: u64,
        clock: NetClock,
        token: Option<ConnectToken>,
    ) -> Self {
        ClientSocket {
            inner,
            relay,
            nonce,
            handshake: ClientHandshake::start(nonce),
            clock,
            stats: GateStats::default(),
            pacer: PeerPacer::new(PacerConfig::default()),
            token,
            session: None,
            sealed: Vec::with_capacity(2048),
        }
    }

    /// Admitted: in secure mode, the session's keys for this attempt.
    fn admitted(&mut self) -> bool {
        let ClientHandshake::Admitted { client_id } = self.handshake else {
            return false;
        };
        if let (Some(token), None) = (&self.token, &self.session) {
            self.session = Some(Session::client_end(&token.keys, self.nonce, client_id));
        }
        true
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
        let version = super::handshake::PROTOCOL_VERSION;
        if let Some(request) = self.handshake.poll_with(now, version, self.token.as_ref()) {
            let _ = self.inner.send(self.relay, &request);
        }
    }

    pub fn inner_mut(&mut self) -> &mut R {
        &mut self.inner
    }
}

impl<R: RawSocket> laminar::DatagramSocket for ClientSocket<R> {
    fn send_packet(&mut self, addr: &SocketAddr, payload: &[u8]) -> io::Result<usize> {
        if *addr != self.relay || !self.admitted() {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "not admitted by the relay yet",
            ));
        }
        self.pacer.on_sent(payload, self.clock.now());
        if let Some(session) = &mut self.session {
            session.sealer.seal(payload, &mut self.sealed);
            self.inner.send(*addr, &self.sealed)?;
            return Ok(payload.len());
        }
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
            if !self.admitted() {
                self.stats.dropped_unadmitted += 1;
                continue;
            }
            let (start, end) = match &mut self.session {
                Some(session) => match session.opener.open(&mut buffer[..n]) {
                    Ok(plain) => (9, 9 + plain.len()),
                    Err(e) => {
                        self.stats.count_open_error(e);
                        continue;
                    }
                },
                None => (0, n),
            };
            self.pacer
                .on_received(&buffer[start..end], self.clock.now());
            return Ok((&buffer[start..end], from));
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    fn is_blocking_mode(&self) -> bool {
        false
    }
}
