//! A relay with its game side and clients on one in-memory network and a
//! manual clock: whole-stack runs that repeat exactly for a seed, for the
//! long lockstep and scripted-element simulations.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use netsync::client::{Client, ClientConfig, ClientDriver, SocketFactory};
use netsync::net::clock::NetClock;
use netsync::net::memory::{MemoryNetwork, MemorySocket};
use netsync::net::raw_socket::RawSocket;
use netsync::netsim::NetworkProfile;
use netsync::server::embedded::GameEnd;
use netsync::server::relay_server::{RelayDriver, RelayServerConfig};

pub struct Sim {
    pub client: Client,
    pub driver: ClientDriver,
    /// This client's own clock (a view of the world's that can drift).
    pub clock: NetClock,
    /// Set to stop stepping its network side (a frozen machine).
    pub frozen: bool,
    /// Every socket address it opened, newest last.
    pub sockets: Arc<Mutex<Vec<SocketAddr>>>,
}

pub struct World {
    pub clock: NetClock,
    pub relay: RelayDriver<MemorySocket>,
    pub game: GameEnd,
    pub sims: Vec<Sim>,
    pub net: MemoryNetwork,
    pub relay_addr: SocketAddr,
    profile: NetworkProfile,
}

impl World {
    /// A relay (adjusted by `relay`) and `clients` clients (each config
    /// adjusted by `client`), every client's traffic through `profile`.
    pub fn new(
        seed: u64,
        profile: NetworkProfile,
        clients: usize,
        relay: impl FnOnce(&mut RelayServerConfig),
        client: impl Fn(&mut ClientConfig),
    ) -> World {
        let clock = NetClock::manual();
        let net = MemoryNetwork::new(clock.clone(), seed);
        let relay_socket = net.socket();
        let relay_addr = relay_socket.local_addr().unwrap();
        let mut config = RelayServerConfig {
            bind: relay_addr,
            ..Default::default()
        };
        relay(&mut config);
        config.validate().expect("relay settings");
        let mut driver = RelayDriver::new(relay_socket, config, clock.clone());
        let game = driver.embed();
        let mut world = World {
            clock,
            relay: driver,
            game,
            sims: Vec::new(),
            net,
            relay_addr,
            profile,
        };
        for _ in 0..clients {
            world.add_client(&client);
        }
        world
    }

    /// One more client (it connects on the next steps).
    pub fn add_client(&mut self, adjust: impl Fn(&mut ClientConfig)) -> usize {
        let network = self.net.clone();
        let profile = self.profile;
        let sockets = Arc::new(Mutex::new(Vec::new()));
        let opened = sockets.clone();
        let factory: SocketFactory = Box::new(move |_| {
            let s = network.socket();
            let addr = s.local_addr()?;
            network.set_profile(addr, profile);
            opened.lock().unwrap().push(addr);
            Ok(Box::new(s) as Box<dyn RawSocket>)
        });
        let mut config = ClientConfig::new(self.relay_addr);
        adjust(&mut config);
        let clock = self.clock.skewed();
        let (client, driver) = Client::driven(config, clock.clone(), factory).unwrap();
        self.sims.push(Sim {
            client,
            driver,
            clock,
            frozen: false,
            sockets,
        });
        self.sims.len() - 1
    }

    /// Steps the relay and every client's network side at `t`.
    pub fn step(&mut self, t: f64) {
        self.clock.set(t);
        self.relay.step();
        for s in self.sims.iter_mut().filter(|s| !s.frozen) {
            s.driver.step();
        }
    }

    /// The newest socket address of client `i`.
    pub fn addr(&self, i: usize) -> SocketAddr {
        *self.sims[i].sockets.lock().unwrap().last().unwrap()
    }

    /// The id the relay gave client `i` (0 until connected).
    pub fn id(&self, i: usize) -> u32 {
        self.sims[i].client.stats().network.client_id
    }
}
