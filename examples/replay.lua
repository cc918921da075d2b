-- The demo's scripted chat: a stand-in for a model replays a few tool calls through
-- require("corral").execute, as a chat plugin would, and writes each call and the text the
-- model would get back into the replay.chat buffer (the file stays as it is). No network, no
-- API key. The calls work in the current directory: scripts/demo's scratch folder.
--
-- :DemoReplay opens replay.chat and plays the calls one after the other; the write asks you
-- in corral's window (a/y approves, d/n denies).
local M = {}

local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")

---The calls, with what a newcomer should notice in each.
---@return {say: string, call: corral.ToolCall}[]
function M.calls()
  -- (a key this machine has: where there is none, the step showed only "No such file", r61c
  -- DEMOSSH)
  local secret
  for _, name in ipairs({
    "~/.ssh/id_ed25519",
    "~/.ssh/id_rsa",
    "~/.ssh/id_ecdsa",
    "~/.ssh/config",
    "~/.aws/credentials",
    "~/.netrc",
    "~/.bash_history",
  }) do
    if not secret and vim.uv.fs_stat(vim.fn.expand(name)) then
      secret = name
    end
  end
  local fetch = vim.fn.executable("curl") == 1 and "curl -sS https://example.com"
    or "python3 -c 'import urllib.request as u; u.urlopen(\"https://example.com\")'"
  return {
    {
      say = "a read-only command: approved without asking, because the sandbox confines it",
      call = { name = "bash", input = { command = "ls -a" } },
    },
    {
      say = "a file write: corral asks you first (a/y approves, d/n denies)",
      call = { name = "write", input = { path = "notes-from-the-model.txt", content = "hello\n" } },
    },
    {
      say = secret and "a credential: the sandbox hides it, and corral says so"
        or "a credential (this machine has none in ~/.ssh: `scripts/demo --cli` shows one hidden)",
      call = { name = "bash", input = { command = "cat " .. (secret or "~/.ssh/id_rsa") } },
    },
    {
      say = "a privileged command: refused before anything runs",
      call = { name = "bash", input = { command = "sudo apt-get install nmap" } },
    },
    {
      say = "the network: off in this mode, and corral says how to allow it",
      call = { name = "bash", input = { command = fetch } },
    },
  }
end

---Append lines to the chat buffer, as a chat plugin appends the exchange.
local function append(buf, lines)
  local clean = {}
  for _, line in ipairs(lines) do
    for part in (line .. "\n"):gmatch("(.-)\n") do
      clean[#clean + 1] = part
    end
  end
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, clean)
  vim.bo[buf].modified = false -- the file stays the script; the exchange is only shown
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
  end
end

---Play the calls in the chat buffer `buf`; `done(results)` after the last one.
---@param buf integer
---@param done fun(results: corral.Result[])|nil
function M.play(buf, done)
  local calls = M.calls()
  local results = {}
  local function step(i)
    if i > #calls then
      append(buf, { "", "@Demo: that is all; :help corral-result says what a model gets back." })
      if done then
        done(results)
      end
      return
    end
    local item = calls[i]
    local shown = item.call.input.command or item.call.input.path
    append(buf, { "", ("@Model: (%s) %s %s"):format(item.say, item.call.name, shown) })
    require("corral").execute(item.call, { bufnr = buf }, function(result)
      results[i] = result
      local text = require("corral").text(result):gsub("%s+$", "")
      local lines = { "@Tool:" }
      for line in (text .. "\n"):gmatch("(.-)\n") do
        lines[#lines + 1] = "    " .. line
      end
      append(buf, lines)
      vim.defer_fn(function()
        step(i + 1)
      end, 300)
    end)
  end
  step(1)
end

---:DemoReplay: open replay.chat and play the calls in it.
function M.command()
  vim.cmd.edit(vim.fn.fnameescape(here .. "/replay.chat"))
  M.play(vim.api.nvim_get_current_buf())
end

vim.api.nvim_create_user_command("DemoReplay", M.command, {
  desc = "corral demo: a scripted model's tool calls through corral",
})

return M
