//! The shipped library exports only `netsync_*` functions and links none
//! of the crates that only the command-line program needs.

use std::path::PathBuf;
use std::process::Command;

fn library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let lib = dir.join("libnetsync.so");
    assert!(
        lib.exists(),
        "{} missing: run `cargo build --lib` first (scripts/test.sh does)",
        lib.display()
    );
    lib
}

fn nm(args: &[&str]) -> String {
    let out = Command::new("nm")
        .args(args)
        .arg(library())
        .output()
        .expect("nm (binutils) is needed for this test");
    assert!(out.status.success(), "nm failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn exports_only_the_netsync_prefix() {
    let exported = nm(&["-D", "--defined-only"]);
    let names: Vec<&str> = exported
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    assert!(names.contains(&"netsync_timeline_tick"), "{names:?}");
    let foreign: Vec<&&str> = names
        .iter()
        .filter(|n| !n.starts_with("netsync_"))
        .collect();
    assert!(foreign.is_empty(), "unexpected exports: {foreign:?}");
}

/// Crates behind the `cli` feature: arguments, Ctrl-C, and the demo's
/// physics, plots and JSON report.
const CLI_ONLY_CRATES: &[&str] = &[
    "lexopt",
    "ctrlc",
    "rapier3d",
    "parry3d",
    "plotters",
    "serde_json",
];

#[test]
fn links_no_cli_only_crate() {
    let symbols = nm(&[]);
    for crate_name in CLI_ONLY_CRATES {
        assert!(
            !symbols.contains(crate_name),
            "the library links `{crate_name}`, which only the CLI needs"
        );
    }
}
