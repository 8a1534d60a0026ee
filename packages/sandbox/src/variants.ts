/**
 * Response variants: ways the real service (or a proxy in front of it) may answer that differ from the
 * sandbox's default shapes, which are only our reading of a spec whose response shapes are "not shown".
 * Tests turn them on to prove that a client does not depend on guesses. Several may be on at once; they
 * are set at creation (`startSandbox({ variants })`), at run time (`POST /_sandbox/variants`) or from the
 * command line (`postback sandbox --variant NAME`). They shape `/v1` answers only, never `/_sandbox/`.
 */
import type { HttpProblem } from './problem.ts';

/**
 * Every response variant, by name:
 *
 * - `extra-fields`: every JSON object of every `/v1` answer, at every level, success or error, gets
 *   unknown fields (`x_extra`, `x_extra_object`).
 * - `unknown-enums`: in `/v1` answers, campaign `status` is `learning`, a pixel campaign's
 *   `conversion_source` is `app`, creative and placement `format` is `banner` (values not known to us).
 * - `no-campaign-id`: the s2s confirmation answer has no `campaign_id` (the conversion is still applied).
 * - `empty-body`: s2s 2xx answers (confirmation and reversal) have an empty body under
 *   `content-type: application/json` (still applied).
 * - `text-body`: s2s 2xx answers are `text/html` `OK` (still applied).
 * - `html-404`: every 404 outside `/_sandbox/` is a `text/html` page without `detail`, as a wrong base
 *   path or a proxy gives.
 * - `echo-key`: the `detail` of every `/v1` error answer ends with the bearer key of the request.
 * - `refuse-key`: every s2s confirmation is refused, not applied, with
 *   `422 {"detail":"key <KEY> is not allowed to confirm conversions"}`.
 *
 * @example
 * ```ts
 * await startSandbox({ variants: ['extra-fields', 'no-campaign-id'] });
 * ```
 */
export const SANDBOX_VARIANTS = [
  'extra-fields',
  'unknown-enums',
  'no-campaign-id',
  'empty-body',
  'text-body',
  'html-404',
  'echo-key',
  'refuse-key',
] as const;

/**
 * The name of a response variant; see {@link SANDBOX_VARIANTS}.
 * @example
 * ```ts
 * const variant: SandboxVariant = 'html-404';
 * ```
 */
export type SandboxVariant = (typeof SANDBOX_VARIANTS)[number];

/** Values `unknown-enums` puts in answers. */
export const UNKNOWN_ENUM_VALUES = Object.freeze({
  campaignStatus: 'learning',
  conversionSource: 'app',
  format: 'banner',
});

/** Fields `extra-fields` adds to every object. */
export const EXTRA_FIELDS = Object.freeze({
  x_extra: 'unknown field added by the sandbox variant extra-fields',
  x_extra_object: Object.freeze({ nested: true, list: Object.freeze([1, 'two', null]) }),
});

/** The body of a `html-404` answer. */
export const HTML_404 =
  '<html><head><title>404 Not Found</title></head><body><h1>404 Not Found</h1></body></html>';

/**
 * Checks a list of variant names: known names, no repeats, not `empty-body` with `text-body`.
 * Returns the problem as a sentence, or `null` when the list is valid.
 */
export function variantListProblem(value: unknown): string | null {
  if (!Array.isArray(value)) return `must be an array of variant names (${SANDBOX_VARIANTS.join(', ')})`;
  const seen = new Set<string>();
  for (const name of value) {
    if (typeof name !== 'string' || !(SANDBOX_VARIANTS as readonly string[]).includes(name)) {
      return `unknown variant '${String(name)}'; known: ${SANDBOX_VARIANTS.join(', ')}`;
    }
    seen.add(name);
  }
  if (seen.has('empty-body') && seen.has('text-body')) return 'empty-body and text-body exclude each other';
  return null;
}

/** An answer as bytes on the wire: status, content type (none for `null`), text and extra headers. */
export interface WireAnswer {
  status: number;
  contentType: string | null;
  text: string;
  headers?: Readonly<Record<string, string>>;
}

