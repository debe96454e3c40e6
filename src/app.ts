import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from './context.js';
import { limits } from './limits.js';
import { ApiError, errorHandler } from './http/errors.js';
import { validatorCompiler } from './http/validation.js';
import { registerRoutes } from './routes/index.js';

export type { AppContext } from './context.js';

export interface BuildAppOptions {
  context: AppContext;
  logger?: FastifyServerOptions['logger'];
}

export type App = FastifyInstance<any, any, any, any, TypeBoxTypeProvider>;

// Card data and credentials never reach the logs, whatever a route logs.
export const redactedLogPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.body.password',
  'req.body.card_number',
  'req.body.cvv',
  'req.body.pan',
  'req.body.otp',
  'res.headers["set-cookie"]',
];

/** Builds the application; never listens (server.ts does, tests use inject). */
export async function buildApp(options: BuildAppOptions): Promise<App> {
  const { context } = options;
  const app = Fastify({
    logger: options.logger ?? { level: context.config.logLevel, redact: { paths: redactedLogPaths, censor: '[redacted]' } },
    bodyLimit: limits.bodyBytesMax,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(incoming) ? incoming : randomUUID();
    },
    requestIdHeader: false,
    trustProxy: false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    ajv: { customOptions: { coerceTypes: 'array', allErrors: true } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request, reply) => {
    const error = new ApiError(404, 'rest_no_route', 'No route was found matching the URL and request method.');
    void reply.code(404).send(error.toJSON());
  });
  app.decorateRequest('principal', null);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  await registerRoutes(app, context);
  return app;
}
