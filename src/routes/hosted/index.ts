import type { App } from '../../app.js';
import type { AppContext } from '../../context.js';
import { modalRoutes } from './modal.js';
import { payPageRoutes } from './pay-page.js';
import { hostedPaymentRoutes } from './payments.js';
import { vaultAppRoutes } from './vault-app.js';

/** The hosted pages (docs/hosted-pages.md) and the payment modal (docs/modal.md). */
export async function hostedRoutes(app: App, context: AppContext): Promise<void> {
  await vaultAppRoutes(app, context);
  await modalRoutes(app, context);
  await payPageRoutes(app, context);
  await hostedPaymentRoutes(app, context);
}
