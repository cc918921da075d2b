-- Chat buffers: read their frontmatter into a buffer layer, again after edits (debounced)
-- and on write. An error is shown once; the last good layer stays in force. A file that is
-- not trusted may only narrow the sandbox.
local engine = require("corral.engine")
local frontmatter = require("corral.frontmatter")
local state = require("corral.state")

local M = {}

M.DEBOUNCE_MS = 300

local attached = {} ---@type table<integer, {text: string|nil, timer: uv.uv_timer_t|nil, shown: table<string, boolean>}>
local warned_required = false

---@param bufnr integer
---@param message string
---@param level integer
local function once(bufnr, message, level)
  local info = attached[bufnr]
  if info.shown[message] then
    return
  end
  info.shown[message] = true
  vim.notify(message, level)
end

---@param header string
---@param items string[]
---@return string `header` and the items, one per indented line
local function listed(header, items)
  return header .. "\n  " .. table.concat(items, "\n  ")
end

---Is this file trusted with :trust (vim.secure), directly or through a trusted directory?
---Trust follows the file's contents: after an edit it must be trusted again.
---@param path string
---@return boolean
function M.is_trusted(path)
  if path == "" then
    return false
  end
  local full = vim.uv.fs_realpath(path) or vim.fs.normalize(vim.fn.fnamemodify(path, ":p"))
  local db = {}
  local f = io.open(vim.fn.stdpath("state") .. "/trust", "r")
  if not f then
    return false
  end
  for line in f:lines() do
    local hash, file = line:match("^(%S+) (.+)$")
    if hash then
      db[file] = hash
    end
  end
  f:close()
  for dir in vim.fs.parents(full) do
    if db[dir] == "directory" then
      return true
    end
  end
  local hash = db[full]
  if not hash then
    return false
  end
  local content = io.open(full, "rb")
  if not content then
    return false
  end
  local data = content:read("*a")
  content:close()
  return vim.fn.sha256(data) == hash
end

---@return boolean
local function widening_allowed()
  local global = state.global or {}
  local fm = global.frontmatter
  return (type(fm) == "table" and fm.allow_widening == true) or global["frontmatter.allow_widening"] == true
end

---Read the buffer's frontmatter again; `force` even when its text did not change.
---@param bufnr integer
---@param force boolean|nil
function M.refresh(bufnr, force)
  local info = attached[bufnr]
  if not info or not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, frontmatter.MAX_LINES, false)
  local block_end = 0
  if lines[1] and lines[1]:match("^```") then
    for i = 2, #lines do
      if lines[i]:match("^```%s*$") then
        block_end = i
        break
      end
    end
  end
  local text = table.concat(lines, "\n", 1, block_end > 0 and block_end or math.min(1, #lines))
  if text == info.text and not force then
    return
  end
  info.text = text
  local name = vim.api.nvim_buf_get_name(bufnr)
  local label = vim.fn.fnamemodify(name, ":~:.")
  local values, err = frontmatter.read(lines)
  if err then
    once(bufnr, ("corral: frontmatter of %s, %s (the last good settings stay in force)"):format(label, err), vim.log.levels.ERROR)
    return
  end
  if values == nil then
    state.buffers[bufnr] = nil
    return
  end
  -- Trust is of the file's contents on disk: an unsaved edit (by a chat plugin, say) is not
  -- what was trusted.
  local trusted = widening_allowed() or (not vim.bo[bufnr].modified and M.is_trusted(name))
  local request = engine.request(bufnr, { values = values, trusted = trusted })
  local result, call_err = engine.call("frontmatter", request)
  if not result then
    once(bufnr, "corral: " .. call_err, vim.log.levels.ERROR)
    return
  end
  if result.problems and #result.problems > 0 then
    once(bufnr, listed(("corral: frontmatter of %s is invalid (the last good settings stay in force):"):format(label), result.problems), vim.log.levels.ERROR)
    return
  end
  state.buffers[bufnr] = result.accepted
  if result.refused and #result.refused > 0 then
    local message = listed(("corral: frontmatter of %s may only narrow the sandbox; refused:"):format(label), result.refused)
    once(bufnr, message .. "\nTrust the file with :trust (or allow widening in setup()) to apply these.", vim.log.levels.WARN)
  end
end

---With sandbox.backend = "required" and no working backend: say so once, visibly.
---@param bufnr integer
local function warn_if_required_missing(bufnr)
  if warned_required then
    return
  end
  local config = require("corral.sandbox").resolve_config(bufnr)
  if not config or config.values["sandbox.backend"] ~= "required" then
    return
  end
  local ok, reason = require("corral.sandbox").validate_backend(bufnr)
  if not ok then
    warned_required = true
    vim.notify(
      "corral: sandbox.backend is \"required\" but no sandbox works here, so commands from this chat will be refused:\n  "
        .. tostring(reason)
        .. "\nSee :Sandbox status and :checkhealth corral.",
      vim.log.levels.WARN
    )
  end
end

---@param bufnr integer
function M.attach(bufnr)
  if bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  if attached[bufnr] then
    return
  end
  attached[bufnr] = { text = nil, timer = nil, shown = {} }
  local group = vim.api.nvim_create_augroup("corral_chat_" .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd("BufWritePost", {
    group = group,
    buffer = bufnr,
    callback = function()
      M.refresh(bufnr, true)
    end,
  })
  vim.api.nvim_create_autocmd({ "TextChanged", "TextChangedI" }, {
    group = group,
    buffer = bufnr,
    callback = function()
      local info = attached[bufnr]
      info.timer = info.timer or vim.uv.new_timer()
      info.timer:stop()
      info.timer:start(M.DEBOUNCE_MS, 0, vim.schedule_wrap(function()
        M.refresh(bufnr)
      end))
    end,
  })
  vim.api.nvim_create_autocmd("BufWipeout", {
    group = group,
    buffer = bufnr,
    callback = function()
      local info = attached[bufnr]
      if info and info.timer then
        info.timer:stop()
        info.timer:close()
      end
      attached[bufnr] = nil
      state.buffers[bufnr] = nil
      pcall(vim.api.nvim_del_augroup_by_id, group)
    end,
  })
  M.refresh(bufnr, true)
  warn_if_required_missing(bufnr)
end

---@param bufnr integer
---@return boolean
function M.is_attached(bufnr)
  if bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  return attached[bufnr] ~= nil
end

return M
