// Hexo's half of the Isso bed's fill, through Hexo's own API (run by fill.py, in WORK/blog):
//
//   TZ=Asia/Shanghai node hexo.js BLOG write PLAN_JSON   each planned post as `hexo new` makes it
//   TZ=Asia/Shanghai node hexo.js BLOG read OUT_JSON     every post and category as Hexo loads them
//
// TZ is the blogger's machine's clock, the site's (`timezone: Asia/Shanghai`): `hexo new`
// writes a post's date on the machine's clock, Hexo reads front matter on the site's, and it
// makes a permalink's :year/:month/:day on the machine's; on a machine on another clock (a
// UTC build server) the dates would move.
//
// write: hexo.post.create (what `hexo new` calls): the file name is the title slugized
// (source/_posts/<Chinese slug>.md), the front matter Hexo's scaffold's, the body appended;
// the date is the planned wall clock ("2025-03-05 14:09:47") on the site's clock.
//
// read: hexo.load() (what `hexo generate` loads and renders): per post its source file, slug,
// path as the pages link it (url_for: percent-encoded), title, date on the site's clock,
// categories and rendered HTML (`content`, as the article page shows it).
'use strict';

const fs = require('fs');
const path = require('path');

const [blog, cmd, file] = process.argv.slice(2);
if (!blog || !['write', 'read'].includes(cmd) || !file) {
  console.error('usage: TZ=Asia/Shanghai node hexo.js BLOG write PLAN_JSON | read OUT_JSON');
  process.exit(2);
}
const Hexo = require(path.join(path.resolve(blog), 'node_modules', 'hexo'));

async function main() {
  const hexo = new Hexo(path.resolve(blog), { silent: true });
  await hexo.init();
  const moment = require(path.join(path.resolve(blog), 'node_modules', 'moment-timezone'));
  if (cmd === 'write') {
    const plan = JSON.parse(fs.readFileSync(file, 'utf8'));
    for (const p of plan.posts) {
      const date = moment.tz(p.date, 'YYYY-MM-DD HH:mm:ss', true, hexo.config.timezone);
      await hexo.post.create({ title: p.title, date, categories: [p.category], content: p.body }, true);
    }
    console.log(`hexo new: ${plan.posts.length} posts in ${hexo.source_dir}_posts`);
  } else {
    await hexo.load();
    const urlFor = hexo.extend.helper.get('url_for').bind(hexo);
    const tz = hexo.config.timezone;
    const posts = hexo.locals.get('posts').sort('date').map(p => ({
      source: p.source,
      slug: p.slug,
      path: urlFor(p.path),
      title: p.title,
      date: moment(p.date.toDate()).tz(tz).format('YYYY-MM-DDTHH:mm:ss'),
      date_xml: p.date.toISOString(),
      comments: p.comments,
      categories: p.categories.map(c => c.name),
      content: p.content,
    }));
    const categories = hexo.locals.get('categories').sort('name').map(c => ({
      name: c.name,
      slug: c.slug,
      path: urlFor(c.path),
      posts: c.posts.length,
    }));
    fs.writeFileSync(file, JSON.stringify({ hexo: hexo.version, timezone: tz, posts, categories }, null, 1) + '\n');
    console.log(`hexo: ${posts.length} posts, ${categories.length} categories read`);
  }
  await hexo.exit();
}

main().catch(e => {
  console.error(e);
  process.exit(1);
});
