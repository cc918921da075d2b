"""The engine as the Neovim frontend sees it: plain data in, plain data out.

Every request carries what the call needs: the configuration layers the frontend holds
(`global` from setup(), `buffer` from the chat file's frontmatter, `runtime` from :Sandbox
enable/disable), the workspace and the buffer's file. Nothing here keeps per-buffer state, so
the remote plugin stays a thin adapter and these functions are testable without an editor.
Errors come back as `{"error": message}` rather than exceptions crossing the RPC boundary.
"""

from __future__ import annotations

import os
import sys

from corral import config, status_report
from corral.config_file import FILE_LAYER
from corral.errors import ConfigError, CorralError
from corral.paths import literal_pattern
from corral.sandbox import policy
from corral.sandbox.backends import default_registry
from corral.toolguard import approval, guard, narrowing

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from corral.sandbox.backends.registry import Registry
    from corral.toolguard.ops.globs import Permissions
    from corral.toolguard.ops.refusal import Refusal

# "kept": what a chat's frontmatter said before its file changed on disk outside the editor,
# in force under what it says now until the user reads it again (review r32b KEPTEDIT)
LAYER_ORDER = ("global", "kept", "buffer", "runtime")
# the names the editor's layers are shown by where a value's origin is told (the request's
# "global" is setup()'s: "global" told a value of setup() from one of the config file, r89)
SHOWN_AS = {"global": "setup"}


def _layers(request: Mapping[str, Any], skip: tuple[str, ...] = ()) -> list[config.Layer]:
    """Your configuration file first (as in the CLI), then the editor's layers. A chat's
    frontmatter that is not trusted counts only for what narrows the layers below it, judged
    now, against them and this cwd, on every request: what narrowed once may not narrow any
    more after `:cd`, setup() or `:Sandbox reset` (see _judged)."""
    from corral.config_file import file_layer_cached

    given = request.get("layers") or {}
    found = [file_layer_cached()]
    for name in LAYER_ORDER:
        values = given.get(name)
        if name in skip or not values:
            continue
        source = str(request.get("sources", {}).get(name, ""))
        if name == "kept":  # (a list: each untrusted, judged against the layers below)
            for kept in values if isinstance(values, list) else [values]:
                judged = _judged(request, kept, "kept")[0] if isinstance(kept, dict) else {}
                found.append(config.Layer(name, judged, source=source))
            continue
        if name == "buffer" and not request.get("buffer_trusted"):
            values = _judged(request, values)[0]
        found.append(config.Layer(SHOWN_AS.get(name, name), values, source=source))
    chats = [literal_pattern(str(p)) for p in request.get("chat_files") or ()]
    if chats and "chats" not in skip:
        # the editor's open chat files, whatever their name: held like chat.patterns
        found.append(config.Layer("chats", {"chat": {"patterns": {"append": chats}}}))
    return [layer for layer in found if layer is not None]


def _judged(
    request: Mapping[str, Any], values: Mapping[str, Any], layer: str = "buffer"
) -> tuple[dict[str, Any], list[str]]:
    """(what of an untrusted buffer layer narrows the layers below it, why the rest does not).
    Below means the configuration file and setup() only: never the runtime layer, whose
    `:Sandbox disable` would make a frontmatter's `sandbox.enabled = false` look harmless.
    Judged afresh on every request, never remembered: the verdict on a path follows the
    links on its way as they are now, which a sandboxed command may have re-pointed."""
    below = ("kept", "buffer", "runtime") if layer == "kept" else ("buffer", "runtime")
    base_layers = _layers(request, skip=below)
    cwd = request.get("cwd") or os.getcwd()
    path = request.get("buffer_path")
    base = config.resolve(base_layers)
    environ = dict(os.environ)
    flat = config.flatten(values)
    accepted: dict[str, Any] = {}
    refused: list[str] = []
    # Mode first: it decides the presets the other keys are compared against.
    for name in sorted(flat, key=lambda k: k != "sandbox.mode"):
        trial = {**accepted, name: flat[name]}
        layers = [*base_layers, config.Layer(layer, trial)]
        reasons = narrowing.widenings(base, config.resolve(layers), cwd, environ, path)
        if reasons:
            refused.extend(reasons)
        else:
            accepted = trial
    return accepted, refused


SUMMARY_PATHS = 100  # paths listed in a tool call's result; the counts are always whole


