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

const script = document.currentScript as HTMLScriptElement | null;
const frameUrl = new URL('frame', script?.src ?? location.href);
const frameOrigin = frameUrl.origin;

const closeLabels: Record<string, string> = {
  zhZH: '关闭', enGB: 'Close', frFR: 'Fermer', deDE: 'Schließen', itIT: 'Chiudi', jaJA: '閉じる', kkKK: 'Жабу', koKO: '닫기',
  lvLV: 'Aizvērt', ptBR: 'Fechar', roRO: 'Închideți', ruRU: 'Закрыть', esES: 'Cerrar', ukUK: 'Закрити', uzUZ: 'Yopish',
};

function style(element: HTMLElement, rules: Partial<CSSStyleDeclaration>): void {
  Object.assign(element.style, rules);
}

function bookingData(options: ModalOptions): Record<string, unknown> {
  if (options.booking) return { ...options.booking };
  const input = document.querySelector<HTMLInputElement>(options.bookingInput ?? '.tmt_booking_id');
  return { booking_id: input ? Number(input.value.trim() || '0') : 0 };
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
  dialog.setAttribute('aria-label', 'Payment');
  style(dialog, { position: 'relative', width: 'min(480px, 100%)', height: 'min(760px, 100%)', background: '#fff', borderRadius: '12px', overflow: 'hidden', boxShadow: '0 20px 50px rgba(0,0,0,.35)' });
  const url = new URL(frameUrl);
  url.searchParams.set('origin', location.origin);
  if (options.language) url.searchParams.set('language', options.language);
  const iframe = document.createElement('iframe');
  iframe.src = url.toString();
  iframe.title = 'Payment';
  style(iframe, { width: '100%', height: '100%', border: '0', display: 'block' });
  const close = document.createElement('button');
  close.type = 'button';
  close.textContent = '×';
  close.setAttribute('aria-label', closeLabels[options.language ?? 'enGB'] ?? 'Close');
  style(close, { position: 'absolute', top: '8px', right: '8px', width: '40px', height: '40px', border: '0', borderRadius: '20px', background: '#eef1f6', color: '#1d2433', fontSize: '24px', lineHeight: '40px', cursor: 'pointer' });
  dialog.append(iframe, close);
  overlay.append(dialog);

  let processing = false;
  let closed = false;
  const onMessage = (event: MessageEvent) => {
    // Only our frame, from our origin, in this overlay.
    if (event.origin !== frameOrigin || event.source !== iframe.contentWindow) return;
    const message = event.data as FrameMessage | null;
    if (!message || message.source !== frameSource) return;
    if (message.type === 'ready') {
      iframe.contentWindow!.postMessage({ source: hostSource, type: 'init', options: initMessage(options) }, frameOrigin);
    } else if (message.type === 'close') {
      handle.close();
    } else if (message.type === 'processing') {
      processing = message.value;
    } else if (message.type === 'event' && (callbackNames as readonly string[]).includes(message.name)) {
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
  const handle: ModalHandle = {
    close() {
      if (closed) return;
      closed = true;
      window.removeEventListener('message', onMessage);
      window.removeEventListener('beforeunload', onBeforeUnload);
      document.removeEventListener('keydown', onKey);
      overlay.remove();
      if (current === handle) current = null;
      previousFocus?.focus?.();
      fire('modal_closed', { message: processing ? 'The payment modal was closed while a payment was processing.' : 'The payment modal was closed.' });
    },
  };
  close.addEventListener('click', () => handle.close());
  window.addEventListener('message', onMessage);
  window.addEventListener('beforeunload', onBeforeUnload);
  document.addEventListener('keydown', onKey);
  document.body.append(overlay);
  iframe.focus();
  current = handle;
  return handle;
}

const api = { open, version: '1.0.0' };
(window as unknown as { TrustfareModal: typeof api }).TrustfareModal = api;
