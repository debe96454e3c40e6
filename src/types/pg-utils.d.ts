// pg's own parameter encoding (pg/lib/utils.js, CommonJS): the text, or the bytes, the extended
// protocol sends for a value. storage/db.ts writes the same text as a literal.
declare module 'pg/lib/utils.js' {
  const utils: { prepareValue(value: unknown): string | Buffer | null };
  export default utils;
}
