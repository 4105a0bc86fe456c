//! Wiping what a key setup leaves on the stack.
//!
//! Round keys live on the heap and are zeroized there on drop, and this
//! crate builds the SIMD schedules directly in that allocation. Two kinds
//! of copies can still be left in memory by a key setup: the RustCrypto
//! `aes` crate (the generic backend, the `essiv` IV key) returns an
//! expanded key by value, which may pass through its callers' stack frames,
//! and any key expansion may spill registers holding round keys to its own
//! frame. Both lie below the frame of the function that called the setup,
//! once the setup has returned.
//!
//! So every key setup in this crate runs in a function that is not inlined
//! into its caller, and the caller then calls [`after_key_setup`], which
//! overwrites that stack region with zeros (`zeroize::zeroize_stack`).
//! This is best effort: it covers [`KEY_SETUP_STACK`] bytes, several times
//! what the key setups use, and relies on `inline(never)` being honoured,
//! which it is in practice. It runs once per key, never per request.

/// Bytes of stack below the caller's frame that [`after_key_setup`]
/// overwrites: about three times the deepest key setup of this crate
/// (measured on x86_64 with `aes` 0.9, with AES-NI and with its software
/// AES: two AES-256 expansions into a box reach 5.7 KiB deep in a debug
/// build and 2.3 KiB optimized; the SHA-256 and AES-256 of `essiv` less).
pub(crate) const KEY_SETUP_STACK: usize = 16 << 10;

/// Overwrites the stack that a key setup called by the caller (and not
/// inlined into it) has just used; see the module documentation.
#[inline(always)]
pub(crate) fn after_key_setup() {
    zeroize::zeroize_stack::<KEY_SETUP_STACK>();
}

#[cfg(all(test, x86_simd))]
mod tests {
    use super::KEY_SETUP_STACK;
    use crate::dmcrypt::{Geometry, IvGenerator, IvMode};
    use crate::{Backend, XtsAes128, XtsAes256};
    use aes::cipher::KeyInit;
    use sha2::{Digest, Sha256};

    /// How much dead stack the test looks at: twice what is wiped.
    const DEPTH: usize = 2 * KEY_SETUP_STACK;

    /// Copies the `DEPTH` bytes just below the caller's stack pointer, where
    /// the functions it called last had their frames, into `out`.
    #[inline(always)]
    fn dead_stack(out: &mut [u8]) {
        assert_eq!(out.len(), DEPTH);
        // SAFETY: `out` is `DEPTH` writable bytes; the source is the
        // `DEPTH` bytes below the stack pointer, inside this thread's stack
        // (test threads have 2 MiB and more), read without pushing anything
        // (`rep movsb` uses no stack).
        unsafe {
            core::arch::asm!(
                "mov rsi, rsp",
                "sub rsi, {depth}",
                "rep movsb",
                depth = const DEPTH,
                inout("rdi") out.as_mut_ptr() => _,
                inout("rcx") DEPTH => _,
                out("rsi") _,
                options(nostack),
            );
        }
    }

    fn contains(hay: &[u8], needle: &[u8]) -> bool {
        hay.windows(needle.len()).any(|w| w == needle)
    }

    /// An AES-256 key schedule put in a box without the wipe.
    #[inline(never)]
    fn unwiped(key: &[u8]) -> Box<aes::Aes256> {
        Box::new(aes::Aes256::new_from_slice(key).unwrap())
    }

    /// The first round keys of AES are the key itself, so a copy of the key
    /// or of a schedule left in a dead stack frame shows as the key's
    /// 16-byte pieces. The key and the ESSIV salt live on the heap here, so
    /// none of their pieces should be found on the stack after the setup.
    #[test]
    fn key_setups_leave_no_key_material_on_the_stack() {
        let key: Vec<u8> = (0..64u32).map(|i| (i * 37 + 11) as u8).collect();
        let salt: Vec<u8> = Sha256::digest(&key).to_vec();
        let mut seen = vec![0u8; DEPTH];

        // Control: without the wipe, the `aes` crate's expansion leaves key
        // pieces on the stack, so the probe can see them.
        let control = unwiped(&key[..32]);
        dead_stack(&mut seen);
        drop(control);
        if !contains(&seen, &key[..16]) {
            eprintln!(
                "SKIPPED key_setups_leave_no_key_material_on_the_stack: this build leaves no \
                 key copy on the stack even without the wipe, so the test cannot tell"
            );
            return;
        }
        // Start clean, so that whatever is found below comes from the setup
        // under test.
        zeroize::zeroize_stack::<DEPTH>();

        for &backend in Backend::available() {
            let xts = XtsAes256::with_backend(&key, backend).unwrap();
            dead_stack(&mut seen);
            for (i, piece) in key.chunks(16).enumerate() {
                assert!(
                    !contains(&seen, piece),
                    "{backend}: XTS-AES-256 key piece {i}"
                );
            }
            let copy = xts.clone();
            dead_stack(&mut seen);
            for (i, piece) in key.chunks(16).enumerate() {
                assert!(!contains(&seen, piece), "{backend}: clone, key piece {i}");
            }
            drop((xts, copy));
            let xts = XtsAes128::with_backend(&key[..32], backend).unwrap();
            dead_stack(&mut seen);
            for (i, piece) in key[..32].chunks(16).enumerate() {
                assert!(
                    !contains(&seen, piece),
                    "{backend}: XTS-AES-128 key piece {i}"
                );
            }
            drop(xts);
        }

        let geometry = Geometry::new(512, 0, false).unwrap();
        let essiv = IvGenerator::new(IvMode::EssivSha256, geometry, &key).unwrap();
        dead_stack(&mut seen);
        for (i, piece) in salt.chunks(16).enumerate() {
            assert!(!contains(&seen, piece), "essiv salt piece {i}");
        }
        drop(essiv);
        eprintln!(
            "key_setups_leave_no_key_material_on_the_stack: checked {DEPTH} bytes of dead stack \
             after every setup, backends {:?}",
            Backend::available()
        );
    }
}
