import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../storage/db.js';
import type { CardBrand, ProcessorCard } from '../../processor/connector.js';
import { invalidId, invalidParam, noLiveProcessor } from '../../http/errors.js';
import { limits } from '../../limits.js';
import { isSandboxToken, testCardByPan, testCardBySandboxToken } from '../../processor/sandbox/test-cards.js';
import { cardTypeFromBin, issuerCountryFromBin } from './card-types.js';
import { fingerprintPan, openCaptureToken, openPan, sealCaptureToken, sealPan, captureTokenPrefix, type SealedPan, type VaultKeys } from './crypto.js';
import { isTestMode, noPaymentsReason } from '../channels.js';
import { assertCardAllowedInMode, assertCardDetailsValid, normalisePan } from './rules.js';

/** What vault functions need besides a database handle. */
export interface VaultDeps {
  keys: VaultKeys;
  now: () => Date;
}

export interface CardHolder {
  name: string | null;
  email: string | null;
  address: string | null;
  city: string | null;
  zip: string | null;
  country: string | null;
}

/** A vaulted card as the rest of the service sees it: never the PAN, never the CVV. */
export interface CardRecord {
  id: number;
  siteId: number;
  /** The channel the card was vaulted to. */
  channelId: number;
  /** Permanent vault token (32 alphanumerics), the vault redirect's `token`. */
  token: string;
  bin: string;
  lastFour: string;
  brand: CardBrand;
  issuerCountry: string | null;
  expiryMonth: number;
  expiryYear: number;
  /** Currency and account type of the channel it was vaulted to. */
  currency: string;
  accountType: string;
  isTestCard: boolean;
  holder: CardHolder;
  createdAt: Date;
  /** The CARD_KEYS key its data key is wrapped under (not secret: an id). */
  keyId: string;
}

export interface CaptureCardInput {
  siteId: number;
  channelId: number;
  /** As typed; spaces and dashes are ignored. */
  pan: string;
  expiryMonth: number;
  expiryYear: number;
  cvv: string;
  holder?: Partial<CardHolder>;
  /**
   * Whether this server's processor takes the processor's live mode (processor/index.ts
   * takesLiveMode). When it does not, a card for a channel not in test mode is refused before it
   * is stored: every payment it could make would be refused (409 rest_no_live_processor), so the
   * vault would only be holding a real card number for nothing.
   */
  takesLiveMode: boolean;
}

export interface CapturedCard {
  card: CardRecord;
  /** Short-lived (limits.cardTokenLifetimeSeconds) token carrying the sealed CVV. */
  cardToken: string;
  cardTokenExpiresAt: Date;
}

interface CardRow {
  id: number;
  site_id: number;
  channel_id: number;
  token: string;
  bin: string;
  last_four: string;
  brand: CardBrand;
  issuer_country: string | null;
  expiry_month: number;
  expiry_year: number;
  currency: string;
  account_type: string;
  is_test_card: boolean;
  holder_name: string | null;
  holder_email: string | null;
  holder_address: string | null;
  holder_city: string | null;
  holder_zip: string | null;
  holder_country: string | null;
  created_at: Date;
  key_id: string;
}

interface ChannelRow {
  id: number;
  currency: string;
  account_type: string;
  account_mode: string;
}

const cardColumns = `id, site_id, channel_id, token, bin, last_four, brand, issuer_country, expiry_month, expiry_year, currency,
  account_type, is_test_card, holder_name, holder_email, holder_address, holder_city, holder_zip, holder_country, created_at, key_id`;

function toCard(row: CardRow): CardRecord {
  return {
    id: row.id,
    siteId: row.site_id,
    channelId: row.channel_id,
    token: row.token,
    bin: row.bin,
    lastFour: row.last_four,
    brand: row.brand,
    issuerCountry: row.issuer_country?.trim() ?? null,
    expiryMonth: row.expiry_month,
    expiryYear: row.expiry_year,
    currency: row.currency.trim(),
    accountType: row.account_type,
    isTestCard: row.is_test_card,
    holder: {
      name: row.holder_name,
      email: row.holder_email,
      address: row.holder_address,
      city: row.holder_city,
      zip: row.holder_zip,
      country: row.holder_country?.trim() ?? null,
    },
    createdAt: row.created_at,
    keyId: row.key_id,
  };
}

const tokenAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const vaultTokenLength = 32;

/** 32 uniformly random alphanumerics (about 190 bits); rejection sampling avoids modulo bias. */
export function randomAlphanumeric(length: number): string {
  let out = '';
  // Each byte is accepted with probability 248/256, so four rounds are practically always enough.
  for (let round = 0; round < 16 && out.length < length; round++) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += tokenAlphabet[byte % 62];
    }
  }
  if (out.length !== length) throw new Error('random source failed');
  return out;
}

async function loadChannel(db: Queryable, siteId: number, channelId: number): Promise<ChannelRow> {
  const channel = await db.maybeOne<ChannelRow & Record<string, unknown>>(
    'SELECT id, currency, account_type, account_mode, channel_status FROM channels WHERE id = $1 AND site_id = $2 AND deleted_at IS NULL',
    [channelId, siteId],
  );
  if (!channel) throw invalidId('channel ID');
  const noPayments = noPaymentsReason({ accountMode: channel.account_mode, channelStatus: String(channel.channel_status) });
  if (noPayments !== null) throw invalidParam('channels', `The channel is ${noPayments} and takes no payments.`);
  return { ...channel, currency: channel.currency.trim() };
}

/**
 * Stores a card for a channel, or finds it again: the same PAN (fingerprint) entered again on the
 * same channel with the same expiry and holder fields reuses its record (and vault token), so a
 * customer re-entering a card does not multiply records. A stored card is never changed: a capture
 * with any other detail gets a record of its own, since nobody verified it, and the old vault token
 * and the capture tokens already issued go on paying with the details they were issued with
 * (migration 048). Likewise once the channel's currency or account type changed (migration 038).
 * Concurrency-safe (one upsert).
 */
async function storeCard(db: Queryable, deps: VaultDeps, channel: ChannelRow, input: { siteId: number; pan: string; expiryMonth: number; expiryYear: number; holder: Partial<CardHolder> }): Promise<CardRecord> {
  const { id } = await db.one<{ id: number }>(`SELECT nextval(pg_get_serial_sequence('cards', 'id'))::bigint AS id`);
  const sealed = sealPan(deps.keys, { siteId: input.siteId, cardId: id }, input.pan);
  // The brand and issuer country come from the six leading digits; only shownBinOf is kept.
  const brandBin = input.pan.slice(0, 6);
  const holder = input.holder;
  const row = await db.one<CardRow & Record<string, unknown>>(
    `INSERT INTO cards (id, site_id, channel_id, token, fingerprint, bin, last_four, brand, issuer_country, expiry_month, expiry_year,
                        currency, account_type, is_test_card, holder_name, holder_email, holder_address, holder_city, holder_zip,
                        holder_country, key_id, wrapped_key, pan_ciphertext)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)
     -- A no-op update, so the existing record is returned; it changes nothing a charge reads.
     ON CONFLICT ON CONSTRAINT cards_same_card_key DO UPDATE SET updated_at = cards.updated_at
     RETURNING ${cardColumns}`,
    [
      id, input.siteId, channel.id, randomAlphanumeric(vaultTokenLength), fingerprintPan(deps.keys, input.siteId, input.pan), shownBinOf(input.pan),
      input.pan.slice(-4), cardTypeFromBin(brandBin), issuerCountryFromBin(brandBin), input.expiryMonth, input.expiryYear, channel.currency,
      channel.account_type, testCardByPan(input.pan) !== undefined, holder.name ?? null, holder.email ?? null, holder.address ?? null,
      holder.city ?? null, holder.zip ?? null, holder.country ?? null, sealed.keyId, sealed.wrappedKey, sealed.panCiphertext,
    ],
  );
  return toCard(row);
}

/**
 * The leading digits of a card number kept and shown in clear (`bin`, `bin_number`): six, or as
 * many as leave limits.cardPanHiddenDigitsMin digits hidden beside the last four (three of a
 * 12-digit number, four of a 13-digit one).
 */
export function shownBinOf(pan: string): string {
  return pan.slice(0, Math.max(0, Math.min(6, pan.length - 4 - limits.cardPanHiddenDigitsMin)));
}

