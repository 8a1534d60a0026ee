import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('./fixtures/last-resort-run.ts', import.meta.url));
const KEY = 'sk_live_last_resort_0123456789abcdef';

function run(mode: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--conditions=@postback/source', SCRIPT, mode], {
    env: { PATH: process.env.PATH ?? '', POSTBACK_API_KEY: KEY },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe("the binary's last-resort guard", () => {
  it.each(['error-event', 'rejection'])(
    'an unhandled %s stops the command gracefully and exits 1 with one clean line, without the key or a stack',
    async (mode) => {
      const { code, stdout, stderr } = await run(mode);
      expect(code, stderr).toBe(1);
      expect(stdout).toBe('stopped gracefully\n');
      expect(stderr).toMatch(/^postback: unexpected error, stopping: Error: .*\[redacted\]\n$/);
      expect(stderr).not.toContain(KEY);
      expect(stderr).not.toMatch(/^\s+at /m);
    },
    20_000,
  );

  it('a command left waiting on an empty event loop exits 1 with a message, never 13', async () => {
    const { code, stderr } = await run('stall');
    expect(code, stderr).toBe(1);
    expect(stderr).toMatch(
      /^postback: stopped: the command was waiting for something that can no longer happen/,
    );
    expect(stderr).not.toMatch(/unsettled top-level await/i);
  }, 20_000);
});
