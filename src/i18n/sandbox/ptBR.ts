// The sandbox processor's 3-D Secure challenge page (ptBR).
export const messages = {
  title: 'Autenticação 3-D Secure (sandbox)',
  heading: 'Confirme este pagamento',
  note: 'Desafio 3-D Secure de sandbox. Nenhum banco real está envolvido: escolha o resultado a simular.',
  merchant: 'Estabelecimento',
  amount: 'Valor',
  card: 'Cartão',
  cardEnding: '{brand} com final {lastFour}',
  sandboxMerchant: 'Estabelecimento de teste',
  authenticate: 'Autenticar',
  fail: 'Falhar',
  completed: 'Esta autenticação já foi concluída.',
  expired: 'Esta solicitação de autenticação expirou.',
  notFoundHeading: 'Autenticação não encontrada',
  notFound: 'Este link não é válido.',
} as const;
