"""Change-set rule for the host tools' settings in the shared project configs: pyproject.toml's
`[tool.*]` tables, setup.cfg's and tox.ini's other tools' sections, package.json's keys
that are not the package's own. Type checkers, linters,
formatters and language servers on the host obey them, by hand or when the editor opens or
saves a file, and no list of the settings that run code or write files is ever complete:
mypy's `plugins` and `python_executable` (a program it runs) and `junit_xml` (a file it
writes anywhere), pylint's `init-hook`, pylsp-mypy's `overrides` (mypy's options again),
ruff's `cache-dir` (reviews r31a, r37b, r38b). So a change to any of them is held for your
review; what the project itself says passes (`[project]` but its `dynamic`,
`[dependency-groups]`; setup.cfg's `[metadata]` and `[options*]`),
and so do the tables of tools that read them only to build, install or test the project
(setuptools, Poetry, pytest, ...: these run its code anyway). The
configs only host tools read (mypy.ini, .pylintrc, ruff.toml, ...) are protected by name.
"""

from __future__ import annotations

import os

from corral.changes.ruleset import RuleSet
from corral.paths import read_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from corral.changes.scan import Entry

SHARED_CONFIGS = frozenset({"pyproject.toml", "setup.cfg", "tox.ini", "package.json"})
# what package.json says of the package itself; any other key is a tool's (prettier's
# `plugins`, eslintConfig, stylelint, babel: an editor obeys them on save, r40b PRETTIERPKG;
# and `config`, npm's, whose `commitizen.path` `git cz` loads, r60b CZPATH)
PACKAGE_KEYS = frozenset({
    "name", "version", "description", "keywords", "homepage", "bugs", "license", "author",
    "contributors", "maintainers", "funding", "files", "main", "browser", "bin", "man",
    "directories", "repository", "scripts", "dependencies", "devDependencies",
    "peerDependencies", "peerDependenciesMeta", "bundleDependencies", "bundledDependencies",
    "optionalDependencies", "overrides", "resolutions", "engines", "os", "cpu", "private",
    "publishConfig", "workspaces", "type", "exports", "imports", "module", "types", "typings",
    "packageManager", "sideEffects", "unpkg", "jsdelivr", "jest", "vitest", "mocha", "ava",
    "browserslist", "$schema", "displayName", "icon", "publisher", "categories",
    "activationEvents", "contributes", "galleryBanner", "qna", "preview", "badges",
})  # fmt: skip
# what the project says of itself, not what a host tool obeys
# (not build-system's backend-path or a requirement by path or URL: uv runs an in-tree
# backend at `uv tree`, r41b UVTREE; nor project's `dynamic`, which has it run there)
PROJECT_TABLES = frozenset({"project", "dependency-groups"})
# tools that read their table only when they build, install or test the project, which
# runs its code anyway (r39c: every Poetry dependency, every scaffold's pytest settings was
# held); the keys named with them still count (plugins a tool installs and loads whenever
# it runs in the project). Not editors' tools (mypy, pylint, ruff, black, pyright, pylsp),
# nor uv (`uv pip list` runs the python its `pip` table names, r39b), coverage (its reports
# are written where it says), PDM (`pre_invoke` scripts run at `pdm list`), tox (`tox list`
# installs what `requires` names) or Hatch (`hatch version` runs a `code` source): r40b
BUILD_TOOLS = {
    "setuptools": (), "setuptools-scm": (), "setuptools_scm": (),
    # (a source's url gets its name's credentials at `poetry lock`, r41b POETRYSOURCE)
    "poetry": ("requires-plugins", "source"),
    "flit": (), "maturin": (), "scikit-build": (), "pytest": (), "cibuildwheel": (),
    "meson-python": (), "pybind11": (),
}  # fmt: skip
PROJECT_SECTIONS = {
    "setup.cfg": (
        "metadata", "options", "bdist_wheel", "egg_info", "sdist", "tool:pytest", "aliases",
        "build_ext", "build_py",
    ),
    # (not [tox]: its `requires`; nor [testenv]: `tox config` runs its base_python, r41b)
    "tox.ini": ("gh-actions", "gh", "pytest"),
}  # fmt: skip
MAX_CONFIG_BYTES = 1 << 20  # a larger one is held unread
# TypeScript's project files, JSON with comments: what the compiler takes, not what an
# editor's plugins load (r60b VUEPLUGIN: `vueCompilerOptions.plugins`, loaded by the Vue
# plugin in tsserver; MDXPLUGIN: `mdx.plugins`, by the MDX language server); `extends`
# takes another file's keys, and compilerOptions' `plugins` are tsserver's own
# (not `references`: a referenced project's file may have any name, its keys unread here,
# r62b TSREF)
TS_OWN = frozenset({
    "$schema", "compilerOptions", "include", "exclude", "files", "watchOptions",
    "typeAcquisition", "compileOnSave", "buildOptions",
})  # fmt: skip


