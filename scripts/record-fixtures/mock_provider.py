#!/usr/bin/env python3
"""Scripted mock LLM provider for recording agent CLI fixtures.

Listens on 127.0.0.1 and answers, in the wire formats of the real APIs:

  * Anthropic Messages       POST /v1/messages (stream=true: SSE, else JSON)
                             POST /v1/messages/count_tokens
  * OpenAI Chat Completions  POST .../chat/completions (stream + include_usage, or JSON)
  * OpenAI Responses         POST .../responses (SSE when stream=true, else JSON)
  * Gemini API               POST .../models/M:streamGenerateContent?alt=sse
                             POST .../models/M:generateContent
                             POST .../models/M:countTokens
  * model lists              GET  .../models

The reply text depends only on the scenario given on the command line:

  plain     "The answer is 42."
  toolcall  a sentence, then the line
            <tool_call>{"name":"bash","arguments":{"command":"echo hi"}}</tool_call>
  json      same text as plain (the CLI is run in its JSON output mode)
  error401  every model request fails with the API's own 401 error body
  mention   "Look at a.txt and notes.md first." (names files of the folder)
  shell     a native call of the CLI's own shell tool (see mock_tools.py) running
            `touch made.txt`; once the conversation holds the tool's result,
            "DONE touched" (all four APIs)
  write     the same with the CLI's own file-writing tool (`write`, `Write`,
            `write_file`, Codex's `apply_patch`) writing "written live" to
            --write-path; then "DONE written"
  ask       a call of the MCP tool `ask` (agent-loop mcp serve: `ask`, `mcp__agent-loop__ask`,
            `mcp_agent-loop_ask`, `ask` in Codex's Responses API namespace
            `mcp__agent_loop`) asking backend `openai` a question, after Qwen Code's
            `tool_search` where the tool is only named (then through its `tool_call`
            where the tool stays hidden: 0.24); to a request that has called no
            `ask` (agent-loop's own turn), an answer with a mark; once the conversation
            holds the call's result, "DONE asked: the answer reached the model" when that
            result holds the mark, else "DONE asked: the tool result held no answer"

Apart from `shell`, `write` and `ask`, the mock never returns native tool_use / function
calls, so a CLI's own tools are never invoked. Requests that ask for structured JSON output (a response
schema, as some CLIs send for routing or "next speaker" checks) get a small
JSON object built from the schema instead of the scenario text.

Usage numbers are fixed per scenario (so re-recording gives the same counts)
and are written into each API's own usage fields.

Every request (and the start of each reply) is appended to --log.

Usage: mock_provider.py --scenario plain [--port 0] [--port-file F] [--log F] [--delay S]
                        [--piece-delay S]
"""

import argparse
import os
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from mock_tools import SHELL_COMMAND, WRITE_PATH, ask_reply, fake_from_schema, own_tool

TOOL_CALL_LINE = '<tool_call>{"name":"bash","arguments":{"command":"echo hi"}}</tool_call>'

SCENARIOS = {
    # name: (text, input_tokens, output_tokens)
    "plain": ("The answer is 42.", 1523, 9),
    "json": ("The answer is 42.", 1523, 9),
    "toolcall": ("I will run the command now.\n" + TOOL_CALL_LINE, 1587, 31),
    "error401": ("", 0, 0),
    # A reply that names files of the working folder: aider offers to add named files to
    # its chat (and sends their contents) unless it is kept out of git.
    "mention": ("Look at a.txt and notes.md first.", 1523, 9),
    # Text once the shell tool has run; before, a call of it (see shell_tool).
    "shell": ("DONE touched", 1611, 4),
    "write": ("DONE written", 1611, 4),
    # A call of agent-loop's MCP tool `ask` where a request offers it; the text depends on
    # the request (mock_tools.ask_reply).
    "ask": ("DONE asked", 1611, 4),
}

# Fixed clock so repeated recordings give the same bytes where a CLI echoes it.
CREATED = 1767225600  # 2026-01-01T00:00:00Z

LOG_LOCK = threading.Lock()
COUNTER_LOCK = threading.Lock()
COUNTER = [0]


def next_id():
    with COUNTER_LOCK:
        COUNTER[0] += 1
        return COUNTER[0]


def chunks_of(text):
    """Split text into word-ish pieces the way a streaming API would."""
    parts = re.findall(r"\s*\S+|\s+", text)
    return parts or [""]


