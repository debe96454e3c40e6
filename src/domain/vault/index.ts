/**
 * The card vault: what other parts of the service use. Details in docs/vault.md.
 *
 * Types
 * - `CardRecord`: a vaulted card (id, siteId, channelId, token, bin, lastFour, brand, issuerCountry,
 *   expiryMonth/Year, currency and accountType of the channel it was vaulted to, isTestCard,
 *   holder {name,email,address,city,zip,country}). Never holds the PAN or CVV.
 * - `VaultDeps` {keys, now}: `context.vault` in AppContext.
 *
 * Functions (db is the pool or a transaction handle)
 * - `captureCard(db, deps, {siteId, channelId, pan, expiryMonth, expiryYear, cvv, holder?})`
 *   → `{card, cardToken, cardTokenExpiresAt}`. Throws ApiError 400 (Luhn/expiry/CVV, test card vs
 *   channel mode) or 404 (channel not in the site). Same PAN and details on the same channel reuse
 *   the record; a stored card is never changed (other details make a new record).
 * - `resolvePaymentCard(db, deps, {siteId, token, channelId?})`
 *   → `{card, cvv?, via, redemption?} | null` for a capture token (`ct_...`, with its CVV; null
 *   once redeemed), a permanent vault token, or a sandbox token (`tok_visa`..., needs channelId;
 *   400 off test channels).
 * - `redeemCaptureTokens(db, redemptions)` → how many were newly redeemed: the charge a capture
 *   token pays records it in the transaction that writes the charge (single use).
 * - `cardById(db, siteId, id)`, `cardByVaultToken(db, siteId, token)` → `CardRecord | null`.
 * - `openCard(db, deps, card, cvv?)` → `ProcessorCard` (decrypts the PAN for one processor call).
 * - `assertCardKeyConfigured(deps, card)`: throws (a server error) when the card's key is not in
 *   this process's CARD_KEYS, before a charge of it is written.
 * - `assertCardUsableOnChannel(card, {currency, accountType})`, `assertCardAllowedInMode(card,
 *   accountMode)`, `assertCardNotExpired(card, now, param)`: throw ApiError 400
 *   `rest_invalid_param` (params `channels` / `token` / `linked_id`).
 * - `cardTypeFromBin(bin)`, `luhnValid(pan)`, `issuerCountryFromBin(bin)`, `isTestMode(mode)`.
 * - `rotateCardKeys(db, keys)`: re-wrap data keys under the active CARD_KEYS key.
 */
import type { Secrets } from '../../config.js';
import { vaultKeysFromSecrets } from './crypto.js';
import type { VaultDeps } from './cards.js';

export type { CaptureTokenRedemption, CardRecord, CardHolder, CaptureCardInput, CapturedCard, ChargeableCard, ChargeableCardColumns, ResolvedCard, ResolveCardInput, VaultDeps } from './cards.js';
export { assertCardKeyConfigured, captureCard, cardById, cardByVaultToken, chargeableCardColumns, chargeableCardJoin, chargeableCardOf, redeemCaptureTokens, resolvePaymentCard, openCard, randomAlphanumeric } from './cards.js';
export { assertCardUsableOnChannel, assertCardAllowedInMode, assertCardNotExpired, normalisePan, type CardChannel } from './rules.js';
export { isTestMode } from '../channels.js';
export { cardTypeFromBin, luhnValid, issuerCountryFromBin, cvvLength } from './card-types.js';
export { CardDecryptionError, captureTokenPrefix, type SealedPan, type VaultKeys } from './crypto.js';
export { rotateCardKeys, type RotationResult } from './rotation.js';
export type { CardBrand } from '../../processor/connector.js';

export function createVault(secrets: Secrets, now: () => Date): VaultDeps {
  return { keys: vaultKeysFromSecrets(secrets), now };
}
