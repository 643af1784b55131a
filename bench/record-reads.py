#!/usr/bin/env python3
"""bench/record-reads.py: records the file-system calls of one pinrun run
for bench/replay.c (issue 17: the physical limit of each row).

    bench/record-reads.py OUT.list PINRUN [ARG]...

Runs PINRUN under `strace -f -y` and writes one line per call made before
the command's exec (see replay.c for the format): every open with the
directory it was relative to, directory listings, path stats, and the live
real-time-competitor scan (`sched_getscheduler` per process) as one `rt`
line (its PIDs change from run to run; replay.c scans /proc itself).
Files opened and then `fstat`ed (a dump's files) are `F` lines; the CPU
the run placed its command on is a `c` line.
"""
import os
import re
import subprocess
import sys
import tempfile

out, cmd = sys.argv[1], sys.argv[2:]
# The command's own PATH search is the exec's: replay.c's execvp makes it.
command = cmd[cmd.index("--") + 1] if "--" in cmd[:-1] else None
with tempfile.NamedTemporaryFile("r", suffix=".strace") as tr:
    subprocess.run(
        ["strace", "-f", "-y", "-qq", "-o", tr.name,
         "-e", "trace=openat,openat2,newfstatat,fstat,statx,getdents64,sched_getscheduler,sched_setaffinity,execve"]
        + cmd,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    text = tr.read().splitlines()

call = re.compile(r'^\d+\s+(\w+)\((.*)$')
# A call another thread interrupted is split in two lines: joined again.
pending, joined = {}, []
for t in text:
    pid = t.split(None, 1)[0]
    if t.endswith("<unfinished ...>"):
        pending[pid] = t[: -len("<unfinished ...>")].rstrip()
    elif "resumed>" in t and pid in pending:
        joined.append(pending.pop(pid) + t.split("resumed>", 1)[1])
    else:
        joined.append(t)
text = joined
fd_path = re.compile(r'^(-?\d+|AT_FDCWD)(?:<(.*?)>)?$')
lines, rt, execs = [], False, 0
last_open = {}   # fd -> index of the line that opened it
for t in text:
    m = call.match(t)
    if not m:
        continue
    name, args = m.groups()
    if name == "execve":
        execs += 1
        if execs == 2:
            break
        continue
    if name == "sched_getscheduler" or '/task"' in args and name == "newfstatat":
        if not rt:
            lines.append("rt")
            rt = True
        continue
    parts = args.split(", ")
    if name == "sched_setaffinity":
        # The CPU the command is placed on (the first of the set): replay.c
        # moves there too before its exec.
        cpus = re.search(r'\[([0-9 ]+)\]', args)
        if cpus and cpus.group(1).split():
            lines.append(f"c\t{cpus.group(1).split()[0]}")
        continue
    if name in ("fstat", "newfstatat") and (name == "fstat" or '""' in args):
        d = fd_path.match(parts[0])
        if d and d.group(1) in last_open:
            i = last_open.pop(d.group(1))
            if lines[i].startswith("f\t"):
                lines[i] = "F" + lines[i][1:]
        continue
    if name in ("openat", "openat2", "statx", "newfstatat") and len(parts) >= 2 and parts[1].startswith('"'):
        d = fd_path.match(parts[0])
        base = "." if not d or d.group(1) == "AT_FDCWD" else d.group(2)
        rel = parts[1].strip('"')
        if rel.startswith("/"):
            base = "."
        if name in ("statx", "newfstatat"):
            if rel and not (command and rel.endswith("/" + command)):
                lines.append(f"s\t{base}\t{rel}")
            continue
        flags = args
        r = re.search(r'= (\d+)<', t)
        if r:
            last_open[r.group(1)] = len(lines)
        if "O_PATH" in flags:
            lines.append(f"p\t{base}\t{rel}")
        elif "O_DIRECTORY" in flags:
            lines.append(f"d\t{base}\t{rel}")
        else:
            lines.append(f"f\t{base}\t{rel}")
        continue
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
print(f"{out}: {len(lines)} calls", file=sys.stderr)
