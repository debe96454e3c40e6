// The sandbox processor's 3-D Secure challenge page (deDE).
export const messages = {
  title: '3-D-Secure-Authentifizierung (Sandbox)',
  heading: 'Bestätigen Sie diese Zahlung',
  note: 'Sandbox-Abfrage für 3-D Secure. Es ist keine echte Bank beteiligt: Wählen Sie das zu simulierende Ergebnis.',
  merchant: 'Händler',
  amount: 'Betrag',
  card: 'Karte',
  cardEnding: '{brand} mit Endziffern {lastFour}',
  sandboxMerchant: 'Sandbox-Händler',
  authenticate: 'Authentifizieren',
  fail: 'Fehlschlagen',
  completed: 'Diese Authentifizierung wurde bereits abgeschlossen.',
  expired: 'Diese Authentifizierungsanfrage ist abgelaufen.',
  notFoundHeading: 'Authentifizierung nicht gefunden',
  notFound: 'Dieser Link ist ungültig.',
} as const;
