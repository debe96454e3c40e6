// The files `npm run bench:serve` writes for replaying the bench's scenarios with another load
// generator (docs/performance.md "Replaying with another load generator"). Pure: the caller
// writes them.
import path from 'node:path';

export interface ReplayKitInput {
  /** The bench service and the ceiling server (bench/ceiling-server.ts). */
  serviceUrl: string;
  ceilingUrl: string;
  authorization: string;
  apiPrefix: string;
  getBookingId: number;
  /** The body of POST bookings (bench/fixtures.ts bookingInput). */
  bookingBody: string;
  /** One body per fresh booking (retainedPurchaseInput), each paid by one request. */
  retainedPurchaseBodies: string[];
  /** Unique per kit, so two kits never share an Idempotency-Key. */
  runId: string;
  /** Where the kit's files go, and where bench/replay's wrk scripts are. */
  directory: string;
  scriptsDirectory: string;
  listPerPage: number;
}

/** The most lines the kit gives the retained purchases' warm-up; a quarter of the file when that is less. */
export const warmupLinesMax = 20_000;

export function replayKit(input: ReplayKitInput): Record<string, string> {
  const lines = input.retainedPurchaseBodies.map((body, index) => {
    if (/[\t\n]/.test(body)) throw new Error('a replay body must be one line without tabs');
    return `replay-${input.runId}-${index + 1}\t${body}`;
  });
  return {
    'retained-purchases.tsv': `${lines.join('\n')}\n`,
    'post-booking.json': input.bookingBody,
    'retained-purchase.json': input.retainedPurchaseBodies[0] ?? '',
    'README.txt': instructions(input),
  };
}

function instructions(input: ReplayKitInput): string {
  const api = `${input.serviceUrl}${input.apiPrefix}`;
  const kit = (file: string) => path.join(input.directory, file);
  const script = (file: string) => path.join(input.scriptsDirectory, file);
  const auth = `-H 'Authorization: ${input.authorization}'`;
  const wrk = 'wrk -t2 -c50 -d10s --latency';
  // A 3 s warm-up at up to 6,600 purchases a second. 5,000 was once "far more than any machine
  // sends" (about 1,000 then); at 1,800 a second the warm-up took 5,400 lines, and the measured
  // run's first requests replayed stored answers instead of paying (session 18).
  const warmupLines = Math.min(warmupLinesMax, Math.floor(input.retainedPurchaseBodies.length / 4));
  return `The trustfare bench stack, left running by \`npm run bench:serve\` (Ctrl-C stops it).
Service ${input.serviceUrl} (NODE_ENV=production, LOG_LEVEL=warn, per-token rate limit raised as in
\`npm run bench\`); ceiling server ${input.ceilingUrl} (bare Fastify on plain pg, same database).
The commands use wrk (apt-get install wrk); any generator sending the same requests will do.
Run a warm-up first, as the bench does (e.g. -d3s), and compare each scenario with its ceiling.

# GET booking, and its ceiling: one primary-key select answering the same JSON
${wrk} ${auth} ${api}/bookings/${input.getBookingId}
${wrk} ${input.ceilingUrl}/pk/${input.getBookingId}

# GET transactions page
${wrk} ${auth} '${api}/transactions?per_page=${input.listPerPage}'

# POST booking (each request creates a booking)
REPLAY_BODY=${kit('post-booking.json')} ${wrk} ${auth} -s ${script('post.lua')} ${api}/bookings

# POST retained_purchase: each request pays one of the ${input.retainedPurchaseBodies.length} fresh bookings of
# retained-purchases.tsv with its own Idempotency-Key. After "--": wrk's thread count (as -t), the
# file, the first line to use. Each line pays once: the warm-up (3 s) takes lines from 1, the
# measured run from ${warmupLines + 1}; for more runs restart \`npm run bench:serve\` or start further down.
${wrk.replace('-d10s', '-d3s')} ${auth} -s ${script('retained.lua')} ${api}/transactions -- 2 ${kit('retained-purchases.tsv')} 1
${wrk} ${auth} -s ${script('retained.lua')} ${api}/transactions -- 2 ${kit('retained-purchases.tsv')} ${warmupLines + 1}
# its ceiling: BEGIN; SELECT ... FOR UPDATE; INSERT; UPDATE; COMMIT, answering the same JSON
REPLAY_BODY=${kit('retained-purchase.json')} ${wrk} -s ${script('post.lua')} ${input.ceilingUrl}/tx
# and the bare two-phase purchase: the same write set on minimal tables, one statement and one
# commit for the attempt, one for the settlement (not a target's ceiling; the least a purchase costs)
REPLAY_BODY=${kit('retained-purchase.json')} ${wrk} -s ${script('post.lua')} ${input.ceilingUrl}/purchase
# and the bare batched purchase: the write set on trustfare's own tables, concurrent requests
# written in batches (not a target's ceiling; what a service that batches its write path could reach)
REPLAY_BODY=${kit('retained-purchase.json')} ${wrk} ${auth} -s ${script('post.lua')} ${input.ceilingUrl}/batched-purchase
`;
}
