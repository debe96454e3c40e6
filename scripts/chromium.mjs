// Browser tests drive Debian's Chromium through playwright-core: the stack's choice, since the
// machines reach the npm registry and Debian's packages but not a browser download site. `npm test`
// runs this first, so `npm ci && npm test` works on a fresh machine: it installs Debian's package
// when it is missing and this runs as root (as on the reference machines), or stops with the
// command to run.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export const chromiumPath = '/usr/bin/chromium';

function aptGet(args) {
  const result = spawnSync('apt-get', args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  return result.status === 0;
}

function ensureChromium() {
  if (existsSync(chromiumPath)) return;
  const install = 'apt-get install -y chromium';
  if (process.getuid?.() !== 0) {
    console.error(`Browser tests need Debian's chromium at ${chromiumPath}. Install it as root (${install}), then run the tests again.`);
    process.exit(1);
  }
  console.log(`Browser tests need Debian's chromium; installing it (${install}).`);
  // A fresh machine may have no package lists yet: update only when the first try fails.
  if (!aptGet(['install', '-y', '-qq', 'chromium'])) {
    aptGet(['update', '-qq']);
    aptGet(['install', '-y', '-qq', 'chromium']);
  }
  if (!existsSync(chromiumPath)) {
    console.error(`Installing chromium failed; ${chromiumPath} is still missing. Install it (${install}), then run the tests again.`);
    process.exit(1);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) ensureChromium();