/** The active variants of a sandbox, with one flag per variant so the hot path reads a boolean. */
export class VariantSet {
  #initial: readonly SandboxVariant[];
  #list: SandboxVariant[] = [];
  /** Some variant is on (when false, answers are the default JSON and nothing here runs). */
  active = false;
  extraFields = false;
  unknownEnums = false;
  noCampaignId = false;
  emptyBody = false;
  textBody = false;
  html404 = false;
  echoKey = false;
  refuseKey = false;

  constructor(initial: readonly SandboxVariant[]) {
    this.#initial = [...initial];
    this.set(initial);
  }

  /** The active variants, in the canonical order of {@link SANDBOX_VARIANTS}. */
  list(): SandboxVariant[] {
    return [...this.#list];
  }

  /** Replaces the active variants (the list must be valid: see {@link variantListProblem}). */
  set(variants: readonly SandboxVariant[]): void {
    const on = new Set(variants);
    this.#list = SANDBOX_VARIANTS.filter((v) => on.has(v));
    this.extraFields = on.has('extra-fields');
    this.unknownEnums = on.has('unknown-enums');
    this.noCampaignId = on.has('no-campaign-id');
    this.emptyBody = on.has('empty-body');
    this.textBody = on.has('text-body');
    this.html404 = on.has('html-404');
    this.echoKey = on.has('echo-key');
    this.refuseKey = on.has('refuse-key');
    this.active = this.#list.length > 0;
  }

  /** Back to the variants given at creation (`POST /_sandbox/reset`). */
  reset(): void {
    this.set(this.#initial);
  }

  /** Shapes a 2xx `/v1` answer of `route` (`'POST /v1/conversions/s2s'` form). */
  success(route: string, status: number, body: unknown): WireAnswer {
    const s2s = route === 'POST /v1/conversions/s2s' || route === 'POST /v1/conversions/s2s/refund';
    if (s2s && this.emptyBody) return { status, contentType: 'application/json; charset=utf-8', text: '' };
    if (s2s && this.textBody) return { status, contentType: 'text/html; charset=utf-8', text: 'OK' };
    let shaped = body;
    if (this.unknownEnums) shaped = withUnknownEnums(shaped);
    if (this.noCampaignId && route === 'POST /v1/conversions/s2s' && isObject(shaped)) {
      const { campaign_id: _dropped, ...rest } = shaped;
      shaped = rest;
    }
    if (this.extraFields) shaped = withExtraFields(shaped);
    return json(status, shaped);
  }

  /** Shapes an error answer outside `/_sandbox/`; `key` is the bearer key the request carried, if any. */
  error(problem: HttpProblem, key: string | undefined): WireAnswer {
    const echo = this.echoKey && key !== undefined && key !== '';
    const detail = echo ? `${problem.detail} (key ${key})` : problem.detail;
    if (this.html404 && problem.status === 404) {
      const text = echo ? HTML_404.replace('</body>', `<p>key ${escapeHtml(key)}</p></body>`) : HTML_404;
      return { status: 404, contentType: 'text/html; charset=utf-8', text, headers: problem.headers };
    }
    const body = this.extraFields ? withExtraFields({ detail }) : { detail };
    return { ...json(problem.status, body), headers: problem.headers };
  }
}

function json(status: number, body: unknown): WireAnswer {
  return { status, contentType: 'application/json; charset=utf-8', text: JSON.stringify(body) };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A deep copy of `value` with {@link EXTRA_FIELDS} added to every object (stored records are untouched). */
function withExtraFields(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withExtraFields);
  if (!isObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) copy[k] = withExtraFields(v);
  return { ...copy, ...EXTRA_FIELDS };
}

/** A deep copy of `value` with the enum fields of campaigns, creatives and placements set to unknown values. */
function withUnknownEnums(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withUnknownEnums);
  if (!isObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) copy[k] = withUnknownEnums(v);
  if ('pricing_model' in copy && 'status' in copy) copy.status = UNKNOWN_ENUM_VALUES.campaignStatus;
  if (copy.conversion_source === 'pixel') copy.conversion_source = UNKNOWN_ENUM_VALUES.conversionSource;
  if (copy.format === 'card') copy.format = UNKNOWN_ENUM_VALUES.format;
  return copy;
}
