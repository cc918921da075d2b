-- What Flemma's template evaluation may do (:help corral-flemma). Flemma evaluates `{{ }}`
-- expressions, `{% %}` code and a chat's Lua frontmatter in the editor, in an environment of
-- its own, and text a sandboxed command wrote reaches it: an included file, a chat file's
-- frontmatter (evaluated on opening, before any :trust), a forged `@You:` in a reply (a
-- tool's result is no template: see flemma.lua). corral narrows that environment and bounds
-- the evaluation:
-- - vim.fn.fnamemodify without its `:s` and `:gs` modifiers, whose `\=` substitute is Vim
--   script, so any shell command (r86c FLEMMATPLEXEC); no other vim.fn entry than the few
--   Flemma's include() needs, which evaluate nothing;
-- - vim.fs.normalize without `$VAR` expansion: the editor's environment (API keys) went
--   into the request (r86c FLEMMAENVLEAK);
-- - an instruction budget and a deadline, with the JIT off meanwhile (compiled code calls
--   no hook): a loop froze the editor for good (r86c FLEMMAFREEZE), and one of string
--   calls on a 10 MB string for hours within the budget (r87c FLEMMACLOOP);
-- - string functions refused, for template code, on a string past 1 MiB, string.rep past
--   it, and a pattern match that could run past the deadline in one C call (an unanchored
--   search tries every start: `a-b` against 10 MB of `a`, r87c FLEMMAFREEZE2);
-- - vim.fn.filereadable saying 0 for what corral's read refuses (it told the model which
--   hidden key files exist, r87c FLEMMAEXISTS).
-- What is left: the Lua VM's own work on a huge string a template built with `..` (compare,
-- concatenate) between two of the hook's checks, and memory (see |corral-flemma|).
local M = {}

M.INSTRUCTION_BUDGET = 20000000
M.DEADLINE_MS = 3000
M.HOOK_EVERY = 100
M.MAX_STRING_BYTES = 1024 * 1024
M.MAX_PATTERN_STEPS = 1e8

-- the chunk names Flemma loads template code under (templating/eval.lua, compiler.lua)
local TEMPLATE_CODE = { frontmatter = true, expression = true, template = true }
-- modifiers that only take a name apart (:h :t :r :e), make it full or relative (:p :~ :.),
-- short (:8) or quoted for a shell (:S)
local SAFE_MODIFIERS = "^[:phtre~.8S]*$"
-- what a vim.fn or vim.fs function takes from a template: a path, never past this (Vim's
-- simplify() is quadratic, and runs in one C call: r88c FLEMMASIMPLIFY)
M.MAX_PATH_BYTES = 4096
-- what include() and path resolution in a template need, none of which evaluates anything
local SAFE_FN = { "getcwd", "filereadable", "simplify" }

---Whether the caller of the caller of this is template code: the first Lua function up the
---stack (past C ones: pcall, gsub calling a replacement) is; or it is Flemma's templating
---code that called template code through pcall, which a tail call from the top of the
---template left (an expression is evaluated as `return <expr>`: `('x'):rep(n)` is one).
---@return boolean
local function from_template()
  local level, through_pcall = 3, false
  while true do
    local info = debug.getinfo(level, "Sf")
    if not info then
      return false
    end
    if info.what == "C" then
      through_pcall = through_pcall or info.func == pcall or info.func == xpcall
    elseif TEMPLATE_CODE[info.source] then
      return true
    else
      return through_pcall and info.source:find("/flemma/templating/", 1, true) ~= nil
    end
    level = level + 1
  end
end

---How many items of a Lua pattern the matcher may try again under the ones before it:
---each `*`, `+`, `-` and `?` (r88c FLEMMAOPTREP: `a?` forty times took a day on 40 bytes),
---and each `%b` (a balanced run, tried to every end).
---@param pattern string
---@return integer
local function repeats(pattern)
  local count, i, n = 0, 1, #pattern
  while i <= n do
    local c = pattern:sub(i, i)
    if c == "%" then
      if pattern:sub(i + 1, i + 1) == "b" then
        count = count + 1
        i = i + 4
      else
        i = i + 2
      end
    elseif c == "[" then
      i = i + 1
      if pattern:sub(i, i) == "^" then
        i = i + 1
      end
      i = i + 1 -- (a `]` first is a member)
      while i <= n and pattern:sub(i, i) ~= "]" do
        i = i + (pattern:sub(i, i) == "%" and 2 or 1)
      end
      i = i + 1
    else
      if c == "*" or c == "+" or c == "-" or c == "?" then
        count = count + 1
      end
      i = i + 1
    end
  end
  return count
