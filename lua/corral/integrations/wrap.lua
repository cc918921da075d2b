-- Patching a chat plugin's function where no option closes a way in (:help
-- corral-integrations): the plugin's module function is replaced by a wrapper, once per
-- session, so that calling setup() again does not wrap the wrapper.
local M = {}

---Replace `require(module)[field]` with `make(original)`, unless done already.
---@param module string the plugin's module
---@param field string the function in it
---@param make fun(original: function): function
---@return boolean done the function is wrapped (now or before)
function M.wrap(module, field, make)
  local ok, mod = pcall(require, module)
  if not ok or type(mod) ~= "table" then
    return false
  end
  local marker = "corral_wrapped_" .. field
  if rawget(mod, marker) then
    return true
  end
  if type(mod[field]) ~= "function" then
    return false
  end
  mod[field] = make(mod[field])
  rawset(mod, marker, true)
  return true
end

return M
