import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/context.js';
import { startSmtpServer, type TestSmtpServer } from '../emails/support/smtp.js';
import { freePort } from '../../src/net.js';

// The running server runs the background jobs (server.ts starts the runner): a payment made
// through it gets its receipt without anyone calling a job, and SIGTERM still stops it cleanly.
const root = path.resolve(import.meta.dirname, '../..');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trustfare-server-jobs-'));
let smtp: TestSmtpServer;
let child: ChildProcess | undefined;

beforeAll(async () => {
  smtp = await startSmtpServer();
}, 120_000);

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await smtp?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function until<T>(what: string, probe: () => Promise<T | undefined>, attemptsMax = 300): Promise<T> {
  for (let attempt = 0; attempt < attemptsMax; attempt++) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('the background jobs of a running server', () => {
  it('send the receipt of a payment made through the server, and stop with it on SIGTERM', async () => {
    const { db, url } = await createTestDatabase(1);
    await db.close();
    const port = await freePort();
    child = spawn(process.execPath, ['dist/server.js'], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', HOST: '127.0.0.1', PORT: String(port), NODE_ENV: 'development', DATA_DIR: dataDir,
        DATABASE_URL: url, SMTP_URL: smtp.url, MAIL_FROM: 'payments@trustfare.test', LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child!.on('exit', (code) => resolve(code)));
    const baseUrl = `http://127.0.0.1:${port}`;
    const token = await until('the banner', async () => /API token\s+(tfat_\S+)/.exec(output)?.[1]);
    const api = async (method: string, resource: string, body?: unknown) => {
      const response = await fetch(`${baseUrl}/demo/site-json/vendor/v2/${resource}`, {
        method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: response.status, json: await response.json() };
    };
    const [channel] = (await api('GET', 'channels')).json as { id: number; currencies: string }[];
    const booking = await api('POST', 'bookings', {
      firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2099-06-30', total: 12_500, currencies: channel!.currencies, countries: 'GB',
      channels: channel!.id, reference: 'JOBS-1',
    });
    expect(booking.status).toBe(201);
    const vault = await api('POST', 'transactions', { transaction_types: 'vault', channels: channel!.id, currencies: channel!.currencies, total: 0, token: 'tok_visa' });
    const purchase = await api('POST', 'transactions', {
      transaction_types: 'retained_purchase', channels: channel!.id, currencies: channel!.currencies, total: 12_500, linked_id: vault.json.id,
      bookings: [{ id: booking.json.id, currencies: channel!.currencies, total: 12_500 }],
    });
    expect([purchase.status, purchase.json.status]).toEqual([201, 'complete']);

    const receipt = await until('the receipt', async () => smtp.received.find((mail) => mail.text.includes('JOBS-1')), 600);
    expect(receipt.envelopeTo).toContain('ada@example.com');
    // The mail job logs its run once the run has ended, which may be after the relay has the mail.
    await until('the mail job\'s log line', async () => (output.split('\n').some((line) => line.includes('"job":"mail-delivery"') && line.includes('job batch done')) ? true : undefined));

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 120_000);
});
