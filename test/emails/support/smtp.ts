import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { parseMail, type ParsedMail } from './mime.js';

export interface ReceivedMail extends ParsedMail {
  /** RCPT TO addresses: To and Bcc alike, as the server saw them. */
  envelopeTo: string[];
  envelopeFrom: string;
  raw: string;
}

export interface TestSmtpServer {
  url: string;
  received: ReceivedMail[];
  /** The next `count` messages are refused with this SMTP reply code (e.g. 451, 550). */
  refuseNext(count: number, responseCode: number): void;
  /** RCPT TO `address` is deferred (450, as greylisting does) the next `count` times it is given. */
  deferRecipient(address: string, count: number): void;
  /** MAIL FROM is refused with this reply code (e.g. 553, sender not allowed) the next `count` times. */
  refuseSenderNext(count: number, responseCode: number): void;
  /** RCPT TO `address` is refused with this reply code (e.g. 550, no such mailbox) the next `count` times it is given, with `text` after the code if given. */
  refuseRecipient(address: string, count: number, responseCode: number, text?: string): void;
  /** Each message is answered this long after its data arrived (a slow relay); 0 by default. */
  answerDelayMs: number;
  /** The most messages the server was answering at one time (reset it to measure). */
  mostAtOnce: number;
  /** Connections clients opened so far. */
  connections: number;
  /** With `password` given at start: the password AUTH takes now (any user name). */
  password: string;
  close(): Promise<void>;
}

/**
 * A real SMTP server on a free local port; nodemailer talks to it as to any relay.
 * `idleTimeoutMs` closes a connection that says nothing for that long, as relays do. With
 * `password`, clients must log in (AUTH PLAIN or LOGIN, over plain TCP) with it; a wrong one is
 * answered 535.
 */
export async function startSmtpServer(options: { idleTimeoutMs?: number; password?: string } = {}): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  let refusals = 0;
  let refusalCode = 451;
  let answering = 0;
  const recipientRefusals = new Map<string, { count: number; responseCode: number; text?: string }>();
  const senderRefusals = { count: 0, responseCode: 553 };
  const state: TestSmtpServer = {
    url: '',
    received,
    answerDelayMs: 0,
    mostAtOnce: 0,
    connections: 0,
    password: options.password ?? '',
    refuseNext(count, responseCode) {
      refusals = count;
      refusalCode = responseCode;
    },
    deferRecipient(address, count) {
      recipientRefusals.set(address, { count, responseCode: 450 });
    },
    refuseSenderNext(count, responseCode) {
      Object.assign(senderRefusals, { count, responseCode });
    },
    refuseRecipient(address, count, responseCode, text) {
      recipientRefusals.set(address, { count, responseCode, ...(text === undefined ? {} : { text }) });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = new SMTPServer({
    ...(options.password === undefined
      ? { authOptional: true, disabledCommands: ['STARTTLS', 'AUTH'] }
      : { authOptional: false, allowInsecureAuth: true, authMethods: ['PLAIN', 'LOGIN'], disabledCommands: ['STARTTLS'] }),
    onAuth(auth, _session, callback) {
      if (auth.password === state.password) return callback(null, { user: auth.username });
      callback(new Error('Authentication credentials invalid'));
    },
    logger: false,
    ...(options.idleTimeoutMs ? { socketTimeout: options.idleTimeoutMs } : {}),
    onMailFrom(_address, _session, callback) {
      if (senderRefusals.count <= 0) return callback();
      senderRefusals.count -= 1;
      const error = new Error('Sender address rejected: not owned by user') as Error & { responseCode: number };
      error.responseCode = senderRefusals.responseCode;
      callback(error);
    },
    onRcptTo(address, _session, callback) {
      const refusal = recipientRefusals.get(address.address);
      if (!refusal || refusal.count <= 0) return callback();
      refusal.count -= 1;
      const error = new Error(refusal.text ?? (refusal.responseCode >= 500 ? 'No such mailbox' : 'Greylisted, try again later')) as Error & { responseCode: number };
      error.responseCode = refusal.responseCode;
      callback(error);
    },
    onConnect(_session, callback) {
      state.connections += 1;
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', async () => {
        answering += 1;
        state.mostAtOnce = Math.max(state.mostAtOnce, answering);
        if (state.answerDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, state.answerDelayMs));
        answering -= 1;
        if (refusals > 0) {
          refusals -= 1;
          const error = new Error(refusalCode >= 500 ? 'Mailbox unavailable' : 'Try again later') as Error & { responseCode: number };
          error.responseCode = refusalCode;
          callback(error);
          return;
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        received.push({
          ...parseMail(raw),
          raw,
          envelopeTo: session.envelope.rcptTo.map((address) => address.address),
          envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  state.url = `smtp://127.0.0.1:${port}`;
  return state;
}
