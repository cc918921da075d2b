"""Change sets: a sandboxed command's writes are checked before they reach the workspace.

Every writable root is the lower layer of an overlay inside the sandbox; the command's writes
land in an upper directory corral keeps in its own state directory, hidden from the sandbox.
When the command has exited, that upper directory is the exact change set. corral reads it
without following links or recursing (`scan`), refuses per path what the host would run or obey
by itself (`rules`), and applies the rest file by file with a journal for undo (`apply`,
`journal`); what is refused, or everything in review mode, is held (`stage`) for
`corral changes|apply|discard` and `:Sandbox changes`.

The pieces run in this order for every sandboxed command: `stage.create` when the command is
wrapped, the command, then `finish.finish` (in `corral run`'s own process, or from the launcher
script of an argv started by someone else's jobstart).
"""
