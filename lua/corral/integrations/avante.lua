-- avante.nvim: corral's tools in place of avante's own tools that run programs or read and
-- write files (:help corral-avante). avante runs its `bash` with jobstart on the host and,
-- by default, approves every tool without asking; these tools go through corral's guard,
-- sandbox and approval window instead.
--
-- They are avante custom tools (`custom_tools`). Their names start with `corral_`: avante's
-- `disabled_tools` matches names across built-in and custom tools, so a custom tool named
-- `bash` would be switched off together with the built-in one.
local M = {}

---avante's built-in tools that run programs, change files or read them on the host: extend()
---switches these off (and every other avante tool not in KEPT). Its reads too: their
---project check is a string prefix (`<project>/../..` passes), glob hands a pattern with a
---backtick to the shell, grep and git_diff take the model's words as options
---(`--pre=bash`, `--output=~/.bashrc`).
M.REPLACED = {
  "bash",
  "run_python",
  "git_commit",
  "git_diff",
  "write_to_file",
  "str_replace",
  "insert",
  "undo_edit",
  "edit_file",
  "create",
  "move_path",
  "copy_path",
  "delete_path",
  "create_dir",
  "read_global_file",
  "write_global_file",
  "view",
  "ls",
  "glob",
  "grep",
  "read_file_toplevel_symbols",
  "read_definitions",
  "dispatch_agent",
  "fetch",
  "web_search",
  "rag_search",
  "get_diagnostics",
}

---Tools avante's sidebar adds to every request after `disabled_tools` is applied: extend()
---takes them out of the request. add_file_to_context put any file the model named
---(`~/.ssh/id_rsa`, `../other/.env`) into every later prompt, unasked.
M.SIDEBAR_REMOVED = { "add_file_to_context", "remove_file_from_context" }

---Characters avante's `:edit` of a path from the model's text gives a meaning (Sidebar:apply
---opens the file a code block names with `noautocmd edit <path>`, unescaped): a backtick runs
---a shell command, `|` ends the command, `%` and `#` are other files, `<cfile>` and its kin
---the text under the cursor, `$`, `~` and wildcards expand.
local EDIT_MAGIC = "[`|%%#$*?%[{~<\\\n\r]"

---avante's tools that touch neither files nor programs: kept.
M.KEPT = {
  "think",
  "attempt_completion",
  "read_todos",
  "write_todos",
  "delete_tool_use_messages",
}

local PATH_NOTE = "Relative paths are relative to the project directory."

---A path from the model, made absolute the way avante's own tools do (its project root),
---so that avante and corral mean the same file.
---@param path string|nil
---@return string|nil
local function absolute(path)
  if type(path) ~= "string" or path == "" then
    return path
  end
  local ok, helpers = pcall(require, "avante.llm_tools.helpers")
  if ok and type(helpers.get_abs_path) == "function" then
    local done, abs = pcall(helpers.get_abs_path, path)
    if done and type(abs) == "string" then
      return abs
    end
  end
  return path
end

