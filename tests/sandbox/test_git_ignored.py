"""What git ignores is held (issue 7: sandbox.ignored_files, changes/ignored_rules.py).

Review rounds r75a to r81b kept finding ways a git hook or a build runs a file a command
wrote where `git status` shows nothing: the node_modules a hook's npx runs, a Makefile's
`-include` of a generated file, an in-source build's config.h. Each fix read one more way;
these tests plant through ways no rule reads by name, and check that the host never gets the
file while git would not show it, and that what `git status` does show still lands.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .sandbox_support import run
from .test_change_sets import held_ids

if TYPE_CHECKING:
    from .conftest import Host

# the standard repository ignores .venv/, build/ and __pycache__/ (conftest._make_repo)
IGNORES = ".venv/\nbuild/\n__pycache__/\nnode_modules/\n*.log\ntools/local.d/\n"


def _ignore(host: Host, text: str = IGNORES) -> None:
    (host.ws / ".gitignore").write_text(text)
    host.git("add", ".gitignore")
    host.git("commit", "-q", "-m", "ignores")


def _submodule(host: Host, name: str, ignore: str = "") -> None:
    """A repository of one file `name` ("f\\n") added as the submodule `lib`, committed;
    `ignore`: its submodule.lib.ignore in .gitmodules."""
    lib = host.base / "lib"
    lib.mkdir()
    host.git("init", "-q", str(lib), cwd=host.base)
    (lib / name).write_text("f\n")
    host.git("add", "-A", cwd=lib)
    host.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "f", cwd=lib)
    host.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    if ignore:
        host.git("config", "-f", ".gitmodules", "submodule.lib.ignore", ignore)
    host.git("commit", "-qam", "sub")


def _status(host: Host) -> str:
    return host.git("status", "--porcelain")


def test_what_git_ignores_is_held_and_what_status_shows_lands(host: Host) -> None:
    _ignore(host)
    (host.ws / "build").mkdir()
    (host.ws / "build" / "old.o").write_text("old\n")
    stderr = run(
        host,
        "mkdir -p node_modules/lint build/gen\n"
        "echo 'planted' > node_modules/lint/index.js\n"
        "echo 'planted' > build/gen/config.h\n"
        "echo 'log' > run.log\n"
        "echo 'more' >> README.md\n"  # tracked: `git status` shows it
        "echo 'new' > notes.txt\n",  # untracked, not ignored: `?? notes.txt`
    )
    assert not (host.ws / "node_modules").exists()
    assert not (host.ws / "build" / "gen").exists()
    assert not (host.ws / "run.log").exists()
    assert (host.ws / "README.md").read_text().endswith("more\n")
    assert (host.ws / "notes.txt").read_text() == "new\n"
    assert "what git ignores" in stderr, stderr
    # named as whole directories to apply, not file by file
    (change_id,) = held_ids(host)
    assert f"apply {change_id} " in stderr, stderr
    hint = stderr.split(f"apply {change_id} ", 1)[1].split(";", 1)[0]
    assert sorted(hint.split()) == sorted(
        str(host.ws / n) for n in ("build", "node_modules", "run.log")
    ), hint
    # the user applies what their command built
    done = host.corral("apply", change_id, str(host.ws / "node_modules"))
    assert done.returncode == 0, done.stderr
    assert (host.ws / "node_modules" / "lint" / "index.js").read_text() == "planted\n"
    assert not (host.ws / "build" / "gen").exists()


def test_a_hook_running_an_ignored_script_by_a_way_no_rule_reads(host: Host) -> None:
    """The class: a hook reaches an ignored file through words corral does not read (here
    a tracked Makefile's recipe, run by the hook's `make`, runs each local script); the
    file a command plants there never reaches the host, and the user's own commit runs
    only what they had."""
    _ignore(host)
    (host.ws / "Makefile").write_text("lint:\n\tfor f in tools/local.d/*.sh; do sh $$f; done\n")
    host.git("add", "Makefile")
    host.git("commit", "-q", "-m", "lint")
    hook = host.ws / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexec make -s lint\n")
    hook.chmod(0o755)
    (host.ws / "tools" / "local.d").mkdir(parents=True)
    (host.ws / "tools" / "local.d" / "mine.sh").write_text("true\n")
    pwned = host.base / "PWNED"
    run(
        host,
        f"echo 'touch {pwned}' > tools/local.d/zz.sh\n"
        f"echo 'touch {pwned}' >> tools/local.d/mine.sh\n"
        "echo x >> README.md\n",
    )
    assert not (host.ws / "tools" / "local.d" / "zz.sh").exists()
    assert (host.ws / "tools" / "local.d" / "mine.sh").read_text() == "true\n"
    assert _status(host) == " M README.md\n"
    host.git("commit", "-q", "-am", "user")
    assert not pwned.exists()


def test_a_new_gitignore_hides_nothing_from_review(host: Host) -> None:
    """A command's own .gitignore line would hide its file from `git status`: read with the
    change set's ignore files as well as the host's."""
    stderr = run(
        host,
        "printf 'scripts/local.sh\\n' >> .gitignore\n"
        "mkdir -p scripts sub\n"
        "echo 'touch /tmp/x' > scripts/local.sh\n"
        "printf '*.sh\\n' > sub/.gitignore\n"
        "echo 'touch /tmp/x' > sub/run.sh\n",
    )
    assert not (host.ws / "scripts" / "local.sh").exists()
    assert not (host.ws / "sub" / "run.sh").exists()
    assert (host.ws / "sub" / ".gitignore").exists()  # (the ignore files themselves show)
    assert "scripts/local.sh" in stderr and "sub/run.sh" in stderr, stderr


def test_an_index_entry_git_does_not_show_changes_of_is_held(host: Host) -> None:
    """assume-unchanged and skip-worktree: tracked, but `git status` shows no change."""
    (host.ws / "conf.sh").write_text("true\n")
    (host.ws / "skip.sh").write_text("true\n")
    host.git("add", "conf.sh", "skip.sh")
    host.git("commit", "-q", "-m", "scripts")
    host.git("update-index", "--assume-unchanged", "conf.sh")
    host.git("update-index", "--skip-worktree", "skip.sh")
    stderr = run(host, "echo planted >> conf.sh\necho planted >> skip.sh\necho x >> README.md\n")
    assert (host.ws / "conf.sh").read_text() == "true\n"
    assert (host.ws / "skip.sh").read_text() == "true\n"
    assert "assume-unchanged or skip-worktree" in stderr, stderr
    assert (host.ws / "README.md").read_text().endswith("x\n")


def test_tracked_files_deletions_and_data_caches_pass(host: Host) -> None:
    _ignore(host)
    (host.ws / "build").mkdir()
    (host.ws / "build" / "kept.txt").write_text("tracked in an ignored directory\n")
    host.git("add", "-f", "build/kept.txt")
    host.git("commit", "-q", "-m", "forced")
    (host.ws / "old.log").write_text("old\n")
    run(
        host,
        "echo more >> build/kept.txt\n"  # tracked: `git status` shows it
        "rm old.log\n"  # deleting: it goes to the undo journal
        "mkdir -p .pytest_cache/v/cache && echo '{}' > .pytest_cache/v/cache/lastfailed\n",
    )
    assert (host.ws / "build" / "kept.txt").read_text().endswith("more\n")
    assert not (host.ws / "old.log").exists()
    assert (host.ws / ".pytest_cache" / "v" / "cache" / "lastfailed").exists()
    assert held_ids(host) == []


def test_the_rules_of_the_repository_around_the_workspace_and_the_global_excludes(
    host: Host,
) -> None:
    """A workspace below its repository's top (a monorepo's package), a nested ignore file,
    a negation, and core.excludesFile."""
    _ignore(host, "*.gen\n!keep.gen\n")
    package = host.ws / "pkg"
    (package / "src").mkdir(parents=True)
    (package / "src" / ".gitignore").write_text("/local/\n")
    excludes = host.home / ".config" / "git" / "ignore"
    excludes.parent.mkdir(parents=True, exist_ok=True)
    excludes.write_text("*.secretbuild\n")
    host.git("add", "-A")
    host.git("commit", "-q", "-m", "package")
    done = host.sh(
        "mkdir -p src/local && echo x > src/local/a.sh && echo x > a.gen && echo x > keep.gen"
        " && echo x > b.secretbuild && echo x > src/local.sh",
        None,
        cwd=package,
    )
    assert done.returncode == 0, done.stderr
    for held in ("src/local", "a.gen", "b.secretbuild"):
        assert not (package / held).exists(), (held, done.stderr)
    for landed in ("keep.gen", "src/local.sh"):
        assert (package / landed).exists(), (landed, done.stderr)


def test_the_user_can_choose_to_apply_ignored_files(host: Host) -> None:
    _ignore(host)
    config = host.home / ".config" / "corral" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[sandbox]\nignored_files = "apply"\n')
    run(host, "mkdir -p node_modules/x && echo 1 > node_modules/x/i.js && echo l > a.log\n")
    assert (host.ws / "node_modules" / "x" / "i.js").exists()
    assert (host.ws / "a.log").exists()


@pytest.mark.parametrize("layout", ["worktree", "submodule"])
def test_a_work_tree_whose_git_is_a_file(host: Host, layout: str) -> None:
    """A linked worktree or a submodule: its `.git` names the git directory, whose
    info/exclude (the common one, for a worktree) is read too."""
    _ignore(host)
    if layout == "worktree":
        host.git("worktree", "add", "-q", str(host.ws / "wt"), "-b", "side")
        exclude = host.ws / ".git" / "info" / "exclude"
        tree = host.ws / "wt"
    else:
        _submodule(host, "f.txt")
        exclude = host.ws / ".git" / "modules" / "lib" / "info" / "exclude"
        tree = host.ws / "lib"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    exclude.write_text("*.excluded\n")
    done = host.sh("echo x > a.excluded && echo x > shown.txt", None, cwd=tree)
    assert done.returncode == 0, done.stderr
    assert not (tree / "a.excluded").exists(), done.stderr
    assert (tree / "shown.txt").exists(), done.stderr
    # (git agrees that it ignores it: check-ignore fails on a path it does not)
    assert host.git("check-ignore", "a.excluded", cwd=tree) == "a.excluded\n"


def test_a_repository_inside_what_git_ignores_is_held_whole(host: Host) -> None:
    """r82a NESTIGN, r82b NESTEDIGNORED: a clone in an ignored `vendor/` (pip's
    `.venv/src/pkg`) was judged by its own index: a change to a file it tracks passed, and
    the outer `git status` showed nothing."""
    _ignore(host, "vendor/\n")
    mini = _nested(host, "vendor/mini")
    stderr = run(host, "echo planted >> vendor/mini/kept.txt\necho x >> README.md\n")
    assert (mini / "kept.txt").read_text() == "kept\n", stderr
    assert "a repository inside what git ignores" in host.corral("changes").stdout
    assert (host.ws / "README.md").read_text().endswith("x\n")


def test_a_submodule_whose_changes_the_superproject_hides_is_held(host: Host) -> None:
    """r82a SUBIGNORE, r82b SUBMODDIRTY: `ignore = dirty` in .gitmodules; `git status`
    said the tree was clean while a tracked file of the submodule was changed."""
    _submodule(host, "f.c", "dirty")
    run(host, "echo planted >> lib/f.c\n")
    assert (host.ws / "lib" / "f.c").read_text() == "f\n"
    assert host.git("status", "--porcelain") == ""  # (what git would have shown)


@pytest.mark.parametrize(
    "ignore_file",
    ["\ufeffpayload.sh\n", "payload.sh\0junk\n"],
    ids=["bom", "nul"],
)
def test_an_ignore_file_is_read_as_git_reads_it(host: Host, ignore_file: str) -> None:
    """r82a SELFIGN, IGNBOM: git skips a byte-order mark and ends a line at a NUL; a
    command's own .gitignore so written hid its payload from `git status` and corral read
    no pattern in it."""
    q_text = ignore_file.encode().hex()
    run(host, f"printf '{q_text}' | xxd -r -p > sub/.gitignore\necho x > sub/payload.sh\n")
    ignored = host.git("check-ignore", "--no-index", "sub/payload.sh", check=False)
    assert ignored == "sub/payload.sh\n"  # (git agrees)
    assert not (host.ws / "sub" / "payload.sh").exists()


@pytest.mark.parametrize(
    "setting",
    ["core.ignoreCase", "status.showUntrackedFiles", "core.splitIndex"],
)
def test_settings_that_change_what_git_status_shows(host: Host, setting: str) -> None:
    """r82a IGNCASE (`Build/` ignores `build/`), UNTRACKEDDIR and r82b NOSHOWUNTRACKED (no
    untracked file ever shows), SPLITSW and SPLITUNSHOWN (a split index corral cannot read:
    an assume-unchanged file's change passed)."""
    _ignore(host, "Build/\n")
    (host.ws / "conf.h").write_text("ok\n")
    host.git("add", "conf.h")
    host.git("commit", "-qm", "conf")
    if setting == "core.ignoreCase":
        host.git("config", "core.ignoreCase", "true")
        body, planted = "mkdir -p build && echo x > build/gen.mk\n", "build/gen.mk"
    elif setting == "status.showUntrackedFiles":
        host.git("config", "status.showUntrackedFiles", "no")
        body, planted = "echo x > local.mk\n", "local.mk"
    else:
        host.git("config", "core.splitIndex", "true")
        host.git("update-index", "--split-index")
        host.git("update-index", "--assume-unchanged", "conf.h")
        body, planted = "echo planted > conf.h\n", "conf.h"
    stderr = run(host, body)
    assert not (host.ws / planted).exists() or (host.ws / planted).read_text() == "ok\n", stderr


def test_info_exclude_wins_over_core_excludes_file_and_every_one_is_read(host: Host) -> None:
    """r82b EXCLUDEPREC (git reads info/exclude after core.excludesFile), r82a EXCLINC (an
    includeIf whose condition does not hold named another excludes file: corral took it
    in place of the default one git reads), EXCLREL (a relative one is the work tree's)."""
    (host.ws / ".git" / "info").mkdir(exist_ok=True)
    (host.ws / ".git" / "info" / "exclude").write_text("*.gen\n")
    (host.ws / "tools").mkdir()
    (host.ws / "tools" / "ignore").write_text("!*.gen\n*.rel\n")
    host.git("config", "core.excludesFile", "tools/ignore")
    default = host.home / ".config" / "git" / "ignore"
    default.parent.mkdir(parents=True, exist_ok=True)
    default.write_text("*.def\n")
    (host.home / ".gitconfig").write_text('[includeIf "gitdir:/nowhere/"]\n\tpath = other.inc\n')
    (host.home / "other.inc").write_text("[core]\n\texcludesFile = /dev/null\n")
    done = host.sh(
        "echo x > a.gen && echo x > b.rel && echo x > shown.txt", None, cwd=host.ws / "sub"
    )
    assert done.returncode == 0, done.stderr
    for held in ("sub/a.gen", "sub/b.rel"):
        assert not (host.ws / held).exists(), (held, done.stderr)
    assert (host.ws / "sub" / "shown.txt").exists(), done.stderr


def test_a_pth_named_like_coverage_data_is_held(host: Host) -> None:
    """r82a CACHEPTH, r82b COVPTH: any path part starting `.coverage.` was let through,
    `site-packages/.coverage.x.pth` too, which Python runs at every start."""
    site = ".venv/lib/python3.11/site-packages"  # (git ignores .venv/; the user made it)
    (host.ws / site).mkdir(parents=True)
    run(host, f"mkdir -p {site} && echo 'import os' > {site}/.coverage.x.pth\n")
    assert not (host.ws / site / ".coverage.x.pth").exists()


def _nested(host: Host, name: str) -> Path:
    """A clone nested in the workspace's repository, untracked there, with one commit."""
    inner = host.ws / name
    inner.mkdir(parents=True)
    host.git("init", "-q", str(inner))
    (inner / "kept.txt").write_text("kept\n")
    host.git("add", "kept.txt", cwd=inner)
    host.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "k", cwd=inner)
    return inner


