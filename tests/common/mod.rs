//! What the integration tests that drive the library through the C ABI
//! share: starting a relay, connecting clients, reading events.
#![allow(dead_code)] // each test file uses its own subset

pub mod area_scene;
pub mod sim;

use std::ffi::CString;
use std::ptr;

use netsync::ffi::client::*;
use netsync::ffi::result::NetsyncResult;
use netsync::ffi::server::*;
use netsync::ffi::server_game::{netsync_server_poll_event, NetsyncServerEvent};
use netsync::ffi::types::*;

pub const OK: NetsyncResult = NetsyncResult::NETSYNC_OK;

/// A relay on 127.0.0.1 with `adjust` applied to the default settings,
/// or the code `netsync_server_start` refused it with.
pub fn try_start_server_with(
    adjust: impl FnOnce(&mut NetsyncServerConfig),
) -> Result<*mut NetsyncServer, NetsyncResult> {
    let mut config = unsafe { std::mem::zeroed::<NetsyncServerConfig>() };
    assert_eq!(netsync_server_config_default(&mut config), OK);
    config.port = 0;
    adjust(&mut config);
    let ip = CString::new("127.0.0.1").unwrap();
    let mut server = ptr::null_mut();
    match netsync_server_start(&config, ip.as_ptr(), &mut server) {
        r if r == OK => Ok(server),
        r => Err(r),
    }
}

/// A relay on 127.0.0.1 with `adjust` applied to the default settings.
pub fn start_server_with(adjust: impl FnOnce(&mut NetsyncServerConfig)) -> *mut NetsyncServer {
    try_start_server_with(adjust).expect("the relay starts")
}

pub fn start_server(port: u16, idle_timeout: f64) -> *mut NetsyncServer {
    start_server_with(|c| {
        c.port = port;
        c.idle_timeout = idle_timeout;
    })
}

pub fn port_of(server: *mut NetsyncServer) -> u16 {
    let mut port = 0;
    assert_eq!(netsync_server_port(server, &mut port), OK);
    port
}

pub fn connect(port: u16, idle_timeout: f64) -> *mut NetsyncClient {
    connect_through(port, idle_timeout, NETSYNC_NETWORK_NONE, 0)
}

/// A client whose traffic passes the conditioner `network`
/// (`NETSYNC_NETWORK_*`) seeded with `seed`.
pub fn connect_through(
    port: u16,
    idle_timeout: f64,
    network: u32,
    seed: u64,
) -> *mut NetsyncClient {
    let mut config = unsafe { std::mem::zeroed::<NetsyncClientConfig>() };
    assert_eq!(netsync_client_config_default(&mut config), OK);
    config.idle_timeout = idle_timeout;
    config.conditioner = network;
    config.conditioner_seed = seed;
    let address = CString::new(format!("127.0.0.1:{port}")).unwrap();
    let mut client = ptr::null_mut();
    assert_eq!(
        netsync_client_connect(&config, address.as_ptr(), &mut client),
        OK
    );
    client
}

/// A sample of `id` at `position`, moving with `velocity`.
pub fn sample(id: u64, position: [f32; 3], velocity: [f32; 3]) -> NetsyncSample {
    let v = |a: [f32; 3]| NetsyncVec3 {
        x: a[0],
        y: a[1],
        z: a[2],
    };
    NetsyncSample {
        entity_id: id,
        position: v(position),
        rotation: NetsyncQuat::default(),
        linear_velocity: v(velocity),
        angular_velocity: NetsyncVec3::default(),
        flags: NETSYNC_SAMPLE_HAS_VELOCITY,
    }
}

/// Entity `id` on a circle of radius 2 m at time `t`.
pub fn circle(id: u64, t: f64) -> NetsyncSample {
    let a = t as f32 + id as f32;
    sample(
        id,
        [2.0 * a.cos(), 0.0, 2.0 * a.sin()],
        [-2.0 * a.sin(), 0.0, 2.0 * a.cos()],
    )
}

/// Calls `poll` until it reports nothing waiting; what it gave, in order
/// (the shape of every `netsync_*_poll_*` call).
pub fn drain<T: Default>(mut poll: impl FnMut(&mut T, &mut bool) -> NetsyncResult) -> Vec<T> {
    let mut all = Vec::new();
    loop {
        let mut item = T::default();
        let mut has = false;
        assert_eq!(poll(&mut item, &mut has), OK);
        if !has {
            return all;
        }
        all.push(item);
    }
}

pub fn events(client: *mut NetsyncClient) -> Vec<NetsyncClientEvent> {
    drain(|e, has| netsync_client_poll_event(client, e, has))
}

/// Every event the embedded server `server` has waiting.
pub fn server_events(server: *mut NetsyncServer) -> Vec<NetsyncServerEvent> {
    drain(|e, has| netsync_server_poll_event(server, e, has))
}

/// Ticks `client` at `now` and returns every shown transform.
pub fn tick(client: *mut NetsyncClient, now: f64) -> Vec<NetsyncTransform> {
    let mut out = vec![NetsyncTransform::default(); 64];
    let mut count = 0;
    assert_eq!(
        netsync_client_tick(client, now, out.as_mut_ptr(), out.len(), &mut count),
        OK
    );
    out.truncate(count);
    out
}

/// The server time `client` estimates at engine time `now`, once known.
pub fn server_time(client: *mut NetsyncClient, now: f64) -> Option<f64> {
    let mut st = 0.0;
    (netsync_client_server_time(client, now, &mut st) == OK).then_some(st)
}

pub fn holds(client: *mut NetsyncClient, entity: u64) -> bool {
    let mut held = 0u8;
    assert_eq!(netsync_client_holds(client, entity, &mut held), OK);
    held != 0
}

pub fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(0)
}
