// Which folder of lambda/ may import which: this list is the reference, which docs/architecture.md
// ("Dependencies between folders") summarises. `npm run lint` runs it over the product's folders.
/** Each folder and the other folders of lambda/ it may import. */
const ALLOWED = {
  base: [],
  store: [],
  tags: [],
  sse: [],
  eventstream: [],
  http: [],
  providers: ['sse', 'eventstream'],
  pricing: ['providers'],
  upstream: ['providers', 'streaming'],
  streaming: ['providers', 'sse', 'eventstream'],
  auth: ['store', 'tags'],
  keys: ['providers', 'store'],
  'account-prices': ['pricing', 'providers', 'store'],
  'account-settings': ['auth', 'upstream', 'store'],
  usage: ['providers', 'pricing', 'tags', 'http', 'store', 'streaming'],
  budgets: ['auth', 'usage', 'tags', 'store'],
  cache: ['providers', 'sse', 'eventstream', 'store'],
  alerts: ['budgets', 'usage', 'store'],
  export: ['usage', 'audit'],
  audit: ['store'],
  people: ['auth', 'store'],
  api: [
    'auth',
    'budgets',
    'alerts',
    'audit',
    'people',
    'usage',
    'tags',
    'providers',
    'pricing',
    'account-prices',
    'account-settings',
    'http',
  ],
  pipeline: [
    'auth',
    'budgets',
    'cache',
    'keys',
    'account-prices',
    'account-settings',
    'usage',
    'tags',
    'providers',
    'streaming',
    'upstream',
    'http',
  ],
  dashboard: ['api', 'providers', 'usage'],
  local: ['auth', 'keys', 'usage', 'providers', 'http', 'store'],
};
// The composition root (config, the dependencies, the handler over them) may build from every feature;
// the steps that receive the dependencies name their type. The entry points import the root.
ALLOWED.wiring = Object.keys(ALLOWED).filter((folder) => folder !== 'dashboard');
for (const folder of ['pipeline', 'api', 'local', 'upstream']) ALLOWED[folder].push('wiring');
ALLOWED.entry = Object.keys(ALLOWED);

/** The folder every other folder may use: small helpers that import no other folder. */
const SHARED_BY_ALL = 'base';

const folderRules = Object.entries(ALLOWED).map(([folder, allowed]) => ({
  name: `layer-${folder}`,
  comment: `lambda/${folder}/ may import ${allowed.length ? allowed.map((name) => `${name}/`).join(', ') : 'no other folder'} (docs/architecture.md)`,
  severity: 'error',
  from: { path: `^lambda/${folder}/` },
  to: {
    path: '^lambda/[^/]+/',
    pathNot: `^lambda/(${[folder, SHARED_BY_ALL, ...allowed].join('|')})/`,
  },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...folderRules,
    {
      name: 'no-folder-without-rule',
      comment: 'a new folder of lambda/ needs its line in docs/architecture.md and in ALLOWED above',
      severity: 'error',
      from: { path: '^lambda/[^/]+/', pathNot: `^lambda/(${Object.keys(ALLOWED).join('|')})/` },
      to: {},
    },
    {
      name: 'no-undeclared-package',
      comment:
        'every package the code imports is declared in package.json: one that only arrives as another package’s dependency can change or disappear with its next release',
      severity: 'error',
      from: {},
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'no-circular',
      comment: 'no two modules import each other, directly or through others',
      severity: 'error',
      from: { path: '^lambda/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count for the layers: a folder that names another's types depends on it.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: ['^lambda/dashboard/dist/'] },
  },
};
