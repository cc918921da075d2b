-- corral: defines :Sandbox and watches chat buffers. Everything else loads on first use:
-- no setup() call is needed, and the Python host starts only when corral is used.
if vim.g.loaded_corral then
  return
end
vim.g.loaded_corral = 1

-- Lua's own module search looks in the current directory first (./?.lua, ./?.so): a module
-- a sandboxed command wrote to the workspace would run in the editor, on the host, when a
-- config asks for one that is not installed (`pcall(require, "nvim-web-devicons")`). Neovim
-- finds plugins on 'runtimepath'; only absolute entries are kept.
local function absolute_only(paths)
  local kept = {}
  for entry in paths:gmatch("[^;]+") do
    if entry:sub(1, 1) == "/" then
      kept[#kept + 1] = entry
    end
  end
  return table.concat(kept, ";")
end
package.path = absolute_only(package.path)
package.cpath = absolute_only(package.cpath)

vim.api.nvim_create_user_command("Sandbox", function(cmd)
  require("corral.commands").run(cmd)
end, {
  nargs = "*",
  desc = "corral sandbox: status, enable, disable, reset, run {cmd}, stop, changes, apply, discard, undo",
  complete = function(arglead, cmdline, pos)
    return require("corral.commands").complete(arglead, cmdline, pos)
  end,
})

-- Chat buffers (*.chat unless setup() says otherwise) get their frontmatter read.
require("corral.chat_files").watch()

-- Where each buffer was last current: the workspace of a chat that no window shows any more
-- (a chat plugin's calls go on while you read another file) is the directory it was shown in
-- (:tcd, :lcd), not the editor's global one (engine.cwd_of).
vim.api.nvim_create_augroup("corral_cwd", { clear = true })
vim.api.nvim_create_autocmd({ "BufEnter", "DirChanged" }, {
  group = "corral_cwd",
  callback = function(ev)
    local buf = ev.event == "DirChanged" and vim.api.nvim_get_current_buf() or ev.buf
    vim.b[buf].corral_cwd = vim.fn.getcwd()
  end,
})
