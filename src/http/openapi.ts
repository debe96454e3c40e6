import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import swagger from '@fastify/swagger';
import { Type } from '@sinclair/typebox';
import type { App } from '../app.js';
import type { Config } from '../config.js';

/**
 * The spec's error shape as a response schema, for routes to declare their error statuses in
 * the OpenAPI document: `{code, message, data: {status, ...}}` (`data` may carry `params` etc.).
 */
export const errorResponseSchema = Type.Object(
  {
    code: Type.String({ description: 'Machine-readable error code, e.g. rest_invalid_param.' }),
    message: Type.String(),
    data: Type.Object({ status: Type.Integer({ description: 'The HTTP status.' }) }, { additionalProperties: true }),
  },
  { description: 'Error' },
);

/** Paths of the service itself that take no credential. */
const publicPaths = new Set(['/healthz', '/readyz']);

/**
 * Registers the OpenAPI 3.1 generator. It collects every route registered AFTER it, so
 * buildApp registers it before the route modules; the document is served at /openapi.json.
 * Routes requiring a bearer credential need nothing extra (it is the document's default);
 * routes that take none declare `security: []` in their schema.
 */
export async function registerOpenApi(app: App, config: Config): Promise<void> {
  const version = packageVersion();
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'trustfare',
        version,
        description:
          'Card vaulting and booking payment service for travel businesses. Every REST request carries `Authorization: Bearer <token>`: an API token (`tfat_...`, recommended) or a user JWT from the token endpoints. Errors are `{code, message, data: {status}}`.',
      },
      servers: [{ url: config.baseUrl }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API token (tfat_...) or a user JWT.' } } },
      security: [{ bearer: [] }],
    },
    transform: ({ schema, url }) => {
      const routeSchema = (schema ?? {}) as Record<string, unknown>;
      return { schema: (publicPaths.has(url) ? { ...routeSchema, security: [] } : routeSchema) as never, url };
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) => {
    void reply.header('cache-control', 'no-cache');
    return app.swagger();
  });
}

/** The package version, found from this module whether it runs from src/ or the dist/ bundle. */
function packageVersion(): string {
  let directory = path.dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 4; depth++) {
    const file = path.join(directory, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version ?? '0.0.0';
    directory = path.dirname(directory);
  }
  return '0.0.0';
}
