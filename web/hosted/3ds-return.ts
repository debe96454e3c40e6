// Loaded where the bank sends the cardholder back after a 3DS challenge: inside the page's
// challenge iframe, or in the challenge window the modal opened. Tells that page (same origin
// only) that the challenge is over; the page then reads the outcome from the server.
const message = { type: 'tf:3ds-complete' };
if (window.opener && window.opener !== window) {
  (window.opener as Window).postMessage(message, location.origin);
  window.close();
} else if (window.parent !== window) {
  window.parent.postMessage(message, location.origin);
}
