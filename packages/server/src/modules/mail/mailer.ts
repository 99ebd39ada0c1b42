import nodemailer from 'nodemailer';
import type { MailContent } from './mail-templates.js';

/** Where the mailer reports: the server's logger once attached (pino's `(object, message)` form). */
export interface MailLog {
  info(object: Record<string, unknown>, message: string): void;
  warn(object: Record<string, unknown>, message: string): void;
}

/** The part of a nodemailer transport the mailer uses (tests may hand in another). */
export interface MailTransport {
  sendMail(message: { from: string; to: string; subject: string; text: string; html: string }): Promise<unknown>;
  close(): void;
}

/** `ada@example.com` → `a***@example.com`: enough to tell messages apart in a log, not to read the address. */
export function maskEmail(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 0) return '***';
  return `${address.slice(0, Math.min(1, at))}***${address.slice(at)}`;
}

const EMAILS = /[^\s<>"'@]+@[^\s<>"'@]+/g;

/** An error's message for the log: addresses masked, the secrets of the message (a token, a link) cut out. */
function scrub(error: unknown, secrets: readonly string[]): Record<string, unknown> {
  const e = error as { message?: unknown; code?: unknown; responseCode?: unknown; command?: unknown };
  let message = typeof e?.message === 'string' ? e.message : String(error);
  for (const secret of secrets) if (secret) message = message.split(secret).join('[redacted]');
  message = message.replace(EMAILS, (m) => maskEmail(m)).slice(0, 500);
  return {
    error: message,
    ...(typeof e?.code === 'string' ? { code: e.code } : {}),
    ...(typeof e?.responseCode === 'number' ? { response_code: e.responseCode } : {}),
    ...(typeof e?.command === 'string' ? { command: e.command } : {}),
  };
}

const fallbackLog: MailLog = {
  info() {},
  warn(object, message) { process.emitWarning(`${message}: ${JSON.stringify(object)}`); },
};

/**
 * The one way Codeloom sends mail (password resets now; invitations with
 * organizations). `send` never throws and is meant to be called without
 * awaiting, off the request's path: a failed send is logged (the address
 * masked, the message's secrets cut out) and changes no answer. Without
 * CODELOOM_SMTP_URL nothing is sent and that is logged at info.
 */
export class Mailer {
  private log: MailLog = fallbackLog;
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly transport: MailTransport | undefined, readonly from: string) {}

  get configured(): boolean {
    return this.transport !== undefined;
  }

  attachLogger(log: MailLog): void {
    this.log = log;
  }

  /** The logger mail work reports to (the server's, once attached). */
  get logger(): MailLog {
    return this.log;
  }

  /**
   * Sends `content` to `to`; resolves true when the mail server took it.
   * `kind` names the mail in logs; `secrets` (the token, the link) never reach a log line.
   */
  send(kind: string, to: string, content: MailContent, secrets: readonly string[] = []): Promise<boolean> {
    if (!this.transport) {
      this.log.info({ mail: kind, to: maskEmail(to) }, 'no mail sent: CODELOOM_SMTP_URL is not set');
      return Promise.resolve(false);
    }
    const sending = this.transport.sendMail({ from: this.from, to, subject: content.subject, text: content.text, html: content.html })
      .then(() => {
        this.log.info({ mail: kind, to: maskEmail(to) }, 'mail sent');
        return true;
      }, (error: unknown) => {
        this.log.warn({ mail: kind, to: maskEmail(to), ...scrub(error, secrets) }, 'mail not sent');
        return false;
      });
    this.pending.add(sending);
    void sending.finally(() => this.pending.delete(sending));
    return sending;
  }

  /** Waits for mail being sent (at shutdown), then closes the connection pool. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.pending]);
    this.transport?.close();
  }
}

/** The default From: `Codeloom <no-reply@HOST>`, HOST from the public URL. */
export function defaultMailFrom(publicUrl: string): string {
  let host = 'localhost';
  try { host = new URL(publicUrl).hostname || host; } catch { /* not a URL: keep localhost */ }
  return `Codeloom <no-reply@${host}>`;
}

/** The mailer CODELOOM_SMTP_URL and CODELOOM_MAIL_FROM describe (no transport without a URL). */
export function createMailer(settings: { smtpUrl?: string; mailFrom?: string; publicUrl: string }): Mailer {
  const from = settings.mailFrom ?? defaultMailFrom(settings.publicUrl);
  if (!settings.smtpUrl) return new Mailer(undefined, from);
  // smtps:// is TLS from the start; smtp:// upgrades with STARTTLS when the server offers it. Short timeouts: nobody waits on them.
  const transport = nodemailer.createTransport({ url: settings.smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 } as never) as unknown as MailTransport;
  return new Mailer(transport, from);
}
