"""The Isso bed's server: one origin, Hexo's generated blog at / and Isso at /isso/.

    WORK/venv/bin/python serve.py WORK PORT [--fill]

A WSGI app as Isso's deployment docs build one (werkzeug's DispatcherMiddleware over Isso's
`make_app`, the static files by werkzeug's SharedDataMiddleware), run by werkzeug's
`run_simple` (threaded) on 127.0.0.1:PORT. The blog is WORK/blog/public as `hexo generate`
wrote it, served as a static host does: a path ending in `/` is its folder's index.html, a
folder without the `/` answers 301 to it. Isso's database is WORK/comments.db; its `host`
(the site it serves, where it fetches a new thread's page from) is this same origin.
`--fill`: Isso's guard off, for `bed.sh fill`'s 200 comments from one address.

Every request goes into the log as `METHOD RAW-URI STATUS`, the URI byte for byte as the
client sent it (werkzeug's REQUEST_URI), so the comment API's requests can be read there.
"""

import os
import sys
import urllib.parse

from isso import config, make_app
from werkzeug.middleware.dispatcher import DispatcherMiddleware
from werkzeug.middleware.shared_data import SharedDataMiddleware
from werkzeug.serving import WSGIRequestHandler, run_simple
from werkzeug.wsgi import get_path_info

HERE = os.path.dirname(os.path.abspath(__file__))


def static_site(public):
    """Hexo's public/ as a static host serves it."""
    files = SharedDataMiddleware(not_found, {"/": public}, cache=False)

    def app(environ, start_response):
        path = get_path_info(environ)
        rel = os.path.normpath(path.lstrip("/"))
        if rel.startswith(".."):
            return not_found(environ, start_response)
        local = os.path.join(public, rel)
        if os.path.isdir(local) and not path.endswith("/"):
            start_response("301 Moved Permanently", [("Location", urllib.parse.quote(path + "/")), ("Content-Length", "0")])
            return [b""]
        if path.endswith("/") and os.path.isfile(os.path.join(local, "index.html")):
            environ = dict(environ, PATH_INFO=environ["PATH_INFO"] + "index.html")
        return files(environ, start_response)

    return app


def not_found(environ, start_response):
    body = b"<!DOCTYPE html><title>404</title><p>Not found</p>\n"
    start_response("404 Not Found", [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))])
    return [body]


class Log(WSGIRequestHandler):
    """One line a request: method, the raw request URI, status."""

    def log_request(self, code="-", size="-"):
        sys.stderr.write(f"{self.command} {self.path} {code}\n")
        sys.stderr.flush()


def main():
    args = [a for a in sys.argv[1:] if a != "--fill"]
    if len(args) != 2:
        sys.exit(__doc__)
    work, port = os.path.abspath(args[0]), int(args[1])
    conf = config.load(config.default_file(), os.path.join(HERE, "isso.cfg"))
    conf.set("general", "dbpath", os.path.join(work, "comments.db"))
    conf.set("general", "host", f"http://127.0.0.1:{port}/")
    if "--fill" in sys.argv[1:]:
        conf.set("guard", "enabled", "false")
    isso = make_app(conf)
    app = DispatcherMiddleware(static_site(os.path.join(work, "blog", "public")), {"/isso": isso})
    run_simple("127.0.0.1", port, app, threaded=True, request_handler=Log)


if __name__ == "__main__":
    main()
