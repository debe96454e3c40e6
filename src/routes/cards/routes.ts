import type { App } from '../../app.js';
import type { AppContext } from '../../context.js';
import { captureCard } from '../../domain/vault/index.js';
import { cardCaptureSecurity, siteApiErrors } from '../../http/openapi.js';
import { takesLiveMode } from '../../processor/index.js';
import { authorizeCardCapture } from './auth.js';
import { CaptureCardBody, CapturedCardReply, SitePathParams } from './schemas.js';

/** Two-digit years mean 20yy (cards expire within limits.cardExpiryYearsMax anyway). */
function fullYear(value: number | string): number {
  const year = Number(value);
  return year < 100 ? 2000 + year : year;
}

const emptyToNull = (value: string | undefined) => (value === undefined || value.trim() === '' ? null : value.trim());

export async function cardRoutes(app: App, context: AppContext): Promise<void> {
  // The capture endpoint of the hosted pages: card details in, a short-lived token out.
  app.post(
    '/:path/site-json/vendor/v2/cards',
    {
      schema: {
        operationId: 'captureCard', summary: 'Capture a card from a hosted page: a short-lived token for creating the transaction (API tokens and user JWTs are refused with 403)',
        tags: ['Hosted pages'],
        security: cardCaptureSecurity,
        params: SitePathParams,
        body: CaptureCardBody,
        response: { 201: CapturedCardReply, ...siteApiErrors },
      },
    },
    async (request, reply) => {
      const caller = await authorizeCardCapture(request, context);
      const body = request.body;
      const captured = await captureCard(context.db, context.vault, {
        siteId: caller.siteId,
        channelId: body.channels,
        pan: body.card_number,
        expiryMonth: Number(body.expiry_month),
        expiryYear: fullYear(body.expiry_year),
        cvv: body.cvv,
        takesLiveMode: takesLiveMode(context.config, context.connector),
        holder: { name: emptyToNull(body.name), email: emptyToNull(body.email), address: emptyToNull(body.address), city: emptyToNull(body.city), zip: emptyToNull(body.zip), country: body.country ?? null },
      });
      const card = captured.card;
      void reply.header('cache-control', 'no-store');
      return reply.code(201).send({
        token: captured.cardToken,
        expires_at: captured.cardTokenExpiresAt.toISOString(),
        card: {
          bin: card.bin,
          last_four: card.lastFour,
          card_type: card.brand,
          expiry_month: String(card.expiryMonth).padStart(2, '0'),
          expiry_year: card.expiryYear,
          issuer_countries: card.issuerCountry,
        },
      });
    },
  );
}
