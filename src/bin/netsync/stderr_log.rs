//! The CLI's logger: records to stderr with a timestamp since start.

use std::time::Instant;

struct StderrLog {
    start: Instant,
}

impl log::Log for StderrLog {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            eprintln!(
                "{:9.3} {:5} {}: {}",
                self.start.elapsed().as_secs_f64(),
                record.level(),
                record.target(),
                record.args()
            );
        }
    }

    fn flush(&self) {}
}

/// Installs the logger; `verbose` adds debug records.
pub fn init(verbose: bool) {
    let logger = Box::leak(Box::new(StderrLog {
        start: Instant::now(),
    }));
    if log::set_logger(logger).is_ok() {
        log::set_max_level(if verbose {
            log::LevelFilter::Debug
        } else {
            log::LevelFilter::Info
        });
    }
}
