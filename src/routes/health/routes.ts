import { Type } from '@sinclair/typebox';
import type { App } from '../../app.js';
import type { AppContext } from '../../context.js';
import { databaseDiskHasRoom } from '../../storage/database.js';

export async function healthRoutes(app: App, context: AppContext): Promise<void> {
  const okSchema = Type.Object({ status: Type.String() });

  // Liveness: the process answers. Never touches the database, so a slow database does not
  // get healthy processes restarted.
  app.get('/healthz', { schema: { operationId: 'getHealth', summary: 'Liveness: the process answers', response: { 200: okSchema } } }, async () => ({ status: 'ok' }));

  // Readiness: the database answers, migrations ran, and its disk has room to write. A full disk
  // left reads answering while every booking and payment failed, so a load balancer kept sending
  // payments to a process that could not record them. The disk is looked at (statfs), not written
  // to: probes come often, and a probe's write could land in room that the next payment's does not.
  app.get('/readyz', { schema: { operationId: 'getReadiness', summary: 'Readiness: the database answers, migrations ran and its disk has room (503 while not)', response: { 200: okSchema, 503: okSchema } } }, async (_request, reply) => {
    try {
      const [, room] = await Promise.all([context.db.query('SELECT 1 FROM schema_migrations LIMIT 1'), databaseDiskHasRoom(context.config)]);
      return room ? { status: 'ready' } : reply.code(503).send({ status: 'disk_full' });
    } catch {
      return reply.code(503).send({ status: 'unavailable' });
    }
  });
}
