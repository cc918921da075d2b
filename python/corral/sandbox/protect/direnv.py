"""direnv: the work-tree files a `.envrc` has the host's shell run or read.

`.envrc` itself is a protected name, but direnv runs it at the next prompt in the directory,
and what it runs from there is as dangerous: `source_env .envrc.local`, `dotenv` (it sets
variables such as PROMPT_COMMAND or BASH_ENV), `use flake` (Nix evaluates flake.nix), and
whatever it puts first on PATH: `PATH_add bin`, `layout node` (node_modules/.bin),
`export PATH="$PWD/tools:$PATH"` (the next `ls` typed at that prompt runs tools/ls). The
paths those commands name, relative to the `.envrc`, are protected like it, wherever they
stand in the script (after `then`, in a `{ }` group, behind `&&`).

Any other command it runs (`./scripts/env.sh`, `bash tools/setup.sh`,
`eval "$(python3 tools/gen.py)"`) has the files it names protected too. What cannot be known
before direnv runs (what such a command reaches, a path built from a variable other than $PWD,
a layout or `use` corral does not know, PATH changed any other way) is unknown: it holds every
change set for review (see Resolution._unreadable), never guessed at. The script is read as
bash reads it (shellwords).
"""

from __future__ import annotations

import os

from corral.paths import read_regular

MAX_BYTES = 64 * 1024
NAME = ".envrc"

# command -> the files it reads when given no argument (None: an argument is needed)
SOURCES: dict[str, tuple[str, ...] | None] = {
    "source_env": None,
    "source_env_if_exists": None,
    "source": None,
    ".": None,
    "dotenv": (".env",),
    "dotenv_if_exists": (".env",),
    "PATH_add": None,
    "path_add": None,
    "MANPATH_add": None,
    "load_prefix": None,
}
SINGLE = ("source", ".", "dotenv")  # commands that read their first argument only
USE = {
    "flake": ("flake.nix", "flake.lock"),
    "nix": ("shell.nix", "default.nix"),
    "mise": (),  # mise's own configs: read by toolconfigs
    "node": (),  # a version from .node-version or .nvmrc (protected names), outside
    "nvm": (),  # (the same, through nvm)
}
# direnv's stdlib layouts: the directories they put on PATH, relative to the .envrc
LAYOUTS = {
    "node": ("node_modules/.bin",),
    "python": (".direnv",),
    "python2": (".direnv",),
    "python3": (".direnv",),
    "pyenv": (".direnv",),
    "anaconda": (".direnv",),
    "go": ("bin", ".direnv"),  # (.direnv/go/bin since direnv 2.28)
    "ruby": (".direnv", "bin"),  # (.direnv/ruby-VERSION/bin, and .direnv/bin)
    "perl": (".direnv",),
    "php": ("vendor/bin",),
    "julia": (".direnv",),
    "poetry": (".venv",),  # (in-project venvs; others live outside the workspace)
    "pipenv": (".venv",),
    "uv": (".venv",),
}
# direnv's stdlib and shell builtins that run nothing of the project's
HARMLESS = frozenset(
    {"watch_file", "watch_dir", "log_status", "log_error", "strict_env", "unstrict_env", "has",
     "echo", "printf", "true", "false", ":", "unset", "env_vars_required", "direnv_version",
     "set", "shopt", "[", "test", "mkdir",
     # the nearest .envrc above: every directory above a root is read (see nested)
     "source_up", "source_up_if_exists"}
)  # fmt: skip
INTERPRETERS = frozenset(
    {"sh", "bash", "zsh", "dash", "python", "python3", "node", "ruby", "perl", "deno", "bun",
     "eval", "exec"}
)  # fmt: skip
PWD_SPELLINGS = ("$PWD/", "${PWD}/", '"$PWD"/', "$(pwd)/", "`pwd`/")
# what the shell expands in a word: a variable, a command, a glob, a brace list
EXPANDED = frozenset("$`*?[{")


