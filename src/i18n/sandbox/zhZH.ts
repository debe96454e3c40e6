// The sandbox processor's 3-D Secure challenge page (zhZH).
export const messages = {
  title: '3-D Secure 验证（沙盒）',
  heading: '确认此付款',
  note: '沙盒 3-D Secure 验证。不涉及真实银行：请选择要模拟的结果。',
  merchant: '商户',
  amount: '金额',
  card: '卡',
  cardEnding: '{brand}，尾号 {lastFour}',
  sandboxMerchant: '沙盒商户',
  authenticate: '验证',
  fail: '失败',
  completed: '此验证已完成。',
  expired: '此验证请求已过期。',
  notFoundHeading: '未找到验证',
  notFound: '此链接无效。',
} as const;
