-- Frontmatter of chat files: a fenced block opening on the first line, ```lua or ```json.
--
-- Lua frontmatter is code a sandboxed command can write (the chat file lives in the workspace),
-- so it never runs in the editor: a separate `nvim --clean -l` process evaluates it (see
-- frontmatter_child.lua) with a time limit and, where prlimit is installed, a memory limit.
-- Nothing the chunk does (metatables, string functions, runaway patterns, memory) can reach the
-- editor's state or freeze it. Inside that process it still runs in a restricted environment
-- (no io, os beyond the clock, require, load or editor API; a few pure helpers and `corral.opt`;
-- inert stand-ins for Flemma's names) with a budget
-- of instructions, for clear errors. What it sets on `corral.opt` comes back as JSON: a layer
-- of dotted keys for the engine, which validates it.
local M = {}

M.MAX_LINES = 500
M.MAX_BYTES = 64 * 1024 -- a chat file is written by what runs in the sandbox: bound the work
M.MAX_SETTINGS_BYTES = 256 * 1024 -- what its Lua may produce
M.INSTRUCTION_BUDGET = 1000000
M.TIMEOUT_MS = 2000
M.MEMORY_BYTES = 512 * 1024 * 1024

---@class corral.Block
---@field lang string
---@field code string
---@field first integer line of the code's first line (1-based)
---@field last integer line of the closing fence

---The frontmatter block of `lines`, nil when there is none, or nil plus an error.
---@param lines string[]
---@return corral.Block|nil block, string? err
function M.extract(lines)
  local lang = lines[1] and lines[1]:match("^```(%w+)%s*$")
  if not lang then
    return nil
  end
  for i = 2, math.min(#lines, M.MAX_LINES) do
    if lines[i]:match("^```%s*$") then
      local code = table.concat(lines, "\n", 2, i - 1)
      if #code > M.MAX_BYTES then
        return nil,
          ("lines 2-%d: the frontmatter is %d bytes, more than the %d allowed; shorten it"):format(
            i - 1,
            #code,
            M.MAX_BYTES
          )
      end
      return { lang = lang, code = code, first = 2, last = i }
    end
  end
  return nil, "line 1: the frontmatter block opened here is not closed with ``` (within " .. M.MAX_LINES .. " lines)"
end

local function is_list(t)
  return type(t) == "table" and vim.islist(t)
end

local function copy_list(t)
  local out = {}
  for i, v in ipairs(t) do
    out[i] = v
  end
  return out
end

---A recorder for `corral.opt`: assignments and :append/:remove calls become layer values.
local function recorder()
  local values = {} ---@type table<string, any>
  local ops = {} ---@type table<string, boolean> keys holding {append=, remove=} tables

  local function set(path, value)
    if type(value) == "table" and not is_list(value) then
      for k, v in pairs(value) do
        set(path .. "." .. tostring(k), v)
      end
      return
    end
    values[path] = is_list(value) and copy_list(value) or value
    ops[path] = nil
  end

  local function change(path, op, items)
    if type(items[1]) == "table" and #items == 1 then
      items = items[1]
    end
    local current = values[path]
    if current == nil or ops[path] then
      values[path] = current or { append = {}, remove = {} }
      ops[path] = true
      vim.list_extend(values[path][op], copy_list(items))
    elseif op == "append" and is_list(current) then
      vim.list_extend(current, copy_list(items))
    elseif is_list(current) then
      local drop = {}
      for _, item in ipairs(items) do
        drop[item] = true
      end
      values[path] = vim.tbl_filter(function(x)
        return not drop[x]
      end, current)
    else
      error(("%s is not a list: cannot %s to it"):format(path, op), 0)
    end
  end

  local function node(path)
    return setmetatable({}, {
      __index = function(_, key)
        if key == "append" or key == "remove" then
          return function(self, ...)
            if getmetatable(self) == nil then
              error(("use %s:%s(...), with a colon"):format(path, key), 0)
            end
            change(path, key, { ... })
          end
        end
        return node(path .. "." .. tostring(key))
      end,
      __newindex = function(_, key, value)
        set(path .. "." .. tostring(key), value)
      end,
    })
  end

  local opt = setmetatable({}, {
    __index = function(_, key)
      return node(tostring(key))
    end,
    __newindex = function(_, key, value)
      if key == "sandbox" and type(value) == "boolean" then
        set("sandbox.enabled", value) -- `corral.opt.sandbox = false`
      else
        set(tostring(key), value)
      end
    end,
  })
  return opt, values
end

local PURE_STRING = {}
for _, name in ipairs({ "byte", "char", "find", "format", "gsub", "len", "lower", "match", "sub", "upper", "gmatch" }) do
  PURE_STRING[name] = string[name]
end

-- Flemma claims *.chat files too, and its Lua frontmatter sets `flemma.opt...` and may call
-- the helpers of Flemma's environment: here they accept anything and do nothing, so a Flemma
-- chat's frontmatter reads as no corral settings rather than an error.
local inert = setmetatable({}, {
  __newindex = function() end,
  __tostring = function()
    return ""
  end,
})
getmetatable(inert).__index = function()
  return inert
end
getmetatable(inert).__call = function()
  return inert
end
getmetatable(inert).__concat = function(a, b)
  return (a == inert and "" or tostring(a)) .. (b == inert and "" or tostring(b))
end

local function sandbox_env(opt)
  local pure_string = PURE_STRING
  return {
    corral = { opt = opt },
    -- Flemma's names (see above); its os subset is time only
    flemma = inert,
    include = inert,
    symbols = inert,
    print = function() end,
    os = { clock = os.clock, date = os.date, difftime = os.difftime, time = os.time },
    ipairs = ipairs,
    pairs = pairs,
    next = next,
    select = select,
    type = type,
    tostring = tostring,
    tonumber = tonumber,
    error = error,
    assert = assert,
    string = pure_string,
    table = { insert = table.insert, concat = table.concat, remove = table.remove, sort = table.sort },
    math = { floor = math.floor, ceil = math.ceil, max = math.max, min = math.min, abs = math.abs },
  }
end

---Evaluate Lua frontmatter here, in the process that runs this: only ever the separate
---evaluation process (frontmatter_child.lua), never the editor.
---@param code string
---@return table|nil values, string? err
function M._eval_here(code)
  local opt, values = recorder()
  local chunk, parse_err = load(code, "=frontmatter", "t", sandbox_env(opt))
  if not chunk then
    return nil, parse_err
  end
  -- Count hooks do not fire in JIT-compiled code: run the chunk interpreted so the budget holds.
  if jit then
    jit.off(chunk, true)
  end
  local budget_hit = false
  -- Methods on strings ("x"):rep(n) go through the string metatable, not the environment:
  -- trim it too while the chunk runs (rep and dump would reach memory and bytecode).
  local string_mt = getmetatable("")
  local full_string = string_mt.__index
  string_mt.__index = PURE_STRING
  debug.sethook(function()
    budget_hit = true
    error("frontmatter took too long (more than " .. M.INSTRUCTION_BUDGET .. " instructions)", 0)
  end, "", M.INSTRUCTION_BUDGET)
  local ok, run_err = pcall(chunk)
  debug.sethook()
  string_mt.__index = full_string
  if not ok then
    return nil, budget_hit and run_err or tostring(run_err)
  end
  return values
end

local PLUGIN_LUA = vim.fs.dirname(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)))
local CHILD = PLUGIN_LUA .. "/corral/frontmatter_child.lua"

