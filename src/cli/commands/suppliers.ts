import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { Command } from '../command.js';
import { limits } from '../../limits.js';
import { parsedUrl } from '../../net.js';
import type { Queryable } from '../../storage/db.js';
import { isCountryCode, supplierCategoryCodes } from '../../domain/reference-data.js';
import { canonicalText, textProblem } from '../../domain/text.js';

/** One supplier as imported (the spec's Supplier fields). */
export interface SupplierInput {
  id: string;
  name: string;
  url: string;
  country: string;
  category: string;
}

export interface RejectedRow {
  /** 1-based row number: the array index + 1 in JSON, the line's record number after the header in CSV. */
  row: number;
  id: string | null;
  reason: string;
}

const columns = ['id', 'name', 'url', 'country', 'category'] as const;
const rejectedListedMax = 100;
const upsertBatchRows = 1000;

function readBounded(file: string): string {
  const descriptor = openSync(file, 'r');
  try {
    const size = fstatSync(descriptor).size;
    if (size > limits.supplierImportBytesMax) throw new Error(`${file} is ${size} bytes, more than ${limits.supplierImportBytesMax}`);
    const buffer = Buffer.alloc(size);
    readSync(descriptor, buffer, 0, size, 0);
    return buffer.toString('utf8').replace(/^\uFEFF/, '');
  } finally {
    closeSync(descriptor);
  }
}

/** RFC 4180 CSV: quoted fields may hold commas, quotes ("") and line breaks. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        field += '"';
        index++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"' && field === '') quoted = true;
    else if (char === ',') {
      record.push(field);
      field = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[index + 1] === '\n') index++;
      record.push(field);
      if (record.some((value) => value !== '')) records.push(record);
      record = [];
      field = '';
    } else field += char;
  }
  if (quoted) throw new Error('CSV ends inside a quoted field');
  record.push(field);
  if (record.some((value) => value !== '')) records.push(record);
  return records;
}

/** The rows of a JSON array of objects, or of a CSV file whose header names the five columns. */
export function parseSupplierFile(text: string): unknown[] {
  if (text.trimStart().startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new Error(`invalid JSON: ${(error as Error).message}`);
    }
    if (!Array.isArray(parsed)) throw new Error('a JSON supplier file must be an array of objects');
    return parsed;
  }
  const [header, ...records] = parseCsv(text);
  const names = (header ?? []).map((name) => name.trim().toLowerCase());
  const missing = columns.filter((column) => !names.includes(column));
  if (missing.length > 0) throw new Error(`the CSV header must name ${columns.join(',')}; missing ${missing.join(', ')}`);
  return records.map((record) => Object.fromEntries(names.map((name, index) => [name, record[index] ?? ''])));
}

/** A valid supplier, or the reason the row is refused. */
export function validateSupplier(raw: unknown): SupplierInput | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'not an object';
  const row = raw as Record<string, unknown>;
  for (const column of columns) {
    if (column === 'url' && row.url === undefined) continue;
    if (typeof row[column] !== 'string') return `${column} must be a string`;
  }
  const supplier: SupplierInput = {
    id: (row.id as string).trim(),
    // In NFC, as the list's wildcard filters read theirs (canonicalText).
    name: canonicalText((row.name as string).trim()),
    url: canonicalText(((row.url as string | undefined) ?? '').trim()),
    country: (row.country as string).trim().toUpperCase(),
    category: (row.category as string).trim().toUpperCase(),
  };
  const idParts = /^([A-Z]{2})-([0-9]{1,10})-([A-Z]{3})$/.exec(supplier.id);
  if (!idParts) return 'id must look like <CC>-<number>-<CAT>, e.g. GB-1042-ACC';
  if (!isCountryCode(supplier.country)) return `country ${supplier.country} is not an ISO 3166-1 alpha-2 code of the spec`;
  if (!(supplierCategoryCodes as string[]).includes(supplier.category)) return `category must be one of ${supplierCategoryCodes.join(' ')}`;
  if (idParts[1] !== supplier.country || idParts[3] !== supplier.category) return `id ${supplier.id} does not match country ${supplier.country} and category ${supplier.category}`;
  const nameProblem = textProblem(supplier.name, { maxLength: limits.nameLengthMax, kind: 'name' });
  if (nameProblem) return `name ${nameProblem}`;
  if (supplier.url && !isWebUrl(supplier.url)) return 'url must be an http or https URL';
  return supplier;
}

function isWebUrl(text: string): boolean {
  if (text.length > limits.stringLengthMax) return false;
  const url = parsedUrl(text);
  return url !== null && (url.protocol === 'https:' || url.protocol === 'http:');
}

/** Inserts new suppliers and updates changed ones; returns how many of each. */
export async function upsertSuppliers(db: Queryable, suppliers: SupplierInput[]): Promise<{ inserted: number; updated: number }> {
  let inserted = 0;
  let updated = 0;
  for (let start = 0; start < suppliers.length; start += upsertBatchRows) {
    const batch = suppliers.slice(start, start + upsertBatchRows);
    const rows = await db.query<{ inserted: boolean }>(
      `INSERT INTO suppliers (id, name, url, country, category)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, url = EXCLUDED.url, country = EXCLUDED.country, category = EXCLUDED.category, imported_at = now()
         WHERE (suppliers.name, suppliers.url, suppliers.country, suppliers.category) IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.url, EXCLUDED.country, EXCLUDED.category)
       RETURNING (xmax = 0) AS inserted`,
      columns.map((column) => batch.map((supplier) => supplier[column])),
    );
    for (const row of rows) row.inserted ? inserted++ : updated++;
  }
  return { inserted, updated };
}

const suppliersImport: Command = {
  name: 'suppliers import',
  summary: 'insert or update suppliers from a JSON array or a CSV file (header id,name,url,country,category)',
  positionals: 1,
  async run(context, _options, positionals) {
    const file = positionals[0]!; // runCli refuses a command line without it (Command.positionals)
    const rows = parseSupplierFile(readBounded(file));
    if (rows.length > limits.supplierImportRowsMax) throw new Error(`${rows.length} rows, more than ${limits.supplierImportRowsMax}`);
    const valid: SupplierInput[] = [];
    const rejected: RejectedRow[] = [];
    const seen = new Map<string, number>();
    rows.forEach((raw, index) => {
      const result = validateSupplier(raw);
      const rawId = typeof (raw as { id?: unknown })?.id === 'string' ? ((raw as { id: string }).id) : null;
      if (typeof result === 'string') return void rejected.push({ row: index + 1, id: rawId, reason: result });
      const first = seen.get(result.id);
      if (first !== undefined) return void rejected.push({ row: index + 1, id: result.id, reason: `duplicate of row ${first}` });
      seen.set(result.id, index + 1);
      valid.push(result);
    });
    const { inserted, updated } = await context.db.transaction((tx) => upsertSuppliers(tx, valid));
    return {
      file,
      rows: rows.length,
      inserted,
      updated,
      unchanged: valid.length - inserted - updated,
      rejected_count: rejected.length,
      rejected: rejected.slice(0, rejectedListedMax),
    };
  },
};

export const commands: Command[] = [suppliersImport];
