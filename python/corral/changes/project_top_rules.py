"""Change-set rule for config files at a project's top: a new or changed file in a config
format (TOML, YAML, JSON, INI, XML, ...) in the workspace's top directory (or the command's
own), or in a directory that holds a project's manifest (package.json, pyproject.toml,
Cargo.toml, go.mod, a .git, ...) is held for review, whatever its name.

Editors' language servers, linters and AI agents find their configs at a project's top by
name, and many run a program or load a module their config names, with no prompt, when the
editor opens the project. Each review round found names no list held yet (r58b to r63a:
opencode.json's MCP servers, pyrefly.toml's interpreter, cspell.json's imports, dprint's
process plugins, phpcs.xml's autoload, buf.yaml's plugins, hie.yaml's `bios` command), so the
names are not listed here: the format and the place are. The protected names
(sandbox.policy.protected) still hold the known ones at any depth. What passes: the
manifests a command edits as everyday work and whose build is the project's own code
(Cargo.toml, composer.json, pom.xml: what a language server runs of them is what the
threat model counts as running the project), the lock files package managers write, the
shared configs judged by their keys (tool_settings_rules: pyproject.toml, setup.cfg,
tox.ini, package.json, tsconfig*.json), and test reports.
"""

from __future__ import annotations

import os

from corral.changes.ruleset import RuleSet
from corral.changes.tool_settings_rules import SHARED_CONFIGS, ts_project
from corral.paths import is_within

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.changes.scan import Entry

CONFIG_FORMATS = frozenset({
    "toml", "yaml", "yml", "json", "jsonc", "json5", "hjson", "ini", "cfg", "conf", "neon",
    "nims", "xml", "properties", "edn", "kdl", "ron", "hcl", "cue", "dhall", "plist", "pkl",
    # MSBuild's (XML; Directory.Build.props and .targets run property functions when a C#
    # language server loads the project) and its response files (r72b); `.config`
    # (NuGet.Config), `.project` (cabal's, Eclipse's), `.user` (r74b CONFIGEXT)
    "props", "targets", "rsp", "config", "project", "user",
})  # fmt: skip
# what may follow a config format's suffix and keep it one: `phpunit.xml.dist`,
# `cabal.project.local`, `settings.json.example` (r74b CONFIGEXT)
CONFIG_MODIFIERS = frozenset({"local", "dist", "default", "example", "sample", "template", "in"})
# what passes at a project's top (see the module's note)
NOT_A_TOOLS_CONFIG = frozenset({
    "Cargo.toml", "composer.json", "pom.xml", "pubspec.yaml", "Project.toml",
    "Manifest.toml", "package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml",
    "coverage.xml", "coverage.json", "junit.xml",
})  # fmt: skip
MAX_LOOKED_AT = 5000  # names of a directory looked through for a config a marker makes one
# what makes a directory a project's top: a manifest, a build file, a repository
PROJECT_MARKERS = (
    "package.json", "pyproject.toml", "setup.py", "setup.cfg", "Cargo.toml", "go.mod",
    "go.work", "composer.json", "Gemfile", "pom.xml", "build.gradle", "build.gradle.kts",
    "settings.gradle", "settings.gradle.kts", "build.sbt", "deno.json", "deno.jsonc",
    "tsconfig.json", "jsconfig.json", "mix.exs", "pubspec.yaml", "Package.swift",
    "CMakeLists.txt", "meson.build", "Makefile", "flake.nix", "stack.yaml", "cabal.project",
    "dune-project", "build.zig", "Project.toml", "deps.edn", "project.clj", "Pipfile",
    "requirements.txt", ".git", ".hg",
    # (r67b UNLISTEDMARKERS: an nx package, Bazel, .NET, Erlang, Elm, Gleam, Crystal, Dune)
    "project.json", "BUILD.bazel", "BUILD", "WORKSPACE", "WORKSPACE.bazel", "MODULE.bazel",
    "Directory.Build.props", "global.json", "rebar.config", "elm.json", "gleam.toml",
    "shard.yml", "dune", "nx.json", "lerna.json", "turbo.json", "build.mill",
)  # fmt: skip
# ... and by what a name ends with: a .NET project or solution, a gem, a Haskell, Nim or
# OCaml package
MARKER_SUFFIXES = (
    ".csproj", ".fsproj", ".vbproj", ".sln", ".gemspec", ".cabal", ".nimble", ".opam",
)  # fmt: skip


