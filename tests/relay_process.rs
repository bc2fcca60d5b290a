//! `netsync relay` as a process: clients connect and see each other; Ctrl-C
//! stops it cleanly.

use std::net::UdpSocket;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use glam::{Quat, Vec3};
use netsync::client::{Client, ClientConfig, ConnectionState};
use netsync::core::Sample;

fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn relay_process_serves_clients_and_stops_on_ctrl_c() {
    let port = free_port();
    let mut relay = Command::new(env!("CARGO_BIN_EXE_netsync"))
        .args(["relay", "--bind", &format!("127.0.0.1:{port}")])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut a = Client::connect(ClientConfig::new(addr)).unwrap();
    let mut b = Client::connect(ClientConfig::new(addr)).unwrap();
    a.register(1).unwrap();
    b.register(2).unwrap();
    let start = Instant::now();
    let mut seen = (0, 0);
    while start.elapsed() < Duration::from_secs(4) && seen != (1, 1) {
        let now = start.elapsed().as_secs_f64();
        for (c, id) in [(&mut a, 1u64), (&mut b, 2)] {
            if let Some(st) = c.server_time(now) {
                let s = Sample::at(st, Vec3::new(st as f32, 0.0, id as f32), Quat::IDENTITY);
                c.set_state(id, s).unwrap();
            }
        }
        seen = (
            a.tick_with(now, |_, _| {}).unwrap(),
            b.tick_with(now, |_, _| {}).unwrap(),
        );
        std::thread::sleep(Duration::from_millis(16));
    }
    assert_eq!(seen, (1, 1));
    assert_eq!(a.refresh_state(), ConnectionState::Connected);
    let status = Command::new("kill")
        .args(["-INT", &relay.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(3);
    let code = loop {
        if let Some(code) = relay.try_wait().unwrap() {
            break code;
        }
        assert!(Instant::now() < deadline, "relay did not stop on Ctrl-C");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(code.success(), "{code:?}");
    let mut log = String::new();
    std::io::Read::read_to_string(relay.stderr.as_mut().unwrap(), &mut log).unwrap();
    assert!(
        log.contains("client 1 joined") && log.contains("relay stopped"),
        "{log}"
    );
}

#[test]
fn relay_refuses_bad_flags_with_a_message() {
    let out = Command::new(env!("CARGO_BIN_EXE_netsync"))
        .args(["relay", "--rate", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--rate: must be 1..=240"));
    let out = Command::new(env!("CARGO_BIN_EXE_netsync"))
        .args(["relay", "--neutral", "whoever"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("--neutral: `whoever` is not first-ready or nobody"));
    let file = std::env::temp_dir().join(format!("netsync-relay-{}.conf", std::process::id()));
    std::fs::write(&file, "rate = 20\ncell-size = -3\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_netsync"))
        .args(["relay", "--config", file.to_str().unwrap()])
        .output()
        .unwrap();
    std::fs::remove_file(&file).unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--cell-size: must be"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
