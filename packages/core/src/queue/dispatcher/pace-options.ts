/**
 * The Dispatcher's options of its pace (`pace.ts`) and its request rate (`rate.ts`), as parts of the one
 * options schema (`options.ts`, which holds them under `pace` and `maxRequestsPerSecond`).
 */
import { z } from 'zod';
import { documented } from '../../options-table.ts';

/**
 * How sends adapt to the host (`pace.ts`): `adaptive` for a Dispatcher in the shop's own process (the
 * README's one-file server), whose pages come first; `off` for a dedicated worker (`postback worker`).
 * @defaultValue `'adaptive'`
 */
export const paceOption = documented(
  z.enum(['adaptive', 'off']).default('adaptive'),
  "'adaptive' \\| 'off'",
  "`'adaptive'`",
  "`adaptive`: when something else keeps the event loop busy (half its time, the share its own measured work takes left out; or a delay ≥ 20 ms) fewer sends go at once and apart, down to 1 every 20 ms; full speed when idle (from one send at start); a job within 1 h of its deadline goes whatever the load. For a Dispatcher in the shop's own process (the one-file server). `off`: always `concurrency`, for a dedicated worker (`postback worker`'s default).",
);
/**
 * Known request limits of the service, kept below (`rate.ts`): `total` for all sends, `perAccount` for
 * each account's (a key per account). For a platform whose service publishes its rate limit; without
 * it a 429 still pauses the key's scope and teaches it a rate.
 */
export const maxRequestsPerSecondOption = documented(
  z
    .strictObject({
      total: z.number().positive().max(100_000).optional(),
      perAccount: z.number().positive().max(100_000).optional(),
    })
    .optional(),
  '{ total?, perAccount? }',
  '—',
  "Requests a second kept below, sends spaced evenly: `total` for all, `perAccount` for each account's. For a service whose limit is known (a 429 pauses the key's scope for its `Retry-After` and teaches it a rate anyway).",
);
