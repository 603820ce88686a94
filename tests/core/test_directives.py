"""Slurm options hidden in job scripts are found exactly where sbatch reads them
(``holdqueue.core.directives``, after Slurm's ``src/sbatch/opt.c``)."""

from __future__ import annotations

from holdqueue.core.directives import (
    allow_list_problem,
    directives,
    neutralise,
    option_name,
    refused,
    split_arguments,
)

SCRIPT = """#!/bin/sh
# a plain comment
#SBATCH --array=0-999
#SBATCH -o out.txt --mail-type=END # trailing comment
#SLURM --exclusive

srun ./sim
#SBATCH --nodes=64
"""


def test_directives_are_read_until_the_first_command_like_sbatch_does() -> None:
    found = directives(SCRIPT)
    assert [(d.line, d.options) for d in found] == [
        (3, ("--array",)),
        (4, ("-o", "--mail-type")),
        (5, ("--exclusive",)),
    ]  # line 8 comes after `srun`: sbatch never reads it


def test_indented_sbatch_is_a_comment_not_a_directive() -> None:
    assert directives("#!/bin/sh\n  #SBATCH --array=1-9\necho\n") == []


def test_a_command_whose_first_line_is_a_directive_becomes_one_once_wrapped() -> None:
    wrapped = "#!/bin/sh\n#SBATCH --array=0-999\nsleep 1\n"
    assert [d.options for d in refused(wrapped)] == [("--array",)]


def test_arguments_split_with_quotes_escapes_and_comments() -> None:
    assert split_arguments(" --job-name=\"a b\" -o\\ x --x='y z' # --array=1") == [
        "--job-name=a b",
        "-o x",
        "--x=y z",
    ]
    assert [option_name(a) for a in ("--array=0-9", "-a0-9", "-o", "value", "-")] == [
        "--array",
        "-a",
        "-o",
        "",
        "",
    ]


def test_only_allowed_options_pass_and_never_allowed_ones_never_do() -> None:
    script = "#!/bin/sh\n#SBATCH --mail-type=END\n#SBATCH --gid=0\n#SBATCH --array=1-2\nrun\n"
    assert [d.line for d in refused(script)] == [2, 3, 4]
    assert [d.line for d in refused(script, ["--mail-type"])] == [3, 4]
    # a site cannot allow what Queuecast owns: --array stays refused even if listed
    assert [d.line for d in refused(script, ["--mail-type", "--array"])] == [3, 4]


def test_neutralise_turns_refused_directives_into_comments_and_keeps_the_rest() -> None:
    script = "#!/bin/sh\n#SBATCH --mail-type=END\n#SBATCH --array=1-2\nrun\n"
    out = neutralise(script, ["--mail-type"])
    assert out == "#!/bin/sh\n#SBATCH --mail-type=END\n# #SBATCH --array=1-2\nrun\n"
    assert refused(out, ["--mail-type"]) == []
    assert neutralise("#!/bin/sh\nrun\n") == "#!/bin/sh\nrun\n"


def test_an_allow_list_may_not_name_queuecasts_options_or_abbreviate_them() -> None:
    assert allow_list_problem(["--mail-type", "--mail-user", "-o"]) is None
    assert "set by Queuecast" in allow_list_problem(["--array"])
    assert "set by Queuecast" in allow_list_problem(["--arr"])  # sbatch takes prefixes
    assert "set by Queuecast" in allow_list_problem(["--uid"])
    assert "not an option name" in allow_list_problem(["--mail-type=END"])
    assert "not an option name" in allow_list_problem(["mail"])
