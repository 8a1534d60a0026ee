/**
 * `npm start`: builds the app if there is no build yet, then runs `next start` on `PORT` (default 3000)
 * and `HOST` (default 127.0.0.1), passing SIGINT/SIGTERM on so the server shuts down cleanly.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const nextBin = createRequire(import.meta.url).resolve('next/dist/bin/next');

if (!existsSync(new URL('../.next/BUILD_ID', import.meta.url))) {
  const build = spawnSync(process.execPath, [nextBin, 'build'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const server = spawn(
  process.execPath,
  [nextBin, 'start', '-p', process.env.PORT || '3000', '-H', process.env.HOST || '127.0.0.1'],
  { cwd: root, stdio: 'inherit' },
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.kill(signal));
server.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 0 : 1)));
