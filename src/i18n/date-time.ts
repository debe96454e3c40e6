/**
 * How a receipt writes the moment of a payment, in the receipt mail and on the payment page's
 * receipt alike: the day in words, a 24-hour clock in every language (koKR's own default is a
 * Latin "PM 09:30", session 29), in UTC and marked so. Its own module: the page's script takes it
 * without the server's formatters.
 */
export const receiptDateTimeOptions: Intl.DateTimeFormatOptions = {
  year: 'numeric', month: 'long', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'UTC', timeZoneName: 'short',
};
