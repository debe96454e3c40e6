import type { TestContext } from '../../support/context.js';
import type { FuzzEndpoint, FuzzFixture } from '../endpoints.js';

/** The transactions endpoints of the API fuzz test (payments core, issue 3). */
const api = '/{path}/site-json/vendor/v2';

export const tables = ['transactions', 'transaction_bookings', 'ledger_entries', 'idempotency_keys'];

export async function prepare(t: TestContext, fixture: FuzzFixture): Promise<Record<string, unknown>> {
  const response = await t.app.inject({
    method: 'POST',
    url: `/${fixture.site.path}/site-json/vendor/v2/transactions`,
    headers: fixture.site.headers,
    payload: { transaction_types: 'vault', channels: fixture.channelId, currencies: 'GBP', total: 0, token: 'tok_visa' },
  });
  return { vaultTransactionId: response.json().id as number };
}

export const endpoints: FuzzEndpoint[] = [
  {
    name: 'list transactions',
    method: 'GET',
    path: `${api}/transactions`,
    auth: 'admin',
    queryParams: [
      'include', 'exclude', 'page', 'per_page', 'order', 'orderby', 'after', 'before', 'status', 'channels', 'channels_exclude', 'bin_number', 'countries',
      'currencies', 'currencies_exclude', 'last_four_digits', 'payment_methods', 'transaction_types', 'payee_surname', 'payee_email', 'reference',
      'statement_date_after', 'statement_date_before',
    ],
  },
  { name: 'get transaction', method: 'GET', path: `${api}/transactions/{id}`, id: (f) => String(f.extra.vaultTransactionId), auth: 'admin' },
  {
    name: 'create transaction (retained_purchase)',
    method: 'POST',
    path: `${api}/transactions`,
    auth: 'admin',
    validBody: (f) => ({
      transaction_types: 'retained_purchase', channels: f.channelId, currencies: 'GBP', total: 100, linked_id: f.extra.vaultTransactionId,
      bookings: [{ id: f.bookingId, currencies: 'GBP', total: 100 }], payee_name: 'F', payee_email: 'f@example.com', countries: 'GB', payment_methods: 'credit-card', language: 'enGB',
    }),
  },
  {
    name: 'create transaction (purchase)',
    method: 'POST',
    path: `${api}/transactions`,
    auth: 'admin',
    validBody: (f) => ({ transaction_types: 'purchase', channels: f.channelId, currencies: 'GBP', total: 100, token: 'tok_visa', bookings: [{ id: f.bookingId, currencies: 'GBP', total: 100 }], attempt_3ds: false, redirect_url: 'https://example.com/r' }),
  },
];
