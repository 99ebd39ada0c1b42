import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

export function ErrorText({ message }: { message: string | null | undefined }) {
  return message ? <p class="error" role="alert">{message}</p> : null;
}

/** Copies text; falls back to selecting it where the Clipboard API is unavailable (plain http on a LAN address). */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <>
      <button type="button" onClick={async () => {
        try { await navigator.clipboard.writeText(text); setDone(true); } catch { setDone(false); }
      }}>{label}</button>
      <span role="status" class="muted">{done ? 'Copied' : ''}</span>
    </>
  );
}

/** A secret shown this once: the value in a read-only field, a Copy button, and a Done button that forgets it. */
export function SecretOnce({ title, value, onDone }: { title: string; value: string; onDone: () => void }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => { ref.current?.focus(); }, [value]);
  return (
    <div class="secret" role="region" aria-label={title} tabIndex={-1} ref={ref}>
      <h2>{title}</h2>
      <p>Copy it now: it is shown this once and cannot be seen again.</p>
      <code class="secret-value" data-testid="secret">{value}</code>
      <div class="row">
        <CopyButton text={value} />
        <button type="button" class="secondary" onClick={onDone}>Done</button>
      </div>
    </div>
  );
}

/** A modal confirmation (<dialog>: focus stays inside, Escape cancels). */
export function Confirm({ open, title, children, confirmLabel, onConfirm, onCancel }: {
  open: boolean; title: string; children: ComponentChildren; confirmLabel: string; onConfirm: () => void; onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby="confirm-title" onClose={onCancel}>
      <h2 id="confirm-title">{title}</h2>
      <div>{children}</div>
      <div class="row">
        <button type="button" class="danger" onClick={onConfirm}>{confirmLabel}</button>
        {/* The safe choice has focus when the dialog opens: Enter alone never destroys anything. */}
        <button type="button" class="secondary" onClick={onCancel} autoFocus>Cancel</button>
      </div>
    </dialog>
  );
}

export function Pager({ page, pages, onPage, label }: { page: number; pages: number; onPage: (p: number) => void; label: string }) {
  if (pages <= 1) return null;
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" class="secondary" disabled={page <= 1} onClick={() => onPage(page - 1)}>Previous page</button>
      <span>Page {page} of {pages}</span>
      <button type="button" class="secondary" disabled={page >= pages} onClick={() => onPage(page + 1)}>Next page</button>
    </nav>
  );
}

/** A labelled select: the label points at the select by id (wrapping it would add the options' text to its name). */
export function Select({ id, label, name, children, value, onChange, required }: {
  id: string; label: string; name?: string; children: ComponentChildren; value?: string; onChange?: (v: string) => void; required?: boolean;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} name={name ?? id} value={value} required={required} onChange={onChange ? (e) => onChange((e.currentTarget as HTMLSelectElement).value) : undefined}>{children}</select>
    </div>
  );
}
