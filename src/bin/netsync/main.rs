//! The `netsync` command-line program: tools around the library.

mod args;
mod demo;
mod netsim;
mod quality;
mod relay;
mod replay;
mod stderr_log;
mod token;

use std::process::ExitCode;

const USAGE: &str = "\
netsync: keeps game objects in step across players on bad networks

USAGE:
    netsync <COMMAND> [OPTIONS]

COMMANDS:
    demo       A multiplayer physics match on a bad network, with a report
               and plots (see `netsync demo --help`)
    relay      Run the relay server (see `netsync relay --help`)
    replay     Summarise a recording and play it back (`netsync replay --help`)
    token      Relay secrets and connect tokens for secure mode
               (see `netsync token --help`)
    netsim     UDP proxy that puts traffic through a network profile
    quality    Interpolation quality benchmark: every mode on every network
               profile, side by side (see `netsync quality --help`)
    help       Print this help
";

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let command = args.next().and_then(|a| a.into_string().ok());
    let rest: Vec<_> = args.collect();
    let result = match command.as_deref() {
        Some("demo") => demo::run(rest),
        Some("quality") => quality::run(rest),
        Some("relay") => relay::run(rest),
        Some("replay") => replay::run(rest),
        Some("netsim") => netsim::run(rest),
        Some("token") => token::run(rest),
        Some("help") | Some("--help") | Some("-h") | None => {
            print!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown command `{other}`\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
