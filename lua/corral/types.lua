-- The types of corral's tool-call contract, for LuaLS (annotations only: nothing to require).
-- What chat plugins program against: :help corral.execute(), :help corral-result.
---@meta

---A tool call as the model asked for it.
---@class corral.ToolCall
---@field name "bash"|"read"|"write"|"edit"|"delete"|"ls"|"fetch"
---@field input table the tool's input (:help corral.execute() lists each tool's fields)
---@field id string|nil the chat's id for the call, handed to resolvers as `tool_call_id`

---Why something was refused, and how to allow it. One shape everywhere: the guard's refusals,
---the file tools' and fetch's, and what the sandbox visibly refused in a command's output.
---@class corral.Refusal
---@field code string what kind of refusal (:help corral-refusal-codes)
---@field rule string the setting or rule that refused (`sandbox.mode`, `tools.shell.deny`, ...)
---@field layer string where that setting's value came from (default, global, a chat file, ...)
---@field message string what was refused, in words
---@field hint string how to allow it, when that is yours to decide
---@field path string|nil the path it concerns (file tools)
---@field host string|nil the host it concerns (fetch)
---@field what string|nil (sandbox_refusals) the kind of refusal in plain words

---The guard's answer for a call.
---@class corral.Decision
---@field decision "approve"|"require_approval"|"deny"
---@field source string the resolver's URN or the rule that decided ("user" after the window)
---@field reason string
---@field class "read-only"|"writes"|"network"|"dynamic"|"privileged"|nil bash: the classifier's
---@field refusal corral.Refusal|nil with "deny"

---What became of a command's writes (:help corral-changes).
---@class corral.Changes
---@field id string
---@field status "empty"|"applied"|"held" held: something is held; counts: what was applied
---@field counts {added: integer, modified: integer, deleted: integer, held: integer}
---@field changed string[] "added src/x.py", ... (up to 100)
---@field held {path: string, code: string, why: string}[]
---@field why string|nil
---@field more integer|nil how many paths were not listed
---@field earlier {id: string, paths: string[], count: integer, commits: boolean|nil}[]|nil change sets earlier runs in
---this workspace left held: not in the workspace, so not seen by this command either

