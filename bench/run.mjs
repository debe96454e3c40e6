// `npm run bench` (after the build): loads the TypeScript harness through tsx. See bench/main.ts;
// `npm run bench:serve` (argument `serve`): bench/serve.ts.
import { register } from 'tsx/esm/api';

register();
const { main } = await import(process.argv[2] === 'serve' ? './serve.ts' : './main.ts');
try {
  process.exit(await main());
} catch (error) {
  console.error(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
}
