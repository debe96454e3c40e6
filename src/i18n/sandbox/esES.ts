// The sandbox processor's 3-D Secure challenge page (esES).
export const messages = {
  title: 'Autenticación 3-D Secure (entorno de pruebas)',
  heading: 'Confirme este pago',
  note: 'Desafío 3-D Secure del entorno de pruebas. No interviene ningún banco real: elija el resultado que desea simular.',
  merchant: 'Comercio',
  amount: 'Importe',
  card: 'Tarjeta',
  cardEnding: '{brand} terminada en {lastFour}',
  sandboxMerchant: 'Comercio de pruebas',
  authenticate: 'Autenticar',
  fail: 'Fallar',
  completed: 'Esta autenticación ya se ha completado.',
  expired: 'Esta solicitud de autenticación ha caducado.',
  notFoundHeading: 'Autenticación no encontrada',
  notFound: 'Este enlace no es válido.',
} as const;
