//! The threads of a live process (`proc(5)`: `/proc/PID/task/TID/comm`),
//! for the `--thread-map` watcher. Read from the live `/proc`, never a
//! dump: a watcher follows a running command.

/// One thread of a process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// The thread id.
    pub tid: i32,
    /// Its name (`comm`, newline stripped; at most 15 bytes).
    pub name: String,
}

/// The threads of process `pid`, ascending by TID; threads that end while
/// being read are left out. `Err` when `/proc/PID/task` cannot be read (the
/// process has ended).
pub fn tasks(pid: i32) -> std::io::Result<Vec<Task>> {
    let dir = format!("/proc/{pid}/task");
    let mut out: Vec<Task> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|tid| {
            let comm = std::fs::read_to_string(format!("{dir}/{tid}/comm")).ok()?;
            Some(Task {
                tid,
                name: comm.trim_end_matches('\n').to_string(),
            })
        })
        .collect();
    out.sort_by_key(|t| t.tid);
    Ok(out)
}
