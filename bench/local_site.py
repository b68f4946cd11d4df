"""What the bench scripts share: Debian's Chromium with the headless flags that work on
these machines, and a built site served from 127.0.0.1 (optionally with gzip for text
files, as GitHub Pages serves them)."""

from __future__ import annotations

import functools
import gzip
import http.server
import os
import threading
from pathlib import Path

CHROMIUM = os.environ.get("KVLAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".js": "text/javascript",
    }
    # what GitHub Pages compresses (text types); wasm, zip, png and npz go as they are
    GZIP_SUFFIXES = {".html", ".css", ".js", ".json", ".svg", ".xml", ".txt", ".map"}
    use_gzip = False

    def log_message(self, *args):
        pass

    def do_GET(self):
        asked = Path(self.translate_path(self.path))
        path = asked / "index.html" if asked.is_dir() and self.path.split("?")[0].endswith("/") else asked
        if (
            not self.use_gzip
            or path.suffix not in self.GZIP_SUFFIXES
            or not path.is_file()
            or "gzip" not in self.headers.get("Accept-Encoding", "")
        ):
            return super().do_GET()
        body = gzip.compress(path.read_bytes(), 6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class GzipSiteHandler(SiteHandler):
    use_gzip = True


def serve(site: Path, port: int = 0, gzip_text: bool = False) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve `site` on 127.0.0.1 (port 0: any free one) in a thread: (server, base URL)."""
    handler = functools.partial(GzipSiteHandler if gzip_text else SiteHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"
