-- One entry point for chat plugins: require("corral").execute(tool_call, {bufnr = ...}, on_done).
-- The guard decides (approve / require_approval / deny); a confirmation window asks you when
-- needed; the call runs (bash through jobstart of the wrapped argv, never blocking the editor;
-- the other tools in the engine, asynchronously); on_done gets a structured result.
local engine = require("corral.engine")
local state = require("corral.state")

local M = {}

local pending = {} ---@type table<integer, fun(result: table)>
local next_token = 0

-- What one call may send the engine: pynvim drops a message past about 100 MiB and never
-- answers, and the editor waited for good (r78c RPCWEDGE: a 60 MiB write froze it 28 s).
local MAX_INPUT = 32 * 1024 * 1024
local MAX_SAID = 64 * 1024 -- of a command repeated to the engine for the result and audit

---The bytes of the strings in a tool call's input, at any depth (keys too), stopping past
---MAX_INPUT (r79c RPCNEST: one string nested in a table, or as the tool's name).
---@param value any
---@param depth integer|nil
---@return integer
local function input_bytes(value, depth)
  depth = depth or 0
  if type(value) == "string" then
    return #value
  end
  if type(value) ~= "table" or depth > 32 then
    return depth > 32 and math.huge or 0 -- (too deep: said so, see ask_guard)
  end
  local total = 0
  for key, item in pairs(value) do
    total = total + input_bytes(key, depth + 1) + input_bytes(item, depth + 1)
    if total > MAX_INPUT then
      break
    end
  end
  return total
end

---A command as the result and the audit log repeat it: its first MAX_SAID bytes.
---@param command any
---@return string|nil
local function said(command)
  if type(command) ~= "string" then
    return nil
  end
  return #command > MAX_SAID and (command:sub(1, MAX_SAID) .. " [...]") or command
end

local resolvers = {} ---@type table<string, fun(context: table): string|nil>

---Add an approval resolver written in Lua: `fn(context)` gets `{tool, input, sandboxed, class}`
---and answers "approve", "require_approval", "deny" or nil (pass). Default priority 50.
---@param name string a name; `urn:corral:approval:` is put in front when missing
---@param fn fun(context: table): string|nil
---@param priority integer|nil
---@return string|nil urn, string? err
function M.register_resolver(name, fn, priority)
  vim.validate("name", name, "string")
  vim.validate("fn", fn, "function")
  local urn, err = engine.call("register_resolver", { name = name, priority = priority or 50 })
  if not urn then
    return nil, err
  end
  resolvers[urn] = fn
  resolvers[name] = fn
  return urn
end

-- The call being decided: resolvers get it as their second argument.
local current_call = nil ---@type table|nil

---A Lua answer as the engine's: true/"approve" approve, false/"require_approval" ask, "deny"
---denies, nil/"pass" passes; an error or anything else asks ("error: ..."): never a pass, which
---would let a lower resolver (the sandbox's) approve.
---@param ok boolean
---@param answer any
---@return string|nil
local function as_answer(ok, answer)
  if not ok then
    return "error: " .. tostring(answer)
  elseif answer == true or answer == "approve" then
    return "approve"
  elseif answer == false or answer == "require_approval" then
    return "require_approval"
  elseif answer == "deny" then
    return "deny"
  elseif answer == nil or answer == "pass" then
    return nil
  end
  return "error: answered " .. vim.inspect(answer) .. ", not approve, require_approval, deny or nil"
end

---@private
function M._resolver_call(name, context)
  local fn = resolvers[name]
  if not fn then
    return nil
  end
  return as_answer(pcall(fn, context, vim.deepcopy(current_call or {})))
end

---@private
function M._deliver(token, result)
  local callback = pending[token]
  pending[token] = nil
  if callback then
    vim.schedule(function()
      callback(result)
    end)
  end
end

local function call_async(method, request, callback)
  if not engine.registered() then
    callback({ error = engine.not_registered() })
    return
  end
  next_token = next_token + 1
  pending[next_token] = callback
  vim.fn.CorralCallAsync(method, request, next_token)
end

---A Lua `tools.auto_approve` function (from setup()) answers for the config resolver:
---`fn(tool_call, context)`, answered as for resolvers (see as_answer).
---@param tool_call table
---@param context table {bufnr, tool_call_id, cwd}
---@return string|nil
local function lua_auto_approve(tool_call, context)
  local fn = state.auto_approve_fn
  if not fn then
    return nil
  end
  return as_answer(pcall(fn, vim.deepcopy(tool_call), vim.deepcopy(context)))
end

---@param request table
---@param tool_call table
---@param decision table
---@param finish fun(raw: table)
---@param handle table the call's handle: `stop` is set while the command runs
local function run_bash(request, tool_call, decision, finish, handle)
  local config = decision.limits
  -- The end of the output is kept (errors come last): at most `cap` bytes, the oldest dropped.
  local cap = config.output_cap
  local chunks, size, dropped = {}, 0, 0
  local dropped_last = "\n" -- the last byte dropped: whether the kept output starts a line
  local function collect(_, data)
    if not data then
      return
    end
    local text = table.concat(data, "\n")
    if text == "" then
      return
    end
    chunks[#chunks + 1] = text
    size = size + #text
    while size > cap and #chunks > 0 do
      local over = size - cap
      if #chunks[1] <= over then
        size, dropped = size - #chunks[1], dropped + #chunks[1]
        dropped_last = chunks[1]:sub(-1)
        table.remove(chunks, 1)
      else
        dropped_last = chunks[1]:sub(over, over)
        chunks[1] = chunks[1]:sub(over + 1)
        size, dropped = size - over, dropped + over
      end
    end
  end
  ---The kept output, starting on a whole line (or at least a whole UTF-8 character), saying
  ---what was cut: the tail of a cut line read as a line of its own (`34` of 82934, r72d OUTCUT).
  local function kept()
    local output = table.concat(chunks, "")
    if dropped == 0 then
      return output
    end
    local start = 1
    local newline = dropped_last ~= "\n" and output:find("\n", 1, true) or nil
    if newline and newline <= 4096 and newline < #output then
      start = newline + 1
    end
    while start <= #output and start <= 4 do
      local byte = output:byte(start)
      if byte < 0x80 or byte >= 0xC0 then
        break
      end
      start = start + 1 -- a continuation byte of a character cut in two
    end
    return ("[corral: output cut: the first %d bytes were dropped, the last %d follow]\n%s"):format(
      dropped + start - 1,
      #output - start + 1,
      output:sub(start)
    )
  end
  local timer ---@type uv.uv_timer_t|nil
  local timed_out = false
  -- bash, not /bin/sh: the classifier reads the command as bash does, and dash reads some
  -- commands differently (`echo &>/dev/null touch x` runs touch in dash).
  -- From a system directory, never from PATH: a workspace .venv/bin on PATH could hold a
  -- bash the sandbox planted, and with the sandbox off it would run on the host.
  local found, bash_err = engine.call("host_program", engine.request(request.bufnr_for_run, { name = "bash" }))
  if not found then
    finish({ status = "failed", error = "bash tool calls need bash: " .. tostring(bash_err) })
    return
  end
  local bash = found.path
  local cancelled = false
  local job, err, info -- declared first: on_exit reads info
  -- decision.command: the text the classifier read (with `cd` to input.cwd when given)
  local command = decision.command or tool_call.input.command
  job, err, info = require("corral.runner").start({ bash, "-c", command }, request.bufnr_for_run, {
    stdin = "null", -- a command waiting for input would wait until the timeout
    on_stdout = collect,
    on_stderr = collect,
    on_exit = function(code, repairs, changes)
      handle.stop = nil
      if timer then
        timer:stop()
        timer:close()
      end
      finish({
        status = cancelled and "cancelled" or timed_out and "timed_out" or "ran",
        exit = code,
        timed_out = timed_out,
        timeout = config.timeout,
        output = kept(),
        truncated = dropped > 0,
        sandboxed = info and info.sandboxed or false,
        repairs = repairs,
        changes = changes,
      })
    end,
  })
  if not job then
    finish({ status = "failed", error = err })
    return
  end
  handle.stop = function()
    cancelled = true
    require("corral.runner").stop_job(job)
  end
  timer = vim.uv.new_timer()
  timer:start(
    config.timeout * 1000,
    0,
    vim.schedule_wrap(function()
      timed_out = true
      require("corral.runner").stop_job(job) -- the sandbox goes, with everything in it
    end)
  )
end

---Tell the user, once, that a call's changes wait for their review: the result says so to
---the model, and a chat plugin may show the user nothing of it (r61c HELDSILENT).
---@param tool string
---@param result table
local function tell_held(tool, result)
  local set = type(result.changes) == "table" and result.changes or type(result.held) == "table" and result.held or nil
  if not set or type(set.held) ~= "table" or #set.held == 0 or type(set.id) ~= "string" or set.id == "" then
    return
  end
  local names = {}
  for i, item in ipairs(set.held) do
    if i > 3 then
      break
    end
    names[#names + 1] = vim.fn.strtrans(vim.fn.fnamemodify(tostring(item.path), ":~:."))
  end
  local count = type(set.counts) == "table" and tonumber(set.counts.held) or #set.held
  local more = count > #names and (" and %d more"):format(count - #names) or ""
  vim.notify(
    ("corral: the chat's %s call left %s%s held for your review: :Sandbox changes %s"):format(
      tool,
      table.concat(names, ", "),
      more,
      set.id
    ),
    vim.log.levels.WARN
  )
end

---Ask the guard about `tool_call` for its buffer (resolvers get the call as their context).
---@return integer bufnr, table request, boolean ok, any decision, string? err
local function ask_guard(tool_call, opts, extra)
  opts = opts or {}
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  local size = input_bytes(tool_call.input) + input_bytes(tool_call.name) + input_bytes(tool_call.id)
  if size > MAX_INPUT then
    local message = size == math.huge and "the call's input is nested more than 32 levels deep"
      or ("the call's input is %d MiB, more than corral takes (%d MiB)"):format(
        math.floor(size / 1048576),
        MAX_INPUT / 1048576
      )
    return bufnr,
      engine.request(bufnr, { tool = "" }),
      true,
      {
        decision = "deny",
        source = "corral",
        reason = message,
        refusal = {
          code = "invalid-input",
          rule = "input",
          layer = "builtin",
          message = message,
          hint = "write large contents in parts (write, then edit to append), or from a command",
        },
      },
      nil
  end
  local context = { bufnr = bufnr, tool_call_id = tool_call.id, cwd = engine.cwd_of(bufnr) }
  local request = engine.request(
    bufnr,
    vim.tbl_extend("force", {
      tool = tool_call.name,
      input = tool_call.input or {},
      lua_auto_approve = lua_auto_approve(tool_call, context),
    }, extra)
  )
  current_call = context
  local ok, decision, err = pcall(engine.call, "guard", request)
  current_call = nil
  if ok and not vim.api.nvim_buf_is_valid(bufnr) then
    -- A call for a chat whose buffer is gone would be decided without that chat's settings
    -- (its narrowing) and in Neovim's directory: refused, as one that waited in the window.
    local message = ("the chat this call comes from (buffer %d) is closed; its settings went with it"):format(bufnr)
    decision, err =
      {
        decision = "deny",
        source = "corral",
        reason = message,
        refusal = {
          code = "invalid-input",
          rule = "opts.bufnr",
          layer = "builtin",
          message = message,
          hint = "send the call from an open chat",
        },
      }, nil
  end
  return bufnr, request, ok, decision, err
end

---Run a tool call through corral (:help corral.execute()). `on_done` gets a corral.Result.
---@param tool_call corral.ToolCall
---@param opts {bufnr: integer|nil}|nil
---@param on_done fun(result: corral.Result)
---@return corral.Handle handle `handle.cancel()` stops the call
function M.execute(tool_call, opts, on_done)
  vim.validate("tool_call", tool_call, "table")
  vim.validate("on_done", on_done, "function")
  -- What is checked, shown and run is one copy: a plugin changing its table after this call
  -- (while the window waits) must not run other than what was decided (review r40c)
  tool_call = vim.deepcopy(tool_call)
  if type(tool_call.name) == "string" and #tool_call.name > 256 then
    tool_call.name = tool_call.name:sub(1, 256) -- (no tool's: refused, and said short)
  end
  -- audit_at_end: one audit line per call, written by finish()
  local bufnr, request, ok_call, decision, err = ask_guard(tool_call, opts, { audit_at_end = true })
  request.bufnr_for_run = bufnr
  if not ok_call then
    decision, err = nil, tostring(decision)
  end
  local handle = { done = false } ---@type corral.Handle
  local function finish(raw)
    if handle.done then
      return
    end
    handle.done = true
    local brief = decision and { decision = decision.decision, source = decision.source, reason = decision.reason }
      or { decision = "deny", source = "corral", reason = "the guard could not decide" }
    local command = tool_call.name == "bash" and type(tool_call.input) == "table" and said(tool_call.input.command)
      or nil
    local answer = engine.call(
      "result",
      engine.request(bufnr, { tool = tool_call.name, raw = raw, decision = brief, command = command })
    )
    local result = type(answer) == "table" and answer.result or nil
    if type(result) ~= "table" then
      -- the engine is gone: still one shape, said plainly
      result = vim.tbl_extend("keep", raw, {
        tool = tool_call.name,
        decision = brief,
        sandboxed = false,
        ok = false,
        status = raw.status or "failed",
      })
      result.summary = "could not run: " .. tostring(raw.error or "corral's engine failed")
    end
    tell_held(tool_call.name, result)
    engine.call("audit", {
      event = {
        tool = tool_call.name,
        status = result.status,
        decision = brief.decision,
        source = brief.source,
        command = type(tool_call.input) == "table" and said(tool_call.input.command) or nil,
        path = type(tool_call.input) == "table" and said(tool_call.input.path) or nil,
        url = type(tool_call.input) == "table" and said(tool_call.input.url) or nil,
        exit = result.exit,
        class = decision and decision.class ~= vim.NIL and decision.class or nil,
        sandboxed = result.sandboxed,
        refusal = result.refusal,
        chat = request.buffer_path, -- (taken when the call came: the buffer may be gone now)
      },
    })
    on_done(result)
  end
  handle.cancel = function()
    if handle.done then
      return false
    end
    if handle.stop then
      handle.stop() -- a running command: its exit finishes the call as cancelled
      return true
    end
    if handle.close_window then
      handle.close_window()
    end
    if handle.in_engine then
      return false -- a file tool already running in the engine finishes on its own
    end
    finish({ status = "cancelled" })
    return true
  end
  if not decision then
    finish({ status = "failed", error = err })
    return handle
  end
  if decision.sandboxed == false and tool_call.name == "bash" and not state.warned_unsandboxed then
    state.warned_unsandboxed = true -- said once a session; the window and status say it each time
    vim.notify(
      "corral: tool calls run UNSANDBOXED here: "
        .. table.concat(decision.warnings or {}, "; ")
        .. " (:Sandbox status says why)",
      vim.log.levels.WARN
    )
  end
  local function run()
    if tool_call.name == "bash" then
      run_bash(request, tool_call, decision, finish, handle)
    else
      handle.in_engine = true
      -- (a read approved unasked as one inside the workspace is held to that when it runs:
      -- a symlink re-pointed since must not take it elsewhere, r91a UNASKEDREAD_RACE)
      request.approved_by = decision.source
      call_async("op", request, function(result)
        finish(result)
      end)
    end
  end
  if decision.decision == "approve" then
    run()
  elseif decision.decision == "deny" then
    finish({ status = "refused", refusal = decision.refusal })
  else
    local asked, close = pcall(require("corral.confirm").ask, tool_call, decision, function(approved)
      handle.close_window = nil
      if handle.done then
        return -- cancelled while the window was open
      end
      if approved and not vim.api.nvim_buf_is_valid(bufnr) then
        -- decided with the chat's settings, which went with its buffer while the call waited:
        -- it would run with others
        finish({ status = "cancelled", error = "the chat's buffer was closed while the call waited" })
      elseif approved then
        decision.decision, decision.source = "approve", "user"
        run()
      else
        finish({
          status = "denied_by_user",
          refusal = {
            code = "denied-by-user",
            rule = "confirmation window",
            layer = "you",
            message = "you declined it in the confirmation window",
            hint = "approve it in the window (a / y) when the model asks again",
          },
        })
      end
    end)
    if not asked then
      finish({ status = "failed", error = "the confirmation window failed: " .. tostring(close) })
      return handle
    end
    handle.close_window = close
  end
  return handle
end

---What the guard would do with `tool_call`, without running or asking anything: a chat
---plugin's own approval step can ask this first. Synchronous.
---@param tool_call corral.ToolCall
---@param opts {bufnr: integer|nil}|nil
---@return corral.Decision|nil decision, string? err
function M.decide(tool_call, opts)
  vim.validate("tool_call", tool_call, "table")
  if type(tool_call.name) == "string" and #tool_call.name > 256 then
    tool_call = vim.tbl_extend("force", tool_call, { name = tool_call.name:sub(1, 256) })
  end
  local _, _, ok, decision, err = ask_guard(tool_call, opts, { dry_run = true })
  if not ok then
    return nil, tostring(decision)
  end
  if not decision then
    return nil, err
  end
  return {
    decision = decision.decision,
    source = decision.source,
    reason = decision.reason,
    class = decision.class ~= vim.NIL and decision.class or nil,
    refusal = decision.refusal,
  }
end

return M
