#!/usr/bin/env python3
"""Runs a command and prints, as one JSON line, its wall time and what it wrote: write_bytes
(bytes the process caused to be sent to storage) and wchar (bytes passed to write calls) from
/proc/PID/io, read after the process exited but before it is reaped (waitid with WNOWAIT).

    write_bytes.py colonnade import day.csv --snapshot s/quotes.snapshot
"""
import json, os, sys, time

def main():
    argv = sys.argv[1:]
    if not argv:
        sys.exit("usage: write_bytes.py COMMAND [ARG ...]")
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    wall = time.monotonic() - start
    io = {}
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            k, v = line.split(":")
            io[k.strip()] = int(v)
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"wall_ms": round(wall * 1000, 1), "write_bytes": io.get("write_bytes"), "wchar": io.get("wchar"),
                      "exit": os.waitstatus_to_exitcode(status), "command": " ".join(argv)}))

main()
