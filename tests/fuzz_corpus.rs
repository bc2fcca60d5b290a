//! Replays every checked-in fuzz corpus (fuzz/corpus/<target>/) and the
//! built-in seeds through the fuzz targets' own code (netsync::fuzzing),
//! on stable: what the fuzzers found interesting, and any crash they ever
//! found (kept in the corpus once fixed), runs in every test run.
//! `NETSYNC_WRITE_FUZZ_SEEDS=1` writes the seeds into the corpora.

use std::path::Path;

use netsync::fuzzing;

#[test]
fn every_corpus_input_runs_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    if std::env::var_os("NETSYNC_WRITE_FUZZ_SEEDS").is_some() {
        for (name, target, bytes) in fuzzing::seeds() {
            let dir = root.join(target);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(format!("seed-{name}")), bytes).unwrap();
        }
    }
    for (name, target, bytes) in fuzzing::seeds() {
        assert!(fuzzing::run(target, &bytes), "seed {name}");
    }
    for target in fuzzing::TARGETS {
        let dir = root.join(target);
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e} (every target has a corpus)", dir.display()));
        let mut count = 0;
        for entry in entries {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let outcome = std::panic::catch_unwind(|| fuzzing::run(target, &bytes));
            assert!(
                matches!(outcome, Ok(true)),
                "{target}: {} panicked",
                path.display()
            );
            count += 1;
        }
        assert!(count > 0, "{target}: empty corpus");
        println!("{target}: {count} inputs");
    }
}
