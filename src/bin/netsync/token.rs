//! `netsync token`: relay secrets and connect tokens for secure mode, for
//! a game's backend and for operators (docs/security.md).

use std::ffi::OsString;
use std::net::SocketAddr;

use netsync::net::secure::token::{from_hex, to_hex, unix_now, MAX_LIFETIME};
use netsync::net::secure::{issue_token, ConnectToken, RelaySecret};

use crate::args::value;

const HELP: &str = "\
netsync token: secrets and connect tokens for a relay in secure mode

USAGE:
    netsync token new-secret [--out FILE]
        A new random relay secret, 64 hex digits, to stdout or FILE (written
        readable by its owner only). Give it to the relay (--secret-file)
        and to the game backend that issues tokens; to nobody else.

    netsync token issue --secret-file FILE --client-id N --relay ADDR
                        [--lifetime S] [--out FILE]
        A connect token for client N (1 and up) to connect to the relay
        at ADDR (the address clients use), valid for S seconds
        [default: 300, at most 86400]. Written as hex to stdout, or as
        its raw bytes to FILE (what netsync_client_connect_secure takes).

    netsync token inspect TOKEN-HEX
        What a token's public part says (relay address, expiry); the
        sealed part only the relay can open.
";

pub fn run(args: Vec<OsString>) -> Result<(), String> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_args(args);
    let command = match parser.next().map_err(|e| e.to_string())? {
        Some(Value(v)) => v.to_string_lossy().into_owned(),
        Some(Long("help") | Short('h')) | None => {
            print!("{HELP}");
            return Ok(());
        }
        Some(other) => return Err(format!("{}\n\n{HELP}", other.unexpected())),
    };
    let mut out: Option<String> = None;
    let mut secret_file: Option<String> = None;
    let mut client_id: Option<u32> = None;
    let mut relay: Option<SocketAddr> = None;
    let mut lifetime: u64 = 300;
    let mut positional: Option<String> = None;
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Long("out") => out = Some(value(&mut parser, "out")?),
            Long("secret-file") => secret_file = Some(value(&mut parser, "secret-file")?),
            Long("client-id") => client_id = Some(value(&mut parser, "client-id")?),
            Long("relay") => relay = Some(value(&mut parser, "relay")?),
            Long("lifetime") => lifetime = value(&mut parser, "lifetime")?,
            Value(v) if positional.is_none() => positional = Some(v.to_string_lossy().into()),
            other => return Err(format!("{}\n\n{HELP}", other.unexpected())),
        }
    }
    match command.as_str() {
        "new-secret" => {
            let secret = RelaySecret::generate().map_err(|e| e.to_string())?;
            let text = format!("{}\n", secret.to_hex());
            match out {
                Some(path) => write_private(&path, text.as_bytes()),
                None => {
                    print!("{text}");
                    Ok(())
                }
            }
        }
        "issue" => {
            let path = secret_file.ok_or("issue needs --secret-file FILE")?;
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read the secret file {path}: {e}"))?;
            let secret = RelaySecret::from_hex(&text).map_err(|e| format!("{path}: {e}"))?;
            let client_id = client_id.ok_or("issue needs --client-id N")?;
            let relay = relay.ok_or("issue needs --relay ADDR (e.g. 203.0.113.5:7777)")?;
            if lifetime == 0 || lifetime > MAX_LIFETIME {
                return Err(format!("--lifetime must be 1..={MAX_LIFETIME} s"));
            }
            let token = issue_token(&secret, client_id, relay, unix_now() + lifetime)
                .map_err(|e| e.to_string())?;
            match out {
                Some(path) => write_private(&path, &token.to_bytes()),
                None => {
                    println!("{}", to_hex(&token.to_bytes()));
                    Ok(())
                }
            }
        }
        "inspect" => {
            let hex = positional.ok_or("inspect needs the token as hex")?;
            let bytes = from_hex(hex.trim()).ok_or("the token is not hex")?;
            let token = ConnectToken::from_bytes(&bytes).map_err(|e| e.to_string())?;
            let now = unix_now();
            let expires = token.presented.expires;
            println!("relay address: {}", token.relay);
            if expires > now {
                println!("expires in {} s (unix time {expires})", expires - now);
            } else {
                println!("expired {} s ago (unix time {expires})", now - expires);
            }
            Ok(())
        }
        other => Err(format!("unknown token command `{other}`\n\n{HELP}")),
    }
}

/// Writes a secret or token readable by its owner only.
fn write_private(path: &str, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options
        .open(path)
        .map_err(|e| format!("cannot write {path}: {e}"))?;
    file.write_all(bytes)
        .map_err(|e| format!("cannot write {path}: {e}"))
}
