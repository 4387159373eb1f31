"""Scrapy peer of luntan-download: fetch every thread's first page from a URL
list (the same rows luntan-download gets from luntan-discover), follow the
pager links of the same thread, and save each page's raw bytes to disk.

Politeness is off on both sides (no delay, no robots.txt, no AutoThrottle);
CONCURRENT_REQUESTS equals the concurrency luntan's site file allows.

usage: scrapy_download.py URLS_FILE OUT_DIR CONCURRENCY
Prints one JSON line: pages saved, bytes, seconds.
"""
import json
import os
import re
import sys
import time

import scrapy
from scrapy.crawler import CrawlerProcess

# The fixture's Discuz! thread pages: page 1 is `...viewthread&tid=T`, later
# pages add `&page=N` (the same pattern luntan's site file has).
TID = re.compile(r"[?&]tid=(\d+)")
PAGE = re.compile(r"[?&]page=(\d+)")
THREAD_PAGE = re.compile(r"/dz/forum\.php\?mod=viewthread&tid=(\d+)&page=(\d+)$")


class ThreadSpider(scrapy.Spider):
    name = "threads"

    def __init__(self, urls_file, out_dir, **kw):
        super().__init__(**kw)
        self.urls_file = urls_file
        self.out_dir = out_dir
        self.pages = 0
        self.bytes = 0
        self.failed = 0

    async def start(self):
        with open(self.urls_file) as f:
            for line in f:
                url = line.strip()
                if url:
                    yield scrapy.Request(url, callback=self.parse, errback=self.failure)

    def failure(self, failure):
        self.failed += 1

    def parse(self, response):
        tid = TID.search(response.url).group(1)
        page = PAGE.search(response.url)
        page = int(page.group(1)) if page else 1
        name = f"article{tid}.html" if page == 1 else f"article{tid}_p{page}.html"
        with open(os.path.join(self.out_dir, name), "wb") as f:
            f.write(response.body)
        self.pages += 1
        self.bytes += len(response.body)
        # The pager: links to later pages of the same thread.
        # The pager: links to later pages of the same thread, matched on the
        # absolute URL like luntan's <thread-page> pattern. Pages already
        # asked for are dropped by Scrapy's duplicate filter.
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href)
            m = THREAD_PAGE.search(url)
            if m and m.group(1) == tid and int(m.group(2)) > 1:
                yield scrapy.Request(url, callback=self.parse, errback=self.failure)


def main():
    urls_file, out_dir, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(out_dir, exist_ok=True)
    process = CrawlerProcess(settings={
        "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
        "DOWNLOAD_DELAY": 0,
        "AUTOTHROTTLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "COOKIES_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "WARNING",
        "RETRY_TIMES": 4,
        # Breadth-first or depth-first makes no difference to the page count;
        # depth-first (the default LIFO) keeps the queue small.
    })
    crawler = process.create_crawler(ThreadSpider)
    started = time.perf_counter()
    process.crawl(crawler, urls_file=urls_file, out_dir=out_dir)
    process.start()
    secs = time.perf_counter() - started
    spider = crawler.spider
    print(json.dumps({"pages": spider.pages, "bytes": spider.bytes, "failed": spider.failed, "secs": secs}))


if __name__ == "__main__":
    main()
