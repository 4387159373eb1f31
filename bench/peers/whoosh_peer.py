"""Python peer of luntan-index and luntan-search: Whoosh with jieba's
ChineseAnalyzer over the same thread XML files.

  whoosh_peer.py index FILE_LIST INDEX_DIR LIMIT_MB
      Parse every XML file of FILE_LIST (one path a line) with lxml and add one
      document per thread (key, site, board, url stored; title and body
      analyzed with ChineseAnalyzer and stored, like luntan's title/body
      fields), one writer with LIMIT_MB of memory, one commit at the end.
      Prints one JSON line: threads, bytes (XML read), secs.

  whoosh_peer.py search INDEX_DIR QUERIES_FILE LIMIT [--startup-only]
      Open the index (jieba's dictionary loaded, a searcher open), then run
      every query of QUERIES_FILE once: parse (all words must match, like
      luntan), search title and body, take LIMIT hits with their stored
      title/url and a highlighted body snippet (luntan-search returns
      snippets too). Prints one JSON line: startup_ms and per-query ms, with
      and without the snippets.
"""
import json
import re
import sys
import time

T0 = time.perf_counter()

import jieba  # noqa: E402
import lxml.etree  # noqa: E402
from jieba.analyse import ChineseAnalyzer  # noqa: E402
from whoosh import highlight, index  # noqa: E402
from whoosh.fields import ID, STORED, TEXT, Schema  # noqa: E402
from whoosh.qparser import AndGroup, MultifieldParser  # noqa: E402

jieba.setLogLevel(60)


def schema():
    analyzer = ChineseAnalyzer()
    return Schema(
        key=ID(stored=True, unique=True),
        site=ID(stored=True),
        board=ID(stored=True),
        url=ID(stored=True),
        forum=STORED,
        title=TEXT(stored=True, analyzer=analyzer),
        body=TEXT(stored=True, analyzer=analyzer),
    )


def read_thread(path):
    with open(path, "rb") as f:
        data = f.read()
    root = lxml.etree.fromstring(data)
    site, board, thread = root.get("site"), root.get("board"), root.get("id")
    posts = []
    for post in root.iterfind("post"):
        text = "\n".join(p.text or "" for p in post.iterfind("p"))
        if text.strip():
            posts.append(text)
    return len(data), {
        "key": f"{site}/{thread}",
        "site": site,
        "board": board,
        "url": root.findtext("url") or "",
        "forum": root.findtext("forum") or "",
        "title": root.findtext("title") or "",
        "body": "\n\n".join(posts),
    }


def cmd_index(file_list, index_dir, limit_mb):
    import os

    with open(file_list) as f:
        paths = [line.strip() for line in f if line.strip()]
    started = time.perf_counter()
    jieba.initialize()
    os.makedirs(index_dir, exist_ok=True)
    ix = index.create_in(index_dir, schema())
    writer = ix.writer(limitmb=limit_mb)
    total = threads = 0
    for p in paths:
        n, doc = read_thread(p)
        writer.add_document(**doc)
        total += n
        threads += 1
    writer.commit()
    secs = time.perf_counter() - started
    print(json.dumps({"threads": threads, "bytes": total, "secs": secs}))


def cmd_search(index_dir, queries_file, limit, startup_only):
    with open(queries_file) as f:
        queries = [q.strip() for q in f if q.strip() and not q.startswith("#")]
    jieba.initialize()
    ix = index.open_dir(index_dir)
    searcher = ix.searcher()
    parser = MultifieldParser(["title", "body"], schema=ix.schema, group=AndGroup)
    startup_ms = (time.perf_counter() - T0) * 1000
    out = {"startup_ms": startup_ms, "queries": []}
    if not startup_only:
        for q in queries:
            t = time.perf_counter()
            # luntan's `-word` is Whoosh's `NOT word`; the rest reads the same.
            query = parser.parse(re.sub(r"(^|\s)-(?=\S)", r"\1NOT ", q))
            hits = searcher.search(query, limit=limit)
            total = len(hits)  # exact, as luntan's total is
            rows = [(h["title"], h["url"]) for h in hits]
            t_search = time.perf_counter()
            hits.fragmenter = highlight.ContextFragmenter(maxchars=80, surround=30)
            snippets = [h.highlights("body") for h in hits]
            t_done = time.perf_counter()
            out["queries"].append({
                "q": q,
                "total": total,
                "returned": len(rows),
                "search_ms": (t_search - t) * 1000,
                "ms": (t_done - t) * 1000,
                "snippets": sum(1 for s in snippets if s),
            })
    print(json.dumps(out, ensure_ascii=False))


def main():
    cmd = sys.argv[1]
    if cmd == "index":
        cmd_index(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif cmd == "search":
        cmd_search(sys.argv[2], sys.argv[3], int(sys.argv[4]), "--startup-only" in sys.argv[5:])
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
