/**
 * Trustfare payment modal 1.0.0, the script an integrator includes (docs/modal.md):
 *
 *   TrustfareModal.open({ path, channels, currencies, total, auth, verify, booking, language,
 *                         callbacks: { transaction_logged(transaction) {...}, ... } })
 *
 * It opens our payment page in an iframe overlay: card data is typed into our page only and
 * never touches the host page. The frame reports progress with postMessage; this script checks
 * the origin and window of every message and calls the integrator's callbacks.
 */
import { parseLanguage, type LanguageCode } from '../../../src/i18n/languages.js';
import { callbackNames, frameSource, hostSource, type CallbackName, type FrameMessage, type ModalInit } from './protocol.js';

type Callback = (argument: unknown) => void;

export interface ModalOptions extends Partial<Record<CallbackName, Callback>> {
  path: string;
  channels: number | string;
  currencies: string;
  total: number | string;
  /** The auth string (64 hex digits + 14-digit timestamp); or the hash with `timestamp` apart. */
  auth: string;
  timestamp?: string;
  verify?: string[];
  /** Booking data: `booking_id` (0 creates the booking from the other fields) or an existing ID. */
  booking?: Record<string, unknown>;
  /** Where to read the booking ID when `booking` is absent; default `.tmt_booking_id`. */
  bookingInput?: string;
  language?: string;
  callbacks?: Partial<Record<CallbackName, Callback>>;
}

export interface ModalHandle {
  close(): void;
}

/**
 * How long a modal closed while its payment was processing keeps its frame (hidden) for the
 * outcome. The frame's own flow is bounded well within this (each call gives up after 45 s, then
 * one look-up; a 3DS challenge is not waited for once closed): a frame that never says it is done
 * (its page crashed) is dropped after this.
 */
const closedFrameKeptMs = 5 * 60_000;

const script = document.currentScript as HTMLScriptElement | null;
const frameUrl = new URL('frame', script?.src ?? location.href);
const frameOrigin = frameUrl.origin;

/**
 * The × button's label and the dialog's (and frame's) accessible name, by modal language. Kept
 * here rather than read from the catalogue: this script runs on integrators' pages and must stay
 * tiny. The close labels are the catalogue's `close`. Looked up by the language the frame is shown
 * in (parseLanguage, as the frame's route reads `language`): `pt-BR` or `de-AT` named the frame
 * in Portuguese or German but the dialog "Payment".
 */
const modalLabels: Record<LanguageCode, { close: string; dialog: string }> = {
  zhZH: { close: '关闭', dialog: '支付' }, enGB: { close: 'Close', dialog: 'Payment' }, frFR: { close: 'Fermer', dialog: 'Paiement' },
  deDE: { close: 'Schließen', dialog: 'Zahlung' }, itIT: { close: 'Chiudi', dialog: 'Pagamento' }, jaJA: { close: '閉じる', dialog: 'お支払い' },
  kkKK: { close: 'Жабу', dialog: 'Төлем' }, koKO: { close: '닫기', dialog: '결제' }, lvLV: { close: 'Aizvērt', dialog: 'Apmaksa' },
  ptBR: { close: 'Fechar', dialog: 'Pagamento' }, roRO: { close: 'Închideți', dialog: 'Plată' }, ruRU: { close: 'Закрыть', dialog: 'Оплата' },
  esES: { close: 'Cerrar', dialog: 'Pago' }, ukUK: { close: 'Закрити', dialog: 'Оплата' }, uzUZ: { close: 'Yopish', dialog: 'Toʻlov' },
};

function style(element: HTMLElement, rules: Partial<CSSStyleDeclaration>): void {
  Object.assign(element.style, rules);
}

/**
 * Makes the rest of the host page inert (no focus, no clicks, out of the accessibility tree)
 * while the modal is open; returns the undo, which clears only what this set, so elements the
 * integrator made inert stay so. Browsers without `inert` get the focus guard in open().
 */
function inertBesides(overlay: HTMLElement): () => void {
  const made = [...document.body.children].filter((element) => element !== overlay && !element.hasAttribute('inert'));
  for (const element of made) element.setAttribute('inert', '');
  return () => made.forEach((element) => element.removeAttribute('inert'));
}

/** An invisible stop at either end of the overlay that sends Tab round to the other end. */
function focusStop(onFocus: () => void): HTMLElement {
  const stop = document.createElement('div');
  stop.tabIndex = 0;
  style(stop, { position: 'fixed', width: '1px', height: '1px', opacity: '0', outline: 'none', pointerEvents: 'none' });
  stop.addEventListener('focus', onFocus);
  return stop;
}

