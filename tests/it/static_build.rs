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

/// `SHT_SYMTAB` from elf(5): the section holding the symbol table.
const SHT_SYMTAB: u32 = 2;
/// `STT_FUNC` from elf(5): a symbol naming a function.
const STT_FUNC: u8 = 2;

/// The functions of the 64-bit little-endian ELF file `bytes` with a size,
/// as (address, name), in address order (elf(5): section headers at
/// `e_shoff` 0x28, `e_shentsize` 0x3a, `e_shnum` 0x3c; `Elf64_Shdr`'s
/// `sh_type` at 4, `sh_offset` 0x18, `sh_size` 0x20, `sh_link` 0x28;
/// `Elf64_Sym` of 24 bytes: `st_name` 0, `st_info` 4, `st_value` 8,
/// `st_size` 16). Empty when the file has no symbol table (stripped).
fn functions(bytes: &[u8]) -> Vec<(u64, String)> {
    let u16_at = |o: usize| u16::from_le_bytes(bytes[o..o + 2].try_into().unwrap()) as usize;
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
    let shoff = u64_at(0x28) as usize;
    let (size, count) = (u16_at(0x3a), u16_at(0x3c));
    let header = |i: usize| shoff + i * size;
    let Some(symtab) = (0..count)
        .map(header)
        .find(|&h| u32_at(h + 4) == SHT_SYMTAB)
    else {
        return Vec::new();
    };
    let strtab = header(u32_at(symtab + 0x28) as usize);
    let names = u64_at(strtab + 0x18) as usize;
    let (start, len) = (
        u64_at(symtab + 0x18) as usize,
        u64_at(symtab + 0x20) as usize,
    );
    let mut out: Vec<(u64, String)> = (start..start + len)
        .step_by(24)
        .filter(|&s| bytes[s + 4] & 0xf == STT_FUNC && u64_at(s + 16) > 0)
        .map(|s| {
            let name = &bytes[names + u32_at(s) as usize..];
            let end = name.iter().position(|&b| b == 0).unwrap();
            (
                u64_at(s + 8),
                String::from_utf8_lossy(&name[..end]).into_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

/// build.rs has LLD lay out the functions of `link/hot-functions.txt` first
/// (issue 17, BENCHMARKS.md "Round 6"): those this binary has come before
/// nearly all of its other functions, where an unordered link spreads them
/// over the whole of `.text` (measured on 7884a32's release build: 452 of
/// the list's names present, the last at place 4 843 of 4 968). Fails when
/// the ordering is no longer passed to the linker (build.rs's probe broken,
/// the flag dropped).
#[cfg(all(target_os = "linux", target_arch = "x86_64", target_env = "gnu"))]
#[test]
fn the_launch_functions_lie_together() {
    // build.rs leaves the order out when the linker refuses it (GNU ld,
    // `-C linker-features=-lld`); .ci/run, on Rust's default LLD, requires
    // it (PINRUN_REQUIRE_SYMBOL_ORDER=1).
    if env!("PINRUN_SYMBOL_ORDER") != "applied"
        && std::env::var_os("PINRUN_REQUIRE_SYMBOL_ORDER").is_none()
    {
        eprintln!("skipped: the linker took no symbol order (build.rs)");
        return;
    }
    let hot: std::collections::HashSet<String> = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/link/hot-functions.txt"
    ))
    .unwrap()
    .lines()
    .map(str::to_string)
    .collect();
    let pinrun = std::fs::read(env!("CARGO_BIN_EXE_pinrun")).unwrap();
    let all = functions(&pinrun);
    assert!(
        all.len() > 1000,
        "symbol table misread: {} functions",
        all.len()
    );
    let places: Vec<usize> = all
        .iter()
        .enumerate()
        .filter(|(_, (_, name))| hot.contains(name))
        .map(|(i, _)| i)
        .collect();
    assert!(
        places.len() >= 100,
        "only {} of link/hot-functions.txt's names in this build: regenerate it (scripts/hot-functions.sh)",
        places.len()
    );
    // The ordered functions' span holds few others: glibc's objects bring
    // their cold neighbours (one section per object file, not per
    // function). Ordered: the last at place 663 of 37 510 in a debug build
    // (312 listed), 1 296 of 4 968 in a release build (980 listed).
    let last = *places.last().unwrap();
    assert!(
        last < places.len() * 3,
        "the {} listed functions are spread over the first {} of {}: the linker did not order them (build.rs)",
        places.len(),
        last + 1,
        all.len()
    );
}
