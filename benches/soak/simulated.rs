//! The soak on the in-memory network and a manual clock: deterministic
//! for a seed, and as fast as the machine goes.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use netsync::client::{Client, ClientConfig, ClientDriver, SocketFactory};
use netsync::net::clock::NetClock;
use netsync::net::memory::{MemoryNetwork, MemorySocket};
use netsync::net::raw_socket::RawSocket;
use netsync::netsim::NetworkProfile;
use netsync::server::relay_server::{RelayDriver, RelayServerConfig, RelayServerStats};

use crate::rounds::World;
use crate::table::SEATS;

/// Network steps: the client and relay threads poll about this often.
const STEP: f64 = 0.002;

pub struct Simulated {
    clock: NetClock,
    net: MemoryNetwork,
    relay: RelayDriver<MemorySocket>,
    relay_addr: SocketAddr,
    drivers: Vec<Option<ClientDriver>>,
    /// Every socket each seat's clients opened.
    sockets: Vec<Arc<Mutex<Vec<SocketAddr>>>>,
    cut: Vec<bool>,
    profile: NetworkProfile,
    now: f64,
}

impl Simulated {
    pub fn new(seed: u64, profile: NetworkProfile) -> Simulated {
        let clock = NetClock::manual();
        let net = MemoryNetwork::new(clock.clone(), seed);
        let socket = net.socket();
        let relay_addr = socket.local_addr().expect("memory socket address");
        let relay = RelayDriver::new(
            socket,
            RelayServerConfig {
                bind: relay_addr,
                ..Default::default()
            },
            clock.clone(),
        );
        Simulated {
            clock,
            net,
            relay,
            relay_addr,
            drivers: (0..SEATS).map(|_| None).collect(),
            sockets: (0..SEATS).map(|_| Default::default()).collect(),
            cut: vec![false; SEATS],
            profile,
            now: 0.0,
        }
    }

    fn apply_cut(&self, slot: usize) {
        for &addr in self.sockets[slot].lock().unwrap().iter() {
            self.net.cut(addr, self.relay_addr, self.cut[slot]);
            self.net.cut(self.relay_addr, addr, self.cut[slot]);
        }
    }
}

impl World for Simulated {
    fn advance(&mut self, now: f64) -> f64 {
        while self.now < now {
            self.now = (self.now + STEP).min(now);
            self.clock.set(self.now);
            self.relay.step();
            for d in self.drivers.iter_mut().flatten() {
                d.step();
            }
            // A seat in an outage loses the sockets it opens meanwhile too.
            for slot in 0..SEATS {
                if self.cut[slot] {
                    self.apply_cut(slot);
                }
            }
        }
        now
    }

    fn spawn(&mut self, slot: usize) -> Client {
        let network = self.net.clone();
        let opened = self.sockets[slot].clone();
        let profile = self.profile;
        let factory: SocketFactory = Box::new(move |_| {
            let s = network.socket();
            let addr = s.local_addr()?;
            network.set_profile(addr, profile);
            let mut opened = opened.lock().unwrap();
            // Closed ones are gone from the network; keep the list short.
            opened.clear();
            opened.push(addr);
            Ok(Box::new(s) as Box<dyn RawSocket>)
        });
        let (client, driver) = Client::driven(
            ClientConfig::new(self.relay_addr),
            self.clock.clone(),
            factory,
        )
        .expect("a valid client configuration");
        self.drivers[slot] = Some(driver);
        client
    }

    fn quit(&mut self, slot: usize, client: Client) {
        client.close();
        if let Some(mut driver) = self.drivers[slot].take() {
            driver.say_goodbye();
        }
    }

    fn outage(&mut self, slot: usize, cut: bool) -> bool {
        self.cut[slot] = cut;
        self.apply_cut(slot);
        true
    }

    fn sees_relay(&self) -> bool {
        true
    }

    fn holder(&self, entity: u64) -> Option<(Option<u32>, u32)> {
        self.relay.holder(entity)
    }

    fn describe(&self) -> String {
        let (total, most) = self.net.in_flight();
        let relay = self.relay_addr;
        match most {
            Some((addr, n, due, ahead)) => format!(
                "; {total} datagrams in flight, {n} for {}{addr} ({due} due, the last in {ahead:.2} s)",
                if addr == relay { "the relay " } else { "" },
            ),
            None => String::new(),
        }
    }

    fn relay_stats(&self) -> RelayServerStats {
        self.relay.stats()
    }
}
