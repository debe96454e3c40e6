#!/usr/bin/env node
// The operator CLI. Runs the built bundle (npm start / npm test build it); falls back to a
// build when it is missing so `npx trustfare` works on a fresh clone.
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bundle = path.join(root, 'dist', 'main.js');
if (!existsSync(bundle)) execFileSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });
const { main } = await import(bundle);
await main(process.argv.slice(2));
