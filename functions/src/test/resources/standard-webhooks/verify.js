// A receiver's verification of a Standard Webhooks signature, written from the specification
// (github.com/standard-webhooks/standard-webhooks, spec/standard-webhooks.md, "Verifying webhook authenticity"),
// independent of the pipeline's own signer: node's crypto only. Reads one JSON object on stdin:
//   {"secret": "whsec_...", "headers": {"webhook-id": ..., "webhook-timestamp": ..., "webhook-signature": ...},
//    "body": "<base64 of the raw body>", "now": <unix seconds, optional>}
// Prints "verified" and exits 0, or prints why not and exits 1.
'use strict';

const crypto = require('crypto');

const TOLERANCE_SECONDS = 5 * 60;

function verify(input) {
  const headers = {};
  for (const [name, value] of Object.entries(input.headers || {})) headers[name.toLowerCase()] = value;
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (!id || !timestamp || !signatures) return 'missing required headers';
  const now = input.now || Math.floor(Date.now() / 1000);
  const sent = parseInt(timestamp, 10);
  if (!/^[0-9]+$/.test(timestamp) || Math.abs(now - sent) > TOLERANCE_SECONDS) return 'timestamp outside tolerance';
  if (!input.secret.startsWith('whsec_')) return 'secret is not whsec_';
  const key = Buffer.from(input.secret.substring('whsec_'.length), 'base64');
  const body = Buffer.from(input.body, 'base64');
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), body]);
  const expected = crypto.createHmac('sha256', key).update(signed).digest();
  for (const versioned of signatures.split(' ')) {
    const [version, signature] = versioned.split(',');
    if (version !== 'v1' || !signature) continue;
    const offered = Buffer.from(signature, 'base64');
    if (offered.length === expected.length && crypto.timingSafeEqual(offered, expected)) return null;
  }
  return 'no matching signature';
}

let text = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { text += chunk; });
process.stdin.on('end', () => {
  const failure = verify(JSON.parse(text));
  process.stdout.write(failure === null ? 'verified\n' : failure + '\n');
  process.exitCode = failure === null ? 0 : 1;
});
