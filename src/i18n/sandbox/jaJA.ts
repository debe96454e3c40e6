// The sandbox processor's 3-D Secure challenge page (jaJA).
export const messages = {
  title: '3-D セキュア認証（サンドボックス）',
  heading: 'このお支払いを確認してください',
  note: 'サンドボックスの 3-D セキュア認証です。実際の銀行は関与しません。シミュレートする結果を選んでください。',
  merchant: '加盟店',
  amount: '金額',
  card: 'カード',
  cardEnding: '{brand}（末尾 {lastFour}）',
  sandboxMerchant: 'サンドボックス加盟店',
  authenticate: '認証する',
  fail: '失敗させる',
  completed: 'この認証はすでに完了しています。',
  expired: 'この認証リクエストは期限切れです。',
  notFoundHeading: '認証が見つかりません',
  notFound: 'このリンクは無効です。',
} as const;
