#!/usr/bin/env python3
"""The alert recipes' webhook receiver for `just docs-check` (docs/api.md names it
https://hooks.example.com): answers every POST with 204, so the recipes' test message is
delivered. Usage: docs_check_receiver.py HOST:PORT"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Hook(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


host, port = sys.argv[1].rsplit(":", 1)
ThreadingHTTPServer((host, int(port)), Hook).serve_forever()
