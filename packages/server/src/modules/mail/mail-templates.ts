/**
 * The mail Codeloom sends, each as plain text and a simple HTML version with
 * the same words. Links are the only secrets in them; nothing here logs.
 */
export interface MailContent {
  subject: string;
  text: string;
  html: string;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A lifetime in words: "30 minutes", "1 hour", "45 seconds". */
export function lifetimeInWords(seconds: number): string {
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (seconds % 3600 === 0) return unit(seconds / 3600, 'hour');
  if (seconds >= 60 && seconds % 60 === 0) return unit(seconds / 60, 'minute');
  return unit(seconds, 'second');
}

function layout(title: string, paragraphs: string[], link: { href: string; label: string }, after: string[]): string {
  const p = (s: string) => `<p style="margin:0 0 16px">${escapeHtml(s)}</p>`;
  return [
    '<!doctype html>',
    `<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title></head>`,
    '<body style="font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1a1a1a;line-height:1.5;max-width:560px;margin:0 auto;padding:24px">',
    `<h1 style="font-size:20px;margin:0 0 16px">${escapeHtml(title)}</h1>`,
    ...paragraphs.map(p),
    `<p style="margin:0 0 16px"><a href="${escapeHtml(link.href)}" style="display:inline-block;background:#2457c5;color:#fff;padding:10px 16px;border-radius:6px;text-decoration:none">${escapeHtml(link.label)}</a></p>`,
    `<p style="margin:0 0 16px;font-size:13px;color:#555">Or paste this address into your browser: <br><span style="word-break:break-all">${escapeHtml(link.href)}</span></p>`,
    ...after.map(p),
    '</body></html>',
  ].join('\n');
}

/** The password reset link (POST /api/v1/auth/password-reset). */
export function passwordResetMail(input: { name: string; link: string; ttlSeconds: number }): MailContent {
  const subject = 'Reset your Codeloom password';
  const lifetime = lifetimeInWords(input.ttlSeconds);
  const intro = [`Hello ${input.name},`, 'Someone (we hope you) asked to reset the password of your Codeloom account. Choose a new password here:'];
  const after = [
    `The link works once and for ${lifetime}. Setting a new password signs you out everywhere.`,
    'If you did not ask for this, ignore this message: your password stays as it is.',
  ];
  return {
    subject,
    text: `${intro.join('\n\n')}\n\n${input.link}\n\n${after.join('\n\n')}\n`,
    html: layout(subject, intro, { href: input.link, label: 'Choose a new password' }, after),
  };
}

/** An invitation to join an organization (ready for the organizations work: CONTRACT §12.5, invitations). */
export function invitationMail(input: { organization: string; inviter: string; role: string; link: string; expiresAt: string }): MailContent {
  const subject = `${input.inviter} invited you to ${input.organization} on Codeloom`;
  const intro = [`${input.inviter} invited you to join the organization ${input.organization} on Codeloom as ${input.role}.`, 'Accept the invitation here (sign in or create an account with this email address first):'];
  const after = [`The invitation expires at ${input.expiresAt}.`, 'If you do not know the sender, ignore this message.'];
  return {
    subject,
    text: `${intro.join('\n\n')}\n\n${input.link}\n\n${after.join('\n\n')}\n`,
    html: layout(subject, intro, { href: input.link, label: 'Accept the invitation' }, after),
  };
}
