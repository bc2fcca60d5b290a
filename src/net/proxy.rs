//! A UDP proxy that puts real traffic through a network profile: studios
//! run their own game builds through it (`netsync netsim`). Each client
//! source gets its own upstream socket, conditioned both ways.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::raw_socket::{Conditioned, RawSocket, UdpTransport, MAX_DATAGRAM};
use crate::netsim::NetworkProfile;

/// Sessions silent this long are closed.
const SESSION_IDLE: Duration = Duration::from_secs(60);
/// Most concurrent client sources.
pub const MAX_SESSIONS: usize = 1024;

struct Session {
    upstream: Conditioned<UdpTransport>,
    last_seen: Instant,
}

/// Counters of a proxy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProxyStats {
    pub sessions: usize,
    pub to_server: u64,
    pub to_client: u64,
    pub refused_sessions: u64,
}

/// The proxy. Call [`Proxy::poll`] in a loop.
pub struct Proxy {
    listen: UdpTransport,
    forward: SocketAddr,
    profile: NetworkProfile,
    seed: u64,
    sessions: HashMap<SocketAddr, Session>,
    stats: ProxyStats,
}

impl Proxy {
    pub fn bind(
        listen: SocketAddr,
        forward: SocketAddr,
        profile: NetworkProfile,
        seed: u64,
    ) -> io::Result<Proxy> {
        Ok(Proxy {
            listen: UdpTransport::bind(listen, 4 << 20)?,
            forward,
            profile,
            seed,
            sessions: HashMap::new(),
            stats: ProxyStats::default(),
        })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listen.local_addr()
    }

    pub fn stats(&self) -> ProxyStats {
        ProxyStats {
            sessions: self.sessions.len(),
            ..self.stats
        }
    }

    /// Moves every datagram that is due; returns how many moved.
    pub fn poll(&mut self) -> io::Result<usize> {
        let mut moved = 0;
        let mut buf = [0u8; MAX_DATAGRAM];
        loop {
            match self.listen.recv(&mut buf) {
                Ok((n, from)) => {
                    if !self.sessions.contains_key(&from) {
                        if self.sessions.len() >= MAX_SESSIONS {
                            self.stats.refused_sessions += 1;
                            continue;
                        }
                        let bind: SocketAddr = if self.forward.is_ipv4() {
                            "0.0.0.0:0".parse().expect("literal")
                        } else {
                            "[::]:0".parse().expect("literal")
                        };
                        let seed = self.seed.wrapping_add(self.sessions.len() as u64);
                        let upstream = Conditioned::new(
                            UdpTransport::bind(bind, 1 << 20)?,
                            self.profile,
                            seed,
                        );
                        self.sessions.insert(
                            from,
                            Session {
                                upstream,
                                last_seen: Instant::now(),
                            },
                        );
                    }
                    if let Some(s) = self.sessions.get_mut(&from) {
                        s.last_seen = Instant::now();
                        s.upstream.send(self.forward, &buf[..n])?;
                        self.stats.to_server += 1;
                        moved += 1;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        for (client, session) in self.sessions.iter_mut() {
            session.upstream.flush();
            loop {
                match session.upstream.recv(&mut buf) {
                    Ok((n, from)) if from == self.forward => {
                        self.listen.send(*client, &buf[..n])?;
                        self.stats.to_client += 1;
                        moved += 1;
                    }
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(e),
                }
            }
        }
        self.sessions
            .retain(|_, s| s.last_seen.elapsed() < SESSION_IDLE);
        Ok(moved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxied_round_trip_takes_the_profile_latency_twice() {
        let mut echo = UdpTransport::bind("127.0.0.1:0".parse().unwrap(), 1 << 16).unwrap();
        let profile = NetworkProfile {
            latency: 0.03,
            ..NetworkProfile::NONE
        };
        let mut proxy = Proxy::bind(
            "127.0.0.1:0".parse().unwrap(),
            echo.local_addr().unwrap(),
            profile,
            1,
        )
        .unwrap();
        let mut client = UdpTransport::bind("127.0.0.1:0".parse().unwrap(), 1 << 16).unwrap();
        let sent = Instant::now();
        client.send(proxy.local_addr().unwrap(), b"ping").unwrap();
        let mut buf = [0u8; 64];
        let deadline = Instant::now() + Duration::from_secs(2);
        let rtt = loop {
            proxy.poll().unwrap();
            if let Ok((n, from)) = echo.recv(&mut buf) {
                echo.send(from, &buf[..n]).unwrap();
            }
            if let Ok((n, _)) = client.recv(&mut buf) {
                assert_eq!(&buf[..n], b"ping");
                break sent.elapsed();
            }
            assert!(Instant::now() < deadline, "no echo");
            std::thread::sleep(Duration::from_micros(200));
        };
        assert!(rtt >= Duration::from_millis(58), "rtt {rtt:?}");
        assert_eq!(proxy.stats().sessions, 1);
    }
}
