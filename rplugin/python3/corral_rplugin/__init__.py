"""corral's remote plugin: RPC <-> engine calls, nothing else.

Named corral_rplugin, not corral: pynvim puts rplugin/python3 on sys.path, and a package named
like the engine would shadow it (and register nothing). Nothing heavy is imported at module
level: this module is imported by :UpdateRemotePlugins.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pynvim

# <plugin root>/rplugin/python3/corral_rplugin/__init__.py -> <plugin root>/python
ENGINE_DIR = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python")
)
BACKEND_CALL = "return require('corral.sandbox')._backend_call(...)"
RESOLVER_CALL = "return require('corral.execute')._resolver_call(...)"
DELIVER = "require('corral.execute')._deliver(...)"


def _use_own_engine() -> None:
    """The plugin's own engine wins over any other installed copy (the Lua side and the
    engine must come from the same checkout), and a personal install has no other. It names
    its commands as :Sandbox ones (corral.changes.words)."""
    os.environ["CORRAL_FRONTEND"] = "nvim"
    if ENGINE_DIR not in sys.path:
        sys.path.insert(0, ENGINE_DIR)
        # The host starts in Neovim's directory, the workspace, with '' first on sys.path:
        # nothing corral imports may come from where a sandboxed command writes.
        from corral.imports import drop_writable

        drop_writable([os.getcwd()], early=True)


@pynvim.plugin
class CorralPlugin:
    def __init__(self, nvim: pynvim.Nvim) -> None:
        self.nvim = nvim
        self._service: Any = None

    def service(self) -> Any:
        if self._service is None:
            _use_own_engine()
            from corral.service import Service

            self._service = Service(persistent=True)  # (lives as long as the editor)
        return self._service

    @pynvim.function("CorralCall", sync=True)
    def call(self, args: list[Any]) -> Any:
        """Never raises: an error out of a request wedges the editor's remote plugins. Neovim's
        remote#define#request counts the channel busy around rpcrequest() and the error skips
        the count back, so every later notification to this host (CorralCallAsync: read,
        write, fetch) waited for good, with no word (r77d STRINPUTWEDGE)."""
        method = args[0] if args else ""
        try:
            return self._call(str(method), args)
        except Exception as e:
            return {"error": f"corral's engine failed in {method}: {type(e).__name__}: {e}"[:500]}

    def _call(self, method: str, args: list[Any]) -> Any:
        request = args[1] if len(args) > 1 and isinstance(args[1], dict) else {}
        if method == "register":
            name = str(request.get("name", ""))

            def call_lua(fn: str, *fn_args: Any) -> Any:
                return self.nvim.exec_lua(BACKEND_CALL, name, fn, *fn_args)

            return self.service().register_foreign(
                name,
                int(request.get("priority", 50)),
                list(request.get("capabilities") or []),
                call_lua,
            )
        if method == "register_resolver":
            name = str(request.get("name", ""))

            def ask_lua(context: Any) -> Any:
                return self.nvim.exec_lua(RESOLVER_CALL, name, context)

            return self.service().register_resolver(name, int(request.get("priority", 50)), ask_lua)
        if method == "engine_info":
            _use_own_engine()  # :checkhealth may be the first call: before service()
            import corral

            return {"version": corral.__version__, "path": os.path.dirname(corral.__file__)}
        return self.service().call(str(method), request)

    @pynvim.function("CorralCallAsync", sync=False)
    def call_async(self, args: list[Any]) -> None:
        """For operations that may take a while (a fetch): Neovim goes on; the answer comes
        back to Lua with the caller's token."""
        method, request, token = args[0], args[1], args[2]
        try:
            result = self.service().call(str(method), request if isinstance(request, dict) else {})
        except Exception as e:  # the caller waits for an answer: it gets one, always
            result = {"error": f"corral's engine failed in {method}: {type(e).__name__}: {e}"[:500]}
        self.nvim.exec_lua(DELIVER, token, result)