def expands(word: str) -> bool:
    """Whether the shell (or mise's templates) would turn `word` into something else, which
    cannot be read ahead: `$X/bin`, `packages/*/bin`, `{scripts,bin}`, a control character."""
    return any(c in EXPANDED or c < " " or c == "\x7f" for c in word)


HOME_SPELLINGS = ("$HOME/", "${HOME}/")


def _path_entries(
    value: str, base: str, relative_unknown: bool = False
) -> tuple[list[str], list[str]]:
    """(directories in the workspace, unknown entries) of a PATH value set by the .envrc.
    With `relative_unknown`, an entry left relative (`./node_modules/.bin`: the shell looks
    there from wherever you are, in any directory) is unknown."""
    found, unknown = [], []
    for part in value.split(":"):
        if part in ("$PATH", "${PATH}", ""):
            continue
        anchored = os.path.isabs(os.path.expanduser(part))
        for spelling in PWD_SPELLINGS:
            if part.startswith(spelling):
                part = part[len(spelling) :]
                anchored = True
                break
        if expands(part) or (relative_unknown and not anchored):
            unknown.append(part)
        else:  # (an absolute one outside the writable roots is dropped by the caller)
            found.append(os.path.normpath(os.path.join(base, os.path.expanduser(part))))
    return found, unknown


# Node's options that load a module at every start (NODE_OPTIONS): a path, or a package
NODE_LOADERS = ("--require", "-r", "--import", "--loader", "--experimental-loader")


def loaded_modules(value: str) -> list[str]:
    """What `--require X` / `--import X` in a variable's value loads: a path (`./x.js`), or a
    package of the project's node_modules (`source-map-support/register`: its directory)."""
    words = value.replace('"', " ").replace("'", " ").split()
    found: list[str] = []
    for i, word in enumerate(words):
        flag, eq, rest = word.partition("=")
        if flag not in NODE_LOADERS:
            continue
        target = rest if eq else (words[i + 1] if i + 1 < len(words) else "")
        if not target or "://" in target:
            continue
        if target.startswith((".", "/", "~")):
            found.append(target)
        else:
            parts = target.split("/")
            found.append(os.path.join("node_modules", *parts[: 2 if target.startswith("@") else 1]))
    return found


def path_words(words: list[str]) -> tuple[str, ...]:
    """The words of a command (and of command substitutions inside them) that name a file:
    a word with a `/` in it (not an option, not a URL), and what an interpreter is given."""
    tokens: list[str] = []
    for word in words:
        tokens += word.replace("$(", " ").replace("(", " ").replace(")", " ").split()
    found: list[str] = []
    for i, token in enumerate(tokens):
        if "://" in token:
            continue
        if token.startswith("-"):
            # an option's own value: `--require=./tools/trace.js`, `-javaagent:tools/a.jar`
            value = token.split("=", 1)[1] if "=" in token else token.partition(":")[2]
            if "/" in value:
                found.append(value)
            continue
        after_interpreter = i > 0 and os.path.basename(tokens[i - 1]) in INTERPRETERS
        if "/" in token or after_interpreter:
            found.append(token)
    return tuple(found)


# commands an .envrc runs whose reach is known: what they read is protected by name (.nvmrc,
# .node-version, mise's configs), and they put nothing of the workspace on PATH
KNOWN_COMMANDS = frozenset({("nvm", "use"), ("nvm", "install"), ("mise", "install")})


def command_reach(line: str) -> tuple[list[str], list[str]]:
    """(the files a command line that a tool runs for you names, what it runs that cannot be
    read ahead): a mise or Mercurial hook, a task a hook runs, a `!` alias. A script given by
    path (`./tools/x.sh`, `sh tools/x.sh`) is named; a program found on PATH (`make -s env`,
    `npm run x`) reads what it likes of the workspace (a Makefile, package.json), and inline
    code (`python -c`) is not read: both are unknown."""
    named: list[str] = []
    unknown: list[str] = []
    from corral.sandbox.protect import shellwords

    script = shellwords.parse(line)
    unknown += script.unknown
    for words in _split_assignments(script.commands):
        if _assignment(words[0]):
            continue
        program = words[0]
        named += [w for w in path_words(words) if not expands(w)]
        if program in HARMLESS or tuple(words[:2]) in KNOWN_COMMANDS:
            continue
        if os.path.basename(program) in INTERPRETERS and program not in ("eval", "exec"):
            rest = [w for w in words[1:] if not w.startswith("-")]
            if rest and len(rest) == len(words) - 1 and not expands(rest[0]):
                named.append(rest[0])  # `sh tools/setup.sh`: the script, kept
                continue
        elif "/" in program and not expands(program):
            continue  # `./tools/x.sh`: kept (what it runs in turn is not read)
        unknown.append(" ".join(words)[:60])
    return named, unknown


