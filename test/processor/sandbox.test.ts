import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { createConnector, ProcessorTimeoutError, sandboxCodes, testCards, type AuthoriseRequest, type Connector, type LookupOutcome, type ProcessorOutcome } from '../../src/processor/index.js';
import { forcedDeclines } from '../../src/processor/sandbox/declines.js';
import { completeChallenge } from '../../src/processor/sandbox/challenges.js';
import { declineReason } from '../../src/i18n/catalogue.js';
import { loadConfig } from '../../src/config.js';
import { boundedCall } from '../../src/domain/transactions/processor-call.js';
import { statementsDuring } from '../support/statements.js';

let t: TestContext;
let sandbox: Connector;
beforeAll(async () => {
  t = await createTestContext();
  sandbox = t.context.connector;
});
afterAll(async () => t.close());

const pan = (token: string) => testCards.find((card) => card.sandboxToken === token)!.pan;
const returnUrl = 'https://shop.example/return/42';

function request(overrides: Partial<AuthoriseRequest> & { token?: string } = {}): AuthoriseRequest {
  const { token = 'tok_visa', ...rest } = overrides;
  return {
    reference: randomUUID(),
    amount: 10_000,
    currency: 'USD',
    card: { pan: pan(token), expiryMonth: 12, expiryYear: 2040, cvv: '123' },
    capture: true,
    mode: 'test',
    threeDs: null,
    merchantInitiated: false,
    ...rest,
  };
}

function approved(outcome: ProcessorOutcome | LookupOutcome) {
  expect(outcome.kind).toBe('approved');
  return outcome as Extract<ProcessorOutcome, { kind: 'approved' }>;
}

describe('sandbox authorisations', () => {
  it('approves the success cards with a six-digit auth code, and verifies with amount 0', async () => {
    for (const token of ['tok_visa', 'tok_mastercard', 'tok_amex']) {
      const outcome = approved(await sandbox.authorise(request({ token })));
      expect(outcome.authCode).toMatch(/^[0-9]{6}$/);
      expect(outcome.processorReference).toBeTruthy();
    }
    expect(approved(await sandbox.authorise(request({ amount: 0, capture: false }))).message).toMatch(/verified/i);
  });

  it('declines the declined cards', async () => {
    for (const token of ['tok_visa_declined', 'tok_mastercard_declined']) {
      expect(await sandbox.authorise(request({ token }))).toMatchObject({ kind: 'declined', code: '800.100.100' });
    }
  });

  it('forces every decline code by the last two digits of the amount, on test only', async () => {
    for (let digits = 51; digits <= 61; digits++) {
      const code = `800.100.1${digits}`;
      const outcome = await sandbox.authorise(request({ amount: 1200 + digits }));
      expect(outcome).toEqual({ kind: 'declined', processorReference: expect.any(String), code, message: forcedDeclines[code] });
      approved(await sandbox.authorise(request({ amount: 1200 + digits, mode: 'live', card: { pan: '4242424242424242', expiryMonth: 1, expiryYear: 2040 } })));
    }
    approved(await sandbox.authorise(request({ amount: 1250 })));
    approved(await sandbox.authorise(request({ amount: 1262 })));
    expect(forcedDeclines['800.100.155']).toBe('declined (amount exceeds credit)');
  });

  it('forces a decline code given as 51 or 800.100.151 (vaulting app fail_code), on test only', async () => {
    expect(await sandbox.authorise(request({ amount: 0, capture: false, forcedDeclineCode: '57' }))).toMatchObject({ kind: 'declined', code: '800.100.157', message: 'declined (wrong expiry date)' });
    expect(await sandbox.authorise(request({ amount: 0, capture: false, forcedDeclineCode: '800.100.160' }))).toMatchObject({ kind: 'declined', code: '800.100.160' });
    approved(await sandbox.authorise(request({ mode: 'live', forcedDeclineCode: '51' })));
  });

  it('is idempotent by reference and refuses a reference reused for another call', async () => {
    const first = request();
    const a = approved(await sandbox.authorise(first));
    const b = approved(await sandbox.authorise(first));
    expect(b).toEqual(a);
    const concurrent = request();
    const outcomes = await Promise.all([sandbox.authorise(concurrent), sandbox.authorise(concurrent), sandbox.authorise(concurrent)]);
    expect(new Set(outcomes.map((outcome) => JSON.stringify(outcome))).size).toBe(1);
    await expect(sandbox.authorise({ ...first, amount: 1 })).rejects.toThrow(/already used/);
    expect(await sandbox.lookup(first.reference)).toEqual(a);
    expect(await sandbox.lookup(randomUUID())).toEqual({ kind: 'unknown' });
  });

  it('records 30 concurrent calls, each once with its own outcome, in fewer statements than calls', async () => {
    const calls = Array.from({ length: 30 }, (_, index) => request({ token: index % 3 === 0 ? 'tok_visa_declined' : 'tok_visa', amount: 1_000 + index * 100 }));
    // One call sent twice at once: the second waits for another batch and gets the same answer.
    const { result: outcomes, statements } = await statementsDuring(() => Promise.all([...calls, calls[4]!].map((call) => sandbox.authorise(call))));
    expect(outcomes.map((outcome) => outcome.kind)).toEqual([...calls.map((_, index) => (index % 3 === 0 ? 'declined' : 'approved')), 'approved']);
    expect(outcomes[30]).toEqual(outcomes[4]);
    const rows = await t.db.query<{ reference: string; amount: number }>('SELECT reference, amount FROM sandbox_operations WHERE reference = ANY($1::text[])', [calls.map((call) => call.reference)]);
    expect(rows.map((row) => [row.reference, Number(row.amount)]).sort()).toEqual(calls.map((call) => [call.reference, call.amount]).sort());
    for (const [index, call] of calls.entries()) expect(await sandbox.lookup(call.reference)).toEqual(outcomes[index]);
    const inserts = statements.filter((statement) => statement.startsWith('[sandbox_insert_operations]')).length;
    expect(inserts).toBeGreaterThan(1);
    expect(inserts).toBeLessThan(30);
  });
});

