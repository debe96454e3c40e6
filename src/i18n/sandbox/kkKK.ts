// The sandbox processor's 3-D Secure challenge page (kkKK).
export const messages = {
  title: '3-D Secure аутентификациясы (құмсалғыш)',
  heading: 'Осы төлемді растаңыз',
  note: 'Құмсалғыштағы 3-D Secure тексеруі. Нақты банк қатыспайды: модельдейтін нәтижені таңдаңыз.',
  merchant: 'Сатушы',
  amount: 'Сома',
  card: 'Карта',
  cardEnding: '{brand}, соңғы сандары {lastFour}',
  sandboxMerchant: 'Сынақ сатушысы',
  authenticate: 'Растау',
  fail: 'Қабылдамау',
  completed: 'Бұл аутентификация аяқталып қойған.',
  expired: 'Бұл аутентификация сұрауының мерзімі өтті.',
  notFoundHeading: 'Аутентификация табылмады',
  notFound: 'Бұл сілтеме жарамсыз.',
} as const;
