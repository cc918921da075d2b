---Which files are chat buffers: their frontmatter is read when they are opened. Loaded by
---plugin/corral.lua at start-up, so it holds nothing else.
local M = {}

-- The schema's default of chat.patterns (tests/editor/test_setup.py checks they agree).
M.DEFAULT_PATTERNS = { "*.chat" }

---Attach chat buffers of these patterns (the default when nil); replaces the earlier ones.
---@param patterns string[]|nil
function M.watch(patterns)
  vim.api.nvim_create_augroup("corral_chat", { clear = true })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    group = "corral_chat",
    pattern = patterns or M.DEFAULT_PATTERNS,
    callback = function(ev)
      require("corral.chat").attach(ev.buf)
    end,
  })
end

return M
