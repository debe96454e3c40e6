import type { AuthoriseRequest } from '../connector.js';
import { forcedDeclineForAmount, forcedDeclines, parseForcedDeclineCode, sandboxCodes } from './declines.js';
import { testCardByPan } from './test-cards.js';

/** What the sandbox "bank" says about an authorisation, before 3DS is considered. */
export interface BankAnswer {
  status: 'approved' | 'declined';
  code: string | null;
  message: string;
}

export interface AuthorisationDecision {
  /** What the call answers now. */
  answer: BankAnswer | { status: 'challenge'; code: null; message: string };
  /** For a challenge: the bank's answer once the cardholder authenticates. */
  afterChallenge: BankAnswer | null;
  /** The 3DS path when 3DS was requested (not_enrolled: the card takes no part in 3DS); null when it was not. */
  threeDs: 'frictionless' | 'challenge' | 'not_enrolled' | null;
  noAnswer: boolean;
}

const approved = (message: string): BankAnswer => ({ status: 'approved', code: null, message });
const declined = (code: string, message: string): BankAnswer => ({ status: 'declined', code, message });

/**
 * The bank's answer: forced declines first (test mode only: `forcedDeclineCode`, then the amount's
 * last two digits), then the declined test cards, else approved.
 */
function bankAnswer(request: AuthoriseRequest): BankAnswer {
  if (request.mode === 'test') {
    const forced = request.forcedDeclineCode === undefined ? null : parseForcedDeclineCode(request.forcedDeclineCode);
    if (request.forcedDeclineCode !== undefined && !forced) throw new Error(`unknown forced decline code ${request.forcedDeclineCode}`);
    const code = forced ?? forcedDeclineForAmount(request.amount);
    if (code) return declined(code, forcedDeclines[code]!);
  }
  if (testCardByPan(request.card.pan)?.behaviour === 'decline') return declined(sandboxCodes.declined.code, sandboxCodes.declined.message);
  return approved(request.amount === 0 ? 'Card verified (sandbox)' : 'Approved (sandbox)');
}

/**
 * Pure decision of one authorisation. 3DS comes first, as with a real issuer: a challenge card
 * with 3DS requested is challenged and the bank's answer applies after "Authenticate"; a
 * challenge card without 3DS is soft-declined (the issuer insists); frictionless cards pass 3DS
 * silently; other cards are not enrolled: with 3DS requested they are authorised without it and
 * the answer says so (`not_enrolled`), never `frictionless` (docs/sandbox.md). A merchant-initiated
 * (retained) charge skips 3DS altogether: the issuer exempts it, as the cardholder is not there.
 */
export function decideAuthorisation(request: AuthoriseRequest): AuthorisationDecision {
  const behaviour = testCardByPan(request.card.pan)?.behaviour ?? 'approve';
  const bank = bankAnswer(request);
  const noAnswer = behaviour === 'no_answer';
  if (request.merchantInitiated) return { answer: bank, afterChallenge: null, threeDs: null, noAnswer };
  if (behaviour === 'challenge') {
    if (!request.threeDs) {
      return { answer: declined(sandboxCodes.authenticationRequired.code, sandboxCodes.authenticationRequired.message), afterChallenge: null, threeDs: null, noAnswer };
    }
    return { answer: { status: 'challenge', code: null, message: '3-D Secure challenge required' }, afterChallenge: bank, threeDs: 'challenge', noAnswer };
  }
  if (behaviour === 'frictionless' && request.threeDs) {
    const answer = bank.status === 'approved' ? approved(`${bank.message}; 3-D Secure frictionless authentication`) : bank;
    return { answer, afterChallenge: null, threeDs: 'frictionless', noAnswer };
  }
  if (behaviour !== 'frictionless' && request.threeDs) {
    const answer = bank.status === 'approved' ? approved(`${bank.message}; card not enrolled in 3-D Secure, authorised without it`) : bank;
    return { answer, afterChallenge: null, threeDs: 'not_enrolled', noAnswer };
  }
  return { answer: bank, afterChallenge: null, threeDs: null, noAnswer };
}