end

---A string function that refuses, for template code, a match that could run past the
---budget inside one C call (`a-a-a-a-b` against a long run of `a`).
---@param name string
---@return function
local function bounded_match(name)
  local original = string[name]
  return function(s, pattern, ...)
    if from_template() and type(s) == "string" and type(pattern) == "string" then
      if #s > M.MAX_STRING_BYTES then
        error(("corral: string.%s on %d bytes refused in a template"):format(name, #s), 2)
      end
      local plain = name == "find" and select(2, ...)
      -- (each start position tried again unless the pattern is anchored)
      local k = plain and 0 or repeats(pattern) + (pattern:sub(1, 1) == "^" and 0 or 1)
      if k > 1 and (#s + 1) ^ k > M.MAX_PATTERN_STEPS then
        error(
          ("corral: string.%s with a pattern of %d repetitions on %d bytes could freeze the editor: refused in a template"):format(
            name,
            k,
            #s
          ),
          2
        )
      end
    end
    return original(s, pattern, ...)
  end
end

local full_rep = string.rep
---@return string
local function bounded_rep(s, n, sep)
  if from_template() and type(n) == "number" and n > 0 then
    local size = (#tostring(s) + #tostring(sep or "")) * n
    if size > M.MAX_STRING_BYTES then
      error(("corral: string.rep of %.0f bytes refused in a template"):format(size), 2)
    end
  end
  return full_rep(s, n, sep)
end

---`f` refusing a string argument past `limit` bytes: from template code only where
---`templates_only` (the string library, which Flemma's own code calls on any size).
---@param name string
---@param f function
---@param limit integer
---@param templates_only boolean
---@return function
local function sized(name, f, limit, templates_only)
  return function(...)
    if not templates_only or from_template() then
      for i = 1, select("#", ...) do
        local value = select(i, ...)
        if type(value) == "string" and #value > limit then
          error(("corral: %s on %d bytes refused in a template"):format(name, #value), 2)
        end
      end
    end
    return f(...)
  end
end

---@param name string
---@param f? function
---@return function
local function bounded_size(name, f)
  return sized("string." .. name, f or string[name], M.MAX_STRING_BYTES, true)
end

-- The string library as template code sees it, through `string.` and through a string's
-- methods (`("x"):rep(n)` goes through the string metatable, not the environment).
local BOUNDED_STRING = {}
for name, fn in pairs(string) do
  BOUNDED_STRING[name] = name == "len" and fn or bounded_size(name)
end
BOUNDED_STRING.rep = bounded_rep
for _, name in ipairs({ "find", "match", "gmatch", "gsub" }) do
  BOUNDED_STRING[name] = bounded_match(name)
end

---@param name string
---@param f function
---@return function
local function path_sized(name, f)
  return sized(name, f, M.MAX_PATH_BYTES, false)
end

---A Flemma templating populator (runs after Flemma's own): the environment narrowed.
---@param env table
function M.populate(env)
  local fn = vim.fn
  local narrowed = {
    fnamemodify = path_sized("fnamemodify", function(name, modifiers)
      if type(modifiers) ~= "string" or not modifiers:match(SAFE_MODIFIERS) then
        error(
          "corral: fnamemodify takes only :p :h :t :r :e :~ :. :8 :S in a template (a :s substitute runs Vim script)",
          2
        )
      end
      if type(name) == "string" and (name:find("$", 1, true) or name:sub(1, 1) == "~") then
        -- (:p and :~ expand every `$VAR` of a name that starts with `~`: the editor's
        -- environment, r88c FLEMMAENVTILDE)
        error("corral: fnamemodify takes no name with `$` or a leading `~` in a template", 2)
      end
      return fn.fnamemodify(name, modifiers)
    end),
  }
  for _, name in ipairs(SAFE_FN) do
    narrowed[name] = path_sized(name, fn[name])
  end
  narrowed.filereadable = path_sized("filereadable", function(path)
    if type(path) == "string" and path ~= "" then
      local decided = require("corral").decide({ name = "read", input = { path = path } }, {})
      if not decided or decided.decision == "deny" then
        return 0 -- (as for a file that is not there: what the read tool refuses)
      end
    end
    return fn.filereadable(path)
  end)
  local normalize = vim.fs.normalize
  env.vim = {
    fn = narrowed,
    fs = {
      normalize = path_sized("vim.fs.normalize", function(path, opts)
        return normalize(path, vim.tbl_extend("force", opts or {}, { expand_env = false }))
      end),
      abspath = path_sized("vim.fs.abspath", vim.fs.abspath),
    },
  }
  if type(env.string) == "table" then
    for name in pairs(env.string) do
      if BOUNDED_STRING[name] then
        env.string[name] = BOUNDED_STRING[name]
      end
    end
  end
  if env.print then
    env.print = sized("print", env.print, M.MAX_STRING_BYTES, true) -- (the message area)
  end
  if type(env.table) == "table" and env.table.concat then
    local concat = table.concat
    env.table.concat = function(list, sep, ...)
      local size = 0
      for _, item in ipairs(type(list) == "table" and list or {}) do
        size = size + (type(item) == "string" and #item or 0) + #tostring(sep or "")
      end
      if size > M.MAX_STRING_BYTES then
        error(("corral: table.concat of %d bytes refused in a template"):format(size), 2)
      end
      return concat(list, sep, ...)
    end
  end
end

local depth, spent, over = 0, 0, false
local unpack_from = table.unpack or unpack -- luacheck: ignore 143

local function pack(...)
  return { n = select("#", ...), ... }
end

local THIS_FILE = debug.getinfo(1, "S").source

local deadline = 0

local function budget_hook()
  if not over then
    spent = spent + M.HOOK_EVERY
    if spent <= M.INSTRUCTION_BUDGET and vim.uv.hrtime() < deadline then
      return
    end
    -- (and then at every instruction but this file's, until the evaluation has returned: a
    -- template's `while true do pcall(f) end` cannot go on catching it)
    over = true
    debug.sethook(budget_hook, "", 1)
  elseif debug.getinfo(2, "S").source == THIS_FILE then
    return
  end
  error(
    ("corral: Flemma's template or frontmatter ran past %d instructions or %d ms (a loop that would freeze the editor)"):format(
      M.INSTRUCTION_BUDGET,
      M.DEADLINE_MS
    ),
    0
  )
end

---`fn` (one of Flemma's evaluation entry points) run within the budget, with the bounded
---string library; a call inside another (an include()'s) shares the outer one's budget.
---@param fn function
---@return function
function M.bounded(fn)
  return function(...)
    if depth > 0 then
      return fn(...)
    end
    depth, spent, over = 1, 0, false
    deadline = vim.uv.hrtime() + M.DEADLINE_MS * 1e6
    local jit_was_on = jit ~= nil and jit.status()
    if jit_was_on then
      jit.off()
    end
    local string_mt = getmetatable("")
    local full_string = string_mt.__index
    string_mt.__index = BOUNDED_STRING
    local old_hook, old_mask, old_count = debug.gethook()
    debug.sethook(budget_hook, "", M.HOOK_EVERY)
    local results = pack(pcall(fn, ...))
    if old_hook then
      debug.sethook(old_hook, old_mask, old_count)
    else
      debug.sethook()
    end
    string_mt.__index = full_string
    if jit_was_on then
      jit.on()
    end
    depth = 0
    if not results[1] then
      error(results[2], 0)
    end
    return unpack_from(results, 2, results.n)
  end
end

---Flemma's evaluation entry points, bounded, and the populator registered. Safe to call again.
function M.setup()
  local wrap = require("corral.integrations.wrap").wrap
  wrap("flemma.templating.eval", "execute_frontmatter", M.bounded)
  wrap("flemma.templating.eval", "eval_expression", M.bounded)
  wrap("flemma.templating.compiler", "execute", M.bounded)
  local ok, templating = pcall(require, "flemma.templating")
  if ok and type(templating.register) == "function" then
    templating.register("corral", { priority = 100000, populate = M.populate })
  end
end

return M
