"""Change-set rule for files a host tool loads by their path and runs, with nothing of them to
read in review (r77b): a precompiled header, which GCC and Clang take in place of the header
beside it; a Ruby LSP add-on; a make dependency file that is more than dependencies, which
make reads as a makefile at every run. What a build leaves and reuses as a whole (cargo's
target, Sphinx's pickled environment) is a build tree instead (rules.BUILD_MARKS); what a
tool writes again by itself is dropped (scan._bytecode).
"""

from __future__ import annotations

import fnmatch
import os
import re

from corral.changes.ruleset import RuleSet
from corral.changes.scan import same_bytes
from corral.paths import read_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.changes.scan import Entry

# GCC looks for `X.h.gch` (a file, or a directory of them) beside `X.h` before it reads the
# header, and checks only that the compiler and its options match; Clang's `-include-pch`
PRECOMPILED = (".gch", ".pch")
# and compiled module interfaces, taken by an importer as they are: GCC's `gcm.cache/*.gcm`,
# Clang's `.pcm`, MSVC's `.ifc` (r78b GCMMODULE)
COMPILED_INTERFACES = (*PRECOMPILED, ".gcm", ".pcm", ".ifc", ".hi", ".dyn_hi")
# (and GHC's `.hi`: `ghc --make` recompiles an importer against it, r79b HSIFACE)
# the names of the dependency files compilers write for make (`-MMD`: x.d; automake: .Po)
MAKE_DEPENDENCIES = (".d", ".Po", ".Plo", ".dep")
# what a Makefile includes through a variable may be named (r79b MAKEVARINC:
# `-include $(BUILDDIR)/config.mk`)
MAKE_INCLUDED = (*MAKE_DEPENDENCIES, ".mk", ".mak", ".make")
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
# an in-source build's marks at a root's top, and the names of what it generates below
IN_SOURCE_BUILDS = ("config.status", "CMakeCache.txt")
GENERATED_NAMES = frozenset({
    "CMakeFiles", "cmake_install.cmake", "CTestTestfile.cmake", "libtool", "config.status",
    ".deps", ".libs",
    # (and what it makes of templates, run or compiled at the next `make`: r80b
    # CONFIGHINSOURCE, AMREGEN)
    "config.h", "configure", "Makefile.in", "aclocal.m4", "config.h.in", "build.ninja",
})  # fmt: skip
# build files a build tool reads, rewritten where git does not track them and the host has
# them already (a generator's output, as ninja's own configure.py writes build.ninja: r80b
# NINJAINSOURCE)
BUILD_FILES = frozenset({"build.ninja", *MAKEFILES})
MAX_DEPENDENCY_BYTES = 1 << 20  # a larger one is held unread
# make's directives: a line that starts with one is no rule, whatever follows
MAKE_DIRECTIVES = frozenset({
    "include", "-include", "sinclude", "define", "endef", "override", "export", "unexport",
    "vpath", "ifeq", "ifneq", "ifdef", "ifndef", "else", "endif", "private", "undefine",
    "load", "-load",
})  # fmt: skip
# `targets: prerequisites`, no variable, function, assignment, recipe or pattern
RULE = re.compile(r"[^\s$;=#:|%()]+(?:[ \t]+[^\s$;=#:|%()]+)*[ \t]*:(?:[ \t]+[^\s$;=#:|%()]+)*")


