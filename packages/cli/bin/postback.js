#!/usr/bin/env node
// The `postback` binary. Runs the built CLI (`npm ci` builds it through the root `prepare`). Started with
// `node --conditions=@postback/source`, it runs the TypeScript sources instead (Node >= 22.18 strips
// types), so a checkout works without a build.
const fromSource = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((arg) =>
  arg.includes('@postback/source'),
);

// A SIGTERM/SIGINT that arrives while the CLI is still loading must not kill the process outright: it is
// remembered and handed to the command as an already-aborted stop signal, so it stops gracefully (exit 0).
let early = null;
const remember = (signal) => {
  early = signal;
};
process.once('SIGTERM', remember);
process.once('SIGINT', remember);

let entry;
let io;
let lastResort;
try {
  entry = await import(fromSource ? '../src/main.ts' : '../dist/main.js');
  io = await import(fromSource ? '../src/io.ts' : '../dist/io.js');
  lastResort = await import(fromSource ? '../src/last-resort.ts' : '../dist/last-resort.js');
} catch (error) {
  if (!fromSource && error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/')) {
    process.stderr.write(
      'postback: the CLI is not built. Run `npm run build`, or start it from source with\n' +
        '  node --conditions=@postback/source packages/cli/bin/postback.js ...\n',
    );
    process.exit(1);
  }
  throw error;
}

const commandIo = io.defaultIo();
// From here on, whatever no command catches (an unhandled 'error' event, a wait that can never end) ends
// in a documented exit code with one clean line, never Node's exit 13 or a stack trace with the key.
const guard = lastResort.installLastResort({
  stderr: (text) => process.stderr.write(text),
  stop: () => commandIo.stop(),
  secrets: lastResort.envSecrets(process.env),
  exit: (code) => process.exit(code),
});
process.off('SIGTERM', remember);
process.off('SIGINT', remember);
if (early !== null) process.emit(early, early);
process.exitCode = guard.finish(await entry.main(process.argv.slice(2), commandIo));
