// Runs before `npm install`: on a Node older than 22 (package.json "engines") it says once that the
// project's commands switch to Node 22 themselves. npm's own engine warnings, one per package that
// needs Node 22, are kept out of the install's output by .npmrc (loglevel=error).
const major = Number(process.versions.node.split('.')[0]);
if (major < 22)
  console.error(
    `Node ${process.version} is older than 22: npm start and the tests run on Node 22 themselves (npx -p node@22)`,
  );