function bookingData(options: ModalOptions): Record<string, unknown> {
  if (options.booking) return { ...options.booking };
  const input = document.querySelector<HTMLInputElement>(options.bookingInput ?? '.tmt_booking_id');
  return { booking_id: input ? Number(input.value.trim() || '0') : 0 };
}

/** 24 base64url characters (18 random bytes): the name of one opened modal (ModalInit `opener`). */
function openerName(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_');
}

function initMessage(options: ModalOptions): ModalInit {
  const auth = options.timestamp && /^[0-9a-f]{64}$/.test(options.auth) ? options.auth + options.timestamp : options.auth;
  const booking = bookingData(options);
  // docs/modal.md: a signed field's value comes from `booking`, then from the options themselves.
  const signed: Record<string, unknown> = {};
  for (const name of options.verify ?? []) {
    const value = (options as unknown as Record<string, unknown>)[name];
    if (booking[name] === undefined && value !== undefined) signed[name] = value;
  }
  return {
    path: String(options.path),
    channels: Number(options.channels),
    currencies: String(options.currencies),
    total: Number(options.total),
    auth,
    verify: options.verify ?? [],
    booking,
    signed,
    ...(options.language ? { language: options.language } : {}),
    opener: openerName(),
  };
}

let current: ModalHandle | null = null;

