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

---Flemma's wrap gets no buffer: corral reads the call as the chat's whose tool call it
---judged last (Flemma asks the approval chain for a call right before running it), else the
---current buffer's.
local judged_buffer ---@type integer|nil
---@return integer
local function current_buffer()
  if judged_buffer and vim.api.nvim_buf_is_valid(judged_buffer) then
    return judged_buffer
  end
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
local function as_corral_call(tool_name, input, bufnr, cwd)
  input = type(input) == "table" and input or {}
  if tool_name == "bash" then
    return { name = "bash", input = { command = input.command } }
  elseif tool_name == "read" then
    return { name = "read", input = { path = as_flemma_resolves(input.path, bufnr) } }
  elseif tool_name == "ls" then
    -- Flemma's ls runs on the host, its relative paths against its tool's cwd (the chat
    -- file's directory unless configured): a hidden directory (~/.ssh) is not listed
    local path = input.path
    if type(path) == "string" and path ~= "" and not path:match("^[/~]") and cwd then
      path = vim.fs.joinpath(cwd, path)
    elseif type(path) == "string" and path ~= "" and not path:match("^[/~]") then
      path = as_flemma_resolves(path, bufnr)
    end
    return { name = "ls", input = { path = path } }
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
  -- Named, not detected: Flemma caches what "auto" detected, and may run a command with an
  -- older answer (its own bwrap, or none) than the one a fresh detection gives here.
  return fsandbox.resolve_config(bufnr).backend == M.BACKEND
end

---corral's decision for Flemma's call: "approve", "require_approval", "deny", or nil (not a
---tool corral judges).
---@return string|nil
local function decision(tool_name, input, context)
  local bufnr = type(context) == "table" and tonumber(context.bufnr) or nil
  if not bufnr or bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  judged_buffer = bufnr
  local path = type(input) == "table" and input.path or nil
  if type(path) == "string" and (path:find("[`$\n]") or path:match("^~[^/]")) then
    -- Flemma resolves `~` paths with vim.fn.expand(), which hands a backtick to the shell:
    -- whatever the tool (its ls and find too)
    return "deny"
  end
  local call = as_corral_call(tool_name, input, bufnr, context and context.cwd)
  if not call then
    return nil
  end
  local depth = type(input) == "table" and tonumber(input.max_depth) or 1
  if call.name == "ls" and depth > 1 then
    -- below $HOME (or /) lie the directories the sandbox hides: names under them too. Where
    -- it really is: `//x` and /proc/self/root/x are other spellings of x
    local listed = type(call.input.path) == "string" and vim.uv.fs_realpath(call.input.path)
    local home = vim.uv.fs_realpath(vim.env.HOME or "/") or "/"
    if not listed or listed == "/" or vim.startswith(home .. "/", listed .. "/") then
      return "deny", "a listing that goes down through your home directory, hidden from the sandbox"
    end
  end
  local decided = require("corral").decide(call, { bufnr = bufnr })
  if not decided then
    return "require_approval" -- corral could not decide: ask, never pass
  end
  if decided.decision == "approve" and call.name == "bash" and not M.wraps(bufnr) then
    return "require_approval" -- approved because corral's sandbox confines it: not here
  end
  return decided.decision, decided.reason
end

---Why corral refuses a call however it was approved, or nil.
---@return string|nil
local function refused(tool_name, input, ctx)
  ctx = type(ctx) == "table" and ctx or {}
  if type(ctx.tool_id) == "string" and not ctx.tool_id:match("^[%w_%-]+$") then
    -- Flemma names files after a call's id (a long output's overflow file): the id comes
    -- from the chat, which the model's reply can write (`toolu_x/../..$HOME/x`)
    return "corral: refused: a tool call id with characters other than letters, digits, _ and -"
  end
  local decided, reason = decision(tool_name, input, { bufnr = ctx.bufnr, cwd = ctx.cwd })
  if decided ~= "deny" then
    return nil
  end
  return "corral: refused, however it was approved: " .. tostring(reason or "see :Sandbox status")
end

