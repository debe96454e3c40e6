import type { AppContext } from '../context.js';

export type CommandContext = AppContext;

export interface Command {
  /** Space-separated words, e.g. `site create`. */
  name: string;
  summary: string;
  options?: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: false }>;
  /** Returns what is printed as JSON; throws an Error with a clear message on failure. */
  run(context: CommandContext, options: Record<string, string | boolean | undefined>, positionals: string[]): Promise<unknown>;
}

/** A positive integer option's text as a number (ids, amounts in cents), or a clear error naming it and what it must be. */
export function positiveInteger(name: string, text: string, what = 'a positive integer'): number {
  if (!/^[1-9][0-9]{0,14}$/.test(text)) throw new Error(`--${name} must be ${what}`);
  return Number(text);
}

/** A required string option, or a clear error naming it. */
export function required(options: Record<string, string | boolean | undefined>, name: string): string {
  const value = options[name];
  if (typeof value !== 'string' || value === '') throw new Error(`--${name} is required`);
  return value;
}
