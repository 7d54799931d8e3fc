#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mnemon_fuzzing::eval(data));
