//! The soak on real UDP sockets on loopback in real time: the relay on
//! its own thread, every client with its network thread and the HOSTILE
//! profile in its conditioner (both directions).

use std::time::{Duration, Instant};

use netsync::client::{Client, ClientConfig};
use netsync::netsim::NetworkProfile;
use netsync::server::relay_server::{RelayServer, RelayServerConfig, RelayServerStats};

use crate::rounds::World;

pub struct Loopback {
    relay: Option<RelayServer>,
    profile: NetworkProfile,
    start: Instant,
    spawned: u64,
    /// Frames that began more than a frame late (the machine fell behind).
    pub late_frames: u64,
}

impl Loopback {
    pub fn new(profile: NetworkProfile) -> Loopback {
        let relay = RelayServer::start(RelayServerConfig {
            bind: "127.0.0.1:0".parse().unwrap(),
            ..Default::default()
        })
        .expect("a relay on loopback");
        Loopback {
            relay: Some(relay),
            profile,
            start: Instant::now(),
            spawned: 0,
            late_frames: 0,
        }
    }

    pub fn stop(&mut self) {
        if let Some(r) = self.relay.take() {
            r.stop();
        }
    }

    fn relay(&self) -> &RelayServer {
        self.relay.as_ref().expect("the relay runs until stop")
    }
}

impl World for Loopback {
    fn advance(&mut self, now: f64) -> f64 {
        let due = self.start + Duration::from_secs_f64(now);
        match due.checked_duration_since(Instant::now()) {
            Some(wait) => std::thread::sleep(wait),
            None if Instant::now() - due > Duration::from_secs_f64(1.0 / 60.0) => {
                self.late_frames += 1;
            }
            None => {}
        }
        // Real time: frames that ran late skip ahead, as an engine's do.
        self.start.elapsed().as_secs_f64().max(now)
    }

    fn spawn(&mut self, _slot: usize) -> Client {
        self.spawned += 1;
        let mut config = ClientConfig::new(self.relay().local_addr());
        config.conditioner = Some(self.profile);
        config.conditioner_seed = self.spawned;
        Client::connect(config).expect("a client")
    }

    fn quit(&mut self, _slot: usize, client: Client) {
        client.close();
    }

    fn outage(&mut self, _slot: usize, _cut: bool) -> bool {
        false
    }

    fn sees_relay(&self) -> bool {
        false
    }

    fn holder(&self, _entity: u64) -> Option<(Option<u32>, u32)> {
        None
    }

    fn describe(&self) -> String {
        String::new()
    }

    fn relay_stats(&self) -> RelayServerStats {
        self.relay().stats()
    }
}
