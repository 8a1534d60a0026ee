/**
 * The README's shapes hold: its options table is the one schema's rendering, so no default is written
 * twice; and its `lib/postback.ts` loads without the secret (what `next build` does when it collects page
 * data) and works on the first request once the secret is there.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OptionsError } from '@postback/core';
import { NextRequest } from 'next/server.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { expectReadmeOptionsTable } from '../../../test/helpers/readme-options-table.ts';
import type { NextPostback } from './index.ts';

const README = new URL('../README.md', import.meta.url);
const SECRET = 'readme-secret-0123456789-abcdefghijklmn';
const TOKEN = 'tok_4kQ9xZ7pLm2Rv8sWc1Ny3Bd';

/** The README's `// lib/postback.ts` block, importing this package's source. */
function readmeAdapterModule(): string {
  const blocks = [...readFileSync(README, 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  const block = blocks.find((code) => code.startsWith('// lib/postback.ts'));
  if (block === undefined) throw new Error('the README has no `// lib/postback.ts` block');
  const index = fileURLToPath(new URL('./index.ts', import.meta.url));
  return block.replace("from '@postback/next'", `from ${JSON.stringify(index)}`);
}

describe('the @postback/next README', () => {
  const dirs: string[] = [];
  afterEach(() => {
    vi.unstubAllEnvs();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('shows exactly the capture options table rendered from the schema', () => {
    expectReadmeOptionsTable(README);
  });

  it('creates the adapter lazily: its module loads without POSTBACK_SECRET, and the first request with it works', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'postback-next-readme-'));
    dirs.push(dir);
    const file = join(dir, 'postback.ts');
    writeFileSync(file, readmeAdapterModule());

    vi.stubEnv('POSTBACK_SECRET', undefined);
    const { postback } = (await import(/* @vite-ignore */ file)) as { postback: NextPostback };
    const landing = () => new NextRequest(`https://shop.example/?click_token=${TOKEN}`);
    // A missing secret is reported on use, naming the option.
    expect(() => postback.proxy(landing())).toThrow(OptionsError);
    await expect(postback.getClickFromRequest(new Request('https://shop.example/'))).rejects.toThrow(
      /secrets/,
    );

    vi.stubEnv('POSTBACK_SECRET', SECRET);
    const response = await postback.proxy(landing());
    expect(response.headers.get('set-cookie')).toMatch(/^postback_click=/);
    const cookie = /^(postback_click=[^;]+)/.exec(response.headers.get('set-cookie') ?? '')?.[1] ?? '';
    expect(
      await postback.getClickFromRequest(new Request('https://shop.example/', { headers: { cookie } })),
    ).toMatchObject({ token: TOKEN });
  });
});
