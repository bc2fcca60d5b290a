//! The Unity package without Unity.
//!
//! 1. Its engine-independent C# (the generated P/Invoke file, the idiomatic
//!    layer and the NUnit tests of `Tests/Runtime/Core`) is compiled with
//!    Mono's `mcs` together with the harness in `tests/csharp/`, and run
//!    with `mono` against the real `libnetsync.so` (`cargo build --lib`
//!    first; `scripts/test.sh` does). It fails, never skips, when Mono is
//!    missing or any C# test fails.
//! 2. The package's layout: `package.json`, the assembly definitions, a
//!    `.meta` with a unique GUID for every file and folder, and native
//!    plugin import settings that enable exactly the right platform and CPU.
//!    `UPDATE_UNITY_META=1 cargo test --test csharp` writes the `.meta` of
//!    new files (GUID = MD5 of the path in the package); existing ones are
//!    never rewritten, so GUIDs stay stable.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PACKAGE_NAME: &str = "com.netsync.core";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn package() -> PathBuf {
    root().join("unity-package")
}

/// The folder holding the library `cargo build --lib` made: the same
/// target directory cargo uses for this test.
/// Where cargo put libnetsync.so: the profile folder above this test's own
/// executable (`<target>/debug/deps/csharp-*`), however the target folder
/// is configured (CARGO_TARGET_DIR, build.target-dir).
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("test executable under <target>/<profile>/deps")
        .to_path_buf()
}

fn cs_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cs"))
        .collect();
    files.sort();
    files
}

/// The files the harness compiles: everything that must not need UnityEngine.
fn engine_independent_sources() -> Vec<PathBuf> {
    let pkg = package();
    let mut files = Vec::new();
    for dir in [
        pkg.join("Runtime/Native"),
        pkg.join("Runtime/Core"),
        pkg.join("Tests/Runtime/Core"),
        root().join("tests/csharp"),
    ] {
        files.extend(cs_files(&dir));
    }
    files
}

fn tool_version(tool: &str) -> Result<String, String> {
    let out = Command::new(tool)
        .arg("--version")
        .output()
        .map_err(|e| format!("`{tool}` cannot run ({e}): install Debian's mono-mcs and mono-runtime (scripts/test.sh does)"))?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_string())
}

/// Runs `command`, killing it after `limit`; returns (success, stdout, stderr).
fn run_with_limit(mut command: Command, limit: Duration) -> (bool, String, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mono");
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = out_reader.join().unwrap();
    let err = err_reader.join().unwrap();
    match status {
        Some(s) => (s.success(), out, err),
        None => (
            false,
            out,
            format!("{err}\nkilled after {} s", limit.as_secs()),
        ),
    }
}

#[test]
fn csharp_layer_runs_against_the_library_under_mono() {
    let lib_dir = library_dir();
    let lib = lib_dir.join("libnetsync.so");
    assert!(
        lib.exists(),
        "{} is missing: run `cargo build --lib` first (scripts/test.sh does)",
        lib.display()
    );
    let mcs = tool_version("mcs").unwrap_or_else(|e| panic!("{e}"));
    let mono = tool_version("mono").unwrap_or_else(|e| panic!("{e}"));
    println!("{mcs}; {mono}");

    let sources = engine_independent_sources();
    for file in &sources {
        let text = std::fs::read_to_string(file).unwrap();
        for needle in [
            "using UnityEngine",
            "using UnityEditor",
            "UnityEngine.",
            "UnityEditor.",
        ] {
            assert!(
                !text.contains(needle),
                "{} mentions `{needle}`: engine-independent files must compile without Unity",
                file.display()
            );
        }
    }

    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("csharp");
    std::fs::create_dir_all(&out_dir).unwrap();
    let exe = out_dir.join("netsync-tests.exe");
    let _ = std::fs::remove_file(&exe);
    let compile = Command::new("mcs")
        // C# 7.2: what both mcs and Unity's compiler accept (Span, in, ref readonly).
        .args([
            "-unsafe",
            "-langversion:7.2",
            "-debug",
            "-warnaserror+",
            "-nologo",
        ])
        .arg(format!("-out:{}", exe.display()))
        .args(&sources)
        .output()
        .expect("run mcs");
    assert!(
        compile.status.success(),
        "mcs failed:\n{}{}",
        String::from_utf8_lossy(&compile.stdout),
        String::from_utf8_lossy(&compile.stderr)
    );

    let mut run = Command::new("mono");
    run.arg("--debug").arg(&exe).current_dir(&out_dir);
    // DllImport("netsync") resolves to libnetsync.so through the loader path.
    let path = match std::env::var("LD_LIBRARY_PATH") {
        Ok(p) if !p.is_empty() => format!("{}:{p}", lib_dir.display()),
        _ => lib_dir.display().to_string(),
    };
    run.env("LD_LIBRARY_PATH", path);
    // The panic test prints Rust's panic message; a backtrace adds nothing.
    run.env("RUST_BACKTRACE", "0");
    let (ok, stdout, stderr) = run_with_limit(run, Duration::from_secs(120));
    println!("{stdout}");
    eprintln!("{stderr}");
    let summary = stdout
        .lines()
        .rev()
        .find_map(|l| {
            let (passed, rest) = l.trim().split_once(" passed, ")?;
            let failed = rest.strip_suffix(" failed")?;
            Some((passed.parse::<u32>().ok()?, failed.parse::<u32>().ok()?))
        })
        .expect("the C# harness printed no `N passed, N failed` line");
    assert!(
        ok && summary.1 == 0 && summary.0 > 0,
        "C# tests: {} passed, {} failed",
        summary.0,
        summary.1
    );
}

