// `npm run bench:mail`: the mail pipeline alone (docs/emails.md "Throughput"). On a fresh
// database (the embedded one, or DATABASE_URL's server), it requests the receipts of
// BENCH_MAIL_COUNT paid bookings, then renders and delivers them (the .eml file transport) a batch
// at a time, as the mail-delivery job does, for each batch size of BENCH_MAIL_BATCHES, after a
// warm-up of BENCH_MAIL_WARMUP receipts whose figures are discarded. It prints the
// time and this process's CPU per mail (rendering, composing, writing the files and the statements'
// client side) and the rate one process reaches with the job runner's pause between backlogged runs.
import { randomBytes } from 'node:crypto';
import { createDb, type Db } from '../src/storage/db.js';
import { migrate } from '../src/storage/migrate.js';
import { createAppContext, type AppContext } from '../src/context.js';
import { loadConfig } from '../src/config.js';
import { limits } from '../src/limits.js';
import { deliverPendingMails } from '../src/jobs/mail-delivery.js';
import { openWorkspace, progress, secrets } from './stack.js';

const count = Number(process.env.BENCH_MAIL_COUNT ?? 2000);
// Discarded before the measured batch sizes: without it the first size paid for the JIT (session
// 24: 821 µs of CPU per mail in a first pass of batches of 100, 234 in the same pass run again).
const warmupCount = Number(process.env.BENCH_MAIL_WARMUP ?? 2000);
const batchSizes = (process.env.BENCH_MAIL_BATCHES ?? `20,${limits.mailBatchSizeDefault}`).split(',').map(Number);

export interface Shop {
  siteId: number;
  channelId: number;
  userId: number;
}

/** A site and a channel that BCCs its office on receipts. */
export async function createShop(db: Db): Promise<Shop> {
  // Unique names: the test of this module runs it beside other tests' sites and users.
  const name = `mail-bench-${randomBytes(4).toString('hex')}`;
  const site = await db.one<{ id: number }>(`INSERT INTO sites (path, name) VALUES ($1, 'Mail Bench Tours') RETURNING id`, [name]);
  const user = await db.one<{ id: number }>(`INSERT INTO users (username, email, display_name, password_hash) VALUES ($1, $1 || '@example.com', 'Bench', 'x') RETURNING id`, [name]);
  const channel = await db.one<{ id: number }>(
    `INSERT INTO channels (site_id, name, slug, currency, language, primary_mail, mail_bcc_transactional_mails) VALUES ($1, 'Sunny Tours', 'sunny', 'EUR', 'enGB', 'ops@tours.example', true) RETURNING id`,
    [site.id],
  );
  return { siteId: site.id, channelId: channel.id, userId: user.id };
}

/** `count` bookings, each paid by a complete purchase whose receipt is requested. */
async function requestReceipts(db: Db, shop: Shop, count: number): Promise<void> {
  await db.query(
    `WITH b AS (
       INSERT INTO bookings (site_id, channel_id, author_id, firstname, surname, email, date_end, reference, total, currency, country, language)
       SELECT $1, $2, $3, 'Anna', 'Traveller', 'anna' || n || '@example.com', '2030-06-30', 'REF-' || n, 125000, 'EUR', 'GB', 'enGB' FROM generate_series(1, $4) n
       RETURNING id),
     t AS (
       INSERT INTO transactions (site_id, channel_id, author_id, type, status, total, currency, payee_name, payee_surname, payee_email, card_brand, last_four, bin_number, settled_at)
       SELECT $1, $2, $3, 'purchase', 'complete', 125000, 'EUR', 'Anna', 'Traveller', 'anna@example.com', 'visa', '1111', '411111', now() FROM generate_series(1, $4)
       RETURNING id),
     pairs AS (SELECT b.id AS booking_id, t.id AS transaction_id FROM (SELECT id, row_number() OVER (ORDER BY id) n FROM b) b JOIN (SELECT id, row_number() OVER (ORDER BY id) n FROM t) t USING (n)),
     shares AS (INSERT INTO transaction_bookings (transaction_id, booking_id, total, total_remaining, position) SELECT transaction_id, booking_id, 125000, 125000, 0 FROM pairs)
     INSERT INTO mail_requests (site_id, transaction_id, status) SELECT $1, transaction_id, 'complete' FROM pairs`,
    [shop.siteId, shop.channelId, shop.userId, count],
  );
}