def compact(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-provider/1"
    sys_version = ""

    # ---- plumbing -------------------------------------------------------

    def log_message(self, fmt, *args):  # silence default stderr logging
        pass

    def log(self, what, data=None):
        path = self.server.log_path
        if not path:
            return
        with LOG_LOCK, open(path, "a", encoding="utf-8") as f:
            f.write("=== %s %s %s\n" % (time.strftime("%H:%M:%S"), what, self.path))
            if data is not None:
                f.write(data if isinstance(data, str) else repr(data))
                f.write("\n")

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                body += self.rfile.read(size)
                self.rfile.readline()
            return body
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def send_json(self, obj, status=200, extra_headers=()):
        body = compact(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra_headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self.log("reply %d json" % status, body.decode()[:2000])

    def start_sse(self, extra_headers=()):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for k, v in extra_headers:
            self.send_header(k, v)
        self.end_headers()
        self._sse_log = []

    def write_chunk(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()
        self._sse_log.append(data.decode())

    def end_sse(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        self.log("reply 200 sse", "".join(self._sse_log)[:6000])

    def paced(self, pieces):
        """The pieces of a streamed answer, --piece-delay apart (to time when a CLI shows them)."""
        for i, piece in enumerate(pieces):
            if i and self.server.piece_delay:
                time.sleep(self.server.piece_delay)
            yield piece

    def sse(self, event, obj, sep="\n\n"):
        payload = obj if isinstance(obj, str) else compact(obj)
        if event:
            self.write_chunk("event: %s\ndata: %s%s" % (event, payload, sep))
        else:
            self.write_chunk("data: %s%s" % (payload, sep))

    # ---- dispatch -------------------------------------------------------

    def do_GET(self):
        self.log("GET", dict(self.headers))
        path = urlsplit(self.path).path
        if path.endswith("/models") or path == "/models":
            if "v1beta" in path:
                self.send_json({"models": [{
                    "name": "models/" + self.server.model,
                    "displayName": self.server.model,
                    "supportedGenerationMethods": ["generateContent", "countTokens"],
                    "inputTokenLimit": 1048576, "outputTokenLimit": 65536}]})
            else:
                self.send_json({"object": "list", "data": [{
                    "id": self.server.model, "object": "model",
                    "created": CREATED, "owned_by": "mock"}]})
            return
        self.send_json({"error": {"message": "not found: " + path, "type": "not_found"}}, 404)

    def do_HEAD(self):
        self.log("HEAD", dict(self.headers))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        raw = self.read_body()
        self.log("POST", "headers=%s\nbody=%s" % (
            compact(dict(self.headers)), raw.decode("utf-8", "replace")))
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            req = {}
        url = urlsplit(self.path)
        path = url.path
        query = parse_qs(url.query)
        scen = self.server.scenario
        time.sleep(self.server.delay)
        try:
            if path.endswith("/messages/count_tokens"):
                return self.send_json({"input_tokens": SCENARIOS[scen][1]})
            if path.endswith("/messages"):
                return self.anthropic(req)
            if path.endswith("/chat/completions"):
                return self.openai_chat(req)
            if path.endswith("/responses"):
                return self.openai_responses(req)
            m = re.search(r"/models/([^/:]+):(\w+)$", path)
            if m:
                model, method = m.group(1), m.group(2)
                if method == "countTokens":
                    return self.send_json({"totalTokens": SCENARIOS[scen][1]})
                if method in ("streamGenerateContent", "generateContent"):
                    sse = method == "streamGenerateContent" and query.get("alt") == ["sse"]
                    return self.gemini(req, model, method == "streamGenerateContent", sse)
            self.send_json({"error": {"message": "mock: unknown endpoint " + path,
                                      "type": "not_found"}}, 404)
        except (BrokenPipeError, ConnectionResetError):
            self.log("client went away")

    # ---- scenario text --------------------------------------------------

    def reply(self, req, schema=None):
        text, tin, tout = SCENARIOS[self.server.scenario]
        if self.server.scenario == "ask":
            text = ask_reply(req)
        if schema is not None:
            text = compact(fake_from_schema(schema))
            tout = max(1, len(text) // 4)
        return text, tin, tout

    # ---- Anthropic Messages ---------------------------------------------

    def anthropic(self, req):
        if self.server.scenario == "error401":
            return self.send_json({"type": "error", "error": {
                "type": "authentication_error", "message": "invalid x-api-key"}},
                401, [("request-id", "req_mock%06d" % next_id())])
        text, tin, tout = self.reply(req)
        model = req.get("model") or self.server.model
        mid = "msg_mock%06d" % next_id()
        usage_start = {"input_tokens": tin, "cache_creation_input_tokens": 0,
                       "cache_read_input_tokens": 0, "output_tokens": 1,
                       "service_tier": "standard"}
        if not req.get("stream"):
            return self.send_json({
                "id": mid, "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn", "stop_sequence": None,
                "usage": dict(usage_start, output_tokens=tout)},
                extra_headers=[("request-id", "req_" + mid[4:])])
        self.start_sse([("request-id", "req_" + mid[4:])])
        self.sse("message_start", {"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": usage_start}})
        tool = own_tool(req, self.server.scenario)
        if tool:
            self.sse("content_block_start", {"type": "content_block_start", "index": 0,
                                             "content_block": {
                                                 "type": "tool_use", "name": tool[0],
                                                 "id": "toolu_mock%06d" % next_id(),
                                                 "input": {}}})
            self.sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                             "delta": {"type": "input_json_delta",
                                                       "partial_json": compact(tool[1])}})
            self.sse("content_block_stop", {"type": "content_block_stop", "index": 0})
            self.sse("message_delta", {"type": "message_delta",
                                       "delta": {"stop_reason": "tool_use",
                                                 "stop_sequence": None},
                                       "usage": dict(usage_start, output_tokens=tout)})
            self.sse("message_stop", {"type": "message_stop"})
            return self.end_sse()
        self.sse("content_block_start", {"type": "content_block_start", "index": 0,
                                         "content_block": {"type": "text", "text": ""}})
        self.sse("ping", {"type": "ping"})
        for piece in self.paced(chunks_of(text)):
            self.sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                             "delta": {"type": "text_delta", "text": piece}})
        self.sse("content_block_stop", {"type": "content_block_stop", "index": 0})
        self.sse("message_delta", {"type": "message_delta",
                                   "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                   "usage": {"input_tokens": tin,
                                             "cache_creation_input_tokens": 0,
                                             "cache_read_input_tokens": 0,
                                             "output_tokens": tout}})
        self.sse("message_stop", {"type": "message_stop"})
        self.end_sse()

    # ---- OpenAI Chat Completions ----------------------------------------

    def openai_error401(self):
        return self.send_json({"error": {
            "message": "Incorrect API key provided: mock-key. You can find your API key at https://platform.openai.com/account/api-keys.",
            "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}}, 401)

    def openai_chat(self, req):
        if self.server.scenario == "error401":
            return self.openai_error401()
        schema = None
        rf = req.get("response_format") or {}
        if rf.get("type") == "json_schema":
            schema = (rf.get("json_schema") or {}).get("schema") or {}
        elif rf.get("type") == "json_object":
            schema = {}
        text, tin, tout = self.reply(req, schema)
        model = req.get("model") or self.server.model
        cid = "chatcmpl-mock%06d" % next_id()
        tool = schema is None and own_tool(req, self.server.scenario)
        usage = {"prompt_tokens": tin, "completion_tokens": tout,
                 "total_tokens": tin + tout,
                 "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                 "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                               "accepted_prediction_tokens": 0,
                                               "rejected_prediction_tokens": 0}}
        base = {"id": cid, "object": "chat.completion.chunk", "created": CREATED,
                "model": model, "service_tier": "default",
                "system_fingerprint": "fp_mock0001"}
        if not req.get("stream"):
            return self.send_json({
                "id": cid, "object": "chat.completion", "created": CREATED, "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text,
                                                     "refusal": None, "annotations": []},
                             "logprobs": None, "finish_reason": "stop"}],
                "usage": usage, "service_tier": "default",
                "system_fingerprint": "fp_mock0001"})
        with_usage = bool((req.get("stream_options") or {}).get("include_usage"))

        def chunk(choices, usage_value=None):
            obj = dict(base, choices=choices)
            if with_usage:
                obj["usage"] = usage_value
            return obj

        self.start_sse()
        self.sse(None, chunk([{"index": 0, "delta": {"role": "assistant", "content": "",
                                                     "refusal": None},
                               "logprobs": None, "finish_reason": None}]))
        if tool:
            call = {"index": 0, "id": "call_mock%06d" % next_id(), "type": "function",
                    "function": {"name": tool[0], "arguments": compact(tool[1])}}
            self.sse(None, chunk([{"index": 0, "delta": {"tool_calls": [call]},
                                   "logprobs": None, "finish_reason": None}]))
            self.sse(None, chunk([{"index": 0, "delta": {}, "logprobs": None,
                                   "finish_reason": "tool_calls"}]))
            if with_usage:
                self.sse(None, chunk([], usage))
            self.sse(None, "[DONE]")
            return self.end_sse()
        for piece in self.paced(chunks_of(text)):
            self.sse(None, chunk([{"index": 0, "delta": {"content": piece},
                                   "logprobs": None, "finish_reason": None}]))
        self.sse(None, chunk([{"index": 0, "delta": {}, "logprobs": None,
                               "finish_reason": "stop"}]))
        if with_usage:
            self.sse(None, chunk([], usage))
        self.sse(None, "[DONE]")
        self.end_sse()

    # ---- OpenAI Responses -----------------------------------------------

    def openai_responses(self, req):
        if self.server.scenario == "error401":
            return self.openai_error401()
        schema = None
        fmt = ((req.get("text") or {}).get("format") or {})
        if fmt.get("type") == "json_schema":
            schema = fmt.get("schema") or {}
        text, tin, tout = self.reply(req, schema)
        model = req.get("model") or self.server.model
        n = next_id()
        rid, mid = "resp_mock%06d" % n, "msg_mock%06d" % n
        usage = {"input_tokens": tin, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": tout, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": tin + tout}
        part_done = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
        item_done = {"id": mid, "type": "message", "status": "completed",
                     "content": [part_done], "role": "assistant"}

        def response(status, output, usage_value):
            return {"id": rid, "object": "response", "created_at": CREATED,
                    "status": status, "background": False, "error": None,
                    "incomplete_details": None,
                    "instructions": req.get("instructions"),
                    "max_output_tokens": req.get("max_output_tokens"),
                    "model": model, "output": output,
                    "parallel_tool_calls": req.get("parallel_tool_calls", True),
                    "previous_response_id": None,
                    "reasoning": {"effort": None, "summary": None},
                    "store": req.get("store", False), "temperature": 1.0,
                    "text": {"format": {"type": "text"}, "verbosity": "medium"},
                    "tool_choice": req.get("tool_choice", "auto"), "tools": [],
                    "top_p": 1.0, "truncation": "disabled", "usage": usage_value,
                    "user": None, "metadata": {}}

        tool = schema is None and own_tool(req, self.server.scenario)
        if tool:
            call_id = "call_mock%06d" % n
            item_done = {"id": "fc_mock%06d" % n, "type": "function_call",
                         "status": "completed", "call_id": call_id, "name": tool[0],
                         "arguments": compact(tool[1])}
            if tool.namespace:  # a tool offered inside a namespace is called with its name
                item_done["namespace"] = tool.namespace
            if isinstance(tool[1], str):  # a freeform tool takes its input as it is
                item_done = {"id": "ctc_mock%06d" % n, "type": "custom_tool_call",
                             "status": "completed", "call_id": call_id, "name": tool[0],
                             "input": tool[1]}
        if not req.get("stream"):
            return self.send_json(response("completed", [item_done], usage))
        seq = [0]

        def ev(kind, **fields):
            obj = {"type": kind, "sequence_number": seq[0]}
            obj.update(fields)
            seq[0] += 1
            self.sse(kind, obj)

        self.start_sse([("x-request-id", "req_mock%06d" % n)])
        ev("response.created", response=response("in_progress", [], None))
        ev("response.in_progress", response=response("in_progress", [], None))
        if tool:
            ev("response.output_item.added", output_index=0,
               item=dict(item_done, status="in_progress"))
            ev("response.output_item.done", output_index=0, item=item_done)
            ev("response.completed", response=response("completed", [item_done], usage))
            return self.end_sse()
        ev("response.output_item.added", output_index=0,
           item={"id": mid, "type": "message", "status": "in_progress",
                 "content": [], "role": "assistant"})
        ev("response.content_part.added", item_id=mid, output_index=0, content_index=0,
           part={"type": "output_text", "annotations": [], "logprobs": [], "text": ""})
        for piece in self.paced(chunks_of(text)):
            ev("response.output_text.delta", item_id=mid, output_index=0,
               content_index=0, delta=piece, logprobs=[])
        ev("response.output_text.done", item_id=mid, output_index=0, content_index=0,
           text=text, logprobs=[])
        ev("response.content_part.done", item_id=mid, output_index=0, content_index=0,
           part=part_done)
        ev("response.output_item.done", output_index=0, item=item_done)
        ev("response.completed", response=response("completed", [item_done], usage))
        self.end_sse()

    # ---- Gemini API -----------------------------------------------------

    def gemini(self, req, model, stream, sse):
        if self.server.scenario == "error401":
            # The Gemini API answers a bad key with 400 INVALID_ARGUMENT.
            return self.send_json({"error": {
                "code": 400, "message": "API key not valid. Please pass a valid API key.",
                "status": "INVALID_ARGUMENT", "details": [{
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "API_KEY_INVALID", "domain": "googleapis.com",
                    "metadata": {"service": "generativelanguage.googleapis.com"}}]}}, 400)
        gc = req.get("generationConfig") or {}
        schema = None
        if gc.get("responseMimeType") == "application/json":
            schema = gc.get("responseJsonSchema") or gc.get("responseSchema") or {}
        text, tin, tout = self.reply(req, schema)
        rid = "mockresp%06d" % next_id()

        def usage(out):
            return {"promptTokenCount": tin, "candidatesTokenCount": out,
                    "totalTokenCount": tin + out,
                    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": tin}]}

        def cand(piece, last):
            c = {"content": {"parts": [{"text": piece}], "role": "model"}, "index": 0}
            if last:
                c["finishReason"] = "STOP"
            return c

        tool = schema is None and own_tool(req, self.server.scenario)
        if tool and stream:
            call = {"functionCall": {"name": tool[0], "args": tool[1]}}
            objs = [{"candidates": [{"content": {"parts": [call], "role": "model"},
                                     "index": 0, "finishReason": "STOP"}],
                     "usageMetadata": usage(tout), "modelVersion": model, "responseId": rid}]
            if sse:
                self.start_sse()
                self.sse(None, objs[0], sep="\r\n\r\n")
                return self.end_sse()
        if not stream:
            return self.send_json({"candidates": [cand(text, True)],
                                   "usageMetadata": usage(tout),
                                   "modelVersion": model, "responseId": rid})
        pieces = chunks_of(text)
        objs = []
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            # Intermediate chunks report the prompt count only; the last one all.
            u = usage(tout) if last else {"promptTokenCount": tin,
                                          "totalTokenCount": tin,
                                          "promptTokensDetails": [{"modality": "TEXT",
                                                                   "tokenCount": tin}]}
            objs.append({"candidates": [cand(piece, last)], "usageMetadata": u,
                         "modelVersion": model, "responseId": rid})
        if sse:
            self.start_sse()
            for obj in self.paced(objs):
                self.sse(None, obj, sep="\r\n\r\n")
            self.end_sse()
        else:
            body = ("[" + ",\r\n".join(compact(o) for o in objs) + "]").encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.log("reply 200 json-array", body.decode()[:4000])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", choices=sorted(SCENARIOS), default="plain")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--port-file", help="write the chosen port here once listening")
    ap.add_argument("--log", help="append every request and reply to this file")
    ap.add_argument("--model", default="mock-model", help="model id for model lists")
    ap.add_argument("--delay", type=float, default=0,
                    help="seconds to wait before each answer (to cancel a turn)")
    ap.add_argument("--piece-delay", type=float, default=0,
                    help="seconds between the pieces of a streamed answer")
    ap.add_argument("--write-path", default="made.txt", help="the file the write scenario writes")
    ap.add_argument("--shell-command", default=SHELL_COMMAND[0],
                    help="the command the shell scenario runs")
    args = ap.parse_args()
    WRITE_PATH[0] = args.write_path
    SHELL_COMMAND[0] = args.shell_command

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.scenario = args.scenario
    server.log_path = args.log
    server.delay = args.delay
    server.piece_delay = args.piece_delay
    server.model = args.model
    port = server.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    print("mock provider (%s) on 127.0.0.1:%d" % (args.scenario, port), file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
