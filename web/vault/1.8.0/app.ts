// The vaulting app, version 1.8.0: one page that captures a card and verifies it with a
// zero-value vault transaction, then sends the browser to `redirect` with the redirect
// parameters (or shows the outcome when there is no redirect).
import { CardForm } from '../../shared/card-form.js';
import { readPageData, translator, type PageData } from '../../shared/page-data.js';
import { confirmLeaving, declineLine, exhaustedLine, resumePayment, runPayment, showOutcome, showRefusal, type FlowEnd, type PaymentAnswer } from '../../shared/payment-flow.js';

const data = readPageData<PageData & { resume?: true }>();
const t = translator(data.messages);
const form = new CardForm(t);
/**
 * What the token had left when the page loaded (rendered by the server after earlier declines with
 * the same token, in this load or another). An attempt's outcome box says the count from then on.
 */
const attemptsNote = document.getElementById('attempts-left');

function finish(answer: PaymentAnswer): void {
  const success = answer.outcome === 'complete';
  // The server built the URL and checked it is http(s); checked again here before leaving.
  if (answer.redirect_url && /^https?:\/\//i.test(answer.redirect_url)) {
    form.form.hidden = true;
    showOutcome(success ? 'success' : 'failed', [success ? t('vaultSuccess') : t('vaultFailed'), t('redirecting')]);
    location.assign(answer.redirect_url);
    return;
  }
  if (success) {
    form.form.hidden = true;
    showOutcome('success', [t('vaultSuccess'), [t('transactionId'), String(answer.transaction.id)]]);
    return;
  }
  const decline = declineLine(t, answer, 'vaultFailed');
  if (answer.attempts_left > 0) {
    showOutcome('failed', [decline, t('attemptsLeft', { count: answer.attempts_left })]);
    form.clearCard();
  } else {
    form.form.hidden = true;
    showOutcome('failed', [decline, t('rejected', { company: data.company })]);
  }
}

/**
 * The bank has not answered (or the page gave up waiting): the vault transaction is left
 * `incomplete` and may still complete, so "try again" would be wrong. Like the payment pages,
 * the form goes away and the payer is told to check first; the transaction ID, when known, is
 * what the company can look up.
 */
function unanswered(answer?: PaymentAnswer): void {
  form.form.hidden = true;
  showOutcome('failed', [t('vaultTimeout', { company: data.company }), ...(answer ? [[t('transactionId'), String(answer.transaction.id)] as [string, string]] : [])]);
}

form.payOnSubmit({
  pay: (card) => runPayment(data, card, {}, { onProcessing: confirmLeaving }),
  settled,
});

// Opened on this page's vault awaiting its 3DS challenge (reloaded, or the tab discarded while the
// payer was in the bank's app): the challenge again, not the form, then the redirect that vault makes.
if (data.resume) {
  form.form.hidden = true;
  void resumePayment(data, { onProcessing: confirmLeaving }).then((end) => {
    // Settled meanwhile (no challenge left to show): the form comes back unless the outcome ends it.
    form.form.hidden = false;
    settled(end);
  });
}

/** The page after its vault's outcome: the redirect, the outcome in the page, or why not. */
function settled(end: FlowEnd): void {
  // A refusal before the bank uses no attempt, so the note still holds, unless it says none is left.
  if (attemptsNote && (end.kind !== 'refused' || end.error.code === 'rest_attempts_exhausted')) attemptsNote.hidden = true;
  switch (end.kind) {
    case 'answer':
      return end.answer.outcome === 'timeout' && !end.answer.redirect_url ? unanswered(end.answer) : finish(end.answer);
    case 'refused':
      // The token's attempts were used up in another load of the page (or at the same moment), or
      // its cards or this page's were (data.exhausted 'captures'), where no attempt need have failed.
      if (end.error.code === 'rest_attempts_exhausted') {
        form.form.hidden = true;
        return showOutcome('failed', [exhaustedLine(end.error, data.company, t)]);
      }
      return showRefusal(end.error, form, t);
    // Gave up waiting, and nothing to read since (runPayment looked): the bank has not answered.
    case 'timeout':
      return unanswered();
    case 'network':
      return showOutcome('failed', [t('networkError')]);
  }
}
