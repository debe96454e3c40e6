// The sandbox processor's 3-D Secure challenge page (koKO).
export const messages = {
  title: '3-D Secure 인증(샌드박스)',
  heading: '이 결제를 확인하세요',
  note: '샌드박스 3-D Secure 인증입니다. 실제 은행은 관여하지 않습니다. 시뮬레이션할 결과를 선택하세요.',
  merchant: '가맹점',
  amount: '금액',
  card: '카드',
  cardEnding: '{brand}, 끝자리 {lastFour}',
  sandboxMerchant: '샌드박스 가맹점',
  authenticate: '인증',
  fail: '실패',
  completed: '이 인증은 이미 완료되었습니다.',
  expired: '이 인증 요청은 만료되었습니다.',
  notFoundHeading: '인증을 찾을 수 없습니다',
  notFound: '이 링크는 유효하지 않습니다.',
} as const;
