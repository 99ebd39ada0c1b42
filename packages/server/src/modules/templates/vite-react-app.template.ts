import { jsonFile, NODE_GITIGNORE, type ProjectTemplate } from './project-template.js';

const README = `# Vite + React app

A small React 19 todo app built with [Vite 7](https://vite.dev) and tested
with [Vitest](https://vitest.dev). JSX is compiled by the esbuild that Vite
already ships (see \`vite.config.js\`), so there is no extra plugin.

## Run

\`\`\`sh
npm install
npm run dev       # http://localhost:5173 with hot reload
npm test          # vitest: the state logic and a server-side render of <App>
npm run build     # production bundle in dist/
npm run preview   # serve dist/ locally
\`\`\`

## Layout

- \`index.html\`: the page Vite serves and builds from.
- \`src/main.jsx\`: mounts \`<App>\` into \`#root\`.
- \`src/App.jsx\`: the todo list component.
- \`src/todos.js\`: pure state updates, kept out of the component so they are easy to test.
- \`src/App.test.jsx\`: tests; rendering uses \`react-dom/server\`, so no browser or DOM emulation is needed.

Want Fast Refresh or the React Compiler? Add \`@vitejs/plugin-react\` to \`vite.config.js\`.
`;

const VITE_CONFIG = `import { defineConfig } from 'vite';

// esbuild's automatic JSX runtime is enough to compile React components;
// @vitejs/plugin-react would add Fast Refresh, which a starter can live without.
export default defineConfig({
  esbuild: { jsx: 'automatic' },
});
`;

const INDEX_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="UTF-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1.0" />
    <title>Vite + React</title>
  </head>
  <body>
    <div id="root"></div>
    <script type="module" src="/src/main.jsx"></script>
  </body>
</html>
`;

const MAIN = `import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.jsx';
import './styles.css';

createRoot(document.getElementById('root')).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
`;

const TODOS = `/** Pure state transitions for the todo list, kept apart from React so they are easy to test. */
export function addTodo(todos, title) {
  const text = title.trim();
  if (text === '') return todos;
  const id = todos.reduce((max, t) => Math.max(max, t.id), 0) + 1;
  return [...todos, { id, title: text, done: false }];
}

export function toggleTodo(todos, id) {
  return todos.map((t) => (t.id === id ? { ...t, done: !t.done } : t));
}

export function removeTodo(todos, id) {
  return todos.filter((t) => t.id !== id);
}

export function remaining(todos) {
  return todos.filter((t) => !t.done).length;
}
`;

const APP = `import { useState } from 'react';
import { addTodo, remaining, removeTodo, toggleTodo } from './todos.js';

export function App({ initialTodos = [] }) {
  const [todos, setTodos] = useState(initialTodos);
  const [title, setTitle] = useState('');

  function submit(event) {
    event.preventDefault();
    setTodos((current) => addTodo(current, title));
    setTitle('');
  }

  return (
    <main className="app">
      <h1>Todos</h1>
      <form onSubmit={submit}>
        <input aria-label="New todo" value={title} onChange={(e) => setTitle(e.target.value)} placeholder="What needs doing?" />
        <button type="submit">Add</button>
      </form>
      <ul>
        {todos.map((todo) => (
          <li key={todo.id} className={todo.done ? 'done' : undefined}>
            <label>
              <input type="checkbox" checked={todo.done} onChange={() => setTodos((current) => toggleTodo(current, todo.id))} />
              {todo.title}
            </label>
            <button type="button" aria-label={\`Remove \${todo.title}\`} onClick={() => setTodos((current) => removeTodo(current, todo.id))}>×</button>
          </li>
        ))}
      </ul>
      <p className="count">{remaining(todos)} left</p>
    </main>
  );
}
`;

const STYLES = `:root {
  font-family: system-ui, sans-serif;
  color: #1f2933;
  background: #f5f7fa;
}

.app {
  max-width: 32rem;
  margin: 4rem auto;
  padding: 0 1rem;
}

form {
  display: flex;
  gap: 0.5rem;
}

form input {
  flex: 1;
  padding: 0.5rem;
}

ul {
  list-style: none;
  padding: 0;
}

li {
  display: flex;
  justify-content: space-between;
  padding: 0.25rem 0;
}

li.done label {
  text-decoration: line-through;
  color: #7b8794;
}
`;

const TEST = `import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { App } from './App.jsx';
import { addTodo, remaining, removeTodo, toggleTodo } from './todos.js';

describe('todo state', () => {
  it('adds trimmed todos with increasing ids and ignores blank ones', () => {
    const todos = addTodo(addTodo([], '  buy milk '), 'walk dog');
    expect(todos).toEqual([{ id: 1, title: 'buy milk', done: false }, { id: 2, title: 'walk dog', done: false }]);
    expect(addTodo(todos, '   ')).toBe(todos);
  });

  it('toggles, removes and counts what is left', () => {
    const todos = toggleTodo(addTodo(addTodo([], 'a'), 'b'), 1);
    expect(remaining(todos)).toBe(1);
    expect(removeTodo(todos, 2)).toEqual([{ id: 1, title: 'a', done: true }]);
  });
});

describe('<App>', () => {
  it('renders the given todos, marks done ones and counts what is left', () => {
    const todos = [{ id: 1, title: 'ship it', done: false }, { id: 2, title: 'write docs', done: true }];
    // React separates adjacent text nodes with <!-- --> markers; they are not part of the visible text.
    const html = renderToString(<App initialTodos={todos} />).replaceAll('<!-- -->', '');
    expect(html).toContain('ship it');
    expect(html).toMatch(/<li class="done">.*write docs/);
    expect(html).toContain('1 left');
  });
});
`;

export const viteReactApp: ProjectTemplate = {
  id: 'vite-react-app',
  name: 'Vite + React app',
  description: 'A React 19 single-page app (todo list) on Vite 7 with JSX via esbuild, Vitest tests and a production build.',
  language: 'javascript',
  files: [
    NODE_GITIGNORE,
    jsonFile('package.json', {
      name: 'vite-react-app',
      version: '0.1.0',
      private: true,
      type: 'module',
      engines: { node: '^20.19.0 || >=22.12.0' },
      scripts: { dev: 'vite', build: 'vite build', preview: 'vite preview', test: 'vitest run' },
      dependencies: { react: '^19.1.0', 'react-dom': '^19.1.0' },
      devDependencies: { vite: '^7.1.0', vitest: '^3.2.0' },
    }),
    { path: 'README.md', content: README },
    { path: 'index.html', content: INDEX_HTML },
    { path: 'vite.config.js', content: VITE_CONFIG },
    { path: 'src/main.jsx', content: MAIN },
    { path: 'src/App.jsx', content: APP },
    { path: 'src/todos.js', content: TODOS },
    { path: 'src/styles.css', content: STYLES },
    { path: 'src/App.test.jsx', content: TEST },
  ],
};