MAX_DEPTH = 4  # files sourced from files sourced from the .envrc
# variables naming a directory whose programs or modules a shell at that prompt takes first
VENV_VARIABLES = ("VIRTUAL_ENV", "CONDA_PREFIX")
MODULE_VARIABLES = ("PYTHONPATH",)


class Referenced:
    """What a `.envrc` has the host's shell run, read or look in."""

    __slots__ = ("bound", "module_dirs", "names", "paths", "unknown")

    def __init__(self, bound: str = "") -> None:
        self.bound = bound  # the writable root (the .envrc's directory when "")
        self.paths: list[str] = []  # kept like the .envrc
        self.module_dirs: list[str] = []  # on PYTHONPATH: no start-up or shadowing module
        self.unknown: list[str] = []  # what cannot be followed, for status
        # names held at any depth, as sandbox.policy.protected's (`*.nix` where Nix evaluates
        # the project: a flake reads any .nix file of its tree, and a shellHook is shell code)
        self.names: list[str] = []


def _assignment(word: str) -> bool:
    name, eq, _ = word.partition("=")
    return bool(eq) and name.isidentifier()


def _split_assignments(commands: list[list[str]]) -> list[list[str]]:
    """Each assignment as a command of its own, and a command after assignments that prefix
    it (`VIRTUAL_ENV_DISABLE_PROMPT=1 source .venv/bin/activate`) read as that command."""
    out: list[list[str]] = []
    for words in commands:
        words = [_appended(w) for w in words[:1]] + words[1:]
        while words and _assignment(words[0]):
            out.append([words[0]])
            words = [_appended(w) for w in words[1:2]] + words[2:]
        if words:
            out.append(words)
    return out


def _appended(word: str) -> str:
    """`NAME+=value` as what it means: `NAME=$NAME` + value (`PATH+=":./bin"`)."""
    name, plus, value = word.partition("+=")
    if plus and name.isidentifier() and "=" not in name:
        return f"{name}=${name}{value}"
    return word


# variables whose value a runtime loads code from at every start: a directory they name is
# kept whole (`PERL5OPT=-Itools`, `RUBYLIB=lib`), a file even before it exists
LOADER_VARIABLES = frozenset({
    "NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB",
    "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH", "LD_PRELOAD",
    "LD_LIBRARY_PATH", "BASH_ENV", "ENV", "PYTHONSTARTUP", "PYTHONUSERBASE", "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
    "LUA_INIT", "LUA_INIT_5_1", "LUA_INIT_5_2", "LUA_INIT_5_3", "LUA_INIT_5_4", "LUA_PATH",
    "LUA_CPATH", "LUA_PATH_5_4", "LUA_CPATH_5_4", "GIT_CONFIG_PARAMETERS",
})  # fmt: skip


# a variable naming where tools write, not where they read code or config, by how its name
# ends (XDG_CACHE_HOME is not one: pre-commit keeps the hooks it runs there; nor any XDG_
# name: XDG_DATA_DIRS is where Neovim finds plugins)
SCRATCH = ("TMPDIR", "TMP", "TEMP", "TEMPDIR", "TARGET_DIR", "LOG_DIR", "LOGDIR", "LOGS_DIR",
           "DATA_DIR", "OUT_DIR", "OUTPUT_DIR", "BUILD_DIR")  # fmt: skip
