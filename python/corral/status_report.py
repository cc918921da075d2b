"""The effective state for a workspace, as data: what `corral status` and `:Sandbox status` show.

Paths are shown relative to the workspace (`.`) or home (`~`) where they are inside them.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from corral.config import Config
    from corral.sandbox.backends.registry import Registry
    from corral.sandbox.policy import Policy


def shorten(path: str, policy: Policy) -> str:
    if policy.cwd in ("/", policy.home):
        return path  # "." would hide how much that is
    if path == policy.cwd:
        return "."
    if path.startswith(policy.cwd + "/"):
        return "./" + path[len(policy.cwd) + 1 :]
    if path == policy.home:
        return "~"
    if path.startswith(policy.home + "/"):
        return "~/" + path[len(policy.home) + 1 :]
    return path


def buffer_line(path: str | None, policy: Policy, frontmatter: Sequence[str], chat: bool) -> str:
    """Which buffer an editor's status describes, and whether a chat's frontmatter counts
    (r89 trial STATUSWHICHBUFFER: two buffers of one directory showed two sandboxes under one
    header). `frontmatter`: the keys it sets."""
    name = shorten(path, policy) if path else "a buffer with no file"
    if frontmatter:
        keys = ", ".join(frontmatter[:3])
        more = f" and {len(frontmatter) - 3} more" if len(frontmatter) > 3 else ""
        return f"{name} (its frontmatter sets {keys}{more})"
    return f"{name} ({'a chat without frontmatter' if chat else 'no chat frontmatter applies'})"


def workspace_warning(policy: Policy) -> str:
    """A warning when the workspace is the whole home directory or the whole system."""
    if policy.cwd == "/":
        return "the workspace is / (the whole system): open Neovim in a project directory"
    if policy.cwd == policy.home and policy.enabled and policy.rw_roots:
        return (
            "the workspace is your home directory: a sandboxed command may change every file "
            "in it but what is protected or hidden; open Neovim in a project directory"
        )
    return ""


def report(
    config: Config,
    policy: Policy,
    registry: Registry,
    resolvers: Sequence[tuple[str, int]] = (),
) -> dict[str, Any]:
    """Everything status shows, as plain data (JSON-ready). `resolvers`: the approval chain's
    (name, priority), highest first, where there is one (Neovim)."""
    warnings: list[str] = []
    backends = []
    for backend in registry.get_all():
        # checked even while the sandbox is off: whether enabling it would work
        reason = registry.availability(backend, policy)
        backends.append(
            {
                "name": backend.name,
                "priority": backend.priority,
                "available": reason is None,
                "reason": reason,
                **backend.describe(policy),
            }
        )
    chosen, why_none, refused = registry.outcome(policy)
    if refused:
        warnings.append(f"commands are refused: {why_none}")
    elif policy.enabled and chosen is None:
        warnings.append(f"commands run UNSANDBOXED: {why_none}")

    def short(path: str) -> str:
        return shorten(path, policy)

    if policy.mode == "off":
        why = f'sandbox.mode is "off" (from {config.origins["sandbox.mode"]})'
    else:
        layer = config.origins["sandbox.enabled"]
        why = f"sandbox.enabled is {str(policy.enabled).lower()} (from {layer})"
    wide = workspace_warning(policy)
    if wide:
        warnings.append(wide)
    if not policy.enabled:
        warnings.append(
            f"NOTHING IS CONFINED: the sandbox is off ({why}); commands run on the host with "
            "your own rights: every file you can write, your credentials, the network"
        )
    return {
        "workspace": policy.cwd,
        "enabled": policy.enabled,
        "why": why,
        "sandboxed": chosen is not None,
        "mode": policy.mode,
        "backend": {"setting": policy.backend, "chosen": chosen, "candidates": backends},
        "network": policy.network,
        "network_allow": list(policy.network_allow),
        "allow_privileged": policy.allow_privileged,
        "paths": {
            "writable": [short(p) for p in policy.rw_roots] + ["/tmp (private)"],
            "read_only_inside_writable": [short(p) for p in policy.read_only],
            "pinned": [short(p) for p in policy.pinned],
            "hidden_areas": [short(p) for p in policy.hidden],
            "shown_in_hidden_areas": [short(p) for p in policy.visible],
            "denied_read": [short(p) for p, _ in policy.deny_read],
        },
        "environment": sorted(name for name, _ in policy.env),
        "settings": {
            key: {"value": _plain(value), "layer": config.origins[key]}
            for key, value in config.values.items()
        },
        "approval": {
            "preset": config["tools.approval"],
            "auto_approve": list(config["tools.auto_approve"]),
            "auto_approve_sandboxed": config["tools.auto_approve_sandboxed"],
            "resolvers": [{"name": n, "priority": p} for n, p in resolvers],
        },
        "notes": list(policy.notes),
        "warnings": warnings,
        "held": _held(policy),
    }


def _held(policy: Policy) -> list[dict[str, Any]]:
    """The held change sets of this workspace (no command sees what they hold)."""
    from corral.changes import earlier

    return earlier.held_in(policy.cwd)


def _value(value: object) -> str:
    """A value as it would be written in the config file."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        if len(value) > 4:
            return f"[{len(value)} entries]"
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return f'"{value}"' if isinstance(value, str) else str(value)


