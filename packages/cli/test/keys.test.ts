/**
 * The worker's per-account keys (src/keys.ts): the keys-file parser (errors name the account, never a
 * key or any other text of the file), the `POSTBACK_API_KEY__<ACCOUNT>` variables, and the reload of the
 * keys file without a restart.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../../../test/helpers/worker-process.ts';
import {
  type AccountKeys,
  accountKeysFromEnv,
  KeysError,
  loadAccountKeys,
  parseKeysFile,
} from '../src/keys.ts';

/** A plausible key: printable ASCII without spaces, long enough not to occur by chance in a message. */
const keyArb = fc
  .stringMatching(/^[\x21-\x7e]{12,40}$/)
  .filter((k) => !k.includes('"') && !k.includes('\\'))
  .map((k) => `pbsk_${k}`);
const accountArb = fc.stringMatching(/^[a-zA-Z0-9_.:-]{1,30}$/);

function errorOf(run: () => unknown): KeysError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(KeysError);
    return error as KeysError;
  }
  throw new Error('no error');
}

describe('parseKeysFile', () => {
  it('reads any object of account → key', () => {
    fc.assert(
      fc.property(fc.dictionary(accountArb, keyArb, { maxKeys: 20 }), (record) => {
        const keys = parseKeysFile(JSON.stringify(record, null, 2));
        expect(Object.fromEntries(keys)).toEqual({ ...record });
      }),
    );
  });

  it('bad JSON: says where, never quoting the file (JSON.parse messages quote its text)', () => {
    fc.assert(
      fc.property(accountArb, keyArb, fc.nat(3), (account, key, cut) => {
        // A file cut short, or with a stray character after a key: both invalid JSON.
        const whole = JSON.stringify({ [account]: key });
        const broken = [
          whole.slice(0, whole.length - 1 - cut),
          `${whole.slice(0, -1)} x}`,
          `{${account}: "${key}"}`,
        ];
        for (const textValue of broken) {
          const error = errorOf(() => parseKeysFile(textValue));
          expect(error.message).toMatch(/^is not valid JSON/);
          expect(error.message).not.toContain(key);
          expect(error.message).not.toContain(key.slice(5, 12));
        }
      }),
    );
    expect(errorOf(() => parseKeysFile('{\n  "a": "k1",\n  oops\n}')).message).toMatch(/line 3, column \d+/);
  });

  it('a value that is not a usable key: an error naming the account, never the value', () => {
    const badValue = fc.oneof(
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(keyArb, { maxLength: 2 }),
      fc.record({ key: keyArb }),
      fc.constant(''),
      keyArb.map((k) => `${k} ${k}`),
      keyArb.map((k) => `${k}\n`),
      keyArb.map((k) => `${k}é`),
    );
    fc.assert(
      fc.property(
        fc.dictionary(accountArb, keyArb, { maxKeys: 5 }),
        accountArb,
        badValue,
        (good, account, value) => {
          const record = { ...good, [account]: value };
          const error = errorOf(() => parseKeysFile(JSON.stringify(record)));
          expect(error.message).toContain(`account ${JSON.stringify(account)}`);
          expect(error.message).toMatch(/must be a string|is empty|must be printable ASCII without spaces/);
          for (const k of Object.values(good)) expect(error.message).not.toContain(k);
          const text = JSON.stringify(value);
          if (typeof value === 'string' && value.length > 0)
            expect(error.message).not.toContain(value.trim());
          else if (typeof value === 'object' && value !== null) expect(error.message).not.toContain(text);
        },
      ),
    );
  });

  it('an empty, blank or control-character account is refused by name; "default" is an ordinary account', () => {
    expect(errorOf(() => parseKeysFile('{"": "pbsk_secret_1"}')).message).toMatch(
      /empty account name \(jobs without an account use POSTBACK_API_KEY\)/,
    );
    expect(errorOf(() => parseKeysFile('{"  ": "pbsk_secret_1"}')).message).toMatch(
      /account " {2}" is only whitespace/,
    );
    const control = errorOf(() => parseKeysFile('{"shop\\n1": "pbsk_secret_1"}')).message;
    expect(control).toMatch(/control characters/);
    expect(control).not.toContain('\n');
    expect(errorOf(() => parseKeysFile(JSON.stringify({ ['x'.repeat(201)]: 'k' }))).message).toMatch(
      /longer than 200/,
    );
    expect(parseKeysFile('{"default": "pbsk_d"}').get('default')).toBe('pbsk_d');
  });

  it('anything but an object is refused, saying what it is', () => {
    for (const [textValue, got] of [
      ['[]', 'an array'],
      ['"pbsk_secret"', 'string'],
      ['null', 'null'],
      ['42', 'number'],
    ] as const) {
      const error = errorOf(() => parseKeysFile(textValue));
      expect(error.message).toBe(`must be a JSON object of account → API key, got ${got}`);
    }
  });
});

