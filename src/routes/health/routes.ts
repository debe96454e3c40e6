import { Type } from '@sinclair/typebox';
import type { App } from '../../app.js';
import type { AppContext } from '../../context.js';

export async function healthRoutes(app: App, context: AppContext): Promise<void> {
  const okSchema = Type.Object({ status: Type.String() });

  // Liveness: the process answers. Never touches the database, so a slow database does not
  // get healthy processes restarted.
  app.get('/healthz', { schema: { operationId: 'getHealth', summary: 'Liveness: the process answers', response: { 200: okSchema } } }, async () => ({ status: 'ok' }));

  // Readiness: the database answers and migrations ran.
  app.get('/readyz', { schema: { operationId: 'getReadiness', summary: 'Readiness: the database answers and migrations ran (503 while not)', response: { 200: okSchema, 503: okSchema } } }, async (_request, reply) => {
    try {
      await context.db.query('SELECT 1 FROM schema_migrations LIMIT 1');
      return { status: 'ready' };
    } catch {
      return reply.code(503).send({ status: 'unavailable' });
    }
  });
}
