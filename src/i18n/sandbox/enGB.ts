// The sandbox processor's 3-D Secure challenge page, English: the reference language. Every other
// file in this folder has exactly these keys and placeholders.
export const messages = {
  title: '3-D Secure authentication (sandbox)',
  heading: 'Confirm this payment',
  note: 'Sandbox 3-D Secure challenge. No real bank is involved: choose the outcome to simulate.',
  merchant: 'Merchant',
  amount: 'Amount',
  card: 'Card',
  cardEnding: '{brand} ending {lastFour}',
  sandboxMerchant: 'Sandbox merchant',
  authenticate: 'Authenticate',
  fail: 'Fail',
  completed: 'This authentication has already been completed.',
  expired: 'This authentication request has expired.',
  notFoundHeading: 'Authentication not found',
  notFound: 'This link is not valid.',
} as const;
