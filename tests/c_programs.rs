//! Compiles the C test program against include/netsync.h as C99 and as
//! C++17 with warnings as errors, links it to the cdylib and runs it under
//! valgrind (memory errors fail the test).

use std::path::{Path, PathBuf};
use std::process::Command;

fn library_dir() -> PathBuf {
    // target/<profile>/deps/<this test> -> target/<profile>
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

fn compile_and_run(compiler: &str, flags: &[&str], name: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = library_dir();
    assert!(
        lib.join("libnetsync.so").exists(),
        "libnetsync.so not found in {}: run `cargo build --lib` first (scripts/test.sh does)",
        lib.display()
    );
    let out = std::env::temp_dir().join(format!("netsync-{name}-{}", std::process::id()));
    let status = Command::new(compiler)
        .args(flags)
        .args(["-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg("-I")
        .arg(root.join("include"))
        .arg(root.join("tests/c/timeline_test.c"))
        .arg("-o")
        .arg(&out)
        .arg("-L")
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(["-lnetsync", "-lm"])
        .status()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
    assert!(status.success(), "{compiler} failed to compile the C test");
    let output = if std::env::var_os("NETSYNC_NO_VALGRIND").is_some() {
        Command::new(&out).output().unwrap()
    } else {
        // Memory errors in the library or at the boundary fail the test.
        Command::new("valgrind")
            .args(["--error-exitcode=99", "--leak-check=no", "--quiet"])
            .arg(&out)
            .output()
            .expect("valgrind is needed (scripts/test.sh installs it)")
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    let _ = std::fs::remove_file(&out);
    assert!(output.status.success(), "{name} failed:\n{stdout}");
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
}

#[test]
fn c99_program_runs_against_the_library() {
    compile_and_run("gcc", &["-std=c99", "-x", "c"], "c99");
}

#[test]
fn cpp17_program_runs_against_the_library() {
    compile_and_run("g++", &["-std=c++17", "-x", "c++"], "cpp17");
}
