#![no_main]
//! Fuzz target `handshake`: see netsync::fuzzing::handshake.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    netsync::fuzzing::handshake(data);
});
