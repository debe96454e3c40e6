// `npm run bench` (after the build): loads the TypeScript harness through tsx. See bench/main.ts;
// `npm run bench:serve` (argument `serve`): bench/serve.ts; `npm run bench:ab` (argument `ab`):
// bench/ab.ts; `npm run bench:mail` (argument `mail`): bench/mail.ts.
import { register } from 'tsx/esm/api';

register();
const entries = { serve: './serve.ts', ab: './ab.ts', mail: './mail.ts' };
const { main } = await import(entries[process.argv[2]] ?? './main.ts');
try {
  process.exit(await main());
} catch (error) {
  console.error(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
}
