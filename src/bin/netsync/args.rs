//! Small helpers shared by the subcommands' argument parsing.

use std::str::FromStr;

/// The value of the current option, parsed, with a message naming it.
pub fn value<T: FromStr>(parser: &mut lexopt::Parser, name: &str) -> Result<T, String> {
    let raw = parser.value().map_err(|e| e.to_string())?;
    let text = raw.to_string_lossy().into_owned();
    text.parse()
        .map_err(|_| format!("--{name}: `{text}` is not a valid value"))
}

/// A stop flag set by Ctrl-C.
pub fn stop_on_ctrl_c() -> Result<std::sync::Arc<std::sync::atomic::AtomicBool>, String> {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    ctrlc::set_handler(move || flag.store(true, std::sync::atomic::Ordering::SeqCst))
        .map_err(|e| format!("cannot install the Ctrl-C handler: {e}"))?;
    Ok(stop)
}
