// Import rules of src/ (npm run lint runs them; docs/architecture.md draws the layers).
// Layers, lowest first: security <- task <- engine <- workflows <- ui, init <- cli. An import
// points down (or stays in its layer), never up, and no module reaches itself again through
// its imports (type-only imports count: a circle of types is still a circle to read).
// `src/task` is the public task API, the contract between the engine and a task script (what
// `defineTask` takes, the context a task gets, what it reports): types and one helper, no
// engine code, so the engine that runs tasks and the tasks themselves both build on it.
const LAYERS = {
  security: ['^src/security/'],
  task: ['^src/task/'],
  engine: ['^src/engine/'],
  workflows: ['^src/workflows/'],
  ui: ['^src/ui/'],
  init: ['^src/init/'],
};
const ABOVE = {
  security: ['^src/(task|engine|workflows|ui|cli|init)/'],
  task: ['^src/(engine|workflows|ui|cli|init)/'],
  engine: ['^src/(workflows|ui|cli|init)/'],
  workflows: ['^src/(ui|cli|init)/'],
  // The dashboard and the project scaffold are served or written by cli commands, never the other way.
  ui: ['^src/(cli|init)/'],
  init: ['^src/(cli|ui)/'],
};

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle: break it by moving the shared part into a module both import.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...Object.keys(LAYERS).map((layer) => ({
      name: `no-upward-from-${layer}`,
      severity: 'error',
      comment: `src/${layer} imports a higher layer: move what it needs down, or pass it in.`,
      from: { path: LAYERS[layer] },
      to: { path: ABOVE[layer] },
    })),
  ],
  options: {
    parser: 'swc',
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    moduleSystems: ['es6', 'cjs'],
  },
};
