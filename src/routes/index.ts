import type { App } from '../app.js';
import type { AppContext } from '../context.js';
import { healthRoutes } from './health/routes.js';
import { cardRoutes } from './cards/routes.js';
import { sandboxRoutes } from './sandbox/routes.js';
import { authRoutes } from './auth/routes.js';
import { apiTokenRoutes } from './api-tokens/routes.js';
import { docsRoutes } from './docs/routes.js';
import { channelRoutes } from './channels/routes.js';
import { bookingRoutes } from './bookings/routes.js';
import { supplierRoutes } from './suppliers/routes.js';
import { transactionRoutes } from './transactions/routes.js';
import { hostedRoutes } from './hosted/index.js';

/**
 * Every route module, registered in one place. Each module is a function
 * `(app, context) => Promise<void>` that declares its own TypeBox schemas.
 */
export async function registerRoutes(app: App, context: AppContext): Promise<void> {
  await healthRoutes(app, context);
  await cardRoutes(app, context);
  await sandboxRoutes(app, context);
  await authRoutes(app, context);
  await apiTokenRoutes(app, context);
  await docsRoutes(app, context);
  await channelRoutes(app, context);
  await bookingRoutes(app, context);
  await supplierRoutes(app, context);
  await transactionRoutes(app, context);
  await hostedRoutes(app, context);
}
