"""What the protected configs of mise, cargo, rustup and Mercurial name in the work tree.

Each of those files is protected by name (sandbox.policy.protected), but what they run from the
work tree is as dangerous as they are:
- mise, at every prompt (`mise hook-env`): `[env]` `_.source` scripts, `_.file` env files,
  `_.path` directories put first on PATH, `_.python.venv`, `exec(...)` templates in any value,
  `[hooks]` commands, `path:` tools (also in `.tool-versions`), in every config file of the
  project's top (`conf.d` directories too);
- cargo, at `cargo metadata` (a language server's first step): `build.rustc-wrapper` and its
  kin, `target.*.linker` and `.runner`, and the files `include` merges in;
- rustup: a `path =` toolchain (a directory of programs);
- Mercurial, at `hg status` or `hg commit`: `[hooks]` commands, `[extensions]` files, and the
  files `%include` reads.
The files and directories they name are kept like the configs, and so is every word with a `/`
in any other value of theirs (`[alias] x = !tools/x.sh`, `[ui] editor`, `[merge-tools]`,
cargo's `[env]`): a key corral does not know may name a program too. What cannot be read ahead
(a path built from `$VAR` or a `{{ }}` template, a mise `_.` directive corral does not know) is
returned as unknown: change sets there are held for review (sandbox.unreadable_configs). Only
what is written out is read; what a named script does in turn is not (as for git hooks, see
hookwords). A config below the top of a writable root is not read (the same as a nested
`.envrc`).
"""

from __future__ import annotations

import os

from corral.paths import name_matches, read_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from corral.sandbox.protect.direnv import Referenced

MAX_BYTES = 256 * 1024
MAX_DEPTH = 4  # files included by files included by the config
MISE_FILES = (
    "mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml", ".config/mise.toml",
    ".config/mise/config.toml", ".config/mise/config.local.toml", "mise/config.toml",
    "mise/config.local.toml", ".mise/config.toml", ".mise/config.local.toml",
)  # fmt: skip
MISE_PATTERNS = ("mise.*.toml", ".mise.*.toml")
MISE_NESTED_PATTERNS = (
    (".config", ("mise.toml", "mise.*.toml")),
    ("mise", ("config.toml", "config.*.toml")),
    (".config/mise", ("config.toml", "config.*.toml")),
    (".mise", ("config.toml", "config.*.toml")),
)
MISE_CONF_DIRS = (".config/mise/conf.d", "mise/conf.d", ".mise/conf.d")
MISE_TASK_DIRS = ("mise-tasks", ".mise-tasks", "mise/tasks", ".mise/tasks", ".config/mise/tasks")
CARGO_FILES = (".cargo/config.toml", ".cargo/config")
CARGO_PROGRAMS = ("rustc", "rustc-wrapper", "rustc-workspace-wrapper", "rustdoc")
RUSTUP_FILES = ("rust-toolchain.toml", "rust-toolchain")
HGRC_FILES = (".hg/hgrc", ".hg/hgrc-not-shared")
# mise's templates: `{{config_root}}` is the project's directory; exec() runs a command
CONFIG_ROOT = r"\{\{\s*config_root\s*\}\}"
EXEC = r"exec\s*\([^)]*?\bcommand\s*=\s*(['\"])(.*?)\1"
CWD = r"\{\{\s*cwd\s*\}\}"


