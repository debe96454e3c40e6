// Bundles the server and CLI (dependencies stay external) and the browser pages with esbuild.
// Type checking is separate (`npm run typecheck`), so a build takes about a second.
import { build } from 'esbuild';
import { existsSync } from 'node:fs';

const common = { bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', sourcemap: true, logLevel: 'warning' };
const entries = ['src/server.ts', 'src/cli/main.ts'].filter((entry) => existsSync(entry));
await build({ ...common, entryPoints: entries, outdir: 'dist', outbase: 'src', entryNames: '[name]' });

// Browser bundles: one per page, listed by web/entries.mjs when the web pages exist.
if (existsSync('web/entries.mjs')) {
  const { webEntries } = await import('../web/entries.mjs');
  await build({ bundle: true, platform: 'browser', format: 'iife', target: 'es2020', minify: true, sourcemap: false, logLevel: 'warning', entryPoints: webEntries, outdir: 'dist/web' });
}