---Run one corral tool call for avante: `opts.on_complete(text, nil)` when it ran and
---succeeded, `opts.on_complete(nil, text)` otherwise (avante shows it as the tool's error; a
---call the user declined starts with "User declined", as avante's own tools say it).
---@param name string corral's tool
---@param input table corral's input
---@param opts table avante's tool options
local function run(name, input, opts)
  if opts.streaming then
    return -- avante calls again once the model has sent the whole call
  end
  if type(opts.on_complete) ~= "function" then
    return false, "corral: avante passed no on_complete; update avante.nvim"
  end
  if opts.on_log then
    opts.on_log(name .. ": " .. (input.command or input.path or ""))
  end
  -- avante's stop (<C-c>, :AvanteStop) answers the call itself ("cancelled"); corral then
  -- stops the command and everything it started, and stays silent.
  local stopped_by_avante = false
  local handle
  local autocmd = vim.api.nvim_create_autocmd("User", {
    pattern = "AvanteLLMEscape",
    once = true,
    callback = function()
      stopped_by_avante = true
      if handle then
        handle.cancel()
      end
    end,
  })
  handle = require("corral").execute({ name = name, input = input, id = opts.tool_use_id }, {}, function(result)
    pcall(vim.api.nvim_del_autocmd, autocmd)
    if stopped_by_avante and result.status == "cancelled" then
      return
    end
    local text = require("corral").text(result)
    if result.ok then
      opts.on_complete(text, nil)
    elseif result.status == "denied_by_user" then
      opts.on_complete(nil, "User declined, reason: " .. text)
    else
      opts.on_complete(nil, text)
    end
  end)
end

local function field(name, description, optional)
  return { name = name, description = description, type = "string", optional = optional }
end

local RETURNS = {
  { name = "result", description = "What happened, then the output", type = "string" },
  { name = "error", description = "Why it did not run or failed", type = "string", optional = true },
}

---The custom tools, in avante's format.
---@return table[]
function M.tools()
  return {
    {
      name = "corral_bash",
      description = "Run a bash command in corral's sandbox. The project directory is "
        .. "writable; your home directory, credentials and the rest of the system are "
        .. "hidden or read-only, and the network is off unless the user turned it on. "
        .. "The result says what the sandbox refused and how the user can allow it: "
        .. "report that to the user instead of working around it. Standard input is empty.",
      param = {
        type = "table",
        fields = {
          field("command", "The bash command"),
          field("path", "Directory to run it in. " .. PATH_NOTE, true),
        },
      },
      returns = RETURNS,
      func = function(input, opts)
        return run("bash", { command = input.command, cwd = absolute(input.path) }, opts)
      end,
    },
    {
      name = "corral_write",
      description = "Create a file or replace its whole content, through corral. " .. PATH_NOTE,
      param = {
        type = "table",
        fields = { field("path", "The file"), field("content", "Its new content") },
      },
      returns = RETURNS,
      func = function(input, opts)
        return run("write", { path = absolute(input.path), content = input.content }, opts)
      end,
    },
    {
      name = "corral_edit",
      description = "Replace text in a file, through corral: old_str must occur exactly " .. "once. " .. PATH_NOTE,
      param = {
        type = "table",
        fields = {
          field("path", "The file"),
          field("old_str", "The text to replace, exactly as in the file"),
          field("new_str", "The text to put in its place"),
        },
      },
      returns = RETURNS,
      func = function(input, opts)
        return run("edit", { path = absolute(input.path), old = input.old_str, new = input.new_str }, opts)
      end,
    },
    {
      name = "corral_read",
      description = "Read a file, through corral (credentials and hidden paths are refused). " .. PATH_NOTE,
      param = {
        type = "table",
        fields = {
          field("path", "The file"),
          field("offset", "Byte offset to start at (optional)", true),
        },
      },
      returns = RETURNS,
      func = function(input, opts)
        return run("read", { path = absolute(input.path), offset = tonumber(input.offset) }, opts)
      end,
    },
    {
      name = "corral_ls",
      description = "List a directory, through corral. " .. PATH_NOTE,
      param = { type = "table", fields = { field("path", "The directory") } },
      returns = RETURNS,
      func = function(input, opts)
        return run("ls", { path = absolute(input.path or ".") }, opts)
      end,
    },
    {
      name = "corral_delete",
      description = "Delete a file, through corral. While the sandbox is on, corral "
        .. "refuses this tool unless the user allowed it: use rm with corral_bash then "
        .. "(its changes can be undone). "
        .. PATH_NOTE,
      param = { type = "table", fields = { field("path", "The file") } },
      returns = RETURNS,
      func = function(input, opts)
        return run("delete", { path = absolute(input.path) }, opts)
      end,
    },
  }
end

---Whether a path from the model stays inside avante's project root, as written and through
---the links of the part of it that exists.
---@param Utils table avante.utils
---@param path string
---@return boolean
function M.in_project(Utils, path)
  local ok, root = pcall(Utils.get_project_root)
  if not ok or type(root) ~= "string" or root == "" then
    return false
  end
  root = vim.fs.normalize(root)
  local full = path:sub(1, 1) == "/" and path or vim.fs.joinpath(root, path)
  full = vim.fs.normalize(full)
  local function inside(p, base)
    return p == base or vim.startswith(p, base .. "/")
  end
  if not inside(full, root) then
    return false
  end
  local existing = full
  while existing ~= "/" and not vim.uv.fs_lstat(existing) do
    existing = vim.fs.dirname(existing)
  end
  local real, real_root = vim.uv.fs_realpath(existing), vim.uv.fs_realpath(root)
  return real ~= nil and real_root ~= nil and inside(real, real_root)
end

---Two ways into avante that no option closes, patched once per session: the sidebar's own
---tools (SIDEBAR_REMOVED) are taken out of each request, and a path with a character `:edit`
---expands (EDIT_MAGIC) is refused before avante opens it.
function M.patch_sidebar()
  local wrap = require("corral.integrations.wrap").wrap
  wrap("avante.sidebar", "get_generate_prompts_options", function(original)
    return function(self, request, cb)
      return original(self, request, function(prompts_opts)
        if type(prompts_opts) == "table" and type(prompts_opts.tools) == "table" then
          prompts_opts.tools = vim.tbl_filter(function(tool)
            return not vim.tbl_contains(M.SIDEBAR_REMOVED, tool.name)
          end, prompts_opts.tools)
        end
        if cb then
          return cb(prompts_opts)
        end
      end)
    end
  end)
  -- attempt_completion (kept: it ends avante's agent loop) runs an optional `command` with
  -- avante's own bash on the host: the command is dropped, the result kept
  wrap("avante.llm_tools.attempt_completion", "func", function(func)
    return function(input, ...)
      if type(input) == "table" then
        input = vim.tbl_extend("force", {}, input, { command = vim.NIL })
      end
      return func(input, ...)
    end
  end)
  wrap("avante.utils", "open_buffer", function(open_buffer)
    return function(path, ...)
      if type(path) == "string" and path:find(EDIT_MAGIC) then
        error(
          "corral: refused to open "
            .. vim.inspect(path)
            .. ": avante would pass it to :edit unescaped, which expands ` | % # $ ~ and wildcards"
        )
      end
      if type(path) == "string" and not M.in_project(require("avante.utils"), path) then
        -- applying a code block opens its path, then makes the directories above it
        error("corral: refused to open " .. vim.inspect(path) .. ": outside avante's project")
      end
      return open_buffer(path, ...)
    end
  end)
end

---avante's options with corral's tools added and the tools they replace switched off:
---`require("avante").setup(require("corral.integrations.avante").extend({ ... }))`.
---Neither table is changed; the user's own `custom_tools` and `disabled_tools` are kept.
---@param opts table|nil avante's options
---@return table
function M.extend(opts)
  local out = vim.deepcopy(opts or {})
  local custom = out.custom_tools
  if type(custom) == "function" then
    local user_fn = custom
    out.custom_tools = function()
      return vim.list_extend(vim.list_extend({}, user_fn() or {}), M.tools())
    end
  else
    out.custom_tools = vim.list_extend(vim.list_extend({}, custom or {}), M.tools())
  end
  local disabled = vim.list_extend({}, out.disabled_tools or {})
  local names = vim.list_extend({}, M.REPLACED)
  local ok, tools = pcall(require, "avante.llm_tools")
  if ok and type(tools._tools) == "table" then
    -- every built-in tool this avante has, new ones included, but those known to be
    -- harmless (its list of tool specs; asking avante for names needs its config set up)
    for _, tool in ipairs(tools._tools) do
      if type(tool) == "table" and type(tool.name) == "string" then
        names[#names + 1] = tool.name
      end
    end
  end
  for _, name in ipairs(names) do
    local ours = name:sub(1, 7) == "corral_"
    if not ours and not vim.tbl_contains(M.KEPT, name) and not vim.tbl_contains(disabled, name) then
      disabled[#disabled + 1] = name
    end
  end
  out.disabled_tools = disabled
  if ok then
    -- avante runs these two by name whatever is disabled (Anthropic's editor tool names):
    -- they view and write files on the host unasked
    local refused = function()
      return false, "not available: use corral_read, corral_write and corral_edit"
    end
    tools.str_replace_editor = refused
    tools.str_replace_based_edit_tool = refused
    -- avante's history refresh calls view's func directly, disabled or not: it read any
    -- file into the next request
    local has_view, view = pcall(require, "avante.llm_tools.view")
    if has_view and type(view) == "table" then
      view.func = refused
    end
  end
  M.patch_sidebar()
  -- avante runs `str_replace_editor` and `str_replace_based_edit_tool` (Anthropic's editor
  -- tool names) whenever the model names them, disabled or not; with its default of
  -- approving every tool, they would write unasked. Only those of avante's tools that run
  -- or write ask it, so asking for all of them costs nothing once corral's tools stand in.
  out.behaviour = out.behaviour or {}
  if type(out.behaviour.auto_approve_tool_permissions) ~= "table" then
    out.behaviour.auto_approve_tool_permissions = false
  end
  return out
end

return M