describe('accountKeysFromEnv', () => {
  it('takes POSTBACK_API_KEY__<ACCOUNT>, the account verbatim (case kept), skipping empty values', () => {
    const keys = accountKeysFromEnv({
      POSTBACK_API_KEY: 'default-key',
      POSTBACK_API_KEY__shop_17: 'pbsk_a',
      POSTBACK_API_KEY__SHOP_17: 'pbsk_b',
      'POSTBACK_API_KEY__shop-18.eu': 'pbsk_c',
      POSTBACK_API_KEY__empty: '',
      POSTBACK_API_KEYS: 'not-a-key-variable',
    });
    expect(Object.fromEntries(keys)).toEqual({
      shop_17: 'pbsk_a',
      SHOP_17: 'pbsk_b',
      'shop-18.eu': 'pbsk_c',
    });
  });

  it('a variable with no account, or a bad key, is an error naming the variable, never its value', () => {
    expect(errorOf(() => accountKeysFromEnv({ POSTBACK_API_KEY__: 'pbsk_secret_9' })).message).toMatch(
      /"POSTBACK_API_KEY__" names an empty account name/,
    );
    const bad = errorOf(() => accountKeysFromEnv({ POSTBACK_API_KEY__shop: 'pbsk secret 9' })).message;
    expect(bad).toBe('"POSTBACK_API_KEY__shop" must be printable ASCII without spaces');
  });
});

