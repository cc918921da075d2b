-- The confirmation window for tool calls that need approval: the full command or change,
-- nothing truncated, with control characters and invisible Unicode made visible, so what you
-- approve is what runs.
local M = {}

-- Code points that render as nothing or move text around: zero-width, bidi controls, BOM.
local INVISIBLE = {
  [0x00AD] = true,
  [0x180E] = true,
  [0x200B] = true,
  [0x200C] = true,
  [0x200D] = true,
  [0x200E] = true,
  [0x200F] = true,
  [0x202A] = true,
  [0x202B] = true,
  [0x202C] = true,
  [0x202D] = true,
  [0x202E] = true,
  [0x2060] = true,
  [0x2061] = true,
  [0x2062] = true,
  [0x2063] = true,
  [0x2064] = true,
  [0x2066] = true,
  [0x2067] = true,
  [0x2068] = true,
  [0x2069] = true,
  [0xFEFF] = true,
  -- blank-looking letters and separators that hide text or break lines unseen
  [0x034F] = true,
  [0x061C] = true,
  [0x115F] = true,
  [0x1160] = true,
  [0x17B4] = true,
  [0x17B5] = true,
  [0x2028] = true,
  [0x2029] = true,
  [0x3164] = true,
  [0xFFA0] = true,
}

