-- :Sandbox and its subcommands: one table, each with `impl` and `complete`.
local M = {}

---@param message string
---@param level integer|nil
local function say(message, level)
  vim.notify(message, level or vim.log.levels.INFO)
end

---`q` in corral's windows: close the window, or leave the buffer when it is the last window.
function M.close_window()
  if not pcall(vim.api.nvim_win_close, 0, false) then
    local ok = pcall(vim.cmd, "buffer #")
    if not ok then
      vim.cmd("enew")
    end
  end
end

---A scratch buffer in a split below, reused by name, acting for buffer `source`.
---@param name string
---@param lines string[]
---@param source integer|nil
---@return integer bufnr
function M.scratch(name, lines, source)
  local bufnr = vim.fn.bufnr(name)
  if bufnr == -1 or not vim.api.nvim_buf_is_valid(bufnr) then
    bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(bufnr, name)
    vim.bo[bufnr].bufhidden = "hide"
    vim.bo[bufnr].swapfile = false
  end
  local engine_source = source and (vim.b[source].corral_source or source)
  vim.b[bufnr].corral_source = engine_source
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  vim.keymap.set("n", "q", M.close_window, { buffer = bufnr, nowait = true, desc = "corral: close" })
  local win = vim.fn.bufwinid(bufnr)
  if win == -1 then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, bufnr)
  else
    vim.api.nvim_set_current_win(win)
  end
  return bufnr
end

---Call a change-set method of the engine and show what it says: `out` in a scratch buffer
---(or a message when short), `err` as warnings.
---@param method string
---@param extra table
---@param buffer_name string|nil show `out` in this scratch buffer
---@return table|nil result
local function change_call(method, extra, buffer_name)
  local engine = require("corral.engine")
  local source = vim.api.nvim_get_current_buf()
  local result, err = engine.call(method, engine.request(source, extra))
  if not result then
    say("corral: " .. tostring(err), vim.log.levels.ERROR)
    return nil
  end
  if #result.err > 0 then
    say("corral: " .. table.concat(result.err, "\ncorral: "), vim.log.levels.WARN)
  end
  if buffer_name then
    return result, M.scratch(buffer_name, result.out, source)
  end
  if #result.out > 0 then
    say("corral: " .. table.concat(result.out, "\n"), result.code == 0 and vim.log.levels.INFO or vim.log.levels.ERROR)
  end
  return result
end

-- the subcommands that take no argument at all
local NO_ARGUMENTS = { status = true, enable = true, disable = true, reset = true, stop = true, reload = true }

