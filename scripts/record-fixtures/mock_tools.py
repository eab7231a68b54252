"""Which of a CLI's own tools the mock provider's `shell`, `write` and `ask` scenarios call,
and with what arguments: the tools a request offers differ in every API and every CLI (`Write`
with `file_path`, opencode's `write` with `filePath`, Codex's freeform `apply_patch`, Codex's
MCP tools inside a Responses API `namespace`, Qwen Code's MCP tools behind its `tool_search`
and, from 0.24, its `tool_call`),
so the choice lives apart from the wire formats in mock_provider.py; and a value for the JSON
schema of a CLI's side request (a title, a memory note), whatever the CLI asks."""

import json
import re

# What the `shell` scenario runs (mock_provider.py --shell-command sets it).
SHELL_COMMAND = ["touch made.txt"]
# A command longer than two rows of a TUI's approval box, with a path that a row's end may cut
# inside a word (record-pty.py's `wrap` case, scripts/live-tui.sh). It runs in a throw-away
# working folder.
LONG_COMMAND = ("touch made.txt && printf '%s\\n' alpha bravo charlie delta echo foxtrot golf "
                "hotel india juliett kilo lima mike november oscar papa quebec romeo sierra "
                "tango uniform victor whiskey xray yankee zulu > words.txt && mkdir -p "
                "a-rather-long-folder-name-that-a-row-may-cut/and-one-more-level-below-it")
# A command taller than a TUI's screen (record-pty.py's `tall` case).
TALL_COMMAND = "touch made.txt && " + " && ".join(
    "echo line%03d-abcdefghijklmnopqrstuvwxyz" % i for i in range(120)) + " && echo the-end"


class Call(tuple):
    """A call the mock answers with: (name, arguments), and the Responses API `namespace`
    the tool was offered in (None outside one), which the call must name beside the tool."""

    def __new__(cls, name, args, namespace=None):
        call = super().__new__(cls, (name, args))
        call.namespace = namespace
        return call


def own_tool(req, scenario):
    """The CLI's own tool of `scenario` (`shell`, `write`, `ask`) and its arguments, as a
    Call, when `req` offers one and holds no tool result yet: the scenario calls it once,
    then answers. The arguments follow the tool's schema (`file_path` or `filePath`,
    `command` or `cmd`); a freeform `apply_patch` tool (Codex) gets a patch that adds the
    file, as a string."""
    if scenario == "ask":
        return ask_call(req)
    if scenario not in ("shell", "write"):
        return None
    tool = shell_tool(req, scenario)
    if not tool:
        return None
    name, schema = tool[:2]
    if schema is None:  # a freeform tool: apply_patch
        return Call(name, "*** Begin Patch\n*** Add File: %s\n+written live\n*** End Patch\n" % (
            WRITE_PATH[0]))
    props = (schema or {}).get("properties") or {}
    if scenario == "shell":
        key = next((k for k in ("command", "cmd") if k in props), "command")
        if (props.get(key) or {}).get("type") == "array":
            return Call(name, {key: ["bash", "-lc", SHELL_COMMAND[0]]})
        return Call(name, {key: SHELL_COMMAND[0]})
    path = next((k for k in ("file_path", "filePath", "path", "absolute_path") if k in props),
                "file_path")
    return Call(name, {path: WRITE_PATH[0], "content": "written live\n"})


WRITE_PATH = ["made.txt"]
# What the `ask` scenario asks agent-loop's MCP tool `ask`.
ASK_PROMPT = "What is six times seven? (asked through agent-loop)"
# What agent-loop's own turn answers it: a mark the CLI's model must be shown in the tool's
# result (a client that gives its model something else than the answer shows in its reply).
ASK_ANSWER = "Forty-two (ANSWER-6x7-MARK)."
ASK_MARK = "ANSWER-6x7-MARK"
# What the CLI's model answers once the conversation holds the result of `ask`, as the result
# holds agent-loop's answer or not.
ASK_SEEN = "DONE asked: the answer reached the model"
ASK_UNSEEN = "DONE asked: the tool result held no answer"


def ask_reply(req):
    """The text of the `ask` scenario for `req`: after a call of `ask`, ASK_SEEN when the
    conversation holds agent-loop's answer (in whatever shape the client passed the tool's
    result on), else ASK_UNSEEN; to a request that has called no `ask` (agent-loop's own turn,
    a CLI's side request), ASK_ANSWER."""
    if not any(is_ask(name) for name in called_tools(req)):
        return ASK_ANSWER
    return ASK_SEEN if ASK_MARK in json.dumps(req) else ASK_UNSEEN


