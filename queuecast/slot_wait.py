"""Wait for a free run slot, then become the run: ``python slot_wait.py FOLDER N -- CMD...``.

Run as a file (stdlib only, never imported as ``queuecast.slot_wait`` by the web process,
so it does not load Django): a run queued behind ``N`` others waits here in a ~10 MB
interpreter instead of a full Django process. It takes one of the ``flock``-ed files
``FOLDER/slot-0 .. slot-(N-1)``, then ``exec``s ``CMD`` with that file still open, so the
run holds the slot until it ends, however it ends (the kernel drops the lock with it).
"""

from __future__ import annotations

import fcntl
import os
import sys
import time


def take_slot(folder: str, slots: int, poll_s: float = 1.0) -> int:
    """An open descriptor holding one slot's lock (waits until one is free)."""
    os.makedirs(folder, mode=0o700, exist_ok=True)
    while True:
        for k in range(slots):
            fd = os.open(os.path.join(folder, f"slot-{k}"), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            return fd
        time.sleep(poll_s)


def main(argv: list[str]) -> None:
    if len(argv) < 4 or argv[2] != "--":
        sys.exit("usage: slot_wait.py FOLDER SLOTS -- COMMAND [ARG...]")
    fd = take_slot(argv[0], int(argv[1]))
    os.set_inheritable(fd, True)  # the lock goes with the run across exec
    os.execv(argv[3], argv[3:])


if __name__ == "__main__":
    main(sys.argv[1:])
