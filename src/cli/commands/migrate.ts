import type { Command } from '../command.js';
import { migrate } from '../../storage/migrate.js';

const migrateCommand: Command = {
  name: 'migrate',
  summary: 'apply pending database migrations (the server also does this at start)',
  async run(context) {
    const applied = await migrate(context.db);
    const all = await context.db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name');
    return { applied, migrations: all.map((row) => row.name) };
  },
};

export const commands: Command[] = [migrateCommand];