@pytest.mark.parametrize("case", ["worktree-config", "nested-unlisted", "nested-ignored-by-outer",
                                  "case-twin", "cache-source", "many-stars"])  # fmt: skip
def test_what_the_first_fixes_missed(host: Host, case: str) -> None:
    """r83a: WTCFG (status.showUntrackedFiles = no in a work tree's config.worktree), NESTSU
    (a nested clone's new file, where the outer repository lists no untracked file), NESTTR
    (one the outer repository's .gitignore ignores), ICASETRACK (core.ignoreCase: git takes
    a new style.sh for the tracked Style.sh), CACHEGLOB (a source file in a cache directory,
    which a build's recursive glob compiles), REDOS (a pattern of many `*` took minutes)."""
    if case == "worktree-config":
        host.git("config", "extensions.worktreeConfig", "true")
        host.git("config", "--worktree", "status.showUntrackedFiles", "no")
        planted = "local.sh"
    elif case == "nested-unlisted":
        _nested(host, "ext")
        host.git("config", "status.showUntrackedFiles", "no")
        planted = "ext/hook_ext.sh"
    elif case == "nested-ignored-by-outer":
        _ignore(host, "*.local\n")
        _nested(host, "ext")
        planted = "ext/hook_ext.local"
    elif case == "case-twin":
        (host.ws / "checks").mkdir()
        (host.ws / "checks" / "Style.sh").write_text("true\n")
        host.git("add", "checks")
        host.git("commit", "-qm", "checks")
        host.git("config", "core.ignoreCase", "true")
        planted = "checks/style.sh"
    elif case == "cache-source":
        _ignore(host, ".pytest_cache/\n")
        planted = "src/.pytest_cache/r.c"
    else:
        _ignore(host, "*a*a*a*a*a*a*a*b\n")
        planted = "a" * 120
    cache = ".pytest_cache/v/cache"
    run(host, f"mkdir -p $(dirname {planted}) && echo planted > {planted}\n"
              f"mkdir -p {cache} && echo '{{}}' > {cache}/lastfailed\n")  # fmt: skip
    assert not (host.ws / planted).exists(), case
    if case == "cache-source":  # (its data still passes)
        assert (host.ws / ".pytest_cache" / "v" / "cache" / "lastfailed").exists()


