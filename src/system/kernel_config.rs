//! The running kernel's build configuration: `/proc/config.gz` (the
//! kernel's own copy, `CONFIG_IKCONFIG_PROC`, `kernel/configs.c`), else
//! `/boot/config-$(uname -r)` as distributions install it. Read on demand
//! only (an EPERM to explain, `--plan-host`), never on a plain launch.

use super::root::Root;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};

/// The most bytes of decompressed configuration read (8 MiB; a
/// distribution kernel's is ~250 KB): a larger file is not a config.
const MAX_CONFIG: u64 = 8 << 20;

/// The `CONFIG_*` options of a kernel configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelConfig {
    /// Option (without `CONFIG_`) → value as written (`y`, `m`, `"str"`,
    /// a number); `n` for `# CONFIG_X is not set`.
    values: BTreeMap<String, String>,
    /// The file it came from, for messages.
    pub source: String,
}

impl KernelConfig {
    /// Parses `.config` syntax (`scripts/kconfig/confdata.c`:
    /// `CONFIG_X=value` and `# CONFIG_X is not set`); other lines are
    /// ignored.
    pub fn parse(text: &str, source: &str) -> Self {
        let mut values = BTreeMap::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("CONFIG_")
                && let Some((k, v)) = rest.split_once('=')
            {
                values.insert(k.to_string(), v.to_string());
            } else if let Some(k) = line
                .strip_prefix("# CONFIG_")
                .and_then(|r| r.strip_suffix(" is not set"))
            {
                values.insert(k.to_string(), "n".to_string());
            }
        }
        Self {
            values,
            source: source.to_string(),
        }
    }

    /// Whether option `name` (without `CONFIG_`) is built in or a module:
    /// `Some(true)` for `y`/`m`, `Some(false)` when it is not set or absent
    /// (Kconfig writes every visible option; an absent one is off or
    /// depends on an option that is), never `None`: the file is the whole
    /// configuration.
    pub fn enabled(&self, name: &str) -> bool {
        matches!(self.values.get(name).map(String::as_str), Some("y" | "m"))
    }
}

/// The running kernel's configuration: `/proc/config.gz`, else
/// `/boot/config-<osrelease>`; `None` when neither can be read (bounded
/// at [`MAX_CONFIG`] decompressed bytes; a larger or corrupt file is
/// none).
pub fn read(root: &Root) -> Option<KernelConfig> {
    if let Some(file) = root.open_regular("/proc/config.gz") {
        let mut text = String::new();
        let gz = flate2::read::GzDecoder::new(BufReader::new(file));
        let mut limited = gz.take(MAX_CONFIG + 1);
        if limited.read_to_string(&mut text).is_ok() && (text.len() as u64) <= MAX_CONFIG {
            return Some(KernelConfig::parse(&text, "/proc/config.gz"));
        }
    }
    let release = root.read_value("/proc/sys/kernel/osrelease")?;
    let path = format!("/boot/config-{release}");
    let file = root.open_regular(&path)?;
    let mut text = String::new();
    for line in BufReader::new(file.take(MAX_CONFIG)).lines() {
        text.push_str(&line.ok()?);
        text.push('\n');
    }
    Some(KernelConfig::parse(&text, &path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both forms Kconfig writes, and lines that are neither.
    #[test]
    fn parses_set_and_unset_options() {
        let c = KernelConfig::parse(
            "#\n# Automatically generated file; DO NOT EDIT.\nCONFIG_NO_HZ_FULL=y\n# CONFIG_RCU_NOCB_CPU is not set\nCONFIG_HZ=250\nCONFIG_X=m\n",
            "t",
        );
        assert!(c.enabled("NO_HZ_FULL"));
        assert!(c.enabled("X"));
        assert!(!c.enabled("RCU_NOCB_CPU"));
        assert!(!c.enabled("HZ"));
        assert!(!c.enabled("ABSENT"));
    }

    /// /proc/config.gz is read before /boot, decompressed.
    #[test]
    fn reads_proc_config_gz_first() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc/sys/kernel")).unwrap();
        std::fs::create_dir_all(dir.path().join("boot")).unwrap();
        std::fs::write(dir.path().join("proc/sys/kernel/osrelease"), "6.1.0-t\n").unwrap();
        std::fs::write(dir.path().join("boot/config-6.1.0-t"), "CONFIG_A=y\n").unwrap();
        let root = Root::new(dir.path());
        let c = read(&root).unwrap();
        assert_eq!(c.source, "/boot/config-6.1.0-t");
        assert!(c.enabled("A"));
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"# CONFIG_A is not set\nCONFIG_B=y\n")
            .unwrap();
        std::fs::write(dir.path().join("proc/config.gz"), gz.finish().unwrap()).unwrap();
        let c = read(&root).unwrap();
        assert_eq!(c.source, "/proc/config.gz");
        assert!(!c.enabled("A") && c.enabled("B"));
    }
}
