-- Start wrapped commands with jobstart: the editor never blocks on them.
local sandbox = require("corral.sandbox")

local M = {}

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
  opts.on_exit = function(_, code)
    local repairs, changes = sandbox.after_run(info)
    if on_exit then
      on_exit(code, repairs, changes)
    end
  end
  local job = vim.fn.jobstart(wrapped, opts)
  if job <= 0 then
    return nil, "jobstart failed for " .. wrapped[1]
  end
  return job, nil, info
end

---:Sandbox run: stream a shell command's output into a scratch window, then its exit status.
---@param command string
---@param bufnr integer
function M.run_in_window(command, bufnr)
  local commands = require("corral.commands")
  local out = commands.scratch("corral://run", { "$ " .. command }, bufnr)
  vim.bo[out].filetype = "corral-run"
  local function append(lines)
    if not vim.api.nvim_buf_is_valid(out) then
      return
    end
    vim.bo[out].modifiable = true
    vim.api.nvim_buf_set_lines(out, -1, -1, false, lines)
    vim.bo[out].modifiable = false
  end
  local function on_output(_, data)
    if data and not (#data == 1 and data[1] == "") then
      if data[#data] == "" then
        data[#data] = nil
      end
      append(data)
    end
  end
  local job, err, info = M.start({ "/bin/sh", "-c", command }, bufnr, {
    stdout_buffered = false,
    on_stdout = on_output,
    on_stderr = on_output,
    on_exit = function(code, repairs)
      for _, repair in ipairs(repairs) do
        append({ "corral: " .. repair })
      end
      append({ ("[exit %d]"):format(code) })
    end,
  })
  if not job then
    append({ "corral: " .. err, "[not started]" })
    return
  end
  if info and not info.sandboxed then
    append({ "corral: running UNSANDBOXED: " .. table.concat(info.notes, "; ") })
  end
end

return M
