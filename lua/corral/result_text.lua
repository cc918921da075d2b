-- A corral.Result as the text a model reads: the summary line, then what the tool produced.
-- One function, so every integration tells the model the same thing (:help corral.text()).
local M = {}

---@param entries {name: string, type: string, size: integer}[]
---@return string
local function listing(entries)
  local lines = {}
  for _, e in ipairs(entries) do
    lines[#lines + 1] = e.type == "directory" and (e.name .. "/") or e.name
  end
  return table.concat(lines, "\n")
end

---@param result corral.Result
---@return string
function M.text(result)
  local parts = { result.summary or ("status " .. tostring(result.status)) }
  local function add(value)
    if type(value) == "string" and value ~= "" then
      parts[#parts + 1] = value
    end
  end
  if result.tool == "bash" then
    add(result.output)
  elseif result.tool == "read" then
    add(result.content)
  elseif result.tool == "edit" then
    add(result.diff)
  elseif result.tool == "ls" and type(result.entries) == "table" then
    add(listing(result.entries))
  elseif result.tool == "fetch" then
    add(result.body)
  end
  return table.concat(parts, "\n")
end

return M
