//! The datagram sockets netsync's transports are built from: a trait for
//! "send one datagram, receive one datagram, never block", the real UDP
//! socket, and the seeded conditioner that wraps either.

use std::collections::BinaryHeap;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::Instant;

use crate::netsim::{Link, NetworkProfile};

/// A non-blocking datagram socket. `recv` returns `WouldBlock` when
/// nothing is waiting.
pub trait RawSocket: Send + std::fmt::Debug {
    fn send(&mut self, to: SocketAddr, payload: &[u8]) -> io::Result<usize>;
    fn recv(&mut self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)>;
    fn local_addr(&self) -> io::Result<SocketAddr>;
}

impl RawSocket for Box<dyn RawSocket> {
    fn send(&mut self, to: SocketAddr, payload: &[u8]) -> io::Result<usize> {
        (**self).send(to, payload)
    }
    fn recv(&mut self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        (**self).recv(buffer)
    }
    fn local_addr(&self) -> io::Result<SocketAddr> {
        (**self).local_addr()
    }
}

/// Largest datagram netsync sends or accepts (laminar's fragment size plus
/// headers stays below it).
pub const MAX_DATAGRAM: usize = 1500;

/// A real UDP socket, non-blocking, with large kernel buffers so that a
/// burst of arrivals is not dropped while a tick's sends go out.
#[derive(Debug)]
pub struct UdpTransport {
    socket: UdpSocket,
}

impl UdpTransport {
    /// Binds `addr` with `buffer_bytes` of send and receive buffer (the
    /// kernel may cap it).
    pub fn bind(addr: SocketAddr, buffer_bytes: usize) -> io::Result<Self> {
        use socket2::{Domain, Protocol, Socket, Type};
        let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
        // Best effort: a smaller buffer still works.
        let _ = socket.set_recv_buffer_size(buffer_bytes);
        let _ = socket.set_send_buffer_size(buffer_bytes);
        socket.bind(&addr.into())?;
        socket.set_nonblocking(true)?;
        Ok(UdpTransport {
            socket: socket.into(),
        })
    }
}

impl RawSocket for UdpTransport {
    fn send(&mut self, to: SocketAddr, payload: &[u8]) -> io::Result<usize> {
        self.socket.send_to(payload, to)
    }
    fn recv(&mut self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.socket.recv_from(buffer)
    }
    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }
}

/// A datagram waiting for its delivery time (microseconds); ties keep
/// send order. Shared by the conditioner and the in-memory network.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Pending {
    pub due_micros: u64,
    pub order: u64,
    pub addr: SocketAddr,
    pub bytes: Vec<u8>,
}

impl Ord for Pending {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // Earliest first from a max-heap.
        (other.due_micros, other.order).cmp(&(self.due_micros, self.order))
    }
}

impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Counters of a conditioner.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConditionerStats {
    pub sent: u64,
    pub received: u64,
    /// Dropped by the simulated network (loss) or a full queue.
    pub dropped: u64,
    pub duplicated: u64,
}

/// Most datagrams a conditioner holds per direction; beyond, it drops.
const MAX_QUEUED: usize = 16_384;

/// Wraps a socket and puts both directions through seeded links of a
/// network profile: latency, jitter, loss, bursts, duplication,
/// reordering, stalls and a bandwidth cap, in real time.
#[derive(Debug)]
pub struct Conditioned<R: RawSocket> {
    inner: R,
    outbound: Link,
    inbound: Link,
    start: Instant,
    queued_out: BinaryHeap<Pending>,
    queued_in: BinaryHeap<Pending>,
    order: u64,
    stats: ConditionerStats,
}

impl<R: RawSocket> Conditioned<R> {
    pub fn new(inner: R, profile: NetworkProfile, seed: u64) -> Self {
        Conditioned {
            inner,
            outbound: Link::new(profile, seed),
            inbound: Link::new(profile, seed ^ 0x9E37_79B9_7F4A_7C15),
            start: Instant::now(),
            queued_out: BinaryHeap::new(),
            queued_in: BinaryHeap::new(),
            order: 0,
            stats: ConditionerStats::default(),
        }
    }

    pub fn stats(&self) -> ConditionerStats {
        self.stats
    }

    fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    fn enqueue(
        queue: &mut BinaryHeap<Pending>,
        link: &mut Link,
        stats: &mut ConditionerStats,
        order: &mut u64,
        now: f64,
        addr: SocketAddr,
        bytes: &[u8],
    ) {
        let (arrivals, count) = link.transmit(now, bytes.len());
        if count == 0 {
            stats.dropped += 1;
        }
        if count == 2 {
            stats.duplicated += 1;
        }
        for &at in &arrivals[..count] {
            if queue.len() >= MAX_QUEUED {
                stats.dropped += 1;
                continue;
            }
            *order += 1;
            queue.push(Pending {
                due_micros: (at * 1e6) as u64,
                order: *order,
                addr,
                bytes: bytes.to_vec(),
            });
        }
    }

