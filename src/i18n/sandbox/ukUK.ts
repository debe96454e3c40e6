// The sandbox processor's 3-D Secure challenge page (ukUK).
export const messages = {
  title: 'Автентифікація 3-D Secure (пісочниця)',
  heading: 'Підтвердьте цей платіж',
  note: 'Перевірка 3-D Secure у пісочниці. Справжній банк не бере участі: виберіть результат для імітації.',
  merchant: 'Продавець',
  amount: 'Сума',
  card: 'Картка',
  cardEnding: '{brand}, закінчується на {lastFour}',
  sandboxMerchant: 'Тестовий продавець',
  authenticate: 'Підтвердити',
  fail: 'Відхилити',
  completed: 'Цю автентифікацію вже завершено.',
  expired: 'Термін дії цього запиту на автентифікацію минув.',
  notFoundHeading: 'Автентифікацію не знайдено',
  notFound: 'Це посилання недійсне.',
} as const;
