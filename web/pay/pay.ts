// The payment request page: pays the booking's amount due, in the chosen currency, then shows
// a receipt.
import { CardForm } from '../shared/card-form.js';
import { byId, readPageData, translator, type PageData } from '../shared/page-data.js';
import { fieldErrorsOf, runPayment, showOutcome, type PaymentAnswer } from '../shared/payment-flow.js';

const data = readPageData<PageData & { currencies: { currency: string; formatted: string; rate: string | null }[] }>();
const t = translator(data.messages);
const form = new CardForm(t);
const select = document.getElementById('currency') as HTMLSelectElement | null;

function chosen() {
  return data.currencies.find((option) => option.currency === select?.value) ?? data.currencies[0]!;
}

select?.addEventListener('change', () => {
  const option = chosen();
  byId('amount-due').textContent = option.formatted;
  byId('submit').textContent = t('payAmount', { amount: option.formatted });
  byId('converted').textContent = option.rate ? t('converted', { amount: option.formatted, rate: option.rate }) : '';
});

function receipt(answer: PaymentAnswer): void {
  const transaction = answer.transaction as PaymentAnswer['transaction'] & { auth_code?: string; last_four_digits?: string; card_types?: string; created?: string };
  form.form.hidden = true;
  const lines: (string | [string, string])[] = [t('paymentSuccess'), [t('bookingId'), String(data.bookingId)], [t('transactionId'), String(transaction.id)], [t('amountPaid'), chosen().formatted]];
  if (transaction.auth_code) lines.push([t('authCode'), transaction.auth_code]);
  if (transaction.last_four_digits) lines.push([t('card'), t('cardEnding', { brand: transaction.card_types ?? '', lastFour: transaction.last_four_digits })]);
  if (transaction.created) lines.push([t('date'), `${transaction.created} GMT`]);
  showOutcome('success', lines);
  if (select) select.disabled = true;
}

form.form.addEventListener('submit', (event) => {
  event.preventDefault();
  const card = form.collect();
  if (!card) return;
  byId('outcome').hidden = true;
  form.setBusy(true, t('processing'));
  const currency = chosen().currency;
  void runPayment(data, card, currency !== data.currencies[0]?.currency ? { currencies: currency } : {}).then((end) => {
    form.setBusy(false, '');
    if (end.kind === 'network') return showOutcome('failed', [t('networkError')]);
    if (end.kind === 'timeout' || (end.kind === 'answer' && end.answer.outcome === 'timeout')) {
      form.form.hidden = true;
      return showOutcome('failed', [t('timeout', { bookingId: data.bookingId ?? '', company: data.company })]);
    }
    if (end.kind === 'refused') {
      if (end.error.code === 'rest_attempts_exhausted') form.form.hidden = true;
      return showOutcome('failed', end.error.code === 'jwt_auth_invalid_request' ? [t('sessionExpired')] : end.error.code === 'rest_attempts_exhausted' ? [t('rejected', { company: data.company })] : fieldErrorsOf(end.error));
    }
    const answer = end.answer;
    if (answer.outcome === 'complete') return receipt(answer);
    const decline = answer.decline ? t('declined', { reason: answer.decline.message, code: answer.decline.code }) : t('unexpectedError');
    if (answer.rejected) {
      form.form.hidden = true;
      return showOutcome('failed', [decline, t('rejected', { company: data.company })]);
    }
    showOutcome('failed', [decline, t('attemptsLeft', { count: answer.attempts_left })]);
    form.clearCard();
  });
});
