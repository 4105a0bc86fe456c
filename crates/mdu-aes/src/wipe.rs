//! Wiping what a key setup leaves on the stack.
//!
//! Round keys live on the heap and are zeroized there on drop, and the
//! SIMD schedules are built directly in that allocation. Two kinds of
//! copies can still be left in memory by a key setup: the RustCrypto `aes`
//! crate (the portable backends, the `essiv` IV key of dm-crypt) returns an
//! expanded key by value, which may pass through its callers' stack frames,
//! and any key expansion may spill registers holding round keys to its own
//! frame. Both lie below the frame of the function that called the setup,
//! once the setup has returned.
//!
//! So every key setup runs in a function that is not inlined into its
//! caller, and the caller then calls [`after_key_setup`], which overwrites
//! that stack region with zeros (`zeroize::zeroize_stack`). This is best
//! effort: it covers [`KEY_SETUP_STACK`] bytes, several times what the key
//! setups use, and relies on `inline(never)` being honoured, which it is in
//! practice. It runs once per key, never per request.
//!
//! ```
//! // After a key setup in a function that was not inlined:
//! mdu_aes::__private::wipe::after_key_setup();
//! ```

/// Bytes of stack below the caller's frame that [`after_key_setup`]
/// overwrites: about three times the deepest key setup of the cipher crates
/// (measured on x86_64 with `aes` 0.9, with AES-NI and with its software
/// AES: two AES-256 expansions into a box reach 5.7 KiB deep in a debug
/// build and 2.3 KiB optimized; the SHA-256 and AES-256 of `essiv` less).
pub const KEY_SETUP_STACK: usize = 16 << 10;

/// Overwrites the stack that a key setup called by the caller (and not
/// inlined into it) has just used; see the module documentation.
#[inline(always)]
pub fn after_key_setup() {
    zeroize::zeroize_stack::<KEY_SETUP_STACK>();
}

/// How much dead stack `dead_stack` (x86_64) copies: twice what is wiped.
pub const PROBE_DEPTH: usize = 2 * KEY_SETUP_STACK;

/// For the tests of the cipher crates: copies the [`PROBE_DEPTH`] bytes
/// just below the caller's stack pointer, where the functions it called
/// last had their frames, into `out` (which must be `PROBE_DEPTH` bytes;
/// otherwise nothing is copied). A key found there was left behind by a
/// key setup.
///
/// ```
/// # #[cfg(target_arch = "x86_64")] {
/// let mut seen = vec![0u8; mdu_aes::__private::wipe::PROBE_DEPTH];
/// mdu_aes::__private::wipe::after_key_setup();
/// mdu_aes::__private::wipe::dead_stack(&mut seen);
/// # }
/// ```
#[cfg(x86_simd)]
#[inline(always)]
pub fn dead_stack(out: &mut [u8]) {
    if out.len() != PROBE_DEPTH {
        return;
    }
    // SAFETY: `out` is `PROBE_DEPTH` writable bytes; the source is the
    // `PROBE_DEPTH` bytes below the stack pointer, inside this thread's
    // stack (test threads have 2 MiB and more), read without pushing
    // anything (`rep movsb` uses no stack).
    unsafe {
        core::arch::asm!(
            "mov rsi, rsp",
            "sub rsi, {depth}",
            "rep movsb",
            depth = const PROBE_DEPTH,
            inout("rdi") out.as_mut_ptr() => _,
            inout("rcx") PROBE_DEPTH => _,
            out("rsi") _,
            options(nostack),
        );
    }
}

/// Whether `needle` occurs in `hay` (for the stack probes).
///
/// ```
/// assert!(mdu_aes::__private::wipe::contains(b"abcdef", b"cd"));
/// ```
pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}