class LoadedRules(RuleSet):
    def _loaded_unread(self, entry: Entry, parts: list[str]) -> str | None:
        """What a new or changed entry is, when a host tool loads it by its path and runs
        it, and nothing of it can be read in review; None otherwise."""
        if entry.kind not in ("file", "link", "dir"):
            return None
        if any(p.endswith(COMPILED_INTERFACES) or p == "gcm.cache" for p in parts):
            # (r77b PCHSHADOW: util.h.gch built from other text ran at `make test`; r78b
            # GCMMODULE: a module's CMI)
            return (
                "a precompiled header or compiled module interface: the compiler takes it in "
                "place of the source it was built from (checking only its options), and "
                "nothing of it can be read"
            )
        if entry.kind == "dir":
            return None
        if (parts[-1] == "addon.rb" and "ruby_lsp" in parts[:-1]) or (
            entry.kind == "link" and parts[-1] in ("ruby_lsp", "addon.rb")
        ):
            # (r77b RUBYLSPADDON: in Rails' git-ignored tmp/, where no diff shows it)
            return (
                "a Ruby LSP add-on: ruby-lsp loads every `ruby_lsp/**/addon.rb` of the "
                "workspace when the editor starts it"
            )
        if (
            parts[-1] in MAKEFILES[:2]
            and not os.path.lexists(entry.path)
            and any(
                os.path.isfile(os.path.join(os.path.dirname(entry.path), later))
                for later in MAKEFILES[MAKEFILES.index(parts[-1]) + 1 :]
            )
        ):  # (r80b LOWERMAKESHADOW: GNUmakefile beside a lowercase makefile)
            # (GNU make reads GNUmakefile, then makefile, before Makefile, r79b MAKESHADOW)
            return f"a new {parts[-1]} beside a Makefile: make reads it in the Makefile's place"
        generated = self._generated(entry, parts)
        if generated:
            return generated
        if (
            parts[-1] in BUILD_FILES
            and os.path.isfile(entry.path)
            and os.path.lexists(os.path.join(entry.root, ".git"))
            and entry.rel not in self._tracked(entry.root)
            and not _only_dependencies(entry)
        ):
            return (
                f"a {parts[-1]} git does not track, rewritten: a generator made it, and the "
                "build reads it at every run"
            )
        included = self._included(entry)
        if included and (entry.kind == "link" or not _only_dependencies(entry)):
            # (r77b MAKEDEP: `$(shell ...)` in build/main.d ran at `make -n`; r78b
            # MAKEINCLUDE: configure's ffbuild/config.mak; MAKESUBDIR: src/Makefile's
            # `-include ../build/*.d`)
            return (
                f"a file a Makefile includes ({included}), which git does not track and which "
                "holds more than dependencies: make reads it as makefile text at every run "
                "(`make -n` and `make clean` too)"
            )
        return None

    def _generated(self, entry: Entry, parts: list[str]) -> str:
        """What an in-source build generated at any depth, git not tracking it: with
        configure's config.status or CMake's CMakeCache.txt at the root's top, a Makefile,
        libtool, config.status, CMakeFiles/ (r79b AUTOTOOLSINSOURCE: the generated Makefile
        rewritten ran at `make -n`; CMAKESUBDIR: src/CMakeFiles/x.dir/flags.make)."""
        if not any(
            os.path.lexists(os.path.join(t, m))
            for t in (entry.root, entry.upper_root()) for m in IN_SOURCE_BUILDS
        ):  # fmt: skip
            return ""
        if not (set(parts) & GENERATED_NAMES or parts[-1] in MAKEFILES):
            return ""
        if entry.rel in self._tracked(entry.root):
            return ""
        return (
            "a file an in-source build generated (configure's or CMake's), which git does "
            "not track: make reads it at every run (`make -n` too)"
        )

    def _tracked(self, root: str) -> frozenset[str]:
        tracked = self.__dict__.setdefault("_tracked_memo", {})
        if root not in tracked:
            from corral.sandbox.protect.hookmanagers import tracked as listed

            tracked[root] = frozenset(listed(root) or ())  # (unread: none)
        return tracked[root]  # type: ignore[no-any-return]

    def _included(self, entry: Entry) -> str:
        """How a Makefile of the entry's root includes it ("" when none does, or when git
        tracks it: then it is the project's, read in review): by name (`include
        ffbuild/config.mak`, a glob), or, where one includes through a variable
        (`-include $(DEPS)`), by a dependency file's name (`.d`, `.Po`)."""
        memo = self.__dict__.setdefault("_make_memo", {})
        if entry.root not in memo:
            memo[entry.root] = _make_includes(entry.root)
        any_variable, literal, patterns = memo[entry.root]
        if entry.path in literal:
            how = "by name"
        elif any(fnmatch.fnmatchcase(entry.path, p) for p in patterns):
            how = "by a pattern"
        elif any_variable and os.path.basename(entry.path).endswith(MAKE_INCLUDED):
            how = "a dependency file, through a variable"
        else:
            return ""
        return "" if entry.rel in self._tracked(entry.root) else how


MAKE_DEPTH = 3  # levels below a root looked in for Makefiles
MAKE_LOOKED = 2000  # directories looked at


