#![no_main]
//! Fuzz target `scripted_config`: see netsync::fuzzing::scripted_config.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    netsync::fuzzing::scripted_config(data);
});
