#![no_main]

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| agentcard::fuzzing::edge_compose(bytes));
