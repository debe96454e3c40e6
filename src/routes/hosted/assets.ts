import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import { isReleaseVersion, packageVersion } from '../../version.js';

/**
 * The browser bundles of the hosted pages (`dist/web/`, built by scripts/build.mjs from
 * web/entries.mjs). Only the files listed by the route modules are served; contents are read
 * once per process.
 */
const moduleDir = path.dirname(fileURLToPath(import.meta.url));
// From src/routes/hosted (tests, tsx) or from dist/ (the bundled server).
const webDir = ['../../../dist/web', './web'].map((relative) => path.resolve(moduleDir, relative)).find((candidate) => existsSync(candidate)) ?? path.resolve(moduleDir, '../../../dist/web');

const cache = new Map<string, Buffer>();

function read(relativePath: string): Buffer | null {
  const cached = cache.get(relativePath);
  if (cached) return cached;
  const file = path.join(webDir, relativePath);
  if (!file.startsWith(webDir + path.sep) || !existsSync(file)) return null;
  const content = readFileSync(file);
  cache.set(relativePath, content);
  return content;
}

export interface AssetOptions {
  /** Loaded by other origins (the modal script on integrators' pages, with SRI). */
  crossOrigin?: boolean;
  /** A versioned path: once released it never changes, and is cached for a year. */
  immutable?: boolean;
}

// Before the first release a versioned directory still changes (docs/modal.md "Subresource
// Integrity"): a year's `immutable` kept a browser on the old script, which then failed the
// integrity value of the new build and the modal did not load.
const versionedCacheControl = isReleaseVersion(packageVersion()) ? 'public, max-age=31536000, immutable' : 'public, max-age=300';

/** Sends a built asset, or null when it does not exist (the caller answers 404). */
export function sendAsset(reply: FastifyReply, relativePath: string, options: AssetOptions = {}): FastifyReply | null {
  const content = read(relativePath);
  if (!content) return null;
  const type = relativePath.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
  reply
    .header('content-type', type)
    .header('cache-control', options.immutable ? versionedCacheControl : 'public, max-age=300')
    .header('x-content-type-options', 'nosniff')
    // Scripts and styles load nothing and are never framed: the default JSON policy fits.
    .header('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
  if (options.crossOrigin) {
    // Subresource Integrity on a cross-origin script needs CORS; nothing secret is in it.
    reply.header('access-control-allow-origin', '*').header('cross-origin-resource-policy', 'cross-origin');
  } else {
    reply.header('cross-origin-resource-policy', 'same-origin');
  }
  return reply.send(content);
}

/** The stylesheet and scripts shared by the unversioned hosted pages. */
export const sharedAssets = {
  style: '/hosted/assets/pages.css',
  payScript: '/hosted/assets/pay.js',
  threeDsReturnScript: '/hosted/assets/3ds-return.js',
} as const;
