//! The C++ layer without an engine: compiles include/netsync.hpp and
//! include/netsync_unreal_convert.hpp with a test program (tests/cpp/)
//! under g++ -std=c++17 with warnings as errors, links it to the real
//! cdylib and runs it: a relay and two clients on loopback, the embedded
//! server's calls, a collision claim, a recording and its replay, errors
//! as exceptions, the Unreal conversions. A second program
//! builds the wrapper as Unreal does by default, without exceptions or
//! RTTI. A missing g++ fails the test; it never skips.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Warnings every engine build of the headers may turn on (Unreal makes
/// shadowing an error); the programs are held to them too.
const WARNINGS: &[&str] = &[
    "-Wall",
    "-Wextra",
    "-Werror",
    "-pedantic",
    "-Wshadow",
    "-Wconversion",
    "-Wsign-conversion",
    "-Wold-style-cast",
];

/// A program that runs longer than this has hung (it takes about 2 s).
const RUN_LIMIT: Duration = Duration::from_secs(45);

/// Where cargo put libnetsync.so: the profile folder above this test's own
/// executable (target/<profile>/deps/cpp_programs-<hash>).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("path of the test executable");
    exe.ancestors()
        .nth(2)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("netsync-cpp-{name}-{}", std::process::id()))
}

/// Compiles `tests/cpp/<source>` with `extra` flags into an executable
/// linked to the library (found at run time through an rpath).
fn build(source: &str, extra: &[&str]) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = profile_dir();
    assert!(
        lib.join("libnetsync.so").is_file(),
        "no libnetsync.so in {}: build it first with `cargo build --lib`",
        lib.display()
    );
    let exe = scratch(source.trim_end_matches(".cpp"));
    let mut cmd = Command::new("g++");
    cmd.arg("-std=c++17")
        .args(WARNINGS)
        .args(extra)
        .arg("-I")
        .arg(root.join("include"))
        .arg(root.join("tests/cpp").join(source))
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(["-lnetsync", "-lpthread"]);
    let output = cmd.output().unwrap_or_else(|e| {
        panic!("g++ is needed to test the C++ wrapper (apt-get install g++; scripts/test.sh does): {e}")
    });
    assert!(
        output.status.success(),
        "g++ could not build {source}:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    exe
}

/// Runs a built program with a time limit; returns its standard output
/// after checking that it passed.
fn run(exe: &Path) -> String {
    let out_path = exe.with_extension("out");
    let err_path = exe.with_extension("err");
    let mut child = Command::new(exe)
        .env("RUST_BACKTRACE", "0")
        .stdout(Stdio::from(File::create(&out_path).unwrap()))
        .stderr(Stdio::from(File::create(&err_path).unwrap()))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    for path in [exe, out_path.as_path(), err_path.as_path()] {
        let _ = std::fs::remove_file(path);
    }
    println!("{stdout}");
    if !stderr.is_empty() {
        println!("stderr:\n{stderr}");
    }
    let status = status.unwrap_or_else(|| {
        panic!(
            "{} still running after {RUN_LIMIT:?}:\n{stdout}",
            exe.display()
        )
    });
    assert!(
        status.success(),
        "{} failed ({status}):\n{stdout}",
        exe.display()
    );
    assert!(
        stdout.contains(" passed, 0 failed"),
        "no summary:\n{stdout}"
    );
    stdout
}

#[test]
fn wrapper_program_runs_a_relay_two_clients_and_a_claim() {
    let stdout = run(&build("wrapper_test.cpp", &[]));
    for checked in [
        "ok: relay + two clients",
        "ok: embedded server",
        "ok: collision claim",
        "ok: record and replay",
        "ok: error as exception: NETSYNC_ERR_INVALID_ARGUMENT",
        "ok: round trips within float precision",
    ] {
        assert!(
            stdout.contains(checked),
            "did not check {checked}:\n{stdout}"
        );
    }
}

#[test]
fn wrapper_builds_and_runs_without_exceptions_or_rtti() {
    run(&build(
        "no_exceptions_test.cpp",
        &["-fno-exceptions", "-fno-rtti"],
    ));
}
