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
COMPILED_INTERFACES = (*PRECOMPILED, ".gcm", ".pcm", ".ifc")
# the names of the dependency files compilers write for make (`-MMD`: x.d; automake: .Po)
MAKE_DEPENDENCIES = (".d", ".Po", ".Plo", ".dep")
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
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
        if parts[-1] == "addon.rb" and "ruby_lsp" in parts[:-1]:
            # (r77b RUBYLSPADDON: in Rails' git-ignored tmp/, where no diff shows it)
            return (
                "a Ruby LSP add-on: ruby-lsp loads every `ruby_lsp/**/addon.rb` of the "
                "workspace when the editor starts it"
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
        elif any_variable and os.path.basename(entry.path).endswith(MAKE_DEPENDENCIES):
            how = "a dependency file, through a variable"
        else:
            return ""
        tracked = self.__dict__.setdefault("_tracked_memo", {})
        if entry.root not in tracked:
            from corral.sandbox.protect.hookmanagers import tracked as listed

            tracked[entry.root] = frozenset(listed(entry.root) or ())  # (unread: none)
        return "" if entry.rel in tracked[entry.root] else how


MAKE_DEPTH = 3  # levels below a root looked in for Makefiles
MAKE_LOOKED = 2000  # directories looked at


def _make_includes(root: str) -> tuple[bool, frozenset[str], list[str]]:
    """(whether a Makefile of the root includes through a variable, the paths Makefiles
    include by name, the globs they include), from every Makefile at the root and to
    MAKE_DEPTH levels below (a top Makefile that only runs `$(MAKE) -C src`). Past the
    walk's budget, every dependency file counts (as through a variable)."""
    from corral.sandbox.protect.dirwalk import directories

    below, complete = directories(root, MAKE_DEPTH, MAKE_LOOKED, SKIPPED)
    variable = not complete
    literal: set[str] = set()
    patterns: list[str] = []
    for directory in (root, *below):
        for name in MAKEFILES:
            for word in _include_words(os.path.join(directory, name)):
                if "$" in word:
                    variable = True
                    continue
                path = os.path.normpath(os.path.join(directory, word))
                (patterns.append if any(c in word for c in "*?[") else literal.add)(path)
    return variable, frozenset(literal), patterns


SKIPPED = frozenset({".git", "node_modules", ".venv", "target", "__pycache__"})


def _include_words(makefile: str) -> list[str]:
    """The words of a Makefile's include directives (`include a.mk`, `-include $(DEPS)`)."""
    try:
        text = read_regular(makefile, MAX_DEPENDENCY_BYTES).decode("utf-8", "replace")
    except OSError:
        return []
    words: list[str] = []
    for line in re.findall(r"(?m)^[ \t]*(?:-|s)?include[ \t]+(.*)$", text):
        words += line.split("#", 1)[0].split()
    return words


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