export interface MailFigures {
  batchSize: number;
  sent: number;
  runs: number;
  /** A run's time per mail sent: rendering and sending together (a run sends what it renders). */
  msPerMail: number;
  /** This process's CPU per mail (the database's is not counted). */
  cpuMicrosPerMail: number;
  /** One process running batches back to back. */
  mailsPerSecond: number;
  /** The same with the job runner's pause (limits.jobBacklogPauseMs) after each backlogged run. */
  mailsPerSecondPaused: number;
}

/**
 * Requests `count` receipts, then renders and delivers a batch at a time as the mail-delivery job
 * does, until nothing is left; every mail must be sent.
 */
export async function measureMailPipeline(context: AppContext, shop: Shop, options: { count: number; batchSize: number }): Promise<MailFigures> {
  await requestReceipts(context.db, shop, options.count);
  await context.db.query('ANALYZE mail_requests, email_outbox, transactions, transaction_bookings, bookings');
  let workMs = 0;
  let runs = 0;
  let sent = 0;
  const cpuBefore = process.cpuUsage();
  for (;;) {
    const started = performance.now();
    const delivered = await deliverPendingMails(context, { batchSizeMax: options.batchSize });
    if (delivered.requests === 0 && delivered.claimed === 0) break;
    if (delivered.errors.length > 0 || delivered.sent !== delivered.claimed) throw new Error(`batch ${options.batchSize}: not every mail was sent (${JSON.stringify(delivered)})`);
    workMs += performance.now() - started;
    runs += 1;
    sent += delivered.sent;
  }
  const cpu = process.cpuUsage(cpuBefore);
  if (sent !== options.count) throw new Error(`batch ${options.batchSize}: ${sent} mails sent for ${options.count} receipts`);
  const workSeconds = workMs / 1000;
  return {
    batchSize: options.batchSize,
    sent,
    runs,
    msPerMail: workMs / sent,
    cpuMicrosPerMail: (cpu.user + cpu.system) / sent,
    mailsPerSecond: sent / workSeconds,
    mailsPerSecondPaused: sent / (workSeconds + (runs * limits.jobBacklogPauseMs) / 1000),
  };
}

export async function main(): Promise<number> {
  const workspace = await openWorkspace({ externalUrl: process.env.DATABASE_URL, keep: false, nodeEnv: 'production', logLevel: 'warn' });
  const db = createDb(workspace.databaseUrl);
  const context = createAppContext(loadConfig({ ...secrets(), NODE_ENV: 'production', DATA_DIR: workspace.dataDir, DATABASE_URL: workspace.databaseUrl, BASE_URL: 'http://127.0.0.1' }), db);
  try {
    await migrate(db);
    const shop = await createShop(db);
    progress(`${count} receipts per batch size, .eml files under ${workspace.dataDir}`);
    if (warmupCount > 0) {
      progress(`warm-up: ${warmupCount} receipts in batches of ${limits.mailBatchSizeDefault}, not counted`);
      await measureMailPipeline(context, shop, { count: warmupCount, batchSize: limits.mailBatchSizeDefault });
    }
    for (const batchSize of batchSizes) {
      const figures = await measureMailPipeline(context, shop, { count, batchSize });
      console.log(
        `batch ${String(batchSize).padStart(3)}: ${figures.sent} mails in ${figures.runs} runs; ${figures.msPerMail.toFixed(2)} ms and ` +
          `${Math.round(figures.cpuMicrosPerMail)} µs of CPU per mail; ${Math.round(figures.mailsPerSecond)} mails/s back to back, ` +
          `${Math.round(figures.mailsPerSecondPaused)} mails/s with the job's ${limits.jobBacklogPauseMs} ms pause after each run`,
      );
    }
    return 0;
  } finally {
    await context.close();
    await db.close();
    await workspace.dispose();
  }
}
