---@mod corral A sandbox and tool guard for AI chat in Neovim (see :help corral)
local state = require("corral.state")

local M = {}

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

---Optional; safe to call again. Options use the engine's schema (`:help corral-options`):
---`setup({sandbox = {mode = "read-only"}, chat = {patterns = {"*.chat", "*.md"}}})`.
---They are validated by the engine on first use, so this never starts the Python host;
---invalid options are reported once and set aside whole for a read-only sandbox.
---@param opts corral.Options|nil
function M.setup(opts)
  opts = opts or {}
  vim.validate("opts", opts, "table")
  opts = vim.deepcopy(opts)
  -- A Lua function for tools.auto_approve stays on this side: the engine gets the rest.
  state.auto_approve_fn = nil
  if type(opts.tools) == "table" and type(opts.tools.auto_approve) == "function" then
    state.auto_approve_fn = opts.tools.auto_approve
    opts.tools.auto_approve = nil
    if next(opts.tools) == nil then
      opts.tools = nil -- (an empty table goes to the engine as a list, which is invalid)
    end
  end
  state.global = opts
  state.global_checked = false
  state.global_problems = {}
  local chat = type(opts.chat) == "table" and opts.chat or {}
  require("corral.chat_files").watch(string_list(chat.patterns or opts["chat.patterns"]))
end

---Run a chat's tool call through the guard, the sandbox and the guarded operations
---(:help corral.execute()).
---@param tool_call corral.ToolCall
---@param opts {bufnr: integer|nil}|nil
---@param on_done fun(result: corral.Result)
---@return corral.Handle
function M.execute(tool_call, opts, on_done)
  return require("corral.execute").execute(tool_call, opts, on_done)
end

---What the guard would answer for `tool_call`, running and asking nothing (:help corral.decide()).
---@param tool_call corral.ToolCall
---@param opts {bufnr: integer|nil}|nil
---@return corral.Decision|nil decision, string? err
function M.decide(tool_call, opts)
  return require("corral.execute").decide(tool_call, opts)
end

---A result as the text to hand the model: its summary line, then the tool's output
---(:help corral.text()).
---@param result corral.Result
---@return string
function M.text(result)
  return require("corral.result_text").text(result)
end

---Add an approval resolver written in Lua (:help corral-guard).
---@param name string
---@param fn fun(context: table): string|nil
---@param priority integer|nil
---@return string|nil urn, string? err
function M.register_resolver(name, fn, priority)
  return require("corral.execute").register_resolver(name, fn, priority)
end

return M