def _make_includes(root: str) -> tuple[bool, frozenset[str], list[str]]:
    """(whether a Makefile of the root includes through a variable, the paths Makefiles
    include by name, the globs they include), from every Makefile at the root and to
    MAKE_DEPTH levels below (a top Makefile that only runs `$(MAKE) -C src`). Past the
    walk's budget, every dependency file counts (as through a variable)."""
    from corral.sandbox.protect.dirwalk import directories
    from corral.sandbox.protect.hookmanagers import NOT_PROJECTS_BELOW

    below, complete = directories(root, MAKE_DEPTH, MAKE_LOOKED, NOT_PROJECTS_BELOW)
    variable = not complete
    literal: set[str] = set()
    patterns: list[str] = []
    # (and what each included file includes, as make reads it: a tracked mk/rules.mk's
    # `-include config.local.mk`, r79b MAKENESTED)
    # (make reads an include's name from where it runs, the first Makefile's directory, not
    # from the including file's: both are taken)
    queue = [(os.path.join(d, name), d) for d in (root, *below) for name in MAKEFILES]
    read: set[str] = set()
    while queue and len(read) < MAKE_LOOKED:
        makefile, base = queue.pop(0)
        if makefile in read:
            continue
        read.add(makefile)
        words, runs = _makefile(makefile)
        queue += [(m, os.path.dirname(m)) for m in runs]
        for word in words:
            if "$" in word:
                variable = True
                continue
            for directory in {base, os.path.dirname(makefile)}:
                path = os.path.normpath(os.path.join(directory, word))
                if any(c in word for c in "*?["):
                    patterns.append(path)
                else:
                    literal.add(path)
                    queue.append((path, base))
    return variable, frozenset(literal), patterns


def _make_text(makefile: str) -> str:
    """A makefile's text, its continued lines joined (r80b MAKECONT)."""
    try:
        text = read_regular(makefile, MAX_DEPENDENCY_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""
    return re.sub(r"\\\r?\n", " ", text)


def _variables(text: str) -> dict[str, str]:
    """A makefile's simple assignments (`B := build`, `B = build`, `B ?= build`)."""
    found: dict[str, str] = {}
    for name, value in re.findall(r"(?m)^[ \t]*([A-Za-z_][\w.-]*)[ \t]*[:?+]?=[ \t]*(.*)$", text):
        found.setdefault(name, value.split("#", 1)[0].strip())
    return found


def _expanded(word: str, variables: dict[str, str]) -> str:
    """`$(B)/config.inc` with the makefile's own simple variables put in, a few rounds (r80b
    MAKEVARSUFFIX); `$(wildcard x)` as its pattern x."""
    for _ in range(4):
        word = re.sub(r"\$[({]wildcard[ \t]+([^)}]*)[)}]", r"\1", word)
        word = re.sub(
            r"\$[({]([A-Za-z_][\w.-]*)[)}]",
            lambda m: variables.get(m.group(1), m.group(0)), word,
        )  # fmt: skip
    return word


def _makefile(makefile: str) -> tuple[list[str], list[str]]:
    """(the words of a makefile's include directives, `include a.mk`, `-include $(DEPS)`; the
    makefiles its recipes run, `$(MAKE) -C a/b/c/d`, `$(MAKE) -f build.mk`, r80b MAKEDEEP,
    MAKEFOPT), its simple variables put in; read once."""
    text = _make_text(makefile)
    variables = _variables(text)
    words: list[str] = []
    for line in re.findall(r"(?m)^[ \t]*(?:-|s)?include[ \t]+(.*)$", text):
        words += [_expanded(w, variables) for w in line.split("#", 1)[0].split()]
    directory = os.path.dirname(makefile)
    runs: list[str] = []
    for flag, value in re.findall(
        r"(?:\$[({]MAKE[)}]|\bmake\b)[^\n;&|]*?(-C|--directory=|-f|--file=|--makefile=)[ \t]*(\S+)",
        text,
    ):  # fmt: skip
        value = _expanded(value, variables).strip("\"'")
        if "$" in value:
            continue
        path = os.path.normpath(os.path.join(directory, value))
        if flag in ("-C", "--directory="):
            runs += [os.path.join(path, name) for name in MAKEFILES]
        else:
            runs.append(path)
    return words, runs


def _only_dependencies(entry: Entry) -> bool:
    """Whether a staged file is what compilers write for make, and nothing else: rules of
    plain names (`main.o: main.c util.h`, `util.h:`), continued with a backslash, blank
    lines. The same bytes as the host's are that too (a rebuild that changed nothing)."""
    try:
        if os.path.isfile(entry.path) and same_bytes(entry.source, entry.path):
            return True
        data = read_regular(entry.source, MAX_DEPENDENCY_BYTES + 1, follow=False)
    except OSError:
        return False
    if len(data) > MAX_DEPENDENCY_BYTES:
        return False
    text = data.decode("utf-8", "replace").replace("\\\r\n", " ").replace("\\\n", " ")
    for line in text.splitlines():
        if not line.strip():
            continue
        words = line.split()
        if line[0].isspace() or words[0] in MAKE_DIRECTIVES or not RULE.fullmatch(line.rstrip()):
            return False
    return True
