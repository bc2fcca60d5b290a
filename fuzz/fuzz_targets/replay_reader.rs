#![no_main]
//! Fuzz target `replay_reader`: see netsync::fuzzing::replay_reader.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    netsync::fuzzing::replay_reader(data);
});
