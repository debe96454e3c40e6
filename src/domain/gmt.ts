/** GMT `YYYY-MM-DD HH:MM:SS`, the spec's datetime format. */
export function gmtDateTime(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

// PostgreSQL's JSON text of a timestamptz in a session whose TimeZone is UTC (the embedded
// server's, and the usual setting): `2026-11-21T17:11:06.123456+00:00`, fraction optional.
const utcJsonTimestamp = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?\+00(?::00)?$/;

/**
 * gmtDateTime of a timestamptz that PostgreSQL wrote as JSON text (`to_json` of a row). A UTC
 * timestamp is cut to shape, a tenth of the cost of parsing it into a Date and printing that,
 * twice per booking answer (issue 7); any other offset goes through Date.
 */
export function gmtDateTimeOfJson(text: string): string {
  return utcJsonTimestamp.test(text) ? `${text.slice(0, 10)} ${text.slice(11, 19)}` : gmtDateTime(new Date(text));
}

/**
 * A real calendar date written `YYYY-MM-DD`, of year `yearMin` or later. The default, 1, is the
 * first year PostgreSQL's `date` reads in this form: `0000-01-01` is out of its range, and a date
 * passed on to a `::date` cast must not be (a 500 instead of the caller's 400).
 */
export function isCalendarDate(text: string, yearMin = 1): boolean {
  return calendarDateProblem(text, yearMin) === null;
}

/**
 * Why `text` is not such a date, or null when it is one. A well-formed date naming a day that does
 * not exist (2027-02-30) is told so, not told the format it already has; a real day before
 * `yearMin` is told the bound.
 */
export function calendarDateProblem(text: string, yearMin = 1): string | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return 'must be a date formatted Y-m-d';
  return calendarDayProblem(Number(match[1]), Number(match[2]), Number(match[3]), yearMin);
}

/** calendarDateProblem of a date already split in numbers (the list filters parse ISO 8601 themselves). */
export function calendarDayProblem(year: number, month: number, day: number, yearMin = 0): string | null {
  if (!Number.isInteger(month) || month < 1 || month > 12) return `names a month that does not exist (${month})`;
  if (!isCalendarDay(year, month, day)) return `names a day that does not exist (${monthName(year, month)} has ${daysInMonth(year, month)} days)`;
  if (year < yearMin) return `must be ${String(yearMin).padStart(4, '0')}-01-01 or later`;
  return null;
}

function monthName(year: number, month: number): string {
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}`;
}

function daysInMonth(year: number, month: number): number {
  const probe = new Date(0);
  probe.setUTCFullYear(year, month, 0);
  return probe.getUTCDate();
}

/**
 * Whether year-month-day names a day of the (proleptic Gregorian) calendar: Date rolls 2027-02-30
 * over to March 2, so each parser checks its numbers here rather than trusting Date. Through
 * setUTCFullYear, not Date.UTC, which reads years 0-99 as 1900-1999.
 */
export function isCalendarDay(year: number, month: number, day: number): boolean {
  const probe = new Date(0);
  probe.setUTCFullYear(year, month - 1, day);
  return probe.getUTCFullYear() === year && probe.getUTCMonth() === month - 1 && probe.getUTCDate() === day;
}

/** Whether hours:minutes:seconds is a time of day as written (Date takes 24:00 as the next day). */
export function isClockTime(hours: number, minutes: number, seconds: number): boolean {
  return hours >= 0 && hours <= 23 && minutes >= 0 && minutes <= 59 && seconds >= 0 && seconds <= 59;
}
