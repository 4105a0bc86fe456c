//! The ISA-L peer must compute exactly dm-verity's FEC parity (mdu's, which
//! the verity tests hold to veritysetup's), or the report would compare mdu
//! with something that does other work. Shapes chosen so that every case of
//! the source layout runs: inputs that end on a source boundary, one source
//! straddling the end, sources wholly past it, one round and several, ranges
//! that do not divide the codewords.

#[cfg(mdu_isal)]
#[test]
fn isal_parity_is_the_dm_verity_parity() {
    use mdu_bench::isal::FecIsal;
    use mdu_verity::dmverity::fec;

    assert!(
        FecIsal::new(10, 512, 2, 100).is_err(),
        "a range of 100 codewords"
    );
    let bs = 512;
    for roots in [2u8, 3, 8, 24] {
        let k = 255 - usize::from(roots);
        for blocks in [
            1,
            7,
            k - 1,
            k,
            k + 1,
            k + 2,
            2 * k + 1,
            3 * k,
            3 * k + 5,
            3 * k + 7,
            700,
        ] {
            // Painted with period 251 so that swapped blocks or bytes show.
            let input: Vec<u8> = (0..blocks * bs).map(|i| (i % 251) as u8 ^ 0x5a).collect();
            let want = fec::encode_bytes(&input, bs as u32, roots).unwrap();
            for range in [64, 1024] {
                let isal = FecIsal::new(blocks, bs, roots, range).unwrap();
                for parallel in [false, true] {
                    assert!(
                        isal.parity(&input, parallel) == want,
                        "roots {roots}, {blocks} blocks, range {range}, parallel {parallel}"
                    );
                }
            }
        }
    }
    eprintln!(
        "ISA-L {} ({} kernel) checked",
        mdu_bench::isal::VERSION,
        mdu_bench::isal::kernel()
    );
}

#[cfg(not(mdu_isal))]
#[test]
fn isal_parity_is_the_dm_verity_parity() {
    let why = mdu_bench::isal::skipped().unwrap_or("not built");
    // CI installs libisal-dev: there a missing library on x86-64 is a failure.
    let required = std::env::var("MDU_REQUIRE_TOOLS").is_ok_and(|v| v == "1");
    assert!(
        !(required && cfg!(target_arch = "x86_64")),
        "MDU_REQUIRE_TOOLS=1 but the ISA-L peer was not built: {why}"
    );
    eprintln!("SKIPPED: the ISA-L peer was not built: {why}");
}