describe('sandbox 3DS2', () => {
  it('approves frictionless cards with 3DS and says so; without 3DS requested, says nothing about 3DS', async () => {
    for (const token of ['tok_visa_3ds_frictionless', 'tok_mastercard_3ds_frictionless']) {
      const req = request({ token, threeDs: { returnUrl } });
      const outcome = approved(await sandbox.authorise(req));
      expect(outcome.message).toMatch(/frictionless/);
      expect(outcome.threeDs).toBe('frictionless');
      expect(await sandbox.lookup(req.reference)).toEqual(outcome);
      expect(approved(await sandbox.authorise(request({ token }))).threeDs).toBeUndefined();
    }
  });

  it('challenges challenge cards and points at the hosted page; lookup says challenge until answered', async () => {
    for (const token of ['tok_visa_3ds_challenge', 'tok_mastercard_3ds_challenge']) {
      const req = request({ token, threeDs: { returnUrl } });
      const outcome = await sandbox.authorise(req);
      expect(outcome).toMatchObject({ kind: 'challenge', challengeUrl: expect.stringMatching(/^http:\/\/trustfare\.test\/sandbox\/3ds\/[A-Za-z0-9_-]{32}$/) });
      expect(await sandbox.lookup(req.reference)).toEqual(outcome);
    }
  });

  it('soft-declines a challenge card when 3DS was not attempted', async () => {
    expect(await sandbox.authorise(request({ token: 'tok_visa_3ds_challenge' }))).toMatchObject({ kind: 'declined', code: '100.380.100' });
  });

  it('takes a merchant-initiated (retained) charge of a challenge card without 3DS, forced declines still applying', async () => {
    const charged = approved(await sandbox.authorise(request({ token: 'tok_mastercard_3ds_challenge', merchantInitiated: true })));
    expect(charged.threeDs).toBeUndefined();
    expect(await sandbox.authorise(request({ token: 'tok_visa_3ds_challenge', amount: 10_051, merchantInitiated: true }))).toMatchObject({ kind: 'declined', code: '800.100.151' });
  });

  it('reports cards outside 3DS as not enrolled (never frictionless) when 3DS is requested, approved without it', async () => {
    for (const token of ['tok_visa', 'tok_mastercard', 'tok_amex']) {
      const req = request({ token, threeDs: { returnUrl } });
      const outcome = approved(await sandbox.authorise(req));
      expect(outcome.threeDs).toBe('not_enrolled');
      expect(outcome.message).toMatch(/not enrolled in 3-D Secure/);
      expect(outcome.message).not.toMatch(/frictionless/);
      // Lookup (reconciliation, 3DS return) answers the same.
      expect(await sandbox.lookup(req.reference)).toEqual(outcome);
      // Without 3DS requested, the answer says nothing about 3DS.
      expect(approved(await sandbox.authorise(request({ token }))).threeDs).toBeUndefined();
    }
    // A declined card is not enrolled either; the decline carries it too.
    expect(await sandbox.authorise(request({ token: 'tok_visa_declined', threeDs: { returnUrl } }))).toMatchObject({ kind: 'declined', code: '800.100.100', threeDs: 'not_enrolled' });
    expect(await sandbox.authorise(request({ amount: 1251, threeDs: { returnUrl } }))).toMatchObject({ kind: 'declined', code: '800.100.151', threeDs: 'not_enrolled' });
  });

  it('reports the cardholder\'s answer to a challenge as authenticated or failed', async () => {
    const passed = request({ token: 'tok_visa_3ds_challenge', threeDs: { returnUrl } });
    const failed = request({ token: 'tok_mastercard_3ds_challenge', threeDs: { returnUrl } });
    for (const [req, result] of [[passed, 'authenticate'], [failed, 'fail']] as const) {
      const outcome = await sandbox.authorise(req);
      expect(outcome).not.toHaveProperty('threeDs');
      await completeChallenge(t.db, (outcome as Extract<ProcessorOutcome, { kind: 'challenge' }>).challengeUrl.split('/').pop()!, result);
    }
    expect(await sandbox.lookup(passed.reference)).toMatchObject({ kind: 'approved', threeDs: 'authenticated' });
    expect(await sandbox.lookup(failed.reference)).toMatchObject({ kind: 'declined', code: '100.380.401', threeDs: 'failed' });
  });
});

