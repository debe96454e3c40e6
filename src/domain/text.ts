import { Type, type TString } from '@sinclair/typebox';
import { describedPattern, patternPhrase } from './patterns.js';

/**
 * The one rule for free text from clients (docs/resources.md "Bodies"). Names, labels and other
 * one-line values reach places where a stray character does harm or hides: a receipt's From
 * display name and Subject, statement lines, CSV cells, log lines. So text refuses:
 * - C0 and C1 control characters (NUL, BEL, ESC, CR, LF, DEL...): they corrupt headers and
 *   terminals, and PostgreSQL text cannot hold NUL;
 * - unpaired UTF-16 surrogates (`"\ud800"` in JSON): they cannot be stored as UTF-8 and would be
 *   replaced silently by U+FFFD;
 * - the bidirectional embedding, override and isolate controls (U+202A-U+202E, U+2066-U+2069),
 *   which reorder what is shown ("Trojan Source"); the plain marks U+200E/U+200F stay allowed;
 * - on one line, also the line and paragraph separators U+2028/U+2029.
 * Multi-line text (`content`) may hold tabs and line breaks, nothing else of the above.
 *
 * A value that must be seen (a name) needs a visible character: whitespace, format characters
 * (zero-width space U+200B, BOM U+FEFF, soft hyphen, bidi marks), combining marks on their own and
 * the blank fillers (Hangul U+3164, braille U+2800...) do not count. An optional one-line value may
 * be empty (it then means "none" or "the default"), but not blank-looking.
 *
 * The patterns are JSON Schema (ECMA-262, `u` flag, as Ajv compiles them), so the route schemas and
 * the OpenAPI document carry the rule, and `textProblem` applies the same to input that does not
 * come through a schema (the vaulting app's query, the CLI).
 */
const lineControls = '\\p{Cc}\\p{Cs}\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';
const multiLineControls = '\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f\\p{Cs}\\u202a-\\u202e\\u2066-\\u2069';
const invisible = '\\s\\p{Cf}\\p{M}\\u115f\\u1160\\u2800\\u3164\\uffa0';

/**
 * `name`: one line with a visible character (required names). `line`: one line, empty or with a
 * visible character (optional labels, references, filters). `lines`: multi-line text.
 */
export type TextKind = 'name' | 'line' | 'lines';

// A lookahead refuses the controls, then a run of invisible characters must end at a visible
// one: linear time, whatever the input.
const textPatterns: Record<TextKind, string> = {
  name: describedPattern(
    `^(?=[^${lineControls}]*$)[${invisible}]*[^${invisible}]`,
    'text on one line with at least one visible character, without control characters',
  ),
  line: describedPattern(
    `^(?=[^${lineControls}]*$)(?:$|[${invisible}]*[^${invisible}])`,
    'text on one line without control characters, empty or with at least one visible character',
  ),
  lines: describedPattern(`^[^${multiLineControls}]*$`, 'text without control characters other than tabs and line breaks'),
};

const textRegExps = Object.fromEntries(Object.entries(textPatterns).map(([kind, pattern]) => [kind, new RegExp(pattern, 'u')])) as Record<TextKind, RegExp>;

/** A schema for client text of `kind`, at most `maxLength` UTF-16 code units (the pattern of `name` implies one). */
export function Text(options: { maxLength: number; kind: TextKind; description?: string }): TString {
  return Type.String({
    maxLength: options.maxLength,
    pattern: textPatterns[options.kind],
    ...(options.description !== undefined ? { description: options.description } : {}),
  });
}

/** What is wrong with `value` as text of `kind` ("must be …"), or null: the schema's rule, for input without a schema. */
export function textProblem(value: string, options: { maxLength: number; kind: TextKind }): string | null {
  if (value.length > options.maxLength) return `must be at most ${options.maxLength} characters`;
  if (!textRegExps[options.kind].test(value)) return `must be ${patternPhrase(textPatterns[options.kind])}`;
  return null;
}

/**
 * Text as it is kept and searched: Unicode NFC. One name has two spellings in Unicode: a composed
 * `ü` (U+00FC, what most keyboards send) and `u` + U+0308 (decomposed, NFD, what macOS file names
 * and some clients send). Stored as sent, a surname typed one way was not found by an exact filter
 * typed the other way. So the fields lists filter on (booking names, email and reference, payee
 * names and email, channel name and external_id) are kept in NFC, and every query string value is
 * read in NFC (src/http/querystring.ts): docs/resources.md "Lists".
 */
export function canonicalText(value: string): string {
  return value.normalize('NFC');
}
