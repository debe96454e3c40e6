// The sandbox processor's 3-D Secure challenge page (uzUZ).
export const messages = {
  title: '3-D Secure autentifikatsiyasi (sinov muhiti)',
  heading: 'Ushbu toʻlovni tasdiqlang',
  note: 'Sinov muhitidagi 3-D Secure tekshiruvi. Haqiqiy bank ishtirok etmaydi: taqlid qilinadigan natijani tanlang.',
  merchant: 'Sotuvchi',
  amount: 'Summa',
  card: 'Karta',
  cardEnding: '{brand}, oxirgi raqamlari {lastFour}',
  sandboxMerchant: 'Sinov sotuvchisi',
  authenticate: 'Tasdiqlash',
  fail: 'Rad etish',
  completed: 'Bu autentifikatsiya allaqachon yakunlangan.',
  expired: 'Bu autentifikatsiya soʻrovining muddati tugagan.',
  notFoundHeading: 'Autentifikatsiya topilmadi',
  notFound: 'Bu havola yaroqsiz.',
} as const;
