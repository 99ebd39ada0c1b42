import type { GenerationResult, GenerationStream } from '@codeloom/client';
import { useEffect, useRef, useState } from 'preact/hooks';
import { FileBrowser } from '../components/file-browser.js';
import { ErrorText, Select } from '../components/ui.js';
import { WaitNotice, refusalOf, waitHeadline, waitOfRetry, type Wait } from '../components/waiting.js';
import { useLoad, useSession } from '../hooks.js';
import { api, ensureFreshToken, messageOf, restore } from '../session.js';

type Phase = 'idle' | 'streaming' | 'done' | 'stopped' | 'failed';

/** Prompt, language, model and context; Generate streams tokens over the WebSocket channel; Stop cancels. */
export function PlaygroundPage() {
  const { environment } = useSession();
  const models = useLoad(() => api().models.list(), [environment]);
  const languages = useLoad(() => api().languages.list(), []);
  const [phase, setPhase] = useState<Phase>('idle');
  const [text, setText] = useState('');
  const [tokens, setTokens] = useState(0);
  const [elapsed, setElapsed] = useState(0);
  const [result, setResult] = useState<GenerationResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** A 429 the SDK is waiting out before the generation starts (a window or a budget that resets soon). */
  const [wait, setWait] = useState<Wait | null>(null);
  /** The 429 that ended the generation (a window or budget not worth waiting for, or still shut after the wait). */
  const [refusal, setRefusal] = useState<Wait | null>(null);
  const stream = useRef<GenerationStream | null>(null);
  const outRef = useRef<HTMLPreElement>(null);

  useEffect(() => () => stream.current?.cancel(), []);
  useEffect(() => { const el = outRef.current; if (el) el.scrollTop = el.scrollHeight; }, [text]);

  const generate = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const value = (k: string) => String(form.get(k) ?? '').trim();
    const context: Record<string, string | boolean> = {};
    if (value('framework')) context.framework = value('framework');
    if (value('database')) context.database = value('database');
    if (form.get('includeTests')) context.includeTests = true;
    setText(''); setTokens(0); setResult(null); setError(null); setWait(null); setRefusal(null); setPhase('streaming');
    const started = performance.now();
    const timer = setInterval(() => setElapsed((performance.now() - started) / 1000), 100);
    const params = {
      prompt: value('prompt'),
      ...(value('language') ? { language: value('language') } : {}),
      ...(value('model') ? { model: value('model') } : {}),
      ...(Object.keys(context).length ? { context } : {}),
    };
    // A tab that slept past its token's renewal: renew before connecting, and once more if the server still
    // answers token_expired before the first token (then the generation is started again, once).
    let retried = false;
    for (;;) {
      await ensureFreshToken().catch(() => { /* the channel's own refusal says what is wrong */ });
      const s = api().stream.generate(params, {
        // Said plainly while the SDK waits out a 429 (Retry-After) before the first token.
        onRetry: ({ error: e, delayMs }) => setWait(waitOfRetry(e, delayMs) ?? null),
      });
      stream.current = s;
      let received = '';
      let count = 0;
      try {
        for await (const token of s) {
          if (count === 0) setWait(null);
          received += token;
          count++;
          setText(received);
          setTokens(count);
        }
        const done = await s.result;
        setResult(done);
        setPhase('done');
      } catch (e) {
        const code = (e as { code?: string }).code;
        if (code === 'token_expired' && count === 0 && !retried && (await restore().catch(() => false))) {
          retried = true;
          continue;
        }
        if (code === 'cancelled') setPhase('stopped');
        else {
          const refused = refusalOf(e);
          if (refused) setRefusal(refused); else setError(messageOf(e));
          setPhase('failed');
        }
      } finally {
        if (stream.current === s) stream.current = null;
      }
      break;
    }
    setWait(null);
    clearInterval(timer);
    setElapsed((performance.now() - started) / 1000);
  };

  const status = phase === 'streaming' && wait ? waitHeadline(wait, 'waiting')
    : phase === 'streaming' ? `Generating… ${tokens} tokens received`
    : phase === 'done' && result ? `Done: ${result.tokens_used} tokens used in ${result.processing_time.toFixed(2)} s (${result.model})`
      : phase === 'stopped' ? `Stopped after ${tokens} tokens (${elapsed.toFixed(1)} s)`
        : phase === 'failed' && refusal ? `Generation refused: ${waitHeadline(refusal, 'refused')}`
          : phase === 'failed' ? 'Generation failed' : '';

  return (
    <>
      <h1 tabIndex={-1}>Playground</h1>
      <form onSubmit={generate} class="playground-form">
        <label class="wide">Prompt<textarea name="prompt" required maxLength={32000} rows={4} placeholder="REST API for todos with validation" /></label>
        <Select id="language" label="Language">
          <option value="">Infer from the prompt</option>
          {languages.data?.map((l) => <option key={l.id} value={l.id}>{l.name}</option>)}
        </Select>
        <Select id="model" label="Model">
          {models.data?.map((m) => <option key={m.id} value={m.id} selected={m.default}>{m.id === 'sandbox' ? 'sandbox (template, not AI)' : m.id}{m.default ? ' (default)' : ''}</option>)}
        </Select>
        {models.data?.every((m) => m.id === 'sandbox') && (
          <p class="notice wide" role="note" data-testid="sandbox-note">
            <code>sandbox</code> is the template model: it shapes runnable code skeletons from your prompt, but it is not AI. <a href="/dashboard/models">Connect a real model</a> (Ollama, vLLM, llama.cpp, OpenAI, Anthropic).
          </p>
        )}
        <fieldset class="wide">
          <legend>Context</legend>
          <div class="grid">
            <label>Framework<input name="framework" maxLength={100} placeholder="fastify" /></label>
            <label>Database<input name="database" maxLength={100} placeholder="postgres" /></label>
            <label class="check"><input type="checkbox" name="includeTests" /> Include tests</label>
          </div>
        </fieldset>
        <div class="row wide">
          <button type="submit" disabled={phase === 'streaming'}>Generate</button>
          <button type="button" class="secondary" disabled={phase !== 'streaming'} onClick={() => stream.current?.cancel()}>Stop</button>
          {/* Announced once; while a notice below says the same with its countdown, it is there for screen readers only. */}
          <span role="status" class={(phase === 'streaming' && wait) || (phase === 'failed' && refusal) ? 'status visually-hidden' : 'status'} data-phase={phase}>{status}</span>
        </div>
      </form>
      {phase === 'streaming' && wait && <WaitNotice wait={wait} mode="waiting" label="Waiting to start" />}
      {phase === 'failed' && refusal && <WaitNotice wait={refusal} mode="refused" label="Generation refused" />}
      <ErrorText message={error ?? models.error ?? languages.error} />
      {(phase !== 'idle' || text) && (
        <section aria-labelledby="out-h">
          <h2 id="out-h">Output</h2>
          <dl class="facts">
            <div><dt>Tokens</dt><dd data-testid="token-count">{result ? result.tokens_used : tokens}</dd></div>
            <div><dt>Time</dt><dd>{(result ? result.processing_time : elapsed).toFixed(2)} s</dd></div>
          </dl>
          {/* Only once there is text: an empty pre cannot carry a name (axe: aria-prohibited-attr). */}
          {text ? <pre class="stream-out" ref={outRef} tabIndex={0} aria-label="Streamed output" data-testid="stream-output">{text}</pre>
            : <p class="muted">{phase === 'streaming' ? 'No output yet.' : 'No output.'}</p>}
        </section>
      )}
      {result && <FileBrowser files={result.files} zipName={`codeloom-${result.id}.zip`} label="Generated files" />}
    </>
  );
}
