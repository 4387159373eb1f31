'use strict';
// Fills a freshly set-up NodeBB 1.4.0 (redis) through NodeBB's own modules
// (user.create, categories.create, topics.post, topics.reply with explicit
// timestamps), then reads everything back from the database into truth.json.
//
// usage: node fill.js NODEBB_DIR CORPUS_DIR TRUTH_JSON
const path = require('path');
const fs = require('fs');
const util = require('util');

const [nbDir, corpusDir, truthPath] = process.argv.slice(2);
// NodeBB forks ./bcrypt relative to the working directory
process.chdir(nbDir);
const nbRequire = (p) => require(path.join(nbDir, p));
const nconf = nbRequire('node_modules/nconf');
const winston = nbRequire('node_modules/winston');
winston.level = 'warn';

nconf.file({ file: path.join(nbDir, 'config.json') });
nconf.defaults({
	base_dir: nbDir,
	themes_path: path.join(nbDir, 'node_modules'),
	upload_path: 'public/uploads',
	views_dir: path.join(nbDir, 'public/templates'),
	relative_path: '',
});
nconf.set('isPrimary', 'true');
nconf.set('isCluster', 'false');

const p = util.promisify;

// mulberry32: small deterministic PRNG
function prng(seed) {
	let a = seed >>> 0;
	return function () {
		a = (a + 0x6D2B79F5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}
const rand = prng(20250334);
// quotes draw from a stream of their own: the rest of the fill is as before quotes
const qrand = prng(3434);
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
const pick = (arr) => arr[Math.floor(rand() * arr.length)];

// Lines that Markdown (markdown-it, linkify on) or the mentions plugin would
// turn into markup are left out, so the raw text is what a reader sees.
const plain = (s) => !/[@*_#`~\[\]<>&|\\]|^\s*([-+>]|\d+[.)])|[A-Za-z0-9]\.[A-Za-z]{2,}|https?:|www\./.test(s);
const reviews = fs.readFileSync(path.join(corpusDir, 'reviews.txt'), 'utf8')
	.split('\n').map((s) => s.trim().replace(/\s+/g, ' ')).filter((s) => s && plain(s));
const poems = fs.readFileSync(path.join(corpusDir, 'poems.tsv'), 'utf8')
	.split('\n').filter(Boolean).map((l) => l.split('\t'))
	.filter((f) => f.length === 3 && plain(f.join(' ')))
	.map(([title, author, text]) => ({ title: title.trim(), author: author.trim(), text: text.trim() }));

const USERS = ['清风徐来', '明月松间', '江南烟雨', '北国风光', '书香门第', '老猫不睡',
	'小鱼儿', '云中漫步', '山水之间', '晚风轻拂', '夜读人', '听雨轩主'];
const BOARDS = [
	{ name: '读书心得', description: '读过的书，说说感想', threads: 46, src: 'reviews' },
	{ name: '酒店与旅行', description: '住过的酒店，走过的路', threads: 12, src: 'reviews' },
	{ name: '数码产品', description: '买了什么，好不好用', threads: 10, src: 'reviews' },
	{ name: '唐诗鉴赏', description: '唐诗三百首，一首一帖', threads: 12, src: 'poems' },
];
const SPECIAL = ['价格 < 100 & 质量 > 预期，朋友说"值得买" 😀', '性价比 > 期待 😀',
	'A & B 两个版本都看过，"第二版"更好', '评分：4 < 5，但 > 3 😀'];

function paragraph(src) {
	if (src === 'poems') {
		const po = pick(poems);
		return po.text;
	}
	return pick(reviews);
}

function body(src) {
	const n = pick([1, 1, 1, 2, 2, 3]);
	const paras = [];
	for (let i = 0; i < n; i++) paras.push(paragraph(src));
	if (rand() < 0.18) {
		const i = int(0, n - 1);
		paras[i] = paras[i] + ' ' + pick(SPECIAL);
	}
	// NodeBB's composer writes Markdown: paragraphs are separated by a blank line.
	return paras.join('\n\n');
}

function title(src, i) {
	if (src === 'poems') {
		const po = pick(poems);
		return po.title + ' · ' + po.author;
	}
	let t = pick(reviews).replace(/[，。！？；：,.!?;:].*$/, '').trim();
	if (t.length < 4) t = pick(reviews).slice(0, 14);
	if (t.length > 24) t = t.slice(0, 24);
	if (i % 17 === 5) t = t + ' & "续"';
	return t;
}

// Which replies of a thread of n posts quote which earlier post ({reply: quoted}),
// as realworld/truthlib.py's plan_thread: two quotes in a thread of 21 posts or
// more, one in about a tenth of the others; a reply quotes a post of its own page
// (20 posts a page) that quotes none; then, in a long thread, a later reply of the
// first quoting reply's page quotes that reply whole (a nested quote).
function planThread(n) {
	const chosen = new Map();
	if (n < 2) return chosen;
	const want = n >= 21 ? 2 : (qrand() < 0.1 ? 1 : 0);
	const quoted = new Set();
	for (let i = 0; i < 8 * want && chosen.size < want; i++) {
		const k = 1 + Math.floor(qrand() * (n - 1));
		if (chosen.has(k) || quoted.has(k)) continue;
		const first = Math.floor(k / 20) * 20;
		const js = [];
		for (let j = first; j < k; j++) if (!chosen.has(j)) js.push(j);
		if (js.length) {
			const j = js[Math.floor(qrand() * js.length)];
			chosen.set(k, j);
			quoted.add(j);
		}
	}
	// then a nested quote: a later reply of the first quoting reply's page quotes it whole
	if (n >= 21 && chosen.size) {
		const k1 = Math.min(...chosen.keys());
		const last = Math.min(n, Math.floor(k1 / 20) * 20 + 20);
		const ks = [];
		for (let k = k1 + 1; k < last; k++) if (!chosen.has(k) && !quoted.has(k)) ks.push(k);
		if (ks.length) {
			chosen.set(ks[Math.floor(qrand() * ks.length)], k1);
			quoted.add(k1);
		}
	}
	return chosen;
}

// What NodeBB's quote button puts in the composer (nodebb-plugin-composer-default
// composer.addQuote with the raw post from posts.getRawPost, translated into the
// forum's default language, en-GB here): "@name said in [title](/post/pid):", the
// quoted text as "> " lines, a blank line; the reply follows, and its toPid is the
// quoted post.
const saidIn = JSON.parse(fs.readFileSync(path.join(nbDir, 'public/language/en-GB/modules.json'), 'utf8'))['composer.user_said_in'];
function quoteOf(username, title, pid, raw) {
	const escapedTitle = (title || '').replace(/([\\`*_{}\[\]()#+\-.!])/g, '\\$1').replace(/\[/g, '&#91;')
		.replace(/\]/g, '&#93;').replace(/%/g, '&#37;').replace(/,/g, '&#44;');
	const link = '[' + escapedTitle + '](/post/' + pid + ')';
	const text = '> ' + raw.replace(/\n/g, '\n> ') + '\n\n';
	return saidIn.replace('%1', '@' + username.replace(/\s/g, '-')).replace('%2', link) + '\n' + text;
}

async function main() {
	const db = nbRequire('src/database');
	await p(db.init)();
	const meta = nbRequire('src/meta');
	await p(meta.configs.init)();
	// no flood control while filling
	await p(meta.configs.setMultiple)({ postDelay: 0, initialPostDelay: 0, newbiePostDelay: 0,
		title: '论坛测试床' });
	meta.config.postDelay = 0;
	meta.config.initialPostDelay = 0;
	meta.config.newbiePostDelay = 0;
	const user = nbRequire('src/user');
	const categories = nbRequire('src/categories');
	const topics = nbRequire('src/topics');
	const posts = nbRequire('src/posts');

	// Away with the default categories and their welcome topic.
	const oldCids = await p(db.getSortedSetRange)('categories:cid', 0, -1);
	for (const cid of oldCids) await p(categories.purge)(cid, 1);

	const uids = [];
	for (let i = 0; i < USERS.length; i++) {
		uids.push(await p(user.create)({ username: USERS[i], password: 'bedUser123!',
			email: 'user' + (i + 1) + '@example.com' }));
	}

	const cids = [];
	for (const b of BOARDS) {
		const c = await p(categories.create)({ name: b.name, description: b.description });
		cids.push(c.cid);
	}

	// Plan threads: board, number of posts; 6 long ones (>= 3 pages of 20).
	const plan = [];
	BOARDS.forEach((b, bi) => {
		for (let i = 0; i < b.threads; i++) plan.push({ bi, n: pick([1, 2, 2, 3, 3, 4, 5, 6, 7, 8]) });
	});
	const longAt = [3, 11, 20, 50, 62, 70];
	longAt.forEach((k, j) => { plan[k].n = [41, 45, 52, 60, 43, 65][j]; });

	// Times: thread starts spread over 2025-01-01 .. 2026-06-30 (UTC), whole
	// seconds; replies 3 min .. 40 h apart, strictly increasing.
	const T0 = Date.UTC(2025, 0, 1, 0, 0, 0);
	const T1 = Date.UTC(2026, 5, 30, 0, 0, 0);
	plan.forEach((t) => {
		let at = T0 + Math.floor(rand() * ((T1 - T0) / 1000)) * 1000;
		t.times = [];
		for (let i = 0; i < t.n; i++) {
			t.times.push(at);
			at += int(180, t.n > 20 ? 6 * 3600 : 40 * 3600) * 1000;
		}
	});
	// Create threads in the order they began, so tids grow with time.
	plan.forEach((t) => { t.quotes = planThread(t.n); });
	const order = plan.map((t, i) => i).sort((a, b) => plan[a].times[0] - plan[b].times[0]);
	const quoteFacts = {}; // pid of a quoting post: what its head says of the quoted one
	const allPosts = []; // every post made: pid, uid, time (ms)
	for (const k of order) {
		const t = plan[k];
		const src = BOARDS[t.bi].src;
		const tTitle = title(src, k);
		const first = { uid: pick(uids), content: body(src) };
		const res = await p(topics.post)({ uid: first.uid, cid: cids[t.bi], title: tTitle,
			content: first.content, timestamp: t.times[0] });
		const tid = res.topicData.tid;
		const made = [{ pid: res.postData.pid, uid: first.uid, content: first.content }];
		for (let i = 1; i < t.n; i++) {
			const uid = pick(uids);
			let content = body(src);
			let toPid;
			if (t.quotes.has(i)) {
				const q = made[t.quotes.get(i)];
				const name = USERS[uids.indexOf(q.uid)];
				content = quoteOf(name, tTitle, q.pid, q.content) + content;
				toPid = q.pid;
			}
			const r = await p(topics.reply)({ uid, tid, content, timestamp: t.times[i], toPid });
			if (toPid) {
				const j = t.quotes.get(i);
				quoteFacts[r.pid] = [{ of: String(toPid), author: USERS[uids.indexOf(made[j].uid)], nested: t.quotes.has(j) }];
			}
			made.push({ pid: r.pid, uid, content });
		}
		made.forEach((m, i) => allPosts.push({ pid: m.pid, uid: m.uid, ts: t.times[i] }));
	}

	// Edits: about one post in twenty edited by its author minutes to hours after, as
	// posts.edit leaves a post (its edited time and editor; the page then shows "last
	// edited by <name>" and the time in a timeago title). Likes: about one post in seven
	// upvoted by one to three other users through posts.upvote (the page shows the
	// vote count). Random streams of their own, as for quotes.
	const erand = prng(3535);
	const vrand = prng(3636);
	for (const m of allPosts) {
		if (erand() < 0.05) {
			const edited = m.ts + (120 + Math.floor(erand() * 36000)) * 1000;
			await p(db.setObject)('post:' + m.pid, { edited, editor: m.uid });
		}
		if (vrand() < 0.15) {
			const n = 1 + Math.floor(vrand() * 3);
			const voters = uids.filter((u) => u !== m.uid);
			for (let i = 0; i < n; i++) {
				const v = voters.splice(Math.floor(vrand() * voters.length), 1)[0];
				await p(posts.upvote)(m.pid, v);
			}
		}
	}

	// ---- truth, read back from the database ----
	const iso = (ms) => new Date(Number(ms)).toISOString().slice(0, 19);
	// Posts as a reader sees them: rendered by markdown-it with nodebb-plugin-markdown's
	// default options (the mentions plugin then links "@name", its text unchanged);
	// realworld/truthlib.py (run by bed.sh after this) turns the HTML into paragraphs.
	const MarkdownIt = nbRequire('node_modules/markdown-it');
	const md = new MarkdownIt({ html: false, xhtmlOut: true, breaks: true, langPrefix: 'language-',
		linkify: true, typographer: false });
	const truth = { package: 'nodebb', version: '1.4.0', family: 'modern', home: '/',
		time_zone: '+00:00', time_precision: 'second',
		// What its thread pages show of each post's conversation fields: the post id
		// (data-pid), the author's id (data-uid) and profile (/user/<slug>); a quote's
		// post and author in the line before the blockquote ("@name said in [title](/post/pid):"),
		// which is also what the reply answers.
		shows: { post_id: true, author_id: true, author_url: true, quote_of: true, quote_author: true, reply_to: true,
			edited: true, likes: true },
		boards: [], threads: [] };
	const catData = await p(categories.getCategoriesData)(cids);
	for (const c of catData) truth.boards.push({ id: String(c.cid), name: c.name, path: '/category/' + c.slug });
	const userNames = {};
	for (const c of catData) {
		const tids = await p(db.getSortedSetRevRange)('cid:' + c.cid + ':tids', 0, -1);
		const tdata = await p(topics.getTopicsFields)(tids, ['tid', 'cid', 'title', 'slug', 'mainPid', 'deleted']);
		for (const t of tdata) {
			if (Number(t.deleted)) continue;
			const pids = [String(t.mainPid)].concat(await p(db.getSortedSetRange)('tid:' + t.tid + ':posts', 0, -1));
			const pdata = await p(posts.getPostsFields)(pids, ['pid', 'uid', 'content', 'timestamp', 'deleted', 'toPid',
				'edited', 'upvotes', 'downvotes']);
			const out = [];
			for (const pd of pdata) {
				if (Number(pd.deleted)) continue;
				if (!(pd.uid in userNames)) {
					userNames[pd.uid] = await p(user.getUserFields)(pd.uid, ['username', 'userslug']);
				}
				const u = userNames[pd.uid];
				out.push({ id: String(pd.pid), author: u.username, author_id: String(pd.uid),
					author_url: '/user/' + u.userslug, time: iso(pd.timestamp),
					edited: Number(pd.edited) ? iso(pd.edited) : null, likes: Number(pd.upvotes || 0) - Number(pd.downvotes || 0),
					reply_to: pd.toPid ? String(pd.toPid) : null,
					html: md.render(String(pd.content)), quote_facts: quoteFacts[pd.pid] || [] });
			}
			truth.threads.push({ id: String(t.tid), board: String(t.cid), title: t.title,
				path: '/topic/' + t.slug, posts: out });
		}
	}
	truth.threads.sort((a, b) => Number(a.id) - Number(b.id));
	fs.writeFileSync(truthPath, JSON.stringify(truth, null, 1) + '\n');
	const nPosts = truth.threads.reduce((s, t) => s + t.posts.length, 0);
	console.log('filled: ' + truth.boards.length + ' boards, ' + truth.threads.length + ' threads, ' +
		nPosts + ' posts, ' + USERS.length + ' users');
	db.close();
}

main().then(() => process.exit(0), (err) => { console.error(err && err.stack || err); process.exit(1); });