describe('decline reasons in the catalogue', () => {
  it('has every code the sandbox answers with, English word for word as the sandbox says it, and a generic text for other codes', () => {
    const answers = [...Object.entries(forcedDeclines), ...Object.values(sandboxCodes).map(({ code, message }) => [code, message] as const)];
    expect(answers).toHaveLength(19);
    for (const [code, message] of answers) {
      expect(declineReason('enGB', code)).toBe(message);
      expect(declineReason('deDE', code)).not.toBe(message);
    }
    expect(declineReason('deDE', '800.100.151')).toBe('abgelehnt (ungültige Karte)');
    expect(declineReason('frFR', '999.999.999')).toBe('refusée par le prestataire de paiement');
    expect(declineReason('enGB', '999.999.999')).toBe('declined by the payment processor');
  });
});

describe('the no-answer card', () => {
  it('never answers the call, yet lookup later tells the real outcome (approved)', async () => {
    const ctx = await createTestContext({ env: { SANDBOX_NO_ANSWER_MS: '50' } });
    try {
      const req = request({ token: 'tok_visa_no_answer' });
      await expect(ctx.context.connector.authorise(req)).rejects.toBeInstanceOf(ProcessorTimeoutError);
      expect(approved(await ctx.context.connector.lookup(req.reference)).authCode).toMatch(/^[0-9]{6}$/);
      // Asking again with the same reference does not answer either.
      await expect(ctx.context.connector.authorise(req)).rejects.toBeInstanceOf(ProcessorTimeoutError);
    } finally {
      await ctx.close();
    }
  });

  it('hangs past the processor timeout by default', () => {
    const config = loadConfig({ NODE_ENV: 'test', PROCESSOR_TIMEOUT_MS: '2000', DATA_DIR: '/tmp/trustfare-test-data' });
    expect(config.sandboxNoAnswerMs).toBeGreaterThan(config.processorTimeoutMs);
  });
});

