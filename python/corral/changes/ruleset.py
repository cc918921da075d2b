"""What every change-set rule reads: the plan of one change set (see stage.create) made
into lookups, and how a refusal is made. The rules themselves: rules.py (by path and kind),
link_rules.py (where symlinks lead), module_rules.py (where Python looks first).
"""

from __future__ import annotations

import os

from corral.paths import name_matches
from corral.toolguard.ops.refusal import BUILTIN, Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _components_match(parts: list[str], name: list[str]) -> bool:
    """Whether `parts` holds `name`'s components in a row, `*` in them matching any run."""
    return any(
        all(name_matches(parts[i + k], c) for k, c in enumerate(name))
        for i in range(len(parts) - len(name) + 1)
    )


class RuleSet:
    """The plan's paths, names and directories, as the rules look them up."""

    def __init__(self, plan: dict[str, Any], apply_hint: str) -> None:
        self.plan = plan
        self.roots: list[str] = plan["roots"]
        self.hidden: list[str] = plan.get("hidden", [])
        self.visible: list[str] = [*plan.get("visible", []), *self.roots]
        self.protected: list[str] = plan["protected"]
        self.protected_set = frozenset(self.protected)
        self.protected_why: dict[str, str] = plan.get("protected_why") or {}
        # why the configs around a root could not all be read: nothing is checked then
        self.incomplete: str = plan.get("incomplete", "")
        # each directory above a protected path -> one protected path below it
        self.above_protected: dict[str, str] = {}
        for p in self.protected:
            parent = os.path.dirname(p)
            while parent not in self.above_protected and parent != os.path.dirname(parent):
                self.above_protected[parent] = p
                parent = os.path.dirname(parent)
        names = [n.strip("/").split("/") for n in plan["protected_names"] if n.strip("/")]
        plain = [n for n in names if not any("*" in c for c in n)]
        self.single_names = frozenset(n[0] for n in plain if len(n) == 1)
        self.longer_names = [n for n in plain if len(n) > 1]
        self.wild_names = [n for n in names if any("*" in c for c in n)]  # `mise.*.toml`
        self._single_wild = [n[0] for n in self.wild_names if len(n) == 1]
        self._multi = [
            (next((c for c in n if "*" not in c), None), n)
            for n in [*self.longer_names, *self.wild_names] if len(n) > 1
        ]  # fmt: skip
        self._wild_memo: dict[str, str | None] = {}
        self.chat_patterns: list[str] = plan["chat_patterns"]
        self.home_dot: str = plan.get("home_dot", "")  # $HOME, where it is writable
        dirs = plan.get("module_dirs", ())
        # PYTHONPATH and the workspace; "<root>/**": every directory below the root (a
        # relative PYTHONPATH entry, which each Python reads against its own directory)
        self.module_dirs = frozenset(
            d[:-2] if d.endswith("/*") else d for d in dirs if not d.endswith("/**")
        )
        self.module_trees = tuple(d[:-3] for d in dirs if d.endswith("/**"))
        # "<dir>/*": a Python a hook starts looks there first for every module it imports,
        # its own dependencies included, which corral cannot list: no new module is taken
        self.strict_module_dirs = frozenset(d[:-2] for d in dirs if d.endswith("/*"))
        self.new_modules: str = plan.get("new_modules", "hold")  # sandbox.new_modules
        self.project_configs: str = plan.get("project_configs", "hold")
        self.git_history: str = plan.get("git_history", "hold")  # sandbox.git_history
        self.max_bytes = int(plan.get("max_file_bytes") or 0)
        self.created_ns = int(plan["created_ns"])
        self.apply_hint = apply_hint  # "corral apply ID PATH": how to apply one anyway
        self._git_dirs: dict[str, bool] = {}
        self.linked_bytes = 0  # copies of hard-linked files so far (see _kind)
        # what the undo journal says earlier change sets did (see LinkRules._read_journal)
        self._journaled: frozenset[str] | None = None
        self._journaled_dirs: frozenset[str] = frozenset()
        self._journaled_deleted: dict[str, str] = {}
        self._clean_below: set[str] = set()  # directories with nothing below leading out
        self._lua_links: dict[str, list[tuple[str, str]]] = {}  # (see LuaRules._top_links)
        self._lua_dirs: dict[str, bool] = {}  # (see LuaRules._holds_lua)
        self._below_verdicts: dict[str, str | None] = {}  # (see LinkRules._leads_out_below)
        # (see GitHistoryRules: per git directory, the commits the host names, whether HEAD's
        # ancestors are among them yet, and the new commits whose trees were found clean,
        # with the new tips they were judged with)
        self._git_known: dict[str, tuple[set[str], bool]] = {}
        self._git_clean: dict[str, set[tuple[str, tuple[str, ...]]]] = {}
        self._git_state: dict[str, str] = {}  # a ref's or index's path -> its git directory
        self._top_names: dict[str, frozenset[str]] = {}  # module_rules._claimed
        self._git_refs: dict[str, dict[str, str]] = {}  # git_history._refs, by git directory
        self._git_walks: dict[str, dict[Any, Any]] = {}  # git_history._moves, once a check
        self._git_tips: dict[str, list[str]] = {}  # the host's own branch and tag commits
        self._git_packs: dict[str, list[Any]] = {}  # the pack indexes a change set leaves
        self._git_configs: dict[str, list[str]] = {}  # the host index's shared configs
        self._project_tops: dict[str, bool] = {}  # (see ProjectTopRules._project_top)
        self._programs: list[str] | None = None  # (see Checker._program_dirs)
        self._build_trees: dict[str, bool] = {}  # (see Checker._build_tree)
        # (see IgnoredRules: an entry of each root, the work tree each directory is in)
        self._ignore_roots: dict[str, Any] = {}
        self._ignore_repos: dict[str, Any] = {}
        self._ignore_tops: dict[str, Any] = {}

    def refusal(
        self, code: str, path: str, rule: str, message: str, layer: str = BUILTIN
    ) -> Refusal:
        return Refusal(code, path, rule, layer, f"{self.apply_hint} {path}", message)

    def protected_name_in(self, parts: list[str]) -> str | None:
        """The protected name (`sandbox.policy.protected`) a path's components hold, at any
        depth: `.envrc`, `.cargo/config.toml`, `mise.*.toml`."""
        hit = next((p for p in parts if p in self.single_names), None)
        if hit is not None:
            return hit
        # (once per distinct component for the one-component patterns, and a longer name
        # only where a literal component of it is in the path: every entry went through
        # every name, a quarter of a 5,000-file check)
        for part in parts:
            if part not in self._wild_memo:
                self._wild_memo[part] = next(
                    (w for w in self._single_wild if name_matches(part, w)), None
                )
            if self._wild_memo[part] is not None:
                return self._wild_memo[part]
        present = set(parts)
        return next(
            (
                "/".join(n) for literal, n in self._multi
                if (literal is None or literal in present) and _components_match(parts, n)
            ),
            None,
        )  # fmt: skip

    def protected_name_above(self, parts: list[str]) -> str | None:
        """The protected name whose directory a path ends as (`crate/.cargo` for
        `.cargo/config.toml`): a link there makes what it leads to that name."""
        for name in [*self.longer_names, *self.wild_names]:
            for j in range(1, len(name)):
                if len(parts) >= j and all(
                    name_matches(p, c) for p, c in zip(parts[-j:], name[:j], strict=True)
                ):
                    return "/".join(name)
        return None
