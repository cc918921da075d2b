---@mod corral A sandbox and tool guard for AI chat in Neovim (see :help corral)
local state = require("corral.state")

local M = {}

M.DEFAULT_CHAT_PATTERNS = { "*.chat" } -- the schema's default of chat.patterns

---@param value any
---@return string[]|nil
local function string_list(value)
  if type(value) ~= "table" or not vim.islist(value) or #value == 0 then
    return nil
  end
  for _, item in ipairs(value) do
    if type(item) ~= "string" then
      return nil
    end
  end
  return value
end

---Which files are chat buffers: their frontmatter is read when they are opened.
---@param patterns string[]
local function watch_chat_files(patterns)
  vim.api.nvim_create_augroup("corral_chat", { clear = true })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    group = "corral_chat",
    pattern = patterns,
    callback = function(ev)
      require("corral.chat").attach(ev.buf)
    end,
  })
end

---Optional; safe to call again. Options use the engine's schema (`:help corral-options`):
---`setup({sandbox = {mode = "read-only"}, chat = {patterns = {"*.chat", "*.md"}}})`.
---They are validated by the engine on first use, so this never starts the Python host;
---invalid options are reported once and dropped whole (the sandbox keeps its defaults).
---@param opts table|nil
function M.setup(opts)
  opts = opts or {}
  vim.validate("opts", opts, "table")
  state.global = vim.deepcopy(opts)
  state.global_checked = false
  state.global_problems = {}
  local chat = type(opts.chat) == "table" and opts.chat or {}
  watch_chat_files(string_list(chat.patterns or opts["chat.patterns"]) or M.DEFAULT_CHAT_PATTERNS)
end

return M