-- the subcommands after which `|` starts another command: all that take no path (a change
-- set's id never holds a `|`)
local CHAINS = {
  status = true,
  enable = true,
  disable = true,
  reset = true,
  stop = true,
  reload = true,
  changes = true,
  undo = true,
}

---@param arglead string
---@return string[]
local function complete_ids(arglead)
  local ids = require("corral.engine").call("held_ids", require("corral.engine").request()) or {}
  return vim.tbl_filter(function(id)
    return vim.startswith(id, arglead)
  end, ids)
end

---Show the change sets' buffers again after an apply or discard: a `corral://changes/ID`
---left open still said `held:` for what was applied (r58c NVIMSTALE).
---@param id string
local function refresh_changes(id)
  local engine = require("corral.engine")
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(bufnr)
    if name == "corral://changes" or name == "corral://changes/" .. id then
      local which = name == "corral://changes" and "" or id
      local result, err = engine.call("changes", engine.request(vim.b[bufnr].corral_source or 0, { id = which }))
      local lines = result and (#result.out > 0 and result.out or result.err) or { "corral: " .. tostring(err) }
      vim.bo[bufnr].modifiable = true
      vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
      vim.bo[bufnr].modifiable = false
    end
  end
end

---A subcommand acting on one held change set: `:Sandbox {name} {id} [path...]`.
---@param method string the engine's method
---@param name string
---@param desc string
---@param reload boolean whether files may have changed (buffers are checked again)
local function on_held(method, name, desc, reload)
  return {
    desc = desc,
    impl = function(args)
      if #args == 0 then
        say(("corral: :Sandbox %s {id} [path...] (see :Sandbox changes)"):format(name), vim.log.levels.ERROR)
        return
      end
      change_call(method, { id = args[1], paths = vim.list_slice(args, 2) })
      refresh_changes(args[1])
      if reload then
        vim.cmd("checktime")
      end
    end,
    complete = complete_ids,
  }
end

---@type table<string, {impl: fun(args: string[], cmd: table), complete: (fun(arglead: string, words: string[]): string[])|nil, desc: string}>
M.subcommands = {
  changes = {
    desc = "list held change sets, or show one: each path's verdict and a diff",
    impl = function(args)
      local id = args[1]
      local name = id and ("corral://changes/" .. id) or "corral://changes"
      local _, bufnr = change_call("changes", { id = id or "" }, name)
      if bufnr and id then
        vim.bo[bufnr].filetype = "diff"
        vim.wo.foldmethod = "expr"
        vim.wo.foldexpr = "getline(v:lnum)=~'^diff '?'>1':'='"
        vim.wo.foldlevel = 1
      end
    end,
    complete = complete_ids,
  },
  apply = on_held(
    "apply_changes",
    "apply",
    "apply a held change set: what passes the check, and the paths named",
    true
  ),
  discard = on_held("discard_changes", "discard", "drop a held change set, or the paths named from it", false),
  undo = {
    desc = "undo the newest change set applied to this workspace (list: what undo can take back)",
    impl = function(args)
      if args[1] == "list" or args[1] == "--list" then -- (the CLI's spelling too, r61c UNDOLIST)
        change_call("undo", { list = true })
        return
      end
      change_call("undo", { id = args[1] or "" })
      vim.cmd("checktime")
    end,
    complete = function()
      return { "list" }
    end,
  },
  status = {
    desc = "show the effective sandbox for this buffer",
    impl = function()
      local source = vim.api.nvim_get_current_buf()
      local engine = require("corral.engine")
      local text, err = engine.call("status_text", engine.request(source))
      if not text then
        say("corral: " .. err, vim.log.levels.ERROR)
        return
      end
      local bufnr = M.scratch("corral://status", vim.split(text, "\n", { trimempty = true }), source)
      vim.bo[bufnr].filetype = "corral-status"
    end,
  },
  enable = {
    desc = "turn the sandbox on for this session (refused when no backend works)",
    impl = function()
      local sandbox = require("corral.sandbox")
      local previous = sandbox.get_override()
      sandbox.set_enabled(true)
      local ok, reason = sandbox.validate_backend(0)
      if not ok then
        if previous then
          sandbox.set_enabled(previous["sandbox.enabled"])
        else
          sandbox.reset_enabled()
        end
        say("corral: not enabled: " .. tostring(reason), vim.log.levels.ERROR)
        return
      end
      say("corral: sandbox enabled for this session")
    end,
  },
  disable = {
    desc = "turn the sandbox off for this session",
    impl = function()
      require("corral.sandbox").set_enabled(false)
      say("corral: sandbox DISABLED for this session: commands run unsandboxed", vim.log.levels.WARN)
    end,
  },
  reset = {
    desc = "forget :Sandbox enable/disable",
    impl = function()
      require("corral.sandbox").reset_enabled()
      say("corral: runtime override cleared")
    end,
  },
  reload = {
    desc = "read this buffer's frontmatter again",
    impl = function()
      local chat = require("corral.chat")
      local bufnr = vim.api.nvim_get_current_buf()
      local read
      if not chat.is_attached(bufnr) then
        read = chat.attach(bufnr)
      else
        read = chat.refresh(bufnr, true, true)
      end
      if read then
        chat.confirm(bufnr)
      end
    end,
  },
  run = {
    desc = "run a shell command in this buffer's sandbox (% and # expand as in :!)",
    impl = function(args)
      if #args == 0 then
        say("corral: :Sandbox run {cmd}", vim.log.levels.ERROR)
        return
      end
      local runner = require("corral.runner")
      local bufnr = vim.api.nvim_get_current_buf()
      local command, err = runner.expand(table.concat(args, " "), vim.b[bufnr].corral_source or bufnr)
      if not command then
        say("corral: :Sandbox run: " .. err, vim.log.levels.ERROR)
        return
      end
      runner.run_in_window(command, bufnr)
    end,
    ---The first word completes as a command, the rest as file names, as with :!.
    complete = function(arglead, words)
      if #words == 0 then
        return vim.fn.getcompletion(arglead, "shellcmd")
      end
      return vim.fn.getcompletion(arglead, "file")
    end,
  },
  stop = {
    desc = "stop the run in this window, or the newest one still running",
    impl = function()
      if not require("corral.runner").stop() then
        say("corral: no :Sandbox run is running", vim.log.levels.WARN)
      end
    end,
  },
}

---@param cmd table the user command's table (args, fargs, ...)
function M.run(cmd)
  local text, rest = cmd.args, nil
  local args ---@type string[]
  if text:match("^%s*run%f[%s%z]") then
    -- keep the command as typed: fargs would split quoted words, and `|` is the shell's, as
    -- with :!
    local command = text:gsub("^%s*run%s*", "")
    args = { "run", command ~= "" and command or nil }
  else
    -- `:Sandbox disable | Sandbox status`: a subcommand that takes no path ends at a `|`, as
    -- with 'bar' (which :Sandbox cannot have: `:Sandbox run ls | wc -l` pipes). One that
    -- takes a change set's paths does not: a held path may hold a `|`, and typed back as
    -- corral printed it, what follows would run as a command (r20b F2).
    local here, after = text:match("^(.-)|(.*)$")
    local first = text:match("^%s*(%S+)")
    if here and CHAINS[first or "status"] then
      rest = after
      args = vim.split(here, "%s+", { trimempty = true })
    else
      args = vim.deepcopy(cmd.fargs) -- as the user typed them, `\ ` included
    end
  end
  local name = table.remove(args, 1) or "status"
  local sub = M.subcommands[name]
  if not sub then
    local names = vim.tbl_keys(M.subcommands)
    table.sort(names)
    say(("corral: unknown subcommand %q; one of: %s"):format(name, table.concat(names, ", ")), vim.log.levels.ERROR)
    return
  end
  if NO_ARGUMENTS[name] and #args > 0 then
    -- (`:Sandbox disable now` did what `:Sandbox disable` does, saying nothing of `now`, r90t
    -- EXTRAARGSIGNORED: a typo must not pass for an option)
    say(("corral: :Sandbox %s takes no arguments (got %s)"):format(name, table.concat(args, " ")), vim.log.levels.ERROR)
    return
  end
  sub.impl(args, cmd)
  if rest and rest:match("%S") then
    vim.cmd(rest)
  end
end

---@param arglead string
---@param cmdline string
---@return string[]
function M.complete(arglead, cmdline)
  local words = vim.split(cmdline, "%s+", { trimempty = true })
  local typing_first = #words == 1 or (#words == 2 and arglead ~= "")
  if typing_first then
    local names = vim.tbl_keys(M.subcommands)
    table.sort(names)
    return vim.tbl_filter(function(n)
      return vim.startswith(n, arglead)
    end, names)
  end
  local sub = M.subcommands[words[2]]
  if sub and sub.complete then
    -- the words typed after the subcommand, not counting the one being completed
    local before = vim.list_slice(words, 3, #words - (arglead ~= "" and 1 or 0))
    return sub.complete(arglead, before)
  end
  return {}
end

return M
