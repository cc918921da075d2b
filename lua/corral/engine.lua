-- The bridge to the Python engine (the remote plugin's CorralCall function).
local state = require("corral.state")

local M = {}

---Why the engine cannot be called, and what to fix first: without a Python host set,
---:UpdateRemotePlugins itself fails, so sending the user there first is a loop (r89 trial
---NOPROVIDERLOOP).
---@return string
function M.not_registered()
  local python = vim.g.python3_host_prog
  local fix = "restart Neovim, run :UpdateRemotePlugins, restart again (:checkhealth corral checks each step)"
  if type(python) ~= "string" or python == "" then
    return "corral's remote plugin is not registered, and vim.g.python3_host_prog is not set: "
      .. "set it to the Python you installed corral's dependencies into (:help corral-install), "
      .. fix
  end
  if vim.fn.executable(vim.fn.expand(python)) ~= 1 then
    return (
      "corral's remote plugin is not registered, and vim.g.python3_host_prog (%s) is not "
      .. "an executable: point it at the Python you installed corral's dependencies into, %s"
    ):format(python, fix)
  end
  return "corral's remote plugin is not registered: run :UpdateRemotePlugins, restart Neovim, "
    .. "and see :checkhealth corral"
end

---@param method string
---@param request table
---@return any result, string? err
---Whether the remote plugin is registered: its function exists, or (before its first call,
---which starts the Python host) the FuncUndefined autocmd that defines it.
---@return boolean
function M.registered()
  return vim.fn.exists("*CorralCall") == 1 or vim.fn.exists("#FuncUndefined#CorralCall") == 1
end

local function raw_call(method, request)
  if not M.registered() then
    return nil, M.not_registered()
  end
  local ok, result = pcall(vim.fn.CorralCall, method, request)
  if not ok then
    return nil, "corral engine failed: " .. tostring(result)
  end
  if type(result) == "table" and result.error then
    return nil, result.error
  end
  return result
end

-- setup() options are checked by the engine's schema on first use, so that setup() itself
-- never starts the Python host. Invalid options are reported once and set aside whole for a
-- read-only sandbox: never half-applied, and never wider than asked (a typo in
-- `mode = "read-only"` left the default, writable mode: r72d SETUPFALLBACK).
local function check_global()
  if state.global_checked or state.global == nil then
    return
  end
  state.global_checked = true
  local result, err = raw_call("validate", { layers = { global = state.global }, sources = { global = "setup()" } })
  if err then
    state.global_checked = false -- try again next time (e.g. after :UpdateRemotePlugins)
    return
  end
  if result.problems and #result.problems > 0 then
    state.global_problems = result.problems
    state.global = { sandbox = { mode = "read-only" } }
    vim.notify(
      "corral: setup() options are invalid, so commands run in a read-only sandbox until you fix them:\n  "
        .. table.concat(result.problems, "\n  "),
      vim.log.levels.ERROR
    )
  end
end

---The workspace of a buffer: the directory of a window showing it (:lcd, :tcd), else of the
---window it was last current in, else the editor's own; never that of whichever window is
---current when a call arrives (a project in another tab would become writable).
---@param bufnr integer
---@return string
function M.cwd_of(bufnr)
  local current = vim.api.nvim_get_current_win()
  if vim.api.nvim_win_get_buf(current) == bufnr then
    return vim.fn.getcwd() -- the window in front shows it
  end
  local wins = vim.api.nvim_buf_is_valid(bufnr) and vim.fn.win_findbuf(bufnr) or {}
  if #wins > 0 then
    local tab = vim.api.nvim_tabpage_get_number(vim.api.nvim_win_get_tabpage(wins[1]))
    return vim.fn.getcwd(vim.fn.win_id2win(wins[1]), tab)
  end
  local shown_in = vim.api.nvim_buf_is_valid(bufnr) and vim.b[bufnr].corral_cwd or nil
  if type(shown_in) == "string" and vim.fn.isdirectory(shown_in) == 1 then
    return shown_in -- (recorded by plugin/corral.lua)
  end
  return vim.fn.getcwd(-1, -1)
end

---@param bufnr integer|nil
---@param extra table|nil
---@return table
function M.request(bufnr, extra)
  check_global() -- before reading state.global: invalid options are dropped, not sent
  if bufnr == nil or bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  -- A buffer gone meanwhile (a call's window wiped) has no layer of its own any more: setup()
  -- and the config file decide, never whichever buffer happens to be current.
  local valid = vim.api.nvim_buf_is_valid(bufnr)
  -- corral's own windows (status, run output) act for the buffer they were opened from:
  -- `:Sandbox run` typed there must not get a looser sandbox than the chat's.
  local source = valid and vim.b[bufnr].corral_source or nil
  if source and vim.api.nvim_buf_is_valid(source) then
    bufnr = source
  end
  local name = vim.api.nvim_buf_is_valid(bufnr) and vim.api.nvim_buf_get_name(bufnr) or ""
  local chat = state.buffers[bufnr]
  local request = {
    layers = {
      global = state.global,
      kept = chat and chat.kept, -- (see chat.lua: keep_after_outside_change)
      buffer = chat and chat.values,
      runtime = state.runtime,
    },
    buffer_trusted = chat ~= nil and chat.trusted,
    sources = { global = "setup()", kept = name, buffer = name, runtime = ":Sandbox" },
    cwd = M.cwd_of(bufnr),
    buffer_path = name ~= "" and name or nil,
    -- (only when corral.chat is loaded: a chat was opened; start-up loads nothing)
    chat_files = package.loaded["corral.chat"] and package.loaded["corral.chat"].paths() or nil,
  }
  for k, v in pairs(extra or {}) do
    request[k] = v
  end
  return request
end

---Call the engine: `result` or `nil, err`.
---@param method string
---@param request table|nil
---@return any result, string? err
function M.call(method, request)
  check_global()
  return raw_call(method, request or M.request())
end

return M
