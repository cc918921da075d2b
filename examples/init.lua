-- The demo's Neovim configuration: corral from this checkout, the project's Python.
-- scripts/demo starts Neovim with it and with its own XDG directories, so your own Neovim
-- configuration and data are neither read nor changed.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h")
vim.opt.rtp:prepend(root)
-- :help corral needs doc/tags, which is generated, not committed (see .gitignore).
pcall(vim.cmd.helptags, root .. "/doc")
vim.g.python3_host_prog = root .. "/.venv/bin/python"
vim.g.loaded_node_provider = 0
vim.g.loaded_perl_provider = 0
vim.g.loaded_ruby_provider = 0
vim.opt.number = true
-- :DemoReplay, the scripted chat (examples/replay.lua)
dofile(root .. "/examples/replay.lua")
