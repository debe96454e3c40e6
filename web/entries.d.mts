/** Browser bundle entry points: output path (under dist/web, no extension) → source file. */
export declare const webEntries: Record<string, string>;