function issueCaptureToken(deps: VaultDeps, card: CardRecord, cvv: string): { cardToken: string; cardTokenExpiresAt: Date } {
  const cardTokenExpiresAt = new Date(deps.now().getTime() + limits.cardTokenLifetimeSeconds * 1000);
  return { cardToken: sealCaptureToken(deps.keys, { siteId: card.siteId, cardId: card.id, cvv, expiresAt: cardTokenExpiresAt }), cardTokenExpiresAt };
}

/**
 * Validates and vaults a card typed on a hosted page for a channel of the site; returns the
 * record and a capture token carrying the CVV for the first authorisation.
 */
export async function captureCard(db: Queryable, deps: VaultDeps, input: CaptureCardInput): Promise<CapturedCard> {
  const pan = normalisePan(input.pan);
  const brand = cardTypeFromBin(pan.slice(0, 6));
  assertCardDetailsValid({ pan, expiryMonth: input.expiryMonth, expiryYear: input.expiryYear, cvv: input.cvv }, brand, deps.now());
  const channel = await loadChannel(db, input.siteId, input.channelId);
  assertCardAllowedInMode({ isTestCard: testCardByPan(pan) !== undefined }, channel.account_mode, 'card_number');
  if (!input.takesLiveMode && !isTestMode(channel.account_mode)) throw noLiveProcessor('capture');
  const card = await storeCard(db, deps, channel, { siteId: input.siteId, pan, expiryMonth: input.expiryMonth, expiryYear: input.expiryYear, holder: input.holder ?? {} });
  return { card, ...issueCaptureToken(deps, card, input.cvv) };
}

// Named (prepared once per connection): the first two run on every retained charge, the next
// two on every charge naming a capture token.
const cardByIdStatement = { name: 'vault_card_by_id', text: `SELECT ${cardColumns} FROM cards WHERE id = $1 AND site_id = $2` };
const cardByTokenStatement = {
  name: 'vault_card_by_token',
  text: `SELECT ${cardColumns},
                EXISTS (SELECT 1 FROM transactions t WHERE t.card_id = cards.id AND t.type = 'vault' AND t.status = 'complete') AS vaulted
           FROM cards WHERE token = $1 AND site_id = $2`,
};
const cardByCaptureTokenStatement = {
  name: 'vault_card_by_capture_token',
  text: `SELECT ${cardColumns}, EXISTS (SELECT 1 FROM card_token_redemptions r WHERE r.nonce = $3) AS redeemed
           FROM cards WHERE id = $1 AND site_id = $2`,
};
const redeemCaptureTokensStatement = {
  name: 'vault_redeem_capture_tokens',
  text: `WITH purged AS (DELETE FROM card_token_redemptions WHERE expires_at < now())
         INSERT INTO card_token_redemptions (nonce, expires_at) SELECT * FROM unnest($1::bytea[], $2::timestamptz[])
         ON CONFLICT DO NOTHING RETURNING nonce`,
};
const cardSecretStatement = { name: 'vault_card_secret', text: 'SELECT key_id, wrapped_key, pan_ciphertext FROM cards WHERE id = $1 AND site_id = $2' };

type SecretRow = { key_id: string; wrapped_key: Buffer; pan_ciphertext: Buffer };

/** A card with its PAN still sealed (ciphertext and wrapped data key), for one charge. */
export interface ChargeableCard {
  card: CardRecord;
  sealed: SealedPan;
}

/**
 * A card with its sealed PAN, read as part of another statement (issue 7: a retained charge's
 * look-up reads the vault transaction's card with the channel and bookings, in one round trip):
 * a LATERAL join `alias` on the card `idSql` of site `siteIdSql`. Select
 * `chargeableCardColumns(alias)` and pass the row to `chargeableCardOf`; `openCard` given the
 * sealed PAN then decrypts without reading again. The PAN stays encrypted until that call.
 */
export function chargeableCardJoin(alias: string, idSql: string, siteIdSql: string): string {
  return `LEFT JOIN LATERAL (SELECT ${cardColumns}, wrapped_key, pan_ciphertext FROM cards WHERE id = ${idSql} AND site_id = ${siteIdSql}) ${alias} ON true`;
}

