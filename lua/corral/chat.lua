-- Chat buffers: read their frontmatter into a buffer layer, again after edits (debounced)
-- and on write. An error is shown once; the last good layer stays in force. A file that is
-- not trusted may only narrow the sandbox.
local engine = require("corral.engine")
local frontmatter = require("corral.frontmatter")
local state = require("corral.state")

local M = {}

M.DEBOUNCE_MS = 300

local attached = {} ---@type table<integer, {text: string|nil, timer: uv.uv_timer_t|nil, shown: table<string, boolean>, disk: string|nil, tainted: boolean, trusted_text: string|nil, link: boolean}>
local warned_required = false

---@param bufnr integer
---@param message string
---@param level integer
local function once(bufnr, message, level)
  local info = attached[bufnr]
  if info.shown[message] then
    return
  end
  info.shown[message] = true
  vim.notify(message, level)
end

---@param header string
---@param items string[]
---@return string `header` and the items, one per indented line
local function listed(header, items)
  local shown = {}
  for i, item in ipairs(items) do
    shown[i] = M.plain(item)
  end
  return header .. "\n  " .. table.concat(shown, "\n  ")
end

---Text a chat file chose (an error() message, a value), as one line with control characters
---and invisible code points made visible: it must not pass for corral's own lines.
---@param text string
---@return string
function M.plain(text)
  local line = require("corral.confirm").visible(tostring(text)):gsub("\n", "\\n")
  return #line > 400 and (line:sub(1, 400) .. "...") or line
end

-- Captured when this module loads, before any frontmatter is read: trust is decided with
-- these, never through the string metatable or anything else a chat file could reach.
local sfind, ssub, sha256, open = string.find, string.sub, vim.fn.sha256, io.open

---@param path string
---@return string|nil
local function read_file(path)
  local f = open(path, "rb")
  if not f then
    return nil
  end
  local data = f:read("*a")
  f:close()
  return data
end

---The hash the trust database (:trust, vim.secure) holds for this file, or nil.
---@param path string
---@return string|nil hash, string full the file's full path
local function trusted_hash(path)
  -- The trust database is one "hash path" a line: a name with a line break in it could
  -- have :trust write an entry for another file.
  local full = vim.uv.fs_realpath(path) or vim.fs.normalize(vim.fn.fnamemodify(path, ":p"))
  if path == "" or sfind(path, "[\r\n]") or M.is_link(path) then
    return nil, full -- a chat file that is a link now: trusted for nothing, whatever it leads to
  end
  local db = read_file(vim.fn.stdpath("state") .. "/trust")
  local at = 1
  while db and at <= #db do
    local eol = sfind(db, "\n", at, true) or (#db + 1)
    local space = sfind(db, " ", at, true)
    if space and space < eol and ssub(db, space + 1, eol - 1) == full then
      return ssub(db, at, space - 1), full
    end
    at = eol + 1
  end
  return nil, full
end

---Is the chat's path a symbolic link now? A command can swap a chat file for a link to a
---file you trusted (an exrc): trust is then neither read nor written through it.
---@param path string
---@return boolean
function M.is_link(path)
  local st = vim.uv.fs_lstat(path)
  return st ~= nil and st.type == "link"
end

---Is this exact file trusted with :trust (vim.secure)? Trust binds to the file's contents (the
---sha256 that :trust recorded), never to a directory: a chat file lives in the workspace, where
---a sandboxed command can write it.
---@param path string
---@return boolean
---@param data string|nil the file's contents as already read (one read: see M.trusted)
function M.is_trusted(path, data)
  local hash, full = trusted_hash(path)
  if not hash then
    return false
  end
  data = data or read_file(full)
  return data ~= nil and hash == sha256(data)
end

---@return boolean
local function widening_allowed()
  local global = state.global or {}
  local fm = global.frontmatter
  return (type(fm) == "table" and fm.allow_widening == true) or global["frontmatter.allow_widening"] == true
end

