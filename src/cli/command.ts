import type { AppContext } from '../context.js';
import { isoDateTimeRegExpSource, isoInstant } from '../http/pagination.js';

export type CommandContext = AppContext;

export interface Command {
  /** Space-separated words, e.g. `site create`. */
  name: string;
  summary: string;
  options?: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: false }>;
  /** How many positional arguments it takes (a FILE), all required; 0 unless told, and more are refused. */
  positionals?: number;
  /**
   * The options it cannot run without: a name, or names of which at least one must be given. A
   * missing one is a usage error (exit 2, before any database is opened: runCli), as an unknown
   * option is; bad values stay the command's to refuse (exit 1).
   */
  required?: readonly (string | readonly string[])[];
  /** Returns what is printed as JSON; throws an Error with a clear message on failure. */
  run(context: CommandContext, options: Record<string, string | boolean | undefined>, positionals: string[]): Promise<unknown>;
}

/** A positive integer option's text as a number (ids, amounts in cents), or a clear error naming it and what it must be. */
export function positiveInteger(name: string, text: string, what = 'a positive integer'): number {
  if (!/^[1-9][0-9]{0,14}$/.test(text)) throw new Error(`--${name} must be ${what}`);
  return Number(text);
}

/** A `true` or `false` option's text as a boolean, or a clear error naming it. */
export function booleanOption(name: string, text: string): boolean {
  if (text !== 'true' && text !== 'false') throw new Error(`--${name} must be true or false`);
  return text === 'true';
}

/** An optional `--name` of 1 to `max` written in digits alone (`1e0`, `0x2` and ` 1` are refused), or `fallback`. */
export function boundedInteger(name: string, text: string | undefined, options: { max: number; fallback: number }): number {
  if (text === undefined) return options.fallback;
  const value = positiveInteger(name, text, `an integer from 1 to ${options.max}`);
  if (value > options.max) throw new Error(`--${name} must be an integer from 1 to ${options.max}`);
  return value;
}

/** A `YYYY-MM-DD` option as 00:00:00 GMT of that day, or an ISO 8601 date-time (a report's `next_since`). */
export function instantOption(options: Record<string, string | boolean | undefined>, name: string): Date | undefined {
  const value = options[name];
  if (value === undefined) return undefined;
  const refusal = `--${name} must be a date as YYYY-MM-DD or an ISO 8601 date-time`;
  if (typeof value !== 'string' || !new RegExp(`^${isoDateTimeRegExpSource}$`).test(value)) throw new Error(refusal);
  try {
    return isoInstant(name, value);
  } catch {
    throw new Error(refusal);
  }
}

/**
 * The refusal of a command line that lacks a required option or the FILE argument, or undefined.
 * An empty value of a required option (`--path=`) is no value.
 */
export function missingRequirement(command: Command, options: Record<string, string | boolean | undefined>, positionals: readonly string[]): string | undefined {
  for (const requirement of command.required ?? []) {
    if (typeof requirement === 'string') {
      if (options[requirement] === undefined || options[requirement] === '') return `--${requirement} is required`;
    } else if (requirement.every((name) => options[name] === undefined)) {
      // One of a group may be empty: `channel set --descriptor=` clears the descriptor.
      const names = requirement.map((name) => `--${name}`);
      return names.length === 2 ? `give ${names.join(' or ')}` : `give at least one of ${names.join(', ')}`;
    }
  }
  return positionals.length < (command.positionals ?? 0) ? 'the FILE argument is required' : undefined;
}

/** A required string option (declared in `Command.required`, so present when `run` runs), or a clear error naming it. */
export function required(options: Record<string, string | boolean | undefined>, name: string): string {
  const value = options[name];
  if (typeof value !== 'string' || value === '') throw new Error(`--${name} is required`);
  return value;
}

/**
 * A password option: `--password W`, or `--password-stdin` to read it from the first line of
 * standard input (`printf '%s\n' "$W" | trustfare ...`), which keeps it out of the process list
 * and the shell history, where other accounts of the machine can read a command line.
 */
export async function passwordOption(options: Record<string, string | boolean | undefined>, input: NodeJS.ReadableStream = process.stdin): Promise<string> {
  if (options['password-stdin'] !== true) return required(options, 'password');
  const conflict = conflictingOptions(options);
  if (conflict) throw new Error(conflict);
  let text = '';
  for await (const chunk of input) {
    text += String(chunk);
    if (text.includes('\n')) break;
  }
  const password = text.split(/\r?\n/)[0] ?? '';
  if (password === '') throw new Error('--password-stdin read no password from standard input');
  return password;
}

/** The options every password-taking command declares, and its requirement of one of them. */
export const passwordOptions = { password: { type: 'string' }, 'password-stdin': { type: 'boolean' } } as const;
export const passwordRequirement = ['password', 'password-stdin'] as const;

/**
 * Options that cannot be given together: which one was meant is the operator's to say. Found as
 * a usage error, before any database is opened, whichever command declares both.
 */
const exclusiveOptions = [['password', 'password-stdin'], ['request', 'all'], ['mail', 'since']] as const;

/**
 * The refusal of options given together that exclude each other, or undefined. A usage error
 * (exit 2, before any database is opened: runCli), as an unknown option is.
 */
export function conflictingOptions(options: Record<string, string | boolean | undefined>): string | undefined {
  const given = exclusiveOptions.find((names) => names.every((name) => options[name] !== undefined));
  return given ? `give ${given.map((name) => `--${name}`).join(' or ')}, not both` : undefined;
}
