"""Wait for a free run slot, then become the run: ``python slot_wait.py FOLDER N -- CMD...``.

Run as a file (stdlib only, never imported as ``queuecast.slot_wait`` by the web process,
so it does not load Django): a run queued behind ``N`` others waits here in a ~10 MB
interpreter instead of a full Django process. It takes one of the ``flock``-ed files
``FOLDER/slot-0 .. slot-(N-1)``, then ``exec``s ``CMD`` with that file still open, so the
run holds the slot until it ends, however it ends (the kernel drops the lock with it).

Waiters are served in the order they arrived: each leaves a ticket ``FOLDER/queue/<ns>-<pid>``
and only the oldest ticket whose process is alive may take a free slot (a dead waiter's
ticket is removed by the next one that looks).
"""

from __future__ import annotations

import fcntl
import os
import sys
import time


def take_slot(folder: str, slots: int, poll_s: float = 0.5) -> int:
    """An open descriptor holding one slot's lock (waits its turn until one is free)."""
    queue = os.path.join(folder, "queue")
    os.makedirs(queue, mode=0o700, exist_ok=True)
    ticket = os.path.join(queue, f"{time.time_ns():020d}-{os.getpid()}")
    open(ticket, "w").close()
    try:
        while True:
            if first_in_line(queue, ticket):
                fd = try_slots(folder, slots)
                if fd is not None:
                    return fd
            time.sleep(poll_s)
    finally:
        os.unlink(ticket)


def first_in_line(queue: str, ticket: str) -> bool:
    """Whether ``ticket`` is the oldest ticket of a live process (dead ones are removed)."""
    for name in sorted(os.listdir(queue)):
        path = os.path.join(queue, name)
        if path == ticket:
            return True
        if pid_exists(int(name.rsplit("-", 1)[1])):
            return False
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass  # another waiter removed it first
    return True


def pid_exists(pid: int) -> bool:
    """Whether a process ``pid`` exists on this host (another user's counts as existing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def try_slots(folder: str, slots: int) -> int | None:
    for k in range(slots):
        fd = os.open(os.path.join(folder, f"slot-{k}"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return fd
    return None


def main(argv: list[str]) -> None:
    if len(argv) < 4 or argv[2] != "--":
        sys.exit("usage: slot_wait.py FOLDER SLOTS -- COMMAND [ARG...]")
    fd = take_slot(argv[0], int(argv[1]))
    os.set_inheritable(fd, True)  # the lock goes with the run across exec
    os.execv(argv[3], argv[3:])


if __name__ == "__main__":
    main(sys.argv[1:])
