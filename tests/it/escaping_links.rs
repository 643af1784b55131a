//! A dump directory another user wrote may hold symbolic links leaving it.
//! pinrun resolves every path below `--sysroot DIR` inside DIR, as the
//! kernel does for a process chrooted there (`openat2(2)` with
//! `RESOLVE_IN_ROOT`): it never opens a file outside the dump (opening a
//! FIFO wakes its writer; a device's open has side effects, such as arming
//! `/dev/watchdog`), and a link reads what it names inside the dump.
//!
//! For each kind of read (a file read from the root, a per-IRQ and a
//! per-CPU file read from an opened directory, a listed directory, the
//! streamed `/proc/interrupts`) a link to a FIFO outside the dump, with a
//! writer blocked on it: the writer stays blocked, and pinrun's output is
//! that of the same dump without the file (the link resolves inside the
//! dump to a path that does not exist there). An absolute link reads the
//! dump's file, not this host's.

use crate::common;
use common::{at, write_file};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A 4-CPU, one-node machine with IRQs 1 and 2 (sysfs, `/proc/irq` and
/// `/proc/interrupts`).
fn machine(root: &Path) {
    let cpu = "sys/devices/system/cpu";
    for f in ["possible", "present", "online"] {
        write_file(root, &format!("{cpu}/{f}"), "0-3\n");
    }
    for c in 0..4 {
        let t = format!("{cpu}/cpu{c}/topology");
        write_file(root, &format!("{t}/core_cpus_list"), &format!("{c}\n"));
        write_file(root, &format!("{t}/physical_package_id"), "0\n");
        write_file(root, &format!("{t}/core_id"), &format!("{c}\n"));
    }
    write_file(root, "sys/devices/system/node/possible", "0\n");
    write_file(root, "sys/devices/system/node/online", "0\n");
    write_file(root, "sys/devices/system/node/node0/cpulist", "0-3\n");
    write_file(
        root,
        "proc/interrupts",
        "           CPU0       CPU1       CPU2       CPU3\n  \
         1:          0         37          0          0  IO-APIC   1-edge      dev1\n  \
         2:          5          0          0          0  IO-APIC   2-edge      dev2\n",
    );
    for (n, on) in [(1, "1"), (2, "0")] {
        write_file(
            root,
            &format!("proc/irq/{n}/smp_affinity_list"),
            &format!("{on}\n"),
        );
        for (f, t) in [
            ("actions", format!("dev{n}\n")),
            (
                "per_cpu_count",
                if n == 1 { "0,37,0,0\n" } else { "5,0,0,0\n" }.to_string(),
            ),
            ("chip_name", "IO-APIC\n".to_string()),
            ("hwirq", format!("{n}\n")),
            ("name", "edge\n".to_string()),
            ("type", "edge\n".to_string()),
        ] {
            write_file(root, &format!("sys/kernel/irq/{n}/{f}"), &t);
        }
    }
}

/// A shell blocked opening a FIFO for writing (`exec 3>FIFO`), as in the
/// fault's reproduction: its open returns as soon as anyone opens the
/// FIFO for reading. Killed when dropped (a failed assertion leaves no
/// shell behind).
struct BlockedWriter {
    child: std::process::Child,
    fifo: PathBuf,
}

impl BlockedWriter {
    /// Makes `fifo` afresh, starts the writer and waits until it is
    /// blocked in `openat(2)` (`/proc/PID/syscall`; when that cannot be
    /// read, a moment). A fresh FIFO for each writer: the reader that
    /// released the previous one ([`BlockedWriter::was_opened`]) may live
    /// on for a moment in a child another test thread forked (until its
    /// exec), and a writer of the same FIFO would get through its open.
    fn on(fifo: &Path) -> Self {
        let _ = std::fs::remove_file(fifo);
        nix::unistd::mkfifo(fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let mut child = std::process::Command::new("sh")
            .args(["-c", "exec 3>\"$0\"; echo OPENED"])
            .arg(fifo)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh");
        let syscall = format!("/proc/{}/syscall", child.id());
        let openat = format!("{} ", libc::SYS_openat);
        let start = Instant::now();
        loop {
            match std::fs::read_to_string(&syscall) {
                Ok(s) if s.starts_with(&openat) => break,
                Err(_) if start.elapsed() > Duration::from_millis(100) => break,
                _ => {}
            }
            // A writer that got through its open ended at once: the FIFO
            // had a reader before pinrun ran.
            assert!(
                child.try_wait().unwrap().is_none(),
                "the writer got past its open before pinrun ran: {} had a reader",
                fifo.display()
            );
            // A bound for a failure only: a loaded machine may take
            // seconds to start a shell.
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the writer never blocked on {}",
                fifo.display()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        BlockedWriter {
            child,
            fifo: fifo.to_path_buf(),
        }
    }

    /// Whether the FIFO was opened for reading since [`BlockedWriter::on`]
    /// (the writer got past its open: it printed `OPENED` and ended); the
    /// writer is then released and reaped.
    fn was_opened(mut self) -> bool {
        let start = Instant::now();
        let mut ended = false;
        while start.elapsed() < Duration::from_millis(100) {
            if self.child.try_wait().unwrap().is_some() {
                ended = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        use std::os::unix::fs::OpenOptionsExt;
        let reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&self.fifo)
            .unwrap();
        let _ = self.child.wait();
        drop(reader);
        ended
    }
}

impl Drop for BlockedWriter {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// What a kind of read finds outside the dump.
enum Outside {
    /// A FIFO, the link's target.
    Fifo,
    /// A directory (the link's target) holding a FIFO at this path.
    DirWithFifo(&'static str),
}

/// The link at `rel` (below a [`machine`]) to a FIFO outside the dump
/// (`outside`), absolute or (`climb`) relative climbing past the dump's
/// top: for each of `args`, pinrun does not open the FIFO (its writer
/// stays blocked), and its output and exit status are those of the same
/// dump with `rel` removed.
fn link_out(rel: &str, outside: Outside, climb: bool, args: &[&[&str]]) {
    link_out_of(machine, rel, outside, climb, args)
}

/// [`link_out`] below the dump `make` writes.
fn link_out_of(make: fn(&Path), rel: &str, outside: Outside, climb: bool, args: &[&[&str]]) {
    let dump = common::tempdir();
    let out = tempfile::tempdir().unwrap();
    make(dump.path());
    let link = dump.path().join(rel);
    if link.is_dir() {
        std::fs::remove_dir_all(&link).unwrap();
    } else if link.exists() {
        std::fs::remove_file(&link).unwrap();
    }
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    let (target, fifo) = match outside {
        Outside::Fifo => (out.path().join("evil.fifo"), out.path().join("evil.fifo")),
        Outside::DirWithFifo(f) => {
            let d = out.path().join("tree");
            // The machine's tree at the link's place, one file a FIFO.
            let copy = common::tempdir();
            make(copy.path());
            common::copy_tree(&copy.path().join(rel), &d);
            std::fs::remove_file(d.join(f)).unwrap();
            (d.clone(), d.join(f))
        }
    };
    let target = if climb {
        let depth = link.strip_prefix(dump.path()).unwrap().components().count();
        // Far past the dump's top, then down to the FIFO's absolute path.
        let up = "../".repeat(depth + 20);
        PathBuf::from(format!(
            "{up}{}",
            target.display().to_string().trim_start_matches('/')
        ))
    } else {
        target
    };
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let mut linked = Vec::new();
    for a in args {
        let w = BlockedWriter::on(&fifo);
        let got = at(dump.path(), a);
        assert!(
            !w.was_opened(),
            "{rel} -> {}: pinrun {a:?} opened the FIFO outside the dump",
            target.display()
        );
        linked.push(got);
    }
    std::fs::remove_file(&link).unwrap();
    for (a, got) in args.iter().zip(linked) {
        let want = at(dump.path(), a);
        assert_eq!(got.status.code(), want.status.code(), "{rel}: {a:?}");
        assert_eq!(
            String::from_utf8_lossy(&got.stdout),
            String::from_utf8_lossy(&want.stdout),
            "{rel}: {a:?}: not read as the missing file"
        );
        assert_eq!(
            String::from_utf8_lossy(&got.stderr),
            String::from_utf8_lossy(&want.stderr),
            "{rel}: {a:?}"
        );
    }
}

const CHECK: &[&str] = &["--check", "--json", "--cpus", "1"];
const SHOW: &[&str] = &["--show", "--json"];

/// A file read from the root (`Root::read`): `cpu/online`, by an absolute
/// link and by one climbing past the dump's top.
#[test]
fn root_read_of_a_link_out_opens_nothing() {
    for climb in [false, true] {
        link_out(
            "sys/devices/system/cpu/online",
            Outside::Fifo,
            climb,
            &[CHECK, SHOW],
        );
        link_out(
            "sys/devices/system/node/node0/cpulist",
            Outside::Fifo,
            climb,
            &[SHOW],
        );
    }
}

/// A per-IRQ file read from the opened `/proc/irq` (`Dir`).
#[test]
fn per_irq_read_of_a_link_out_opens_nothing() {
    link_out(
        "proc/irq/1/smp_affinity_list",
        Outside::Fifo,
        false,
        &[CHECK],
    );
    link_out(
        "proc/irq/1/smp_affinity_list",
        Outside::Fifo,
        true,
        &[CHECK],
    );
}

/// A per-CPU topology file read from the opened `/sys/devices/system/cpu`
/// (`Dir`).
#[test]
fn per_cpu_read_of_a_link_out_opens_nothing() {
    for climb in [false, true] {
        link_out(
            "sys/devices/system/cpu/cpu1/topology/core_cpus_list",
            Outside::Fifo,
            climb,
            &[CHECK, SHOW],
        );
    }
}

/// A listed directory that is a link out (`/proc/irq`, listed then read
/// below; `/sys/kernel/irq`, opened then read below): neither the listing
/// nor the files below it are the host's.
#[test]
fn listed_dir_linked_out_opens_nothing() {
    link_out(
        "proc/irq",
        Outside::DirWithFifo("1/smp_affinity_list"),
        false,
        &[CHECK],
    );
    link_out(
        "sys/kernel/irq",
        Outside::DirWithFifo("1/actions"),
        false,
        &[CHECK],
    );
}

/// `/proc/interrupts`, streamed (`Root::open_regular`): the IRQs' source
/// on a machine without `/sys/kernel/irq`.
#[test]
fn streamed_file_linked_out_opens_nothing() {
    fn no_sysfs_irqs(root: &Path) {
        machine(root);
        std::fs::remove_dir_all(root.join("sys/kernel/irq")).unwrap();
    }
    for climb in [false, true] {
        link_out_of(
            no_sysfs_irqs,
            "proc/interrupts",
            Outside::Fifo,
            climb,
            &[CHECK, SHOW],
        );
    }
}

/// An absolute link reads the dump's file, not this host's: the node's
/// `cpulist` linked to `/sys/devices/system/cpu/online`, which the dump
/// holds with a value this host does not have.
#[test]
fn absolute_link_reads_the_dump() {
    let dump = common::tempdir();
    machine(dump.path());
    let cpu = "sys/devices/system/cpu";
    // Three CPUs online of four (CPU 3 offline, without topology).
    write_file(dump.path(), &format!("{cpu}/online"), "0-2\n");
    std::fs::remove_dir_all(dump.path().join(format!("{cpu}/cpu3/topology"))).unwrap();
    write_file(dump.path(), &format!("{cpu}/cpu3/online"), "0\n");
    let host = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    if host == "0-2\n" {
        common::skip("this host's online CPUs are the dump's (0-2)");
        return;
    }
    let node0 = dump.path().join("sys/devices/system/node/node0/cpulist");
    std::fs::remove_file(&node0).unwrap();
    std::os::unix::fs::symlink("/sys/devices/system/cpu/online", &node0).unwrap();
    let out = at(dump.path(), SHOW);
    common::assert_status(&out, 0);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let node = &v["nodes"][0];
    assert_eq!(common::ids(&node["cpus"]), vec![0, 1, 2], "{node}");
    // The same through `--dump`: the archive keeps the dump's file.
    let archive = tempfile::tempdir().unwrap();
    let file = archive.path().join("d.tar.gz");
    let made = common::pinrun()
        .arg("--sysroot")
        .arg(dump.path())
        .arg("--dump")
        .arg(&file)
        .output()
        .unwrap();
    common::assert_status(&made, 0);
    let replay = at(&file, SHOW);
    common::assert_status(&replay, 0);
    let r: serde_json::Value = serde_json::from_slice(&replay.stdout).unwrap();
    assert_eq!(common::ids(&r["nodes"][0]["cpus"]), vec![0, 1, 2]);
}

/// `--dump` of a dump directory keeps what pinrun read through links the
/// unpacker would refuse as written: one climbing past the dump's top
/// (`proc/cmdline`, which the in-root resolution keeps at the top) and one
/// with `..` after a name (`cpu1/cpufreq`). Each is stored as the link to
/// where it resolves; the archive replays the directory's findings, the
/// isolation asked on the command line and the governor included.
#[test]
fn dump_keeps_links_resolved_inside() {
    let dump = common::tempdir();
    machine(dump.path());
    let d = dump.path();
    write_file(d, "proc/cmdline_real", "isolcpus=1 nohz_full=1\n");
    let cpu = "sys/devices/system/cpu";
    write_file(
        d,
        &format!("{cpu}/cpufreq/policy1/scaling_governor"),
        "powersave\n",
    );
    std::os::unix::fs::symlink(
        "../../../../../../proc/cmdline_real",
        d.join("proc/cmdline"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        "../cpufreq/../cpufreq/policy1",
        d.join(format!("{cpu}/cpu1/cpufreq")),
    )
    .unwrap();
    let args = ["--check", "--cpus", "1", "--json"];
    let direct = at(d, &args);
    let text = String::from_utf8_lossy(&direct.stdout).to_string();
    assert!(
        text.contains("cpufreq-governor") && text.contains("powersave"),
        "{text}"
    );
    // The command line read through the climbing link isolates CPU 1
    // (this dump has no `cpu/isolated`: the command line is the source).
    let shown = |root: &Path| -> serde_json::Value {
        let out = at(root, SHOW);
        common::assert_status(&out, 0);
        serde_json::from_slice(&out.stdout).unwrap()
    };
    assert_eq!(common::ids(&shown(d)["isolated"]), vec![1]);
    let archive = tempfile::tempdir().unwrap();
    let file = archive.path().join("d.tar.gz");
    let made = common::pinrun()
        .arg("--sysroot")
        .arg(d)
        .arg("--dump")
        .arg(&file)
        .output()
        .unwrap();
    common::assert_status(&made, 0);
    let replay = at(&file, &args);
    assert_eq!(
        String::from_utf8_lossy(&replay.stdout),
        text.replace(&d.display().to_string(), &file.display().to_string())
    );
    assert_eq!(replay.status.code(), direct.status.code());
    assert_eq!(common::ids(&shown(&file)["isolated"]), vec![1]);
}

/// A kernel that refuses `openat2(2)` (`ENOSYS` before Linux 5.6, `EPERM`
/// from a seccomp filter; here a filter, `tests/helpers/no_openat2.c`):
/// a dump directory is refused (exit 125, `sysroot-unconfined`) before
/// anything below it is opened, rather than read with links that may
/// leave it; an archive, checked as it is unpacked, still reads as with
/// `openat2`.
#[test]
fn kernel_without_openat2_refuses_a_dump_directory() {
    let tools = tempfile::tempdir().unwrap();
    let Some(helper) = common::compile("no_openat2", &["-O2"], tools.path()) else {
        return;
    };
    let dump = common::tempdir();
    machine(dump.path());
    let archive = tools.path().join("m.tar.gz");
    let made = common::pinrun()
        .arg("--sysroot")
        .arg(dump.path())
        .arg("--dump")
        .arg(&archive)
        .output()
        .unwrap();
    common::assert_status(&made, 0);
    let out = tempfile::tempdir().unwrap();
    let fifo = out.path().join("evil.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let online = dump.path().join("sys/devices/system/cpu/online");
    std::fs::remove_file(&online).unwrap();
    std::os::unix::fs::symlink(&fifo, &online).unwrap();
    let pinrun = assert_cmd::cargo::cargo_bin("pinrun");
    let filtered = |errno: i32, sysroot: &Path| {
        std::process::Command::new(&helper)
            .arg(errno.to_string())
            .arg("--")
            .arg(&pinrun)
            .arg("--sysroot")
            .arg(sysroot)
            .args(CHECK)
            .env("PINRUN_CONFIG", "")
            .output()
            .unwrap()
    };
    for errno in [libc::ENOSYS, libc::EPERM] {
        let w = BlockedWriter::on(&fifo);
        let got = filtered(errno, dump.path());
        assert!(!w.was_opened(), "errno {errno}: the FIFO was opened");
        common::assert_status(&got, 125);
        let v: serde_json::Value = serde_json::from_slice(&got.stdout).unwrap();
        assert_eq!(v["error"]["code"], "sysroot-unconfined", "{v}");
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(
            msg.starts_with(&format!("--sysroot {}: ", dump.path().display()))
                && msg.contains("openat2"),
            "{msg}"
        );
        let want = at(&archive, CHECK);
        let got = filtered(errno, &archive);
        assert_eq!(got.status.code(), want.status.code(), "errno {errno}");
        assert_eq!(got.stdout, want.stdout, "errno {errno}");
    }
}