export function chargeableCardColumns(alias: string): string {
  return `CASE WHEN ${alias}.id IS NULL THEN NULL ELSE to_jsonb(${alias}) - '{wrapped_key,pan_ciphertext}'::text[] END AS chargeable_card,
          ${alias}.key_id AS chargeable_key_id, ${alias}.wrapped_key AS chargeable_wrapped_key, ${alias}.pan_ciphertext AS chargeable_pan_ciphertext`;
}

export interface ChargeableCardColumns {
  chargeable_card: (Omit<CardRow, 'created_at'> & { created_at: string }) | null;
  chargeable_key_id: string | null;
  chargeable_wrapped_key: Buffer | null;
  chargeable_pan_ciphertext: Buffer | null;
}

export function chargeableCardOf(row: ChargeableCardColumns): ChargeableCard | null {
  if (!row.chargeable_card) return null;
  return {
    card: toCard({ ...row.chargeable_card, created_at: new Date(row.chargeable_card.created_at) }),
    sealed: sealedOf({ key_id: row.chargeable_key_id!, wrapped_key: row.chargeable_wrapped_key!, pan_ciphertext: row.chargeable_pan_ciphertext! }),
  };
}

function sealedOf(row: SecretRow): SealedPan {
  return { keyId: row.key_id, wrappedKey: row.wrapped_key, panCiphertext: row.pan_ciphertext };
}

export async function cardById(db: Queryable, siteId: number, id: number): Promise<CardRecord | null> {
  const row = await db.maybeOne<CardRow & Record<string, unknown>>(cardByIdStatement, [id, siteId]);
  return row ? toCard(row) : null;
}

/**
 * The card of a vault token, once a vault transaction of it completed: the vaulting app hands the
 * token back after a failed vault too (its status is only a visual hint), and a card the bank
 * refused at verification is not to be charged without its CVV. Such a token is a 400 on `token`.
 */
export async function cardByVaultToken(db: Queryable, siteId: number, token: string): Promise<CardRecord | null> {
  if (!/^[A-Za-z0-9]{32}$/.test(token)) return null;
  const row = await db.maybeOne<CardRow & { vaulted: boolean } & Record<string, unknown>>(cardByTokenStatement, [token, siteId]);
  if (!row) return null;
  if (!row.vaulted) throw invalidParam('token', 'The card of this token was never vaulted successfully (its vault transaction did not complete); vault the card again.');
  return toCard(row);
}

export interface ResolvedCard {
  card: CardRecord;
  /** A capture token's or a sandbox token's; a vault token names the card without one. */
  cvv?: string;
  via: 'capture_token' | 'vault_token' | 'sandbox_token';
  /** A capture token's: what `redeemCaptureTokens` records when the charge it pays is written. */
  redemption?: CaptureTokenRedemption;
}

/** A capture token's single-use id (its random nonce, not secret) and when it expires anyway. */
export interface CaptureTokenRedemption {
  nonce: Buffer;
  expiresAt: Date;
}

export interface ResolveCardInput {
  siteId: number;
  token: string;
  /** Needed for sandbox tokens (the card is materialised on that channel). */
  channelId?: number;
}

/**
 * The card a payment request names by `token`: a capture token (`ct_...`), a permanent vault
 * token, or on test channels a sandbox token (`tok_...`). Null when the token is unknown, expired,
 * of another site, or a capture token already redeemed. A sandbox token on a non-test channel is
 * a 400. Writes nothing for a capture token: the charge redeems it (redeemCaptureTokens).
 */
export async function resolvePaymentCard(db: Queryable, deps: VaultDeps, input: ResolveCardInput): Promise<ResolvedCard | null> {
  if (input.token.startsWith(captureTokenPrefix)) return resolveCaptureToken(db, deps, input);
  if (isSandboxToken(input.token)) return resolveSandboxToken(db, deps, input);
  const card = await cardByVaultToken(db, input.siteId, input.token);
  return card ? { card, via: 'vault_token' } : null;
}

/**
 * A capture token pays for one cardholder-initiated charge, with its CVV; once redeemed it names
 * no card at all. Were it to go on naming the card, every later charge would reach the bank
 * without the CVV, as if the cardholder had typed the card again (a card tester's one CVV guess,
 * then CVV-less charges). A charge without CVV is the merchant's, by vault token or `linked_id`
 * after a completed vault.
 */
