-- What the frontend holds between calls: the layers it sends to the engine with every request.
-- The engine itself keeps no per-buffer state.
local M = {}

---@type table|nil options given to setup(), checked by the engine on first use
M.global = nil
M.global_checked = false
---@type string[] problems the engine found in the setup() options
M.global_problems = {}
---@type table|nil `{["sandbox.enabled"] = bool}` from :Sandbox enable/disable
M.runtime = nil
---@type table<integer, {values: table, trusted: boolean}> each chat buffer's frontmatter as
---written, and whether it is trusted (the engine judges an untrusted one on every request)
M.buffers = {}
---@type table<string, table> backends registered from Lua: name -> definition
M.backends = {}
---@type (fun(tool_call: table): boolean)|nil tools.auto_approve given as a Lua function
M.auto_approve_fn = nil
---@type boolean whether this session was told once that tool calls run unsandboxed
M.warned_unsandboxed = false
---@type boolean whether the first chat opened had corral check that a sandbox works
M.checked_unconfined = false

return M
