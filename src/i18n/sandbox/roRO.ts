// The sandbox processor's 3-D Secure challenge page (roRO).
export const messages = {
  title: 'Autentificare 3-D Secure (sandbox)',
  heading: 'Confirmați această plată',
  note: 'Provocare 3-D Secure de test (sandbox). Nu este implicată nicio bancă reală: alegeți rezultatul de simulat.',
  merchant: 'Comerciant',
  amount: 'Sumă',
  card: 'Card',
  cardEnding: '{brand} care se termină în {lastFour}',
  sandboxMerchant: 'Comerciant de test',
  authenticate: 'Autentificare',
  fail: 'Eșec',
  completed: 'Această autentificare a fost deja finalizată.',
  expired: 'Această cerere de autentificare a expirat.',
  notFoundHeading: 'Autentificarea nu a fost găsită',
  notFound: 'Acest link nu este valid.',
} as const;

export const identicalToEnglish = ['card'] as const;
