// The sandbox processor's 3-D Secure challenge page (frFR).
export const messages = {
  title: 'Authentification 3-D Secure (bac à sable)',
  heading: 'Confirmez ce paiement',
  note: 'Défi 3-D Secure du bac à sable. Aucune banque réelle n’intervient : choisissez le résultat à simuler.',
  merchant: 'Marchand',
  amount: 'Montant',
  card: 'Carte',
  cardEnding: '{brand} se terminant par {lastFour}',
  sandboxMerchant: 'Marchand de test',
  authenticate: 'Authentifier',
  fail: 'Échouer',
  completed: 'Cette authentification a déjà été effectuée.',
  expired: 'Cette demande d’authentification a expiré.',
  notFoundHeading: 'Authentification introuvable',
  notFound: 'Ce lien n’est pas valide.',
} as const;
