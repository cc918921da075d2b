"""A module a sandboxed command writes where a Python the host starts looks first is held.

Python looks in the script's directory first, at the top of the work tree for `python -m` (a
hook's `python -mpre_commit`, a git filter's `python3 -m nbstripout`), in PYTHONPATH (relative,
or reached through a link), in the directories a .pth file names, and takes its standard
library from what an activated venv's pyvenv.cfg says: a module planted in any of them, named
like one that is imported, runs on the host at the next commit, prompt or start. Each test
writes from inside real bwrap, then looks at what the host holds afterwards.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from .conftest import user_prefix
from .sandbox_support import ignore_less, q, run

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Host

pytestmark = pytest.mark.sandbox


def test_a_module_named_like_a_standard_one_cannot_be_planted_in_two_runs(host: Host) -> None:
    """r7c F11: a new json.py where Python looks first is held, but an earlier run's directory
    named json.py made the file "existing": `python3 app.py` on the host imported it."""
    canary = host.base / "CANARY-json"
    (host.ws / "app.py").write_text("import json\n")
    run(host, "mkdir json.py textwrap.py\n")
    assert (host.ws / "json.py").is_dir()
    run(host, f"rmdir json.py textwrap.py; echo 'open({str(canary)!r}, \"w\")' > json.py\n")
    assert (host.ws / "json.py").is_dir()  # the file in its place is held
    run(host, "rmdir json.py; ln -s app.py json.py\n")
    assert (host.ws / "json.py").is_dir() and not (host.ws / "json.py").is_symlink()


def test_a_module_named_like_a_package_of_another_python_of_the_user_is_held(host: Host) -> None:
    """r37b SHADOWUSER: only the standard library and the packages beside corral counted;
    pytest_benchmark, installed only in the user's pyenv Python, planted at the top ran at
    that Python's `python -m pytest`. The site directories of the Pythons a user runs are
    looked at on disk (here a pyenv root of the test's own)."""
    lib = host.base / "pyenv" / "versions" / "3.99.0" / "lib" / "python3.99"
    (lib / "site-packages" / "zz_only_in_pyenv").mkdir(parents=True)
    (lib / "_zz_stdlib_399").mkdir()  # r38b SHADOW313: 3.13's _pyrepl, not 3.11's
    (host.base / "mylib" / "zz_editable").mkdir(parents=True)  # r38b SHADOWEDIT
    (lib / "site-packages" / "mylib.pth").write_text(f"{host.base / 'mylib'}\n")
    (lib / "site-packages" / "__editable___x_finder.py").write_text(
        "MAPPING: dict[str, str] = {'zz_mapped': '/src/zz_mapped'}\n"
    )
    host.env["PYENV_ROOT"] = str(host.base / "pyenv")
    asdf = host.home / ".asdf" / "installs" / "python" / "3.98.0" / "lib" / "python3.98"
    (asdf / "zz_in_asdf").mkdir(parents=True)  # r39b SHADOWASDF: asdf's, conda's envs
    mamba = host.home / "micromamba" / "envs" / "dev" / "lib" / "python3.97" / "site-packages"
    (mamba / "zz_in_mamba").mkdir(parents=True)  # r40b PYFIND: any installation in the home
    names = ("zz_only_in_pyenv", "_zz_stdlib_399", "zz_editable", "zz_mapped", "zz_in_asdf",
             "_zz_private", "annotationlib", "zz_in_mamba", "zz_nowhere")  # fmt: skip
    run(host, "".join(f"mkdir {n}; echo x > {n}/__init__.py; " for n in names) + "\n")
    for name in names:  # (one installed nowhere too: an optional import finds it, r46a)
        assert not (host.ws / name / "__init__.py").exists(), name


def test_a_directory_link_named_like_a_standard_module_is_held(host: Host) -> None:
    """r7a A1: `json -> pkgdir` imports as the package it leads to, first on sys.path."""
    run(host, "mkdir pkgdir; echo x > pkgdir/__init__.py; ln -s pkgdir json\n")
    assert (host.ws / "pkgdir").is_dir()
    assert not (host.ws / "json").is_symlink()


def test_a_relative_pythonpath_holds_start_up_modules_at_any_depth(host: Host) -> None:
    """r7a A13: PYTHONPATH=. was resolved once, against the workspace: tests/sitecustomize.py
    was applied, and a Python started in tests/ (corral's own too) ran it."""
    host.env["PYTHONPATH"] = ":".join(filter(None, (host.env.get("PYTHONPATH"), ".")))
    run(host, "mkdir -p tests; echo x > tests/sitecustomize.py; echo y > tests/test_a.py\n")
    assert not (host.ws / "tests" / "sitecustomize.py").exists()
    assert (host.ws / "tests" / "test_a.py").exists()


def test_a_pythonpath_entry_reached_through_a_link_keeps_its_link(host: Host) -> None:
    """r8a B6: PYTHONPATH=src with `src -> lib`: the link was re-pointed at a new directory
    holding a sitecustomize.py, which every Python then ran."""
    (host.ws / "lib").mkdir()
    os.symlink("lib", host.ws / "src")
    host.env["PYTHONPATH"] = ":".join(filter(None, (host.env.get("PYTHONPATH"), "src")))
    run(host, "mkdir evil; echo x > evil/sitecustomize.py; ln -sfn evil src\n")
    assert os.readlink(host.ws / "src") == "lib"


def test_an_activated_venvs_configuration_is_kept(host: Host) -> None:
    """r8a B7: pyvenv.cfg's `home` re-pointed at a standard library planted in the venv;
    the venv's python (on PATH) imported its encodings from there."""
    venv = host.ws / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    host.env["PATH"] = f"{venv / 'bin'}:{host.env['PATH']}"
    run(host, "echo 'home = /tmp/evil' > .venv/pyvenv.cfg\n")
    assert (venv / "pyvenv.cfg").read_text() == "home = /usr/bin\n"


def _activated_venv_naming_src(host: Host, pth: str) -> Path:
    """A venv in the workspace, on the PATH corral runs with, whose site-packages has a .pth
    (an editable install's) naming the workspace's src/; returns its site-packages."""
    site = host.ws / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (host.ws / ".venv" / "bin").mkdir()
    (host.ws / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (host.ws / "src").mkdir()
    (site / pth).write_text(f"{host.ws / 'src'}\n")
    host.env["PATH"] = f"{host.ws / '.venv' / 'bin'}:{host.env['PATH']}"
    return site


def test_a_directory_a_pth_file_names_is_one_python_looks_in(host: Host) -> None:
    """r8a B8: an editable install's .pth names the project's src/ (here in an activated
    venv): a src/sitecustomize.py ran at every start of that Python."""
    _activated_venv_naming_src(host, "__editable__.proj.pth")
    (host.ws / "src" / "app.py").write_text("x = 1\n")
    run(host, "echo x > src/sitecustomize.py; echo x > src/app.py\n")
    assert not (host.ws / "src" / "sitecustomize.py").exists()
    assert (host.ws / "src" / "app.py").read_text() == "x\n"  # (the project's own)


def test_the_workspaces_own_venv_names_where_python_looks_first_unactivated(host: Host) -> None:
    """r47b: with the project's .venv not activated (uv, Poetry, `.venv/bin/pip` run it as it
    is), its editable install's .pth put src/ first on that Python's path: a new
    `src/brotlicffi.py` ran at `.venv/bin/pip --version`, urllib3's optional import."""
    _activated_venv_naming_src(host, "__editable__.proj.pth")
    host.env["PATH"] = host.env["PATH"].split(":", 1)[1]  # (not activated)
    run(host, "echo x > src/brotlicffi.py\n")
    assert not (host.ws / "src" / "brotlicffi.py").exists()


def test_directories_named_like_pth_files_do_not_hide_one(host: Host) -> None:
    """r9a C5: 4000 directories named x.pth in an activated venv's site-packages pushed an
    editable install's .pth past the 256 names read: src/ stopped counting, and a
    src/sitecustomize.py was applied."""
    site = _activated_venv_naming_src(host, "zz__editable__.proj.pth")
    for i in range(300):
        (site / f"a{i:04}.pth").mkdir()
    run(host, "echo x > src/sitecustomize.py\n")
    assert not (host.ws / "src" / "sitecustomize.py").exists()


def test_a_package_named_like_the_module_a_hook_runs_is_held(host: Host) -> None:
    """r7a A2: pre-commit's hook runs `python -mpre_commit` from the top of the work tree,
    where a `pre_commit/` package a command wrote is imported in place of pre-commit."""
    host.git("init", "-q", str(host.ws))
    hook = host.ws / ".git" / "hooks" / "pre-commit"
    hook.write_text(
        "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n"
        'exec python3 -mpre_commit hook-impl --config=.pre-commit-config.yaml "$@"\n'
    )
    run(host, "mkdir pre_commit; echo 'x' > pre_commit/__main__.py; echo x > pre_commit.py\n")
    assert not (host.ws / "pre_commit").exists() and not (host.ws / "pre_commit.py").exists()


def test_a_package_named_like_the_module_a_git_filter_runs_is_held(host: Host) -> None:
    """r7a A16: nbstripout's filter is `python3 -m nbstripout`, run from the top of the work
    tree at a plain `git status`: a `nbstripout/` package there ran in its place."""
    host.git("init", "-q", str(host.ws))
    host.git("config", "filter.nbstripout.clean", '"python3" -m nbstripout', cwd=host.ws)
    run(host, "mkdir nbstripout; echo x > nbstripout/__main__.py\n")
    assert not (host.ws / "nbstripout").exists()


def test_where_a_hooks_python_looks_first_no_new_module_is_taken(host: Host) -> None:
    """r8a B1, B2: pre-commit's `python -mpre_commit` looks at the top of the work tree first
    for every module it imports (a `cfgv.py` there replaced pre-commit's own); a hook's
    `python3 scripts/check.py` looks in scripts/ first (a `scripts/json.py` ran)."""
    host.git("init", "-q", str(host.ws))
    (host.ws / "scripts").mkdir()
    (host.ws / "scripts" / "check.py").write_text("import json\n")
    hook = host.ws / ".git" / "hooks" / "pre-commit"
    hook.write_text(
        "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n"
        'python3 scripts/check.py\nexec python3 -mpre_commit hook-impl "$@"\n'
    )
    run(host, "echo x > cfgv.py; echo x > scripts/json.py; echo x > scripts/helper.py\n")
    assert not (host.ws / "cfgv.py").exists()
    assert not (host.ws / "scripts" / "json.py").exists()
    assert not (host.ws / "scripts" / "helper.py").exists()


def test_where_a_python_hook_found_by_its_shebang_or_link_looks_no_module_is_taken(
    host: Host,
) -> None:
    """r10a F2: a Python hook that is a link into the work tree (Python looks in the
    target's directory first) and an extension-less Python script a shell hook runs were
    not seen as Python: tools/hooks/subprocess.py and scripts/json.py ran at `git commit`."""
    host.git("init", "-q", str(host.ws))
    for d in ("tools/hooks", "scripts"):
        (host.ws / d).mkdir(parents=True)
    (host.ws / "tools" / "hooks" / "pre-commit").write_text(
        "#!/usr/bin/env python3\nimport subprocess\n"
    )
    (host.ws / "scripts" / "check").write_text("#!/usr/bin/python3 -S\nimport json\n")
    hooks = host.ws / ".git" / "hooks"
    os.symlink("../../tools/hooks/pre-commit", hooks / "pre-commit")
    (hooks / "commit-msg").write_text('#!/bin/sh\nexec scripts/check "$1"\n')
    run(host, "echo x > tools/hooks/subprocess.py; echo x > scripts/json.py\n"
              "echo x > scripts/helper.py; echo x > tools/notes.md\n")  # fmt: skip
    assert not (host.ws / "tools" / "hooks" / "subprocess.py").exists()
    assert not (host.ws / "scripts" / "json.py").exists()
    assert not (host.ws / "scripts" / "helper.py").exists()
    assert (host.ws / "tools" / "notes.md").exists()


def test_where_a_hook_starts_python_without_a_shebang_no_module_is_taken(host: Host) -> None:
    """r11a T2: `python3 tools/check` (no shebang) and `python3 -c '...'` (Python looks in
    the top first) were not seen as starting Python there: tools/json.py and a new module
    at the top ran at `git commit`."""
    host.git("init", "-q", str(host.ws))
    (host.ws / "tools").mkdir()
    (host.ws / "tools" / "check").write_text("import json\n")
    (host.ws / ".git" / "hooks" / "pre-commit").write_text(
        "#!/bin/sh\npython3 -X dev tools/check\npython3 -I -c 'import zzhelper'\n"
    )
    run(host, "echo x > tools/json.py; echo x > zzhelper.py; echo x > tools/notes.md\n")
    assert not (host.ws / "tools" / "json.py").exists()
    assert not (host.ws / "zzhelper.py").exists()
    assert (host.ws / "tools" / "notes.md").exists()


def test_a_new_name_where_python_looks_first_is_held_as_an_optional_import(host: Host) -> None:
    """r46a OPTIMPORT: a new top-level `re2.py` (pathspec's optional backend, which black
    and mypy load), `brotlicffi.py` (urllib3's), `storemagic.py` (IPython's default
    extension) or a bare directory `org/python/core.py` (Python 3.11's copy.py tries `from
    org.python.core import PyStringMap`) passed: none is installed anywhere, so no name was
    held, and `python -m black`, `python -c 'import requests'` and `ipython` in the
    workspace ran them. Where Python looks first every new name is held but the project's
    own: what the host has there, the name pyproject.toml gives, tests' and usual scripts'
    names, the usual directories of a project, names Python cannot import."""
    (host.ws / "pyproject.toml").write_text('[project]\nname = "my-app"\n')
    (host.ws / "lib").mkdir()
    canary = host.base / "CANARY-org"
    payload = f"open({str(canary)!r}, 'w')"
    run(host, f"mkdir -p org/python; echo {q(payload)} > org/python/core.py\n"
              "echo x > re2.py; echo x > storemagic.py\n")  # fmt: skip
    for name in ("org/python/core.py", "re2.py", "storemagic.py"):
        assert not (host.ws / name).exists(), name
    done = subprocess.run(
        [sys.executable, "-I", "-c", "import sys; sys.path.insert(0, ''); import copy"],
        cwd=host.ws, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert not canary.exists(), done.stderr
    mine = ("lib/x.py", "tests/test_a.py", "test_b.py", "main.py",
            "src/pkg/__init__.py", "my-notes.py", "docs/conf.py")  # fmt: skip
    run(host, "".join(f"mkdir -p $(dirname {m}); echo x > {m}\n" for m in mine))
    for name in mine:
        assert (host.ws / name).exists(), name


def test_what_makes_a_name_the_projects_own_cannot_be_planted(host: Host) -> None:
    """r47b TWOSTEP: any host file counted its stem as the project's module (`re2.txt`
    applied in one run made `re2.py` pass in the next); VENVCFG: a `pyvenv.cfg` written in
    the same run excused a namespace package; LINKCHAIN, INNERLINK: a directory link
    (`org/python -> ../tools/pyx`, `org -> docs`) led to modules unjudged; PYCSWAP: a held
    `re2.py`'s bytecode was applied, and ran in place of the reviewed source later."""
    run(host, "echo x > re2.txt; mkdir org; echo x > org/README.md\n")
    assert (host.ws / "re2.txt").exists() and (host.ws / "org" / "README.md").exists()
    body = (
        "echo x > re2.py; mkdir -p org/python; echo x > org/python/core.py\n"
        "mkdir -p zz/python; touch zz/pyvenv.cfg; echo x > zz/python/core.py\n"
        "mkdir -p tools/pyx yy; echo x > tools/pyx/core.py; ln -s ../tools/pyx yy/python\n"
        "mkdir -p docs/inner; echo x > docs/inner/core.py; ln -s docs xx\n"
        "mkdir -p __pycache__; echo x > __pycache__/re3.cpython-311.pyc; echo x > re3.py\n"
    )
    run(host, body)
    for path in ("re2.py", "org/python/core.py", "zz/python/core.py", "yy/python", "xx",
                 "re3.py", "__pycache__/re3.cpython-311.pyc"):  # fmt: skip
        assert not os.path.lexists(host.ws / path), path
    assert (host.ws / "tools" / "pyx" / "core.py").exists()  # (tools/: a project directory)


def test_a_module_beside_a_namespace_package_of_its_name_is_held(host: Host) -> None:
    """r51b NSOVER: a new `helpers.py` beside the unchanged `helpers/` (modules, no
    `__init__`) is imported in place of it (a module comes before a namespace portion), and
    ran where a git hook imported helpers, `git diff` empty. Beside a regular package it is
    not imported, and passes. r52b NSNEST: nor beside `acme/`, which holds only packages
    (`acme/billing/__init__.py`), the usual namespace layout."""
    for name in ("helpers", "regular"):
        (host.ws / name).mkdir()
        (host.ws / name / "util.py").write_text("ok = 1\n")
    (host.ws / "regular" / "__init__.py").write_text("")
    (host.ws / "acme" / "billing").mkdir(parents=True)
    (host.ws / "acme" / "billing" / "__init__.py").write_text("")
    canary = host.base / "CANARY-nsover"
    payload = f"open({str(canary)!r}, 'w')"
    run(host, f"echo {q(payload)} > helpers.py; echo {q(payload)} > acme.py; "
              "echo x = 1 > regular.py\n")  # fmt: skip
    assert not (host.ws / "helpers.py").exists()
    assert not (host.ws / "acme.py").exists()
    # r53b NSINITTXT: an `__init__.txt` made it look regular; NSREG: an `__init__.py` made
    # it one, which ran at every import below it
    run(host, f"echo x > acme/__init__.txt; echo {q(payload)} > acme.py\n")
    run(host, f"echo {q(payload)} > acme/__init__.py\n")
    assert not (host.ws / "acme.py").exists()
    assert not (host.ws / "acme" / "__init__.py").exists()
    # r54b NSHELD: both in one run (the __init__ held, acme.py passed for it); NSPYD: an
    # `__init__.pyd` (no package off Windows); NSNESTREG: a nested namespace made regular
    (host.ws / "acme" / "plugins").mkdir()
    (host.ws / "acme" / "plugins" / "x.py").write_text("ok = 1\n")
    (host.ws / "acme" / "plugins" / "__init__.pyd").write_text("")
    run(host, f"echo {q(payload)} > acme/__init__.py; echo {q(payload)} > acme.py; "
              f"echo {q(payload)} > acme/plugins.py\n")  # fmt: skip
    run(host, f"echo {q(payload)} > acme/plugins/__init__.py\n")
    for path in ("acme.py", "acme/__init__.py", "acme/plugins.py", "acme/plugins/__init__.py"):
        assert not (host.ws / path).exists(), path
    # r56b CAP1000: 8,000 data files put the modules past the first 1,000 entries looked at
    (host.ws / "src").mkdir()
    (host.ws / "src" / "app.py").write_text("ok = 1\n")
    for i in range(8000):
        (host.ws / "src" / f"fixture_{i}.dat").write_text("")
    run(host, f"echo {q(payload)} > src.py\n")
    assert not (host.ws / "src.py").exists()
    # r55b INITDIR: a directory named `__init__.py` made the namespace look regular
    run(host, "mkdir -p acme/__init__.py\n")
    run(host, f"echo {q(payload)} > acme.py; echo x > acme/plugins/__init__.pyc\n")
    assert not (host.ws / "acme.py").exists()
    assert not (host.ws / "acme" / "plugins" / "__init__.pyc").exists()
    subprocess.run(
        [*user_prefix(), "/usr/bin/python3", "-c", "import helpers.util"], cwd=host.ws,
        env=host.env, capture_output=True, check=False,
    )  # fmt: skip
    assert not canary.exists()
    assert (host.ws / "regular.py").exists()


def test_a_venv_claims_no_name_for_a_later_run(host: Host) -> None:
    """r51b VENVCLAIM: a new top-level `psutil/` holding a `pyvenv.cfg` and `lib/x.py`
    passed (a venv's own files), and the host then had "a package psutil" there, so a
    `psutil/__init__.py` in the next run passed as the project's; mypy's `try: import
    psutil` in the workspace ran it. r52b VENVCLAIM3: deleting the venv's pyvenv.cfg in a
    second run made psutil/ a directory of modules, which claimed the name for the third."""
    canary = host.base / "CANARY-venvclaim"
    run(host, "mkdir -p psutil/lib; echo home = /usr/bin > psutil/pyvenv.cfg\n"
              "echo x = 1 > psutil/lib/x.py\n")  # fmt: skip
    run(host, "rm psutil/pyvenv.cfg\n")
    assert (host.ws / "psutil" / "pyvenv.cfg").exists()
    # r53b VENVOPAQUE: the directory replaced whole, the host's pyvenv.cfg still counted
    run(host, "rm -rf psutil; mkdir -p psutil/lib; echo x = 1 > psutil/lib/x.py\n")
    assert (host.ws / "psutil" / "pyvenv.cfg").exists()
    payload = f"open({str(canary)!r}, 'w')"
    run(host, f"echo {q(payload)} > psutil/__init__.py\n")
    assert not (host.ws / "psutil" / "__init__.py").exists()
    subprocess.run(
        [*user_prefix(), "/usr/bin/python3", "-c", "import psutil"], cwd=host.ws,
        env=host.env, capture_output=True, check=False,
    )  # fmt: skip
    assert not canary.exists()


def test_new_modules_held_for_one_reason_share_a_line(host: Host) -> None:
    """Seven new modules printed the same 300-character reason seven times (r48c): paths
    held for the same words are named together, five and a count."""
    said = run(host, "for m in m1 m2 m3 m4 m5 m6 m7; do echo x > $m.py; done\n")
    held = [line for line in said.splitlines() if line.startswith("corral: held ")]
    assert len(held) == 1, said
    names = ", ".join(str(host.ws / f"m{i}.py") for i in range(1, 6))
    assert held[0].startswith(f"corral: held {names} and 2 more: a new module name "), said
    assert "corral apply" in said and "PATH..." in said  # (seven held: named by the user)


def test_new_modules_apply_lets_new_names_land(host: Host) -> None:
    """sandbox.new_modules = "apply" (the user's choice): a new name that no standard or
    installed module has lands; one that shadows a standard module is still held."""
    config = host.base / "mods.toml"
    config.write_text('[sandbox]\nnew_modules = "apply"\n')
    run(host, "echo x > utils.py; echo x > json.py\n", "--config", str(config))
    assert (host.ws / "utils.py").exists()
    assert not (host.ws / "json.py").exists()


def test_only_importable_modules_claim_a_name_and_bytecode_is_never_taken(host: Host) -> None:
    """r48b NONIDENT-CLAIM, DIRPY-CLAIM: `org/x-notes.py` (no name Python imports) or a
    directory `brotlicffi.py/` applied in one run made the name the project's in the next.
    LINKFILL: a link `storemagic -> docs/api` to a directory of text passed, then an
    `__init__.py` there did (docs/ is a project directory). PYCOWN: a forged unchecked-hash
    `__pycache__/app.cpython-311.pyc` for the project's unchanged app.py was applied and
    ran in its place with `git diff` empty."""
    (host.ws / "app.py").write_text("x = 1\n")
    (host.ws / "docs" / "api").mkdir(parents=True)
    (host.ws / "docs" / "api" / "README.md").write_text("api\n")
    run(host, "mkdir -p org brotlicffi.py; echo x > org/x-notes.py; ln -s docs/api storemagic\n"
              "mkdir -p __pycache__; echo forged > __pycache__/app.cpython-311.pyc\n")  # fmt: skip
    assert not (host.ws / "storemagic").is_symlink()
    assert not (host.ws / "__pycache__" / "app.cpython-311.pyc").exists()
    run(host, "mkdir -p org/python brotlicffi; echo x > org/python/core.py\n"
              "echo x > brotlicffi/__init__.py\n")  # fmt: skip
    assert not (host.ws / "org" / "python" / "core.py").exists()
    assert not (host.ws / "brotlicffi" / "__init__.py").exists()


def test_what_python_loads_in_place_of_a_reviewed_source_is_held(host: Host) -> None:
    """r49b LINKFILE: `brotlicffi -> docs/api` (a text file) passed, then docs/api became a
    directory with an `__init__.py`; PYCSYMLINK: `__pycache__/app.cpython-311.pyc` as a link
    to a forged .pyc beside it was applied; SOBESIDE: an extension module
    `app.cpython-311-x86_64-linux-gnu.so` beside the unchanged app.py (Python loads it
    first); PKGOVER: a new `app/__init__.py` beside app.py (a package comes first). r52b
    INITSO: a package's own `__init__` extension beside its unchanged `__init__.py`."""
    (host.ws / "app.py").write_text("x = 1\n")
    (host.ws / "docs").mkdir()
    (host.ws / "pkg").mkdir()
    (host.ws / "pkg" / "__init__.py").write_text("")
    run(host, "echo text > docs/api; ln -s docs/api brotlicffi\n"
              "mkdir -p __pycache__; echo f > __pycache__/app.bin\n"
              "ln -s app.bin __pycache__/app.cpython-311.pyc\n"
              "echo so > app.cpython-311-x86_64-linux-gnu.so\n"
              "mkdir -p app; echo x > app/__init__.py\n"
              "echo so > pkg/__init__.cpython-311-x86_64-linux-gnu.so\n")  # fmt: skip
    for path in ("brotlicffi", "__pycache__/app.cpython-311.pyc", "__pycache__/app.bin",
                 "app.cpython-311-x86_64-linux-gnu.so", "app/__init__.py",
                 "pkg/__init__.cpython-311-x86_64-linux-gnu.so"):  # fmt: skip
        assert not os.path.lexists(host.ws / path), path


FORGE_PYC = """
import importlib.util, marshal, os, sys
canary = sys.argv[1]
code = compile(f"open({canary!r}, 'w')\\nx = 1\\n", "core.py", "exec")
flags = (1).to_bytes(4, "little")  # hash-based, unchecked: never compared with core.py
data = importlib.util.MAGIC_NUMBER + flags + bytes(8) + marshal.dumps(code)
os.makedirs("tests/fx", exist_ok=True)
open(f"tests/fx/core.{sys.implementation.cache_tag}.pyc", "wb").write(data)
os.symlink("../tests/fx", "pkg/__pycache__")
"""


def test_a_pycache_that_is_a_link_is_never_taken(host: Host) -> None:
    """r51b PYCDIRLINK: `pkg/__pycache__` made a link to `tests/fx/`, holding a forged
    unchecked-hash `core.<tag>.pyc`: no bytecode sat in a directory named `__pycache__`,
    both were applied, and `python3 -c 'import pkg.core'` ran the forgery in place of the
    unchanged core.py, with `git diff` empty."""
    (host.ws / "pkg").mkdir()
    (host.ws / "pkg" / "__init__.py").write_text("")
    (host.ws / "pkg" / "core.py").write_text("x = 1\n")
    (host.ws.parent / "forge_pyc.py").write_text(FORGE_PYC)
    canary = host.base / "CANARY-pycache"
    run(host, f"/usr/bin/python3 ../forge_pyc.py {q(canary)} || exit 1\n")
    subprocess.run(
        [*user_prefix(), "/usr/bin/python3", "-c", "import pkg.core"], cwd=host.ws, check=True,
        env={**host.env, "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    assert not canary.exists()
    assert not os.path.lexists(host.ws / "pkg" / "__pycache__")


def test_a_compiled_module_beside_a_new_source_or_a_package_link_is_held(host: Host) -> None:
    """r50a NEWSO: a new `pkg/util.py` and `pkg/util.cpython-311-x86_64-linux-gnu.so` in one
    run were both applied (the source was looked for on the host only), and `import
    pkg.util` ran the binary; LINKOVER: a link `app -> docs/impl` (a package) beside app.py
    was applied, and Python took the package."""
    (host.ws / "app.py").write_text("x = 1\n")
    (host.ws / "pkg").mkdir()
    (host.ws / "pkg" / "__init__.py").write_text("")
    run(host, "echo y = 1 > pkg/util.py; echo so > pkg/util.cpython-311-x86_64-linux-gnu.so\n"
              "mkdir -p docs/impl; echo z = 1 > docs/impl/__init__.py\n"
              "ln -s docs/impl app\n")  # fmt: skip
    assert (host.ws / "pkg" / "util.py").exists()
    assert not (host.ws / "pkg" / "util.cpython-311-x86_64-linux-gnu.so").exists()
    assert not os.path.lexists(host.ws / "app")


LOAD_ENTRY_POINTS = (
    "from importlib.metadata import entry_points\n"
    "for e in entry_points(group='pytest11'):\n"
    "    e.load()\n"
)


def test_compiled_modules_and_entry_points_anywhere_in_the_workspace_are_held(
    host: Host,
) -> None:
    """r72b EGGINFOEP: with an editable install putting src/ on Python's path, a new
    `src/zz.egg-info/entry_points.txt` naming a sourceless `src/pkg/_zz.pyc` (both hidden
    by the usual .gitignore) ran at pytest's, flake8's and pylsp's start; DISTINFOTOP: the
    same as `zz.dist-info` at the top, for `python -m pytest`. EXTSTANDIN: the project's
    built `_fast.*.so` (its `_fast.c` unchanged, no `.py` of it) rewritten, loaded by Jedi's
    completion. A rewrite with the same bytes, and an installation's own, pass."""
    ignore_less(host)  # (what git ignores is held by its own rule: this one's said here)
    canary = host.base / "CANARY-entry-points"
    pkg = host.ws / "src" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "_fast.c").write_text("/* the reviewed source */\n")
    so = pkg / "_fast.cpython-311-x86_64-linux-gnu.so"
    so.write_bytes(b"\x7fELF the host's build")
    own = host.ws / "src" / "pkg.egg-info"
    own.mkdir()
    (own / "entry_points.txt").write_text("[console_scripts]\npkg = pkg:main\n")
    site = host.ws / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    plugin = f"open({str(canary)!r}, 'w')\n"
    (host.ws.parent / "plugin.py").write_text(plugin)
    said = run(host, "set -e\n"
               "/usr/bin/python3 -c 'import py_compile,sys; py_compile.compile(sys.argv[1], "
               "cfile=sys.argv[2])' ../plugin.py src/pkg/_zz.pyc\n"
               "mkdir src/zz.egg-info zz-1.dist-info\n"
               "printf '[pytest11]\\nzz = pkg._zz\\n' > src/zz.egg-info/entry_points.txt\n"
               "cp src/zz.egg-info/entry_points.txt zz-1.dist-info/entry_points.txt\n"
               "printf 'Name: zz\\nVersion: 1\\n' > zz-1.dist-info/METADATA\n"
               "echo planted > src/pkg/_fast.cpython-311-x86_64-linux-gnu.so\n"
               "echo planted > src/pkg/_other.abi3.so\n"
               "cp src/pkg.egg-info/entry_points.txt x; mv x src/pkg.egg-info/entry_points.txt\n"
               "echo lib > .venv/lib/python3.11/site-packages/lib.cpython-311.so\n")  # fmt: skip
    for path in ("src/pkg/_zz.pyc", "src/zz.egg-info/entry_points.txt",
                 "zz-1.dist-info/entry_points.txt", "src/pkg/_other.abi3.so"):  # fmt: skip
        assert not os.path.lexists(host.ws / path), (path, said)
    assert so.read_bytes() == b"\x7fELF the host's build", said
    assert (site / "lib.cpython-311.so").exists(), said
    assert (own / "entry_points.txt").read_text() == "[console_scripts]\npkg = pkg:main\n"
    for where in ("src", "."):  # (the editable install's path entry, and `python -m`)
        subprocess.run(
            [*user_prefix(), "/usr/bin/python3", "-c", LOAD_ENTRY_POINTS],
            cwd=host.ws, check=False, env={**host.env, "PYTHONPATH": where},
        )  # fmt: skip
    assert not canary.exists(), "an entry point the command wrote ran on the host"


def test_sbts_meta_build_and_msbuilds_imports_are_held(host: Host) -> None:
    """r72b SBTMETA: sbt keeps its compiled build definition in `project/target/`, beside
    project/build.properties (no build.sbt there): its classes were applied while the top
    target/ was held. MSBuild's Directory.Build.targets (property functions run when a C#
    language server loads the project) passed as no config format."""
    (host.ws / "build.sbt").write_text('name := "x"\n')
    (host.ws / "project").mkdir()
    (host.ws / "project" / "build.properties").write_text("sbt.version=1.10.0\n")
    (host.ws / "app.csproj").write_text("<Project/>\n")
    said = run(host, "mkdir -p project/target/config-classes project/project/target/streams\n"
               "echo c > project/target/config-classes/x.class\n"
               "echo c > project/project/target/streams/y\n"
               "echo '<Project/>' > Directory.Build.targets\n")  # fmt: skip
    for path in ("project/target", "project/project/target", "Directory.Build.targets"):
        assert not os.path.lexists(host.ws / path), (path, said)


def test_metadata_by_any_case_or_link_and_libraries_and_packages_by_link_are_held(
    host: Host,
) -> None:
    """r73b EGGCASE: `Zz.EGG-INFO/entry_points.txt` (importlib.metadata matches the name in
    lower case) ran its plugin at pytest's, flake8's and pylsp's start; LINKMETA: a link
    `zz.egg-info -> ../build/zzmeta` led to entry points judged at a path of no metadata;
    EXTDEPLIB: the project's `libfastcore.so.1`, which its unchanged extension loads by
    RPATH, was rewritten; PKGLINK: `pkg/_fast -> ../pkg.egg-info/impl`, a package Python
    imports before the built `_fast.*.so`, ran at Jedi's completion."""
    canary = host.base / "CANARY-case"
    pkg = host.ws / "src" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "_fast.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF host")
    (pkg / "libfastcore.so.1").write_bytes(b"\x7fELF host lib")
    (pkg / "zzplugin.py").write_text(f"open({str(canary)!r}, 'w')\n")
    said = run(host, "mkdir -p src/Zz.EGG-INFO build/zzmeta src/pkg.egg-info/impl\n"
               "printf '[pytest11]\\nzz = pkg.zzplugin\\n' > src/Zz.EGG-INFO/entry_points.txt\n"
               "cp src/Zz.EGG-INFO/entry_points.txt build/zzmeta/entry_points.txt\n"
               "printf 'Name: zz\\nVersion: 1\\n' > build/zzmeta/METADATA\n"
               "ln -s ../build/zzmeta src/yy.egg-info\n"
               "echo planted > src/pkg/libfastcore.so.1\n"
               "echo planted > src/pkg.egg-info/impl/__init__.cpython-311-x86_64-linux-gnu.so\n"
               "ln -s ../pkg.egg-info/impl src/pkg/_fast\n")  # fmt: skip
    for path in ("src/Zz.EGG-INFO/entry_points.txt", "src/yy.egg-info", "src/pkg/_fast"):
        assert not os.path.lexists(host.ws / path), (path, said)
    assert (pkg / "libfastcore.so.1").read_bytes() == b"\x7fELF host lib", said
    subprocess.run(
        [*user_prefix(), "/usr/bin/python3", "-c", LOAD_ENTRY_POINTS],
        cwd=host.ws, check=False, env={**host.env, "PYTHONPATH": "src"},
    )  # fmt: skip
    assert not canary.exists(), "an entry point the command wrote ran on the host"