# what makes a JSON file of any name read as TypeScript's project file (see _tool_settings)
TS_PROJECT_WORDS = ('"compilerOptions"', '"extends"', '"references"', "CompilerOptions", '"mdx"')


def _ts_like(text: str) -> bool:
    """Whether a JSON file of any name says what TypeScript's project file says: one of its
    keys, read as TypeScript reads them (`"vue\\u0043ompilerOptions"` is that key, r63a
    TSESCAPE); one that cannot be read so is taken for one."""
    if "\\u" not in text and not any(k in text for k in TS_PROJECT_WORDS):
        return False
    try:
        data = _jsonc(text)
    except (ValueError, RecursionError):
        return True
    return isinstance(data, dict) and any(
        k in ("compilerOptions", "extends", "references", "mdx") or k.endswith("CompilerOptions")
        for k in data
    )


def ts_project(name: str) -> bool:
    """Whether a file name is TypeScript's project file (tsconfig.json, tsconfig.app.json,
    jsconfig.json), read by every TypeScript language server at a file's opening."""
    return name.endswith(".json") and name.startswith(("tsconfig", "jsconfig"))


def _jsonc(text: str) -> object:
    """JSON with comments and trailing commas, as TypeScript reads its project files;
    ValueError where it is not."""
    import json

    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':  # a string, as it is (escapes kept)
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            # (to any line end TypeScript reads: CR, LS and PS too, r62b TSCR)
            ends = [e for e in (text.find(c, i) for c in "\n\r\u2028\u2029") if e >= 0]
            i = min(ends) if ends else n
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise ValueError("a comment without its end")
            i = end + 2
        else:
            out.append(c)
            i += 1
    # (a comma before a closing bracket or brace, spaces between)
    kept: list[str] = []
    for part in out:
        stripped = part.strip()
        if stripped[:1] in ("]", "}") and not part.startswith('"'):
            while kept and kept[-1].strip() == "":
                kept.pop()
            if kept and kept[-1] == ",":
                kept.pop()
        kept.append(part)
    return json.loads("".join(kept))


def read(path: str) -> str | None:
    """The text of a config, "" where there is none; None where it cannot be read whole
    (too large, not a regular file, a link)."""
    try:
        # (no blocking open: a FIFO there hung the check and corral's lock, r73c TSFIFO)
        data = read_regular(path, MAX_CONFIG_BYTES + 1, follow=False)
    except FileNotFoundError:
        return ""
    except OSError:
        return None
    if len(data) > MAX_CONFIG_BYTES:
        return None
    return data.decode("utf-8", "replace")


