import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { App } from '../../app.js';
import type { AppContext } from '../../context.js';
import {
  channelForexFeed, channelFrom, channelFromRow, channelSelect, createChannel, deleteChannel, loadChannel, receiptLabelOf, settlementCurrencies, updateChannel,
  type ChannelPatch, type ChannelRecord, type ChannelRow,
} from '../../domain/channels.js';
import { siteApiErrors } from '../../http/openapi.js';
import { requireAccess, principalOf, type Principal } from '../../http/auth.js';
import { conflict, invalidId, invalidParam } from '../../http/errors.js';
import { createdForKey, type ResourceAnswer } from '../../http/idempotency.js';
import {
  ItemParams, SiteParams, WhereBuilder, apiPrefix, codePointOrder, fetchPage, integerIds, listValues, orderBySql, pageRequest, parseItemId, setPaginationHeaders, wildcardPattern, createdLocationHeader, siteApiUrl,
} from '../../http/pagination.js';
// Forex integration (issue 4): forex_feed.rates come from the rates provider.
import { channelRatesLoader, type ForexFeedRate } from '../../domain/forex/index.js';
import { ChannelCreateBody, ChannelListQuery, channelSearchFilters, ChannelSchema, ChannelUpdateBody, type ChannelWire } from './schemas.js';

const tags = ['Channels'];
const errors = siteApiErrors;

const DeletedSchema = Type.Object({ deleted: Type.Boolean() });

/** Sort keys of the list, wire name → SQL. */
const orderColumns: Record<string, string> = {
  id: 'c.id',
  name: codePointOrder('c.name'),
  slug: codePointOrder('c.slug'),
  currencies: codePointOrder('c.currency'),
  account_mode: codePointOrder('c.account_mode'),
  external_id: codePointOrder('c.external_id'),
};

