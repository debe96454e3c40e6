/**
 * Expected failures of account operations, as values the HTTP layer and the CLI map to their own
 * answers: `invalid` (a named input is wrong), `not_found`, `conflict` (already exists) and
 * `limit` (a bound of limits.ts was reached).
 */
export class AccountError extends Error {
  constructor(
    readonly reason: 'invalid' | 'not_found' | 'conflict' | 'limit',
    message: string,
    /** The input at fault, for `data.params` of a 400. */
    readonly param?: string,
  ) {
    super(message);
  }
}
