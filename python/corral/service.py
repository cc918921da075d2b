"""The engine as the Neovim frontend sees it: plain data in, plain data out.

Every request carries what the call needs: the configuration layers the frontend holds
(`global` from setup(), `buffer` from the chat file's frontmatter, `runtime` from :Sandbox
enable/disable), the workspace and the buffer's file. Nothing here keeps per-buffer state, so
the remote plugin stays a thin adapter and these functions are testable without an editor.
Errors come back as `{"error": message}` rather than exceptions crossing the RPC boundary.
"""

from __future__ import annotations

import os

from corral import config, narrowing, policy, status
from corral.backends import default_registry
from corral.errors import ConfigError, CorralError
from corral.paths import which

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from corral.backends.registry import Registry

LAYER_ORDER = ("global", "buffer", "runtime")


def _layers(request: Mapping[str, Any], skip: str = "") -> list[config.Layer]:
    given = request.get("layers") or {}
    return [
        config.Layer(name, given[name], source=str(request.get("sources", {}).get(name, "")))
        for name in LAYER_ORDER
        if name != skip and given.get(name)
    ]


class Service:
    def __init__(self, registry: Registry | None = None) -> None:
        self.registry = registry if registry is not None else default_registry()
        # The host process's environment cannot change under it (Neovim's vim.env is another
        # process's): one plain copy is read faster than os.environ on every call.
        self.environ = dict(os.environ)

    # -- helpers -------------------------------------------------------------------------
    def _policy(self, request: Mapping[str, Any]) -> tuple[config.Config, policy.Policy]:
        resolved = config.resolve(_layers(request))
        cwd = request.get("cwd") or os.getcwd()
        return resolved, policy.resolve(resolved, cwd, self.environ, request.get("buffer_path"))

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
        base_layers = _layers(request, skip="buffer")
        base = config.resolve(base_layers)
        cwd = request.get("cwd") or os.getcwd()
        path = request.get("buffer_path")
        # Mode first: it decides the presets the other keys are compared against.
        flat = config.flatten(values)
        accepted: dict[str, Any] = {}
        refused: list[str] = []
        for key in sorted(flat, key=lambda k: k != "sandbox.mode"):
            trial = {**accepted, key: flat[key]}
            layers = [*base_layers, config.Layer("buffer", trial)]
            layers.sort(key=lambda layer: LAYER_ORDER.index(layer.name))
            reasons = narrowing.widenings(base, config.resolve(layers), cwd, self.environ, path)
            if reasons:
                refused.extend(reasons)
            else:
                accepted = trial
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
        wrapped = self.registry.wrap(resolved, argv)
        env_bin = which("env", self.environ.get("PATH"))
        if env_bin is None:
            return {"error": "env(1) not found on PATH: cannot start a clean environment"}
        return {
            # Self-contained: `env -i` gives bwrap (and so the sandbox) only the scrubbed
            # environment, whoever starts it.
            "argv": [env_bin, "-i", *(f"{k}={v}" for k, v in wrapped.env), *wrapped.argv],
            "env": dict(wrapped.env),
            "sandboxed": wrapped.sandboxed,
            "backend": wrapped.backend,
            "notes": [*wrapped.notes, *resolved.notes],
            "watch": list(resolved.watch),
            "links": [list(link) for link in resolved.links],
        }

    def do_sweep(self, request: Mapping[str, Any]) -> list[str]:
        from corral.gitguard import sweep

        links = [(str(p), str(t)) for p, t in request.get("links") or []]
        return sweep(request.get("watch") or [], links)

    def do_status(self, request: Mapping[str, Any]) -> dict[str, Any]:
        resolved, pol = self._policy(request)
        return status.report(resolved, pol, self.registry)

    def do_status_text(self, request: Mapping[str, Any]) -> str:
        resolved, pol = self._policy(request)
        return status.render(status.report(resolved, pol, self.registry))

    def do_validate_backend(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """{"ok": True, "backend": name} or {"ok": False, "reason": why}."""
        _, pol = self._policy(request)
        if request.get("refresh"):
            from corral.backends import probe

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
        from corral.backends.foreign import ForeignBackend

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
