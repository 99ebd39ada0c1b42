// The import graph's rules (docs/architecture.md draws them as floors): no cycles anywhere, and no import
// from a lower floor to a higher one. Checked by `npm run check:layers` and by
// packages/server/test/architecture.test.ts. The dashboard (packages/web, .tsx) is left out: swc's TypeScript
// parser here reads no JSX, and its esbuild browser bundle already fails on any import of the server or Node.
const SERVER = '^packages/server/src/';
const ROOT = `${SERVER}(app|create-context|context|main|index)\\.ts$`;
const FLOORS = {
  ground: `${SERVER}(errors|identity|config)(/|\\.ts$)`,
  infrastructure: `${SERVER}(storage|limits|providers)/`,
  plugins: `${SERVER}plugins/`,
  modules: `${SERVER}modules/`,
};
const notTest = '\\.test\\.ts$|/test-|-test-setup\\.ts$|-conformance\\.ts$';

/** `from` may not import anything in `to` (each a list of path patterns). */
const floorRule = (name, comment, from, to) => ({
  name, comment, severity: 'error',
  from: { path: from, pathNot: notTest },
  to: { path: to },
});

module.exports = {
  forbidden: [
    { name: 'no-circular', comment: 'An import cycle: one of the files should not know the other.', severity: 'error', from: {}, to: { circular: true } },
    floorRule('ground-floor', 'errors, identity and config import only protocol and Node: everything else stands on them.',
      FLOORS.ground, [FLOORS.infrastructure, FLOORS.plugins, FLOORS.modules, ROOT]),
    floorRule('infrastructure-floor', 'storage, limits and providers know nothing of HTTP plugins, features or the composition root.',
      FLOORS.infrastructure, [FLOORS.plugins, FLOORS.modules, ROOT]),
    floorRule('plugins-floor', 'Fastify plugins take what they need as arguments; they never import a feature module or the AppContext.',
      FLOORS.plugins, [FLOORS.modules, ROOT]),
    floorRule('modules-floor', 'Feature modules take named dependencies; only the composition root knows AppContext.',
      FLOORS.modules, [ROOT]),
    floorRule('protocol-stands-alone', 'The contract package imports no other package of ours.',
      '^packages/protocol/src/', ['^packages/(server|client|cli|web|sandbox-model)/']),
    floorRule('sandbox-model-on-protocol', 'The offline model knows the contract, not the server that hosts it.',
      '^packages/sandbox-model/src/', ['^packages/(server|client|cli|web)/']),
    floorRule('client-on-protocol', 'The SDK is built on the contract alone.',
      '^packages/client/src/', ['^packages/(server|cli|web|sandbox-model)/']),
  ],
  options: {
    // TypeScript 7 ships no JavaScript compiler API; swc parses the sources (type-only imports included).
    parser: 'swc',
    tsPreCompilationDeps: true,
    doNotFollow: { path: ['node_modules', '/dist/'] },
    exclude: { path: ['\\.d\\.ts$'] },
  },
};