export function open(options: ModalOptions): ModalHandle {
  current?.close();
  const callbacks = { ...options.callbacks };
  for (const name of callbackNames) if (typeof options[name] === 'function') callbacks[name] = options[name];
  const fire = (name: CallbackName, argument: unknown) => {
    try {
      callbacks[name]?.(argument);
    } catch (error) {
      // An integrator's callback must not break the modal.
      setTimeout(() => {
        throw error;
      });
    }
  };

  const previousFocus = document.activeElement as HTMLElement | null;
  const overlay = document.createElement('div');
  style(overlay, { position: 'fixed', inset: '0', background: 'rgba(15, 23, 42, 0.6)', zIndex: '2147483000', display: 'flex', alignItems: 'center', justifyContent: 'center' });
  const dialog = document.createElement('div');
  dialog.setAttribute('role', 'dialog');
  dialog.setAttribute('aria-modal', 'true');
  style(dialog, { position: 'relative', width: 'min(480px, 100%)', height: 'min(760px, 100%)', background: '#fff', borderRadius: '12px', overflow: 'hidden', boxShadow: '0 20px 50px rgba(0,0,0,.35)' });
  const url = new URL(frameUrl);
  url.searchParams.set('origin', location.origin);
  if (options.language) url.searchParams.set('language', options.language);
  const iframe = document.createElement('iframe');
  iframe.src = url.toString();
  style(iframe, { width: '100%', height: '100%', border: '0', display: 'block' });
  const close = document.createElement('button');
  close.type = 'button';
  close.textContent = '×';
  const nameIn = (language: string | undefined) => {
    const labels = modalLabels[parseLanguage(language) ?? 'enGB'];
    dialog.setAttribute('aria-label', labels.dialog);
    iframe.title = labels.dialog;
    close.setAttribute('aria-label', labels.close);
  };
  nameIn(options.language);
  style(close, { position: 'absolute', top: '8px', right: '8px', width: '40px', height: '40px', border: '0', borderRadius: '20px', background: '#eef1f6', color: '#1d2433', fontSize: '24px', lineHeight: '40px', cursor: 'pointer' });
  dialog.append(iframe, close);
  // Focus stays in the dialog (its frame and ×): Shift+Tab from the frame's first field comes
  // round to ×, Tab from × to the frame's first field. Without this the host page behind the
  // overlay took the focus, and Enter on its "Pay" button opened a second modal and booking.
  const focusFrame = () => {
    iframe.focus();
    iframe.contentWindow?.postMessage({ source: hostSource, type: 'focus' }, frameOrigin);
  };
  overlay.append(focusStop(() => close.focus()), dialog, focusStop(focusFrame));
  const onFocusIn = (event: FocusEvent) => {
    if (!overlay.contains(event.target as Node)) focusFrame();
  };

  // `busy`: the frame's own word, from the card leaving the form until it has posted the outcome's
  // callbacks (a closed modal keeps its frame until then). `processing`: the same, but over as soon
  // as the integrator hears an outcome (close_window_attempted, modal_closed's wording): an
  // integrator going to its confirmation page from transaction_logged got close_window_attempted,
  // and the payer a "Leave site?" prompt after paying. Another callback may follow the first
  // (transaction_rejected after transaction_failed), so the frame stays until it is done.
  let busy = false;
  let processing = false;
  let closed = false;
  // A frame reloaded on its own (the browser's "Reload frame") says `ready` again: it is sent the
  // options it had, read once, marked reloaded with the booking already reported (if one was), and
  // what it reports again (that booking, a payment its earlier self made) is not fired again.
  // Answered as a first `ready`, it made a second draft booking and booking_logged.
  let init: ModalInit | null = null;
  let bookingId: number | null = null;
  const reported = new Set<string>();
  const onMessage = (event: MessageEvent) => {
    // Only our frame, from our origin, in this overlay.
    if (event.origin !== frameOrigin || event.source !== iframe.contentWindow) return;
    const message = event.data as FrameMessage | null;
    if (!message || message.source !== frameSource) return;
    if (message.type === 'ready') {
      const reloaded = init !== null;
      init ??= initMessage(options);
      const again = !reloaded ? init : bookingId === null ? { ...init, reloaded: true as const } : { ...init, resume_booking_id: bookingId };
      iframe.contentWindow!.postMessage({ source: hostSource, type: 'init', options: again }, frameOrigin);
    } else if (message.type === 'close') {
      handle.close();
    } else if (message.type === 'processing') {
      busy = processing = message.value;
      // Closed while the payment was processing: the frame reported its outcome (before saying it
      // is done), so it may go now.
      if (closed && !busy) dispose();
    } else if (message.type === 'language') {
      nameIn(message.value);
    } else if (message.type === 'event' && (callbackNames as readonly string[]).includes(message.name)) {
      if (message.name.startsWith('transaction_') || message.name === 'token_error') processing = false;
      // A reloaded frame shows the rejection again (its auth string has no attempts left): reported once.
      if (message.name === 'transaction_rejected') {
        if (reported.has('rejected')) return;
        reported.add('rejected');
      }
      const id = (message.argument as { id?: unknown } | null)?.id;
      const booking = message.name === 'booking_logged' || message.name === 'booking_exists';
      if (typeof id === 'number' && (booking || message.name === 'transaction_logged')) {
        const key = `${booking ? 'booking' : 'transaction'} ${id}`;
        if (reported.has(key)) return;
        reported.add(key);
        if (booking) bookingId = id;
      }
      fire(message.name, message.argument);
    }
  };
  const onBeforeUnload = (event: BeforeUnloadEvent) => {
    if (!processing) return;
    fire('close_window_attempted', { message: 'The user tried to close the window while a payment was processing.' });
    event.preventDefault();
    event.returnValue = '';
  };
  const onKey = (event: KeyboardEvent) => {
    if (event.key === 'Escape') handle.close();
  };
  let keptUntil: ReturnType<typeof setTimeout> | undefined;
  const dispose = () => {
    clearTimeout(keptUntil);
    window.removeEventListener('message', onMessage);
    window.removeEventListener('beforeunload', onBeforeUnload);
    overlay.remove();
  };
  const handle: ModalHandle = {
    close() {
      if (closed) return;
      closed = true;
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('focusin', onFocusIn);
      restoreHost();
      if (current === handle) current = null;
      previousFocus?.focus?.();
      fire('modal_closed', { message: processing ? 'The payment modal was closed while a payment was processing.' : 'The payment modal was closed.' });
      if (!busy) return dispose();
      // The payment may still complete (money moved): the frame is hidden, not removed (that would
      // end its page and the outcome with it), until it has reported the outcome, which fires
      // transaction_logged or its like as usual. A challenge nobody can answer now is not waited
      // for (`closed`). Before, the frame went at once and no outcome callback ever fired.
      style(overlay, { display: 'none' });
      overlay.setAttribute('aria-hidden', 'true');
      iframe.contentWindow?.postMessage({ source: hostSource, type: 'closed' }, frameOrigin);
      keptUntil = setTimeout(dispose, closedFrameKeptMs);
    },
  };
  close.addEventListener('click', () => handle.close());
  window.addEventListener('message', onMessage);
  window.addEventListener('beforeunload', onBeforeUnload);
  document.addEventListener('keydown', onKey);
  document.body.append(overlay);
  const restoreHost = inertBesides(overlay);
  document.addEventListener('focusin', onFocusIn);
  iframe.focus();
  current = handle;
  return handle;
}

const api = { open, version: '1.0.0' };
(window as unknown as { TrustfareModal: typeof api }).TrustfareModal = api;
