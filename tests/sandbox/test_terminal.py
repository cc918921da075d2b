"""The user's terminal around a run: its modes, flow and window size are as they were after
the command, and corral's own lines after the command's output (what was refused, what was
held) are visible and cannot be forged by what the command printed or the names it made.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from .conftest import give_to_test_user, user_prefix
from .sandbox_support import corral_run_on_a_terminal, run

if TYPE_CHECKING:
    from .conftest import Host

pytestmark = pytest.mark.sandbox


def test_the_terminal_is_left_as_it_was(host: Host) -> None:
    # Third review, P5: echo off, exclusive or non-blocking mode set by the command outlived it.
    import pty
    import termios

    main, secondary = pty.openpty()
    try:
        before = termios.tcgetattr(secondary)
        give_to_test_user(host.base)
        done = subprocess.run(
            [*user_prefix(), sys.executable, "-m", "corral", "run", "--",
             "sh", "-c", "stty -echo raw; echo end"],
            cwd=str(host.ws), env=host.env, stdin=secondary, stdout=secondary,
            stderr=subprocess.PIPE, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        after = termios.tcgetattr(secondary)
        assert after[3] & termios.ECHO, "echo stayed off"
        assert after == before
    finally:
        os.close(main)
        os.close(secondary)


def test_stopped_output_and_the_window_size_do_not_outlive_the_run(host: Host) -> None:
    # Fourth review, F9: the command stopped the terminal's output (TCOOFF) and resized it;
    # both stayed, and corral's own writes to the stopped terminal then blocked for good.
    import fcntl
    import pty
    import termios

    main, secondary = pty.openpty()
    try:
        size = fcntl.ioctl(secondary, termios.TIOCGWINSZ, b"\0" * 8)
        give_to_test_user(host.base)
        command = (
            "import fcntl, struct, termios; "
            "fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack('HHHH', 3, 7, 0, 0)); "
            "termios.tcflow(1, termios.TCOOFF)"
        )
        done = subprocess.run(
            [*user_prefix(), sys.executable, "-m", "corral", "run", "--",
             "/usr/bin/python3", "-c", command],
            cwd=str(host.ws), env=host.env, stdin=secondary, stdout=secondary,
            stderr=subprocess.PIPE, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert fcntl.ioctl(secondary, termios.TIOCGWINSZ, b"\0" * 8) == size
        os.set_blocking(secondary, False)
        assert os.write(secondary, b"still flowing\n") > 0  # BlockingIOError when stopped
    finally:
        os.close(main)
        os.close(secondary)


def test_corral_run_explains_what_the_sandbox_refused_after_the_output(host: Host) -> None:
    # Issue 9: `corral run` left the user to guess from "Read-only file system". Its stderr
    # now goes through corral (a pty when it is a terminal: the command still sees one).
    done, seen = corral_run_on_a_terminal(
        host, "sh", "-c", "[ -t 2 ] && echo stderr-is-a-terminal; touch /etc/corral-x"
    )
    text = seen.decode(errors="replace")
    assert done.returncode != 0
    assert b"stderr-is-a-terminal" in done.stdout, (done.stdout, text)
    assert "Read-only file system" in text
    assert "corral: the sandbox refused a write outside the writable area" in text, text
    assert text.index("Read-only file system") < text.index("corral: the sandbox refused")


def test_corrals_lines_after_a_run_are_not_hidden_by_the_commands_terminal_codes(
    host: Host,
) -> None:
    """r7a A9: a command left the terminal drawing concealed text (SGR 8), and corral's
    "held ..." lines after it were invisible."""
    _, seen = corral_run_on_a_terminal(host, "sh", "-c", "printf 'x\\033[8m' >&2; echo y > .envrc")
    assert b"\x1b[8m" in seen and b"corral: held" in seen, seen
    assert seen.rindex(b"\x1b[0m") > seen.rindex(b"\x1b[8m")
    assert seen.rindex(b"\x1b[0m") < seen.index(b"corral: held")


def test_file_names_cannot_forge_corrals_messages(host: Host) -> None:
    # Second review, F7: a held name with a newline printed a line of its own.
    held = run(host, "d=\"$(printf 'x\\ncorral: all changes applied')\"; mkdir \"$d\"; "
               "echo > \"$d/.envrc\"")  # fmt: skip
    assert "x\\x0acorral: all changes applied" in held, held
    assert not any(line.startswith("corral: all changes") for line in held.splitlines())


def test_corral_run_says_what_it_wrote_where_nothing_is_kept(host: Host) -> None:
    """r89t SILENTDISCARD: `echo y > /tmp/out.txt` and `> ~/notes` succeeded, and were gone
    after the run without a word (the sandbox's own /tmp, a private home)."""
    r = host.corral(
        "run", "--", "sh", "-c", "echo x > /tmp/out.txt; echo y > ~/notes; echo z > kept.txt"
    )
    assert r.returncode == 0, r.stderr
    assert "corral: /tmp/out.txt was written in the sandbox's own /tmp" in r.stderr, r.stderr
    assert "corral: ~/notes was written in the sandbox's own" in r.stderr, r.stderr
    assert "kept.txt" not in r.stderr and (host.ws / "kept.txt").read_text() == "z\n"
    assert not (host.home / "notes").exists()
