// The Waline server of luntan's Waline bed: @waline/vercel's own vanilla.js (its self-hosting
// entry, `node node_modules/@waline/vercel/vanilla.js`), line for line, plus one setting: it
// listens on 127.0.0.1 only (vanilla.js leaves thinkjs's `host` unset: every interface).
//
//   WALINE_SERVER_DIR=DIR node waline.js PORT
//
// DIR is where `npm ci` put node_modules/@waline/vercel; PORT is argv[2], as vanilla.js takes
// it (thinkjs reads it there; its cluster forks the worker with the same arguments, so nothing
// else may be on the command line). Everything else is Waline's environment variables
// (serve.py sets them: MYSQL_*, IPQPS, AKISMET_KEY, …).
'use strict';

const path = require('node:path');

const dir = process.env.WALINE_SERVER_DIR;
if (!dir || process.argv.length !== 3 || !/^\d+$/.test(process.argv[2])) {
  console.error('usage: WALINE_SERVER_DIR=DIR node waline.js PORT');
  process.exit(2);
}
const root = path.join(path.resolve(dir), 'node_modules', '@waline', 'vercel');
const Application = require(path.join(path.resolve(dir), 'node_modules', 'thinkjs'));

const instance = new Application({
  ROOT_PATH: root,
  APP_PATH: path.join(root, 'src'),
  proxy: true, // use proxy
  env: 'production',
});

instance.run();

think.config('host', '127.0.0.1');