def _key(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def _project_section(config: str, section: str) -> bool:
    """Whether an INI section is the project's own (`[options.extras_require]`,
    `[testenv:lint]`), not another tool's."""
    key = _key(section)
    return any(
        key == own or key.startswith((f"{own}.", f"{own}:"))
        for own in map(_key, PROJECT_SECTIONS.get(config, ()))
    )


def _nodes(value: object) -> Iterator[object]:
    """Every value nested in a parsed config (tables and arrays, depth first)."""
    stack = [value]
    while stack:
        item = stack.pop()
        yield item
        if isinstance(item, dict):
            stack += list(item.values())
        elif isinstance(item, list):
            stack += item


def _by_path(value: object) -> list[str]:
    """The requirements in a project table (dependencies, optional-dependencies, groups)
    that name a path or a URL (`x @ file:///...`, `x @ https://...`): resolvers build what
    they name to read its metadata."""
    return sorted(
        item for item in _nodes(value)
        if isinstance(item, str) and "@" in item and any(c in item for c in "/:\\")
    )  # fmt: skip


def _sourced(value: object) -> list[object]:
    """Poetry's (and the like's) dependency tables that name a path, a repository or a URL
    (`{path = "../x"}`): built at `poetry lock` to read their metadata (r44b)."""
    return [
        item for item in _nodes(value)
        if isinstance(item, dict) and any(k in item for k in ("path", "git", "url"))
    ]  # fmt: skip


def tool_settings(name: str, text: str) -> list[tuple[str, str]] | None:
    """The host tools' settings of a shared config, read as the tools read the file (TOML
    for pyproject.toml, INI for setup.cfg and tox.ini: every key spelling, inline tables,
    dotted keys, escapes, `:` for `=`, continued lines, r32a LINTSYNTAX), as (where, value)
    pairs: each table of pyproject.toml but the project's own, each option of every other
    section of the INI files. None where the file cannot be read so."""
    found: list[tuple[str, str]] = []
    if ts_project(name):
        try:
            data = _jsonc(text) if text.strip() else {}
        except (ValueError, RecursionError):
            return None
        if not isinstance(data, dict):
            return None
        options = data.get("compilerOptions")
        plugins = options.get("plugins") if isinstance(options, dict) else None
        found = [(k, repr(v)) for k, v in data.items() if k not in TS_OWN]
        return sorted([*found, *([("compilerOptions.plugins", repr(plugins))] if plugins else [])])
    if name == "package.json":
        import json

        try:
            data = json.loads(text) if text.strip() else {}
        except (ValueError, RecursionError):
            return None
        if not isinstance(data, dict):
            return None
        return sorted((k, repr(v)) for k, v in data.items() if k not in PACKAGE_KEYS)
    if name == "pyproject.toml":
        import tomllib

        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError, RecursionError):
            return None
        for key, value in data.items():
            key = _key(str(key))
            if key == "tool" and isinstance(value, dict):
                for k, v in value.items():
                    tool = _key(str(k))
                    if tool not in BUILD_TOOLS:
                        found.append((f"tool.{tool}", repr(v)))
                    elif isinstance(v, dict):  # (its keys that load code still count)
                        found += [(f"tool.{tool}.{_key(str(n))}", repr(w)) for n, w in v.items()
                                  if _key(str(n)) in BUILD_TOOLS[tool]]  # fmt: skip
                        found += [(f"tool.{tool}: a dependency by path or URL", repr(d))
                                  for d in _sourced(v)]  # fmt: skip
                    else:
                        found.append((f"tool.{tool}", repr(v)))
            elif key == "build-system" and isinstance(value, dict):
                # (what has `uv tree` run code of the workspace's: an in-tree backend, a
                # requirement by path or URL; not a version bump of a named one, r42c)
                if "backend-path" in value:
                    found.append(("build-system.backend-path", repr(value["backend-path"])))
                requires = value.get("requires", [])
                odd = (
                    [r for r in requires if not isinstance(r, str) or any(c in r for c in "@/:\\")]
                    if isinstance(requires, list)
                    else [requires]
                )
                found += [("build-system.requires", repr(r)) for r in odd]
            elif key not in PROJECT_TABLES:
                found.append((key, repr(value)))
            else:
                # (a requirement by path or URL is built by uv's resolver at `uv tree`, its
                # setup.py run: r44b PATHDEP; `dynamic` has the project's backend run)
                if key == "project" and isinstance(value, dict) and "dynamic" in value:
                    found.append(("project.dynamic", repr(value["dynamic"])))
                found += [(f"{key}: a requirement by path or URL", r) for r in _by_path(value)]
        return sorted(found)
    import configparser

    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        # (lines as the tools read them, with universal newlines: a lone CR ends a line
        # too, where read_string saw one line, r40a CRCFG)
        parser.read_string(text.replace("\r\n", "\n").replace("\r", "\n"))
    except (configparser.Error, ValueError):
        return None
    for section in parser.sections():
        if not _project_section(name, section):
            for option, value in parser.items(section, raw=True):
                found.append((f"{_key(section)}.{_key(option)}", value))
    return sorted(found)


class ToolSettingsRules(RuleSet):
    def _tool_settings(self, entry: Entry) -> str | None:
        """What a change to pyproject.toml, setup.cfg, tox.ini, package.json or a TypeScript
        project file (any depth) changes of the host tools' settings in it (`[tool.ruff]`,
        the first that differs), "" where it cannot be read to tell; None for no change."""
        name = os.path.basename(entry.path)
        if entry.kind not in ("file", "link"):
            return None
        json_file = name.endswith((".json", ".jsonc"))
        if not (name in SHARED_CONFIGS or ts_project(name) or json_file):
            return None
        judged = name in SHARED_CONFIGS or ts_project(name)
        if entry.kind == "link":  # (what it leads to is read as the config; another
            # JSON file's link leads to a file judged on its own)
            return "" if judged else None
        staged = read(entry.source)
        host = read(entry.path)
        if staged is None or host is None:
            return "" if judged else None
        if json_file and not judged:
            # Any JSON file a project file extends or references is read as one, whatever
            # its name (r62b TSREF: `cfg/app.json`): judged so when it says what one does
            if not any(_ts_like(text) for text in (staged, host)):
                return None
            name = "tsconfig.json"
        after = tool_settings(name, staged)
        before = tool_settings(name, host)
        if after is None:
            return ""
        if after == before:
            return None
        # (which one: r64c TOOLTABLE, the user could not tell `[tool.ruff]` from the pytest
        # table that passes)
        changed = sorted(set(after) ^ set(before or []))
        return changed[0][0] if changed else ""
