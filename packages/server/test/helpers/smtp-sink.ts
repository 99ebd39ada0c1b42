/**
 * A real SMTP server for tests (the `smtp-server` package): it takes mail on a
 * loopback port with AUTH PLAIN/LOGIN (user `codeloom`, password `mail-secret`,
 * over plain text: no STARTTLS), parses each message with `mailparser`, and
 * keeps it. `smtpUrl` is what CODELOOM_SMTP_URL should say.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  /** The envelope's recipients, as the client sent them in RCPT TO. */
  rcpt: string[];
}

export interface SmtpSink {
  smtpUrl: string;
  mails: ReceivedMail[];
  /** The first mail (from the n-th on) to `address` within `timeoutMs`. */
  waitFor(address: string, timeoutMs?: number, from?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export const SMTP_USER = 'codeloom';
export const SMTP_PASSWORD = 'mail-secret';

export async function startSmtpSink(options: { delayMs?: number; refuse?: (address: string) => boolean } = {}): Promise<SmtpSink> {
  const mails: ReceivedMail[] = [];
  const wake = new Set<() => void>();
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) return callback(null, { user: auth.username });
      return callback(new Error('Invalid username or password'));
    },
    onRcptTo(address, _session, callback) {
      if (options.refuse?.(address.address)) {
        const error = new Error(`Mailbox <${address.address}> unavailable`) as Error & { responseCode?: number };
        error.responseCode = 550;
        return callback(error);
      }
      callback();
    },
    onData(stream, session, callback) {
      simpleParser(stream).then((parsed) => {
        const to = parsed.to ? (Array.isArray(parsed.to) ? parsed.to : [parsed.to]).flatMap((a) => a.value.map((v) => v.address ?? '')) : [];
        mails.push({
          from: parsed.from?.text ?? '', to, subject: parsed.subject ?? '', text: parsed.text ?? '', html: typeof parsed.html === 'string' ? parsed.html : '',
          rcpt: session.envelope.rcptTo.map((r) => r.address),
        });
        for (const w of wake) w();
        setTimeout(() => callback(), options.delayMs ?? 0);
      }, (error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    smtpUrl: `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${port}`,
    mails,
    waitFor(address, timeoutMs = 5_000, from = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = mails.slice(from).find((m) => m.rcpt.includes(address.toLowerCase()) || m.rcpt.includes(address));
          if (found) { done(); resolve(found); }
        };
        const timer = setTimeout(() => { done(); reject(new Error(`no mail to ${address} within ${timeoutMs} ms (${mails.length} received)`)); }, timeoutMs);
        const done = () => { clearTimeout(timer); wake.delete(check); };
        wake.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
