#!/usr/bin/env python3
"""A minimal OpenAI-compatible server on 127.0.0.1 for scripts/bench.sh: every POST gets the
same whole (non-streamed) Chat Completions reply, so curl and agent-loop make the same request
to the same server. Prints its port on the first line, then serves until killed."""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPLY = json.dumps({
    "id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "bench",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "The answer is 42."}}],
    "usage": {"prompt_tokens": 1200, "completion_tokens": 9, "total_tokens": 1209},
}).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(REPLY)))
        self.end_headers()
        self.wfile.write(REPLY)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
