//! An in-memory network for deterministic simulations: sockets that
//! deliver through seeded [`Link`]s on a manual [`NetClock`], so a whole
//! relay-and-clients run repeats exactly for a seed.

use std::collections::{BinaryHeap, HashMap};
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use super::clock::NetClock;
use super::raw_socket::{Pending, RawSocket};
use crate::netsim::{Link, NetworkProfile};

#[derive(Debug, Default)]
struct State {
    inboxes: HashMap<SocketAddr, BinaryHeap<Pending>>,
    links: HashMap<(SocketAddr, SocketAddr), Link>,
    /// Profile of the path to and from an address (default: none).
    profiles: HashMap<SocketAddr, NetworkProfile>,
    /// Directions cut by the test: (from, to).
    cut: std::collections::HashSet<(SocketAddr, SocketAddr)>,
    /// Every datagram sent, when recording: (from, to, bytes).
    recorded: Option<Vec<(SocketAddr, SocketAddr, Vec<u8>)>>,
    seed: u64,
    seq: u64,
    next_port: u16,
}

/// The shared network. Clone it into every socket.
#[derive(Clone, Debug)]
pub struct MemoryNetwork {
    state: Arc<Mutex<State>>,
    clock: NetClock,
}

impl MemoryNetwork {
    pub fn new(clock: NetClock, seed: u64) -> Self {
        MemoryNetwork {
            state: Arc::new(Mutex::new(State {
                seed,
                next_port: 1000,
                ..State::default()
            })),
            clock,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A socket at 10.0.0.1 (any fixed address works: nothing leaves the
    /// process) on the next free port.
    pub fn socket(&self) -> MemorySocket {
        let mut s = self.lock();
        s.next_port += 1;
        let addr = SocketAddr::from(([10, 0, 0, 1], s.next_port));
        s.inboxes.insert(addr, BinaryHeap::new());
        MemorySocket {
            network: self.clone(),
            addr,
        }
    }

    /// Traffic to and from `addr` goes through `profile`.
    pub fn set_profile(&self, addr: SocketAddr, profile: NetworkProfile) {
        self.lock().profiles.insert(addr, profile);
    }

    /// Cuts (or restores) one direction between two addresses: a one-way
    /// outage, as when a route fails on the way back only.
    pub fn cut(&self, from: SocketAddr, to: SocketAddr, cut: bool) {
        let mut s = self.lock();
        if cut {
            s.cut.insert((from, to));
        } else {
            s.cut.remove(&(from, to));
        }
    }

    /// Starts keeping a copy of every datagram sent (what a capture on the
    /// wire would see, before any loss).
    pub fn record(&self) {
        self.lock().recorded.get_or_insert_with(Vec::new);
    }

    /// The datagrams sent since `record`: (from, to, bytes).
    pub fn recorded(&self) -> Vec<(SocketAddr, SocketAddr, Vec<u8>)> {
        self.lock().recorded.clone().unwrap_or_default()
    }

    /// Datagrams in flight (sent, not yet received), and the most
    /// waiting for any one address: that address, how many, how many of
    /// them are due already, and how far ahead the last is due (s).
    pub fn in_flight(&self) -> (usize, Option<(SocketAddr, usize, usize, f64)>) {
        let now = (self.clock.now() * 1e6).round() as u64;
        let s = self.lock();
        let total = s.inboxes.values().map(|i| i.len()).sum();
        let most = s.inboxes.iter().max_by_key(|(_, i)| i.len()).map(|(a, i)| {
            let due = i.iter().filter(|p| p.due_micros <= now).count();
            let last = i.iter().map(|p| p.due_micros).max().unwrap_or(now);
            (*a, i.len(), due, last.saturating_sub(now) as f64 / 1e6)
        });
        (total, most)
    }

    /// Closes an address: what was in flight to it is lost.
    pub fn close(&self, addr: SocketAddr) {
        self.lock().inboxes.remove(&addr);
    }
}

/// One endpoint of a [`MemoryNetwork`].
#[derive(Debug)]
pub struct MemorySocket {
    network: MemoryNetwork,
    addr: SocketAddr,
}

impl RawSocket for MemorySocket {
    fn send(&mut self, to: SocketAddr, payload: &[u8]) -> io::Result<usize> {
        let now = self.network.clock.now();
        let mut s = self.network.lock();
        if let Some(r) = s.recorded.as_mut() {
            r.push((self.addr, to, payload.to_vec()));
        }
        if s.cut.contains(&(self.addr, to)) {
            return Ok(payload.len());
        }
        let profile = s
            .profiles
            .get(&self.addr)
            .or_else(|| s.profiles.get(&to))
            .copied()
            .unwrap_or(NetworkProfile::NONE);
        // One seeded link per direction of each pair.
        let seed = s.seed ^ (self.addr.port() as u64) << 16 ^ to.port() as u64;
        let link = s
            .links
            .entry((self.addr, to))
            .or_insert_with(|| Link::new(profile, seed));
        let (arrivals, count) = link.transmit(now, payload.len());
        for &at in &arrivals[..count] {
            s.seq += 1;
            let seq = s.seq;
            if let Some(inbox) = s.inboxes.get_mut(&to) {
                inbox.push(Pending {
                    due_micros: (at * 1e6).round() as u64,
                    order: seq,
                    addr: self.addr,
                    bytes: payload.to_vec(),
                });
            }
        }
        Ok(payload.len())
    }

    fn recv(&mut self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let now = (self.network.clock.now() * 1e6).round() as u64;
        let mut s = self.network.lock();
        let Some(inbox) = s.inboxes.get_mut(&self.addr) else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        if inbox.peek().is_some_and(|d| d.due_micros <= now) {
            if let Some(d) = inbox.pop() {
                let n = d.bytes.len().min(buffer.len());
                buffer[..n].copy_from_slice(&d.bytes[..n]);
                return Ok((n, d.addr));
            }
        }
        Err(io::ErrorKind::WouldBlock.into())
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.addr)
    }
}

impl Drop for MemorySocket {
    fn drop(&mut self) {
        self.network.close(self.addr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delivers_after_the_profile_latency_and_repeats_for_a_seed() {
        let run = |seed| {
            let clock = NetClock::manual();
            let net = MemoryNetwork::new(clock.clone(), seed);
            let mut a = net.socket();
            let mut b = net.socket();
            net.set_profile(a.local_addr().unwrap(), NetworkProfile::AVG);
            let mut got = Vec::new();
            for i in 0..200u32 {
                clock.set(i as f64 * 0.01);
                a.send(b.local_addr().unwrap(), &i.to_le_bytes()).unwrap();
                let mut buf = [0u8; 16];
                while let Ok((n, _)) = b.recv(&mut buf) {
                    got.push((i, u32::from_le_bytes(buf[..n].try_into().unwrap())));
                }
            }
            got
        };
        let first = run(3);
        assert_eq!(first, run(3));
        assert!(first.len() > 150 && first.len() < 200, "{}", first.len());
        // Sent at tick k, arrives 70..130 ms later: 7..13 ticks.
        assert!(first.iter().all(|(at, k)| (7..=14).contains(&(at - k))));
    }
}
