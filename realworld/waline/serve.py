"""The Waline bed's server: one origin, Hexo's generated blog at /, Waline's API at /api/.

    python3 serve.py WORK PORT [--fill]

Starts Waline's server (`waline.js`: @waline/vercel's vanilla.js, on Node, listening on
127.0.0.1 at a free port of its own; storage MySQL, the database `waline_bed` on the local
MariaDB) as a child in this process's group, waits for its API, then serves on 127.0.0.1:PORT
(stdlib `ThreadingHTTPServer`):

- `/api/…`: passed on to Waline byte for byte (method, raw URI, body; `X-Forwarded-For`, as a
  reverse proxy in front of Waline sets it: Waline runs with `proxy: true`), its answer back;
- `/waline/…`: `@waline/client`'s `dist/` (the embed's waline.umd.js and waline.css), as the
  CDN (unpkg) would serve them, which this machine cannot reach;
- anything else: WORK/blog/public as a static host serves it: a path ending in `/` is its
  folder's index.html, a folder without the `/` answers 301 to it, else 404.

Waline's settings are its environment variables (below). `--fill`: IPQPS=0 (Waline refuses a
second comment from one address within IPQPS seconds, 60 by default; all of the fill's come
from 127.0.0.1). Every request goes into the log as `METHOD RAW-URI STATUS`, the URI byte for
byte as the client sent it. stdlib only.
"""

import http.client
import mimetypes
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
DATABASE = "waline_bed"


def waline_env(work, fill):
    """Waline's settings (its src/config/*.js read them from the environment)."""
    env = dict(os.environ)
    env.update(
        WALINE_SERVER_DIR=os.path.join(work, "server"),
        # MySQL storage (src/config/adapter.js): root with an empty password on the local MariaDB
        MYSQL_DB=DATABASE,
        MYSQL_HOST="127.0.0.1",
        MYSQL_PORT="3306",
        MYSQL_USER="root",
        MYSQL_PASSWORD="",
        # the key Waline signs its login tokens with (else MYSQL_PASSWORD: empty here)
        JWT_TOKEN="luntan-waline-bed",
        # Waline keeps insertedAt as the server's wall clock and reads it back as local time;
        # on any zone but UTC its `time` would come back shifted (8 h early on Asia/Shanghai).
        # Vercel and Waline's Docker image run on UTC.
        TZ="UTC",
        # Akismet's spam check: on by default with Waline's own key, on akismet.com (unreachable)
        AKISMET_KEY="false",
        # Every request first fetches the list of social-login services from OAUTH_URL
        # (default https://oauth.lithub.cc, unreachable; a failure answers 502): none.
        OAUTH_URL='data:application/json,{"services":[]}',
    )
    if fill:
        env["IPQPS"] = "0"
    return env


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_waline(work, fill):
    port = free_port()
    p = subprocess.Popen(["node", os.path.join(HERE, "waline.js"), str(port)], env=waline_env(work, fill), cwd=work, stdin=subprocess.DEVNULL)
    for _ in range(240):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/api/comment?path=%2F&type=count")
            if c.getresponse().status == 200:
                return p, port
        except OSError:
            pass
        if p.poll() is not None:
            sys.exit("serve.py: Waline's server died")
        time.sleep(0.25)
    p.terminate()
    sys.exit("serve.py: Waline's server did not answer")


HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authorization", "proxy-authenticate"}


def make_handler(work, waline_port):
    public = os.path.join(work, "blog", "public")
    client = os.path.join(work, "server", "node_modules", "@waline", "client", "dist")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_request(self, code="-", size="-"):
            sys.stderr.write(f"{self.command} {self.path} {code}\n")
            sys.stderr.flush()

        def log_message(self, *args):
            pass

        def send(self, status, body=b"", headers=()):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def proxy(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
            headers["X-Forwarded-For"] = self.client_address[0]
            headers["X-Forwarded-Proto"] = "http"
            c = http.client.HTTPConnection("127.0.0.1", waline_port, timeout=60)
            c.request(self.command, self.path, body=body, headers=headers)
            r = c.getresponse()
            data = r.read()
            self.send(r.status, data, [(k, v) for k, v in r.getheaders() if k.lower() not in HOP | {"content-length"}])

        def static(self, root, path):
            rel = os.path.normpath(urllib.parse.unquote(path).lstrip("/"))
            if rel.startswith(".."):
                return self.not_found()
            local = os.path.join(root, rel) if rel != "." else root
            if os.path.isdir(local):
                if not path.endswith("/"):
                    return self.send(301, headers=[("Location", urllib.parse.quote(urllib.parse.unquote(path) + "/"))])
                local = os.path.join(local, "index.html")
            if not os.path.isfile(local):
                return self.not_found()
            with open(local, "rb") as f:
                data = f.read()
            ctype = mimetypes.guess_type(local)[0] or "application/octet-stream"
            if ctype.startswith("text/") or ctype in ("application/javascript", "application/json"):
                ctype += "; charset=utf-8"
            self.send(200, data, [("Content-Type", ctype)])

        def not_found(self):
            self.send(404, b"<!DOCTYPE html><title>404</title><p>Not found</p>\n", [("Content-Type", "text/html; charset=utf-8")])

        def do_GET(self):
            path = urllib.parse.urlsplit(self.path).path
            if path.startswith("/api/"):
                return self.proxy()
            if path.startswith("/waline/"):
                return self.static(client, path[len("/waline"):])
            return self.static(public, path)

        do_HEAD = do_GET

        def do_POST(self):
            if urllib.parse.urlsplit(self.path).path.startswith("/api/"):
                return self.proxy()
            self.send(405)

        do_PUT = do_DELETE = do_OPTIONS = do_POST

    return Handler


def main():
    args = [a for a in sys.argv[1:] if a != "--fill"]
    if len(args) != 2:
        sys.exit(__doc__)
    work, port = os.path.abspath(args[0]), int(args[1])
    fill = "--fill" in sys.argv[1:]
    waline, waline_port = start_waline(work, fill)

    def stop(*_):
        waline.terminate()
        try:
            waline.wait(5)
        except subprocess.TimeoutExpired:
            waline.kill()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    sys.stderr.write(f"serve.py: Waline {waline_port}, blog and /api/ on 127.0.0.1:{port}\n")
    sys.stderr.flush()
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer(("127.0.0.1", port), make_handler(work, waline_port)).serve_forever()


if __name__ == "__main__":
    main()
