import { Type, type Static } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import { limits } from '../../limits.js';
import { basisPointsWhole } from '../money.js';
import { allocationOperators, type AllocationRequest } from './plan.js';
import { calendarDatePattern, currencyCodePattern } from '../patterns.js';
import { Text } from '../text.js';

/**
 * A percent allocation's `total` is basis points of the transaction total, so at most
 * basisPointsWhole (100 %); a flat one is minor units up to limits.amountCentsMax. In the schema so
 * the OpenAPI document says it (planAllocations checks it again for callers without the schema).
 */
export const percentTotalRule = {
  if: { properties: { operator: { const: 'percent' } }, required: ['operator'] },
  then: { properties: { total: { maximum: basisPointsWhole } } },
};

/**
 * The spec's "Allocation input item" as a schema (the transactions route validates bodies with
 * it) and its mapping to domain words. `operator` defaults to `flat`; `currencies` to the
 * transaction currency.
 */
export const AllocationInputSchema = Type.Object(
  {
    title: Type.Optional(Text({ maxLength: limits.nameLengthMax, kind: 'line' })),
    reference: Type.Optional(Text({ maxLength: limits.nameLengthMax, kind: 'line' })),
    description: Type.Optional(Text({ maxLength: limits.stringLengthMax, kind: 'line' })),
    channels: Type.Integer({ minimum: 1 }),
    currencies: Type.Optional(Type.String({ pattern: currencyCodePattern })),
    total: Type.Integer({
      minimum: 1,
      maximum: limits.amountCentsMax,
      description: `Minor units (operator flat), or basis points of the transaction total (operator percent: at most ${basisPointsWhole}, 100 %)`,
    }),
    operator: Type.Optional(Type.Union(allocationOperators.map((operator) => Type.Literal(operator)))),
    statement_date: Type.Optional(Type.String({ pattern: calendarDatePattern })),
  },
  { additionalProperties: false, ...percentTotalRule },
);
export type AllocationInputWire = Static<typeof AllocationInputSchema>;

export const AllocationInputListSchema = Type.Array(AllocationInputSchema, { maxItems: limits.allocationsPerTransactionMax });

// Checked by Ajv, as the routes check bodies: TypeBox's Value.Check builds patterns without the
// `u` flag, so the text patterns' `\p{…}` classes (domain/text.ts) would mean something else there.
const allocationInputListCheck = new Ajv({ strict: false }).compile(AllocationInputListSchema);

/** Whether `items` is a list of allocation input items (for callers that did not come through a route schema). */
export function isAllocationInputList(items: unknown): items is AllocationInputWire[] {
  return allocationInputListCheck(items);
}

export function allocationRequestOf(item: AllocationInputWire): AllocationRequest {
  return {
    channelId: item.channels,
    ...(item.currencies !== undefined ? { currency: item.currencies } : {}),
    value: item.total,
    operator: item.operator ?? 'flat',
    ...(item.title !== undefined ? { title: item.title } : {}),
    ...(item.reference !== undefined ? { reference: item.reference } : {}),
    ...(item.description !== undefined ? { description: item.description } : {}),
    ...(item.statement_date !== undefined ? { statementDate: item.statement_date } : {}),
  };
}

/** The spec's "Allocation as returned". */
export const AllocationOutputSchema = Type.Object({
  id: Type.Integer(),
  value: Type.Integer(),
  total: Type.Integer(),
  channels: Type.Integer(),
  currencies: Type.String(),
  operator: Type.Union(allocationOperators.map((operator) => Type.Literal(operator))),
  reversed: Type.Boolean(),
  debit: Type.Object({ currencies: Type.String(), total: Type.Integer() }),
  credit: Type.Object({ currencies: Type.String(), total: Type.Integer() }),
});

/** One item of a transaction's `forex` (docs/forex.md). */
export const ForexItemSchema = Type.Object({ currencies: Type.String(), total: Type.Integer(), rate: Type.Number(), quote_id: Type.Integer() });