---Flemma runs a tool whose result block says `(approved)` without asking its approval chain,
---and the model's own text can write such a block into the chat (Flemma writes replies as
---they come): every executor Flemma looks up asks corral again, right before it runs.
local function guard_executors()
  local wrap = require("corral.integrations.wrap").wrap
  wrap("flemma.tools.registry", "get_executor", function(get_executor)
    return function(name, ...)
      local fn, is_async = get_executor(name, ...)
      if type(fn) ~= "function" then
        return fn, is_async
      end
      if is_async then
        return function(input, ctx, callback)
          local why = refused(name, input, ctx)
          if why then
            callback({ success = false, error = why })
            return nil
          end
          return fn(input, ctx, callback)
        end,
          is_async
      end
      return function(input, ctx)
        local why = refused(name, input, ctx)
        if why then
          return { success = false, error = why }
        end
        return fn(input, ctx)
      end,
        is_async
    end
  end)
end

-- Callers of Flemma's path resolver that read what it resolves into a request: include()
-- and `@./file` references (templating), and the project files a personality reads.
local READERS = { "flemma/templating/eval.lua", "flemma/personalities/builder.lua" }

---Flemma resolves every path through one function, which hands `~/...` to vim.fn.expand():
---a backtick there runs a shell command, and the chat (the model's reply too) can hold such
---a path. corral's version joins `~/` to $HOME without expansion, for every caller; and for
---the callers that read the file into a request (include() and `@./file` references, nested
---ones too, and a personality's project files) a path corral's read refuses (a credential,
---a hidden area) is an error instead.
local function guard_includes()
  local wrap = require("corral.integrations.wrap").wrap
  wrap("flemma.utilities.path", "resolve", function(resolve)
    return function(path, base_dir, ...)
      if type(path) == "string" and path:find("$", 1, true) then
        -- (Flemma's normalize expands `$VAR` from the editor's environment, and its error
        -- names the result: a template caught it and put an API key into the request,
        -- r88c FLEMMAENVINCLUDE)
        error({
          type = "file",
          filename = path,
          raw = path,
          error = "corral: refused to include " .. path .. ": a path with `$` in it",
        })
      end
      if type(path) == "string" and (path == "~" or vim.startswith(path, "~/")) then
        path = vim.fs.joinpath(vim.env.HOME or "/nonexistent", path:sub(3))
      end
      local resolved = resolve(path, base_dir, ...)
      local caller = debug.getinfo(2, "S")
      local source = caller and caller.source or ""
      local reads = vim.iter(READERS):any(function(r)
        return source:find(r, 1, true) ~= nil
      end)
      -- (a path that is not there reads nothing: Flemma looks for files that may not exist)
      if type(resolved) == "string" and reads and vim.uv.fs_stat(resolved) then
        local decided = require("corral").decide(
          { name = "read", input = { path = resolved } },
          { bufnr = current_buffer() }
        )
        if not decided or decided.decision == "deny" then
          error({
            type = "file",
            filename = resolved,
            raw = path,
            error = "corral: refused to include " .. resolved .. ": " .. tostring(
              decided and decided.reason or "corral could not decide"
            ),
          })
        end
      end
      return resolved
    end
  end)
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

---A path as Flemma's file tools would take it, without Flemma's vim.fn.expand() (which hands
---a name with a backtick to the shell): relative to the chat file's directory, `~/` from
---$HOME, anything else refused.
---@return string|nil path, string? err
local function flemma_path(path, ctx)
  if type(path) ~= "string" or path == "" then
    return nil, "no path given"
  end
  if path:sub(1, 2) == "~/" then
    return vim.fs.joinpath(vim.env.HOME or "", path:sub(3))
  elseif path:sub(1, 1) == "~" then
    return nil, "a path starting with ~user is not taken: give it in full"
  elseif path:sub(1, 1) == "/" then
    return path
  end
  local base = ctx and ctx.__dirname or vim.fn.getcwd()
  return vim.fs.joinpath(base, path)
end

---Flemma's write and edit tools, run by corral: its guard, the change-set rules and
---corral's window, corral's guarded file operations (never Flemma's io.open on the host).
---Flemma's read stays Flemma's, judged by the resolvers (see decision).
---@param name string corral's tool
---@param input_of fun(input: table, path: string): table
---@return fun(input: table, ctx: table, callback: fun(result: table))
local function through_corral(name, input_of)
  return function(input, ctx, callback)
    local path, err = flemma_path(input.path, ctx)
    if not path then
      callback({ success = false, error = "corral: " .. err })
      return nil
    end
    local handle = require("corral").execute(
      { name = name, input = input_of(input, path), id = ctx and ctx.tool_id or nil },
      { bufnr = ctx and ctx.bufnr or nil },
      function(result)
        local text = require("corral").text(result)
        if result.ok then
          callback({ success = true, output = text })
        else
          callback({ success = false, error = text })
        end
      end
    )
    return function()
      handle.cancel()
    end
  end
end

M.FILE_TOOLS = {
  write = through_corral("write", function(input, path)
    return { path = path, content = input.content }
  end),
  edit = through_corral("edit", function(input, path)
    return { path = path, old = input.oldText, new = input.newText }
  end),
}

---Put corral under Flemma's own write and edit tools (their descriptions and inputs stay
---Flemma's).
local function replace_file_tools()
  local ok, registry = pcall(require, "flemma.tools.registry")
  if not ok then
    return
  end
  for name, execute in pairs(M.FILE_TOOLS) do
    local tool = registry.get(name)
    if tool and tool.execute ~= execute then
      local ours = vim.tbl_extend("force", {}, tool, { execute = execute, async = true })
      registry.unregister(name)
      registry.register(name, ours)
    end
  end
  -- A read's result is the file's text, not a template: Flemma evaluates the `{{ }}` of a
  -- tool that declares `template_tool_result` when it builds the next request, and a file
  -- a command wrote is the attacker's (r86c FLEMMATPLEXEC, r88c FLEMMAOPTREP: the way in
  -- for every template finding; the bounds of flemma_eval stay for the other ways).
  for name, tool in pairs(registry.get_all and registry.get_all({ include_disabled = true }) or {}) do
    if type(tool) == "table" and vim.tbl_contains(tool.capabilities or {}, "template_tool_result") then
      local kept = vim.tbl_filter(function(c)
        return c ~= "template_tool_result"
      end, tool.capabilities)
      registry.unregister(name)
      registry.register(name, vim.tbl_extend("force", {}, tool, { capabilities = kept }))
    end
  end
end

-- What an untrusted chat's Flemma frontmatter may set: the model and how it answers, fewer
-- tools. Everything else acts outside corral's sandbox or widens it: a tool's env (jobstart
-- hands it to the host's launcher: LD_PRELOAD) or shell, where long output is written,
-- modules to load, mcporter's program, secrets, logging, Flemma's sandbox and approval; even
-- the looks (a highlight name goes unescaped into 'statuscolumn', where `%{expr}` runs Vim
-- script). Like corral's own frontmatter, that needs the file trusted (:trust).
local SAFE_TOP = { provider = true, model = true }
-- (a provider's own parameters may say where requests go, with your key: vertex's location)
local SAFE_PARAMETERS = {
  max_tokens = true,
  temperature = true,
  timeout = true,
  connect_timeout = true,
  cache_retention = true,
  thinking = true,
  level = true,
  foreign = true,
}

---@param op string
---@param path string
---@return boolean
local function safe_frontmatter(op, path)
  local first = path:match("^[^.]+") or ""
  if SAFE_TOP[first] then
    return true
  end
  if first == "parameters" then
    return SAFE_PARAMETERS[path:match("[^.]+$")] == true
  end
  return path == "tools" and op == "remove" -- a tool fewer
end

local dropped = {} ---@type table<integer, table<string, boolean>>

---Flemma applies a chat's frontmatter (`flemma.opt`) whoever wrote the file; corral lets an
---untrusted chat set only what stays inside the sandbox (SAFE_TOP, SAFE_PARAMETERS), and says
---what it dropped.
local function guard_frontmatter()
  local patch = require("corral.integrations.wrap").wrap
  patch("flemma.config.store", "record", function(record)
    return function(layer, bufnr, op, path, value, ...)
      local store = require("flemma.config.store")
      if layer ~= store.LAYERS.FRONTMATTER or safe_frontmatter(op, tostring(path)) then
        return record(layer, bufnr, op, path, value, ...)
      end
      local buffer = bufnr and require("corral.state").buffers[bufnr]
      if buffer and buffer.trusted then
        return record(layer, bufnr, op, path, value, ...)
      end
      dropped[bufnr or 0] = dropped[bufnr or 0] or {}
      if not dropped[bufnr or 0][path] then
        dropped[bufnr or 0][path] = true
        vim.schedule(function()
          vim.notify(
            ("corral: this chat's frontmatter sets Flemma's %s, which acts outside the sandbox: not applied (:trust the file to allow it)"):format(
              path
            ),
            vim.log.levels.WARN
          )
        end)
      end
    end
  end)
end

---Register corral with Flemma: call after `require("flemma").setup()`. Safe to call again.
function M.setup()
  replace_file_tools()
  guard_executors()
  guard_includes()
  guard_frontmatter()
  require("corral.integrations.flemma_eval").setup()
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