def test_a_submodule_never_checked_out_and_a_caches_non_data_are_held(host: Host) -> None:
    """r84b UNINITSUB (a file in the empty folder of a deinitialized submodule: git lists
    nothing there, and CMake's `if(EXISTS extern/lib/CMakeLists.txt)` ran it) and CACHEMD
    (a MyST notebook in a new `docs/.hypothesis/` with a `.gitignore` of `*`: Sphinx read
    it); the files pytest, mypy and ruff write in their caches still pass."""
    _submodule(host, "f.c")
    host.git("submodule", "deinit", "-q", "-f", "lib")
    data = (".pytest_cache/v/cache/lastfailed", ".mypy_cache/3.11/os.meta.json",
            ".ruff_cache/0.4.4/1234567", ".mypy_cache/.gitignore")  # fmt: skip
    run(
        host,
        "echo 'project(x)' > lib/CMakeLists.txt\n"
        "mkdir -p docs/.hypothesis && echo '*' > docs/.hypothesis/.gitignore\n"
        "echo '```{code-cell}' > docs/.hypothesis/examples.md\n"
        + "".join(f"mkdir -p $(dirname {d}) && echo '*' > {d}\n" for d in data),
    )
    assert not (host.ws / "lib" / "CMakeLists.txt").exists()
    assert not (host.ws / "docs" / ".hypothesis" / "examples.md").exists()
    for name in data:
        assert (host.ws / name).exists(), name