// ---------------------------------------------------------------------
// Package layout and .meta files
// ---------------------------------------------------------------------

/// The native binaries: not committed (scripts/build-unity-native.sh makes
/// them), but their .meta files are, with the platform each one is for.
struct Plugin {
    path: &'static str,
    /// Platforms (as Unity names them in `platformData`) enabled, with their CPU.
    enabled: &'static [(&'static str, &'static str)],
    /// The OS the editor loads it on, when it does.
    editor_os: Option<&'static str>,
}

const PLUGINS: &[Plugin] = &[
    Plugin {
        path: "Runtime/Plugins/Linux/x86_64/libnetsync.so",
        enabled: &[
            ("Editor: Editor", "x86_64"),
            ("Standalone: Linux64", "x86_64"),
        ],
        editor_os: Some("Linux"),
    },
    Plugin {
        path: "Runtime/Plugins/Windows/x86_64/netsync.dll",
        enabled: &[
            ("Editor: Editor", "x86_64"),
            ("Standalone: Win64", "x86_64"),
        ],
        editor_os: Some("Windows"),
    },
    Plugin {
        path: "Runtime/Plugins/macOS/libnetsync.dylib",
        enabled: &[
            ("Editor: Editor", "AnyCPU"),
            ("Standalone: OSXUniversal", "AnyCPU"),
        ],
        editor_os: Some("OSX"),
    },
    Plugin {
        path: "Runtime/Plugins/iOS/libnetsync.a",
        enabled: &[("iPhone: iOS", "AnyCPU")],
        editor_os: None,
    },
    Plugin {
        path: "Runtime/Plugins/Android/arm64-v8a/libnetsync.so",
        enabled: &[("Android: Android", "ARM64")],
        editor_os: None,
    },
];

/// Every platform entry a plugin .meta must state, enabled or not, so that
/// none is left to Unity's defaults.
const PLATFORMS: &[&str] = &[
    "Android: Android",
    "Editor: Editor",
    "Standalone: Linux64",
    "Standalone: OSXUniversal",
    "Standalone: Win",
    "Standalone: Win64",
    "iPhone: iOS",
];

/// Paths (relative to the package, `/`-separated) of every file and folder
/// Unity imports (hidden entries and `~` folders are ignored by Unity),
/// and the files of `Samples~`, which a user imports into a project.
fn imported_entries() -> (Vec<String>, Vec<String>) {
    fn walk(dir: &Path, rel: &str, files: &mut Vec<String>, dirs: &mut Vec<String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = entry.file_name().to_string_lossy().to_string();
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            // Unity imports nothing under a `~` folder, but a sample is
            // copied into the project when the user imports it: its files
            // carry .meta files so that their GUIDs are stable (the folder
            // itself has none).
            if name == "Samples~" && rel.is_empty() {
                walk(&entry.path(), &path, files, dirs);
                continue;
            }
            if name.starts_with('.') || name.ends_with('~') {
                continue;
            }
            if entry.file_type().unwrap().is_dir() {
                dirs.push(path.clone());
                walk(&entry.path(), &path, files, dirs);
            } else {
                files.push(path);
            }
        }
    }
    let (mut files, mut dirs) = (Vec::new(), Vec::new());
    walk(&package(), "", &mut files, &mut dirs);
    (files, dirs)
}