def _text(path: str) -> str | None:
    try:
        return read_regular(path, MAX_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None


def _toml(path: str, unknown: list[str] | None = None) -> dict[str, Any]:
    return _parsed(_text(path), path, unknown)


def _parsed(text: str | None, path: str = "", unknown: list[str] | None = None) -> dict[str, Any]:
    """The TOML in `text`; {} when there is none. A config that is there but cannot be read
    whole (a syntax Python's tomllib does not take, longer than MAX_BYTES) is unknown: the
    tool may well read it."""
    if text is None:
        return {}
    import tomllib

    try:
        if len(text) >= MAX_BYTES:
            raise tomllib.TOMLDecodeError("longer than corral reads")
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        if unknown is not None:
            unknown.append(f"{path}: not read ({e})")
        return {}


def _env_file(path: str, root: str, env_found: Referenced, unknown: list[str]) -> None:
    """An env file mise loads (`_.file`, `env_file`): dotenv lines, or JSON or TOML by its
    name; another format (YAML) is unknown."""
    from corral.sandbox.protect import direnv

    if path.endswith((".json", ".toml")):
        text = _text(path)
        if text is None:
            return
        if path.endswith(".toml"):
            data: Any = _parsed(text, path, unknown)
        else:
            import json

            try:
                data = json.loads(text)
            except ValueError:
                unknown.append(f"{path}: not read (not JSON)")
                return
        for key, value in data.items() if isinstance(data, dict) else ():
            for one in _strings(value):
                direnv.assignment(str(key), one, root, env_found)
    elif path.endswith((".yaml", ".yml")):
        unknown.append(f"{path}: an env file corral does not read (YAML)")
    else:
        direnv.read_dotenv(path, root, env_found)


def _table(data: Any, key: str) -> dict[str, Any]:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> Iterator[str]:
    """Every string in a value: a string, a list, a table (`{ script = ... }`), nested."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def _words(command: str) -> list[str]:
    from corral.sandbox.protect.direnv import path_words

    # (`!tools/x.sh`: Mercurial's and git's shell alias)
    return [w.lstrip("!") for w in path_words(command.split())]


# what a mise task says that is read (or says nothing of where or how it runs)
TASK_KEYS = frozenset({
    "run", "file", "description", "depends", "depends_post", "wait_for", "alias", "hide",
    "sources", "outputs", "quiet", "silent", "raw", "usage", "confirm",
})  # fmt: skip
# mise's `[env]` directives read below; any other `_.` directive is not read ahead
MISE_DIRECTIVES = frozenset({"source", "file", "path", "python"})
# tables of a mise config that the user runs (tasks) or that hold no program: not swept
MISE_NOT_SWEPT = frozenset({"tasks", "task_config", "settings", "tools", "vars"})


def _commands(name: str, lines: Iterator[str] | list[str], unknown: list[str]) -> list[str]:
    """The files command lines a tool runs for you name (hooks, tasks, `!` aliases); what
    they run that cannot be read ahead (`make -s env`) goes to `unknown`."""
    from corral.sandbox.protect.direnv import command_reach

    words: list[str] = []
    for line in lines:
        named, odd = command_reach(line)
        words += named
        unknown += [f"{name}: runs {o}" for o in odd]
    return words


def _hook_lines(value: Any) -> Iterator[str]:
    """The command lines of a mise hook: a string, a list, `{ script = ... }`; not the name in
    `{ task = "setup" }` (the tasks are read when there is a hook)."""
    if isinstance(value, list):
        for item in value:
            yield from _hook_lines(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in ("task", "shell"):
                yield from _strings(item)
    elif isinstance(value, str):
        yield value


def _unplaced(name: str, words: list[str], unknown: list[str]) -> None:
    """Words built at run time: unknown. A template (`{{ vars.bin_dir }}`, `{{ env.X }}/y`)
    whatever it holds; a variable (`$VAR/x`) where it makes a path."""
    unknown += [f"{name}: {w}" for w in words if "{{" in w or ("/" in w and "$" in w)]


def _tasks(name: str, tasks: dict[str, Any], unknown: list[str]) -> list[str]:
    """What the tasks of a mise config (or of a file `[task_config] includes` names) run."""
    words: list[str] = []
    for task_name, task in tasks.items():
        if isinstance(task, dict):
            words += _commands(name, list(_strings(task.get("run"))), unknown)
            words += list(_strings(task.get("file")))
            # what else a task may say changes where and how it runs (`dir`, `shell`, `env`,
            # `tools`): not read ahead
            unknown += [f"{name}: task {task_name} {k}" for k in task if k not in TASK_KEYS]
        else:
            words += _commands(name, list(_strings(task)), unknown)
    return words


def _task_words(name: str, data: dict[str, Any], root: str, unknown: list[str]) -> list[str]:
    """What the tasks of one mise config run, and the directories and files of tasks
    `[task_config] includes` adds (a file of tasks: what they run too)."""
    words = _tasks(name, _table(data, "tasks"), unknown)
    for included in _strings(_table(data, "task_config").get("includes")):
        words.append(included)
        if included.endswith(".toml"):
            path = os.path.join(root, included)
            words += _tasks(included, _parsed(_text(path), included, unknown), unknown)
    return words


def _rooted(value: str, root: str) -> str:
    """A mise value with `{{config_root}}` put in, as mise reads it."""
    import re

    return re.sub(CONFIG_ROOT, root.replace("\\", "\\\\"), value)


def mise_task_files(root: str, unknown: list[str]) -> list[str]:
    """What the tasks of `root`'s mise configs run, and the file tasks' directories: a git
    hook that runs `mise run TASK` (`mise generate git-pre-commit`'s) runs them at every
    `git commit` (r72a MISEHOOK)."""
    words = list(MISE_TASK_DIRS)
    for name in _mise_files(root):
        path = os.path.join(root, name)
        if os.path.isfile(path):
            words += _task_words(name, _parsed(_text(path), name, unknown), root, unknown)
    _unplaced("mise", words, unknown)
    return [p for w in words if (p := _placed(root, w)) is not None]


def _placed(base: str, word: str) -> str | None:
    word = word.strip("\"'")
    if not word or "$" in word or "`" in word or "://" in word or "{{" in word:
        return None
    return os.path.normpath(os.path.join(base, os.path.expanduser(word)))


def _mise_files(root: str) -> list[str]:
    names = list(MISE_FILES)
    try:
        listed = os.listdir(root)
    except OSError:
        listed = []
    names += [n for n in listed for p in MISE_PATTERNS if name_matches(n, p)]
    # (every name mise reads, whatever MISE_ENV is now: `.config/mise.local.toml`,
    # `mise/config.<env>.toml`, ...: r71a MISELOCAL, what one named was not kept)
    for directory, patterns in MISE_NESTED_PATTERNS:
        try:
            inside = sorted(os.listdir(os.path.join(root, directory)))
        except OSError:
            continue
        names += [f"{directory}/{n}" for n in inside for p in patterns if name_matches(n, p)]
    for directory in MISE_CONF_DIRS:
        try:
            names += [f"{directory}/{n}" for n in sorted(os.listdir(os.path.join(root, directory)))
                      if n.endswith(".toml")]  # fmt: skip
        except OSError:
            continue
    return list(dict.fromkeys(names))


def _own_mise_dir() -> str:
    return os.environ.get("MISE_CONFIG_DIR") or os.path.join(
        os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config"), "mise"
    )


def _own_mise() -> str:
    """Your own mise config's text (its settings apply in every project)."""
    return _text(os.path.join(_own_mise_dir(), "config.toml")) or ""


def own_mise(root: str) -> tuple[list[str], list[str], list[str]]:
    """What your own mise configs (and the system's) have the host run in the writable root
    `root`: they apply in every directory (see referenced)."""
    from corral.sandbox.protect.direnv import Referenced

    base = _own_mise_dir()
    files = [os.path.join(base, "config.toml"), "/etc/mise/config.toml"]
    try:
        conf_d = os.path.join(base, "conf.d")
        files += [os.path.join(conf_d, n) for n in sorted(os.listdir(conf_d))
                  if n.endswith(".toml")]  # fmt: skip
    except OSError:
        pass
    env_found = Referenced(root)
    unknown: list[str] = []
    found = [*_mise(root, env_found, unknown, files), *env_found.paths]
    inside = [p for p in dict.fromkeys(found) if p == root or p.startswith(root + os.sep)]
    module_dirs = [d for d in env_found.module_dirs if d.startswith(root + os.sep)]
    return inside, module_dirs, list(dict.fromkeys([*unknown, *env_found.unknown]))


def _venv_auto(text: str) -> bool:
    """`python.uv_venv_auto = true` (and its spellings): mise puts the project's .venv/bin
    first on PATH."""
    return any(
        "venv_auto" in line and "true" in line.split("#", 1)[0] for line in text.splitlines()
    )


def _tool_dir(root: str, version: str) -> list[str]:
    """`path:./tc`: a directory whose bin goes first on PATH."""
    place = _placed(root, version.split(":", 1)[1]) if version.startswith("path:") else None
    return [place, os.path.join(place, "bin")] if place else []


def _mise(
    root: str, env_found: Referenced, unknown: list[str], files: list[str] | None = None
) -> list[str]:
    """What the mise configs of the directory `root` run (`files`: those configs instead,
    as paths, read as applying in `root`: your own)."""
    from corral.sandbox.protect import direnv

    found: list[str] = []
    own_auto: bool | None = None  # your own config's venv_auto, read once if needed
    configs = []
    for name in files if files is not None else _mise_files(root):
        if os.path.isfile(os.path.join(root, name)):
            import re  # (only where mise is used: `corral run` imports little)

            text = _text(os.path.join(root, name)) or ""
            configs.append((name, text, _parsed(text, name, unknown)))
            if files is not None and re.search(CWD, text):
                unknown.append(f"{name}: {{{{cwd}}}}, which is wherever you are")
    # a hook in one file may run a task of another (mise.toml's hook, mise.local.toml's task)
    hooked = any(data.get("hooks") for _, _, data in configs)
    for name, text, data in configs:
        words: list[str] = []
        env = data.get("env")
        for table in env if isinstance(env, list) else [env]:  # `[[env]]` too
            # ordinary variables, as an .envrc's (`NODE_OPTIONS = "--require ./x.js"`,
            # `BASH_ENV`, `PYTHONPATH`), a table's `value` too
            for key, value in (table or {}).items() if isinstance(table, dict) else ():
                if key != "_":
                    given = value.get("value") if isinstance(value, dict) else value
                    for one in _strings(given):
                        one = _rooted(one, root)
                        direnv.assignment(key, one, root, env_found)
            directives = _table(table, "_")
            unknown += [f"{name}: [env] _.{k}" for k in directives if k not in MISE_DIRECTIVES]
            for key in ("source", "file", "path"):
                words += _strings(directives.get(key))
            for env_file in _strings(directives.get("file")):  # its variables too
                env_file = _rooted(env_file, root)
                _env_file(os.path.join(root, env_file), root, env_found, unknown)
            for script in _strings(directives.get("source")):
                # (a bash script mise sources at every prompt: read as an .envrc, what it
                # exports too, r75a MISESOURCE: its PATH and GIT_CONFIG_* were not; its path
                # as mise reads it, `{{config_root}}/...` too, r76a MISESOURCETPL)
                script = _rooted(script, root)
                if "{{" in script:
                    unknown.append(f"{name}: [env] _.source = {script}")
                    continue
                path = os.path.join(root, script)
                if not os.path.isfile(path):
                    unknown.append(f"{name}: [env] _.source = {script}, which is not there")
                    continue
                direnv.read_script(path, root, env_found)
            venv = _table(directives, "python").get("venv")
            words += [os.path.join(v, "bin") for v in _strings(venv) if not v.isdigit()]
        # `{{ exec(command='sh tools/gen.sh') }}`, in any value of any table ([vars] too);
        # one whose command is not a plain string (`config_root ~ '/x.sh'`) is not read
        for match in re.finditer(EXEC, text):
            words += _commands(name, [match.group(2)], unknown)
        if len(re.findall(r"\bexec\s*\(", text)) > len(re.findall(EXEC, text)):
            unknown.append(f"{name}: an exec() whose command is built")
        # `env_file` (a setting, top-level in older versions): a dotenv file mise loads
        for env_file in [*_strings(_table(data, "settings").get("env_file")),
                         *_strings(data.get("env_file"))]:  # fmt: skip
            words.append(env_file)
            _env_file(os.path.join(root, env_file), root, env_found, unknown)
        hooks = list(_table(data, "hooks").values())
        words += _commands(name, [c for v in hooks for c in _hook_lines(v)], unknown)
        for entry in data.get("watch_files") or []:  # `[[watch_files]] run`: at the prompt
            run = entry.get("run") if isinstance(entry, dict) else None
            words += _commands(name, list(_strings(run)), unknown)
        if hooked:
            # a hook may name a task (`enter = { task = "setup" }`): what tasks run, too,
            # the file tasks' directories and those `[task_config] includes` adds
            words += [*_task_words(name, data, root, unknown), *MISE_TASK_DIRS]
            unknown += [f"{name}: [task_config] {k}" for k in _table(data, "task_config")
                        if k != "includes"]  # fmt: skip
        if own_auto is None:
            own_auto = _venv_auto(_own_mise())
        if own_auto or _venv_auto(text):
            words.append(".venv/bin")  # mise activates the project's .venv by itself
        for tool, spec in _table(data, "tools").items():
            # `node = "20"`, `"path:./tc"`, or a table: `postinstall` runs at `mise install`
            options = spec if isinstance(spec, dict) else {}
            words += _commands(name, list(_strings(options.get("postinstall"))), unknown)
            unknown += [f"{name}: [tools] {tool}.{k}" for k in options
                        if k not in ("version", "os", "postinstall")]  # fmt: skip
            for version in _strings(options.get("version", spec)):
                version = _rooted(version, root)
                if "{{" in version:
                    unknown.append(f"{name}: [tools] {tool} = {version}")
                found += _tool_dir(root, version)
        for key, value in data.items():  # `[[watch_files]] run`, and what mise adds next
            if key not in MISE_NOT_SWEPT and key != "env":
                words += [w for one in _strings(value) for w in _words(one)]
        words = [_rooted(w, root) for w in words]
        _unplaced(name, words, unknown)
        found += [p for w in words if (p := _placed(root, w)) is not None]
    versions = _text(os.path.join(root, ".tool-versions")) or ""
    for line in versions.splitlines():
        for version in line.split("#", 1)[0].split()[1:]:
            found += _tool_dir(root, version)
    return found


def _cargo_file(
    root: str, path: str, found: list[str], depth: int, env_found: Referenced,
    unknown: list[str],
) -> None:  # fmt: skip
    from corral.sandbox.protect import direnv

    data = _toml(path, unknown)
    build = _table(data, "build")
    programs = [v for k in CARGO_PROGRAMS for v in _strings(build.get(k))]
    flags = [*_strings(build.get("rustflags"))]
    for table in (_table(data, "host"), *_table(data, "target").values()):
        if isinstance(table, dict):
            programs += [*_strings(table.get("linker")), *_strings(table.get("runner"))]
            flags += _strings(table.get("rustflags"))
    for flag in (w for f in flags for w in f.split()):  # `-C linker=tools/ld.sh`
        if flag.startswith(("linker=", "-Clinker=")):
            programs.append(flag.split("=", 1)[1])
    # cargo reads a value with a `/` against the directory holding .cargo
    found += [p for w in programs if "/" in w and (p := _placed(root, w)) is not None]
    # `[env] CC = { value = "tools/cc.sh", relative = true }`: for build scripts and rustc
    for key, value in _table(data, "env").items():
        given = value.get("value") if isinstance(value, dict) else value
        for one in _strings(given):
            direnv.assignment(key, one, root, env_found)
    # any other value with a `/` ([alias], [registries], what cargo adds next)
    swept = [w for k, v in data.items() if k not in ("env", "include") for one in _strings(v)
             for w in _words(one)]  # fmt: skip
    found += [p for w in swept if (p := _placed(root, w)) is not None]
    _unplaced(os.path.relpath(path, root), [*programs, *swept], unknown)
    for included in _strings(data.get("include")):  # relative to the including file
        target = _placed(os.path.dirname(path), included)
        if target is not None and target not in found:
            found.append(target)
            if depth < MAX_DEPTH:
                _cargo_file(root, target, found, depth + 1, env_found, unknown)
            else:
                unknown.append(f"{path}: include {included}, {MAX_DEPTH} files deep")


def _cargo(root: str, env_found: Referenced, unknown: list[str]) -> list[str]:
    found: list[str] = []
    for name in CARGO_FILES:
        _cargo_file(root, os.path.join(root, name), found, 0, env_found, unknown)
    for name in RUSTUP_FILES:
        text = _text(os.path.join(root, name))
        if text is not None and "[" not in text:
            continue  # the old plain `rust-toolchain`: a channel's name
        toolchain = _table(_parsed(text, name, unknown), "toolchain")
        found += [p for w in _strings(toolchain.get("path")) if (p := _placed(root, w))]
    return found


def _hgrc_values(text: str) -> Iterator[tuple[str, str, str]]:
    """(section, key, value) of an hgrc, continuation lines joined; `%include` as a
    ("%include", "", file) entry."""
    section, key, value = "", "", ""
    for line in [*text.removeprefix("\ufeff").splitlines(), "[end]"]:
        if line.startswith(("#", ";")):
            continue  # (a comment, also between a value's continued lines)
        if line[:1].isspace() and key:
            value += "\n" + line.strip()  # (as Mercurial joins them: a hook's next command)
            continue
        if key:
            yield section, key, value
            key = ""
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        if stripped.startswith("%include"):
            yield "%include", "", stripped[len("%include") :].strip()
        elif stripped.startswith("[") and "]" in stripped:  # (`[hooks]  ; a comment`)
            section = stripped[1 : stripped.index("]")].strip()
        elif "=" in stripped:
            key, _, value = (s.strip() for s in stripped.partition("="))


def _hgrc(root: str, path: str, found: list[str], depth: int, unknown: list[str]) -> None:
    text = _text(path)
    if text is None:
        return
    for section, _, value in _hgrc_values(text):
        words: list[str] = []
        if section == "%include":
            target = _placed(os.path.dirname(path), value)
            if target is not None and target not in found:
                found.append(target)
                if depth < MAX_DEPTH:
                    _hgrc(root, target, found, depth + 1, unknown)
                else:
                    unknown.append(f"{path}: %include {value}, {MAX_DEPTH} files deep")
            continue
        name = os.path.relpath(path, root)
        if section == "hooks":
            if value.startswith("python:"):  # python:hooks/check.py:hook
                words.append(value[len("python:") :].rsplit(":", 1)[0])
            else:  # a shell command: `make -s env` runs the Makefile (unknown)
                words += _commands(name, [value], unknown)
        elif section == "extensions" and value and not value.startswith("!"):
            if "/" in value and not os.path.isabs(os.path.expanduser(value)):
                # hg takes a relative path from the directory it runs in: any directory's
                unknown.append(f"{name}: [extensions] {value}, relative to where hg runs")
            words.append(value)
        elif section == "alias" and value.startswith("!"):  # a shell alias: as a hook
            words += _commands(name, [value[1:]], unknown)
        else:  # `[ui] editor`, `[merge-tools] m.executable`, ...
            words += _words(value)
        found += [p for w in words if (p := _placed(root, w)) is not None]
        _unplaced(name, words, unknown)


def _mercurial(root: str, unknown: list[str]) -> list[str]:
    found: list[str] = []
    for name in HGRC_FILES:
        _hgrc(root, os.path.join(root, name), found, 0, unknown)
    return found


LUARC_FILES = (".luarc.json", ".luarc.jsonc")


def _luarc(root: str, unknown: list[str]) -> list[str]:
    """The plugin files lua-language-server runs when a Lua file of the project is opened
    (`runtime.plugin`, flat or nested, with or without the `Lua.` prefix). A config it
    cannot read (comments or trailing commas aside) is unknown."""
    found: list[str] = []
    for name in LUARC_FILES:
        path = os.path.join(root, name)
        text = _text(path) if os.path.lexists(path) else None
        if text is None:
            continue
        import json
        import re

        # JSONC: comments outside strings, trailing commas
        cleaned = re.sub(
            r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text, flags=re.S
        )
        cleaned = re.sub(r",(\s*[}\]])", r"\1", cleaned)
        try:
            data = json.loads(cleaned)
        except ValueError:
            unknown.append(f"{path}: cannot be read whole")
            continue
        if not isinstance(data, dict):
            continue
        values = [data.get(k) for k in ("runtime.plugin", "Lua.runtime.plugin")]
        for outer in (data, _table(data, "Lua")):
            values.append(_table(outer, "runtime").get("plugin"))
        for value in values:
            for word in _strings(value):
                placed = _placed(root, word)
                if placed is None:
                    unknown.append(f"{path}: runtime.plugin {word!r}")
                else:
                    found.append(placed)
    return found


def referenced(root: str, bound: str = "") -> tuple[list[str], list[str], list[str]]:
    """(the files and directories its mise, cargo, rustup and Mercurial configs have the host
    run, read or put on PATH; the directories they put on PYTHONPATH; what they do that
    cannot be read ahead), inside the writable root `root` (or `bound`, a writable root
    above `root`: configs of a directory below the top, see nested)."""
    from corral.sandbox.protect.direnv import Referenced

    env_found = Referenced(bound)
    unknown: list[str] = []
    found = [
        *_mise(root, env_found, unknown), *_cargo(root, env_found, unknown),
        *_mercurial(root, unknown), *_luarc(root, unknown), *env_found.paths,
    ]  # fmt: skip
    bound = bound or root
    inside = [p for p in dict.fromkeys(found) if p == bound or p.startswith(bound + os.sep)]
    module_dirs = [d for d in env_found.module_dirs if d.startswith(bound + os.sep)]
    return inside, module_dirs, list(dict.fromkeys([*unknown, *env_found.unknown]))
