"""The page cache around timed runs, for benchmark scripts that write files and then time reads
of them: wait for writeback to end, and read a just-written file back as a user finds it."""

import os
import subprocess
import time


def settle():
    """Waits (up to two minutes) until what was written has reached the disk, so that writeback
    does not run beside the reads that follow."""
    subprocess.run(["sync"], check=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with open("/proc/meminfo") as f:
            dirty = next(int(line.split()[1]) for line in f if line.startswith("Dirty:"))
        if dirty < 64 * 1024:  # kB
            return
        time.sleep(1)


def recache(paths):
    """Evicts `paths` from the page cache and reads them back whole. A file just written (the
    base copied into the store, the compacted file) sits in the cache as its writes left it, and
    on this VM a 2 GB file copied by `cp` then mapped 20 % slower than the same file read back
    (MEASUREMENTS.md, *Versions: appended days read in place*): both stores are read back, as a
    reader finds files that were not written just before."""
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            while os.read(fd, 1 << 20):
                pass
        finally:
            os.close(fd)
