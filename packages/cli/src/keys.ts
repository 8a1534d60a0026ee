/**
 * Per-account API keys of `postback worker` (many advertisers in one outbox). A job's `account` picks the
 * key it is sent with:
 *
 * - jobs without an account use `POSTBACK_API_KEY` (the default key);
 * - an account's key comes from the keys file (`--keys-file` / `POSTBACK_KEYS_FILE`), a JSON object
 *   `{ "<account>": "<api key>", ... }`, else from a variable `POSTBACK_API_KEY__<ACCOUNT>` (the account
 *   written verbatim after the two underscores, case kept), else there is none and that account pauses.
 *
 * The keys file is read again whenever it changes, without a restart: `fs.watch` on its folder (which
 * sees editors' and Kubernetes' rename-into-place) and, as a fallback, a check of its modification time,
 * size and inode on a timer. A version that cannot be read or parsed keeps the previous keys and is
 * reported once, by a message of our own that never quotes the file (a JSON.parse message quotes its
 * text, which holds keys).
 *
 * Keys are secrets: no error, log line or output of this module holds one. Accounts are not secrets
 * (they are opaque references chosen by the app) and are named in errors, made printable.
 */
import { type FSWatcher, watch as fsWatch } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { createRedactor } from '@postback/client';
import { MAX_ACCOUNT_LENGTH } from '@postback/core';
import { UsageError } from './args.ts';
import { jsonText } from './format.ts';

/** The variable prefix of a per-account key: `POSTBACK_API_KEY__shop_17` holds the key of `shop_17`. */
export const ACCOUNT_KEY_ENV_PREFIX = 'POSTBACK_API_KEY__';

/**
 * How often the keys file's modification time, size and inode are checked (the fallback of `fs.watch`).
 * @defaultValue 2_000
 */
export const KEYS_FILE_POLL_MS = 2_000;

/** What the client accepts as an API key: printable ASCII without spaces. */
const KEY_SHAPE = /^[\x21-\x7e]+$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A keys file or a key variable that cannot be used. Its message names accounts, never a key. */
export class KeysError extends Error {
  override name = 'KeysError';
}

/** An account as a message shows it: JSON-quoted, control characters escaped. */
const named = (account: string) => jsonText(account);

/** Why `account` cannot be an account (core's rules of `validateAccount`), or undefined. */
function accountProblem(account: string): string | undefined {
  if (account.length === 0) return 'an empty account name (jobs without an account use POSTBACK_API_KEY)';
  if (account.length > MAX_ACCOUNT_LENGTH)
    return `account ${named(account.slice(0, 40))}… is longer than ${MAX_ACCOUNT_LENGTH} characters`;
  if (account.trim() === '') return `account ${named(account)} is only whitespace`;
  if (CONTROL.test(account)) return `account ${named(account)} holds control characters`;
  return undefined;
}

/** Why `key` cannot be the key of an account, never quoting it; undefined when it can. */
function keyProblem(key: unknown): string | undefined {
  if (typeof key !== 'string') return `must be a string, got ${key === null ? 'null' : typeof key}`;
  if (key.length === 0) return 'is empty';
  if (!KEY_SHAPE.test(key)) return 'must be printable ASCII without spaces';
  return undefined;
}

/**
 * Why the value of `POSTBACK_API_KEY` cannot be a key (blank, or holding spaces or line ends: a CR copied
 * from a Windows file), never quoting it; undefined when it can, or when it is unset (undefined or "").
 *
 * @example
 * ```ts
 * defaultKeyProblem('pbsk_1\r'); // 'POSTBACK_API_KEY must be printable ASCII without spaces or line ends (...)'
 * ```
 */
export function defaultKeyProblem(value: string | undefined): string | undefined {
  if (value === undefined || value === '' || keyProblem(value) === undefined) return undefined;
  return value.trim() === ''
    ? 'POSTBACK_API_KEY is blank: set it to the API key, or leave it unset'
    : 'POSTBACK_API_KEY must be printable ASCII without spaces or line ends (a CR or newline copied with the key?)';
}

/** Line and column of a character offset, for a JSON syntax error (the offset only, never the text). */
function lineAndColumn(textValue: string, offset: number): string {
  const before = textValue.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `line ${line}, column ${column}`;
}

/**
 * Reads the text of a keys file: a JSON object of account → API key. Throws a {@link KeysError} naming
 * what is wrong (and the account, when one is at fault), never a key or any other text of the file.
 *
 * @example
 * ```ts
 * parseKeysFile('{"shop-17": "pbsk_live_1"}').get('shop-17'); // "pbsk_live_1"
 * ```
 */
