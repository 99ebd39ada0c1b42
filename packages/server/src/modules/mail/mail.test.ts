import { describe, expect, it } from 'vitest';
import { Mailer, createMailer, defaultMailFrom, maskEmail, type MailLog, type MailTransport } from './mailer.js';
import { invitationMail, lifetimeInWords, passwordResetMail } from './mail-templates.js';

function recordingLog() {
  const calls: Array<{ level: string; object: Record<string, unknown>; message: string }> = [];
  const log: MailLog = {
    info: (object, message) => calls.push({ level: 'info', object, message }),
    warn: (object, message) => calls.push({ level: 'warn', object, message }),
  };
  return { calls, log };
}

describe('mail templates', () => {
  it('a reset mail carries the link in text and HTML, says its lifetime, and escapes what the account typed', () => {
    const link = 'https://codeloom.example/dashboard/reset-password#token=clpr_abc&x=<y>';
    const mail = passwordResetMail({ name: 'Ada <script>alert(1)</script>', link, ttlSeconds: 1800 });
    expect(mail.subject).toBe('Reset your Codeloom password');
    expect(mail.text).toContain(`\n${link}\n`);
    expect(mail.text).toContain('30 minutes');
    expect(mail.html).toContain('href="https://codeloom.example/dashboard/reset-password#token=clpr_abc&amp;x=&lt;y&gt;"');
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).toContain('Ada &lt;script&gt;');
  });

  it('an invitation names the organization, the inviter, the role and the expiry', () => {
    const mail = invitationMail({ organization: 'Acme & Co', inviter: 'Ada', role: 'member', link: 'https://x.example/i/abc', expiresAt: '2026-12-01T00:00:00Z' });
    expect(mail.subject).toBe('Ada invited you to Acme & Co on Codeloom');
    expect(mail.text).toContain('as member');
    expect(mail.text).toContain('https://x.example/i/abc');
    expect(mail.html).toContain('Acme &amp; Co');
    expect(mail.html).toContain('2026-12-01T00:00:00Z');
  });

  it('lifetimes in words', () => {
    expect([lifetimeInWords(1), lifetimeInWords(45), lifetimeInWords(60), lifetimeInWords(1800), lifetimeInWords(3600), lifetimeInWords(7200), lifetimeInWords(90)])
      .toEqual(['1 second', '45 seconds', '1 minute', '30 minutes', '1 hour', '2 hours', '90 seconds']);
  });
});

describe('Mailer', () => {
  it('masks addresses', () => {
    expect(maskEmail('ada@example.com')).toBe('a***@example.com');
    expect(maskEmail('@example.com')).toBe('***@example.com');
    expect(maskEmail('nobody')).toBe('***');
  });

  it('a failed send resolves false and logs the address masked, the secrets cut out, the SMTP code kept', async () => {
    const transport: MailTransport = {
      sendMail: async () => { throw Object.assign(new Error('550 <ada@example.com> refused: clpr_secret in https://x/#token=clpr_secret'), { code: 'EENVELOPE', responseCode: 550, command: 'RCPT TO' }); },
      close() {},
    };
    const mailer = new Mailer(transport, 'Codeloom <no-reply@x>');
    const { calls, log } = recordingLog();
    mailer.attachLogger(log);
    expect(await mailer.send('password_reset', 'ada@example.com', passwordResetMail({ name: 'Ada', link: 'https://x/#token=clpr_secret', ttlSeconds: 60 }), ['clpr_secret', 'https://x/#token=clpr_secret'])).toBe(false);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ level: 'warn', message: 'mail not sent', object: { mail: 'password_reset', to: 'a***@example.com', code: 'EENVELOPE', response_code: 550, command: 'RCPT TO' } });
    const logged = JSON.stringify(calls);
    expect(logged).not.toContain('ada@example.com');
    expect(logged).not.toContain('clpr_secret');
  });

  it('sends what it is given, from its From, and waits for sends in flight when closed', async () => {
    const sent: unknown[] = [];
    let closed = false;
    const transport: MailTransport = { sendMail: async (m) => { await new Promise((r) => setTimeout(r, 20)); sent.push(m); }, close() { closed = true; } };
    const mailer = new Mailer(transport, 'Codeloom <no-reply@x>');
    const sending = mailer.send('invitation', 'bo@example.com', { subject: 's', text: 't', html: '<p>h</p>' });
    await mailer.close();
    expect(sent).toEqual([{ from: 'Codeloom <no-reply@x>', to: 'bo@example.com', subject: 's', text: 't', html: '<p>h</p>' }]);
    expect(closed).toBe(true);
    expect(await sending).toBe(true);
  });

  it('without CODELOOM_SMTP_URL: not configured, nothing sent, said at info', async () => {
    const mailer = createMailer({ publicUrl: 'https://codeloom.example:8443/base' });
    expect(mailer.configured).toBe(false);
    expect(mailer.from).toBe('Codeloom <no-reply@codeloom.example>');
    const { calls, log } = recordingLog();
    mailer.attachLogger(log);
    expect(await mailer.send('password_reset', 'ada@example.com', { subject: 's', text: 't', html: 'h' })).toBe(false);
    expect(calls).toEqual([{ level: 'info', object: { mail: 'password_reset', to: 'a***@example.com' }, message: 'no mail sent: CODELOOM_SMTP_URL is not set' }]);
    expect(defaultMailFrom('not a url')).toBe('Codeloom <no-reply@localhost>');
    expect(createMailer({ smtpUrl: 'smtp://u:p@127.0.0.1:2525', mailFrom: 'Ops <ops@x>', publicUrl: 'http://x' })).toMatchObject({ configured: true, from: 'Ops <ops@x>' });
  });
});