---Make control characters and invisible code points visible: `^[`, `<U+202E>`.
---@param text string
---@return string
function M.visible(text)
  local out = {}
  -- (LuaJIT has no utf8 library: Neovim splits the text into code points)
  for _, cp in ipairs(vim.fn.str2list(text, true)) do
    if cp == 10 then
      out[#out + 1] = "\n"
    elseif cp == 9 then
      out[#out + 1] = "<Tab>"
    elseif cp < 32 then
      out[#out + 1] = "^" .. string.char(cp + 64)
    elseif cp == 127 then
      out[#out + 1] = "^?"
    elseif
      INVISIBLE[cp]
      or (cp >= 0x80 and cp <= 0x9F) -- C1 controls
      or (cp >= 0xFE00 and cp <= 0xFE0F) -- variation selectors
      or (cp >= 0xE0100 and cp <= 0xE01EF) -- ... and their supplement (r74c INVISVS)
      or (cp >= 0x180B and cp <= 0x180F) -- Mongolian variation selectors
      or (cp >= 0xFFF9 and cp <= 0xFFFB) -- interlinear annotation marks
      or (cp >= 0x1D173 and cp <= 0x1D17A) -- musical formatting characters
      or (cp >= 0xE0000 and cp <= 0xE007F) -- tag characters
    then
      out[#out + 1] = ("<U+%04X>"):format(cp)
    else
      out[#out + 1] = vim.fn.nr2char(cp, true)
    end
  end
  return table.concat(out)
end

---Lines describing a tool call for the window.
---@param tool_call table {name, input}
---@param decision table the guard's answer
---@return string[]
function M.describe(tool_call, decision)
  local input = tool_call.input or {}
  local lines = { ("corral: %s wants to run — approve?"):format(tool_call.name) }
  lines[#lines + 1] = ("asked because: %s (%s)"):format(decision.reason or "", decision.source or "")
  for _, warning in ipairs(decision.warnings or {}) do
    lines[#lines + 1] = "!! " .. warning
  end
  if decision.class and decision.class ~= vim.NIL then
    lines[#lines + 1] = "class: " .. decision.class
    for _, reason in ipairs(decision.reasons or {}) do
      lines[#lines + 1] = "  - " .. M.visible(reason)
    end
  end
  lines[#lines + 1] = "a / y: approve      d / n / q / <Esc>: deny"
  lines[#lines + 1] = ""
  local function add(label, text)
    local shown = M.visible(tostring(text))
    local parts = vim.split(shown, "\n", { plain = true })
    lines[#lines + 1] = label .. (parts[1] or "")
    for i = 2, #parts do
      lines[#lines + 1] = (" "):rep(#label) .. parts[i]
    end
  end
  if tool_call.name == "bash" then
    add("command: ", decision.command or input.command or "") -- as bash runs it (cwd: a cd)
  elseif tool_call.name == "edit" then
    add("file:    ", input.path or "")
    if decision.preview and decision.preview ~= "" then
      add("change:  ", decision.preview)
    else
      add("replace: ", input.old or "")
      add("with:    ", input.new or "")
    end
  elseif tool_call.name == "write" then
    add("file:    ", input.path or "")
    add("content: ", input.content or "")
  elseif tool_call.name == "fetch" then
    add("url:     ", input.url or "")
  else
    for key, value in pairs(input) do
      add(key .. ": ", type(value) == "string" and value or vim.inspect(value))
    end
  end
  return lines
end

-- Keys typed before the window could be read must not answer it: someone typing `a` to append
-- text as a call arrives would approve it. Approval keys act only this long after it opens.
M.grace_ms = 400

-- One window at a time: a second call waits until the first is answered. Stacked, a double
-- press of `a` approved the visible call and then one under it that was never seen.
local showing = false
local waiting = {} ---@type {tool_call: table, decision: table, on_answer: fun(approved: boolean), close: fun()|nil}[]

local open

---Show the next waiting call, if any.
local function next_call()
  showing = false
  local item = table.remove(waiting, 1)
  if item and not pcall(open, item) then
    showing = false
    item.on_answer(false) -- a window that cannot open is a "no"
    next_call()
  end
end

---Ask about a call: its window opens now, or when the one before it is answered.
---`on_answer(true|false)` is called once.
---@param tool_call table
---@param decision table
---@param on_answer fun(approved: boolean)
---@return fun() close closes its window, or takes it out of the queue (on_answer not called)
function M.ask(tool_call, decision, on_answer)
  local item = { tool_call = tool_call, decision = decision, on_answer = on_answer }
  local function close()
    if item.close then
      item.close()
      return
    end
    for i, queued in ipairs(waiting) do
      if queued == item then
        table.remove(waiting, i)
        return
      end
    end
  end
  if showing then
    waiting[#waiting + 1] = item
  else
    local ok, err = pcall(open, item)
    if not ok then
      showing = false
      error(err, 0)
    end
  end
  return close
end

---@param item {tool_call: table, decision: table, on_answer: fun(approved: boolean), close: fun()|nil}
open = function(item)
  showing = true
  local tool_call, decision = item.tool_call, item.decision
  local on_answer = function(approved)
    vim.schedule(next_call)
    item.on_answer(approved)
  end
  local lines = M.describe(tool_call, decision)
  -- A call arriving while you type: leave Insert mode (in the window every key was E21 and the
  -- text was lost), and drop keys typed ahead so none of them answers the window.
  local mode = vim.api.nvim_get_mode().mode
  if mode:match("^[iR]") then
    vim.cmd("stopinsert")
  end
  while vim.fn.getchar(0) ~= 0 do
  end
  local opened = vim.uv.hrtime()
  local bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].bufhidden = "wipe"
  vim.bo[bufnr].filetype = "corral-confirm"
  local width = 20
  for _, line in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(line))
  end
  width = math.min(width + 2, math.max(20, vim.o.columns - 4))
  local height = math.min(#lines, math.max(3, vim.o.lines - 4))
  local win = vim.api.nvim_open_win(bufnr, true, {
    relative = "editor",
    width = width,
    height = height,
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    style = "minimal",
    border = "rounded",
    title = " corral: approve this tool call? ",
  })
  vim.wo[win].wrap = true -- long lines wrap: nothing is cut off
  -- Size by the wrapped text; what does not fit is scrolled to, and the title says so.
  local needed = vim.api.nvim_win_text_height(win, {}).all
  local room = math.max(3, vim.o.lines - 4)
  vim.api.nvim_win_set_config(win, {
    height = math.min(needed, room),
    title = needed > room and " corral: approve? (more below: scroll with j / <C-d>) "
      or " corral: approve this tool call? ",
  })
  local answered = false
  local function answer(approved)
    if answered then
      return
    end
    answered = true
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_close(win, true)
    end
    on_answer(approved)
  end
  for _, key in ipairs({ "a", "y" }) do
    vim.keymap.set("n", key, function()
      if (vim.uv.hrtime() - opened) / 1e6 < M.grace_ms then
        vim.notify("corral: read the call first: approval keys act after a moment", vim.log.levels.WARN)
        return
      end
      answer(true)
    end, { buffer = bufnr, nowait = true })
  end
  for _, key in ipairs({ "d", "n", "q", "<Esc>" }) do
    vim.keymap.set("n", key, function()
      answer(false)
    end, { buffer = bufnr, nowait = true })
  end
  -- Closing the window any other way is a "no".
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = bufnr,
    once = true,
    callback = function()
      vim.schedule(function()
        answer(false)
      end)
    end,
  })
  item.close = function()
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_close(win, true)
    end
  end
end

return M
