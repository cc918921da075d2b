-- Flemma: corral as the sandbox backend of Flemma's tools and as a voice in its approval
-- chain (:help corral-flemma). Flemma's sandbox design is where corral's came from; this puts
-- corral's sandbox (its deny-lists, change sets, limits) under Flemma's bash, and corral's
-- guard over Flemma's bash and file tools.
--
-- Three registrations:
-- - the backend "corral" (priority 200, above Flemma's bwrap at 100): Flemma's wrap_command
--   returns corral's argv; corral's settings decide, not Flemma's sandbox.policy;
-- - a resolver at 110, above Flemma's config resolver (100): corral's refusals (a hidden
--   credential, sudo, a write outside the writable roots) win over Flemma's presets;
-- - a resolver at 40, above Flemma's sandbox resolver (25): corral's approve or ask.
local M = {}

M.BACKEND = "corral"
M.BACKEND_PRIORITY = 200
M.DENY_RESOLVER = "urn:corral:flemma:deny"
M.DENY_PRIORITY = 110
M.RESOLVER = "urn:corral:flemma:approval"
M.RESOLVER_PRIORITY = 40

---Flemma's wrap gets no buffer: corral reads the call as the current buffer's.
---@return integer
local function current_buffer()
  return vim.api.nvim_get_current_buf()
end

---Flemma resolves a relative path against its chat file's directory; so does this, so that
---corral judges the file Flemma will touch.
---@param path any
---@param bufnr integer
---@return any
local function as_flemma_resolves(path, bufnr)
  if type(path) ~= "string" or path == "" or path:sub(1, 1) == "/" or path:sub(1, 1) == "~" then
    return path
  end
  local name = vim.api.nvim_buf_is_valid(bufnr) and vim.api.nvim_buf_get_name(bufnr) or ""
  local base = name ~= "" and vim.fs.dirname(name) or vim.fn.getcwd()
  return vim.fs.joinpath(base, path)
end

---Flemma's tool call as corral's, or nil for a tool corral does not judge.
---@param tool_name string
---@param input table
---@param bufnr integer
---@return corral.ToolCall|nil
local function as_corral_call(tool_name, input, bufnr)
  input = type(input) == "table" and input or {}
  if tool_name == "bash" then
    return { name = "bash", input = { command = input.command } }
  elseif tool_name == "read" then
    return { name = "read", input = { path = as_flemma_resolves(input.path, bufnr) } }
  elseif tool_name == "write" then
    return {
      name = "write",
      input = { path = as_flemma_resolves(input.path, bufnr), content = input.content },
    }
  elseif tool_name == "edit" then
    return {
      name = "edit",
      input = {
        path = as_flemma_resolves(input.path, bufnr),
        old = input.oldText,
        new = input.newText,
      },
    }
  end
  return nil
end

---Will Flemma run this buffer's bash through corral's backend? Only then may corral approve
---a command on the strength of its sandbox.
---@param bufnr integer
---@return boolean
function M.wraps(bufnr)
  local ok, fsandbox = pcall(require, "flemma.sandbox")
  if not ok or not fsandbox.is_enabled(bufnr) then
    return false
  end
  local backend = fsandbox.resolve_config(bufnr).backend
  if backend == nil or backend == "auto" or backend == "required" then
    backend = fsandbox.detect_available_backend(bufnr)
  end
  return backend == M.BACKEND
end

---corral's decision for Flemma's call: "approve", "require_approval", "deny", or nil (not a
---tool corral judges).
---@return string|nil
local function decision(tool_name, input, context)
  local bufnr = type(context) == "table" and tonumber(context.bufnr) or current_buffer()
  if bufnr == 0 then
    bufnr = current_buffer()
  end
  local call = as_corral_call(tool_name, input, bufnr)
  if not call then
    return nil
  end
  local decided = require("corral").decide(call, { bufnr = bufnr })
  if not decided then
    return "require_approval" -- corral could not decide: ask, never pass
  end
  if decided.decision == "approve" and call.name == "bash" and not M.wraps(bufnr) then
    return "require_approval" -- approved because corral's sandbox confines it: not here
  end
  return decided.decision
end

---@param backend_config table
---@return boolean ok, string|nil err
local function available(backend_config)
  local _ = backend_config
  local ok, err = require("corral.sandbox").validate_backend(current_buffer())
  if not ok then
    return false, "corral: " .. tostring(err)
  end
  if not require("corral.sandbox").is_enabled(current_buffer()) then
    return false, "corral: the sandbox is disabled (:Sandbox enable)"
  end
  return true, nil
end

---@param policy table Flemma's policy (not used: corral's settings decide)
---@param backend_config table
---@param inner_cmd string[]
---@return string[]|nil argv, string|nil err
local function wrap(policy, backend_config, inner_cmd)
  local _ = { policy, backend_config }
  local argv, err, info = require("corral.sandbox").wrap_command(inner_cmd, current_buffer())
  if not argv then
    return nil, "corral: " .. tostring(err)
  end
  if not (info and info.sandboxed) then
    return nil, "corral: no sandbox confines this buffer's commands (:Sandbox status)"
  end
  if info.stage == "" and (#(info.watch or {}) > 0 or #(info.links or {}) > 0) then
    -- direct writes need corral's check after the run, and Flemma does not call it
    return nil,
      'corral: with sandbox.writes = "direct" Flemma cannot run the check after a command; '
        .. 'use "apply" (the default) or "review"'
  end
  return argv, nil
end

---Register corral with Flemma: call after `require("flemma").setup()`. Safe to call again.
function M.setup()
  require("flemma.sandbox").register(M.BACKEND, {
    priority = M.BACKEND_PRIORITY,
    description = "corral (bwrap with corral's deny-lists, change sets and limits)",
    available = available,
    wrap = wrap,
  })
  local approval = require("flemma.tools.approval")
  approval.register(M.DENY_RESOLVER, {
    priority = M.DENY_PRIORITY,
    description = "corral's guard: its refusals",
    resolve = function(tool_name, input, context)
      return decision(tool_name, input, context) == "deny" and "deny" or nil
    end,
  })
  approval.register(M.RESOLVER, {
    priority = M.RESOLVER_PRIORITY,
    description = "corral's guard: approve, or ask",
    resolve = decision,
  })
end

return M
