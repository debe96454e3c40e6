import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite, pageSessionOf, type SiteFixture } from '../support/fixtures.js';
import { createHostedSession } from '../../src/domain/hosted/sessions.js';
import { backgroundJobs } from '../../src/jobs/index.js';
import { buildWebBundles } from '../e2e/support.js';
import { startSmtpServer, type TestSmtpServer } from '../emails/support/smtp.js';

// The hosted pages' card form asks the cardholder for their name and email (the vaulting app also
// for the country). Those are the payer's details of the payment the page makes: the spec's
// `payee_name`, `payee_email` and `countries` ("where the payment method is registered"), and the
// payer the receipt goes to (docs/emails.md "The payer").
let smtp: TestSmtpServer;
let t: TestContext;
let site: SiteFixture;
let channel: number;
const year = new Date().getUTCFullYear() + 3;
const grace = { name: 'Grace Hopper', email: 'grace@example.org', country: 'US' };

beforeAll(async () => {
  await buildWebBundles();
  smtp = await startSmtpServer();
  t = await createTestContext({ env: { SMTP_URL: smtp.url } });
  site = await createSite(t.db);
  channel = (await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/channels`, headers: site.headers, payload: { name: 'Tours', currencies: 'USD' } })).json().id;
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

/** Captures the Visa test card as the page's form does, with the cardholder fields typed. */
async function captureCard(session: string, holder: Record<string, string>): Promise<string> {
  const captured = await t.app.inject({
    method: 'POST', url: `/${site.path}/site-json/vendor/v2/cards`, headers: { authorization: `Bearer ${session}` },
    payload: { channels: channel, card_number: '4111 1111 1111 1111', expiry_month: '04', expiry_year: year, cvv: '123', ...holder },
  });
  expect(captured.statusCode, captured.body).toBe(201);
  return captured.json().token;
}

async function pay(session: string, cardToken: string) {
  const paid = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: `Bearer ${session}` }, payload: { card_token: cardToken } });
  expect(paid.statusCode, paid.body).toBe(201);
  const id = paid.json().transaction.id as number;
  return (await t.app.inject({ url: `/${site.path}/site-json/vendor/v2/transactions/${id}`, headers: site.headers })).json();
}

describe('the payer details typed on a hosted page', () => {
  it('payment request page: the transaction names the payer who typed them, and the receipt goes to them, not to the traveller', async () => {
    const booking = (await t.app.inject({
      method: 'POST', url: `/${site.path}/site-json/vendor/v2/bookings`, headers: site.headers,
      payload: { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total: 2_500, currencies: 'USD', countries: 'GB', channels: channel, payment_request_url: true },
    })).json();
    const page = (await t.app.inject({ url: new URL(booking._links.self[0].payment_request).pathname })).body;
    const session = pageSessionOf(page)!;

    const transaction = await pay(session, await captureCard(session, { name: grace.name, email: grace.email }));
    expect(transaction).toMatchObject({ status: 'complete', payee_name: grace.name, payee_email: grace.email });

    await backgroundJobs.find((job) => job.name === 'mail-delivery')!.run(t.context);
    const receipt = smtp.received.find((mail) => mail.subject.includes('receipt'));
    expect(receipt?.envelopeTo).toEqual([grace.email]);
    expect(receipt?.text).toContain(`Dear ${grace.name},`);
  });

  it('vaulting app: the vault transaction carries the cardholder name, email and country', async () => {
    const { token: session } = await createHostedSession(t.db, { kind: 'vault', siteId: site.siteId, channelId: channel, userId: site.userId, currency: 'USD', language: 'enGB' }, new Date());
    const transaction = await pay(session, await captureCard(session, grace));
    expect(transaction).toMatchObject({ transaction_types: 'vault', status: 'complete', payee_name: grace.name, payee_email: grace.email, countries: grace.country });
  });

  it('fields the cardholder left empty stay empty (the payer is then the traveller, as before)', async () => {
    const { token: session } = await createHostedSession(t.db, { kind: 'vault', siteId: site.siteId, channelId: channel, userId: site.userId, currency: 'USD', language: 'enGB' }, new Date());
    const transaction = await pay(session, await captureCard(session, { name: 'Ada Lovelace' }));
    expect(transaction).toMatchObject({ payee_name: 'Ada Lovelace', payee_email: null, countries: null });
  });
});
