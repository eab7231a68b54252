"""Which of a CLI's own tools the mock provider's `shell` and `write` scenarios call, and
with what arguments: the tools a request offers differ in every API and every CLI (`Write`
with `file_path`, opencode's `write` with `filePath`, Codex's freeform `apply_patch`), so the
choice lives apart from the wire formats in mock_provider.py."""

SHELL_COMMAND = "touch made.txt"


def own_tool(req, scenario):
    """The CLI's own tool of `scenario` (`shell`, `write`) and its arguments, when `req`
    offers one and holds no tool result yet: the scenario calls it once, then answers.
    The arguments follow the tool's schema (`file_path` or `filePath`, `command` or `cmd`);
    a freeform `apply_patch` tool (Codex) gets a patch that adds the file, as a string."""
    if scenario not in ("shell", "write", "ask"):
        return None
    tool = shell_tool(req, scenario)
    if not tool:
        return None
    name, schema = tool
    if scenario == "ask":  # agent-loop's MCP tool (scripts/live-mcp-serve.sh)
        return name, {"prompt": ASK_PROMPT, "backend": "openai"}
    if schema is None:  # a freeform tool: apply_patch
        return name, "*** Begin Patch\n*** Add File: %s\n+written live\n*** End Patch\n" % (
            WRITE_PATH[0])
    props = (schema or {}).get("properties") or {}
    if scenario == "shell":
        key = next((k for k in ("command", "cmd") if k in props), "command")
        if (props.get(key) or {}).get("type") == "array":
            return name, {key: ["bash", "-lc", SHELL_COMMAND]}
        return name, {key: SHELL_COMMAND}
    path = next((k for k in ("file_path", "filePath", "path", "absolute_path") if k in props),
                "file_path")
    return name, {path: WRITE_PATH[0], "content": "written live\n"}


WRITE_PATH = ["made.txt"]
# What the `ask` scenario asks agent-loop's MCP tool `ask`.
ASK_PROMPT = "What is six times seven? (asked through agent-loop)"


def offered_tools(req):
    """(name, JSON schema) of each tool `req` offers, in any of the four APIs; a freeform
    (custom) tool of the Responses API has the schema None."""
    for tool in req.get("tools") or []:
        if "function" in tool:  # Chat Completions
            fn = tool["function"] or {}
            yield fn.get("name", ""), fn.get("parameters") or {}
        elif "input_schema" in tool:  # Anthropic
            yield tool.get("name", ""), tool["input_schema"] or {}
        elif tool.get("type") == "function":  # Responses
            yield tool.get("name", ""), tool.get("parameters") or {}
        elif tool.get("type") == "custom":  # Responses, freeform
            yield tool.get("name", ""), None
        for decl in tool.get("functionDeclarations") or []:  # Gemini API
            yield decl.get("name", ""), (decl.get("parametersJsonSchema")
                                         or decl.get("parameters") or {})


def holds_tool_result(req):
    """Whether the conversation in `req` already holds a tool's result, in any API."""
    if any(m.get("role") == "tool" for m in req.get("messages") or []):
        return True
    for m in req.get("messages") or []:
        content = m.get("content")
        if isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return True
    items = req.get("input") if isinstance(req.get("input"), list) else []
    if any(i.get("type") in ("function_call_output", "custom_tool_call_output")
           for i in items if isinstance(i, dict)):
        return True
    return any("functionResponse" in part
               for c in req.get("contents") or [] for part in c.get("parts") or [])


def shell_tool(req, word="shell"):
    """(name, schema) of the CLI's tool for `word` when `req` offers one and holds no tool
    result yet: a tool named `word`, `word_file` (after any `mcp__server__` prefix) first,
    then one named like `exec_command` for a shell or `apply_patch` for a write, then any
    other with `word` in its name but a to-do list's."""
    if holds_tool_result(req):
        return None
    tools = list(offered_tools(req))
    alias = {"shell": ("exec_command", "bash"), "write": ("apply_patch",), "ask": ()}[word]

    def rank(tool):
        if word == "ask":  # agent-loop's `ask`, however the CLI prefixes MCP tools
            return 0 if tool[0] == "ask" or tool[0].endswith("_ask") else None
        base = tool[0].lower().rsplit("__", 1)[-1]
        if base in (word, word + "_file"):
            return 0
        if base in alias:
            return 1
        return 2 if word in base and "todo" not in base else None

    ranked = sorted((r, i, t) for i, t in enumerate(tools) if (r := rank(t)) is not None)
    return ranked[0][2] if ranked else None
