/**
 * Messages between the integrator's page (payment-modal.js) and our frame. Every message carries
 * `source` so unrelated postMessage traffic is ignored; both sides also check the exact origin
 * and the window the message came from.
 */
export const hostSource = 'trustfare-modal-host';
export const frameSource = 'trustfare-modal-frame';

export const callbackNames = [
  'token_error', 'booking_logged', 'booking_exists', 'booking_error', 'transaction_logged', 'transaction_failed',
  'transaction_rejected', 'transaction_timeout', 'transaction_error', 'modal_closed', 'close_window_attempted',
] as const;
export type CallbackName = (typeof callbackNames)[number];

/** What the host sends once the frame is ready: the modal options, minus the callbacks. */
export interface ModalInit {
  path: string;
  channels: number;
  currencies: string;
  total: number;
  auth: string;
  verify: string[];
  booking: Record<string, unknown>;
  /** Fields named in `verify` that the options give at their top level rather than in `booking`. */
  signed: Record<string, unknown>;
  language?: string;
  /**
   * The frame said `ready` again (it was reloaded alone): the booking its first session opened,
   * which the service opens again for the same auth string instead of a second draft booking.
   */
  resume_booking_id?: number;
  /**
   * The frame said `ready` again before the host heard of a booking (its first session's answer was
   * lost with the reload): the service opens the booking the auth string's latest session opened,
   * if any, rather than a second draft.
   */
  reloaded?: true;
  /**
   * A random name this modal was given when opened, the same in every `init` it sends (a reloaded
   * frame's too): the service reopens a booking for a reloaded frame only when the session that
   * opened it came from the same modal. The auth string alone names no payer: every visitor who
   * loaded the page in that second holds it.
   */
  opener: string;
}

export type HostMessage =
  | { source: typeof hostSource; type: 'init'; options: ModalInit }
  // Tab came round from the host's × (the focus stays in the dialog): focus the frame's first control.
  | { source: typeof hostSource; type: 'focus' }
  // The modal was closed while the payment was processing: the frame, hidden, reports the outcome
  // and then says `processing` false; a 3DS challenge nobody can answer now is not waited for.
  | { source: typeof hostSource; type: 'closed' };

export type FrameMessage =
  | { source: typeof frameSource; type: 'ready' }
  | { source: typeof frameSource; type: 'event'; name: CallbackName; argument: unknown }
  // true: the card left the form; false: the outcome was reported (after its callbacks' events).
  | { source: typeof frameSource; type: 'processing'; value: boolean }
  // The frame is shown in another language than the host asked for (none: the booking's): name the dialog in it.
  | { source: typeof frameSource; type: 'language'; value: string }
  // Escape pressed inside the frame (focus is there while the modal is open): the host closes.
  | { source: typeof frameSource; type: 'close' };
