import { zipSync, strToU8 } from 'fflate';
import hljs from 'highlight.js/lib/common';
import { useEffect, useMemo, useState } from 'preact/hooks';

export interface BrowsableFile { path: string; content?: string }
interface Dir { name: string; path: string; dirs: Map<string, Dir>; files: BrowsableFile[] }

function treeOf(files: BrowsableFile[]): Dir {
  const root: Dir = { name: '', path: '', dirs: new Map(), files: [] };
  for (const file of files) {
    const parts = file.path.split('/');
    let dir = root;
    for (const part of parts.slice(0, -1)) {
      let next = dir.dirs.get(part);
      if (!next) { next = { name: part, path: dir.path ? `${dir.path}/${part}` : part, dirs: new Map(), files: [] }; dir.dirs.set(part, next); }
      dir = next;
    }
    dir.files.push(file);
  }
  return root;
}

const EXT_LANG: Record<string, string> = { ts: 'typescript', tsx: 'typescript', js: 'javascript', mjs: 'javascript', py: 'python', rs: 'rust', go: 'go', java: 'java', c: 'c', h: 'c', cpp: 'cpp', hpp: 'cpp', sh: 'bash', json: 'json', md: 'markdown', yml: 'yaml', yaml: 'yaml', toml: 'ini', html: 'xml', css: 'css', sql: 'sql' };

function highlighted(path: string, content: string): string {
  const ext = path.split('.').pop()?.toLowerCase() ?? '';
  const lang = Object.hasOwn(EXT_LANG, ext) ? EXT_LANG[ext] : undefined; // a file named x.constructor has no language
  try {
    return lang && hljs.getLanguage(lang) ? hljs.highlight(content, { language: lang, ignoreIllegals: true }).value : hljs.highlightAuto(content).value;
  } catch {
    return content.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!);
  }
}

export function downloadZip(files: { path: string; content: string }[], name: string) {
  const zip = zipSync(Object.fromEntries(files.map((f) => [f.path, strToU8(f.content)])));
  const url = URL.createObjectURL(new Blob([zip], { type: 'application/zip' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function DirItems({ dir, selected, onOpen }: { dir: Dir; selected: string | null; onOpen: (f: BrowsableFile) => void }) {
  return (
    <>
      {[...dir.dirs.values()].sort((a, b) => a.name.localeCompare(b.name)).map((d) => (
        <li key={d.path}>
          <details open>
            <summary><span aria-hidden="true">▸ </span>{d.name}/</summary>
            <ul><DirItems dir={d} selected={selected} onOpen={onOpen} /></ul>
          </details>
        </li>
      ))}
      {dir.files.sort((a, b) => a.path.localeCompare(b.path)).map((f) => (
        <li key={f.path}>
          <button type="button" class={`file${selected === f.path ? ' current' : ''}`} aria-current={selected === f.path ? 'true' : undefined}
            aria-label={f.path} onClick={() => onOpen(f)}>{f.path.split('/').pop()}</button>
        </li>
      ))}
    </>
  );
}

/**
 * Files as a folder tree (each file a button named by its path) beside a
 * highlighted code view. `load` fetches a file's content on demand (project
 * files); generated files come with their content.
 */
export function FileBrowser({ files, load, zipName, label }: { files: BrowsableFile[]; load?: (path: string) => Promise<string>; zipName?: string; label: string }) {
  const tree = useMemo(() => treeOf(files), [files]);
  const [open, setOpen] = useState<{ path: string; content: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  // A new set of files (not merely a new array of the same ones) opens its first file when its content is at hand.
  const signature = files.map((f) => f.path).join('\n');
  useEffect(() => {
    const first = files[0];
    setOpen(first?.content !== undefined ? { path: first.path, content: first.content } : null);
  }, [signature]);
  const openFile = async (f: BrowsableFile) => {
    setError(null);
    try {
      setOpen({ path: f.path, content: f.content ?? (load ? await load(f.path) : '') });
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const html = useMemo(() => (open ? highlighted(open.path, open.content) : ''), [open]);
  const complete = files.every((f) => f.content !== undefined);
  return (
    <section class="files" aria-label={label}>
      <div class="tree">
        <div class="row">
          <h3>Files ({files.length})</h3>
          {zipName && complete && files.length > 0 && (
            <button type="button" class="secondary" onClick={() => downloadZip(files as { path: string; content: string }[], zipName)}>Download zip</button>
          )}
        </div>
        <ul aria-label="File tree"><DirItems dir={tree} selected={open?.path ?? null} onOpen={(f) => void openFile(f)} /></ul>
      </div>
      <div class="code">
        {error && <p role="alert" class="error">{error}</p>}
        {open ? (
          <figure>
            <figcaption>{open.path}</figcaption>
            {/* highlight.js escapes the source; the markup is its own spans */}
            <pre tabIndex={0} aria-label={`Code of ${open.path}`}><code class="hljs" dangerouslySetInnerHTML={{ __html: html }} /></pre>
          </figure>
        ) : <p class="muted">Choose a file to see its code.</p>}
      </div>
    </section>
  );
}