export async function channelRoutes(app: App, context: AppContext): Promise<void> {
  const auth = { db: context.db, jwtSecret: context.config.secrets.jwtSecret };
  // Authentication runs on request, before body parsing and validation: no token is always 401.
  const read = requireAccess(auth);
  const adminWrite = requireAccess(auth, { roles: ['member_admin'] });
  const base = `${apiPrefix}/channels`;

  app.get(base, { onRequest: read, schema: { operationId: 'listChannels', summary: 'List channels', tags, params: SiteParams, querystring: ChannelListQuery, response: { ...errors, 200: Type.Array(ChannelSchema) } } }, async (request, reply) => {
    const principal = principalOf(request);
    const query = request.query;
    const page = pageRequest(query, channelSearchFilters);
    const where = new WhereBuilder().and`c.site_id = ${principal.siteId}`.and`c.deleted_at IS NULL`;
    where
      .andIf(integerIds('include', query.include), (w, ids) => w.and`c.id = ANY(${ids}::bigint[])`)
      .andIf(integerIds('exclude', query.exclude), (w, ids) => w.and`c.id <> ALL(${ids}::bigint[])`)
      .andIf(listValues('account_mode', query.account_mode), (w, modes) => w.and`c.account_mode = ANY(${modes}::text[])`)
      .andIf(listValues('account_type', query.account_type), (w, types) => w.and`c.account_type = ANY(${types}::text[])`)
      .andIf(listValues('statement_period', query.statement_period), (w, periods) => w.and`c.statement_period = ANY(${periods}::text[])`)
      .andIf(listValues('currencies', query.currencies), (w, codes) => w.and`c.currency::text ILIKE ANY(${codes.map((code) => `%${code}%`)}::text[])`)
      .andIf(query.external_id, (w, externalId) => w.and`c.external_id = ${externalId}`)
      .andIf(query.name, (w, name) => w.and`c.name ILIKE ${wildcardPattern(name)}`);
    const result = await fetchPage<ChannelRow>(context.db, {
      select: channelSelect,
      from: channelFrom,
      where,
      orderBy: orderBySql(orderColumns, query.orderby ?? 'id', page.order, 'c.id'),
      page,
    });
    setPaginationHeaders(reply, request, { baseUrl: context.config.baseUrl, total: result.total, page });
    const ratesOf = channelRatesLoader(context);
    return Promise.all(result.rows.map(async (row) => {
      const channel = channelFromRow(row);
      return channelToWire(channel, principal, await ratesOf(channel));
    }));
  });

  app.get(`${base}/:id`, { onRequest: read, schema: { operationId: 'getChannel', summary: 'Get a channel', tags, params: ItemParams, response: { ...errors, 200: ChannelSchema } } }, async (request) => {
    const principal = principalOf(request);
    const channel = await findChannel(context, principal, request.params.id);
    return channelToWire(channel, principal, await channelRatesLoader(context)(channel));
  });

  // A key left in flight after the channel was created is answered with the channel as it is now.
  const createdChannel: ResourceAnswer = async (request, reply, id) => {
    const principal = principalOf(request);
    const channel = await loadChannel(context.db, { siteId: principal.siteId, id });
    return channel && (answerCreated(reply, context, principal, channel.id).serialize(channelToWire(channel, principal, await channelRatesLoader(context)(channel))) as string);
  };
  const createOptions = {
    onRequest: adminWrite,
    config: { idempotencyResource: createdChannel, idempotencyEffectNoted: true },
    schema: { operationId: 'createChannel', summary: 'Create a channel (member_admin)', tags, params: SiteParams, body: ChannelCreateBody, response: { ...errors, 201: { ...ChannelSchema, headers: createdLocationHeader } } },
  };
  app.post(base, createOptions, async (request, reply) => {
    const principal = principalOf(request);
    const body = request.body;
    const fields: ChannelBodyFields = body;
    const input = { siteId: principal.siteId, name: body.name.trim(), currency: body.currencies, ...channelPatch(fields) };
    const channel = await createdForKey(context.db, request, (db) => createChannel(db, input), (created) => created.id);
    return answerCreated(reply, context, principal, channel.id).send(channelToWire(channel, principal, await channelRatesLoader(context)(channel)));
  });

  app.put(`${base}/:id`, { onRequest: adminWrite, schema: { operationId: 'updateChannel', summary: 'Update a channel (member_admin)', tags, params: ItemParams, body: ChannelUpdateBody, response: { ...errors, 200: ChannelSchema } } }, async (request) => {
    const principal = principalOf(request);
    const id = parseItemId(request.params.id);
    const body = request.body;
    const patch: ChannelPatch = { ...channelPatch(body), ...(body.name !== undefined ? { name: body.name.trim() } : {}), ...(body.currencies !== undefined ? { currency: body.currencies } : {}) };
    const result = id === undefined ? undefined : await context.db.transaction((tx) => updateChannel(tx, { siteId: principal.siteId, id, patch }));
    if (!result) throw invalidId('channel ID');
    if ('param' in result) throw invalidParam(result.param, result.message);
    return channelToWire(result, principal, await channelRatesLoader(context)(result));
  });

  app.delete(`${base}/:id`, { onRequest: adminWrite, schema: { operationId: 'deleteChannel', summary: 'Delete a channel without bookings (member_admin)', tags, params: ItemParams, response: { ...errors, 200: DeletedSchema } } }, async (request) => {
    const principal = principalOf(request);
    const id = parseItemId(request.params.id);
    const result = id === undefined ? 'not_found' : await context.db.transaction((tx) => deleteChannel(tx, { siteId: principal.siteId, id }));
    if (result === 'not_found') throw invalidId('channel ID');
    if (result === 'has_bookings') throw conflict('rest_channel_in_use', 'The channel has bookings, money movements or allocations planned to it (an authorisation not yet captured or voided). Delete its bookings first, or ask the operator to close the channel.');
    return { deleted: true };
  });
}

async function findChannel(context: AppContext, principal: Principal, rawId: string): Promise<ChannelRecord> {
  const id = parseItemId(rawId);
  const channel = id === undefined ? undefined : await loadChannel(context.db, { siteId: principal.siteId, id });
  if (!channel) throw invalidId('channel ID');
  return channel;
}

/** The writable optional fields both bodies share (a plain type keeps inference shallow). */
interface ChannelBodyFields {
  account_mode?: 'test' | 'draft';
  language?: string;
  primary_mail?: string;
  mail_bcc_transactional_mails?: boolean;
  mail_failures?: boolean;
  receipt_label?: string | null;
  external_id?: string;
  chargeback_mail?: string;
  vaultprovider_id?: string;
  vaultprovider_api_key?: string;
}

