// Loaded where the bank sends the cardholder back after a 3DS challenge, inside the page's
// challenge iframe. Tells that page (our own origin only) that the challenge is over; the page
// then reads the outcome from the server, never from this message.
if (window.parent !== window) {
  window.parent.postMessage({ type: 'tf:3ds-complete' }, location.origin);
}
