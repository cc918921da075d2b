-- codecompanion.nvim: corral's tools for its chat (:help corral-codecompanion).
-- codecompanion's own `run_command` runs on the host, and its `create_file` and
-- `insert_edit_into_file` write without asking by default; these tools go through corral's
-- guard, sandbox and window instead. codecompanion asks nothing for them
-- (`require_approval_before = false`): corral's window is the one prompt, and corral's guard
-- still decides in codecompanion's yolo mode.
--
-- codecompanion loads each tool by module path (corral.integrations.codecompanion.bash, ...).
-- Its tool API changed often; the handlers below accept the two forms of a tool function
-- (`fn(self, args, opts)` with `opts.output_cb`, and the older `fn(self, args, input,
-- output_cb)`) and of the output handlers (`success(self, stdout, meta)`, and the older
-- `success(self, tools, cmd, stdout)`).
local M = {}

---codecompanion's built-in tools that run or write on the host, unconfined: tools() turns
---them off. Its reads (read_file, file_search, grep_search, ...) stay.
M.REPLACED = {
  "run_command",
  "create_file",
  "insert_edit_into_file",
  "delete_file",
  "read_file", -- not kept to the project, and unasked in yolo mode: corral_read instead
  "fetch_webpage", -- the host's network, a way out for what a call read
  "web_search",
  "memory", -- writes files on the host, through links a command made
  "get_diagnostics", -- opens any file to show what a language server says of it
  -- run on the host over files corral hides (a deny glob's `*.key`, `.env`): grep_search
  -- answers file and line of a match, get_changed_files shows a changed file's diff; rg and
  -- git diff through corral_bash see what the sandbox shows
  "grep_search",
  "get_changed_files",
}

---Read-only built-ins that go with corral's tools in the `corral` group (names only).
M.READS = { "file_search" }

local function string_field(description)
  return { type = "string", description = description }
end

local PATH = "The file, absolute or relative to the working directory"

---Per tool: corral's name for it, what the model reads, and its input made corral's.
local KINDS = {
  bash = {
    corral = "bash",
    description = "Run a bash command in corral's sandbox. The working directory is "
      .. "writable; your home directory, credentials and the rest of the system are hidden "
      .. "or read-only, and the network is off unless the user turned it on. The result "
      .. "says what the sandbox refused and how the user can allow it: report that to the "
      .. "user instead of working around it. Standard input is empty.",
    properties = {
      command = string_field("The bash command"),
      cwd = string_field("Directory to run it in, relative to the working directory (optional)"),
    },
    required = { "command" },
    input = function(args)
      return { command = args.command, cwd = args.cwd ~= vim.NIL and args.cwd or nil }
    end,
    shown = function(args)
      return tostring(args.command)
    end,
  },
  write = {
    corral = "write",
    description = "Create a file or replace its whole content, through corral.",
    properties = { path = string_field(PATH), content = string_field("Its new content") },
    required = { "path", "content" },
    input = function(args)
      return { path = args.path, content = args.content }
    end,
    shown = function(args)
      return "write " .. tostring(args.path)
    end,
  },
  read = {
    corral = "read",
    description = "Read a file, through corral (credentials and hidden paths are refused).",
    properties = { path = string_field(PATH) },
    required = { "path" },
    input = function(args)
      return { path = args.path }
    end,
    shown = function(args)
      return "read " .. tostring(args.path)
    end,
  },
  edit = {
    corral = "edit",
    description = "Replace text in a file, through corral: old_text must occur exactly once.",
    properties = {
      path = string_field(PATH),
      old_text = string_field("The text to replace, exactly as in the file"),
      new_text = string_field("The text to put in its place"),
    },
    required = { "path", "old_text", "new_text" },
    input = function(args)
      return { path = args.path, old = args.old_text, new = args.new_text }
    end,
    shown = function(args)
      return "edit " .. tostring(args.path)
    end,
  },
}

---The tool object codecompanion passes first: `tools` (with `.chat`) in both forms.
---@return table|nil chat
local function chat_of(tools)
  return type(tools) == "table" and tools.chat or nil
end

---Hand the text to the model (and the chat), whichever output-handler form is called.
---@param tool table codecompanion's tool (self)
---@param a any stdout/stderr (new form) or tools (old form)
---@param b any meta (new form) or cmd (old form)
---@param c any nil (new form) or stdout/stderr (old form)
local function report(tool, a, b, c)
  local chat, lines
  if type(b) == "table" and b.tools then -- new: (self, stdout, meta)
    chat, lines = chat_of(b.tools), a
  else -- old: (self, tools, cmd, stdout)
    chat, lines = chat_of(a), c
  end
  -- the text kept for this call (codecompanion's error list holds every error of the batch)
  local text = tool.corral_text
  if not text then
    text = type(lines) == "table" and table.concat(vim.iter(lines):flatten():totable(), "\n") or tostring(lines or "")
  end
  if chat then
    chat:add_tool_output(tool, text, text)
  end
end

---codecompanion's tool for `kind` ("bash", "write", "edit" or "read").
---@param kind string
---@return table
function M.tool(kind)
  local spec = assert(KINDS[kind], "corral: no codecompanion tool " .. tostring(kind))
  local name = "corral_" .. kind
  return {
    name = name,
    cmds = {
      function(self, args, third, fourth)
        local output_cb, register_job
        if type(third) == "table" and type(third.output_cb) == "function" then
          output_cb, register_job = third.output_cb, third.register_job
        elseif type(fourth) == "function" then
          output_cb = fourth
        end
        if not output_cb then
          return {
            status = "error",
            data = "corral: this codecompanion.nvim calls tools in a way corral does not know",
          }
        end
        local chat = chat_of(self)
        local current = type(self) == "table" and self.tool or nil -- this call's tool
        local handle = require("corral").execute(
          { name = spec.corral, input = spec.input(args or {}) },
          { bufnr = chat and chat.bufnr or nil },
          function(result)
            local text = require("corral").text(result)
            if type(current) == "table" then
              current.corral_text = text
            end
            output_cb({ status = result.ok and "success" or "error", data = text })
          end
        )
        if register_job then
          -- codecompanion's cancel stops "the job": corral stops the command and its tree
          register_job({
            kill = function()
              handle.cancel()
            end,
          })
        end
      end,
    },
    schema = {
      type = "function",
      ["function"] = {
        name = name,
        description = spec.description,
        parameters = {
          type = "object",
          properties = spec.properties,
          required = spec.required,
          additionalProperties = false,
        },
      },
    },
    -- codecompanion asks nothing (`requires_approval` before 2025): corral's window asks
    opts = { require_approval_before = false, requires_approval = false },
    output = {
      cmd_string = function(self)
        return spec.shown(self.args or {})
      end,
      prompt = function(self)
        return "corral: " .. spec.shown(self.args or {})
      end,
      success = report,
      error = report,
    },
  }
end

---The tool a replaced built-in resolves to: codecompanion reaches a tool's entry by another
---way than its list of enabled tools (an adapter's hybrid tool, Anthropic's `memory`, is
---resolved from the raw entry, `enabled = false` or not): every call of it is refused.
---@return table
function M.refused()
  local function refuse(self)
    local name = type(self) == "table" and self.name or "this tool"
    return {
      status = "error",
      data = "corral: "
        .. tostring(name)
        .. " is not available: use corral_bash, "
        .. "corral_read, corral_write and corral_edit",
    }
  end
  return {
    name = "corral_refused",
    cmds = { refuse },
    schema = {
      type = "function",
      ["function"] = {
        name = "corral_refused",
        description = "Not available",
        parameters = { type = "object", properties = {}, additionalProperties = false },
      },
    },
    opts = { require_approval_before = false, requires_approval = false },
    output = { success = report, error = report },
  }
end

---codecompanion adds the project's rules files (CLAUDE.md, ...) to every new chat, and the
---files their `@path` lines name: any path, read on the host. A command in the sandbox may
---write such a line into a rules file; a path corral's read refuses (a credential, a hidden
---area) is left out, with a warning. Patched once, when tools() is first called.
function M.patch_rules()
  local helpers = "codecompanion.interactions.shared.rules.helpers"
  require("corral.integrations.wrap").wrap(helpers, "add_files_or_buffers", function(add)
    return function(included_files, chat, ...)
      local kept = {}
      for _, f in ipairs(type(included_files) == "table" and included_files or {}) do
        -- where codecompanion will look: the working directory first, then the path itself
        local path = vim.fs.normalize(tostring(f))
        local in_cwd = vim.fs.joinpath(vim.fn.getcwd(), path)
        if vim.uv.fs_stat(in_cwd) then
          path = in_cwd
        end
        local bufnr = type(chat) == "table" and chat.bufnr or nil
        local call = { name = "read", input = { path = path } }
        local decided = require("corral").decide(call, { bufnr = bufnr })
        if decided and decided.decision ~= "deny" then
          kept[#kept + 1] = f
        else
          vim.notify(
            "corral: a rules file names "
              .. path
              .. ", which corral's read refuses: not added to the chat"
              .. (decided and decided.reason and (" (" .. decided.reason .. ")") or ""),
            vim.log.levels.WARN
          )
        end
      end
      return add(kept, chat, ...)
    end
  end)
end

---Entries for codecompanion's `interactions.chat.tools`: corral's tools (loaded by module
---path, codecompanion's approval off for them), the built-ins they replace turned off, and a
---`corral` group of corral's tools with codecompanion's reads.
---@return table
function M.tools()
  M.patch_rules()
  local out = { groups = {} }
  local names = {}
  for _, kind in ipairs({ "bash", "write", "edit", "read" }) do
    local name = "corral_" .. kind
    names[#names + 1] = name
    out[name] = {
      path = "corral.integrations.codecompanion." .. kind,
      description = KINDS[kind].description,
      opts = { require_approval_before = false, requires_approval = false },
    }
  end
  for _, name in ipairs(M.REPLACED) do
    -- off, and, reached another way, a tool that refuses
    out[name] = { enabled = false, path = "corral.integrations.codecompanion.refused" }
  end
  out.groups.corral = {
    description = "corral's sandboxed command and file tools, with codecompanion's reads",
    tools = vim.list_extend(vim.list_extend({}, names), M.READS),
    opts = { collapse_tools = true },
  }
  return out
end

return M
