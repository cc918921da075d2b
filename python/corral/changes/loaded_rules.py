"""Change-set rule for files a host tool loads by their path and runs, with nothing of them to
read in review (r77b): a precompiled header, which GCC and Clang take in place of the header
beside it; a Ruby LSP add-on; a make dependency file that is more than dependencies, which
make reads as a makefile at every run. What a build leaves and reuses as a whole (cargo's
target, Sphinx's pickled environment) is a build tree instead (rules.BUILD_MARKS); what a
tool writes again by itself is dropped (scan._bytecode).
"""

from __future__ import annotations

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
        if any(p.endswith(PRECOMPILED) for p in parts):
            # (r77b PCHSHADOW: util.h.gch built from other text ran at `make test`)
            return (
                "a precompiled header: GCC and Clang take it in place of the header beside it "
                "(checking only the compiler's options), and nothing of it can be read"
            )
        if entry.kind == "dir":
            return None
        if parts[-1] == "addon.rb" and "ruby_lsp" in parts[:-1]:
            # (r77b RUBYLSPADDON: in Rails' git-ignored tmp/, where no diff shows it)
            return (
                "a Ruby LSP add-on: ruby-lsp loads every `ruby_lsp/**/addon.rb` of the "
                "workspace when the editor starts it"
            )
        if (
            parts[-1].endswith(MAKE_DEPENDENCIES)
            and self._made_with_make(entry, parts)
            and (entry.kind == "link" or not _only_dependencies(entry))
        ):
            # (r77b MAKEDEP: `$(shell ...)` in build/main.d ran at `make -n`)
            return (
                "a make dependency file that holds more than dependencies: a Makefile here "
                "includes such files, and make reads them as makefile text at every run "
                "(`make -n` and `make clean` too)"
            )
        return None

    def _made_with_make(self, entry: Entry, parts: list[str]) -> bool:
        """Whether a Makefile of the host at the entry's root, or in a directory between,
        includes other files (`-include $(DEPS)`)."""
        memo = self.__dict__.setdefault("_includes_memo", {})
        for i in range(len(parts)):
            directory = os.path.join(entry.root, *parts[:i])
            if directory not in memo:
                memo[directory] = any(_includes(os.path.join(directory, m)) for m in MAKEFILES)
            if memo[directory]:
                return True
        return False


def _includes(makefile: str) -> bool:
    try:
        text = read_regular(makefile, MAX_DEPENDENCY_BYTES).decode("utf-8", "replace")
    except OSError:
        return False
    return re.search(r"(?m)^[ \t]*(?:-|s)?include[ \t]", text) is not None


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
