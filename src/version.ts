import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package version, found from this module whether it runs from src/ or the dist/ bundle. */
export function packageVersion(): string {
  let directory = path.dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 4; depth++) {
    const file = path.join(directory, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version ?? '0.0.0';
    directory = path.dirname(directory);
  }
  return '0.0.0';
}

/**
 * Whether `version` is a release (1.0.0 and later): before the first one, the versioned web
 * directories (modal 1.0.0, vault 1.8.0) still change with fixes (docs/modal.md "Subresource
 * Integrity"), so they must not be cached as never changing.
 */
export function isReleaseVersion(version: string): boolean {
  const major = Number(/^(\d+)\./.exec(version)?.[1] ?? '0');
  return major >= 1;
}