---The system's prlimit (root-owned, never from PATH), to cap the evaluation's memory.
---@return string|nil
local function prlimit()
  for _, path in ipairs({ "/usr/bin/prlimit", "/bin/prlimit" }) do
    local st = vim.uv.fs_stat(path)
    if st and st.uid == 0 and vim.fn.executable(path) == 1 then
      return path
    end
  end
  return nil
end

---Evaluate Lua frontmatter in a separate Neovim process: the layer values, or nil and a reason.
---@param code string
---@return table|nil values, string? err
local function eval_lua(code)
  local argv =
    { vim.v.progpath, "--clean", "-i", "NONE", "-n", "-l", CHILD, PLUGIN_LUA, tostring(M.INSTRUCTION_BUDGET) }
  local limit = prlimit()
  if limit then
    argv = vim.list_extend({ limit, "--as=" .. M.MEMORY_BYTES, "--" }, argv)
  end
  local ok, proc = pcall(vim.system, argv, {
    stdin = code,
    text = true,
    cwd = "/", -- nothing of the workspace on its module paths
    timeout = M.TIMEOUT_MS,
    clear_env = true,
    env = { PATH = "/usr/bin:/bin", HOME = "/nonexistent" },
  })
  if not ok then
    return nil, "cannot start the evaluation process: " .. tostring(proc)
  end
  local done = proc:wait()
  if done.signal == 15 or done.signal == 9 or done.code == 124 then
    return nil, ("frontmatter took too long (more than %d ms)"):format(M.TIMEOUT_MS)
  end
  -- (C functions such as vim.list_extend run outside the instruction budget: 1.6 million
  -- deny_read entries froze every later request, review r31c)
  if #(done.stdout or "") > M.MAX_SETTINGS_BYTES then
    return nil, ("frontmatter settings of more than %d bytes"):format(M.MAX_SETTINGS_BYTES)
  end
  local decoded_ok, result = pcall(vim.json.decode, done.stdout or "", { luanil = { object = true, array = true } })
  if not decoded_ok or type(result) ~= "table" then
    local why = vim.trim(done.stderr or "")
    if why:find("not enough memory", 1, true) then
      return nil, "frontmatter used too much memory"
    end
    return nil, "frontmatter evaluation failed" .. (why ~= "" and (": " .. why:sub(1, 200)) or "")
  end
  if result.err then
    local err = tostring(result.err)
    return nil, err:find("not enough memory", 1, true) and "frontmatter used too much memory" or err
  end
  return type(result.values) == "table" and result.values or {}
end

---Turn "frontmatter:3: msg" into "line 4: msg" (buffer lines: the code starts on line 2).
---@param block corral.Block
---@param err string
---@return string
local function locate(block, err)
  local n, rest = err:match("^frontmatter:(%d+):%s*(.*)$")
  if n then
    return ("line %d: %s"):format(tonumber(n) + block.first - 1, rest)
  end
  return ("lines %d-%d: %s"):format(block.first, block.last, err)
end

---The layer a buffer's lines ask for: values, or nil (no frontmatter), or nil plus an error.
---@param lines string[]
---@return table|nil values, string? err, corral.Block? block
function M.read(lines)
  local block, err = M.extract(lines)
  if not block then
    return nil, err
  end
  if block.lang == "lua" then
    local values, eval_err = eval_lua(block.code)
    if not values then
      return nil, locate(block, eval_err or "failed"), block
    end
    return values, nil, block
  elseif block.lang == "json" then
    local ok, decoded = pcall(vim.json.decode, block.code, { luanil = { object = true, array = true } })
    if not ok then
      return nil, locate(block, tostring(decoded)), block
    end
    if type(decoded) ~= "table" or (decoded.corral ~= nil and type(decoded.corral) ~= "table") then
      return nil, ('lines %d-%d: expected a JSON object with a "corral" object'):format(block.first, block.last), block
    end
    return decoded.corral or {}, nil, block
  end
  return nil, ("line 1: frontmatter language %q is not supported (lua or json)"):format(block.lang), block
end

return M