def test_round_r84a(host: Host) -> None:
    """r84a HOOKNPXABOVE (a hook's `npx lint-staged` found a node_modules planted in the
    folder workspace above its repository), SUBNOSHOW (with status.showUntrackedFiles = no
    the superproject hides a checked-out submodule's new file) and HOMEREPO (a dotfiles
    repository around the workspace, ignoring `*`, had every change of every run held)."""
    hook = host.ws / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexec npx --no-install lint-staged\n")
    hook.chmod(0o755)
    done = host.sh(
        "mkdir -p node_modules/.bin && echo 'touch /tmp/x' > node_modules/.bin/lint-staged",
        None, cwd=host.work,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not (host.work / "node_modules").exists(), done.stderr
    hook.unlink()  # (never run here: npx would ask the registry)
    _submodule(host, "f.c")
    run(host, "echo mine >> lib/f.c\n")  # (a checked-out submodule's change shows, and lands)
    assert (host.ws / "lib" / "f.c").read_text() == "f\nmine\n"
    host.git("config", "status.showUntrackedFiles", "no")
    run(host, "echo planted > lib/new.sh\n")
    assert not (host.ws / "lib" / "new.sh").exists()
    host.git("config", "--unset", "status.showUntrackedFiles")
    host.git("init", "-q", str(host.work), cwd=host.base)
    (host.work / ".gitignore").write_text("*\n")
    run(host, "echo mine >> README.md && echo new > notes.txt\n")
    assert (host.ws / "notes.txt").exists()
    assert (host.ws / "README.md").read_text().endswith("mine\n")


PYTEST_README = (
    "# pytest cache directory #\n\nThis directory contains data from the pytest's cache "
    "plugin,\nwhich provides the `--lf` and `--ff` options, as well as the `cache` fixture."
    "\n\n**Do not** commit this to version control.\n\nSee [the docs](https://docs.pytest.org"
    "/en/stable/how-to/cache.html) for more information.\n"
)


CACHES = (".mypy_cache", ".ruff_cache", "docs/.pytest_cache", "src/.pytest_cache",
          "y/.mypy_cache", "z/.ruff_cache")  # fmt: skip


def test_a_caches_top_files_pass_with_their_tools_text_only(host: Host) -> None:
    """r85a CACHEREADME (a `.pytest_cache/README.md` or `.gitignore` of any text passed at
    any depth: a MyST page Sphinx reads, a `!` line) and r85b STUBLIST (`missing_stubs`,
    the names `mypy --install-types` hands to pip: `-e ./evil` ran its setup at the user's
    next install). What the tools write there themselves still passes."""
    (host.base / "README.md").write_text(PYTEST_README)
    data = {
        ".pytest_cache/README.md": PYTEST_README,
        ".pytest_cache/.gitignore": "# Created by pytest automatically.\n*\n",
        ".mypy_cache/missing_stubs": "types-PyYAML\ntypes-requests\n",
        ".ruff_cache/CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55",
        # (each cache's `*`, which hides the files below from `git status`)
        **{f"{d}/.gitignore": "*\n" for d in CACHES},
    }
    planted = {
        "docs/.pytest_cache/README.md": "---\nfile_format: mystnb\n---\n```{code-cell}\n",
        "src/.pytest_cache/README.md": PYTEST_README + "```{eval-rst}\n",
        "x/.mypy_cache/.gitignore": "*\n!*.c\n",
        ".mypy_cache/missing_stubs.new": "types-x\n",
        "y/.mypy_cache/missing_stubs": "types-x\n-e ./evil\n",
        "z/.ruff_cache/CACHEDIR.TAG": "Signature: 0\n",
    }
    body = "".join(
        f"mkdir -p $(dirname {p}) && printf %s {shlex.quote(t)} > {p}\n"
        for p, t in {**data, **planted}.items()
    )
    run(host, body)
    for name, text in data.items():
        assert (host.ws / name).read_text() == text, name
    for name in planted:
        assert not (host.ws / name).exists(), name


def test_a_workspace_inside_a_submodule_its_superproject_hides(host: Host) -> None:
    """r85a SUBWS: with the workspace inside a submodule that the superproject's `ignore =
    dirty` hides, the user's `git status` in the superproject showed none of its changes."""
    _submodule(host, "f.c", "dirty")
    done = host.sh("echo planted >> f.c && echo new > new.sh", None, cwd=host.ws / "lib")
    assert done.returncode == 0, done.stderr
    assert (host.ws / "lib" / "f.c").read_text() == "f\n", done.stderr
    assert not (host.ws / "lib" / "new.sh").exists(), done.stderr
    # (named by the reason, not as "what git ignores", which ignores nothing there, r87a
    # SUBWHY)
    assert f"held {host.ws / 'lib'}: a submodule whose changes its superproject" in done.stderr
    assert host.git("status", "--porcelain") == ""  # (what git would have shown)


def test_a_pattern_takes_bytes_as_gits_does(host: Host) -> None:
    """r86a BYTEGLOB: git's `?` takes one byte, and `t??/` hides `té/` (three bytes); read
    by characters, a conftest.py there that pytest then ran was applied unseen."""
    planted = "tests/t\u00e9/conftest.py"
    run(host, f"printf 't??/\\n' >> .gitignore && mkdir -p tests/t\u00e9 && echo x > {planted}\n")
    assert not (host.ws / planted).exists()
    assert (host.ws / ".gitignore").read_text().endswith("t??/\n")  # (shows, and lands)


def test_a_file_the_command_untracks_is_judged_as_untracked(host: Host) -> None:
    """r86a UNTRACKHIDE: `git rm --cached build/gen.mk` (a tracked file in an ignored
    directory) and a new text for it in the same run: judged tracked by the host's index,
    it landed, and `git status` showed only its removal from the index; make ran it."""
    _ignore(host, "build/\n")
    (host.ws / "build").mkdir(exist_ok=True)
    (host.ws / "build" / "gen.mk").write_text("all:\n")
    host.git("add", "-f", "build/gen.mk")
    host.git("commit", "-qm", "gen")
    run(host, "git rm -q --cached build/gen.mk && echo 'planted' > build/gen.mk\n")
    assert (host.ws / "build" / "gen.mk").read_text() == "all:\n"


def test_an_optional_excludes_file_is_read(host: Host) -> None:
    """r86a OPTIONALPATH: `core.excludesFile = :(optional)<path>` (git 2.52: the file where
    it exists) was read as a file of that name, and what it ignores passed."""
    excludes = host.base / "excludes"
    excludes.write_text("*.local\n")
    host.git("config", "core.excludesFile", f":(optional){excludes}")
    run(host, "echo planted > run.local\n")
    assert not (host.ws / "run.local").exists()


def test_an_ignored_directory_with_a_parenthesis_in_its_name(host: Host) -> None:
    """r86a UNITPAREN: the held directory was read back out of its message up to the first
    " (": one named ` (run.log` had the workspace itself named as what is held."""
    _ignore(host, "*.log\n")
    stderr = run(host, "mkdir -p 'x (run.log' && echo x > 'x (run.log/out'\n")
    assert not (host.ws / "x (run.log").exists()
    assert f"held {host.ws / 'x (run.log'}: what git ignores" in stderr, stderr
    assert f"{host.ws} " not in stderr.replace(f"{host.ws}/", ""), stderr


def test_an_ignore_file_git_reads_from_the_index_and_one_the_environment_names(
    host: Host,
) -> None:
    """r87a SPARSEIGNORE (outside a sparse checkout's cone git reads a `.gitignore` from
    the index; corral found none there, and a new lib/env/conftest.py that git ignores
    passed) and ENVIGNORE (a core.excludesFile git takes from GIT_CONFIG_COUNT's variables
    was not read)."""
    for name, text in (("app/a.py", "a\n"), ("lib/.gitignore", "env/\n"), ("lib/u.py", "u\n")):
        (host.ws / name).parent.mkdir(parents=True, exist_ok=True)
        (host.ws / name).write_text(text)
    host.git("add", "app", "lib")
    host.git("commit", "-qm", "layout")
    host.git("sparse-checkout", "set", "app")
    assert not (host.ws / "lib").exists()
    excludes = host.base / "excludes"
    excludes.write_text("scratch/\n")
    host.env.update({
        "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.excludesFile",
        "GIT_CONFIG_VALUE_0": str(excludes),
    })  # fmt: skip
    run(host, "mkdir -p lib/env scratch && echo x > lib/env/conftest.py && echo x > scratch/r.sh\n")
    assert not (host.ws / "lib" / "env").exists()
    assert not (host.ws / "scratch").exists()
    assert host.git("status", "--porcelain") == ""  # (what git would have shown)


def test_a_workspace_in_a_submodule_of_a_superproject_with_a_split_index(host: Host) -> None:
    """r87a SPLITSUPER: the superproject of a submodule workspace is looked at (r85a
    SUBWS), but not where its index could not be read: with `diff.ignoreSubmodules = all`
    a new tool.sh landed, and the superproject's `git status` showed nothing."""
    _submodule(host, "f.c")
    host.git("config", "diff.ignoreSubmodules", "all")
    host.git("update-index", "--split-index")
    done = host.sh("echo new > tool.sh", None, cwd=host.ws / "lib")
    assert done.returncode == 0, done.stderr
    assert not (host.ws / "lib" / "tool.sh").exists(), done.stderr


def test_a_submodule_the_command_stages_hides_nothing_in_its_folder(host: Host) -> None:
    """r88a STAGEDGITLINK: a command staged a gitlink a branch of the user's already had
    (`git update-index --cacheinfo 160000,...`) and wrote a conftest.py in its folder: git
    lists nothing in a submodule's folder that has no .git, and pytest ran it."""
    sha = host.git("rev-parse", "HEAD").strip()
    host.git("checkout", "-q", "-b", "other")
    host.git("update-index", "--add", "--cacheinfo", f"160000,{sha},tests/vendored")
    host.git("commit", "-qm", "vendored")
    host.git("checkout", "-q", "-")
    run(
        host,
        f"git update-index --add --cacheinfo 160000,{sha},tests/vendored\n"
        "mkdir -p tests/vendored && echo x > tests/vendored/conftest.py\n",
    )
    assert not (host.ws / "tests" / "vendored" / "conftest.py").exists()


def test_a_submodule_no_gitmodules_names_in_a_superproject_with_a_split_index(
    host: Host,
) -> None:
    """r88a SPLITSUPER2: a repository added with a plain `git add` (a gitlink .gitmodules
    does not name), its superproject's index split and `diff.ignoreSubmodules = all`: a
    new conftest.py in it landed, and the superproject's `git status` showed nothing."""
    inner = _nested(host, "embedded")
    host.git("add", "embedded")
    host.git("commit", "-qm", "embedded")
    host.git("config", "diff.ignoreSubmodules", "all")
    host.git("update-index", "--split-index")
    done = host.sh("echo x > conftest.py", None, cwd=inner)
    assert done.returncode == 0, done.stderr
    assert not (inner / "conftest.py").exists(), done.stderr