def _plain(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


# With the sandbox off, the settings that only the sandbox reads -> what the table says of them.
OFF = {
    "sandbox.policy.deny_read": "applied to the file tools only: the sandbox is off",
    # (the environment is scrubbed for every command, sandboxed or not: r90t STATUSOFFSCRUB)
    "sandbox.policy.env": "",
    "sandbox.policy.scrub_env": "",
    "sandbox.policy.": "not applied: the sandbox is off",
    "sandbox.backend": "not applied: the sandbox is off",
}


def render(data: dict[str, Any], buffer: str = "") -> str:
    """Human-readable status; `buffer`: which buffer it is for (an editor's, see buffer_line)."""
    where = f"{buffer} in {data['workspace']}" if buffer else data["workspace"]
    lines = [f"corral sandbox status for {where}"]
    for warning in data["warnings"]:
        lines.append(f"WARNING: {warning}")
    state = "enabled" if data["enabled"] else "DISABLED"
    lines.append(f"  sandbox:   {state}: {data['why']}; mode {data['mode']}")
    b = data["backend"]
    lines.append(f"  backend:   {b['chosen'] or 'none (unsandboxed)'}  [setting: {b['setting']}]")
    for c in b["candidates"]:
        detail = "available" if c["available"] else f"unavailable: {c['reason']}"
        if c["available"] and not data["enabled"]:
            detail += " (not used: the sandbox is off)"
        extra = ", ".join(f"{k} {c[k]}" for k in ("binary", "version", "not used") if c.get(k))
        lines.append(
            f"    {c['name']} (priority {c['priority']}): {detail}"
            + (f"; {extra}" if extra else "")
        )
    if data["enabled"]:
        lines.extend(_confinement(data))
    else:
        # what a sandbox would hide or refuse is not listed: none of it applies
        lines.append("  confined:  nothing (no hidden paths, no read-only system, network open)")
    lines.append(f"  environment: {' '.join(data['environment'])}")
    approval = data["approval"]
    lines.append(
        f"  approval:  preset {approval['preset']}; auto-approved: "
        f"{', '.join(approval['auto_approve']) or 'none listed'}"
        + ("; sandboxed bash" if approval["auto_approve_sandboxed"] and data["sandboxed"] else "")
    )
    if approval["resolvers"]:
        chain = ", ".join(
            f"{r['name'].rsplit(':', 1)[-1]} ({r['priority']})" for r in approval["resolvers"]
        )
        lines.append(f"  approval chain: {chain}")
    lines.append("  settings (layer):")
    width = max(len(k) for k in data["settings"])
    for key, item in data["settings"].items():
        # (not "network false" as if it held: r89 trial STATUSOFFTABLE)
        off = "" if data["enabled"] else next((v for k, v in OFF.items() if key.startswith(k)), "")
        # (the first key that fits decides: "sandbox.policy.env" before "sandbox.policy.")
        layer = f"{item['layer']}; {off}" if off else item["layer"]
        lines.append(f"    {key.ljust(width)}  {_value(item['value'])}  ({layer})")
    for note in data["notes"]:
        lines.append(f"  note: {note}")
    if data.get("held"):
        from corral.changes import earlier

        lines += [f"  held: {line}" for line in earlier.lines(data["held"])]
    # (paths are the workspace's names, which a command chose: r64b ESCSTATUS, a `*.pem`
    # named with escapes cleared the screen and wrote a status line of its own)
    from corral.shown import shown

    return "\n".join(shown(line) for line in lines) + "\n"


def _confinement(data: dict[str, Any]) -> list[str]:
    """What a working sandbox confines: network, privilege, paths."""
    privileged = "yes (capabilities kept inside)" if data["allow_privileged"] else "no"
    network = "allowed" if data["network"] else "off"
    if data.get("network_allow"):
        hosts = ", ".join(data["network_allow"])
        network = f"only these hosts, through corral's proxy: {hosts}"
    lines = [
        f"  network:   {network}",
        f"  privileged: {privileged}",
    ]
    for title, key in (
        ("writable", "writable"),
        ("read-only inside writable", "read_only_inside_writable"),
        ("pinned (cannot be renamed)", "pinned"),
        ("emptied", "hidden_areas"),
        ("shown again", "shown_in_hidden_areas"),
        ("hidden", "denied_read"),
    ):
        items = data["paths"][key]
        if items:
            lines.append(f"  {title}: {'  '.join(items)}")
    return lines
