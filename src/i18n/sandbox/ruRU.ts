// The sandbox processor's 3-D Secure challenge page (ruRU).
export const messages = {
  title: 'Аутентификация 3-D Secure (песочница)',
  heading: 'Подтвердите этот платёж',
  note: 'Проверка 3-D Secure в песочнице. Настоящий банк не участвует: выберите результат для имитации.',
  merchant: 'Продавец',
  amount: 'Сумма',
  card: 'Карта',
  cardEnding: '{brand}, оканчивается на {lastFour}',
  sandboxMerchant: 'Тестовый продавец',
  authenticate: 'Подтвердить',
  fail: 'Отклонить',
  completed: 'Эта аутентификация уже завершена.',
  expired: 'Срок действия этого запроса на аутентификацию истёк.',
  notFoundHeading: 'Аутентификация не найдена',
  notFound: 'Эта ссылка недействительна.',
} as const;