# a variable whose name says a tool looks there (GOPATH, XDG_CONFIG_HOME, ZDOTDIR, PREFIX,
# PYENV_ROOT, npm_config_prefix): naming the whole workspace, every file written there could
# be read (see Resolution); any case
LOOKS_IN = ("PATH", "HOME", "DIR", "DIRS", "PREFIX", "ROOT", "RC", "CONFIG", "LIB", "OPT",
            "CWD", "PROJECT")  # fmt: skip
# ... but these only name the workspace for the project's own scripts
NAMES_THE_WORKSPACE = frozenset({
    "PROJECT_ROOT", "PROJECT_DIR", "REPO_ROOT", "REPO_DIR", "WORKSPACE_ROOT", "WORKSPACE_DIR",
    "ROOT_DIR", "APP_ROOT", "APP_DIR", "PRJ_ROOT", "TOP_DIR", "TOPDIR", "SRC_ROOT",
})  # fmt: skip


def looks_in(variable: str) -> bool:
    """Whether a tool may read what is in the directory `variable` names (see LOOKS_IN)."""
    name = variable.upper()
    return name.endswith(LOOKS_IN) and name not in NAMES_THE_WORKSPACE


PUNCTUATION = str.maketrans({c: " " for c in "\"',|;&<>"})


def candidates(value: str) -> list[str]:
    """The words of a variable's value that may name a file: each word, the part after an
    option's `=` or `:` (`-javaagent:agent.jar`), after a one-letter option (`-Itools`,
    `-r./x.rb`), and each entry of a `:` list."""
    found: list[str] = []
    # (shell punctuation ends a path too: `LESSOPEN=|tools/lesspipe.sh %s`,
    # `PROMPT_COMMAND=tools/ps1.sh;history -a`)
    for word in value.translate(PUNCTUATION).split():
        if word.startswith("@"):
            word = word[1:]  # `LUA_INIT=@init.lua`: the file it runs
        found += word.split(":") if not word.startswith("-") else []
        if word.startswith("-"):
            _, sep, rest = word.partition("=")
            if not sep:
                _, sep, rest = word.partition(":")
            if sep:
                found += [rest, rest.partition("=")[0]]  # `-javaagent:a.jar=conf`
            if len(word) > 2 and word[1] != "-":
                found.append(word[2:])  # `-Itools`, `-MTrace`, `-r./x.rb`
    return [f for f in found if f and "://" not in f]


def without_itself(variable: str, value: str) -> str:
    """`value` without the variable's own earlier value in it (`src:$NODE_PATH`,
    `"$NODE_OPTIONS --require x"`): what it adds is what is read."""
    if "$" not in value:
        return value.strip(": ")  # (the environment's values: no `re` to import)
    import re

    own = re.escape(variable)
    return re.sub(rf"(^|(?<=[:\s]))\$(\{{{own}\}}|{own}\b)(:|(?=\s)|$)", "", value).strip(": ")


# variables naming where git or a hook manager finds its config or hooks (GIT_CONFIG* too)
CONFIG_VARIABLES = frozenset({
    "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_TEMPLATE_DIR", "GIT_EXEC_PATH",
    "LEFTHOOK_CONFIG", "PRE_COMMIT_CONFIG", "HUSKY_GIT_HOOKS", "HK_FILE", "HK_CONFIG_DIR",
})  # fmt: skip


