//! finup2x == two finups == the `sha2` crate, on every backend, for any
//! prefix (the salted state), any message pair, equal lengths or not; and
//! finup_many (sixteen AVX-512 lanes where the backend has them) == one
//! finup per message, for groups of the two messages in an input-chosen
//! pattern.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mdu_verity::sha256::{Backend, State};
use sha2::{Digest, Sha256};

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let prefix_len = usize::from(data[0]) % (data.len() - 3);
    let equal = data[1] & 1 == 0;
    let body = &data[2..];
    let (prefix, rest) = body.split_at(prefix_len.min(body.len()));
    let (a, b) = if equal {
        let half = rest.len() / 2;
        (&rest[..half], &rest[half..2 * half])
    } else {
        let cut = usize::from(data[1] >> 1) % (rest.len() + 1);
        rest.split_at(cut)
    };
    let want = |m: &[u8]| -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(prefix);
        h.update(m);
        h.finalize().into()
    };
    let (wa, wb) = (want(a), want(b));
    for &backend in Backend::available() {
        let mut s = State::with_backend(backend).unwrap();
        // Feed the prefix in two pieces so partial blocks are buffered.
        let split = prefix.len() / 3;
        s.update(&prefix[..split]);
        s.update(&prefix[split..]);
        let before = s.clone();
        assert_eq!(s.finup(a), wa, "{backend:?} finup a");
        assert_eq!(s.finup2x(a, b), (wa, wb), "{backend:?} finup2x");
        assert_eq!(s.finup2x(b, a), (wb, wa), "{backend:?} finup2x swapped");
        assert_eq!(
            s.finup(b),
            before.finup(b),
            "finup must not change the state"
        );
        // 16 to 47 messages, each `a` or `b` by the bits of the input, so
        // groups of sixteen are sometimes all one length and sometimes not.
        let pattern =
            u64::from_le_bytes(core::array::from_fn(|i| data.get(i).copied().unwrap_or(0)));
        let count = 16 + (pattern % 32) as usize;
        let msgs: Vec<&[u8]> = (0..count)
            .map(|i| if pattern >> (i % 64) & 1 == 0 { a } else { b })
            .collect();
        let mut out = vec![[0u8; 32]; count];
        s.finup_many(&msgs, &mut out);
        for (m, d) in msgs.iter().zip(&out) {
            assert_eq!(*d, want(m), "{backend:?} finup_many");
        }
    }
});
