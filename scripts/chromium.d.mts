/** Where the browser tests find Debian's Chromium (scripts/chromium.mjs installs it when missing). */
export declare const chromiumPath: string;
