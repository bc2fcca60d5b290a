//! The checked-in C header must be what cbindgen generates from the
//! source. `UPDATE_HEADERS=1 cargo test --test header` rewrites it.

use std::path::Path;

#[test]
fn c_header_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    // Only the FFI layer: constants elsewhere in the crate are not C API.
    cbindgen::Builder::new()
        .with_src(root.join("src/ffi/mod.rs"))
        .with_config(config)
        .generate()
        .expect("cbindgen could not generate the header")
        .write(&mut generated);
    let generated = String::from_utf8(generated).unwrap();
    let path = root.join("include/netsync.h");
    if std::env::var_os("UPDATE_HEADERS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == generated,
        "include/netsync.h is stale: run `UPDATE_HEADERS=1 cargo test --test header` and commit it"
    );
}
