#![no_main]
//! Fuzz target `wire_message`: see netsync::fuzzing::wire_message.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    netsync::fuzzing::wire_message(data);
});