def assignment(
    variable: str, value: str, base: str, found: Referenced, corral_env: bool = False
) -> None:
    """What one assignment of an .envrc, a dotenv file or mise's [env] has the next prompt
    run, load or look in: PATH entries, PYTHONPATH (where no start-up module is taken), a
    venv's bin, what Node's loaders name, every word that names a file of the project, and
    for the variables a runtime loads code from, the directories they name too
    (`GIT_CONFIG_VALUE_0=hooks` with `GIT_CONFIG_KEY_0=core.hooksPath`: any git value)."""
    value = without_itself(variable, value.strip().strip("\"'"))
    if (variable.startswith("GIT_CONFIG") and not corral_env) or variable in CONFIG_VARIABLES:
        # git's config (`GIT_CONFIG_KEY_0=core.hooksPath`) or a hook manager's config file
        # given at the prompt: what they have git run is not read here (r74a ENVHOOKSPATH,
        # LHENVCONFIG: the hooks' scripts were rewritten and ran); `corral_env`: the environment
        # corral runs in, whose git config gitguard reads as a file
        found.unknown.append(f"{variable}, which sets what git or a hook manager runs")
    if variable in ("PATH", "MANPATH") or variable in VENV_VARIABLES + MODULE_VARIABLES:
        dirs, odd = _path_entries(value, base, relative_unknown=variable == "PATH")
        if variable in VENV_VARIABLES:
            found.paths += [os.path.join(d, "bin") for d in dirs]
        elif variable in MODULE_VARIABLES:
            found.module_dirs += dirs
        else:
            found.paths += dirs
        own = (f"${variable}", f"${{{variable}}}")  # `src:$PYTHONPATH`
        found.unknown += [f"{variable} entry {o}" for o in odd if o not in own]
        return
    loader = variable in LOADER_VARIABLES or variable.startswith("GIT_CONFIG_VALUE_")
    names = [*path_words([value]), *loaded_modules(value), *candidates(value)]
    for name in dict.fromkeys(names):
        name = next((name[len(p) :] for p in PWD_SPELLINGS if name.startswith(p)), name)
        for spelling in HOME_SPELLINGS:
            if name.startswith(spelling):
                name = "~/" + name[len(spelling) :]
        if expands(name):
            # a path built at run time (`${ROOT}/tools/x.js`, mise's `{{ env.X }}`): where it
            # leads cannot be read ahead
            if loader or "/" in name:
                found.unknown.append(f"{variable}={value[:60]}")
            continue
        path = os.path.normpath(os.path.join(base, os.path.expanduser(name)))
        bound = found.bound or base
        if path != bound and not path.startswith(bound + os.sep):
            continue
        if path == bound and not (loader or looks_in(variable)):
            continue  # `PROJECT_ROOT=$PWD`: a name for the workspace, not a place to look
        # Any variable may be read by some host program (`XDG_CONFIG_HOME=conf` moves git's
        # config): a file or directory of the project it names is kept, and for one a
        # runtime loads code from, a path even before it exists. A directory for scratch
        # (TMPDIR, CARGO_TARGET_DIR, LOG_DIR) is where tools write: kept, nothing builds.
        name_up = variable.upper()
        if (
            os.path.isdir(path)
            and not loader
            and not name_up.startswith("XDG_")
            and (name_up.endswith(SCRATCH))
        ):
            continue
        if os.path.lexists(path) or "/" in name.rstrip("/"):
            found.paths.append(path)
        elif loader and "." in name:
            found.paths.append(path)  # (`tools.rb`, `agent.jar`: loaded once it exists)


