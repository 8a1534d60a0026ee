/**
 * Guard run first by `npm test`: the project runs its own scripts on Node 24 (the `node` package pinned
 * as a root dev dependency, which `npm run` puts first on PATH). Fails loudly if the machine's own,
 * older Node was picked up instead.
 */
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(
    `postback: npm scripts must run on Node >= 24, got ${process.versions.node} (${process.execPath}).`,
  );
  console.error('Run `npm ci` at the repository root so node_modules/.bin/node (Node 24) is installed.');
  process.exit(1);
}
console.log(`postback: running on Node ${process.versions.node}`);
