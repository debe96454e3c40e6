import { Type, type Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { App } from '../../app.js';
import type { AppContext } from '../../context.js';
import {
  completeThreeDsReturn, createTransaction, isAdminType, listTransactionIds, loadTransactionViews, type Actor, type TransactionInput, type TransactionJson,
  type TransactionType, IdempotencyKeyTakenError, StalePrincipalError,
} from '../../domain/transactions/index.js';
import { answerToStore, finishDeferred, markClaimed, markStored, noteTransactionOnKey } from '../../http/idempotency.js';
import { principalOf, requireAccess, requireAccessConfirmedByRoute } from '../../http/auth.js';
import { invalidId } from '../../http/errors.js';
import { localeOf, normaliseLanguage, translate } from '../../i18n/catalogue.js';
import { escapeHtml } from '../hosted/html.js';
import { threeDsReturnFrameAncestors } from '../../http/security-headers.js';
import { errorResponses, htmlResponse, noCredential, siteApiErrors } from '../../http/openapi.js';
import {
  ItemParams, SiteParams, apiPrefix, integerIds, listValues, pageRequest, parseItemId, publishedRange, setPaginationHeaders, statementDateOf,
} from '../../http/pagination.js';
import { TransactionCreateBody, TransactionListQuery, transactionSearchFilters, TransactionSchema, transactionCreateDescription, type TransactionCreateBodyWire } from './schemas.js';
import { decodedRedirect } from '../../domain/redirect-url.js';

/** Wire names → domain input, once, here. RO fields in the body are ignored. */
function toInput(body: TransactionCreateBodyWire, ip: string): TransactionInput {
  return {
    type: body.transaction_types as TransactionType,
    channelId: body.channels,
    currency: body.currencies,
    total: body.total,
    bookings: body.bookings?.map((item) => ({ id: item.id, currency: item.currencies, total: item.total })),
    linkedId: body.linked_id,
    token: body.token,
    language: body.language,
    payeeName: body.payee_name,
    payeeSurname: body.payee_surname,
    payeeEmail: body.payee_email,
    country: body.countries,
    psp: body.psp,
    paymentMethod: body.payment_methods,
    ipAddress: body.ip_address ?? ip,
    attempt3ds: body.attempt_3ds,
    // Sent "UTF-8 URL-encoded" as the spec allows, it is kept decoded; one that cannot be
    // followed either way goes on as sent, for the payments core to refuse in its words.
    redirectUrl: body.redirect_url === undefined ? undefined : decodedRedirect(body.redirect_url) ?? body.redirect_url,
    allocations: body.allocations,
  };
}

/**
 * How a create request ended: created, answered with another request's outcome, refused as stale
 * (StalePrincipalError), or its key freed from a request that died having done nothing (to run again).
 */
type CreateOutcome = { transaction: TransactionJson } | 'replayed' | 'stale' | 'freed';

function answerWith(reply: FastifyReply, transaction: TransactionJson): FastifyReply {
  return reply.code(201).header('location', transaction._links.self[0]!.href).type('application/json; charset=utf-8');
}

export async function transactionRoutes(app: App, context: AppContext): Promise<void> {
  const auth = { db: context.db, jwtSecret: context.config.secrets.jwtSecret };
  const access = requireAccess(auth);
  const base = `${apiPrefix}/transactions`;
  const tags = ['Transactions'];

  // Schemas typed loosely here: the full Transaction schema is too deep for inference, and the
  // body is mapped to the domain input (typed) right away.
  const createSchema: FastifySchema = { operationId: 'createTransaction', summary: 'Create a transaction (201 for every recorded attempt, failed ones included)', description: transactionCreateDescription, tags, params: SiteParams, body: TransactionCreateBody, response: { 201: { ...TransactionSchema, headers: { Location: Type.String({ description: 'The URL of the new transaction' }) } }, ...siteApiErrors } };
  // The Idempotency-Key is claimed by the attempt's own database transaction (issue 7: one
  // round trip and one commit less than claiming it first); chargeback records, which have no
  // attempt, claim it before they run. A remembered principal is confirmed by the attempt's
  // look-up too (requireAccessConfirmedByRoute: the credential epoch read with what the request
  // names); an answer given without an attempt confirms it first.
  const createAccess = requireAccessConfirmedByRoute(auth);
  const createOptions = {
    onRequest: createAccess.hook,
    schema: createSchema,
    config: { idempotencyClaimedByRoute: true, idempotencyEffectNoted: true },
    // Thrown on, the error reaches the app's error handler; a refusal of the credential replaces it.
    errorHandler: async (error: Error, request: FastifyRequest) => {
      await createAccess.confirm(request);
      throw error;
    },
  };
  app.post(base, createOptions, async (request, reply) => {
    const input = toInput(request.body as TransactionCreateBodyWire, request.ip);
    const deferred = request.idempotencyDeferred;
    // A replayed answer that showed no outcome reads the transaction as it is now (OutcomeOf).
    const outcomeOf = async (transactionId: number): Promise<string | undefined> => {
      const [transaction] = await loadTransactionViews(context.db, context.config, principalOf(request).siteId, [transactionId]);
      if (!transaction) return undefined;
      answerWith(reply, transaction);
      return reply.serialize(transaction) as string;
    };
    if (isAdminType(input.type)) {
      // A chargeback record has no look-up to check the principal with.
      await createAccess.confirm(request);
      if (await finishDeferred(context, request, reply, outcomeOf)) return reply;
    }
    // The answer, serialised by the route's schema and stored with the settlement (answerToStore).
    let storedBody: string | undefined;
    const answer = (transaction: TransactionJson) => {
      answerWith(reply, transaction);
      storedBody = reply.serialize(transaction) as string;
      return answerToStore(request, reply, storedBody);
    };
    const actorOf = (): Actor => {
      const principal = principalOf(request);
      const epoch = createAccess.epochToConfirm(request);
      return {
        siteId: principal.siteId,
        userId: principal.userId,
        source: 'api',
        isPlatformAdmin: principal.isPlatformAdmin,
        ...(deferred && !request.idempotency ? { idempotency: { key: deferred.key, requestHash: deferred.requestHash, onClaimed: () => markClaimed(request), answer } } : {}),
        ...(epoch !== undefined ? { principalEpoch: { epoch, confirmed: () => createAccess.confirmed(request) } } : {}),
        onAdminRecorded: (tx, transactionId) => noteTransactionOnKey(tx, request, transactionId),
      };
    };
    // Refused before the claim committed (or the key is another request's): the key is claimed
    // now so the refusal is stored, or the other request's outcome answers. A principal not yet
    // confirmed is confirmed first: a revoked credential's refusal is never stored for the key.
    const createOrFinish = async (): Promise<CreateOutcome> => {
      try {
        return { transaction: await createTransaction(context, actorOf(), input) };
      } catch (error) {
        if (error instanceof StalePrincipalError) return 'stale';
        await createAccess.confirm(request);
        // Held by a request that died having done nothing, the key is freed instead: run again.
        const keyTaken = error instanceof IdempotencyKeyTakenError;
        if (await finishDeferred(context, request, reply, outcomeOf, { keyTaken })) return 'replayed';
        if (keyTaken) return 'freed';
        throw error;
      }
    };
    let outcome = await createOrFinish();
    if (outcome === 'stale') {
      // A credential changed since the principal was remembered; nothing was written. Answered as
      // requireAccess would answer the request now: refused, or run as the principal is now
      // (confirmed: the second run cannot find it stale).
      await createAccess.confirm(request, { stale: true });
      outcome = await createOrFinish();
      if (outcome === 'stale') throw new Error('a confirmed principal was found stale');
    }
    // The key's request died having done nothing (finishDeferred): this one runs now, its attempt
    // claiming the key. Its principal is confirmed; a live holder is waited for, never freed.
    if (outcome === 'freed') outcome = await createOrFinish();
    if (outcome === 'stale' || outcome === 'freed') throw new Error(`the Idempotency-Key's request ran again and was ${outcome} again`);
    if (outcome === 'replayed') return reply;
    const { transaction } = outcome;
    if (storedBody !== undefined) {
      // Committed with the settlement: onSend must not store it again.
      markStored(request);
      return reply.send(storedBody);
    }
    return answerWith(reply, transaction).send(transaction);
  });

  const listSchema: FastifySchema = { operationId: 'listTransactions', summary: 'List transactions', tags, params: SiteParams, querystring: TransactionListQuery, response: { 200: Type.Array(TransactionSchema), ...siteApiErrors } };
  app.get(base, { onRequest: access, schema: listSchema }, async (request, reply) => {
    const principal = principalOf(request);
    const query = request.query as Static<typeof TransactionListQuery>;
    const page = pageRequest(query, transactionSearchFilters);
    const { ids, total } = await listTransactionIds(context.db, {
      siteId: principal.siteId,
      page,
      orderby: query.orderby ?? 'id',
      filters: {
        include: integerIds('include', query.include),
        exclude: integerIds('exclude', query.exclude),
        ...publishedRange(query),
        status: listValues('status', query.status as string[] | undefined),
        channels: integerIds('channels', query.channels),
        channelsExclude: integerIds('channels_exclude', query.channels_exclude),
        binNumber: listValues('bin_number', query.bin_number as string[] | undefined),
        countries: listValues('countries', query.countries as string[] | undefined),
        currencies: listValues('currencies', query.currencies as string[] | undefined),
        currenciesExclude: listValues('currencies_exclude', query.currencies_exclude as string[] | undefined),
        lastFourDigits: listValues('last_four_digits', query.last_four_digits as string[] | undefined),
        paymentMethods: listValues('payment_methods', query.payment_methods as string[] | undefined),
        transactionTypes: listValues('transaction_types', query.transaction_types as string[] | undefined),
        payeeSurname: query.payee_surname,
        payeeEmail: query.payee_email,
        reference: query.reference as string[] | undefined,
        statementDateAfter: statementDateOf('statement_date_after', query.statement_date_after),
        statementDateBefore: statementDateOf('statement_date_before', query.statement_date_before),
      },
    });
    setPaginationHeaders(reply, request, { baseUrl: context.config.baseUrl, total, page });
    return loadTransactionViews(context.db, context.config, principal.siteId, ids);
  });

  const itemSchema: FastifySchema = { operationId: 'getTransaction', summary: 'Get a transaction', tags, params: ItemParams, response: { 200: TransactionSchema, ...siteApiErrors } };
  app.get(`${base}/:id`, { onRequest: access, schema: itemSchema }, async (request) => {
    const principal = principalOf(request);
    const id = parseItemId((request.params as { id: string }).id);
    const [transaction] = id === undefined ? [] : await loadTransactionViews(context.db, context.config, principal.siteId, [id]);
    if (!transaction) throw invalidId('transaction ID');
    return transaction;
  });

  // No script, no style, no form: one paragraph of text.
  const threeDsReturnPolicy = `default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors ${threeDsReturnFrameAncestors}`;
  // The cardholder's browser returns here from the 3DS challenge (no credentials: the uuid is
  // unguessable and the outcome comes from the processor, never from the browser).
  const threeDsReturnSchema = {
    operationId: 'returnFromThreeDSecure', summary: "The cardholder's browser back from 3-D Secure: settles the transaction from the processor's record",
    tags,
    security: noCredential,
    params: Type.Object({ uuid: Type.String({ maxLength: 64 }) }),
    response: {
      200: htmlResponse('No redirect_url: a page saying whether the payment completed'),
      303: {
        description: "To the transaction's redirect_url, with transaction_id and status in its query",
        headers: { location: Type.String({ description: 'The redirect_url with transaction_id and status' }) },
        type: 'null',
      },
      ...errorResponses(400, 404, 429),
    },
  };
  // Loaded inside the challenge iframe (the integrator's, or the one in our modal frame): the
  // redirect and the page may be framed by any http(s) page (threeDsReturnFrameAncestors). Under
  // the JSON answers' frame-ancestors 'none' an integrator's frame showed "refused to connect"
  // where the page says how the payment ended.
  app.get('/3ds/return/:uuid', { schema: threeDsReturnSchema }, async (request, reply) => {
    const result = await completeThreeDsReturn(context, request.params.uuid);
    if (!result) throw invalidId('transaction');
    reply.header('content-security-policy', threeDsReturnPolicy);
    if (result.redirectTo) return reply.redirect(result.redirectTo, 303);
    // The cardholder's page, in the transaction's language (it was English whatever the payer's).
    const language = normaliseLanguage(result.language);
    const t = (key: 'paymentSuccess' | 'paymentAuthenticating' | 'paymentNotCompleted' | 'closeThisWindow') => escapeHtml(translate(language, `pages.${key}`));
    const finished = result.status === 'complete' ? t('paymentSuccess') : result.status === 'pending' ? t('paymentAuthenticating') : t('paymentNotCompleted');
    return reply
      .type('text/html; charset=utf-8')
      .send(`<!doctype html><html lang="${localeOf(language)}"><head><meta charset="utf-8"><title>3-D Secure</title></head><body><p>${finished}</p><p>${t('closeThisWindow')}</p></body></html>`);
  });
}
