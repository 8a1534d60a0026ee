/**
 * Parsing an answer's JSON within a nesting bound. The depth is counted by one linear scan before
 * `JSON.parse`, so a body of `[[[[…` never reaches the parser, the schemas or any code that walks the
 * value recursively (a stack overflow there would be an error no one planned for).
 */

/** What {@link parseAnswerJson} found. */
export type ParsedAnswer =
  | { ok: true; value: unknown }
  | { ok: false; why: 'not JSON' | 'nested too deeply'; cause?: unknown };

/**
 * Parses `text` as JSON unless its arrays and objects nest deeper than `maxDepth`.
 *
 * @example
 * ```ts
 * parseAnswerJson('{"detail":"busy"}', 32); // { ok: true, value: { detail: 'busy' } }
 * parseAnswerJson('[[[1]]]', 2);            // { ok: false, why: 'nested too deeply' }
 * ```
 */
export function parseAnswerJson(text: string, maxDepth: number): ParsedAnswer {
  if (jsonDepth(text, maxDepth) > maxDepth) return { ok: false, why: 'nested too deeply' };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, why: 'not JSON', cause: err };
  }
}

/**
 * The nesting depth of a JSON text: how many arrays and objects its deepest value sits in (0 for a
 * scalar), counted without parsing; brackets inside strings (escaped quotes included) do not count. Stops
 * once past `limit` and returns `limit + 1`, so a hostile text costs one scan at most. On a text that is
 * not JSON the count means nothing (the parser rejects the text anyway).
 *
 * @example
 * ```ts
 * jsonDepth('{"a":[1,{"b":"[["}]}', 64); // 3
 * ```
 */
export function jsonDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return limit + 1;
      }
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return deepest;
}