describe('loadAccountKeys', () => {
  let dir: string;
  const opened: AccountKeys[] = [];
  afterEach(() => {
    for (const keys of opened.splice(0)) keys.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  const tmp = () => {
    dir = mkdtempSync(join(tmpdir(), 'postback-keys-'));
    return join(dir, 'keys.json');
  };

  it('resolves: null → POSTBACK_API_KEY; an account → the file, else its variable, else none', async () => {
    const file = tmp();
    writeFileSync(file, JSON.stringify({ a: 'pbsk_file_a', b: 'pbsk_file_b' }));
    const keys = await loadAccountKeys({
      defaultKey: 'pbsk_default',
      env: { POSTBACK_API_KEY__b: 'pbsk_env_b', POSTBACK_API_KEY__c: 'pbsk_env_c' },
      keysFile: file,
    });
    opened.push(keys);
    expect([null, 'a', 'b', 'c', 'd'].map((account) => keys.keyFor(account))).toEqual([
      'pbsk_default',
      'pbsk_file_a',
      'pbsk_file_b',
      'pbsk_env_c',
      undefined,
    ]);
    expect(keys.accounts()).toBe(3);
    expect(keys.perAccount).toBe(true);
    const noDefault = await loadAccountKeys({ defaultKey: '', env: {}, keysFile: file });
    opened.push(noDefault);
    expect(noDefault.keyFor(null)).toBeUndefined();
    const none = await loadAccountKeys({ defaultKey: 'k', env: {} });
    opened.push(none);
    expect(none.perAccount).toBe(false);
  });

  it('a keys file that cannot be read or parsed at start throws, naming the file, never its content', async () => {
    const file = tmp();
    await expect(loadAccountKeys({ defaultKey: undefined, env: {}, keysFile: file })).rejects.toThrow(
      /cannot read the keys file .*keys\.json \(ENOENT\)/,
    );
    writeFileSync(file, '{"a": "pbsk_secret_start",}');
    const error = await loadAccountKeys({ defaultKey: undefined, env: {}, keysFile: file }).catch((e) => e);
    expect(error).toBeInstanceOf(KeysError);
    expect(error.message).toMatch(/keys\.json is not valid JSON/);
    expect(error.message).not.toContain('pbsk_secret_start');
  });

  it('reloads a changed file without fs.watch (the timer alone), keeps the last keys on a bad version, reports once', async () => {
    const file = tmp();
    writeFileSync(file, JSON.stringify({ a: 'pbsk_one_aaaaaa' }));
    const reloads: unknown[] = [];
    const errors: string[] = [];
    const keys = await loadAccountKeys({
      defaultKey: undefined,
      env: {},
      keysFile: file,
      pollMs: 20,
      // A watch that never fires: only the mtime/size/inode check can see the change.
      watch: (() => ({ on: () => undefined, close: () => undefined })) as never,
      onReload: (reload) => reloads.push(reload),
      onError: (message) => errors.push(message),
    });
    opened.push(keys);
    writeFileSync(file, JSON.stringify({ a: 'pbsk_two_bbbbbbbb', b: 'pbsk_bee_cccccc' }));
    await waitUntil(async () => keys.keyFor('b') !== undefined, 5_000, 10);
    expect(keys.keyFor('a')).toBe('pbsk_two_bbbbbbbb');
    expect(reloads).toEqual([{ accounts: 2, added: ['b'], removed: [], changed: ['a'] }]);

    writeFileSync(file, '{"a": "pbsk_broken_dddddd", "b": 7, "c": ');
    await waitUntil(async () => errors.length > 0, 5_000, 10);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/keys\.json is not valid JSON.*; the previous keys stay in use$/);
    expect(errors[0]).not.toContain('pbsk_broken');
    expect(keys.keyFor('a')).toBe('pbsk_two_bbbbbbbb');

    rmSync(file);
    await waitUntil(async () => errors.length > 1, 5_000, 10);
    expect(errors[1]).toMatch(/cannot read the keys file .*\(ENOENT\); the previous keys stay in use/);
    writeFileSync(file, JSON.stringify({ a: 'pbsk_three_eeeeee' }));
    await waitUntil(async () => keys.keyFor('a') === 'pbsk_three_eeeeee', 5_000, 10);
    expect(keys.keyFor('b')).toBeUndefined();
    // Every key ever seen stays a secret to scrub, the replaced ones included, in every form.
    const seen = ['pbsk_one_aaaaaa', 'pbsk_two_bbbbbbbb', 'pbsk_bee_cccccc', 'pbsk_three_eeeeee'];
    expect(keys.redact(seen.join(' '))).toBe(seen.map(() => '[redacted]').join(' '));
    expect(keys.redact('pbsk%5Fone%5Faaaaaa')).toBe('[redacted]');
  });

  it('says once, naming the file and its mode and nothing of its text, when others may read the keys file', async () => {
    const file = tmp();
    writeFileSync(file, JSON.stringify({ a: 'pbsk_mode_hhhhhh' }));
    chmodSync(file, 0o644);
    const warnings: string[] = [];
    const keys = await loadAccountKeys({
      defaultKey: undefined,
      env: {},
      keysFile: file,
      pollMs: 20,
      watch: (() => ({ on: () => undefined, close: () => undefined })) as never,
      onExposed: (message) => warnings.push(message),
    });
    opened.push(keys);
    expect(warnings).toEqual([
      `the keys file ${file} can be read by other users (mode 0644); make it readable by its owner only (chmod 600)`,
    ]);
    // Fixed: nothing more; readable by the group again: said again, once.
    chmodSync(file, 0o600);
    await keys.check();
    chmodSync(file, 0o640);
    await waitUntil(async () => warnings.length > 1, 5_000, 10);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toMatch(/\(mode 0640\)/);
    expect(warnings.join('')).not.toContain('pbsk_mode');
    // A file only its owner reads: not a word.
    const quiet: string[] = [];
    chmodSync(file, 0o600);
    const owner = await loadAccountKeys({
      defaultKey: undefined,
      env: {},
      keysFile: file,
      onExposed: (m) => quiet.push(m),
    });
    opened.push(owner);
    expect(quiet).toEqual([]);
  });

  it('refuses a blank POSTBACK_API_KEY or one with a line end, naming the variable and never the key', async () => {
    for (const key of ['  ', 'pbsk_default_key\r', 'pbsk_default_key\n']) {
      const error = await loadAccountKeys({ defaultKey: key, env: {} }).catch((e) => e);
      expect(error).toBeInstanceOf(KeysError);
      expect(error.message).toMatch(/^POSTBACK_API_KEY (is blank|must be printable ASCII)/);
      expect(error.message).not.toContain('pbsk_default_key');
    }
  });

  it('sees a file replaced by a rename at once through fs.watch', async () => {
    const file = tmp();
    writeFileSync(file, JSON.stringify({ a: 'pbsk_old_ffffff' }));
    const keys = await loadAccountKeys({ defaultKey: undefined, env: {}, keysFile: file, pollMs: 60_000 });
    opened.push(keys);
    const next = join(dir, '.keys.json.tmp');
    writeFileSync(next, JSON.stringify({ a: 'pbsk_new_gggggg' }));
    const { renameSync } = await import('node:fs');
    renameSync(next, file);
    await waitUntil(async () => keys.keyFor('a') === 'pbsk_new_gggggg', 5_000, 10);
  });
});
