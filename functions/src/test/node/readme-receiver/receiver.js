// Runs the README's receiver snippet ("Signed notifications", its ```js block) as written, with the standardwebhooks
// package it requires (pinned here), on one notification the pipeline's notifier sent. Only Express is stood in for:
// `app.post(path, middleware, handler)` keeps the handler, `express.raw(options)` says what it was asked for, and the
// request is what express.raw gives a handler: the raw body as a Buffer and the headers in lower case.
// Reads one JSON object on stdin: {"readme": PATH, "secret": "whsec_…", "headers": {…}, "body": "<base64>"}.
// Prints "200" when the handler answers 200, else "refused: WHY"; exit 0 either way, 1 when the snippet cannot run.
'use strict';

const fs = require('fs');
const path = require('path');
const { createRequire } = require('module');

function snippet(readme) {
  const text = fs.readFileSync(readme, 'utf8');
  const section = text.indexOf('### Signed notifications');
  if (section < 0) throw new Error('the README has no "### Signed notifications" section');
  const block = text.slice(section).match(/```js\n([\s\S]*?)```/);
  if (!block) throw new Error('the README\'s "Signed notifications" section has no ```js block');
  return block[1];
}

function main(input) {
  const routes = [];
  const app = { post: (route, middleware, handler) => routes.push({ route, middleware, handler }) };
  const express = { raw: (options) => ({ raw: options }) };
  const env = { ...process.env, NOTIFY_SIGNING_SECRET: input.secret };
  const requireHere = createRequire(path.join(__dirname, 'package.json'));
  new Function('require', 'process', 'app', 'express', snippet(input.readme))(requireHere, { env }, app, express);
  if (routes.length !== 1) throw new Error(`the snippet registers ${routes.length} routes, not one`);
  const { middleware, handler } = routes[0];
  if (!middleware || !middleware.raw || middleware.raw.type !== 'application/json') {
    throw new Error('the snippet does not read the raw body (express.raw({ type: "application/json" }))');
  }
  const headers = {};
  for (const [name, value] of Object.entries(input.headers)) headers[name.toLowerCase()] = value;
  const req = { body: Buffer.from(input.body, 'base64'), headers };
  let status = null;
  const res = { sendStatus: (code) => { status = code; } };
  try {
    handler(req, res);
  } catch (e) {
    return `refused: ${e.message}`;
  }
  return String(status);
}

let stdin = '';
process.stdin.on('data', (chunk) => { stdin += chunk; });
process.stdin.on('end', () => {
  try {
    process.stdout.write(main(JSON.parse(stdin)) + '\n');
  } catch (e) {
    process.stderr.write(String(e && e.stack ? e.stack : e) + '\n');
    process.exit(1);
  }
});
