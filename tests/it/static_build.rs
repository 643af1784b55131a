//! The default build is static (`.cargo/config.toml`, issue 17): no ELF
//! interpreter (`PT_INTERP`, elf(5)), so no dynamic loader maps and
//! relocates shared libraries at each launch.

/// `PT_LOAD` from elf(5): a loadable segment (every executable has one).
const PT_LOAD: u32 = 1;
/// `PT_INTERP` from elf(5): the program header naming the dynamic loader.
const PT_INTERP: u32 = 3;

/// The `p_type` of every program header of the 64-bit little-endian ELF
/// file `bytes` (elf(5): `e_phoff` at 0x20, `e_phentsize` at 0x36,
/// `e_phnum` at 0x38; `p_type` first in each entry).
fn program_header_types(bytes: &[u8]) -> Vec<u32> {
    assert_eq!(&bytes[..4], b"\x7fELF");
    assert_eq!(bytes[4], 2, "ELFCLASS64");
    let u16_at = |o: usize| u16::from_le_bytes(bytes[o..o + 2].try_into().unwrap()) as usize;
    let phoff = u64::from_le_bytes(bytes[0x20..0x28].try_into().unwrap()) as usize;
    let (size, count) = (u16_at(0x36), u16_at(0x38));
    (0..count)
        .map(|i| {
            let o = phoff + i * size;
            u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap())
        })
        .collect()
}

#[cfg(all(
    target_os = "linux",
    target_env = "gnu",
    target_endian = "little",
    target_pointer_width = "64"
))]
#[test]
fn the_default_build_has_no_dynamic_loader() {
    let pinrun = std::fs::read(env!("CARGO_BIN_EXE_pinrun")).unwrap();
    let types = program_header_types(&pinrun);
    assert!(
        types.contains(&PT_LOAD),
        "program headers misread: {types:?}"
    );
    assert!(
        !types.contains(&PT_INTERP),
        "pinrun has an ELF interpreter: .cargo/config.toml's +crt-static not applied (RUSTFLAGS set?)"
    );
}
