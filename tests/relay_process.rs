//! `netsync relay` as a process: clients connect and see each other; Ctrl-C
//! stops it cleanly; a config file sets it up; `netsync netsim` puts a
//! client's traffic on a named profile.

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

fn netsync(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_netsync"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn secure_relay_admits_token_holders_only_and_says_which_mode_it_runs() {
    let dir = std::env::temp_dir().join(format!("netsync-secure-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let secret = dir.join("relay.key");
    let secret = secret.to_str().unwrap();
    let made = netsync(&["token", "new-secret", "--out", secret]);
    assert!(made.status.success(), "{made:?}");
    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let relay = Command::new(env!("CARGO_BIN_EXE_netsync"))
        .args([
            "relay",
            "--bind",
            &bind,
            "--secret-file",
            secret,
            "--duration",
            "4",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let token_file = dir.join("player.token");
    let issued = netsync(&[
        "token",
        "issue",
        "--secret-file",
        secret,
        "--client-id",
        "4242",
        "--relay",
        &bind,
        "--lifetime",
        "60",
        "--out",
        token_file.to_str().unwrap(),
    ]);
    assert!(issued.status.success(), "{issued:?}");
    let hex = netsync(&[
        "token",
        "issue",
        "--secret-file",
        secret,
        "--client-id",
        "1",
        "--relay",
        &bind,
    ]);
    let inspected = netsync(&[
        "token",
        "inspect",
        String::from_utf8_lossy(&hex.stdout).trim(),
    ]);
    let said = String::from_utf8_lossy(&inspected.stdout);
    assert!(
        said.contains(&bind) && said.contains("expires in"),
        "{said}"
    );

    let addr = bind.parse().unwrap();
    let bytes = std::fs::read(&token_file).unwrap();
    let mut config = ClientConfig::new(addr);
    config.token = Some(netsync::net::secure::ConnectToken::from_bytes(&bytes).unwrap());
    let mut secure = Client::connect(config).unwrap();
    let mut plain = Client::connect(ClientConfig::new(addr)).unwrap();
    let start = Instant::now();
    let (mut connected, mut refused) = (None, None);
    while start.elapsed() < Duration::from_secs(3) && (connected.is_none() || refused.is_none()) {
        while let Some(e) = secure.poll_event() {
            if let netsync::client::ClientEvent::Connected { client_id } = e {
                connected = Some(client_id);
            }
        }
        while let Some(e) = plain.poll_event() {
            if let netsync::client::ClientEvent::Disconnected(reason) = e {
                refused = Some(reason);
            }
        }
        let now = start.elapsed().as_secs_f64();
        let _ = secure.tick_with(now, |_, _| {});
        let _ = plain.tick_with(now, |_, _| {});
        std::thread::sleep(Duration::from_millis(16));
    }
    assert_eq!(connected, Some(4242), "connected as the token's client id");
    assert_eq!(
        refused,
        Some(netsync::client::DisconnectReason::Refused(
            netsync::net::handshake::RefusalReason::TokenRequired
        ))
    );
    let out = relay.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("secure mode"), "{log}");
    assert!(log.contains("client 4242 joined"), "{log}");

    // Plain mode says so; a bad secret file is refused by name.
    let plain_relay = netsync(&["relay", "--bind", "127.0.0.1:0", "--duration", "0.2"]);
    assert!(String::from_utf8_lossy(&plain_relay.stderr).contains("PLAIN mode"));
    std::fs::write(dir.join("bad.key"), "not hex").unwrap();
    let bad = netsync(&[
        "relay",
        "--secret-file",
        dir.join("bad.key").to_str().unwrap(),
        "--duration",
        "0.2",
    ]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("64 hex digits"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Kills `child` with SIGINT and waits (up to 3 s) for a clean exit.
fn interrupt(child: &mut std::process::Child, what: &str) {
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        if let Some(code) = child.try_wait().unwrap() {
            assert!(code.success(), "{what}: {code:?}");
            return;
        }
        assert!(Instant::now() < deadline, "{what} did not stop on Ctrl-C");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A relay set up by a config file, reached through `netsync netsim` on
/// the GOOD profile (40 ms each way): the file's bind address is used,
/// the client connects through the proxy and measures the added delay.
#[test]
fn a_configured_relay_serves_a_client_through_the_netsim_proxy() {
    let relay_port = free_port();
    let proxy_port = std::iter::repeat_with(free_port)
        .find(|&p| p != relay_port)
        .unwrap();
    let file = std::env::temp_dir().join(format!("netsync-netsim-{}.conf", std::process::id()));
    std::fs::write(
        &file,
        format!("# a relay for the proxy test\nbind = 127.0.0.1:{relay_port}\nrate = 20\nidle-timeout = 3\nlockstep-hash-window = 120\n"),
    )
    .unwrap();
    let mut relay = Command::new(env!("CARGO_BIN_EXE_netsync"))
        .args(["relay", "--config", file.to_str().unwrap()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut proxy = Command::new(env!("CARGO_BIN_EXE_netsync"))
        .args([
            "netsim",
            "--listen",
            &format!("127.0.0.1:{proxy_port}"),
            "--forward",
            &format!("127.0.0.1:{relay_port}"),
            "--profile",
            "GOOD",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut client = Client::connect(ClientConfig::new(
        format!("127.0.0.1:{proxy_port}").parse().unwrap(),
    ))
    .unwrap();
    let start = Instant::now();
    let mut rtt = 0.0;
    while start.elapsed() < Duration::from_secs(6) {
        client
            .tick_with(start.elapsed().as_secs_f64(), |_, _| {})
            .unwrap();
        let stats = client.stats();
        rtt = stats.network.clock.rtt;
        if client.refresh_state() == ConnectionState::Connected && stats.network.clock.samples >= 10
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(16));
    }
    assert_eq!(client.refresh_state(), ConnectionState::Connected);
    assert!(
        (0.075..0.2).contains(&rtt),
        "GOOD adds 40 ms each way: rtt {rtt:.3} s"
    );
    client.close();
    interrupt(&mut proxy, "netsim");
    interrupt(&mut relay, "relay");
    std::fs::remove_file(&file).unwrap();
    let mut log = String::new();
    std::io::Read::read_to_string(relay.stderr.as_mut().unwrap(), &mut log).unwrap();
    assert!(
        log.contains(&format!("127.0.0.1:{relay_port}")) && log.contains("client 1 joined"),
        "{log}"
    );
}
