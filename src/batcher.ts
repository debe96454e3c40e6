/**
 * Writes concurrent requests of one kind together (docs/performance-history.md, "Batching across
 * requests"): a request that finds one of `inFlightMax` slots free starts a batch at once (no
 * timer, so a lone request waits for nothing), and the requests arriving while every slot is busy
 * go together in the next batch, up to `batchMax`. Two items that share a conflict key (a booking
 * id, say) never share a batch: the later one waits for the next, so a batch's statements never see
 * one row through two of its members.
 */
export interface BatcherOptions<Item> {
  batchMax: number;
  inFlightMax: number;
  /** Keys that must not appear twice in one batch; none by default. */
  conflictKeys?: (item: Item) => readonly (string | number)[];
}

interface Waiting<Item, Result> {
  item: Item;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

export class Batcher<Item, Result> {
  private readonly waiting: Waiting<Item, Result>[] = [];
  private inFlight = 0;

  /**
   * `write` settles each item of a batch, in order: a value or an error of its own. When it
   * throws, every item of the batch gets that error.
   */
  constructor(
    private readonly write: (items: Item[]) => Promise<PromiseSettledResult<Result>[]>,
    private readonly options: BatcherOptions<Item>,
  ) {
    if (!(options.batchMax >= 1 && options.inFlightMax >= 1)) throw new Error('a batcher needs batchMax and inFlightMax of at least 1');
  }

  add(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.options.inFlightMax && this.waiting.length > 0) {
      const batch = this.takeBatch();
      this.inFlight += 1;
      this.run(batch).finally(() => {
        this.inFlight -= 1;
        this.pump();
      });
    }
  }

  /** The oldest waiting items, up to batchMax, skipping those that conflict with one already taken. */
  private takeBatch(): Waiting<Item, Result>[] {
    const keysOf = this.options.conflictKeys;
    const taken: Waiting<Item, Result>[] = [];
    const keys = new Set<string | number>();
    for (let index = 0; index < this.waiting.length && taken.length < this.options.batchMax; ) {
      const entry = this.waiting[index]!;
      const itemKeys = keysOf ? keysOf(entry.item) : [];
      if (itemKeys.some((key) => keys.has(key))) {
        index += 1;
        continue;
      }
      for (const key of itemKeys) keys.add(key);
      taken.push(entry);
      this.waiting.splice(index, 1);
    }
    return taken;
  }

  private async run(batch: Waiting<Item, Result>[]): Promise<void> {
    try {
      const results = await this.write(batch.map((entry) => entry.item));
      if (results.length !== batch.length) throw new Error(`a batch of ${batch.length} was answered with ${results.length} results`);
      batch.forEach((entry, index) => {
        const result = results[index]!;
        if (result.status === 'fulfilled') entry.resolve(result.value);
        else entry.reject(result.reason);
      });
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    }
  }
}

/**
 * A batch's `write` for items that can also be written one at a time: `together` writes the batch
 * in one database transaction (each item its own result); if it throws, that transaction wrote
 * nothing, and each item is written `alone`, so a failure (a bug, a deadlock past its retries, a
 * refusal that concerns one item) reaches only the items it belongs to.
 */
export async function retriedAlone<Item, Result>(
  items: Item[], together: (items: Item[]) => Promise<PromiseSettledResult<Result>[]>, alone: (item: Item) => Promise<Result>,
): Promise<PromiseSettledResult<Result>[]> {
  try {
    return await together(items);
  } catch (error) {
    if (items.length === 1) return [{ status: 'rejected', reason: error }];
    return Promise.allSettled(items.map(alone));
  }
}

/** Every item of a batch written, with these values. */
export function allFulfilled<Result>(values: Result[]): PromiseSettledResult<Result>[] {
  return values.map((value) => ({ status: 'fulfilled', value }));
}
