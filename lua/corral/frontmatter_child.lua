-- The separate process that evaluates Lua frontmatter (see frontmatter.lua): run as
-- `nvim --clean -i NONE -n -l frontmatter_child.lua <plugin lua dir> <budget>`, it reads the
-- code on stdin and writes {"values": ...} or {"err": ...} as JSON on stdout.
if not (arg and arg[1]) or vim.v.argv == nil then
  return {} -- required by mistake inside an editor: nothing to do
end
package.path = arg[1] .. "/?.lua;" .. package.path
local frontmatter = require("corral.frontmatter")
frontmatter.INSTRUCTION_BUDGET = tonumber(arg[2]) or frontmatter.INSTRUCTION_BUDGET
local code = io.read("*a")
local ok, values, err = pcall(frontmatter._eval_here, code)
if not ok then
  values, err = nil, tostring(values)
end
io.write(vim.json.encode(values and { values = values } or { err = err or "failed" }))
