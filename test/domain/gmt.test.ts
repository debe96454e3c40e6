import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gmtDateTime, gmtDateTimeOfJson } from '../../src/domain/gmt.js';

describe('GMT datetimes', () => {
  it('prints a Date as the spec datetime, in GMT', () => {
    expect(gmtDateTime(new Date('2026-11-21T17:11:06.987Z'))).toBe('2026-11-21 17:11:06');
  });

  it("cuts PostgreSQL's JSON text of a UTC timestamptz to the same shape", () => {
    expect(gmtDateTimeOfJson('2026-11-21T17:11:06.123456+00:00')).toBe('2026-11-21 17:11:06');
    expect(gmtDateTimeOfJson('2026-11-21T17:11:06+00:00')).toBe('2026-11-21 17:11:06');
    expect(gmtDateTimeOfJson('2026-11-21T17:11:06.5+00')).toBe('2026-11-21 17:11:06');
  });

  it('converts any other offset to GMT (a server whose TimeZone is not UTC)', () => {
    expect(gmtDateTimeOfJson('2026-11-21T01:30:00.25+02:00')).toBe('2026-11-20 23:30:00');
    expect(gmtDateTimeOfJson('2026-12-31T21:00:00-05:30')).toBe('2027-01-01 02:30:00');
  });

  it('agrees with gmtDateTime for every instant, at any offset PostgreSQL may write', () => {
    const pad = (value: number, width = 2) => String(Math.abs(value)).padStart(width, '0');
    fc.assert(
      fc.property(fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2999-12-31T23:59:59Z'), noInvalidDate: true }), fc.integer({ min: -12 * 60, max: 14 * 60 }), (date, offsetMinutes) => {
        // The instant written as a PostgreSQL session at that offset writes it.
        const local = new Date(date.getTime() + offsetMinutes * 60_000);
        const sign = offsetMinutes < 0 ? '-' : '+';
        const text = `${local.toISOString().slice(0, 23)}${sign}${pad(Math.trunc(offsetMinutes / 60))}:${pad(offsetMinutes % 60)}`;
        expect(gmtDateTimeOfJson(text)).toBe(gmtDateTime(date));
      }),
    );
  });
});
