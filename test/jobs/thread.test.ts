import { describe, expect, it } from 'vitest';
import { startJobThread } from '../../src/jobs/thread.js';
import { limits } from '../../src/limits.js';

// The supervision of the jobs thread (src/jobs/thread.ts), with stand-in thread modules; the real
// thread is tested through the running server (test/server/jobs-thread.test.ts).
const fixture = (name: string) => new URL(`./fixtures/${name}.mjs`, import.meta.url);

function recordingLog() {
  const errors: string[] = [];
  return { errors, log: { info: () => undefined, error: (_details: Record<string, unknown>, message: string) => void errors.push(message) } };
}

describe('the jobs thread supervisor', () => {
  it('replaces a thread that dies, and gives up once it died limits.workerRestartsPerMinuteMax + 1 times within a minute', async () => {
    const { errors, log } = recordingLog();
    const fatal = await new Promise<string>((resolve) => {
      startJobThread({ entry: fixture('thread-dies'), databaseUrl: 'postgres://unused', log, onFatal: resolve });
    });
    expect(fatal).toBe(`the jobs thread exited ${limits.workerRestartsPerMinuteMax + 1} times within a minute; giving up`);
    expect(errors.filter((message) => message === 'jobs thread exited; starting a replacement')).toHaveLength(limits.workerRestartsPerMinuteMax);
  });

  it('asks the thread to stop and waits for it, without replacing it', async () => {
    const { errors, log } = recordingLog();
    const thread = startJobThread({ entry: fixture('thread-stops'), databaseUrl: 'postgres://unused', log, onFatal: () => errors.push('fatal') });
    await thread.stop(60_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(errors).toEqual([]);
  });

  it('ends a thread that does not stop within the grace period', async () => {
    const { errors, log } = recordingLog();
    const thread = startJobThread({ entry: fixture('thread-hangs'), databaseUrl: 'postgres://unused', log, onFatal: () => errors.push('fatal') });
    await thread.stop(200);
    expect(errors).toEqual([]);
  });
});