---The frontmatter block of a chat's first lines: from a first line starting with ``` to the
---line that closes it (or the first line alone, when nothing closes it).
---@param lines string[]
---@return string
local function block_text(lines)
  local block_end = 0
  if lines[1] and sfind(lines[1], "^```") then
    for i = 2, #lines do
      if sfind(lines[i], "^```%s*$") then
        block_end = i
        break
      end
    end
  end
  return table.concat(lines, "\n", 1, block_end > 0 and block_end or math.min(1, #lines))
end

---The frontmatter block of a file's contents, split as the buffer shows them.
---@param data string
---@return string
local function block_of(data)
  local lines, at = {}, 1
  while #lines < frontmatter.MAX_LINES do
    local eol = sfind(data, "\n", at, true)
    local line = ssub(data, at, (eol or (#data + 1)) - 1)
    if ssub(line, -1) == "\r" then
      line = ssub(line, 1, -2)
    end
    lines[#lines + 1] = line
    if not eol then
      break
    end
    at = eol + 1
  end
  return block_text(lines)
end

---What stays in force while a chat's frontmatter cannot be read (r54c: "the last good
---settings" were claimed where there were none).
---@param bufnr integer
---@return string
local function still(bufnr)
  if state.buffers[bufnr] then
    return "the last good settings stay in force"
  end
  return "none of it applies: commands from this chat get your global settings until it is fixed"
end

---Read the buffer's frontmatter again; `force` even when its text did not change; `accepted`:
---the user asked for it (:Sandbox reload, :trust), so a change on disk by something else
---takes effect too. Returns true when it was read (a block or none) and is in force now;
---`judged` then holds what of it applies (see M.confirm).
---@param bufnr integer
---@param force boolean|nil
---@param accepted boolean|"if trusted"|nil
---@return boolean read
function M.refresh(bufnr, force, accepted)
  local info = attached[bufnr]
  if not info or not vim.api.nvim_buf_is_valid(bufnr) then
    return false
  end
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, frontmatter.MAX_LINES, false)
  local text = block_text(lines)
  if text == info.text and not force then
    return false
  end
  info.text = text
  local name = vim.api.nvim_buf_get_name(bufnr)
  local label = vim.fn.fnamemodify(name, ":~:.")
  -- Trust first, whatever becomes of the block: a file changed on disk loses it even when its
  -- new block cannot be read (the last good settings stay, never their trust: r20b F1).
  local trusted = M.trusted(bufnr, name, text)
  if accepted == "if trusted" then
    accepted = trusted -- (:trust: the user vouched for the file as it is now)
  end
  local last = state.buffers[bufnr]
  if last and not trusted then
    last.trusted = false
  end
  -- Kept since the file changed on disk by something else (see keep_after_outside_change):
  -- what the block said before stays under what it says now until the user reads it again,
  -- not even at this editor's next :write, which writes what the command wrote, read back
  -- by autoread. Your edits of the block still narrow on top (review r32b KEPTEDIT).
  local kept = (not accepted and last and last.kept) or nil
  local enc = vim.bo[bufnr].fileencoding
  if text:find("[\128-\255]") and not (enc == "" or enc == "utf-8" or enc == "utf8") then
    -- Neovim read the file in another encoding (a byte that is not UTF-8 further down, a
    -- command's output the chat took in): the block's text is not what it says (r53c
    -- CHATLATIN1: a deny_read path with a `ü` hid nothing)
    once(
      bufnr,
      ("corral: frontmatter of %s cannot be read: the file is not UTF-8 (Neovim read it as %s); %s. Remove the bytes that are not UTF-8, then :edit ++enc=utf-8"):format(
        label,
        enc,
        still(bufnr)
      ),
      vim.log.levels.ERROR
    )
    return false
  end
  local values, err = frontmatter.read(lines)
  if err then
    once(bufnr, ("corral: frontmatter of %s, %s (%s)"):format(label, M.plain(err), still(bufnr)), vim.log.levels.ERROR)
    return false
  end
  if values == nil then
    state.buffers[bufnr] = kept and { values = {}, trusted = false, kept = kept } or nil
    info.judged = { accepted = {}, refused = 0 }
    return true
  end
  local request = engine.request(bufnr, { values = values, trusted = trusted })
  local result, call_err = engine.call("frontmatter", request)
  if not result then
    once(bufnr, "corral: " .. call_err, vim.log.levels.ERROR)
    return false
  end
  if result.problems and #result.problems > 0 then
    once(
      bufnr,
      listed(("corral: frontmatter of %s is invalid (%s):"):format(label, still(bufnr)), result.problems),
      vim.log.levels.ERROR
    )
    return false
  end
  -- The engine judges an untrusted layer again on every request (against the layers below it
  -- and the cwd of that moment): what is kept here is the frontmatter as written.
  state.buffers[bufnr] = { values = values, trusted = trusted, kept = kept }
  if result.refused and #result.refused > 0 then
    local message =
      listed(("corral: frontmatter of %s may only narrow the sandbox; refused:"):format(label), result.refused)
    once(
      bufnr,
      message .. "\nTrust the file with :trust (or allow widening in setup()) to apply these.",
      vim.log.levels.WARN
    )
  end
  info.judged = { accepted = result.accepted or {}, refused = result.refused and #result.refused or 0 }
  return true
end

---Say, in one line, that a chat's frontmatter was read again at the user's word and what of
---it is in force now: a reload that changes nothing visible must not pass for one that failed.
---@param bufnr integer
function M.confirm(bufnr)
  local label = M.plain(vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":~:."))
  local judged = attached[bufnr].judged or { accepted = {}, refused = 0 }
  local keys = vim.tbl_keys(judged.accepted)
  if #keys == 0 and judged.refused == 0 then
    vim.notify(("corral: %s read again: no frontmatter settings, yours apply"):format(label))
    return
  end
  table.sort(keys)
  local set = {}
  for i, key in ipairs(keys) do
    local value = judged.accepted[key]
    set[i] = type(value) == "table" and key or ("%s = %s"):format(key, vim.inspect(value))
  end
  local applies = #set > 0 and M.plain(table.concat(set, ", ")) or "nothing"
  if judged.refused > 0 then
    applies = ("%s; refused, as it is not trusted: %d that would widen the sandbox"):format(applies, judged.refused)
  elseif state.buffers[bufnr] and state.buffers[bufnr].trusted then
    applies = applies .. " (trusted)"
  end
  vim.notify(("corral: frontmatter of %s read again: %s"):format(label, applies))
end

---May this buffer's frontmatter widen the sandbox? Only when its file on disk is what the user
---trusted with :trust, or what this editor itself last wrote with the trusted frontmatter
---unchanged (so trust survives the user's own :write). A change on disk by anything else (a
---sandboxed command rewriting its own chat file, then autoread) drops trust until the user
---trusts the file again, and says so. Unsaved edits are never trusted.
---@param bufnr integer
---@param name string
---@param text string the frontmatter block as it is now
---@return boolean
function M.trusted(bufnr, name, text)
  local info = attached[bufnr]
  if vim.bo[bufnr].modified or name == "" or M.is_link(name) then
    return false
  end
  local data = read_file(name)
  local disk = data and sha256(data) or nil
  if info.disk ~= nil and disk ~= info.disk then
    if not info.tainted and (info.trusted_text ~= nil or widening_allowed()) then
      vim.notify(
        ("corral: %s changed on disk outside this editor: its frontmatter is no longer trusted and may only narrow the sandbox. Check it, then :trust it to trust it again."):format(
          vim.fn.fnamemodify(name, ":~:.")
        ),
        vim.log.levels.WARN
      )
    end
    info.tainted = true
    info.trusted_text = nil
    -- The trust database still vouches for the bytes trusted long ago (and perhaps narrowed
    -- since), which a command could write back: the file's entry goes, and only a new :trust
    -- brings trust back.
    if not M.is_link(name) then -- (through a link it would drop the entry of its target)
      pcall(vim.secure.trust, { action = "remove", path = name })
    end
  end
  info.disk = disk
  -- Trusted only when the frontmatter being evaluated is the one in the very bytes whose
  -- hash :trust recorded: a file swapped back to its trusted version after the buffer read
  -- another one must not lend its trust to what the buffer holds.
  if data and block_of(data) == text and M.is_trusted(name, data) then
    info.tainted = false
    info.trusted_text = text
    return true
  end
  if info.tainted then
    return false
  end
  return widening_allowed() or (info.trusted_text ~= nil and info.trusted_text == text)
end

---After the file changed on disk outside this editor and was read again (autoread): the
---settings the chat had stay in force, no longer trusted, until the user reads the
---frontmatter again (:Sandbox reload, :trust, :e!). Else a command with direct writes that
---rewrote its own chat without its frontmatter dropped the narrowing it had (review r31c).
---@param bufnr integer
local function keep_after_outside_change(bufnr)
  local info = attached[bufnr]
  local before = info and info.before
  if not info or not before then
    return
  end
  info.before = nil
  local now = state.buffers[bufnr]
  if now and vim.deep_equal(now.values, before.values) then
    return
  end
  local kept = vim.list_extend(vim.deepcopy(before.kept or {}), { before.values })
  state.buffers[bufnr] = { values = now and now.values or {}, trusted = false, kept = kept }
  vim.notify(
    ("corral: %s changed on disk outside this editor: the settings its frontmatter had stay in force under what it says now, no longer trusted (they may only narrow the sandbox). Check the file, then :Sandbox reload to read its frontmatter alone again, or :trust it."):format(
      vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":~:.")
    ),
    vim.log.levels.WARN
  )
end

---With sandbox.backend = "required" and no working backend: say so once, visibly.
---@param bufnr integer
local function warn_if_required_missing(bufnr)
  if warned_required then
    return
  end
  local config = require("corral.sandbox").resolve_config(bufnr)
  if not config or config.values["sandbox.backend"] ~= "required" then
    return
  end
  local ok, reason = require("corral.sandbox").validate_backend(bufnr)
  if not ok then
    warned_required = true
    vim.notify(
      'corral: sandbox.backend is "required" but no sandbox works here, so commands from this chat will be refused:\n  '
        .. tostring(reason)
        .. "\nSee :Sandbox status and :checkhealth corral.",
      vim.log.levels.WARN
    )
  end
end

-- :trust writes Neovim's trust database: every attached chat is read again then, so trusting
-- a chat takes effect at once (no :Sandbox reload needed).
local trust_watch = nil ---@type uv.uv_fs_event_t|nil
local function watch_trust()
  if trust_watch then
    return
  end
  trust_watch = vim.uv.new_fs_event()
  if not trust_watch then
    return
  end
  local dir = vim.fn.stdpath("state")
  vim.fn.mkdir(dir, "p")
  trust_watch:start(dir, {}, function(err, fname)
    if not err and fname == "trust" then
      vim.schedule(function()
        for bufnr in pairs(attached) do
          local was = state.buffers[bufnr] ~= nil and state.buffers[bufnr].trusted
          local read = M.refresh(bufnr, true, "if trusted") -- (corral's own removals write it too)
          -- said for the chat whose trust changed (:trust, :trust ++remove), not for every
          -- chat at each write of the database
          local now = state.buffers[bufnr] ~= nil and state.buffers[bufnr].trusted
          if read and was ~= now then
            M.confirm(bufnr)
          end
        end
      end)
    end
  end)
end

---How the file was read: written so, it reads back the same.
---@param bufnr integer
local function remember_format(bufnr)
  local bo = vim.bo[bufnr]
  attached[bufnr].read_as = { ff = bo.fileformat, fenc = bo.fileencoding, bomb = bo.bomb }
end

---Say once a session, when the first chat is opened, that nothing confines its commands here
---(the sandbox off, or no backend working under `backend = "auto"`; under "required" they
---are refused, and it says that), not only at its first bash call (r89 audit C7). Asked once
---a session whatever the answer (r91c WARNEVERYATTACH). The window and :Sandbox status say
---it each time.
---@param bufnr integer
function M.warn_unconfined(bufnr)
  if state.checked_unconfined or not vim.api.nvim_buf_is_valid(bufnr) or not engine.registered() then
    return
  end
  state.checked_unconfined = true
  local status = engine.call("status", engine.request(bufnr))
  if state.warned_unsandboxed or type(status) ~= "table" then
    return
  end
  local said
  for _, warning in ipairs(status.warnings or {}) do
    if warning:find("commands are refused", 1, true) then
      said = "corral: this chat's commands are refused here: " .. warning:gsub("^commands are refused: ", "")
    elseif warning:find("UNSANDBOXED", 1, true) or warning:find("NOTHING IS CONFINED", 1, true) then
      said = "corral: this chat's tool calls run UNSANDBOXED here: " .. warning
    end
    if said then
      break
    end
  end
  if not said then
    return
  end
  state.warned_unsandboxed = true
  vim.notify(said .. " (:Sandbox status, :checkhealth corral)", vim.log.levels.WARN)
end

---@param bufnr integer
---@return boolean|nil read as M.refresh's, when it was not attached yet
function M.attach(bufnr)
  if bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  -- A chat's text is what models and commands wrote: a modeline in it (`vim: set ff=mac :`
  -- in a command's output) would make the next :write save the chat so that it reads back
  -- as one line, its frontmatter gone (r52c CHATMODELINE). Set before modelines are read.
  vim.bo[bufnr].modeline = false
  if attached[bufnr] then
    return
  end
  -- disk: sha256 of the file as last read or written here; trusted_text: the frontmatter the
  -- user trusted; tainted: changed on disk by something else since; before: the settings
  -- in force when a reload began (see keep_after_outside_change); outside: that reload
  -- followed a change outside this editor (no :e! of yours, so no confirmation).
  local path = vim.api.nvim_buf_get_name(bufnr)
  local first = path ~= "" and read_file(path) or nil
  attached[bufnr] = {
    text = nil,
    timer = nil,
    shown = {},
    disk = first and sha256(first) or nil,
    tainted = false,
    trusted_text = nil,
    link = path ~= "" and M.is_link(path),
  }
  remember_format(bufnr)
  vim.schedule(function()
    M.warn_unconfined(bufnr)
  end)
  local group = vim.api.nvim_create_augroup("corral_chat_" .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd("BufWritePre", {
    group = group,
    buffer = bufnr,
    callback = function()
      -- A chat file swapped for a link since it was read (a command did it): writing the
      -- buffer would write through it, to a file outside every writable area perhaps.
      local name = vim.api.nvim_buf_get_name(bufnr)
      if M.is_link(name) and not attached[bufnr].link then
        error(
          (
            "corral: not writing %s: it is a symbolic link now (to %s), made since it was "
            .. "read; remove the link, then write"
          ):format(M.plain(name), M.plain(vim.uv.fs_realpath(name) or "?")),
          0
        )
      end
      -- Saved in a form that reads back otherwise, the frontmatter would be gone at the next
      -- read (CR line ends: one line; another encoding: not Lua), its narrowing with it. As
      -- it was read, it reads back the same (a file Neovim read as latin1, r53c).
      local bo = vim.bo[bufnr]
      local enc = bo.fileencoding
      local read_as = attached[bufnr].read_as or {}
      local same = bo.fileformat == read_as.ff and enc == read_as.fenc and bo.bomb == read_as.bomb
      if
        state.buffers[bufnr]
        and not same
        and (bo.fileformat == "mac" or bo.bomb or bo.binary or not (enc == "" or enc == "utf-8" or enc == "utf8"))
      then
        error(
          (
            "corral: not writing %s: with fileformat=%s, fileencoding=%s%s it would read back "
            .. "without its frontmatter; :setlocal fileformat=unix fileencoding=utf-8 nobomb "
            .. "nobinary, then write"
          ):format(M.plain(name), bo.fileformat, enc ~= "" and enc or "utf-8", bo.bomb and ", bomb" or ""),
          0
        )
      end
    end,
  })
  vim.api.nvim_create_autocmd("BufWritePost", {
    group = group,
    buffer = bufnr,
    callback = function()
      -- What this editor wrote is the file's known contents: not a change by someone else.
      local name = vim.api.nvim_buf_get_name(bufnr)
      local data = read_file(name)
      local info = attached[bufnr]
      info.disk = data and sha256(data) or nil
      remember_format(bufnr) -- (what is on disk now)
      -- The trust database vouches for one hash a file. Keep it on what you just wrote while
      -- the trusted frontmatter is unchanged; drop it when the block changed: else it would go
      -- on vouching for older bytes (perhaps wider than what you narrowed them to), which a
      -- command could write back while no buffer watches the file.
      local hash = data and trusted_hash(name)
      if M.is_link(name) then
        once(
          bufnr,
          ("corral: %s is a symbolic link now (to %s): its trust is left alone; check it"):format(
            M.plain(name),
            M.plain(vim.uv.fs_realpath(name) or "?")
          ),
          vim.log.levels.WARN
        )
      elseif hash and hash ~= sha256(data) then
        if info.trusted_text ~= nil and info.trusted_text == block_of(data) then
          pcall(vim.secure.trust, { action = "allow", bufnr = bufnr })
        else
          pcall(vim.secure.trust, { action = "remove", path = name })
        end
      end
      M.refresh(bufnr, true)
    end,
  })
  vim.api.nvim_create_autocmd("BufReadPre", {
    group = group,
    buffer = bufnr,
    callback = function()
      attached[bufnr].before = state.buffers[bufnr]
    end,
  })
  -- :e! reads the file again at the user's word (BufReadPost alone); autoread or the user's
  -- "Load" after a change outside runs BufReadPost, then FileChangedShellPost.
  vim.api.nvim_create_autocmd("BufReadPost", {
    group = group,
    buffer = bufnr,
    callback = function()
      local had = state.buffers[bufnr] and state.buffers[bufnr].values
      remember_format(bufnr)
      local read = M.refresh(bufnr, true, true)
      vim.schedule(function() -- (after a FileChangedShellPost of the same reload)
        local outside = attached[bufnr] and attached[bufnr].outside
        if attached[bufnr] then
          attached[bufnr].before, attached[bufnr].outside = nil, nil
        end
        -- A block gone from the file as read again (:e!) drops its narrowing: say so, it
        -- may be a command's doing (r51c: an .editorconfig made the chat save as one line)
        local now = state.buffers[bufnr]
        if
          had
          and next(had) ~= nil
          and attached[bufnr]
          and (now == nil or (next(now.values) == nil and not now.kept))
        then
          local keys = vim.tbl_keys(had)
          table.sort(keys)
          vim.notify(
            ("corral: %s as read now has no frontmatter: the settings it had (%s) no longer apply. If you did not remove them, something rewrote the file: check it (:Sandbox status shows what is in force)."):format(
              M.plain(vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":~:.")),
              table.concat(keys, ", ")
            ),
            vim.log.levels.WARN
          )
        elseif read and not outside and attached[bufnr] and (had or now) then
          -- (:e!, your word: a reload after a change outside says what it keeps instead)
          M.confirm(bufnr)
        end
      end)
    end,
  })
  vim.api.nvim_create_autocmd("FileChangedShellPost", {
    group = group,
    buffer = bufnr,
    callback = function()
      attached[bufnr].outside = true -- (the BufReadPost before this one was no :e!)
      keep_after_outside_change(bufnr)
    end,
  })
  vim.api.nvim_create_autocmd({ "TextChanged", "TextChangedI" }, {
    group = group,
    buffer = bufnr,
    callback = function()
      local info = attached[bufnr]
      info.timer = info.timer or vim.uv.new_timer()
      info.timer:stop()
      info.timer:start(
        M.DEBOUNCE_MS,
        0,
        vim.schedule_wrap(function()
          M.refresh(bufnr)
        end)
      )
    end,
  })
  vim.api.nvim_create_autocmd("BufWipeout", {
    group = group,
    buffer = bufnr,
    callback = function()
      local info = attached[bufnr]
      if info and info.timer then
        info.timer:stop()
        info.timer:close()
      end
      attached[bufnr] = nil
      state.buffers[bufnr] = nil
      pcall(vim.api.nvim_del_augroup_by_id, group)
    end,
  })
  local read = M.refresh(bufnr, true)
  watch_trust()
  warn_if_required_missing(bufnr)
  return read
end

---The files of the chat buffers open now: whatever their name, a command must not rewrite
---one (a file made a chat with :Sandbox reload may match no chat pattern).
---@return string[]
function M.paths()
  local found = {}
  for bufnr in pairs(attached) do
    local name = vim.api.nvim_buf_is_valid(bufnr) and vim.api.nvim_buf_get_name(bufnr) or ""
    if name ~= "" then
      found[#found + 1] = name
    end
  end
  table.sort(found)
  return found
end

---@param bufnr integer
---@return boolean
function M.is_attached(bufnr)
  if bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  return attached[bufnr] ~= nil
end

return M