---The result of a call: one shape for every tool.
---@class corral.Result
---@field status "ran"|"refused"|"denied_by_user"|"failed"|"timed_out"|"cancelled"
---@field ok boolean it ran and, for bash, exited 0
---@field tool string
---@field sandboxed boolean corral's sandbox confined it (fetch: false; its host list does)
---@field summary string one plain line to hand the model as it is
---@field decision {decision: string, source: string, reason: string, class: string|nil}
---@field refusal corral.Refusal|nil with status "refused" or "denied_by_user"
---@field error string|nil with status "failed"
---@field exit integer|nil bash: the exit status
---@field output string|nil bash: stdout and stderr, the end kept when long
---@field truncated boolean|nil output (bash) or content (read) was cut
---@field timed_out boolean|nil bash
---@field timeout integer|nil bash: the seconds it was given
---@field sandbox_refusals corral.Refusal[]|nil bash: what the sandbox visibly refused
---@field changes corral.Changes|nil bash: the command's writes
---@field repairs string[]|nil bash: corral's lines after the run, for the user (held paths and
---how to go on; with direct writes, what it put back)
---@field content string|nil read
---@field notice string|nil read: where to read on after a cut, or that the offset is past the end
---@field diff string|nil edit
---@field count integer|nil edit: occurrences replaced
---@field written boolean|nil edit: whether it was written (false: a preview, or held)
---@field bytes integer|nil write
---@field created boolean|nil write: the file is new
---@field change {id: string, status: string, counts: table<string, integer>}|nil write, edit,
---delete: the change set that applied it
---@field held {id: string, status: "held", held: {path: string, code: string, why: string}[], why: string}|nil
---write, edit, delete: held for the user's review, not in the workspace
---@field entries {name: string, type: string, size: integer|nil}[]|nil ls (size: a file's only)
---@field hidden integer|nil ls: entries left out (hidden by the sandbox or a deny glob)
---@field path string|nil file tools: the path acted on, resolved
---@field url string|nil fetch: the URL fetched (redirects are not followed)
---@field http_status integer|nil fetch
---@field reason string|nil fetch: the HTTP reason phrase
---@field body string|nil fetch
---@field headers table<string, string>|nil fetch
---@field address string|nil fetch: the address connected to
---@field location string|nil fetch: a redirect's target (3xx)

---Returned by execute(): stop the call.
---@class corral.Handle
---@field done boolean on_done has been called
---@field cancel fun(): boolean close its confirmation window or stop its command; false when it
---can no longer be stopped (done, or a file tool already running)

-- The options classes below are generated from the schema by `scripts/gen_docs.py`.

---What setup() takes: :help corral-options (every key is optional).
---@class corral.Options
---@field sandbox corral.Options.sandbox|nil
---@field tools corral.Options.tools|nil
---@field chat corral.Options.chat|nil
---@field frontmatter corral.Options.frontmatter|nil

---@class corral.Options.sandbox
---@field enabled boolean|nil Run tool commands inside the sandbox
---@field backend string|nil "auto": the first available backend by priority, running unsandboxed (and ...
---@field mode "read-only"|"workspace-write"|"workspace-write-network"|"off"|nil Preset for rw_paths and network
---@field policy corral.Options.sandbox.policy|nil
---@field writes "review"|"apply"|"direct"|nil What happens to a sandboxed command's writes to the writable roots
---@field unreadable_configs "hold"|"apply"|nil What becomes of change sets in a workspace whose host-run configs do what ...
---@field new_modules "hold"|"apply"|nil What becomes of a new top-level Python module or package where Python looks ...
---@field project_configs "hold"|"apply"|nil What becomes of a new or changed file in a config format (TOML, YAML, JSON ...
---@field ignored_files "hold"|"apply"|nil What becomes of a new or changed path that git ignores, in a repository in or ...
---@field git_history "hold"|"check"|nil What becomes of new git history a command makes (commits, a stash, a merge's ...
---@field limits corral.Options.sandbox.limits|nil
---@field backends corral.Options.sandbox.backends|nil

---@class corral.Options.sandbox.policy
---@field rw_paths string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil Writable paths (the mode's preset when not set)
---@field deny_read string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil Paths hidden inside the sandbox (credential stores, other homes, host sockets) ...
---@field deny_write string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil Paths kept read-only even inside a writable root (editor config, shell rc files)
---@field protected string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil Names kept read-only inside every writable root where they exist (git hooks and ...
---@field network boolean|nil Allow network access (the mode's preset)
---@field network_allow string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil With network off: the hosts sandboxed commands may still reach, through ...
---@field network_private string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil Hosts of network_allow that may resolve to loopback, private, link-local or ...
---@field allow_privileged boolean|nil Keep capabilities inside the sandbox's user namespace and allow nested ...
---@field env string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil Extra environment variables to pass in: NAME (the host's value) or NAME=value
---@field unix_sockets boolean|nil Let sandboxed commands create AF_UNIX sockets in modes without network ...
---@field scrub_env boolean|nil Build every command's environment from the allowlist plus sandbox.policy.env ...
---@field home "visible"|"private"|nil Home directory privacy
---@field home_allow string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil Entries of $HOME kept visible (read-only) when home = "private"

---@class corral.Options.tools
---@field available string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil Tools a chat may call at all; frontmatter can remove some for its buffer
---@field approval "ask"|"read-only"|"auto"|"full"|nil Approval preset
---@field auto_approve string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|fun(tool_call: corral.ToolCall, context: table): any|nil Tools approved without asking (in Neovim also a Lua function(tool_call) -> ...
---@field auto_approve_sandboxed boolean|nil Approve tools that declare can_auto_approve_if_sandboxed (bash) when a sandbox ...
---@field require_approval boolean|nil When false, whatever no rule decided is approved instead of asking you
---@field shell corral.Options.tools.shell|nil
---@field permissions corral.Options.tools.permissions|nil
---@field read corral.Options.tools.read|nil
---@field delete corral.Options.tools.delete|nil
---@field fetch corral.Options.tools.fetch|nil
---@field bash corral.Options.tools.bash|nil

---@class corral.Options.tools.shell
---@field allow string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil Commands approved without asking: leading words, case-insensitive (`git status` ...
---@field deny string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil Commands always refused: case-insensitive substrings of the command

---@class corral.Options.tools.permissions
---@field deny string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil Globs (relative to the workspace, like .gitignore) the file tools never read ...
---@field write string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil When not empty, file tools write only paths matching one of these globs
---@field read string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil When not empty, file tools read contents only of paths matching one of these ...
---@field envelope string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil When not empty, every change must also match one of these globs (a change ...

---@class corral.Options.tools.read
---@field max_bytes integer|nil Largest read returned in full; more is cut

---@class corral.Options.tools.delete
---@field allow_sandboxed boolean|nil Let the delete tool work while the sandbox is enabled

---@class corral.Options.tools.fetch
---@field allow_hosts string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil Hosts the fetch tool may reach (*.example.com for subdomains, ${ENV} expanded) ...
---@field allow_private string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil Hosts allowed to resolve to loopback, private, link-local or unique-local ...

---@class corral.Options.tools.bash
---@field timeout integer|nil Seconds before a bash tool call and all it started are killed
---@field output_cap integer|nil Bytes of bash output kept: the last ones (errors come last), starting on a ...

---@class corral.Options.chat
---@field patterns string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil (Neovim) File patterns of chat buffers, whose frontmatter is read

---@class corral.Options.frontmatter
---@field allow_widening boolean|nil (Neovim) Let frontmatter of any chat file widen the sandbox, not only of files ...

---@class corral.Options.sandbox.limits
---@field processes integer|nil Processes and threads a sandboxed command may have at once (RLIMIT_NPROC ...
---@field file_size_mb integer|nil Largest file a sandboxed command may write, in MiB (RLIMIT_FSIZE); a larger ...
---@field memory_percent integer|nil Memory each sandboxed process may allocate, as a percentage (1-100) of physical ...
---@field tmp_percent integer|nil Size of each memory-backed directory of the sandbox (its private /tmp ...
---@field timeout integer|nil Seconds before `corral run` kills the command and all it started, when no ...
---@field undo_mb integer|nil MiB of replaced and deleted files the undo journal keeps (as they take space on ...

---@class corral.Options.sandbox.backends
---@field bwrap corral.Options.sandbox.backends.bwrap|nil

---@class corral.Options.sandbox.backends.bwrap
---@field path string|nil Path to bwrap; empty: bwrap from /usr/bin, /bin, /usr/sbin, /sbin or ...
---@field extra_args string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}|nil Extra bwrap arguments, inserted before the command

-- (end of the generated options classes)
