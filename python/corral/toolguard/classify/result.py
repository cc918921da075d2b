"""Risk kinds, the immutable `Classification`, and the mutable `Findings` built while walking."""

from __future__ import annotations

from corral.frozen import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final, Literal

    Risk = Literal["read-only", "writes", "network", "dynamic", "privileged"]

READ_ONLY: Final = "read-only"
WRITES: Final = "writes"
NETWORK: Final = "network"
DYNAMIC: Final = "dynamic"
PRIVILEGED: Final = "privileged"
RISK: tuple[Risk, ...] = (READ_ONLY, WRITES, NETWORK, DYNAMIC, PRIVILEGED)  # least to most risky
_RANK: dict[Risk, int] = {kind: i for i, kind in enumerate(RISK)}

# Builtins that change the directory later commands run in.
DIRECTORY_CHANGES = frozenset({"cd", "pushd", "popd"})
# Writing to these is not writing a file.
SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2"})
# Inline scripts (`bash -c '...'`, `eval`, heredocs fed to a shell) are classified by parsing
# them again; a bound keeps a crafted nesting from costing unbounded time.
MAX_DEPTH = 8


# programs whose every operand is removed (see Findings.destroy)
REMOVERS = frozenset({"rm", "unlink", "shred"})


class Classification(Frozen):
    """What a bash command may do: the riskiest `kind` found, and why."""

    __slots__ = ("commands", "destroys", "kind", "reasons", "unknown_only", "writes")
    kind: Risk
    reasons: tuple[str, ...]  # one per finding, in the order found
    writes: tuple[str, ...]  # paths written, as spelled in the command
    commands: tuple[str, ...]  # command names seen, in order
    # dynamic only because it runs programs the classifier does not know (`unknown command`,
    # `./script`), nothing else: what an allow entry naming such a program may approve
    unknown_only: bool
    # what of it deletes or discards work wholesale (`rm -r`, `git reset --hard`, `git
    # clean`), which only a change set can undo: with direct writes it is asked about
    destroys: tuple[str, ...]

    def __init__(
        self,
        kind: Risk,
        reasons: tuple[str, ...] = (),
        writes: tuple[str, ...] = (),
        commands: tuple[str, ...] = (),
        unknown_only: bool = False,
        destroys: tuple[str, ...] = (),
    ) -> None:
        self._set(
            kind=kind,
            reasons=reasons,
            writes=writes,
            commands=commands,
            unknown_only=unknown_only and kind == DYNAMIC,
            destroys=destroys,
        )


class Findings:
    """Accumulates what one classification finds; the riskiest finding sets `kind`."""

    __slots__ = ("commands", "depth", "destroys", "kind", "known_risk", "reasons", "writes")

    def __init__(self) -> None:
        self.kind: Risk = READ_ONLY
        self.known_risk = False  # a dynamic or privileged finding other than an unknown program
        # dicts as ordered sets: a command of thousands of parts must not cost n² to record
        self.reasons: dict[str, None] = {}
        self.writes: dict[str, None] = {}
        self.commands: list[str] = []
        self.destroys: dict[str, None] = {}
        self.depth = 0

    def flag(self, kind: Risk, reason: str, unknown_program: bool = False) -> None:
        """`unknown_program`: the finding is only that a program the classifier does not know
        runs (the one kind of dynamic finding an allow entry may approve)."""
        if _RANK[kind] > _RANK[self.kind]:
            self.kind = kind
        if _RANK[kind] >= _RANK[DYNAMIC] and not unknown_program:
            self.known_risk = True
        self.reasons[reason] = None

    def write(self, path: str, reason: str) -> None:
        if path in SINKS:
            return
        self.flag(WRITES, reason)
        if path:
            self.writes[path] = None

    def destroy(self, reason: str) -> None:
        """A write that deletes or discards work wholesale (see Classification.destroys)."""
        self.flag(WRITES, reason)
        self.destroys[reason] = None

    def seen(self, name: str) -> None:
        self.commands.append(name)

    def script(self, text: str) -> None:
        """Classify shell code that the command will run (`bash -c`, `eval`, a heredoc)."""
        from corral.toolguard.classify.walk import (
            walk_text,  # walk imports the rules that call this
        )

        self.depth += 1
        try:
            walk_text(text, self)
        finally:
            self.depth -= 1

    def result(self) -> Classification:
        if "git" in self.commands and DIRECTORY_CHANGES.intersection(self.commands):
            # decided on the whole command, not in visiting order: in a loop the git word is
            # visited first yet runs after the cd on the next pass (`for i in 1 2; do git log;
            # cd evil; done`)
            self.flag(
                DYNAMIC,
                "git with a directory change may work on whatever repository it finds there, "
                "and obey its config",
            )
        return Classification(
            self.kind,
            tuple(self.reasons),
            tuple(self.writes),
            tuple(self.commands),
            unknown_only=not self.known_risk,
            destroys=tuple(self.destroys),
        )