def _text(path: str) -> str:
    """A script's text, its first MAX_BYTES; "" when it cannot be read."""
    try:
        return read_regular(path, MAX_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""


def read_dotenv(path: str, base: str, found: Referenced) -> None:
    """A `.env` direnv's dotenv loads: its assignments count as the .envrc's
    (`PYTHONPATH=src`, `VIRTUAL_ENV=.venv`, `BASH_ENV=...`)."""
    for line in _text(path).splitlines():
        line = line.strip()
        if line.startswith("export") and line[6:7].isspace():
            line = line[6:].strip()
        # direnv's dotenv takes `KEY=value`, `KEY = value` and `KEY: value`
        cut = min((i for i in (line.find("="), line.find(":")) if i > 0), default=-1)
        variable = line[:cut].strip() if cut > 0 else ""
        if variable.isidentifier():
            assignment(variable, line[cut + 1 :].strip(), base, found)


def referenced(envrc: str, bound: str = "") -> Referenced:
    """What the `.envrc` at `envrc` runs, reads or puts on PATH or PYTHONPATH, and the files
    it sources (theirs too, a few levels deep); empty when it cannot be read. `bound`: the
    writable root holding it, when that is above its directory."""
    found = Referenced(bound)
    _read(envrc, os.path.dirname(envrc), found, 0)
    found.paths = list(dict.fromkeys(found.paths))
    return found


def _substituted(words: list[str], assigned: dict[str, str]) -> list[str]:
    """`words` with the script's own simple assignments put in (`export GOPATH=$PWD` then
    `PATH_add $GOPATH/bin`); what is not known stays as it is (and is then unknown)."""
    out = []
    for word in words:
        for variable, value in assigned.items():
            word = word.replace("${" + variable + "}", value)
            word = word.replace("$" + variable + "/", value + "/")
            if word.endswith("$" + variable):
                word = word[: -len(variable) - 1] + value
        out.append(word)
    return out


# commands that set variables in ways the script's text does not show
CHANGES_VARIABLES = frozenset({"dotenv", "dotenv_if_exists", "source", ".", "source_env",
                               "source_env_if_exists", "source_up", "source_up_if_exists",
                               "load_prefix", "eval", "read", "export_function"})  # fmt: skip


def _fixed(
    branching: bool, commands: list[list[str]], base: str, given: dict[str, str]
) -> dict[str, str]:
    """The script's variables whose value its text fixes: each assigned once, in a script
    with no branch and nothing else that sets variables (a dotenv, a sourced file), and from
    a value with nothing left to expand once `given` (PWD, HOME) and the earlier ones are put
    in (`export APP=$PWD`, `BIN=tools/bin`). Any other is left as `$NAME`: unknown where it
    makes a path."""
    if branching or any(c[0] in CHANGES_VARIABLES for c in commands):
        return {}
    seen: dict[str, int] = {}
    values: dict[str, str] = {}
    for command in commands:
        if len(command) == 1 and _assignment(command[0]):
            variable, _, value = command[0].partition("=")
            seen[variable] = seen.get(variable, 0) + 1
            value = _substituted([value], {**given, **values})[0]
            if not expands(value):
                values[variable] = value if os.path.isabs(value) else os.path.join(base, value)
    return {v: values[v] for v in values if seen[v] == 1}


def _git_top(directory: str) -> str:
    """The top of the git work tree holding `directory` (where `git rev-parse
    --show-toplevel` answers), or "" when there is none."""
    current = directory
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return ""
        current = parent


def read_script(path: str, base: str, found: Referenced) -> None:
    """A shell script the prompt sources as an .envrc is read (mise's `_.source`): what it
    exports, runs and names (r75a MISESOURCE)."""
    _read(path, base, found, 1)


def _read(path: str, base: str, found: Referenced, depth: int) -> None:
    unknown = found.unknown
    try:
        if os.path.getsize(path) > MAX_BYTES:
            unknown.append(f"{path}: longer than {MAX_BYTES // 1024} KiB")
    except OSError:
        pass
    from corral.sandbox.protect import shellwords

    text = _text(path)
    for spelling in ("$(pwd)", "`pwd`"):
        text = text.replace(spelling, "$PWD")
    top = _git_top(base)  # (a package of a monorepo: its top is above)
    if top:
        text = text.replace("$(git rev-parse --show-toplevel)", top)
    script = shellwords.parse(text)  # (bash's reading: see shellwords)
    unknown += [f"{path}: {u}" for u in script.unknown]
    commands = _split_assignments(script.commands)
    assigned: dict[str, str] = {"PWD": base, "HOME": os.path.expanduser("~")}
    assigned.update(_fixed(script.branching, commands, base, assigned))
    for words in commands:
        words = _substituted(words, assigned)
        name, args = words[0], words[1:]
        if any("$(" in w or "`" in w for w in words):
            # a command run for its output, in any command's words (a harmless one's too:
            # `log_status "$(./tools/v)"`): what it runs is not read
            unknown.append(" ".join(words)[:60])
        if (name == "printf" and "-v" in args) or (name.startswith("source_up") and args):
            unknown.append(" ".join(words)[:60])  # (sets a variable; sources by a search)
        if name.partition("=")[0] == "direnv_layout_dir":
            unknown.append(f"{name[:60]}: layouts go elsewhere")
        names: tuple[str, ...] = ()
        variable, _, value = name.partition("=") if "=" in name else ("", "", "")
        value = without_itself(variable, value) if variable else value
        if name == "use" and args:
            if args[0] not in USE:
                unknown.append(f"use {args[0]}")
            names = USE.get(args[0], ())
            if args[0] in ("flake", "nix"):
                found.names += ["*.nix", "flake.lock"]
                # what direnv then runs is the dev shell's shellHook, shell code Nix builds
                # (it may source any project file); nix-direnv caches it in .direnv and
                # evals that cache at the next prompt
                unknown.append(f"use {args[0]}: the dev shell's shellHook")
                found.paths.append(os.path.join(base, ".direnv"))
                # `use nix shell-dev.nix`, `use flake ./nix#dev`: what they name, too
                names = (*names, *(a.split("#", 1)[0] for a in args[1:] if not a.startswith("-")))
        elif name == "layout" and args:
            if args[0] not in LAYOUTS:
                unknown.append(f"layout {args[0]}")
            # (`layout python tools/py`: the interpreter it runs is named too)
            names = (*LAYOUTS.get(args[0], ()), *(a for a in args[1:] if not a.startswith("-")))
            if args[0].startswith("python") or args[0] in ("pyenv", "anaconda"):
                # it runs `python3 -c "import pkgutil, platform ..."` in this directory,
                # which comes first on that Python's path: no new module taken here
                found.module_dirs.append(base + "/*")
        elif name in SOURCES:
            given = tuple(a for a in args if not a.startswith("-"))
            names = given[:1] if name.startswith(SINGLE) else given
            names = names or SOURCES[name] or ()
        elif variable:
            # `export BASH_ENV=.bashenv`, `PATH=$PWD/bin:$PATH`, `export VIRTUAL_ENV=.venv`:
            # the one reader for an assignment, as for a dotenv's or mise's (a `$(...)` in
            # it is unknown above)
            assignment(variable, " ".join([value, *args]), base, found)
        elif name in HARMLESS or tuple(words[:2]) in KNOWN_COMMANDS:
            continue
        else:
            # Any other command: direnv runs it at the next prompt. What it names that looks
            # like a file of the project (`./scripts/env.sh`, `bash tools/setup.sh`, a path
            # inside `$(python3 tools/gen.py)`) is protected; the command is named in status,
            # since what it reaches cannot be known.
            names = path_words(words)
            unknown.append(" ".join(words)[:60])
        for target in names:
            target = next((target[len(p) :] for p in PWD_SPELLINGS if target.startswith(p)), target)
            if expands(target):
                unknown.append(f"{name} {target}")
                continue
            where = os.path.normpath(os.path.join(base, os.path.expanduser(target)))
            found.paths.append(where)
            sourced = where
            if name.startswith("source_env") and os.path.isdir(where):
                sourced = os.path.join(where, NAME)
                found.paths.append(sourced)
            venv_activate = False
            if name in ("source", ".") and os.path.basename(where).startswith("activate"):
                found.paths.append(os.path.dirname(where))  # a venv's bin, now first on PATH
                # (a venv's own script: what it does is known, it is not the project's)
                venv_activate = os.path.isfile(
                    os.path.join(os.path.dirname(os.path.dirname(where)), "pyvenv.cfg")
                )
            if (name.startswith(("dotenv", "source")) or name == ".") and depth >= MAX_DEPTH:
                unknown.append(f"{path}: {name} {target}, {MAX_DEPTH} files deep")
                continue
            if name.startswith("dotenv") and os.path.isfile(where):
                read_dotenv(where, base, found)
            if name in ("source", ".", "source_env", "source_env_if_exists") and (
                os.path.isfile(sourced) and not venv_activate
            ):
                # what the sourced file does counts as the .envrc's own (source_env reads
                # its paths from the file's directory; source, from the .envrc's)
                inner = os.path.dirname(sourced) if name.startswith("source_env") else base
                _read(sourced, inner, found, depth + 1)
