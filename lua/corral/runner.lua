-- Start wrapped commands with jobstart: the editor never blocks on them.
local sandbox = require("corral.sandbox")

local M = {}

-- Commands started here and still running: job -> what wrap_command said of it.
---@type table<integer, corral.Wrapped|false>
local running = {}

---Start `argv` in the buffer's sandbox. `opts` are jobstart options; `opts.on_exit` gets
---`(code, repairs, changes)`: what corral held or put back after the run (lines), and the
---change set's summary (see sandbox.after_run; nil with direct writes).
---@param argv string[]
---@param bufnr integer|nil
---@param opts table|nil
---@return integer|nil job, string? err, corral.Wrapped? info
function M.start(argv, bufnr, opts)
  local wrapped, err, info = sandbox.wrap_command(argv, bufnr)
  if not wrapped then
    return nil, err
  end
  opts = vim.deepcopy(opts or {})
  local on_exit = opts.on_exit
  local job
  opts.on_exit = function(_, code)
    running[job] = nil
    local repairs, changes = sandbox.after_run(info)
    if on_exit then
      on_exit(code, repairs, changes)
    end
  end
  -- (an error, not only a 0 or -1: E903 for an argument past the kernel's 128 KiB, r78c
  -- BASHARGMAX; it escaped, and the call's on_done never came)
  local ok, started = pcall(vim.fn.jobstart, wrapped, opts)
  job = ok and started or 0
  if job <= 0 then
    sandbox.after_run(info) -- (its change set, empty: removed)
    return nil, "jobstart failed for " .. wrapped[1] .. (ok and "" or (": " .. tostring(started)))
  end
  running[job] = info or false
  return job, nil, info
end

---Stop a command started by M.start, and everything it started. jobstop alone reaches only
---the launcher, and bwrap outlives it (blocked for good when it was still setting up).
---Where the sandbox runs, its pid 1 is killed, which ends the whole namespace; the launcher
---then checks the change set as after any run and exits. Before that, the job's process group
---(the launcher and bwrap) is killed.
---@param job integer
---@return boolean stopped false when it was not running
function M.stop_job(job)
  local info = running[job]
  if info == nil then
    return false
  end
  if info and info.stage and info.stage ~= "" then
    -- (interrupted: what it wrote is held whole, not applied, as for Ctrl-C at `corral run`)
    if require("corral.engine").call("stop_sandbox", { stage = info.stage, interrupted = true }) == true then
      return true
    end
  end
  local ok, pid = pcall(vim.fn.jobpid, job)
  if ok and pid > 0 then
    vim.uv.kill(-pid, "sigkill")
  end
  vim.fn.jobstop(job)
  return true
end

-- Quitting the editor stops every command still running, sandbox and all.
vim.api.nvim_create_autocmd("VimLeavePre", {
  group = vim.api.nvim_create_augroup("corral_runner", { clear = true }),
  callback = function()
    for job in pairs(running) do
      M.stop_job(job)
    end
  end,
})

-- :Sandbox run's jobs, by their output buffer.
---@type table<integer, integer>
M.jobs = {}
---:Sandbox run buffers whose run the user stopped
---@type table<integer, boolean>
M.stopped = {}
local runs = 0
local ns = vim.api.nvim_create_namespace("corral_run")

---Expand `%` and `#` (with modifiers such as `:p`, `:h`, `:S`) as `:!` does, for `bufnr`;
---`\%` and `\#` stay as they are, without the backslash. Environment variables are left to
---the shell: the editor's own environment must not leak into the command.
---@param command string
---@param bufnr integer
---@return string|nil expanded, string? err
function M.expand(command, bufnr)
  local out, i, n = {}, 1, #command
  while i <= n do
    local c = command:sub(i, i)
    if c == "\\" and command:sub(i + 1, i + 1):match("[%%#]") then
      out[#out + 1] = command:sub(i + 1, i + 1)
      i = i + 2
    elseif c == "%" or c == "#" then
      local j = i + 1
      while command:sub(j, j) == ":" and command:sub(j + 1, j + 1):match("[phtreS~.]") do
        j = j + 2
      end
      local item = command:sub(i, j - 1)
      local value = vim.api.nvim_buf_call(bufnr, function()
        return vim.fn.expand(item)
      end)
      if value == "" then
        return nil, ("no file name for '%s' (write \\%s for a literal %s)"):format(c, c, c)
      end
      out[#out + 1] = value
      i = j
    else
      out[#out + 1] = c
      i = i + 1
    end
  end
  return table.concat(out)
end

---Stop the run shown in `out` (default: the current buffer, else the newest running run).
---@param out integer|nil
---@return boolean stopped
function M.stop(out)
  out = out or vim.api.nvim_get_current_buf()
  if not M.jobs[out] then
    out = nil
    for buf in pairs(M.jobs) do
      out = math.max(out or buf, buf)
    end
  end
  local job = out and M.jobs[out]
  if not job then
    return false
  end
  M.stopped[out] = true -- (its end then says "stopped", not the signal's exit 137, r61c STOPEXIT)
  return M.stop_job(job)
end

---:Sandbox run: stream a shell command's output into a scratch window of its own, then its exit
---status. stdin is /dev/null; <C-c> or :Sandbox stop stops it; closing the window stops it too.
---@param command string
---@param bufnr integer
function M.run_in_window(command, bufnr)
  local commands = require("corral.commands")
  runs = runs + 1
  local out = commands.scratch(("corral://run/%d"):format(runs), { "$ " .. command }, bufnr)
  vim.bo[out].filetype = "corral-run"
  vim.bo[out].bufhidden = "wipe"
  local function mark(text, group)
    if vim.api.nvim_buf_is_valid(out) then
      vim.api.nvim_buf_clear_namespace(out, ns, 0, -1)
      vim.api.nvim_buf_set_extmark(out, ns, 0, 0, { virt_text = { { text, group } } })
    end
  end
  local function append(lines)
    if not vim.api.nvim_buf_is_valid(out) then
      return
    end
    vim.bo[out].modifiable = true
    vim.api.nvim_buf_set_lines(out, -1, -1, false, lines)
    vim.bo[out].modifiable = false
  end
  -- A chunk's first item continues the stream's unfinished line, its last item is the next
  -- unfinished line ("" after a newline): lines are appended only once they are complete.
  local partial = { stdout = "", stderr = "" }
  local function on_output(_, data, stream)
    if not data or #data == 0 then
      return
    end
    data[1] = partial[stream] .. data[1]
    partial[stream] = table.remove(data)
    if #data > 0 then
      append(data)
    end
  end
  local job, err, info -- declared first: on_exit reads info
  job, err, info = M.start({ "/bin/sh", "-c", command }, bufnr, {
    stdin = "null",
    on_stdout = on_output,
    on_stderr = on_output,
    on_exit = function(code, repairs)
      M.jobs[out] = nil
      for _, stream in ipairs({ "stdout", "stderr" }) do
        if partial[stream] ~= "" then
          append({ partial[stream] })
        end
      end
      if info and info.sandboxed and vim.api.nvim_buf_is_valid(out) then
        -- what the sandbox refused, in corral's words: never leave a user to guess from
        -- "Read-only file system" or "Could not resolve host"
        local tail = vim.api.nvim_buf_get_lines(out, math.max(1, vim.api.nvim_buf_line_count(out) - 500), -1, false)
        local told = require("corral.engine").call(
          "explain_output",
          require("corral.engine").request(bufnr, { output = table.concat(tail, "\n"), command = command })
        )
        if type(told) == "table" and #told > 0 then
          append(told)
        end
      end
      -- (the change-set check's own lines are in the output already: each once)
      local shown = {}
      if vim.api.nvim_buf_is_valid(out) then
        for _, line in ipairs(vim.api.nvim_buf_get_lines(out, 0, -1, false)) do
          shown[line] = true
        end
      end
      for _, repair in ipairs(repairs) do
        if not shown["corral: " .. repair] then
          append({ "corral: " .. repair })
        end
      end
      if M.stopped[out] then
        M.stopped[out] = nil
        append({ "[stopped]" })
        mark("  stopped · q closes", "WarningMsg")
        return
      end
      append({ ("[exit %d]"):format(code) })
      mark(("  exit %d · q closes"):format(code), code == 0 and "Comment" or "WarningMsg")
    end,
  })
  if not job then
    append({ "corral: " .. err, "[not started]" })
    return
  end
  M.jobs[out] = job
  mark("  running… <C-c> stops · q closes", "Comment")
  vim.keymap.set("n", "<C-c>", function()
    M.stop(out)
  end, { buffer = out, desc = "corral: stop this run" })
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = out,
    once = true,
    callback = function()
      if M.jobs[out] then
        M.stop_job(M.jobs[out])
        M.jobs[out] = nil
      end
    end,
  })
  if info and not info.sandboxed then
    append({ "corral: running UNSANDBOXED: " .. table.concat(info.notes, "; ") })
  end
end

return M