fn md5(data: &[u8]) -> [u8; 16] {
    const S: [u32; 64] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5,
        9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10,
        15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ];
    let k: Vec<u32> = (0..64)
        .map(|i| ((i as f64 + 1.0).sin().abs() * 4294967296.0) as u32)
        .collect();
    let mut msg = data.to_vec();
    let bit_len = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bit_len.to_le_bytes());
    let (mut a0, mut b0, mut c0, mut d0) =
        (0x67452301u32, 0xefcdab89u32, 0x98badcfeu32, 0x10325476u32);
    for chunk in msg.chunks(64) {
        let m: Vec<u32> = chunk
            .chunks(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
        for i in 0..64 {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let f = f.wrapping_add(a).wrapping_add(k[i]).wrapping_add(m[g]);
            a = d;
            d = c;
            c = b;
            b = b.wrapping_add(f.rotate_left(S[i]));
        }
        a0 = a0.wrapping_add(a);
        b0 = b0.wrapping_add(b);
        c0 = c0.wrapping_add(c);
        d0 = d0.wrapping_add(d);
    }
    let mut out = [0u8; 16];
    for (i, v) in [a0, b0, c0, d0].iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
    }
    out
}

/// The GUID a new asset gets: MD5 of its path in the package, in hex.
fn guid_for(rel: &str) -> String {
    md5(format!("{PACKAGE_NAME}/{rel}").as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn importer_body(rel: &str, is_dir: bool) -> String {
    let tail = "  externalObjects: {}\n  userData: \n  assetBundleName: \n  assetBundleVariant: \n";
    if is_dir {
        return format!("folderAsset: yes\nDefaultImporter:\n{tail}");
    }
    let ext = rel.rsplit('.').next().unwrap_or("");
    match (rel, ext) {
        ("package.json", _) => format!("PackageManifestImporter:\n{tail}"),
        (_, "cs") => "MonoImporter:\n  externalObjects: {}\n  serializedVersion: 2\n  defaultReferences: []\n  \
             executionOrder: 0\n  icon: {instanceID: 0}\n  userData: \n  assetBundleName: \n  assetBundleVariant: \n"
            .to_string(),
        (_, "asmdef") => format!("AssemblyDefinitionImporter:\n{tail}"),
        (_, "md" | "txt" | "json") => format!("TextScriptImporter:\n{tail}"),
        _ => format!("DefaultImporter:\n{tail}"),
    }
}

fn write_missing_metas(files: &[String], dirs: &[String]) -> Vec<String> {
    let mut written = Vec::new();
    let pkg = package();
    for (rel, is_dir) in dirs
        .iter()
        .map(|d| (d, true))
        .chain(files.iter().map(|f| (f, false)))
    {
        if rel.ends_with(".meta") {
            continue;
        }
        let meta = pkg.join(format!("{rel}.meta"));
        if meta.exists() {
            continue;
        }
        let text = format!(
            "fileFormatVersion: 2\nguid: {}\n{}",
            guid_for(rel),
            importer_body(rel, is_dir)
        );
        std::fs::write(&meta, text).unwrap();
        written.push(rel.clone());
    }
    written
}

fn guid_of(meta_text: &str) -> Option<&str> {
    meta_text
        .lines()
        .find_map(|l| l.strip_prefix("guid: "))
        .map(str::trim)
}

#[test]
fn every_file_and_folder_has_a_meta_with_a_unique_guid() {
    let (files, dirs) = imported_entries();
    if std::env::var_os("UPDATE_UNITY_META").is_some() {
        for rel in write_missing_metas(&files, &dirs) {
            println!("wrote {rel}.meta");
        }
    }
    let (files, dirs) = imported_entries();
    let pkg = package();
    let mut problems = Vec::new();
    let mut guids: HashMap<String, String> = HashMap::new();
    for rel in dirs.iter().chain(files.iter()) {
        if rel.ends_with(".meta") {
            continue;
        }
        let meta = pkg.join(format!("{rel}.meta"));
        let Ok(text) = std::fs::read_to_string(&meta) else {
            problems.push(format!("{rel} has no .meta"));
            continue;
        };
        if !text.starts_with("fileFormatVersion: 2\n") {
            problems.push(format!("{rel}.meta: not fileFormatVersion 2"));
        }
        if dirs.contains(rel) != text.contains("folderAsset: yes") {
            problems.push(format!("{rel}.meta: folderAsset does not match"));
        }
        match guid_of(&text) {
            Some(g)
                if g.len() == 32
                    && g.chars()
                        .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()) =>
            {
                if let Some(other) = guids.insert(g.to_string(), rel.clone()) {
                    problems.push(format!("{rel} and {other} share GUID {g}"));
                }
            }
            other => problems.push(format!("{rel}.meta: bad guid {other:?}")),
        }
    }
    // A .meta without its asset: only the native plugins, which are built, not committed.
    for rel in files.iter().filter(|f| f.ends_with(".meta")) {
        let asset = rel.trim_end_matches(".meta");
        let is_plugin = PLUGINS.iter().any(|p| p.path == asset);
        if !pkg.join(asset).exists() && !is_plugin {
            problems.push(format!("{rel} has no asset"));
        }
        // A built plugin was counted with the other files already.
        if is_plugin && !pkg.join(asset).exists() {
            let text = std::fs::read_to_string(pkg.join(rel)).unwrap();
            match guid_of(&text) {
                Some(g) => {
                    if let Some(other) = guids.insert(g.to_string(), asset.to_string()) {
                        problems.push(format!("{asset} and {other} share GUID {g}"));
                    }
                }
                None => problems.push(format!("{rel}: no guid")),
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} (new files: `UPDATE_UNITY_META=1 cargo test --test csharp`)",
        problems.join("\n")
    );
    assert!(
        guids.len() > 30,
        "only {} assets with GUIDs: the walk missed the package",
        guids.len()
    );
}

#[test]
fn new_guids_are_the_md5_of_the_path() {
    // Known MD5 values (RFC 1321 test suite), then the rule itself.
    let hex = |d: [u8; 16]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
    assert_eq!(hex(md5(b"")), "d41d8cd98f00b204e9800998ecf8427e");
    assert_eq!(hex(md5(b"abc")), "900150983cd24fb0d6963f7d28e17f72");
    assert_eq!(
        hex(md5(
            b"12345678901234567890123456789012345678901234567890123456789012345678901234567890"
        )),
        "57edf4a22be3c955ac49da2e2107b67a"
    );
    let text = std::fs::read_to_string(package().join("package.json.meta")).unwrap();
    assert_eq!(guid_of(&text), Some(guid_for("package.json").as_str()));
}

/// `platformData` entries of a plugin .meta: platform -> (enabled, CPU, OS).
fn platform_data(text: &str) -> BTreeMap<String, (bool, String, String)> {
    let mut out = BTreeMap::new();
    let Some(start) = text.find("  platformData:\n") else {
        return out;
    };
    let body = &text[start..];
    for entry in body.split("  - first:\n").skip(1) {
        let mut lines = entry.lines();
        let platform = lines.next().unwrap_or("").trim().to_string();
        let mut enabled = false;
        let (mut cpu, mut os) = (String::new(), String::new());
        for line in lines {
            let line = line.trim();
            if line.starts_with("userData:") {
                break;
            }
            if let Some(v) = line.strip_prefix("enabled: ") {
                enabled = v == "1";
            } else if let Some(v) = line.strip_prefix("CPU: ") {
                cpu = v.to_string();
            } else if let Some(v) = line.strip_prefix("OS: ") {
                os = v.to_string();
            }
        }
        out.insert(platform, (enabled, cpu, os));
    }
    out
}

#[test]
fn native_plugins_enable_exactly_their_platform_and_cpu() {
    let pkg = package();
    for plugin in PLUGINS {
        let meta = pkg.join(format!("{}.meta", plugin.path));
        let text =
            std::fs::read_to_string(&meta).unwrap_or_else(|e| panic!("{}: {e}", meta.display()));
        assert!(
            text.contains("PluginImporter:"),
            "{}: not a plugin",
            plugin.path
        );
        assert!(
            text.contains("isPreloaded: 0"),
            "{}: preloading a network library gains nothing",
            plugin.path
        );
        let data = platform_data(&text);
        // The `Any` entry must be off, or every platform would load it.
        let any = data
            .get(": Any")
            .unwrap_or_else(|| panic!("{}: no `: Any` entry", plugin.path));
        assert!(!any.0, "{}: enabled for any platform", plugin.path);
        for platform in PLATFORMS {
            let (enabled, cpu, os) = data
                .get(*platform)
                .unwrap_or_else(|| panic!("{}: no entry for {platform}", plugin.path));
            match plugin.enabled.iter().find(|(p, _)| p == platform) {
                Some((_, want_cpu)) => {
                    assert!(*enabled, "{}: {platform} must be enabled", plugin.path);
                    assert_eq!(cpu, want_cpu, "{}: CPU for {platform}", plugin.path);
                    if *platform == "Editor: Editor" {
                        assert_eq!(
                            Some(os.as_str()),
                            plugin.editor_os,
                            "{}: editor OS",
                            plugin.path
                        );
                    }
                }
                None => assert!(!*enabled, "{}: {platform} must not be enabled", plugin.path),
            }
        }
        // Unity reads the `Exclude <platform>` settings of the Any entry too.
        for (exclude, platform) in [
            ("Exclude Android", "Android: Android"),
            ("Exclude Editor", "Editor: Editor"),
            ("Exclude Linux64", "Standalone: Linux64"),
            ("Exclude OSXUniversal", "Standalone: OSXUniversal"),
            ("Exclude Win", "Standalone: Win"),
            ("Exclude Win64", "Standalone: Win64"),
            ("Exclude iOS", "iPhone: iOS"),
        ] {
            let on = plugin.enabled.iter().any(|(p, _)| *p == platform);
            let want = format!("{exclude}: {}", if on { 0 } else { 1 });
            assert!(
                text.contains(&format!("        {want}\n")),
                "{}: expected `{want}`",
                plugin.path
            );
        }
    }
    // iOS links the static library into the player: the bindings must say __Internal.
    let generated = std::fs::read_to_string(pkg.join("Runtime/Native/NativeMethods.g.cs")).unwrap();
    assert!(generated.contains("const string __DllName = \"__Internal\";"));
}

/// The value of `"key": "value"` or `"key": value` in a small JSON file.
fn json_field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let at = text.find(&format!("\"{key}\""))?;
    let rest = text[at + key.len() + 2..].trim_start().strip_prefix(':')?;
    let rest = rest.trim_start();
    if let Some(s) = rest.strip_prefix('"') {
        return s.split('"').next();
    }
    rest.split([',', '\n', '}']).next().map(str::trim)
}

#[test]
fn package_manifest_and_assembly_definitions_are_valid() {
    let pkg = package();
    let manifest = std::fs::read_to_string(pkg.join("package.json")).unwrap();
    assert_eq!(json_field(&manifest, "name"), Some(PACKAGE_NAME));
    let version = json_field(&manifest, "version").unwrap();
    assert!(
        version.split('.').count() == 3 && version.split('.').all(|p| p.parse::<u32>().is_ok()),
        "version `{version}` is not MAJOR.MINOR.PATCH"
    );
    let unity = json_field(&manifest, "unity").unwrap();
    assert!(
        unity.split('.').count() == 2,
        "unity `{unity}` is not YYYY.N"
    );
    assert!(json_field(&manifest, "displayName").is_some());
    assert!(manifest.contains("\"path\": \"Samples~/BasicSync\""));
    for required in [
        "README.md",
        "CHANGELOG.md",
        "LICENSE.md",
        "Documentation~/index.md",
        "Samples~/BasicSync",
        "Runtime/Netsync.Runtime.asmdef",
        "Editor/Netsync.Editor.asmdef",
        "Tests/Runtime/Netsync.Tests.Runtime.asmdef",
    ] {
        assert!(pkg.join(required).exists(), "{required} is missing");
    }

    let runtime = std::fs::read_to_string(pkg.join("Runtime/Netsync.Runtime.asmdef")).unwrap();
    assert_eq!(json_field(&runtime, "name"), Some("Netsync.Runtime"));
    assert_eq!(json_field(&runtime, "allowUnsafeCode"), Some("true"));

    let editor = std::fs::read_to_string(pkg.join("Editor/Netsync.Editor.asmdef")).unwrap();
    assert_eq!(json_field(&editor, "name"), Some("Netsync.Editor"));
    assert!(editor.contains("\"Netsync.Runtime\""));
    assert!(editor.contains("\"includePlatforms\": [\n        \"Editor\"\n    ]"));

    let tests =
        std::fs::read_to_string(pkg.join("Tests/Runtime/Netsync.Tests.Runtime.asmdef")).unwrap();
    assert!(tests.contains("\"UnityEngine.TestRunner\""));
    assert!(tests.contains("\"nunit.framework.dll\""));
    assert!(tests.contains("\"UNITY_INCLUDE_TESTS\""));
    assert_eq!(json_field(&tests, "allowUnsafeCode"), Some("true"));

    // Unity-only code stays out of what the Mono harness compiles, and
    // engine-independent code out of the Unity-only folders.
    for file in cs_files(&pkg.join("Runtime/Unity")) {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.contains("using UnityEngine;"),
            "{} has no UnityEngine in it: move it to Runtime/Core",
            file.display()
        );
    }

    // Built binaries are never committed.
    let ignore = std::fs::read_to_string(root().join(".gitignore")).unwrap();
    assert!(ignore
        .lines()
        .any(|l| l.trim() == "/unity-package/Runtime/Plugins/**/*.so"
            || l.trim() == "/unity-package/Runtime/Plugins/**/libnetsync.*"));
}
