// Prints the gzipped size of every browser bundle and the Subresource Integrity hash of the
// payment modal script; exits non-zero when a bundle is over its budget (docs/hosted-pages.md).
// Run after a build: `npm run build && npm run web:sizes`.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { webEntries } from '../web/entries.mjs';

const kB = 1024;
// The modal script runs on integrators' pages: it must stay tiny. Each page's JS under 30 kB.
const budgetOf = (name) => (name.endsWith('/payment-modal') ? 10 * kB : 30 * kB);

let over = false;
for (const [name, source] of Object.entries(webEntries)) {
  const extension = source.endsWith('.css') ? 'css' : 'js';
  const file = `dist/web/${name}.${extension}`;
  if (!existsSync(file)) {
    console.error(`${file}: missing (run npm run build first)`);
    over = true;
    continue;
  }
  const content = readFileSync(file);
  const gzipped = gzipSync(content, { level: 9 }).length;
  const budget = extension === 'js' ? budgetOf(name) : null;
  const verdict = budget === null ? '' : gzipped <= budget ? `ok (budget ${budget / kB} kB)` : `OVER BUDGET (${budget / kB} kB)`;
  if (budget !== null && gzipped > budget) over = true;
  console.log(`${file.padEnd(40)} ${String(content.length).padStart(7)} B  ${String(gzipped).padStart(6)} B gzip  ${verdict}`);
  if (name.endsWith('/payment-modal')) console.log(`  integrity="sha384-${createHash('sha384').update(content).digest('base64')}"`);
}
process.exit(over ? 1 : 0);
