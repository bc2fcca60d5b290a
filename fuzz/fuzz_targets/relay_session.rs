#![no_main]
//! Fuzz target `relay_session`: see netsync::fuzzing::relay_session.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    netsync::fuzzing::relay_session(data);
});
