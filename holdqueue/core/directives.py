"""Slurm options hidden in a job script: find them, check them against a site's allow-list,
and neutralise the rest.

``sbatch`` reads options from the script itself (``sbatch(1)``, "The batch script may
contain options preceded with #SBATCH before any executable commands"). Slurm's own parser
(``src/sbatch/opt.c``, ``_opt_batch_script``) takes every line that *starts* with
``#SBATCH`` or ``#SLURM`` as options until the first line whose first non-blank character
is not ``#``; the rest of such a line is split like a command line (quotes group, a
backslash escapes, an unquoted ``#`` ends it). So ``#SBATCH --array=0-999`` in a user's
script turns one job into a thousand, and a ``command`` whose first line is ``#SBATCH ...``
becomes a directive once Queuecast wraps it in ``#!/bin/sh``.

``#PBS`` and ``#BSUB`` lines are read too unless ``--ignore-pbs`` is given: the Slurm
backend always passes it, so only the two magic words above matter here.

Queuecast puts its own options on the command line (they win over the script's) and lets
through only the options a site lists in ``allowed_directives``; a few can never be allowed
(:data:`NEVER_ALLOWED`) because they change the job's size, count, identity or timing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MAGIC_WORDS = ("#SBATCH", "#SLURM")

# Set by Queuecast on the command line, or changing what Queuecast decided (size, count,
# time, identity, accounting, start): never taken from a user's script.
NEVER_ALLOWED = frozenset(
    {
        "--ntasks", "-n", "--time", "-t", "--comment", "--job-name", "-J", "--chdir", "-D",
        "--partition", "-p", "--export", "--export-file", "--get-user-env", "--uid", "--gid",
        "--ignore-pbs", "--parsable", "--wrap", "--array", "-a", "--nodes", "-N",
        "--cpus-per-task", "-c", "--ntasks-per-node", "--ntasks-per-core",
        "--ntasks-per-socket", "--ntasks-per-gpu", "--cpus-per-gpu", "--exclusive",
        "--oversubscribe", "-s", "--account", "-A", "--qos", "-q", "--reservation",
        "--dependency", "-d", "--hold", "-H", "--begin", "-b", "--deadline", "--priority",
        "--nice", "--clusters", "-M", "--time-min", "--het-group", "--container", "--batch",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Directive:
    """One line ``sbatch`` would read as options: its number (1-based), text and options."""

    line: int
    text: str
    options: tuple[str, ...]


def split_arguments(rest: str) -> list[str]:
    """The arguments of a directive line, split the way ``sbatch`` splits them."""
    out: list[str] = []
    word: list[str] = []
    started = escaped = False
    quote = ""
    for ch in rest:
        if escaped:
            word.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = started = True
        elif quote:
            if ch == quote:
                quote = ""
            else:
                word.append(ch)
        elif ch in "\"'":
            quote, started = ch, True
        elif ch == "#":
            break  # an unquoted # starts a comment
        elif ch.isspace():
            if started:
                out.append("".join(word))
                word, started = [], False
        else:
            word.append(ch)
            started = True
    if started:
        out.append("".join(word))
    return out


def option_name(argument: str) -> str:
    """``--array=0-9`` -> ``--array``; ``-a0-9`` -> ``-a``; a value -> ''."""
    if argument.startswith("--"):
        return argument.split("=", 1)[0]
    if argument.startswith("-") and len(argument) > 1:
        return argument[:2]
    return ""


def directives(script: str) -> list[Directive]:
    """The lines of ``script`` that ``sbatch`` reads as options (see the module docstring)."""
    found = []
    for number, line in enumerate(script.split("\n"), start=1):
        magic = next((m for m in MAGIC_WORDS if line.startswith(m)), None)
        if magic is None:
            stripped = line.lstrip()
            if stripped and not stripped.startswith("#"):
                break  # the first command: sbatch stops reading options here
            continue
        names = tuple(n for n in map(option_name, split_arguments(line[len(magic) :])) if n)
        found.append(Directive(number, line.rstrip("\r"), names))
    return found


def refused(script: str, allowed: Iterable[str] = ()) -> list[Directive]:
    """The directives carrying an option that is not in ``allowed`` (or never allowed)."""
    ok = set(allowed) - NEVER_ALLOWED
    return [d for d in directives(script) if any(o not in ok for o in d.options)]


def neutralise(script: str, allowed: Iterable[str] = ()) -> str:
    """``script`` with every refused directive turned into a plain comment (``# #SBATCH``)."""
    bad = {d.line for d in refused(script, allowed)}
    if not bad:
        return script
    lines = script.split("\n")
    for number in bad:
        lines[number - 1] = "# " + lines[number - 1]
    return "\n".join(lines)


def allow_list_problem(names: Iterable[str]) -> str | None:
    """Why a site's ``allowed_directives`` cannot be used, or None.

    An entry must be an option name (``--mail-type``, ``-o``), and neither an option in
    :data:`NEVER_ALLOWED` nor an abbreviation of one (``sbatch`` accepts unambiguous
    prefixes of long options, so allowing ``--arr`` would allow ``--array``).
    """
    for name in names:
        if not isinstance(name, str) or option_name(name) != name:
            return f"{name!r} is not an option name such as '--mail-type' or '-o'"
        if name in NEVER_ALLOWED or (
            name.startswith("--") and any(n.startswith(name) for n in NEVER_ALLOWED)
        ):
            return f"{name} is set by Queuecast or changes the job's size, time or identity"
    return None