describe('latency', () => {
  it('delays every answer by SANDBOX_LATENCY_MS, after recording the call', async () => {
    const ctx = await createTestContext({ env: { SANDBOX_LATENCY_MS: '400' } });
    try {
      const slow = createConnector(ctx.config, ctx.db);
      const req = request();
      const call = slow.authorise(req);
      const winner = await Promise.race([call.then(() => 'processor'), new Promise((resolve) => setTimeout(() => resolve('timeout'), 20))]);
      expect(winner).toBe('timeout');
      const answer = approved(await call);
      expect(await slow.lookup(req.reference)).toEqual(answer);
    } finally {
      await ctx.close();
    }
  });
});

describe('a processor call while the API pool is exhausted (issue 7)', () => {
  it('still authorises, captures and looks up within PROCESSOR_TIMEOUT_MS: the sandbox has its own pool', async () => {
    const ctx = await createTestContext({ env: { PROCESSOR_TIMEOUT_MS: '3000' } });
    const pool = ctx.db.pool;
    // Every connection of the API's pool held by an open transaction, as under 50 concurrent requests.
    const held = await Promise.all(Array.from({ length: pool.options.max }, () => pool.connect()));
    try {
      for (const client of held) await client.query('BEGIN');
      const queued = ctx.db.query('SELECT 1');
      expect(pool.waitingCount).toBe(1);
      const timeoutMs = ctx.config.processorTimeoutMs;
      const req = request({ capture: false });
      const authorised = await boundedCall(timeoutMs, req.reference, () => ctx.context.connector.authorise(req));
      const { processorReference } = approved(authorised as ProcessorOutcome);
      const captureReference = randomUUID();
      const captured = await boundedCall(timeoutMs, captureReference, () => ctx.context.connector.capture({ reference: captureReference, processorReference, amount: req.amount, currency: 'USD', mode: 'test' }));
      expect(captured.kind).toBe('approved');
      expect(await boundedCall(timeoutMs, req.reference, () => ctx.context.connector.lookup(req.reference))).toEqual(authorised);
      // The API's own request was still waiting all along.
      expect(pool.waitingCount).toBe(1);
      for (const client of held.splice(0)) {
        await client.query('ROLLBACK');
        client.release();
      }
      await queued;
      // Same database: the API sees what the sandbox recorded.
      expect(await ctx.db.one('SELECT status, captured_amount FROM sandbox_operations WHERE reference = $1', [req.reference])).toEqual({ status: 'approved', captured_amount: req.amount });
    } finally {
      for (const client of held) client.release();
      await ctx.close();
    }
  }, 30_000);
});