def ask_call(req):
    """The call of agent-loop's MCP tool `ask` (scripts/live-mcp-serve.sh) while `req` offers
    it and the conversation has not called it yet. A CLI that offers its MCP tools only by
    name until its search tool loads them (Qwen Code's `tool_search`, given `select:NAME`)
    gets that search called first, once; one that then keeps it hidden and calls it through
    its `tool_call` tool (Qwen Code 0.24) gets `ask` called that way."""
    called = list(called_tools(req))
    if any(is_ask(name) for name in called):
        return None
    args = {"prompt": ASK_PROMPT, "backend": "openai"}
    offered = list(offered_tools(req))
    tool = next((t for t in offered if is_ask(t[0])), None)
    if tool:
        return Call(tool[0], args, tool[2])
    deferred = re.search(r"mcp__[A-Za-z0-9_.-]+?__ask\b", json.dumps(req.get("messages") or []))
    if not deferred or not any(t[0] == "tool_search" for t in offered):
        return None
    if "tool_search" not in called:
        return Call("tool_search", {"query": "select:" + deferred.group(0)})
    if any(t[0] == "tool_call" for t in offered):
        return Call("tool_call", {"name": deferred.group(0), "arguments": args})
    return None


def is_ask(name):
    """Whether `name` is agent-loop's `ask`, however the CLI prefixes MCP tools."""
    return name == "ask" or name.endswith("_ask")


def called_tools(req):
    """The names of the tools the conversation in `req` has called, in any API."""
    for m in req.get("messages") or []:
        for call in m.get("tool_calls") or []:  # Chat Completions
            fn = call.get("function") or {}
            yield fn.get("name", "")
            if fn.get("name") == "tool_call":  # Qwen Code 0.24: a hidden tool, by its name
                try:
                    yield (json.loads(fn.get("arguments") or "{}") or {}).get("name", "")
                except (ValueError, AttributeError):
                    pass
        content = m.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":  # Anthropic
                yield block.get("name", "")
    for item in req.get("input") if isinstance(req.get("input"), list) else []:
        if isinstance(item, dict) and item.get("type") in ("function_call", "custom_tool_call"):
            yield item.get("name", "")  # Responses
    for c in req.get("contents") or []:  # Gemini API
        for part in c.get("parts") or []:
            if "functionCall" in part:
                yield part["functionCall"].get("name", "")


def offered_tools(req):
    """(name, JSON schema, namespace) of each tool `req` offers, in any of the four APIs; a
    freeform (custom) tool of the Responses API has the schema None, and a tool inside a
    Responses API `namespace` (Codex's MCP servers) the namespace's name (else None)."""
    for tool in req.get("tools") or []:
        if "function" in tool:  # Chat Completions
            fn = tool["function"] or {}
            yield fn.get("name", ""), fn.get("parameters") or {}, None
        elif "input_schema" in tool:  # Anthropic
            yield tool.get("name", ""), tool["input_schema"] or {}, None
        elif tool.get("type") == "function":  # Responses
            yield tool.get("name", ""), tool.get("parameters") or {}, None
        elif tool.get("type") == "custom":  # Responses, freeform
            yield tool.get("name", ""), None, None
        elif tool.get("type") == "namespace":  # Responses, a group of tools
            for inner in offered_tools({"tools": tool.get("tools") or []}):
                yield inner[0], inner[1], tool.get("name")
        for decl in tool.get("functionDeclarations") or []:  # Gemini API
            yield decl.get("name", ""), (decl.get("parametersJsonSchema")
                                         or decl.get("parameters") or {}), None


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
    """(name, schema, namespace) of the CLI's tool for `word` when `req` offers one and holds
    no tool result yet: a tool named `word`, `word_file` (after any `mcp__server__` prefix)
    first, then one named like `exec_command` for a shell or `apply_patch` for a write, then
    any other with `word` in its name but a to-do list's."""
    if holds_tool_result(req):
        return None
    tools = list(offered_tools(req))
    alias = {"shell": ("exec_command", "bash"), "write": ("apply_patch",)}[word]

    def rank(tool):
        base = tool[0].lower().rsplit("__", 1)[-1]
        if base in (word, word + "_file"):
            return 0
        if base in alias:
            return 1
        return 2 if word in base and "todo" not in base else None

    ranked = sorted((r, i, t) for i, t in enumerate(tools) if (r := rank(t)) is not None)
    return ranked[0][2] if ranked else None


def fake_from_schema(schema, depth=0):
    """Build a small value that satisfies a JSON schema (for side requests)."""
    if not isinstance(schema, dict) or depth > 8:
        return "ok"
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema and schema[key]:
            return fake_from_schema(schema[key][0], depth + 1)
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), t[0] if t else "string")
    if isinstance(t, str):
        t = t.lower()
    if t == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        required = schema.get("required") or list(props)
        return {k: fake_from_schema(props.get(k, {}), depth + 1) for k in required}
    if t == "array":
        return [fake_from_schema(schema.get("items", {}), depth + 1)]
    if t in ("integer", "number"):
        return 1
    if t == "boolean":
        return False
    return "ok"
