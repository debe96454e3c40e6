import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.js';
import { WhereBuilder, integerIds, isoCalendarDate, isoInstant, listValues, orderBySql, parseItemId, wildcardPattern } from '../../src/http/pagination.js';

describe('list helpers', () => {
  it('merges repeated and comma-separated values, dropping blanks and duplicates', () => {
    expect(listValues('x', ['a,b', 'b', ' c ,', ''])).toEqual(['a', 'b', 'c']);
    expect(listValues('x', undefined)).toBeUndefined();
    expect(() => listValues('x', [Array.from({ length: 101 }, (_, i) => String(i)).join(',')])).toThrow(ApiError);
    expect(integerIds('include', ['3,1', '2'])).toEqual([3, 1, 2]);
  });

  it('reads ISO 8601 instants as GMT unless an offset is given, refusing impossible dates', () => {
    expect(isoInstant('after', '2026-03-01')?.toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(isoInstant('after', '2026-03-01T10:20')?.toISOString()).toBe('2026-03-01T10:20:00.000Z');
    expect(isoInstant('after', '2026-03-01T10:20:30+0200')?.toISOString()).toBe('2026-03-01T08:20:30.000Z');
    expect(isoInstant('after', '2026-03-01 10:20:30Z')?.toISOString()).toBe('2026-03-01T10:20:30.000Z');
    for (const bad of ['2026-02-30', '2026-13-01', '2026-01-01T24:00:00', '2026-01-01T10:60']) {
      expect(() => isoInstant('after', bad), bad).toThrow(ApiError);
    }
    expect(isoCalendarDate('date_before', '2026-05-06T23:00:00Z')).toBe('2026-05-06');
  });

  it('turns wildcard filters into ILIKE patterns that treat % and _ literally', () => {
    expect(wildcardPattern('beach')).toBe('%beach%');
    expect(wildcardPattern('Beach*')).toBe('Beach%');
    expect(wildcardPattern('100%_x')).toBe('%100\\%\\_x%');
  });

  it('only ever puts values into placeholders', () => {
    const where = new WhereBuilder().and`a = ${"x' OR 1=1"}`.andIf(undefined, (w) => w.and`never`).andIf([1, 2], (w, ids) => w.and`id = ANY(${ids})`);
    expect(where.sql).toBe('WHERE (a = $1) AND (id = ANY($2))');
    expect(where.values).toEqual(["x' OR 1=1", [1, 2]]);
    expect(new WhereBuilder().sql).toBe('');
  });

  it('orders by whitelisted columns with a stable id tiebreak', () => {
    expect(orderBySql({ id: 'b.id', name: 'b.name' }, 'name', 'desc', 'b.id')).toBe('b.name DESC, b.id DESC');
    expect(orderBySql({ id: 'b.id' }, 'id', 'asc', 'b.id')).toBe('b.id ASC');
    expect(() => orderBySql({ id: 'b.id' }, 'password', 'asc', 'b.id')).toThrow(ApiError);
  });

  it('parses item ids strictly', () => {
    expect(parseItemId('42')).toBe(42);
    for (const bad of ['0', '-1', '01', '1.5', 'abc', '1e3', '9999999999999999']) expect(parseItemId(bad), bad).toBeUndefined();
  });
});
