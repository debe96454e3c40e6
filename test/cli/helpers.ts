import { vi } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { testEnv } from '../support/context.js';

/** Runs the CLI in this process against `databaseUrl` (settings in `env` over `testEnv`), capturing what it prints. */
export async function cli(databaseUrl: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; json: any; stderr: string }> {
  const saved = { ...process.env };
  Object.assign(process.env, testEnv, { DATABASE_URL: databaseUrl }, env);
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void out.push(parts.join(' ')));
  const error = vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => void err.push(parts.join(' ')));
  try {
    const code = await runCli(args);
    return { code, json: out.length > 0 ? JSON.parse(out.join('\n')) : undefined, stderr: err.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
    process.env = saved;
  }
}
