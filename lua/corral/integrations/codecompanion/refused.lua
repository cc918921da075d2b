-- codecompanion.nvim resolves a built-in corral turned off to this tool when it reaches it
-- another way (:help corral-codecompanion): every call is refused.
return require("corral.integrations.codecompanion").refused()
