//! Custom alphabets and padding modes: decode(encode(x)) == x on every
//! backend, every backend encodes alike, and alphabet construction refuses
//! invalid tables with an error instead of a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mdu_base64::{Alphabet, Backend, Engine, Padding};

fuzz_target!(|data: &[u8]| {
    if data.len() < 9 {
        return;
    }
    let (head, payload) = data.split_at(9);
    // A permutation of 64 printable bytes, chosen by the input, or the raw
    // head as a (usually invalid) table.
    let printable: Vec<u8> = (b'!'..=b'~').filter(|&c| c != b'=').collect();
    let mut pool = printable.clone();
    let mut seed = u64::from_le_bytes(head[..8].try_into().unwrap()) | 1;
    let mut table = [0u8; 64];
    for slot in table.iter_mut() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let i = (seed % pool.len() as u64) as usize;
        *slot = pool.swap_remove(i);
    }
    let raw_table: Vec<u8> = payload.iter().copied().cycle().take(64).collect();
    if raw_table.len() == 64 {
        // Arbitrary tables: accepted or refused, never a panic.
        let raw: [u8; 64] = raw_table.try_into().unwrap();
        let _ = Alphabet::new(&raw);
    }
    let alphabet = Alphabet::new(&table).expect("64 distinct printable bytes, no '='");
    let padding = match head[8] % 3 {
        0 => Padding::Required,
        1 => Padding::None,
        _ => Padding::Optional,
    };
    let engine = Engine::new(&alphabet, padding);
    let scalar = engine.with_backend(Backend::Generic).unwrap();
    let text = scalar.encode_to_string(payload);
    for &b in Backend::available() {
        let e = engine.with_backend(b).unwrap();
        assert_eq!(
            e.encode_to_string(payload),
            text,
            "{b:?} encodes differently"
        );
        assert_eq!(
            e.decode_to_vec(text.as_bytes()).as_deref(),
            Ok(payload),
            "{b:?} round trip"
        );
    }
});