def is_marker(name: str) -> bool:
    """Whether a file of this name makes its directory a project's top."""
    return name in PROJECT_MARKERS or name.endswith(MARKER_SUFFIXES)


def _has_marker(directory: str) -> bool:
    """Whether `directory` holds a project marker (a directory of a marker's name counts,
    as it does to editors' root finders)."""
    if any(os.path.lexists(os.path.join(directory, m)) for m in PROJECT_MARKERS):
        return True
    try:
        with os.scandir(directory) as it:
            return any(e.name.endswith(MARKER_SUFFIXES) for e in it)
    except OSError:
        return False


def config_format(name: str) -> bool:
    """Whether a file name is in a config format and not one that passes at a project's top."""
    parts = [p.lower() for p in name.split(".")[1:]]
    while len(parts) > 1 and parts[-1] in CONFIG_MODIFIERS:
        parts.pop()  # (`phpunit.xml.dist` is XML)
    return (
        bool(parts and name.rpartition(".")[0])
        and parts[-1] in CONFIG_FORMATS
        and name not in NOT_A_TOOLS_CONFIG
        and name not in SHARED_CONFIGS
        and not ts_project(name)
    )


class ProjectTopRules(RuleSet):
    def _project_top(self, entry: Entry) -> str | None:
        """The project top (a path) a new or changed config-format file sits at, or None:
        the command's directory, the top of the writable root it ran in, or a directory
        holding a project marker on the host or in this change set (not the top of another
        writable root, an agent's state directory). (Whether a tool's own tree holds it is
        the caller's to say.)"""
        if entry.kind not in ("file", "link") or not config_format(os.path.basename(entry.rel)):
            return None
        rel = os.path.dirname(entry.rel)
        key = os.path.join(entry.root, rel) if rel else entry.root
        if key not in self._project_tops:
            upper = os.path.join(entry.upper_root(), rel)
            self._project_tops[key] = self._top_by_place(key, not rel) or any(
                _has_marker(top) for top in (key, upper)
            )
        return key if self._project_tops[key] else None

    def _beam_at_top(self, entry: Entry) -> bool:
        """A new or changed Erlang module at a project's top: Erlang (OTP 25) looks in the
        current directory before every OTP application but kernel, stdlib and compiler, so
        rebar3 and mix, run there, load an `httpc.beam` or `cover.beam` and run its
        `-on_load` (r76b BEAMCWD; *.beam is git-ignored by rebar3's template)."""
        if entry.kind not in ("file", "link") or not entry.rel.endswith(".beam"):
            return False
        rel = os.path.dirname(entry.rel)
        key = os.path.join(entry.root, rel) if rel else entry.root
        upper = os.path.join(entry.upper_root(), rel)
        return self._top_by_place(key, not rel) or any(_has_marker(t) for t in (key, upper))

    def _top_by_place(self, directory: str, at_root: bool) -> bool:
        """Whether a directory is a project's top by where it is: the command's own, or the
        top of the writable root the command ran in."""
        cwd = str(self.plan.get("cwd") or "")
        return directory == cwd or (at_root and is_within(cwd, directory))

    def _makes_top(self, entry: Entry) -> str | None:
        """A config-format file on the host that a new project marker makes a project-top
        config, or None: written into a directory with no marker in one run, it landed, and
        a marker added in the next made it one, never judged as such (r65b MARKERLATER)."""
        name = os.path.basename(entry.rel)
        # (a directory of a marker's name counts too, as it does to editors' root finders
        # and to _project_top: r66b MARKERDIR)
        if entry.kind not in ("file", "link", "dir") or not is_marker(name):
            return None
        rel = os.path.dirname(entry.rel)
        directory = os.path.join(entry.root, rel) if rel else entry.root
        if os.path.lexists(entry.path) or self._was_top(directory):
            return None
        try:
            names = os.listdir(directory)
        except OSError:
            return None
        if len(names) > MAX_LOOKED_AT:  # (r66b MARKERMANY: the 18,102nd name was one)
            return f"one of its {len(names)} entries (more than corral looks through)"
        return next((n for n in sorted(names) if config_format(n)), None)

    def _was_top(self, directory: str) -> bool:
        """Whether the host's `directory` is a project top already (see _project_top)."""
        return self._top_by_place(directory, directory in self.roots) or _has_marker(directory)
