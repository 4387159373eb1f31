#!/usr/bin/env python3
"""Compare a served NodeBB bed with its truth.json, the way a client without JavaScript sees it.

usage: check.py TRUTH_JSON PORT
Reads the home page (boards), every thread page by page (?page=N, as the <noscript> pager and
<link rel="next"> give them), and checks titles, authors, times (datePublished), paragraphs,
post ids (data-pid), author ids (data-uid) and pages (/user/…), quotes with the post and
author their head line names, edit times and vote counts.
"""
import json
import os
import re
import sys
import urllib.parse
import urllib.request
from html.parser import HTMLParser

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from truthlib import post_view  # noqa: E402

CONTENT = re.compile(r'<li component="post"[^>]*?data-pid="(\d+)" data-uid="(\d+)".*?'
                     r'<a href="([^"]*)" itemprop="author".*?'
                     r'<div class="content" component="post/content" itemprop="text">(.*?)</div>', re.S)
HEAD = re.compile(r'^@(\S+) said in .*:$')


def top_heads(content):
    """The paragraph just before each outermost blockquote (its head line)."""
    heads, depth, last = [], 0, ''
    for m in re.finditer(r'<(/?)blockquote>|<p>(.*?)</p>', content, re.S):
        if m.group(2) is not None:
            if depth == 0:
                last = m.group(2)
        elif m.group(1):
            depth -= 1
        else:
            if depth == 0:
                heads.append(last)
            depth += 1
    return heads


class Posts(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.posts, self.title, self.next = [], None, None
        self.stack = []  # tag names with a role flag
        self.in_title = self.in_author = self.in_content = self.in_p = False
        self.depth_content = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'link' and a.get('rel') == 'next':
            self.next = a.get('href')
        if tag == 'li' and a.get('component') == 'post':
            self.posts.append({'author': '', 'time': None, 'paragraphs': []})
        if tag == 'span' and a.get('component') == 'topic/title':
            self.in_title, self.title = True, ''
        if tag == 'a' and a.get('itemprop') == 'author' and self.posts:
            self.in_author = True
        if tag == 'meta' and a.get('itemprop') == 'datePublished' and self.posts:
            self.posts[-1]['time'] = a.get('content')
        if tag == 'div' and a.get('component') == 'post/content':
            self.in_content, self.depth_content = True, 0
        if self.in_content and tag == 'div':
            self.depth_content += 1
        if self.in_content and tag == 'p':
            self.in_p = True
            self.posts[-1]['paragraphs'].append('')

    def handle_endtag(self, tag):
        if tag == 'span':
            self.in_title = False
        if tag == 'a':
            self.in_author = False
        if tag == 'p':
            self.in_p = False
        if self.in_content and tag == 'div':
            self.depth_content -= 1
            if self.depth_content == 0:
                self.in_content = False

    def handle_data(self, data):
        if self.in_title:
            self.title += data
        if self.in_author:
            self.posts[-1]['author'] += data.strip()
        if self.in_p:
            self.posts[-1]['paragraphs'][-1] += data


def get(port, path):
    url = 'http://127.0.0.1:%d%s' % (port, urllib.parse.quote(path, safe='/?=&'))
    with urllib.request.urlopen(url) as r:
        return r.status, r.read().decode('utf-8')


def main():
    truth = json.load(open(sys.argv[1], encoding='utf-8'))
    port = int(sys.argv[2])
    bad = 0
    _, home = get(port, truth['home'])
    for b in truth['boards']:
        if b['name'] not in home or ('href="%s"' % b['path']) not in home:
            print('board missing on home page:', b['id'], b['name'])
            bad += 1
    pages = 0
    for t in truth['threads']:
        got, page, title = [], 1, None
        while True:
            status, html = get(port, t['path'] + '?page=%d' % page)
            pages += 1
            p = Posts()
            p.feed(html)
            title = title or p.title
            conv = CONTENT.findall(html)
            assert len(conv) == len(p.posts), (t['path'], page, len(conv), len(p.posts))
            chunks = html.split('<li component="post"')[1:]
            for x, (pid, uid, href, content), chunk in zip(p.posts, conv, chunks):
                votes = re.search(r'component="post/vote-count" data-votes="(-?\d+)"', chunk)
                edited = re.search(r'component="post/editor"[^>]*>[^<]*<span class="timeago" title="([^"]*)"', chunk)
                x['likes'] = int(votes.group(1)) if votes else None
                x['edited'] = edited.group(1)[:19] if edited and edited.group(1) else None
                v = post_view(content)
                x.update(id=pid, author_id=uid, author_url=urllib.parse.unquote(href),
                         paragraphs=v['paragraphs'], shown=v['shown'])
                # the head line before a blockquote names its author and links its post
                heads = top_heads(content)
                links = [re.search(r'href="/post/(\d+)"', h) for h in heads]
                names = [HEAD.match(post_view('<p>%s</p>' % h)['shown'][0]) for h in heads]
                x['quotes'] = [{'of': lk and lk.group(1), 'author': nm and nm.group(1), 'text': q}
                               for lk, nm, q in zip(links, names, v['quotes'])]
                x['reply_to'] = x['quotes'][0]['of'] if x['quotes'] else None
            got += p.posts
            if not p.next:
                break
            page += 1
        want = [dict(x, time=x['time'] + '.000Z') for x in t['posts']]
        if title != t['title']:
            print('thread %s: title %r != %r' % (t['id'], title, t['title']))
            bad += 1
        if got != want:
            print('thread %s: posts differ (%d on pages, %d in truth)' % (t['id'], len(got), len(want)))
            for g, w in zip(got, want):
                if g != w:
                    print('  page:  ', g)
                    print('  truth: ', w)
                    break
            bad += 1
    n = sum(len(t['posts']) for t in truth['threads'])
    print('%d boards, %d threads, %d posts, %d thread pages read; %d mismatches'
          % (len(truth['boards']), len(truth['threads']), n, pages, bad))
    sys.exit(1 if bad else 0)


main()