describe('capture, void and refund', () => {
  async function authorisation(amount = 10_000) {
    const req = request({ amount, capture: false });
    return { req, outcome: approved(await sandbox.authorise(req)) };
  }
  const followUp = (processorReference: string, amount: number, overrides: Partial<{ currency: string; reference: string }> = {}) => ({
    reference: randomUUID(), processorReference, amount, currency: 'USD', mode: 'test' as const, ...overrides,
  });

  it('captures once, up to the authorised amount, then refunds up to the captured amount', async () => {
    const { outcome } = await authorisation();
    expect(await sandbox.capture(followUp(outcome.processorReference, 10_001))).toMatchObject({ kind: 'declined', code: '700.400.100' });
    const capture = approved(await sandbox.capture(followUp(outcome.processorReference, 6_000)));
    expect(await sandbox.capture(followUp(outcome.processorReference, 1_000))).toMatchObject({ kind: 'declined', code: '700.400.100' });
    expect(await sandbox.void(followUp(outcome.processorReference, 10_000))).toMatchObject({ kind: 'declined', code: '700.400.300' });
    approved(await sandbox.refund(followUp(capture.processorReference, 4_000)));
    expect(await sandbox.refund(followUp(capture.processorReference, 2_001))).toMatchObject({ kind: 'declined', code: '700.400.200' });
    approved(await sandbox.refund(followUp(capture.processorReference, 2_000)));
  });

  it('voids only the full amount of an uncaptured authorisation, once', async () => {
    const { outcome } = await authorisation();
    expect(await sandbox.void(followUp(outcome.processorReference, 5_000))).toMatchObject({ kind: 'declined', code: '700.400.300' });
    approved(await sandbox.void(followUp(outcome.processorReference, 10_000)));
    expect(await sandbox.void(followUp(outcome.processorReference, 10_000))).toMatchObject({ kind: 'declined' });
    expect(await sandbox.capture(followUp(outcome.processorReference, 100))).toMatchObject({ kind: 'declined', code: '700.400.100' });
  });

  it('refunds a purchase, checks currency and unknown references', async () => {
    const purchase = approved(await sandbox.authorise(request({ amount: 5_000 })));
    expect(await sandbox.refund(followUp(purchase.processorReference, 100, { currency: 'EUR' }))).toMatchObject({ kind: 'declined', code: '700.400.700' });
    expect(await sandbox.refund(followUp('sbx_nope', 100))).toMatchObject({ kind: 'declined', code: '700.100.100' });
    expect(await sandbox.capture(followUp(purchase.processorReference, 100))).toMatchObject({ kind: 'declined', code: '700.400.100' });
    expect(await sandbox.refund(followUp(purchase.processorReference, 1_151))).toMatchObject({ kind: 'declined', code: '800.100.151' });
    approved(await sandbox.refund(followUp(purchase.processorReference, 5_000)));
  });

  it('forces declines of captures and refunds by amount on test only: live ones of 1 151 go through', async () => {
    const live = { mode: 'live' as const, card: { pan: '4242424242424242', expiryMonth: 1, expiryYear: 2040 } };
    const authorisation = approved(await sandbox.authorise(request({ ...live, amount: 5_000, capture: false })));
    const capture = approved(await sandbox.capture({ ...followUp(authorisation.processorReference, 2_151), mode: 'live' }));
    approved(await sandbox.refund({ ...followUp(capture.processorReference, 1_151), mode: 'live' }));
    const onTest = approved(await sandbox.authorise(request({ amount: 5_000, capture: false })));
    expect(await sandbox.capture(followUp(onTest.processorReference, 2_151))).toMatchObject({ kind: 'declined', code: '800.100.151' });
  });

  it('is idempotent by reference under concurrency: money moves once', async () => {
    const purchase = approved(await sandbox.authorise(request({ amount: 5_000 })));
    const refund = followUp(purchase.processorReference, 3_000);
    const outcomes = await Promise.all([sandbox.refund(refund), sandbox.refund(refund), sandbox.refund(refund)]);
    expect(outcomes.every((outcome) => outcome.kind === 'approved')).toBe(true);
    expect(new Set(outcomes.map((outcome) => JSON.stringify(outcome))).size).toBe(1);
    // Only 3 000 was refunded, so 2 000 remain.
    approved(await sandbox.refund(followUp(purchase.processorReference, 2_000)));
    expect(await sandbox.refund(followUp(purchase.processorReference, 1))).toMatchObject({ kind: 'declined' });
  });
});
