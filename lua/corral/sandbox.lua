---@mod corral.sandbox The sandbox API for chat plugins (see :help corral-api)
local engine = require("corral.engine")
local state = require("corral.state")

local M = {}

---@class corral.Wrapped
---@field argv string[]   the command to start, self-contained (`env -i ... bwrap ... -- cmd`)
---@field env table<string,string> the scrubbed environment the sandbox gets
---@field sandboxed boolean
---@field backend string
---@field notes string[]  what the user should know (an unsandboxed fallback, skipped paths)
---@field stage string    the change set's staging area ("" with direct writes): pass to `M.after_run`
---@field watch string[]  paths that must not appear: pass to `M.after_run`
---@field links string[][] protected symlinks to put back: pass to `M.after_run`
---@field network_id string corral's proxy for this command ("" without one): `M.after_run` reports what it refused
---@field cwd string where it runs: `M.after_run` names what earlier runs there left held

---Effective configuration for a buffer: `{values = {...}, origins = {...}}`.
---@param bufnr integer|nil
---@return table|nil config, string? err
function M.resolve_config(bufnr)
  return engine.call("config", engine.request(bufnr))
end

---The resolved policy: absolute paths, booleans, mode.
---@param bufnr integer|nil
---@return table|nil policy, string? err
function M.get_policy(bufnr)
  return engine.call("policy", engine.request(bufnr))
end

---@param bufnr integer|nil
---@return boolean
function M.is_enabled(bufnr)
  local policy = M.get_policy(bufnr)
  return policy ~= nil and policy.enabled == true
end

---Wrap `argv` for the buffer's sandbox. The result starts with `env -i NAME=value ...`, so
---bwrap (and the sandbox) get only the scrubbed environment however it is started.
---Returns the original argv (env-scrubbed) only when the sandbox is disabled, or in "auto"
---mode with no backend; `info.sandboxed` and `:Sandbox status` say so.
---@param argv string[]
---@param bufnr integer|nil
---@return string[]|nil argv, string? err, corral.Wrapped? info
function M.wrap_command(argv, bufnr)
  local result, err = engine.call("wrap", engine.request(bufnr, { argv = argv }))
  if not result then
    return nil, err
  end
  return result.argv, nil, result
end

---After a wrapped command exited: with a change set (the default), what the check held and
---why (the argv itself applied the rest); with direct writes, remove what must not have
---appeared and put back protected symlinks. Returns one line per held path or repair (empty
---when there is nothing to say), and with a change set its summary for a chat's tool result:
---`{id, status, counts = {added, modified, deleted}, changed = {"added path", ...},
---held = {{path, code, why}, ...}, why, more, earlier = {{id, paths, count}, ...}}` (earlier:
---change sets earlier runs in that workspace left held, which no command there sees).
---@param info corral.Wrapped
---@return string[] lines, table|nil summary
function M.after_run(info)
  local lines, summary = {}, nil
  if info and info.stage and info.stage ~= "" then
    -- the launcher is gone: whatever of its sandbox still runs is an orphan (bwrap can outlive
    -- a launcher killed alone)
    engine.call("stop_sandbox", { stage = info.stage })
    local result = engine.call("change_report", { stage = info.stage, cwd = info.cwd })
    lines, summary = result and result.lines or {}, result and result.summary or nil
  elseif info and ((#(info.watch or {}) > 0) or (#(info.links or {}) > 0)) then
    lines = engine.call("sweep", { watch = info.watch, links = info.links }) or {}
  end
  if info and info.network_id and info.network_id ~= "" then
    -- what corral's proxy refused: named by host, with the setting that would allow it
    local refused = engine.call("network_report", { id = info.network_id })
    if type(refused) == "table" then
      lines = vim.list_extend(vim.deepcopy(refused), lines)
    end
  end
  return lines, summary
end

---@param path string
---@param bufnr integer|nil
---@return boolean
function M.is_path_writable(path, bufnr)
  return engine.call("is_writable", engine.request(bufnr, { path = path })) == true
end

---@param bufnr integer|nil
---@return boolean ok, string? reason
function M.validate_backend(bufnr)
  local result, err = engine.call("validate_backend", engine.request(bufnr))
  if not result then
    return false, err
  end
  return result.ok == true, result.reason
end

---The first available backend by priority, or nil and the reason for each.
---@return string|nil name, table tried
function M.detect_available_backend()
  local result, err = engine.call("detect", engine.request(0))
  if not result then
    return nil, { { name = "engine", reason = err } }
  end
  return result.backend ~= vim.NIL and result.backend or nil, result.tried
end

---Register a backend implemented in Lua; it takes part in the engine's registry.
---`def = {priority = 50, available = function(policy) return true|"reason" end,
---        wrap = function(policy, argv) return argv end, capabilities = {...}}`
---@param name string
---@param def table
---@return boolean ok, string? err
function M.register(name, def)
  vim.validate("name", name, "string")
  vim.validate("def", def, "table")
  vim.validate("def.available", def.available, "function")
  vim.validate("def.wrap", def.wrap, "function")
  state.backends[name] = def
  local _, err = engine.call("register", {
    name = name,
    priority = def.priority or 50,
    capabilities = def.capabilities or { "can_auto_approve_if_sandboxed" },
  })
  if err then
    state.backends[name] = nil
    return false, err
  end
  return true
end

---@param name string
---@return boolean removed
function M.unregister(name)
  state.backends[name] = nil
  return engine.call("unregister", { name = name }) == true
end

---@return table[] backends `{name, priority, capabilities}` by priority, then name (a copy)
function M.get_all()
  return engine.call("backends", {}) or {}
end

---@param name string
---@return table|nil backend
function M.get(name)
  for _, backend in ipairs(M.get_all()) do
    if backend.name == name then
      return backend
    end
  end
  return nil
end

---@return integer
function M.count()
  return #M.get_all()
end

---Runtime override, session-wide: above every other layer.
---@param enabled boolean
function M.set_enabled(enabled)
  vim.validate("enabled", enabled, "boolean")
  state.runtime = { ["sandbox.enabled"] = enabled }
end

function M.reset_enabled()
  state.runtime = nil
end

---@return table|nil override `{["sandbox.enabled"] = bool}` or nil
function M.get_override()
  return state.runtime and vim.deepcopy(state.runtime) or nil
end

---Called by the engine for backends registered from Lua.
---@private
function M._backend_call(name, fn, ...)
  local def = state.backends[name]
  if not def then
    return "backend " .. name .. " is no longer registered"
  end
  local ok, result = pcall(def[fn], ...)
  if not ok then
    return fn == "available" and ("available() failed: " .. tostring(result)) or nil
  end
  return result
end

return M