/** Optional writable fields of a create/update body, wire → domain (RO fields are dropped here). */
function channelPatch(body: ChannelBodyFields): ChannelPatch {
  const patch: ChannelPatch = {};
  if (body.account_mode !== undefined) patch.accountMode = body.account_mode;
  if (body.language !== undefined) patch.language = body.language;
  if (body.primary_mail !== undefined) patch.primaryMail = body.primary_mail;
  if (body.mail_bcc_transactional_mails !== undefined) patch.mailBccTransactionalMails = body.mail_bcc_transactional_mails;
  if (body.mail_failures !== undefined) patch.mailFailures = body.mail_failures;
  if (body.receipt_label !== undefined) patch.receiptLabel = body.receipt_label === null || body.receipt_label.trim() === '' ? null : body.receipt_label.trim();
  if (body.external_id !== undefined) patch.externalId = body.external_id;
  if (body.chargeback_mail !== undefined) patch.chargebackMail = body.chargeback_mail;
  if (body.vaultprovider_id !== undefined) patch.vaultproviderId = body.vaultprovider_id;
  if (body.vaultprovider_api_key !== undefined && !isMaskedSecret(body.vaultprovider_api_key)) patch.vaultproviderApiKey = body.vaultprovider_api_key;
  return patch;
}

/** 201 naming the new channel in `Location`, as the first answer and a replayed key's give it. */
function answerCreated(reply: FastifyReply, context: AppContext, principal: Principal, id: number): FastifyReply {
  return reply.code(201).header('location', siteApiUrl({ baseUrl: context.config.baseUrl, sitePath: principal.sitePath, collection: 'channels', id }));
}

/** Shows at most the last four characters of a stored provider key (none of a short one). */
export function maskSecret(secret: string): string {
  if (secret === '') return '';
  return secret.length >= 12 ? `****${secret.slice(-4)}` : '****';
}

/**
 * Whether a provider key sent in a body has the shape maskSecret gives it, which names no key: a
 * client that reads a channel and sends it back (PUT, or POST as a copy) sends the mask, and storing
 * it replaced the key with `****1234`. Such a value leaves the stored key as it is (none on create).
 */
function isMaskedSecret(value: string): boolean {
  return /^\*{4}([\s\S]{4})?$/.test(value);
}

/**
 * The Channel table on the wire. `channel_secret` is withheld from read-only users (it signs
 * payment requests); `vaultprovider_api_key` is always masked.
 */
export function channelToWire(channel: ChannelRecord, principal: Pick<Principal, 'readOnly'>, rates: Record<string, ForexFeedRate> = {}): ChannelWire {
  return {
    id: channel.id,
    uuid: channel.uuid,
    name: channel.name,
    slug: channel.slug,
    account_type: channel.accountType as ChannelWire['account_type'],
    account_mode: channel.accountMode,
    protection_type: channel.protectionType as ChannelWire['protection_type'],
    currencies: channel.currency,
    quote_code: channel.quoteCode ?? '',
    statement_period: channel.statementPeriod as ChannelWire['statement_period'],
    cardholder_present: channel.cardholderPresent,
    forex_feed: channelForexFeed(channel.currency, rates),
    language: channel.language,
    primary_mail: channel.primaryMail,
    mail_bcc_transactional_mails: channel.mailBccTransactionalMails,
    mail_failures: channel.mailFailures,
    receipt_label: receiptLabelOf(channel),
    server_to_server: channel.serverToServer,
    vaultprovider_id: channel.vaultproviderId,
    vaultprovider_api_key: maskSecret(channel.vaultproviderApiKey),
    beneficiary_id: channel.beneficiaryId,
    settlement_currency: channel.settlementCurrency ?? ((settlementCurrencies as readonly string[]).includes(channel.currency) ? channel.currency : null),
    external_id: channel.externalId,
    chargeback_mail: channel.chargebackMail,
    payout_minimum: channel.payoutMinimum,
    descriptor: channel.descriptor,
    channel_secret: principal.readOnly ? '' : channel.channelSecret,
    channel_status: channel.channelStatus as ChannelWire['channel_status'],
    suppliers: channel.suppliers,
  };
}
