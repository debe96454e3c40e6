import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { binaryPackageDir, hydrateBinarySymlinks } from '../../src/storage/embedded.js';
import { tempDirForTest } from '../support/temp-dir.js';

/**
 * npm may skip install scripts (`npm ci --ignore-scripts`, or a registry mirror's policy): the
 * PostgreSQL binaries' library links are then made by the server before it starts. Without them
 * `npm start` on a fresh install failed in initdb ("libicuuc.so.60: cannot open shared object file").
 */
describe('embedded PostgreSQL binaries', () => {
  it("finds this platform's binary package, with its initdb and its list of library links", () => {
    const dir = binaryPackageDir();
    expect(dir).not.toBeNull();
    expect(existsSync(path.join(dir!, 'native', 'bin', 'initdb'))).toBe(true);
    const links = JSON.parse(readFileSync(path.join(dir!, 'native', 'pg-symlinks.json'), 'utf8')) as { target: string }[];
    expect(links.map((link) => link.target)).toContain('native/lib/libicuuc.so.60');
  });

  it('makes the missing library links, keeps what exists, and never writes outside the package', () => {
    const dir = tempDirForTest('binaries');
    mkdirSync(path.join(dir, 'package', 'native', 'lib'), { recursive: true });
    const packageDir = path.join(dir, 'package');
    writeFileSync(path.join(packageDir, 'native', 'lib', 'libicuuc.so.60.2'), 'library');
    writeFileSync(path.join(packageDir, 'native', 'lib', 'libpq.so.5'), 'a file already there');
    writeFileSync(path.join(packageDir, 'native', 'pg-symlinks.json'), JSON.stringify([
      { source: 'native/lib/libicuuc.so.60.2', target: 'native/lib/libicuuc.so.60' },
      { source: 'native/lib/libicuuc.so.60.2', target: 'native/lib/libicuuc.so' },
      { source: 'native/lib/libicuuc.so.60.2', target: 'native/lib/libpq.so.5' },
      { source: 'native/lib/libicuuc.so.60.2', target: '../escaped' },
    ]));

    hydrateBinarySymlinks(packageDir);
    hydrateBinarySymlinks(packageDir);

    for (const name of ['libicuuc.so.60', 'libicuuc.so']) {
      const link = path.join(packageDir, 'native', 'lib', name);
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      // Relative, so the package still works when node_modules is moved.
      expect(readlinkSync(link)).toBe('libicuuc.so.60.2');
      expect(readFileSync(link, 'utf8')).toBe('library');
    }
    expect(readFileSync(path.join(packageDir, 'native', 'lib', 'libpq.so.5'), 'utf8')).toBe('a file already there');
    expect(existsSync(path.join(dir, 'escaped'))).toBe(false);
  });
});