async function resolveCaptureToken(db: Queryable, deps: VaultDeps, input: ResolveCardInput): Promise<ResolvedCard | null> {
  const contents = openCaptureToken(deps.keys, { siteId: input.siteId, token: input.token, now: deps.now() });
  if (!contents) return null;
  const row = await db.maybeOne<CardRow & { redeemed: boolean } & Record<string, unknown>>(cardByCaptureTokenStatement, [contents.cardId, input.siteId, contents.nonce]);
  if (!row || row.redeemed) return null;
  return { card: toCard(row), cvv: contents.cvv, via: 'capture_token', redemption: { nonce: contents.nonce, expiresAt: contents.expiresAt } };
}

/**
 * Records capture tokens as redeemed, in the database transaction that writes the charges they
 * pay (rolled back with it, the token stays usable). Returns how many were not redeemed before:
 * fewer than given means another charge took one first, and the caller refuses its own.
 */
export async function redeemCaptureTokens(db: Queryable, redemptions: readonly CaptureTokenRedemption[]): Promise<number> {
  if (redemptions.length === 0) return 0;
  // Purges the redemptions of tokens that expired anyway (bounded by the expiry index): an
  // expired token is refused before its redemption is looked at.
  const redeemed = await db.query(redeemCaptureTokensStatement, [redemptions.map((redemption) => redemption.nonce), redemptions.map((redemption) => redemption.expiresAt)]);
  return redeemed.length;
}

/** Sandbox tokens stand for a test card with a future expiry and a valid CVV, like a fresh capture. */
async function resolveSandboxToken(db: Queryable, deps: VaultDeps, input: ResolveCardInput): Promise<ResolvedCard | null> {
  const testCard = testCardBySandboxToken(input.token);
  if (!testCard || input.channelId === undefined) return null;
  const channel = await loadChannel(db, input.siteId, input.channelId);
  if (!isTestMode(channel.account_mode)) throw invalidParam('token', 'Sandbox tokens can only be used on test channels.');
  const expiryYear = deps.now().getUTCFullYear() + 5;
  const card = await storeCard(db, deps, channel, { siteId: input.siteId, pan: testCard.pan, expiryMonth: 12, expiryYear, holder: {} });
  return { card, cvv: testCard.brand === 'amex' ? '1234' : '123', via: 'sandbox_token' };
}

/**
 * The card's data key is wrapped under a key this process has in CARD_KEYS; otherwise its charge
 * is refused before anything is written, as a server error naming the key (logged; the answer
 * says nothing of it). The configuration is wrong, not the card, which a server with the key
 * charges: a rotation run before every server restarted with the new key, or an old key dropped
 * while cards were still wrapped under it (docs/vault.md "Key rotation"). Recorded as a failed
 * charge, it told the merchant to vault an intact card again.
 */
export function assertCardKeyConfigured(deps: VaultDeps, card: CardRecord): void {
  if (deps.keys.keys[card.keyId] !== undefined) return;
  throw new Error(`card ${card.id} is wrapped under key ${card.keyId}, which CARD_KEYS of this process lacks: restart it with every key cards are wrapped under (docs/vault.md "Key rotation")`);
}

/**
 * Decrypts the PAN for exactly one processor call. Keep the result in a local variable only.
 * `sealed`: the card's sealed PAN when already read with it (chargeableCardById).
 */
export async function openCard(db: Queryable, deps: VaultDeps, card: CardRecord, cvv?: string, sealed?: SealedPan): Promise<ProcessorCard> {
  let secret = sealed;
  if (!secret) {
    const row = await db.maybeOne<SecretRow & Record<string, unknown>>(cardSecretStatement, [card.id, card.siteId]);
    if (!row) throw new Error(`card ${card.id} is not in the vault`);
    secret = sealedOf(row);
  }
  const pan = openPan(deps.keys, { siteId: card.siteId, cardId: card.id }, secret);
  return {
    pan,
    expiryMonth: card.expiryMonth,
    expiryYear: card.expiryYear,
    ...(cvv ? { cvv } : {}),
    ...(card.holder.name ? { holderName: card.holder.name } : {}),
  };
}
