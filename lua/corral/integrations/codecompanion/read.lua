-- codecompanion.nvim loads this tool by module path (:help corral-codecompanion).
return require("corral.integrations.codecompanion").tool("read")
