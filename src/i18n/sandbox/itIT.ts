// The sandbox processor's 3-D Secure challenge page (itIT).
export const messages = {
  title: 'Autenticazione 3-D Secure (sandbox)',
  heading: 'Conferma questo pagamento',
  note: 'Verifica 3-D Secure di prova (sandbox). Nessuna banca reale è coinvolta: scegli l’esito da simulare.',
  merchant: 'Esercente',
  amount: 'Importo',
  card: 'Carta',
  cardEnding: '{brand} che termina con {lastFour}',
  sandboxMerchant: 'Esercente di prova',
  authenticate: 'Autentica',
  fail: 'Fallisci',
  completed: 'Questa autenticazione è già stata completata.',
  expired: 'Questa richiesta di autenticazione è scaduta.',
  notFoundHeading: 'Autenticazione non trovata',
  notFound: 'Questo link non è valido.',
} as const;
