/**
 * startSandbox options: defaults, unknown keys, invalid values named by field, and the return-window
 * default kept equal to @postback/core's policy constant.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  DEFAULT_CLICK_PARAM,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_RETURN_WINDOW_DAYS,
  resolveSandboxOptions,
  SandboxOptionsError,
  startSandbox,
} from '../src/index.ts';

describe('sandbox options', () => {
  test('fills in the exported defaults', () => {
    const resolved = resolveSandboxOptions();
    expect(resolved).toMatchObject({
      port: DEFAULT_PORT,
      host: DEFAULT_HOST,
      clickParam: DEFAULT_CLICK_PARAM,
      returnWindowDays: DEFAULT_RETURN_WINDOW_DAYS,
    });
    expect([DEFAULT_PORT, DEFAULT_HOST, DEFAULT_CLICK_PARAM]).toEqual([0, '127.0.0.1', 'click_token']);
  });

  test('the default return window is 30 days, a stand-in: the kit does not assume it', () => {
    expect(DEFAULT_RETURN_WINDOW_DAYS).toBe(30);
    expect(resolveSandboxOptions({ returnWindowDays: 60 }).returnWindowDays).toBe(60);
  });

  test('rejects an unknown option by name', () => {
    const err = (() => {
      try {
        resolveSandboxOptions({ clickparam: 'x' } as never);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(SandboxOptionsError);
    expect(err).toMatchObject({ field: 'clickparam', message: expect.stringContaining('unknown option') });
  });

  test.each([
    ['port', -1],
    ['port', 70_000],
    ['port', 1.5],
    ['host', ''],
    ['clickParam', 'has space'],
    ['clickParam', ''],
    ['returnWindowDays', 0],
    ['returnWindowDays', Number.NaN],
    ['now', 5],
    ['random', 'x'],
  ])('rejects %s = %s naming the field', (field, value) => {
    expect(() => resolveSandboxOptions({ [field]: value })).toThrow(expect.objectContaining({ field }));
  });

  test('accepts exactly the ports 0..65535', () => {
    fc.assert(
      fc.property(fc.integer({ min: -100_000, max: 200_000 }), (port) => {
        const ok = port >= 0 && port <= 65_535;
        let accepted = true;
        try {
          resolveSandboxOptions({ port });
        } catch (e) {
          accepted = false;
          expect(e).toBeInstanceOf(SandboxOptionsError);
        }
        expect(accepted).toBe(ok);
      }),
    );
  });

  test('accepts any URL-safe click parameter name and uses it verbatim in landing URLs', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_.~-]{1,64}$/), (name) => {
        expect(resolveSandboxOptions({ clickParam: name }).clickParam).toBe(name);
        const url = new URL('https://shop.example/p');
        url.searchParams.set(name, 'tok');
        expect(new URL(url.toString()).searchParams.get(name)).toBe('tok');
      }),
    );
  });

  test('startSandbox refuses bad options before listening', async () => {
    await expect(startSandbox({ port: 'x' as never })).rejects.toBeInstanceOf(SandboxOptionsError);
  });

  test('startSandbox on a port in use rejects with the listen error', async () => {
    const first = await startSandbox();
    try {
      await expect(startSandbox({ port: first.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await first.close();
    }
  });
});
