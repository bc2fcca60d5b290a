//! Misuse of every C export, generated from include/netsync.h so that a
//! new function is covered the day it is added: each is called from a C
//! program under valgrind with NULL pointers, with a handle that was
//! never issued, with a handle already freed, and with zero and huge
//! lengths. Every call must come back (no crash, no memory error), and
//! every call that takes a handle or a required pointer must return an
//! error code, not NETSYNC_OK.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One exported function as the header declares it.
struct Export {
    returns: String,
    name: String,
    params: Vec<(String, String)>,
}

fn exports(header: &str) -> Vec<Export> {
    // Declarations end with ");" and start at a line beginning with a
    // return type; join continuation lines first.
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in header.lines() {
        let t = line.trim();
        if pending.is_empty() {
            let starts = (t.starts_with("enum NetsyncResult netsync_")
                || t.starts_with("void netsync_")
                || t.starts_with("uint32_t netsync_")
                || t.starts_with("const char *netsync_"))
                && t.contains('(');
            if !starts {
                continue;
            }
        }
        pending.push_str(t);
        pending.push(' ');
        if t.ends_with(");") {
            let decl = std::mem::take(&mut pending);
            let open = decl.find('(').unwrap();
            let head = decl[..open].trim();
            let name_at = head.rfind([' ', '*']).unwrap() + 1;
            let name = head[name_at..].to_string();
            let returns = head[..name_at].trim().to_string();
            let inner = decl[open + 1..decl.rfind(')').unwrap()].trim();
            let params = if inner == "void" {
                Vec::new()
            } else {
                inner
                    .split(',')
                    .map(|p| {
                        let p = p.trim();
                        let at = p.rfind([' ', '*']).unwrap() + 1;
                        (p[..at].trim().to_string(), p[at..].to_string())
                    })
                    .collect()
            };
            out.push(Export {
                returns,
                name,
                params,
            });
        }
    }
    out
}

/// Handle types: opaque structs the library hands out.
fn is_handle(ty: &str) -> bool {
    let base = ty
        .replace("const", "")
        .replace("struct", "")
        .replace('*', "");
    matches!(
        base.trim(),
        "NetsyncClient"
            | "NetsyncServer"
            | "NetsyncTimeline"
            | "NetsyncSendFilter"
            | "NetsyncReplay"
            | "NetsyncScriptedConfig"
    ) && ty.matches('*').count() == 1
}

/// How a variant fills a parameter.
#[derive(Clone, Copy, PartialEq)]
enum Variant {
    /// Every pointer NULL, every number 0.
    Null,
    /// Handles never issued; other pointers to zeroed scratch; lengths 0.
    Foreign,
    /// Handles freed just before; other pointers to scratch; lengths 0.
    Freed,
    /// NULL pointers with the largest lengths.
    Huge,
}

fn argument(ty: &str, variant: Variant) -> String {
    let pointer = ty.contains('*');
    if pointer {
        if is_handle(ty) {
            return match variant {
                Variant::Null | Variant::Huge => "NULL".into(),
                Variant::Foreign => format!("({ty})(uintptr_t)0x7777"),
                Variant::Freed => format!("({ty})freed"),
            };
        }
        if ty.contains("char") && variant != Variant::Null && variant != Variant::Huge {
            return "\"\"".into();
        }
        return match variant {
            Variant::Null | Variant::Huge => "NULL".into(),
            _ => format!("({ty})scratch"),
        };
    }
    match (variant, ty) {
        (Variant::Huge, "size_t") => "SIZE_MAX".into(),
        (Variant::Huge, "uint32_t") => "UINT32_MAX".into(),
        (Variant::Huge, "uint64_t") => "UINT64_MAX".into(),
        (_, "double") | (_, "float") => "0".into(),
        (_, t) if t.starts_with("enum") => format!("({t})0"),
        (_, t) if t.starts_with("struct") => format!("zero_{}", t.replace("struct ", "")),
        _ => "0".into(),
    }
}

/// Calls that may succeed in a variant (reviewed: each is fine to accept).
fn may_succeed(e: &Export, variant: Variant) -> bool {
    let has_handle = e.params.iter().any(|(t, _)| is_handle(t));
    if has_handle {
        return false;
    }
    // No handle: with NULL everywhere every required pointer is missing.
    match variant {
        Variant::Null | Variant::Huge => matches!(
            e.name.as_str(),
            // NULL callback: turns logging off.
            "netsync_set_log_callback"
        ),
        // With real buffers, constructors and parsers may work or refuse
        // their empty input; what matters is that they come back.
        Variant::Foreign | Variant::Freed => true,
    }
}

fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

#[test]
fn every_export_survives_misuse_under_valgrind() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = std::fs::read_to_string(root.join("include/netsync.h")).unwrap();
    let exports = exports(&header);
    assert!(exports.len() > 80, "parsed {} exports", exports.len());
    // Struct parameters by value need a zeroed value of their type.
    let mut by_value: Vec<String> = exports
        .iter()
        .flat_map(|e| e.params.iter())
        .filter(|(t, _)| t.starts_with("struct") && !t.contains('*'))
        .map(|(t, _)| t.replace("struct ", ""))
        .collect();
    by_value.sort();
    by_value.dedup();

    let mut c = String::from(
        "#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n#include \"netsync.h\"\n\
         static uint64_t scratch_words[4096];\nstatic void *scratch = scratch_words;\n\
         static int failures = 0;\nstatic int calls = 0;\n",
    );
    for t in &by_value {
        let _ = writeln!(c, "static struct {t} zero_{t};");
    }
    c.push_str(
        "static void expect_error(enum NetsyncResult r, const char *what) {\n\
         \x20   calls++;\n\
         \x20   if (r == NETSYNC_OK) { failures++; printf(\"FAIL %s returned NETSYNC_OK\\n\", what); }\n}\n\
         static void came_back(const char *what) { (void)what; calls++; }\n\
         int main(void) {\n\
         \x20   struct NetsyncClient *client = NULL;\n\
         \x20   netsync_client_connect(NULL, \"127.0.0.1:9\", &client);\n\
         \x20   void *freed = (void *)client;\n\
         \x20   netsync_client_free(client);\n",
    );
    let mut checked = 0;
    for variant in [
        Variant::Null,
        Variant::Foreign,
        Variant::Freed,
        Variant::Huge,
    ] {
        for e in &exports {
            // Deliberate panics and process-wide switches stay out.
            if e.name == "netsync_debug_panic" {
                continue;
            }
            let args: Vec<String> = e.params.iter().map(|(t, _)| argument(t, variant)).collect();
            let call = format!("{}({})", e.name, args.join(", "));
            let label = format!(
                "{} ({})",
                e.name,
                ["null", "foreign", "freed", "huge"][variant as usize]
            );
            // Fresh zeroes each call (an earlier call may have written a
            // struct with padding there, which valgrind rightly calls
            // uninitialised).
            c.push_str("    memset(scratch_words, 0, sizeof scratch_words);\n");
            if e.returns.contains("NetsyncResult") && !may_succeed(e, variant) {
                let _ = writeln!(c, "    expect_error({call}, \"{label}\");");
                checked += 1;
            } else if e.returns == "void" {
                let _ = writeln!(c, "    {call}; came_back(\"{label}\");");
            } else {
                let _ = writeln!(c, "    (void){call}; came_back(\"{label}\");");
            }
        }
    }
    c.push_str(
        "    netsync_set_log_callback(NULL, NULL, NETSYNC_LOG_OFF);\n\
         \x20   printf(\"%d calls, %d failed\\n\", calls, failures);\n\
         \x20   return failures == 0 ? 0 : 1;\n}\n",
    );
    let dir = std::env::temp_dir().join(format!("netsync-misuse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("misuse.c");
    std::fs::write(&source, &c).unwrap();
    let exe = dir.join("misuse");
    let lib = library_dir();
    assert!(
        lib.join("libnetsync.so").exists(),
        "libnetsync.so not found in {}: run `cargo build --lib` first (scripts/test.sh does)",
        lib.display()
    );
    let status = Command::new("gcc")
        .args(["-std=c99", "-Wall", "-Wno-unused-variable", "-I"])
        .arg(root.join("include"))
        .arg(&source)
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lnetsync")
        .status()
        .expect("gcc runs");
    assert!(
        status.success(),
        "the generated program did not compile: {}",
        source.display()
    );
    let output = Command::new("valgrind")
        .args(["--error-exitcode=99", "--leak-check=no", "--quiet"])
        .arg(&exe)
        .output()
        .expect("valgrind is needed (scripts/test.sh installs it)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "misuse program failed ({:?}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(
        stdout.contains(" failed") && checked > 200,
        "{checked} checked calls"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
