#!/usr/bin/env node
// The `postback` binary. Runs the built CLI (`npm ci` builds it through the root `prepare`). Started with
// `node --conditions=@postback/source`, it runs the TypeScript sources instead (Node >= 22.18 strips
// types), so a checkout works without a build.
const fromSource = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((arg) =>
  arg.includes('@postback/source'),
);

let entry;
try {
  entry = await import(fromSource ? '../src/main.ts' : '../dist/main.js');
} catch (error) {
  if (
    !fromSource &&
    error?.code === 'ERR_MODULE_NOT_FOUND' &&
    String(error.message).includes('dist/main.js')
  ) {
    process.stderr.write(
      'postback: the CLI is not built. Run `npm run build`, or start it from source with\n' +
        '  node --conditions=@postback/source packages/cli/bin/postback.js ...\n',
    );
    process.exit(1);
  }
  throw error;
}

process.exitCode = await entry.main(process.argv.slice(2));