    /// Sends every outbound datagram whose time has come.
    pub fn flush(&mut self) {
        let now = (self.now() * 1e6) as u64;
        while self.queued_out.peek().is_some_and(|p| p.due_micros <= now) {
            if let Some(p) = self.queued_out.pop() {
                // A failed send is a lost packet, as on a real network.
                if self.inner.send(p.addr, &p.bytes).is_err() {
                    self.stats.dropped += 1;
                }
            }
        }
    }
}

impl<R: RawSocket> RawSocket for Conditioned<R> {
    fn send(&mut self, to: SocketAddr, payload: &[u8]) -> io::Result<usize> {
        let now = self.now();
        self.stats.sent += 1;
        Self::enqueue(
            &mut self.queued_out,
            &mut self.outbound,
            &mut self.stats,
            &mut self.order,
            now,
            to,
            payload,
        );
        self.flush();
        Ok(payload.len())
    }

    fn recv(&mut self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.flush();
        let mut scratch = [0u8; MAX_DATAGRAM];
        loop {
            match self.inner.recv(&mut scratch) {
                Ok((n, from)) => {
                    let now = self.now();
                    self.stats.received += 1;
                    Self::enqueue(
                        &mut self.queued_in,
                        &mut self.inbound,
                        &mut self.stats,
                        &mut self.order,
                        now,
                        from,
                        &scratch[..n],
                    );
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        let now = (self.now() * 1e6) as u64;
        if self.queued_in.peek().is_some_and(|p| p.due_micros <= now) {
            if let Some(p) = self.queued_in.pop() {
                let n = p.bytes.len().min(buffer.len());
                buffer[..n].copy_from_slice(&p.bytes[..n]);
                return Ok((n, p.addr));
            }
        }
        Err(io::ErrorKind::WouldBlock.into())
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn loopback() -> UdpTransport {
        UdpTransport::bind("127.0.0.1:0".parse().unwrap(), 1 << 20).unwrap()
    }

    fn receive_one(s: &mut impl RawSocket, within: Duration) -> Option<(Vec<u8>, Instant)> {
        let deadline = Instant::now() + within;
        let mut buf = [0u8; MAX_DATAGRAM];
        while Instant::now() < deadline {
            match s.recv(&mut buf) {
                Ok((n, _)) => return Some((buf[..n].to_vec(), Instant::now())),
                Err(_) => std::thread::sleep(Duration::from_micros(200)),
            }
        }
        None
    }

    #[test]
    fn udp_loopback_round_trip() {
        let mut a = loopback();
        let mut b = loopback();
        a.send(b.local_addr().unwrap(), b"hello").unwrap();
        let (got, _) = receive_one(&mut b, Duration::from_secs(2)).unwrap();
        assert_eq!(got, b"hello");
    }

    #[test]
    fn conditioner_delays_by_the_profile_latency() {
        let profile = NetworkProfile {
            latency: 0.05,
            jitter: 0.0,
            ..NetworkProfile::NONE
        };
        let mut a = Conditioned::new(loopback(), profile, 1);
        let mut b = loopback();
        let sent = Instant::now();
        a.send(b.local_addr().unwrap(), b"late").unwrap();
        // Nothing arrives before its time; the sender must keep flushing.
        let deadline = Instant::now() + Duration::from_secs(2);
        let mut buf = [0u8; 64];
        let arrived = loop {
            a.flush();
            if let Ok((n, _)) = b.recv(&mut buf) {
                assert_eq!(&buf[..n], b"late");
                break Instant::now();
            }
            assert!(Instant::now() < deadline, "never arrived");
            std::thread::sleep(Duration::from_micros(200));
        };
        let delay = arrived.duration_since(sent).as_secs_f64();
        assert!((0.045..0.5).contains(&delay), "delay {delay}");
    }

    #[test]
    fn conditioner_drops_everything_on_a_dead_link() {
        let profile = NetworkProfile {
            loss: 1.0,
            ..NetworkProfile::NONE
        };
        let mut a = Conditioned::new(loopback(), profile, 1);
        let mut b = loopback();
        for _ in 0..20 {
            a.send(b.local_addr().unwrap(), b"x").unwrap();
        }
        assert!(receive_one(&mut b, Duration::from_millis(100)).is_none());
        assert_eq!(a.stats().dropped, 20);
    }
}
