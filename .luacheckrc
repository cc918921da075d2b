-- luacheck (Debian's lua-check): scripts/test lints lua/ and plugin/ with it.
std = "luajit"
globals = { "vim" } -- Neovim's API, set and read
max_line_length = false -- (messages are long strings; StyLua, stylua.toml, wraps the rest)
