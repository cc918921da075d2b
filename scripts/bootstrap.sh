# Sourced by scripts/demo and scripts/test: makes the project-local virtual environment
# (.venv) and installs corral with its test extras into it. Idempotent: it reinstalls only when
# pyproject.toml changed since the last successful install.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv"
py="${PYTHON:-python3}"

if ! command -v "$py" >/dev/null 2>&1; then
    echo "corral bootstrap: $py not found; install Python 3.11 or newer" >&2
    exit 1
fi
if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "corral bootstrap: $("$py" --version 2>&1) is too old; corral needs Python 3.11 or newer" >&2
    exit 1
fi

if [ ! -x "$venv/bin/python" ]; then
    # Debian and Ubuntu ship venv's pip bootstrap (ensurepip) in a separate package.
    if ! "$py" -c 'import ensurepip' >/dev/null 2>&1; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
            ver=$("$py" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
            echo "corral bootstrap: installing python$ver-venv (ensurepip is missing)" >&2
            apt-get update -qq && apt-get install -y -qq "python$ver-venv" >/dev/null
        else
            echo "corral bootstrap: this Python has no ensurepip; run: sudo apt-get install python3-venv" >&2
            exit 1
        fi
    fi
    rm -rf "$venv"
    "$py" -m venv "$venv"
fi

# extras: "test" (scripts/test: everything) or "demo" (scripts/demo: Neovim and bwrap only);
# a venv set up for the tests serves the demo too.
extras="${CORRAL_EXTRAS:-test}"
stamp="$venv/.corral-installed"
sum=$(cksum <"$root/pyproject.toml")
have=$(cat "$stamp" 2>/dev/null || true)
if [ "$have" != "$sum $extras" ] && { [ "$extras" = test ] || [ "$have" != "$sum test" ]; }; then
    echo "corral: setting up $venv with corral[$extras] (the first time takes a minute)" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$root[$extras]"
    printf '%s\n' "$sum $extras" >"$stamp"
fi
# An editable install writes no bytecode, and with PYTHONDONTWRITEBYTECODE set nothing ever
# would: every `corral run` would compile the engine again (~20 ms). Cheap when up to date.
"$venv/bin/python" -m compileall -q "$root/python/corral" >/dev/null

# The test suite checks the Lua's formatting with StyLua, from npm's registry (its wrapper
# package and the prebuilt binary for this machine), into the venv; where npm is missing,
# scripts/test says so and skips the check.
stylua_version=2.5.2
if [ "$extras" = test ] && command -v npm >/dev/null 2>&1 \
    && ! "$venv/stylua/node_modules/.bin/stylua" --version 2>/dev/null | grep -qx "stylua $stylua_version"; then
    echo "corral bootstrap: installing StyLua $stylua_version (npm) for the Lua format check" >&2
    npm install --silent --no-audit --no-fund --prefix "$venv/stylua" \
        "@johnnymorganz/stylua-bin@$stylua_version" >/dev/null \
        || echo "corral bootstrap: could not install StyLua; the Lua format check is skipped" >&2
fi

# The test suite lints the Lua with luacheck (Debian's lua-check). As root with apt (CI, a
# fresh machine) it is installed here; otherwise scripts/test says how and skips the lint.
if [ "$extras" = test ] && ! command -v luacheck >/dev/null 2>&1 && [ "$(id -u)" = 0 ] \
    && command -v apt-get >/dev/null 2>&1; then
    echo "corral bootstrap: installing lua-check (luacheck) for the Lua lint" >&2
    { apt-get install -y -qq lua-check >/dev/null 2>&1 \
        || { apt-get update -qq && apt-get install -y -qq lua-check >/dev/null; }; } \
        || echo "corral bootstrap: could not install lua-check; the Lua lint is skipped" >&2
fi