export function parseKeysFile(textValue: string): Map<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(textValue);
  } catch (error) {
    // JSON.parse's message quotes the text around the error: keep its offset only.
    const offset = /position (\d+)/.exec(error instanceof Error ? error.message : '')?.[1];
    const where = offset === undefined ? '' : ` (at ${lineAndColumn(textValue, Number(offset))})`;
    throw new KeysError(`is not valid JSON${where}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    const got = parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : typeof parsed;
    throw new KeysError(`must be a JSON object of account → API key, got ${got}`);
  }
  const keys = new Map<string, string>();
  for (const [account, key] of Object.entries(parsed)) {
    const badAccount = accountProblem(account);
    if (badAccount !== undefined) throw new KeysError(`has ${badAccount}`);
    const badKey = keyProblem(key);
    if (badKey !== undefined) throw new KeysError(`the key of account ${named(account)} ${badKey}`);
    keys.set(account, key as string);
  }
  return keys;
}

/**
 * The per-account keys set by variables `POSTBACK_API_KEY__<ACCOUNT>` (an empty value counts as unset).
 * Throws a {@link KeysError} naming the variable when one cannot be used, never its value.
 *
 * @example
 * ```ts
 * accountKeysFromEnv({ POSTBACK_API_KEY__shop_17: 'pbsk_1' }); // Map { 'shop_17' => 'pbsk_1' }
 * ```
 */
export function accountKeysFromEnv(env: Readonly<Record<string, string | undefined>>): Map<string, string> {
  const keys = new Map<string, string>();
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(ACCOUNT_KEY_ENV_PREFIX) || value === undefined || value === '') continue;
    const account = name.slice(ACCOUNT_KEY_ENV_PREFIX.length);
    const badAccount = accountProblem(account);
    if (badAccount !== undefined) throw new KeysError(`${named(name)} names ${badAccount}`);
    const badKey = keyProblem(value);
    if (badKey !== undefined) throw new KeysError(`${named(name)} ${badKey}`);
    keys.set(account, value);
  }
  return keys;
}

/** What a reload of the keys file changed: account names only. */
export interface KeysReload {
  accounts: number;
  added: string[];
  removed: string[];
  changed: string[];
}

/** Options of {@link loadAccountKeys}. */
export interface AccountKeysOptions {
  /**
   * `POSTBACK_API_KEY`: the key of jobs without an account (undefined or "": none). A key that cannot be
   * one (blank, a trailing CR from a Windows file) throws a {@link KeysError} naming the variable.
   */
  defaultKey: string | undefined;
  /** The environment, for `POSTBACK_API_KEY__<ACCOUNT>`. */
  env: Readonly<Record<string, string | undefined>>;
  /** The keys file, if any. */
  keysFile?: string | undefined;
  /** A new version of the keys file is in use. */
  onReload?: (reload: KeysReload) => void;
  /** A version of the keys file could not be used: the previous keys stay. The message holds no key. */
  onError?: (message: string) => void;
  /**
   * The keys file can be read by other users than its owner (group or others may read it): one message,
   * at start and whenever a reload finds it so after it was not. Names the file and its mode, never its text.
   */
  onExposed?: (message: string) => void;
  /** @defaultValue {@link KEYS_FILE_POLL_MS} */
  pollMs?: number;
  /** `fs.watch`, injectable (tests: one that never fires, to prove the timer alone reloads). */
  watch?: typeof fsWatch;
}

/** The keys of a worker: a resolver for the Dispatcher's `apiKeyFor`, kept up to date with the keys file. */
export interface AccountKeys {
  /** The key of `account` (null: the default key), or undefined when none is known. */
  keyFor(account: string | null): string | undefined;
  /**
   * Removes every key seen since start (replaced ones included) from a text, literally and in the forms a
   * service may echo it (percent-encoded, JSON-escaped: the client's `createRedactor`). Built once per set
   * of keys, again when a reload brings a new one.
   */
  redact(text: string): string;
  /** How many accounts have a key now (file and variables together), not counting the default key. */
  accounts(): number;
  /** Whether any per-account key source was given (a keys file or a key variable). */
  readonly perAccount: boolean;
  /** Checks the keys file now (the watcher and the timer call it; tests may too). */
  check(): Promise<void>;
  /** Stops watching the keys file. */
  close(): void;
}

/** What tells a new version of the file apart without reading it. */
type Signature = string;
const signatureOf = (s: { mtimeMs: number; size: number; ino: number }): Signature =>
  `${s.mtimeMs}:${s.size}:${s.ino}`;

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : error instanceof Error ? error.name : 'error';
}

/**
 * Loads the keys (the keys file is read once now: a file that cannot be read or parsed throws a
 * {@link KeysError}), then watches the keys file until `close()`.
 *
 * @example
 * ```ts
 * const keys = await loadAccountKeys({ defaultKey: env.POSTBACK_API_KEY, env, keysFile: 'keys.json' });
 * createDispatcher({ outbox, client, apiKeyFor: keys.keyFor });
 * ```
 */
export async function loadAccountKeys(options: AccountKeysOptions): Promise<AccountKeys> {
  const defaultKey = options.defaultKey === '' ? undefined : options.defaultKey;
  const badDefault = defaultKeyProblem(defaultKey);
  if (badDefault !== undefined) throw new KeysError(badDefault);
  const envKeys = accountKeysFromEnv(options.env);
  const path = options.keysFile;
  let fileKeys = new Map<string, string>();
  const seen = new Set<string>([...envKeys.values()]);
  if (defaultKey !== undefined) seen.add(defaultKey);
  let redactor = createRedactor([...seen]);
  let redactorSize = seen.size;
  let lastSignature: Signature | undefined;
  let lastText: string | undefined;
  let lastError: string | undefined;

  const use = (keys: Map<string, string>) => {
    for (const key of keys.values()) seen.add(key);
    fileKeys = keys;
    if (seen.size !== redactorSize) {
      redactor = createRedactor([...seen]);
      redactorSize = seen.size;
    }
  };
  // Whether the file was last seen readable by group or others (POSIX modes only), so it is said once.
  let exposed = false;
  const checkMode = (file: string, mode: number) => {
    const now = process.platform !== 'win32' && (mode & 0o044) !== 0;
    if (now && !exposed) {
      const shown = (mode & 0o777).toString(8).padStart(4, '0');
      options.onExposed?.(
        `the keys file ${file} can be read by other users (mode ${shown}); make it readable by its owner only (chmod 600)`,
      );
    }
    exposed = now;
  };

  /**
   * Reads the keys file when it changed (or when `force`d) and uses its keys. What cannot be read or
   * parsed throws a {@link KeysError} on the first read (`initial`); later, the previous keys stay and
   * it is reported once.
   */
  const checkOnce = async (file: string, force: boolean, initial = false) => {
    const failed = (message: string) => {
      if (initial) throw new KeysError(message);
      const full = `${message}; the previous keys stay in use`;
      if (full !== lastError) options.onError?.(full);
      lastError = full;
    };
    let textValue: string;
    let signature: Signature;
    try {
      const s = await stat(file);
      signature = signatureOf(s);
      checkMode(file, s.mode);
      if (!force && signature === lastSignature) return;
      textValue = await readFile(file, 'utf8');
    } catch (error) {
      return failed(`cannot read the keys file ${file} (${errorCode(error)})`);
    }
    lastSignature = signature;
    if (textValue === lastText) return;
    lastText = textValue;
    let keys: Map<string, string>;
    try {
      keys = parseKeysFile(textValue);
    } catch (error) {
      return failed(`the keys file ${file} ${(error as Error).message}`);
    }
    lastError = undefined;
    const before = fileKeys;
    use(keys);
    if (!initial)
      options.onReload?.({
        accounts: keys.size,
        added: [...keys.keys()].filter((a) => !before.has(a)),
        removed: [...before.keys()].filter((a) => !keys.has(a)),
        changed: [...keys.keys()].filter((a) => before.has(a) && before.get(a) !== keys.get(a)),
      });
  };
  if (path !== undefined) await checkOnce(path, true, true);

  let checking: Promise<void> | undefined;
  let again = false;
  /** One check at a time; a request during a check runs one more after it. */
  const check = (force: boolean): Promise<void> => {
    if (path === undefined) return Promise.resolve();
    if (checking !== undefined) {
      again ||= force;
      return checking;
    }
    checking = (async () => {
      try {
        await checkOnce(path, force);
        while (again) {
          again = false;
          await checkOnce(path, true);
        }
      } finally {
        checking = undefined;
      }
    })();
    return checking;
  };

  let watcher: FSWatcher | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  let debounce: ReturnType<typeof setTimeout> | undefined;
  if (path !== undefined) {
    timer = setInterval(() => void check(false), options.pollMs ?? KEYS_FILE_POLL_MS);
    timer.unref?.();
    try {
      // The folder, not the file: a file replaced by a rename (editors, Kubernetes) keeps being seen.
      const name = basename(path);
      watcher = (options.watch ?? fsWatch)(dirname(path), { persistent: false }, (_event, changed) => {
        if (changed !== null && changed !== name && !String(changed).startsWith('..')) return;
        clearTimeout(debounce);
        debounce = setTimeout(() => void check(true), 20);
        debounce.unref?.();
      });
      watcher.on('error', () => {
        // The timer still checks.
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      // fs.watch is not available here (some network file systems): the timer checks.
    }
  }

  return {
    keyFor: (account) => (account === null ? defaultKey : (fileKeys.get(account) ?? envKeys.get(account))),
    redact: (text) => redactor(text),
    accounts: () => new Set([...fileKeys.keys(), ...envKeys.keys()]).size,
    perAccount: path !== undefined || envKeys.size > 0,
    check: () => check(true),
    close() {
      clearInterval(timer);
      clearTimeout(debounce);
      watcher?.close();
      watcher = undefined;
    },
  };
}

/**
 * The keys of a command that ends in seconds (`reconcile`, `shadow`, `held`): `POSTBACK_API_KEY`, the keys
 * file and the per-account variables, read once (the file is not watched); a bad keys file is a usage
 * error.
 *
 * @example
 * ```ts
 * const keys = await readKeysOnce(values['keys-file'], io.env);
 * ```
 */
export async function readKeysOnce(
  keysFile: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Promise<AccountKeys> {
  try {
    const keys = await loadAccountKeys({ defaultKey: env.POSTBACK_API_KEY, env, keysFile });
    keys.close();
    return keys;
  } catch (error) {
    if (error instanceof KeysError) throw new UsageError(error.message);
    throw error;
  }
}
