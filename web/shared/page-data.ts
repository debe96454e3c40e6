/** The data block every hosted page carries in `<script type="application/json" id="page-data">`. */
export interface PageData {
  kind: 'vault' | 'modal' | 'pay';
  /** Hosted page session token (`hps_...`), the page's only credential. */
  session: string;
  sitePath: string;
  channelId: number;
  /** BCP 47 (`fr-FR`), for Intl: not the catalogue's language code (`frFR`), which Intl refuses. */
  locale: string;
  messages: Record<string, string>;
  attemptsLeft: number;
  /** The page gives up waiting for a payment answer after this long. */
  timeoutMs: number;
  company: string;
  bookingId?: number;
}

export function readPageData<T extends object = PageData>(id = 'page-data'): T {
  const element = document.getElementById(id);
  if (!element?.textContent) throw new Error('page data missing');
  return JSON.parse(element.textContent) as T;
}

export type Translate = (key: string, vars?: Record<string, string | number>) => string;

export function translator(messages: Record<string, string>): Translate {
  return (key, vars = {}) => (messages[key] ?? key).replace(/\{(\w+)\}/g, (whole, name: string) => (vars[name] !== undefined ? String(vars[name]) : whole));
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`#${id} missing`);
  return element as T;
}
