// The sandbox processor's 3-D Secure challenge page (lvLV).
export const messages = {
  title: '3-D Secure autentifikācija (smilškaste)',
  heading: 'Apstipriniet šo maksājumu',
  note: 'Smilškastes 3-D Secure pārbaude. Īsta banka nav iesaistīta: izvēlieties simulējamo iznākumu.',
  merchant: 'Tirgotājs',
  amount: 'Summa',
  card: 'Karte',
  cardEnding: '{brand}, beidzas ar {lastFour}',
  sandboxMerchant: 'Smilškastes tirgotājs',
  authenticate: 'Autentificēt',
  fail: 'Neizdoties',
  completed: 'Šī autentifikācija jau ir pabeigta.',
  expired: 'Šī autentifikācijas pieprasījuma derīgums ir beidzies.',
  notFoundHeading: 'Autentifikācija nav atrasta',
  notFound: 'Šī saite nav derīga.',
} as const;
