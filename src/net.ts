import { readFileSync } from 'node:fs';
import net from 'node:net';
import { limits } from './limits.js';

/** A TCP port on 127.0.0.1 that is free right now (the OS picks it; the caller binds it soon after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** `port` when nothing listens on 127.0.0.1 there right now, else a free one. */
export async function portOrFree(port: number | null): Promise<number> {
  if (port === null) return freePort();
  const free = await new Promise<boolean>((resolve) => {
    const server = net.createServer();
    server.unref();
    server.on('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
  return free ? port : freePort();
}

/** `text` as a URL, or null when it is none (URL.parse, which does this, is Node 22's). */
export function parsedUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/**
 * The client connections a server process may hold: limits.clientConnectionsMax, or fewer when
 * the process may open fewer files than that plus the descriptors it keeps for itself.
 */
export function clientConnectionsCap(openFilesMax = openFilesSoftLimit()): number {
  if (openFilesMax === null) return limits.clientConnectionsMax;
  return Math.max(1, Math.min(limits.clientConnectionsMax, openFilesMax - limits.fileDescriptorsReservedCount));
}

/** The soft limit on open files (`ulimit -n`) from Linux's /proc; null elsewhere or when unlimited. */
export function openFilesSoftLimit(procLimits = '/proc/self/limits'): number | null {
  let text: string;
  try {
    text = readFileSync(procLimits, 'utf8');
  } catch {
    return null;
  }
  const soft = /^Max open files\s+(\S+)/m.exec(text)?.[1];
  return soft === undefined || soft === 'unlimited' ? null : Number(soft);
}
