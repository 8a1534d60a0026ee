/**
 * The Dispatcher's option of shadow mode (`shadow.ts`), as a part of the one options schema
 * (`options.ts`, which holds it under `shadowRefreshMs`).
 */
import { z } from 'zod';
import { documented } from '../../options-table.ts';

/**
 * How long a Dispatcher trusts its read of the store's shadow settings (`OutboxShadow.settings`) before it
 * reads them again: how soon a running worker sees `postback shadow start`. The end of shadow mode is seen
 * at once (the store reads the setting again as it records each job).
 * @defaultValue 5_000
 */
export const DEFAULT_SHADOW_REFRESH_MS = 5_000;

/** `shadowRefreshMs` of the options schema. */
export const shadowRefreshOption = documented(
  z.number().int().positive().default(DEFAULT_SHADOW_REFRESH_MS),
  'number',
  '`5_000` (`DEFAULT_SHADOW_REFRESH_MS`)',
  "How long a read of the outbox's shadow settings is trusted: a running worker starts recording instead of sending within this of `postback shadow start`. Ending shadow mode is seen at once (each recording reads the setting again in its own transaction). See [Shadow mode](#shadow-mode-moving-from-pixel-to-s2s).",
);