def _summary(report: Mapping[str, Any]) -> dict[str, Any]:
    """What a chat tells the model about a command's writes: what changed (counts, paths),
    and what was held and why (see :help corral-execute)."""
    applied, held = report.get("applied") or [], report.get("held") or []
    return {
        "id": report.get("id", ""),
        "status": report.get("status", "empty"),
        "counts": {
            **{"added": 0, "modified": 0, "deleted": 0},
            **(report.get("counts") or {}),
            "held": len(held),  # (whole: the list is cut at SUMMARY_PATHS, r48c U7)
        },
        "changed": [f"{c['change']} {c['path']}" for c in applied[:SUMMARY_PATHS]],
        "held": [
            {"path": h["path"], "code": h.get("code", ""), "why": h.get("message", "")}
            for h in held[:SUMMARY_PATHS]
        ],
        "why": report.get("why", ""),
        "more": max(0, len(applied) - SUMMARY_PATHS) + max(0, len(held) - SUMMARY_PATHS),
    }


class Service:
    def __init__(self, registry: Registry | None = None, *, persistent: bool = False) -> None:
        """`persistent`: this process outlives the commands it wraps (Neovim's Python host),
        so it can run corral's network proxy for them (see corral.net.hub)."""
        self.registry = registry if registry is not None else default_registry()
        self.persistent = persistent
        self._hub: Any = None
        # The host process's environment cannot change under it (Neovim's vim.env is another
        # process's): one plain copy is read faster than os.environ on every call.
        self.environ = dict(os.environ)
        self.problems: list[str] = []  # what faulty resolvers said, for :checkhealth
        self.chain = approval.Chain(log=self.problems.append)
        self._audit: Any = None
        # (the editor's host resolves the same request again and again: see policy_reuse)
        self.reuse: Any = _policy_reuse() if persistent else None

    # -- helpers -------------------------------------------------------------------------
    def _policy(self, request: Mapping[str, Any]) -> tuple[config.Config, policy.Policy]:
        """The configuration and policy of a request."""
        return self._layered(request)[1:]

    def _layered(
        self, request: Mapping[str, Any]
    ) -> tuple[list[config.Layer], config.Config, policy.Policy]:
        """(the request's layers, its configuration, its policy): an untrusted chat's
        layers are judged afresh each time they are made, and all of it is reused while
        nothing it was read from changed (see policy_reuse; the guard's call too, r91c
        GUARDNOREUSE: it passed its own layers and was never reused)."""
        from corral.imports import drop_writable

        def resolve() -> tuple[list[config.Layer], config.Config, policy.Policy]:
            layers = _layers(request)
            resolved = config.resolve(layers)
            cwd = request.get("cwd") or os.getcwd()
            pol = policy.resolve(resolved, cwd, self.environ, request.get("buffer_path"))
            return layers, resolved, pol

        found = self.reuse.get(request, resolve) if self.reuse is not None else resolve()
        # (before anything after a run is imported)
        drop_writable(found[2].rw_roots, found[2].read_only)
        return found

    def call(self, method: str, request: Mapping[str, Any]) -> Any:
        """Dispatch `method`; a CorralError becomes {"error": ...}."""
        handler = getattr(self, f"do_{method}", None)
        if handler is None:
            return {"error": f"unknown method {method!r}"}
        try:
            return handler(request)
        except ConfigError as e:
            return {"error": str(e), "problems": [str(p) for p in e.problems]}
        except CorralError as e:
            return {"error": str(e)}

    # -- configuration -------------------------------------------------------------------
    def do_validate(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Check layers without using them: {"problems": [...]} (empty when all are valid)."""
        try:
            config.resolve(_layers(request))
        except ConfigError as e:
            return {"problems": [str(p) for p in e.problems]}
        return {"problems": []}

    def do_config(self, request: Mapping[str, Any]) -> dict[str, Any]:
        resolved = config.resolve(_layers(request))
        return {
            "values": {
                k: list(v) if isinstance(v, tuple) else v for k, v in resolved.values.items()
            },
            "origins": dict(resolved.origins),
        }

    def do_frontmatter(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Accept a buffer layer: the whole of it when trusted, else only what narrows.

        Returns {"accepted": values, "refused": [reasons], "problems": [...]}.
        """
        values = request.get("values") or {}
        problems: list[Any] = []
        config.validate_layer(config.Layer("buffer", values), problems)
        if problems:
            return {"accepted": None, "refused": [], "problems": [str(p) for p in problems]}
        if request.get("trusted"):
            return {"accepted": values, "refused": [], "problems": []}
        accepted, refused = _judged(request, values)
        return {"accepted": accepted, "refused": refused, "problems": []}

    # -- the sandbox ---------------------------------------------------------------------
    def do_policy(self, request: Mapping[str, Any]) -> dict[str, Any]:
        return self._policy(request)[1].as_dict()

    def do_is_writable(self, request: Mapping[str, Any]) -> bool:
        return self._policy(request)[1].is_writable(str(request["path"]))

    def do_wrap(self, request: Mapping[str, Any]) -> dict[str, Any]:
        argv = request.get("argv")
        if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
            return {"error": "wrap_command: argv must be a non-empty list of strings"}
        _, resolved = self._policy(request)
        wrapped = self.registry.wrap(resolved, argv, proxied=self.persistent)
        full = wrapped.self_contained()
        network_id = ""
        if wrapped.fifos:
            if self._hub is None:
                from corral.net.hub import Hub

                self._hub = Hub()
            network_id = self._hub.expect(wrapped.fifos, wrapped.network, wrapped.stage)
        return {
            "network_id": network_id,  # for network_report once the command is over
            "argv": full,
            "env": dict(wrapped.env),
            "sandboxed": wrapped.sandboxed,
            "backend": wrapped.backend,
            "notes": [*wrapped.notes, *resolved.notes],
            # With a change set the argv checks what the command wrote itself; without one
            # (direct writes), after_run sweeps what must not have appeared.
            "stage": wrapped.stage or "",
            "cwd": resolved.cwd,  # (for change_report: what earlier runs here left held)
            "watch": [] if wrapped.stage else list(resolved.watch),
            "links": [] if wrapped.stage else [list(link) for link in resolved.links],
        }

    def do_reuse(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """How the reuse of resolved policies goes (see policy_reuse), for :checkhealth."""
        if self.reuse is None:
            return {"on": False}
        reuse = self.reuse
        return {"on": True, "hits": reuse.hits, "fresh": reuse.fresh, "unsure": reuse.unsure}

    def do_network_report(self, request: Mapping[str, Any]) -> list[str]:
        """What corral's proxy refused for a wrapped command (its `network_id`), a line
        each: "blocked connection to HOST:PORT: ...; to allow it, ..."."""
        run_id = str(request.get("id") or "")
        return [] if self._hub is None or not run_id else self._hub.report(run_id)

    def do_host_program(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """{"path": ...} of a program the frontend starts itself (the bash of bash tool
        calls): from a system directory, never from PATH (see hostbin)."""
        from corral.sandbox import hostbin

        name = request.get("name")
        if name not in ("bash", "sh"):
            return {"error": f"host_program: {name!r} is not a program corral starts"}
        return {"path": hostbin.require(name, self._policy(request)[1])}

    def do_stop_sandbox(self, request: Mapping[str, Any]) -> bool:
        """Kill what is left of a wrapped command's sandbox (see changes.stage.stop_sandbox)."""
        from corral.changes import stage as stages

        stage = str(request.get("stage") or "")
        if stage and request.get("interrupted"):
            stages.mark_interrupted(stage)  # (cancelled or timed out: held whole, see main)
        return bool(stage) and stages.stop_sandbox(stage)

    def do_change_report(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """What became of a wrapped command's change set: {"report": ..., "lines": [...]};
        with its `cwd`, also the change sets earlier runs there left held (changes.earlier)."""
        from corral.changes import earlier, finish

        report = finish.report(str(request.get("stage") or ""))
        cwd = str(request.get("cwd") or "")
        held = earlier.held_in(cwd, but=report["id"]) if cwd else []
        return {
            "report": report,
            "lines": [*finish.applied(report), *finish.describe(report), *earlier.lines(held)],
            "summary": {**_summary(report), "earlier": held},
        }

    # -- held change sets and undo (see corral.changes.commands) --------------------------
    def _now(self, request: Mapping[str, Any]) -> Callable[[str], dict[str, list[str]]]:
        """What is protected now for a held change set: setup()'s configuration (no chat's)
        resolved in the set's workspace, with its writable roots."""
        from corral.changes import stage as stages

        def now(stage: str) -> dict[str, list[str]]:
            plan = stages.read_plan(stage)
            # (yours: the config file's and setup()'s)
            layers = [layer for layer in _layers(request) if layer.name in (FILE_LAYER, "setup")]
            roots = config.Layer("runtime", {"sandbox.policy.rw_paths": {"append": plan["roots"]}})
            resolved = config.resolve([*layers, roots])
            return stages.protection(policy.resolve(resolved, plan["cwd"], self.environ))

        return now

    def do_changes(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Held change sets ({"id": ""}), or one with its verdicts and diffs."""
        from corral.changes import commands

        change_id = str(request.get("id") or "")
        if not change_id:
            return commands.listing(str(request.get("cwd") or "")).as_dict()
        return commands.show(change_id, self._now(request), diffs=True).as_dict()

    def do_held_ids(self, request: Mapping[str, Any]) -> list[str]:
        from corral.changes import commands

        return commands.held_ids()

    def do_apply_changes(self, request: Mapping[str, Any]) -> dict[str, Any]:
        from corral.changes import commands

        paths = [str(p) for p in request.get("paths") or []]
        return commands.apply(str(request.get("id") or ""), paths, self._now(request)).as_dict()

    def do_discard_changes(self, request: Mapping[str, Any]) -> dict[str, Any]:
        from corral.changes import commands

        paths = [str(p) for p in request.get("paths") or []]
        return commands.discard(str(request.get("id") or ""), paths).as_dict()

    def do_undo(self, request: Mapping[str, Any]) -> dict[str, Any]:
        from corral.changes import commands

        # the buffer's workspace: its newest change set, not another workspace's
        cwd = str(request.get("cwd") or "") or None
        if request.get("list"):
            return commands.undo_list(cwd).as_dict()
        return commands.undo(str(request.get("id") or "") or None, cwd).as_dict()

    def do_sweep(self, request: Mapping[str, Any]) -> list[str]:
        from corral.sandbox.protect.sweep import sweep

        links = [(str(p), str(t)) for p, t in request.get("links") or []]
        return sweep(request.get("watch") or [], links)

    def do_status(self, request: Mapping[str, Any]) -> dict[str, Any]:
        resolved, pol = self._policy(request)
        return status_report.report(resolved, pol, self.registry, self._resolvers())

    def _resolvers(self) -> list[tuple[str, int]]:
        return [(r.name, r.priority) for r in self.chain.resolvers()]

    def do_status_text(self, request: Mapping[str, Any]) -> str:
        """:Sandbox status: for the buffer the request is for."""
        resolved, pol = self._policy(request)
        path = request.get("buffer_path")
        written = (request.get("layers") or {}).get("buffer") or {}
        chat = bool(written) or path in (request.get("chat_files") or ())
        buffer = status_report.buffer_line(path, pol, sorted(config.flatten(written)), chat)
        data = status_report.report(resolved, pol, self.registry, self._resolvers())
        return status_report.render(data, buffer)

    def do_validate_backend(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """{"ok": True, "backend": name} or {"ok": False, "reason": why}."""
        _, pol = self._policy(request)
        if request.get("refresh"):
            from corral.sandbox.backends import probe

            probe.forget()
            self.registry.forget()
        try:
            selection = self.registry.select(pol)
        except CorralError as e:
            return {"ok": False, "reason": str(e)}
        if selection.backend is None:
            return {"ok": False, "reason": selection.reason}
        return {"ok": True, "backend": selection.backend.name}

    def do_detect(self, request: Mapping[str, Any]) -> dict[str, Any]:
        _, pol = self._policy(request)
        tried = [(b.name, self.registry.availability(b, pol)) for b in self.registry.get_all()]
        first = next((name for name, reason in tried if reason is None), None)
        return {"backend": first, "tried": [{"name": n, "reason": r} for n, r in tried]}

    # -- the registry --------------------------------------------------------------------
    def register_foreign(
        self, name: str, priority: int, capabilities: list[str], call: Callable[..., Any]
    ) -> dict[str, Any]:
        from corral.sandbox.backends.foreign import ForeignBackend

        try:
            self.registry.register(ForeignBackend(name, priority, call, capabilities))
        except ValueError as e:
            return {"error": str(e)}
        return {"ok": True}

    def do_unregister(self, request: Mapping[str, Any]) -> bool:
        return self.registry.unregister(str(request["name"]))

    def do_backends(self, request: Mapping[str, Any]) -> list[dict[str, Any]]:
        return [
            {"name": b.name, "priority": b.priority, "capabilities": sorted(b.capabilities)}
            for b in self.registry.get_all()
        ]

    # -- the tool guard --------------------------------------------------------------------
    def _staged(self, pol: policy.Policy) -> bool:
        """Whether commands' writes go through change sets here, and so the file tools'.
        With direct writes (chosen, or no overlay), a sandboxed command may be changing the
        workspace at the same moment: a tool's write must then stay on its opened directory
        (ops/files), not be applied by path, where a swapped directory could redirect it."""
        return self.registry.staged(pol)

    def _sandboxed(self, pol: policy.Policy) -> bool:
        """Enabled, and a backend really available: never the unsandboxed fallback."""
        return pol.enabled and self.registry.outcome(pol)[0] is not None

    def do_guard(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """May this tool call run? {decision, source, reason, class, reasons, writes, ...}."""
        layers, resolved, pol = self._layered(request)
        tool = str(request.get("tool", ""))
        tool_input = request.get("input") or {}
        # what the chat's frontmatter set, now or before a change on disk (a kept layer
        # that took auto-approval over keeps it taken over, review r38c KEPTAPPROVE)
        buffer_values: dict[str, Any] = {}
        for layer in layers:
            if layer.name in ("kept", "buffer"):
                buffer_values.update(config.flatten(layer.values))
        lua_answer = request.get("lua_auto_approve")
        decision, classification = guard.decide(
            tool,
            tool_input,
            resolved.values,
            pol,
            self._sandboxed(pol),
            self.chain,
            buffer_values,
            str(lua_answer) if lua_answer is not None else None,
            undoable=tool == "bash" and self._staged(pol),
        )
        from corral.status_report import workspace_warning

        sandboxed = self._sandboxed(pol) if tool == "bash" else pol.enabled
        warnings = [w for w in (workspace_warning(pol),) if w]
        if not sandboxed and tool != "fetch":
            warnings.append(
                "UNSANDBOXED: this runs on the host with your own rights"
                + ("" if pol.enabled else " (the sandbox is off)")
            )
        result: dict[str, Any] = {
            **decision.as_dict(),
            "sandboxed": sandboxed and tool != "fetch",
            "warnings": warnings,
            "class": classification.kind if classification else None,
            "reasons": list(classification.reasons) if classification else [],
            "writes": list(classification.writes) if classification else [],
            "limits": {
                "timeout": resolved["tools.bash.timeout"],
                "output_cap": resolved["tools.bash.output_cap"],
            },
        }
        if (
            tool == "bash"
            and isinstance(tool_input, dict)
            and not decision.source.endswith("invalid-input")
        ):
            result["command"] = guard.bash_command(tool_input, pol)[0]  # what bash runs
        if decision.decision in (approval.REQUIRE, approval.APPROVE):
            # Refused anyway (a hidden file, outside the writable roots, delete off, an edit
            # whose old text is not there): refuse at once instead of asking first; and never
            # answer "approve" for it (tools.approval = "auto" or "full" approves a read):
            # decide() is what a chat plugin's own read of the file trusts.
            refusal = self._precheck(resolved, pol, tool, tool_input)
            if tool == "edit" and refusal is None:
                # (the edit's own checks: a protected or hidden file, old text not there)
                preview = self._op(resolved, pol, "edit", {**tool_input, "preview": True})
                refusal = preview.get("refusal")
                if decision.decision == approval.REQUIRE:
                    result["preview"] = preview.get("diff", "")
            if refusal is not None:
                reason = refusal.get("message") or refusal["code"]
                result.update(decision=approval.DENY, source=refusal["rule"] or tool,
                              reason=f"refused before asking: {reason}")  # fmt: skip
                result["refusal"] = refusal
        elif decision.decision == approval.DENY:
            from corral.results import guard_refusal

            result["refusal"] = guard_refusal(result, _named(resolved.origins, request))
            if decision.source == "sandbox.policy.network":
                self._fetch_offline(resolved, pol, str(tool_input.get("url", "")), result)
        if request.get("dry_run") or request.get("audit_at_end"):
            return result  # decide() logs nothing; execute() logs one line when it is done
        self.audit({"tool": tool, "decision": result["decision"], "source": result["source"],
                    "command": tool_input.get("command"), "path": tool_input.get("path"),
                    "url": tool_input.get("url"), "class": result["class"],
                    "chat": request.get("buffer_path")})  # fmt: skip
        return result

    def _precheck(
        self, resolved: config.Config, pol: policy.Policy, tool: str, args: Mapping[str, Any]
    ) -> dict[str, str] | None:
        """The refusal a file or fetch call will meet whatever you answer, or None."""
        from corral.toolguard.ops import files, url_rules
        from corral.toolguard.ops.globs import Permissions
        from corral.toolguard.ops.refusal import OpError

        try:
            if tool == "fetch":
                hosts = self._fetch_hosts(resolved, pol, str(args.get("url", "")))[0]
                layer = resolved.origins["tools.fetch.allow_hosts"]
                url_rules.check_host(str(args.get("url", "")), hosts, layer=layer)
            elif tool in ("read", "ls", "write", "delete", "edit"):
                perms = Permissions.from_config(resolved)
                allowed = resolved["tools.delete.allow_sandboxed"]
                files.precheck(pol, perms, tool, str(args.get("path", ".")), allowed)
                if tool != "read" and tool != "ls" and not args.get("preview"):
                    return self._change_refusal(pol, perms, tool, args)
        except OpError as e:
            return dict(_held_said(_layered(e.refusal, resolved)).as_dict())
        return None

    def _change_refusal(
        self, pol: policy.Policy, perms: Permissions, tool: str, args: Mapping[str, Any]
    ) -> dict[str, str] | None:
        """What the change-set check will refuse of a file tool's change (a chat file, a
        protected name, a git control file), asked through the same rules before asking you:
        of the file as the change leaves it (r51c EDITPYPROJECT: an edit was judged as the
        file emptied, so every edit of pyproject.toml was "a change to host tools' settings")."""
        if not self._staged(pol):
            return None
        from corral.changes.tools import ToolChanges
        from corral.toolguard.ops.files import OSErrors, edited, locate

        changes = ToolChanges(pol)
        path = str(args.get("path", "."))
        lexical, real = locate(pol, path, entry=tool == "delete")
        if not changes.handles(real):
            return None
        if tool == "edit":  # (its own refusals first: old text not there, not text)
            old, new = str(args.get("old", "")), str(args.get("new", ""))
            content = edited(pol, perms, path, old, new, int(args.get("expected") or 1))[3]
        else:
            content = str(args.get("content") or "") if tool == "write" else ""
        data = None if tool == "delete" else content.encode()
        # (a change that cannot even be staged, a name too long or a directory you cannot
        # write, is refused as running the tool would refuse it)
        with OSErrors(lexical):
            return changes.refusal(real, data)

    def _op(
        self,
        resolved: config.Config,
        pol: policy.Policy,
        tool: str,
        args: Mapping[str, Any],
        within: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        from corral.toolguard.ops import files
        from corral.toolguard.ops.globs import Permissions
        from corral.toolguard.ops.refusal import OpError

        changes = None
        if tool in ("write", "edit", "delete") and not args.get("preview") and self._staged(pol):
            from corral.changes.tools import ToolChanges

            changes = ToolChanges(pol)  # a change set: checked, journaled, or held for review
        try:
            perms = Permissions.from_config(resolved)
            path = str(args.get("path", "."))
            if tool == "read":
                # (a call may ask for less than the setting, never more: r31b, a read of a
                # sparse 512 MiB file took the engine to 6.7 GiB)
                limit = int(resolved["tools.read.max_bytes"])
                limit = min(limit, int(args.get("max_bytes") or limit))
                return files.read(pol, perms, path, limit, int(args.get("offset") or 0), within)
            if tool == "write":
                content = str(args.get("content", ""))
                create = args.get("create_dirs") is not False  # (made unless refused)
                return files.write(pol, perms, path, content, create, changes)
            if tool == "edit":
                return files.edit(
                    pol, perms, path, str(args.get("old", "")), str(args.get("new", "")),
                    int(args.get("expected") or 1), bool(args.get("preview")), changes,
                )  # fmt: skip
            if tool == "delete":
                allowed = resolved["tools.delete.allow_sandboxed"]
                return files.delete(pol, perms, path, allowed, changes)
            if tool == "ls":
                return files.ls(pol, perms, path, within=within)
            if tool == "fetch":
                return self._fetch(resolved, pol, args)
        except OpError as e:
            return {"ok": False, "refusal": _held_said(_layered(e.refusal, resolved)).as_dict()}
        return {"ok": False, "error": f"no operation for tool {tool!r}"}

    def _fetch_hosts(
        self, resolved: config.Config, pol: policy.Policy, url: str
    ) -> tuple[list[str], list[str]]:
        """(hosts, hosts allowed private addresses) the fetch tool may reach for `url`:
        tools.fetch's lists, and with the sandbox's network off, what
        sandbox.policy.network_allow lets the shell reach on the URL's port (one list for
        both; see corral.net.allowlist)."""
        from corral.net.hosts import expand_hosts

        hosts = list(expand_hosts(resolved["tools.fetch.allow_hosts"], self.environ))
        private = list(expand_hosts(resolved["tools.fetch.allow_private"], self.environ))
        if pol.network_allow:
            from corral.net.allowlist import Allowlist
            from corral.toolguard.ops import url_rules

            try:
                _, host, port, _ = url_rules.split(url)
            except url_rules.Refused:
                host, port = "", 0  # (the fetch's own check says what is wrong with the URL)
            allowlist = Allowlist.parse(pol.network_allow, pol.network_private)
            hosts += [pattern for pattern, ports in allowlist.entries if port in ports]
            # private addresses only for this URL's host and port, when an entry allows both
            # (not for whatever tools.fetch.allow_hosts lets through, on any port: r28b)
            if allowlist.allows(host, port) and allowlist.private_allowed(host):
                private.append(host)
        return hosts, private

    def _fetch_offline(
        self, resolved: config.Config, pol: policy.Policy, url: str, result: dict[str, Any]
    ) -> None:
        """`result`, the guard's refusal of a fetch for want of network, said of the URL: what
        is wrong with the URL itself comes first (malformed, an address that stays refused
        with the network on), else the refusal names the host it could not reach (r89
        FETCHNOHOST: "no network" for `not a url`, and the host unnamed)."""
        from corral.net.hosts import ip_of
        from corral.toolguard.ops import url_rules

        try:
            host = url_rules.split(url)[1]
            if ip_of(host) is not None:  # (a name's addresses are known only once looked up)
                private = self._fetch_hosts(resolved, pol, url)[1]
                url_rules.check_addresses(host, [host], private)
        except url_rules.Refused as refused:
            refusal = url_rules.refusal(
                url, refused, resolved.origins["tools.fetch.allow_hosts"],
                resolved.origins["tools.fetch.allow_private"],
            ).as_dict()  # fmt: skip
            result.update(source=refusal["rule"] or "fetch", reason=refusal["message"])
            result["refusal"] = refusal
            return
        message = f"the sandbox allows no network here, so fetch cannot reach {host}"
        result["reason"] = message
        result["refusal"].update(
            host=host,
            message=message,
            # (no parentheses: the summary puts the hint in its own, r89 MODELTEXTVOICE)
            hint=f"add {host} to sandbox.policy.network_allow, which opens that host alone, "
            'or to tools.fetch.allow_hosts with sandbox.mode = "workspace-write-network"; in '
            f"the CLI: --allow-host {host}",
        )

    def _fetch(
        self, resolved: config.Config, pol: policy.Policy, args: Mapping[str, Any]
    ) -> dict[str, Any]:
        from corral.toolguard.ops import http

        hosts, private = self._fetch_hosts(resolved, pol, str(args.get("url", "")))
        return http.fetch(
            str(args.get("url", "")),
            hosts,
            private,
            layer=resolved.origins["tools.fetch.allow_hosts"],
            private_layer=resolved.origins["tools.fetch.allow_private"],
        )

    def do_op(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Run a file or fetch tool call through the guarded operations."""
        resolved, pol = self._policy(request)
        tool = str(request.get("tool", ""))
        # (a read approved unasked as one inside the workspace must still be there: r91a)
        within = (pol.cwd, *pol.rw_roots) if request.get("approved_by") == approval.SANDBOX else ()
        result = self._op(resolved, pol, tool, request.get("input") or {}, within)
        if not request.get("audit_at_end"):  # (execute() logs the call once, when it ends)
            self.audit({"tool": tool, "path": (request.get("input") or {}).get("path"),
                        "url": (request.get("input") or {}).get("url"),
                        "refusal": result.get("refusal"),
                        "chat": request.get("buffer_path")})  # fmt: skip
        from corral import results

        return results.as_text(result)  # type: ignore[no-any-return]  # (see as_text)

    def do_explain_output(self, request: Mapping[str, Any]) -> list[str]:
        """What the sandbox visibly refused in a command's output, in corral's words (for
        :Sandbox run, after the output)."""
        from corral.toolguard.ops.bash_report import discarded, explain, report

        resolved, pol = self._policy(request)
        tail = str(request.get("output", ""))[-65536:]
        found = report(tail, pol, _named(resolved.origins, request))
        # (what it wrote where nothing is kept, r89t SILENTDISCARD, also for :Sandbox run)
        return explain(found + discarded(str(request.get("command") or ""), pol))

    def do_result(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """`{result = ...}`: a call's result in the one shape chat plugins get
        (corral.results); `raw` is what ran (or why not); bash output is read for what the
        sandbox refused."""
        from corral import results
        from corral.toolguard.ops.bash_report import (
            discarded,
            proxy_refusals,
            quiet_network,
            report,
        )

        resolved, pol = self._policy(request)
        tool = str(request.get("tool", ""))
        raw = dict(request.get("raw") or {})
        if tool == "bash" and "output" in raw:
            raw["output"] = results.without_own_lines(str(raw["output"]), raw.get("repairs"))
        if tool == "bash" and "output" in raw and raw.get("sandboxed"):
            tail = str(raw["output"])[-65536:]
            raw["sandbox_refusals"] = report(tail, pol, _named(resolved.origins, request))
            # (a quiet `pip install -q` without network: r46c F6, r48c)
            words = str(request.get("command", "")).split()
            raw["sandbox_refusals"] += quiet_network(
                words, raw.get("exit"), pol, raw["sandbox_refusals"], tail
            )
            raw["sandbox_refusals"] += discarded(str(request.get("command", "")), pol)
        elif tool == "bash":
            raw.setdefault("sandbox_refusals", [])
        if tool == "bash" and raw.get("repairs"):
            raw["sandbox_refusals"] = [
                *(raw.get("sandbox_refusals") or []),
                *proxy_refusals(raw["repairs"]),
            ]
        sandboxed = bool(raw.pop("sandboxed", False))
        if tool != "bash":
            sandboxed = tool != "fetch" and pol.enabled
        shaped = results.shape(tool, raw, request.get("decision") or {}, sandboxed)
        # (wrapped: a result's own `error`, a failed fetch's, read as the engine's failure,
        # and the call was "failed" without its refusal, r72d FETCHPRIVSTATUS)
        return {"result": results.as_text(shaped)}

    def audit(self, event: Mapping[str, Any]) -> None:
        from corral.toolguard.audit import AuditLog

        if self._audit is None:
            self._audit = AuditLog()
        self._audit.log({k: v for k, v in event.items() if v is not None})

    def do_audit(self, request: Mapping[str, Any]) -> bool:
        self.audit(request.get("event") or {})
        return True

    def register_resolver(self, name: str, priority: int, call: Callable[..., Any]) -> str:
        """A resolver implemented elsewhere (Lua): called with the context as plain data."""

        def resolve(ctx: approval.CallContext) -> Any:
            answer = call(
                {"tool": ctx.tool, "input": dict(ctx.input), "sandboxed": ctx.sandboxed,
                 "class": ctx.classification.kind if ctx.classification else None}
            )  # fmt: skip
            return answer  # garbage is the chain's to log and skip

        return self.chain.register(name, resolve, priority)


def _policy_reuse() -> Any:
    """A PolicyReuse, or None where this kernel gives no change notification."""
    if not sys.platform.startswith("linux"):
        return None
    from corral.sandbox.policy_reuse import PolicyReuse

    try:
        return PolicyReuse()
    except OSError:
        return None


def _named(origins: Mapping[str, str], request: Mapping[str, Any]) -> dict[str, str]:
    """Origins with the buffer layer named by its chat file, as a refusal tells it."""
    path = request.get("buffer_path")
    if not path:
        return dict(origins)
    return {k: v.replace("buffer", f"frontmatter of {path}") for k, v in origins.items()}


def _layered(refusal: Refusal, resolved: config.Config) -> Refusal:
    """A refusal by a setting, with the layer that setting's value came from (the delete
    tool's was "builtin" for a default, r72d REFUSALLAYER)."""
    origin = resolved.origins.get(refusal.rule) if refusal.rule else None
    return refusal.replace(layer=origin) if origin and refusal.layer == "builtin" else refusal


def _held_said(refusal: Refusal) -> Refusal:
    """A file tool's "No such file" for a path a held change set holds, said as held (r64c
    EDITHELD: an edit of the file the model had just written, held for review, was "check
    the path", and it wrote the file again)."""
    if refusal.code != "not-found" or not refusal.path:
        return refusal
    from corral.changes import earlier

    held = earlier.holding(refusal.path)
    if held is None:
        return refusal
    return refusal.replace(
        message=f"{refusal.path} is held for the user's review (change set {held}), not in "
        "the workspace",
        hint="only the user applies it; do not write it again",
    )
