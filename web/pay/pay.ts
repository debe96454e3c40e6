// The payment request page: pays the booking's amount due, in the chosen currency, then shows
// a receipt.
import { receiptDateTimeOptions } from '../../src/i18n/date-time.js';
import { callApi } from '../shared/api.js';
import { brandName, CardForm } from '../shared/card-form.js';
import { byId, readPageData, translator, type PageData } from '../shared/page-data.js';
import { confirmLeaving, declineLine, exhaustedLine, resumePayment, runPayment, showOutcome, showRefusal, type ApiErrorBody, type FlowEnd, type PaymentAnswer } from '../shared/payment-flow.js';

/** One currency choice, as the server computed it (src/domain/hosted/currencies.ts). */
interface CurrencyOption {
  currency: string;
  /** Minor units: sent as `total`, so the card is charged exactly what the page shows. */
  amount: number;
  formatted: string;
  rate: string | null;
}

const data = readPageData<PageData & { currencies: CurrencyOption[]; resume?: true }>();
const t = translator(data.messages);
const form = new CardForm(t);
const select = document.getElementById('currency') as HTMLSelectElement | null;
let options = data.currencies;
const base = options[0]!;

function chosen(): CurrencyOption {
  return options.find((option) => option.currency === select?.value) ?? base;
}

/**
 * `1 USD = 0,92 EUR`: the numbers in the page's locale, as the amounts and the emails write them
 * (the server sends the rate as a decimal string; 12 places is what a quote holds).
 */
function rateText(option: CurrencyOption): string {
  const number = new Intl.NumberFormat(data.locale, { maximumFractionDigits: 12 });
  return `${number.format(1)} ${base.currency} = ${number.format(Number(option.rate))} ${option.currency}`;
}

/** Amount due, pay button and the rate line follow the chosen currency. */
function showChosen(): void {
  const option = chosen();
  byId('amount-due').textContent = option.formatted;
  byId('submit').textContent = t('payAmount', { amount: option.formatted });
  const converted = document.getElementById('converted');
  if (converted) converted.textContent = option.rate ? t('converted', { amount: option.formatted, rate: rateText(option) }) : '';
}

select?.addEventListener('change', showChosen);

/**
 * The payments core refused the converted total the page showed: the quote changed since the
 * page was opened. Fetch the amounts at the current quote, show them, and let the payer decide.
 */
async function refreshRates(): Promise<void> {
  const previous = chosen().currency;
  const answer = await callApi<{ currencies: CurrencyOption[] } | ApiErrorBody>({ method: 'GET', url: '/hosted/payments/currencies', session: data.session, timeoutMs: data.timeoutMs });
  if (answer.kind !== 'answer') return showOutcome('failed', [t('unexpectedError')]);
  // A refusal is shown as every refusal is: a session that expired meanwhile says so and the form
  // goes (it said "something went wrong, try again", and every retry was refused the same way).
  if (answer.status !== 200) return showRefusal(answer.body as ApiErrorBody, form, t);
  options = (answer.body as { currencies: CurrencyOption[] }).currencies;
  if (select) {
    select.replaceChildren(...options.map((option) => new Option(`${option.currency} · ${option.formatted}`, option.currency)));
    select.value = options.some((option) => option.currency === previous) ? previous : base.currency;
  }
  showChosen();
  showOutcome('info', [t('rateChanged', { amount: chosen().formatted })]);
}

function receipt(answer: PaymentAnswer, paid: CurrencyOption): void {
  const transaction = answer.transaction as PaymentAnswer['transaction'] & { auth_code?: string; last_four_digits?: string; card_types?: string; created?: string };
  form.form.hidden = true;
  // Nothing is due any more: the amount and currency choice give way to the receipt.
  byId('due').hidden = true;
  const lines: (string | [string, string])[] = [t('paymentSuccess'), [t('bookingId'), String(data.bookingId)], [t('transactionId'), String(transaction.id)], [t('amountPaid'), paid.formatted]];
  if (paid.rate) lines.push(t('converted', { amount: base.formatted, rate: rateText(paid) }));
  if (transaction.auth_code) lines.push([t('authCode'), transaction.auth_code]);
  if (transaction.last_four_digits) lines.push([t('card'), t('cardEnding', { brand: brandName(transaction.card_types), lastFour: transaction.last_four_digits })]);
  if (transaction.created) lines.push([t('date'), receiptTime(transaction.created)]);
  showOutcome('success', lines);
}

function refused(error: ApiErrorBody): void {
  if (error.code === 'rest_attempts_exhausted') {
    form.form.hidden = true;
    return showOutcome('failed', [exhaustedLine(error, data.company, t)]);
  }
  const params = error.data.params;
  if (params && !Array.isArray(params) && params.total) return void refreshRates();
  showRefusal(error, form, t);
}

form.payOnSubmit({
  pay: (card) => {
    if (select) select.disabled = true;
    const paying = chosen();
    return runPayment(data, card, { currencies: paying.currency, total: paying.amount }, { onProcessing: confirmLeaving }).then((end) => ({ end, paying }));
  },
  settled,
});

// Opened on this page's payment awaiting its 3DS challenge (reloaded, or the tab discarded while
// the payer was in the bank's app): the challenge again, not the form.
if (data.resume) {
  form.form.hidden = true;
  void resumePayment(data, { onProcessing: confirmLeaving }).then((end) => {
    // Settled meanwhile (no challenge left to show): the form comes back unless the outcome ends it.
    form.form.hidden = false;
    settled({ end, paying: chosen() });
  });
}

/** The page after its payment's outcome: the receipt, the decline with the attempts left, or why not. */
function settled({ end, paying }: { end: FlowEnd; paying: CurrencyOption }): void {
  if (select) select.disabled = false;
  if (end.kind === 'network') return showOutcome('failed', [t('networkError')]);
  if (end.kind === 'timeout' || (end.kind === 'answer' && end.answer.outcome === 'timeout')) {
    form.form.hidden = true;
    return showOutcome('failed', [t('timeout', { bookingId: data.bookingId ?? '', company: data.company })]);
  }
  if (end.kind === 'refused') return refused(end.error);
  const answer = end.answer;
  // The payment the page made may be an earlier one, whose answer was lost, in another currency
  // than the one chosen now (payment-flow.ts): the receipt is for what the transaction paid.
  if (answer.outcome === 'complete') return receipt(answer, options.find((option) => option.currency === answer.transaction.currencies) ?? paying);
  const decline = declineLine(t, answer, 'unexpectedError');
  if (answer.rejected) {
    form.form.hidden = true;
    return showOutcome('failed', [decline, t('rejected', { company: data.company })]);
  }
  showOutcome('failed', [decline, t('attemptsLeft', { count: answer.attempts_left })]);
  form.clearCard();
}

/**
 * The API's `YYYY-MM-DD HH:MM:SS` (GMT) as the receipt mail writes it: in the page's language, on
 * a 24-hour clock, marked UTC. Shown as it came, it was the only unlocalised line on the page.
 */
function receiptTime(created: string): string {
  const instant = new Date(`${created.replace(' ', 'T')}Z`);
  if (Number.isNaN(instant.getTime())) return `${created} GMT`;
  return new Intl.DateTimeFormat(data.locale, receiptDateTimeOptions).format(instant);
}
