/**
 * Writes the text of `packages/core/src/capture/sha256-hmac.wat`, the WebAssembly HMAC-SHA256 module.
 * `node scripts/build-wasm.ts` (`npm run build:wasm`) saves it and assembles it into `sha256-hmac.wasm.ts`.
 *
 * Why generated: the module's SHA-256 compression is unrolled. The 16 word loads, the 48 schedule steps
 * and the 64 rounds are written out one by one, so every memory offset and round constant is an immediate
 * and no loop counter or branch runs between them: an eighth fewer instructions per MAC than the
 * 8-rounds-per-pass loop it replaced (8.3k -> 7.3k, measured under callgrind), on the landing request's
 * critical path. Those thousand near-identical lines are emitted here from one formula per group; the rest
 * of the module (memory layout, padding, the block loop) is the template text below, as it stands in the
 * .wat.
 */

/** Where the message schedule lies: W[t] is the i32 at SCHEDULE + 4t. */
const SCHEDULE = 384;
/** Where the working state lies: 8 words, H0..H7 of the hash in progress, host byte order. */
const STATE = 704;
/** The working variables, in the order of the state words they are loaded from. */
const VARIABLES = ['$a', '$b', '$c', '$d', '$e', '$f', '$g', '$h'] as const;

/** The smallest `count` primes. */
function primes(count: number): number[] {
  const found: number[] = [];
  for (let n = 2; found.length < count; n++) if (found.every((p) => n % p !== 0)) found.push(n);
  return found;
}

/** The integer cube root of `n`, rounded down: a floating-point estimate, then corrected exactly. */
function cubeRoot(n: bigint): bigint {
  let root = BigInt(Math.round(Math.cbrt(Number(n))));
  while (root ** 3n > n) root--;
  while ((root + 1n) ** 3n <= n) root++;
  return root;
}

/**
 * The round constants K[0..63] (FIPS 180-4, section 4.2.2): the first 32 bits of the fractional parts of
 * the cube roots of the first 64 primes, i.e. floor(cbrt(p) * 2^32) mod 2^32 = floor(cbrt(p * 2^96)) mod
 * 2^32, computed here in exact integer arithmetic (0x428a2f98, 0x71374491, ..., 0xc67178f2).
 */
const K = primes(64).map((p) => Number(cubeRoot(BigInt(p) << 96n) & 0xffffffffn));

const hex = (word: number) => `0x${word.toString(16).padStart(8, '0')}`;
/** The i32 load of W[t]. */
const loadW = (t: number) => `(i32.load offset=${SCHEDULE + 4 * t} (i32.const 0))`;
/** Lines indented for the body of the block loop. */
const indent = (lines: string[]) => lines.map((line) => `      ${line}`);

/** W[0..15]: each of the block's 16 words, big-endian, by a byte swap of its little-endian load. */
function wordLoads(): string[] {
  return Array.from({ length: 16 }, (_, t) => [
    `(local.set $w (i32.load offset=${4 * t} (local.get $p)))`,
    `(i32.store offset=${SCHEDULE + 4 * t} (i32.const 0) (i32.or`,
    '  (i32.and (i32.rotl (local.get $w) (i32.const 8)) (i32.const 0x00ff00ff))',
    '  (i32.and (i32.rotr (local.get $w) (i32.const 8)) (i32.const 0xff00ff00))))',
  ]).flat();
}

/** W[16..63]: W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16]. */
function scheduleSteps(): string[] {
  return Array.from({ length: 48 }, (_, i) => {
    const t = 16 + i;
    return [
      `(local.set $w ${loadW(t - 2)})`,
      `(local.set $x ${loadW(t - 15)})`,
      `(i32.store offset=${SCHEDULE + 4 * t} (i32.const 0) (i32.add`,
      `  (i32.add ${loadW(t - 7)} (i32.xor (i32.xor`,
      '    (i32.rotr (local.get $w) (i32.const 17)) (i32.rotr (local.get $w) (i32.const 19))) (i32.shr_u (local.get $w) (i32.const 10))))',
      `  (i32.add ${loadW(t - 16)} (i32.xor (i32.xor`,
      '    (i32.rotr (local.get $x) (i32.const 7)) (i32.rotr (local.get $x) (i32.const 18))) (i32.shr_u (local.get $x) (i32.const 3))))))',
    ];
  }).flat();
}

/** a..h = the working state, before the rounds. */
function stateLoads(): string[] {
  return VARIABLES.map((v, i) => `(local.set ${v} (i32.load offset=${4 * i} (i32.const ${STATE})))`);
}

/**
 * Round t, with its constant k = K[t]. The variables are not moved along after each round: their roles
 * rotate instead, so round t plays (A, B, C, D, E, F, G, H) with a..h shifted right by t places (round 1:
 * h, a, b, c, d, e, f, g).
 */
function round(t: number, k: number): string[] {
  const [a, b, c, d, e, f, g, h] = VARIABLES.map((_, i) => VARIABLES[(i - t + 64) % 8]);
  return [
    `;; round ${t}`,
    `(local.set ${h} (i32.add (i32.add (i32.add (local.get ${h})`,
    `  (i32.xor (i32.xor (i32.rotr (local.get ${e}) (i32.const 6)) (i32.rotr (local.get ${e}) (i32.const 11))) (i32.rotr (local.get ${e}) (i32.const 25))))`,
    `  (i32.xor (local.get ${g}) (i32.and (local.get ${e}) (i32.xor (local.get ${f}) (local.get ${g})))))`,
    `  (i32.add (i32.const ${hex(k)}) ${loadW(t)})))`,
    `(local.set ${d} (i32.add (local.get ${d}) (local.get ${h})))`,
    `(local.set ${h} (i32.add (local.get ${h}) (i32.add`,
    `  (i32.xor (i32.xor (i32.rotr (local.get ${a}) (i32.const 2)) (i32.rotr (local.get ${a}) (i32.const 13))) (i32.rotr (local.get ${a}) (i32.const 22)))`,
    `  (i32.or (i32.and (local.get ${a}) (local.get ${b})) (i32.and (local.get ${c}) (i32.or (local.get ${a}) (local.get ${b})))))))`,
  ];
}

/** The working state += a..h, after the rounds. */
function stateUpdates(): string[] {
  return VARIABLES.map(
    (v, i) =>
      `(i32.store offset=${4 * i} (i32.const ${STATE}) (i32.add (i32.load offset=${4 * i} (i32.const ${STATE})) (local.get ${v})))`,
  );
}

/** The compression of the 64-byte block at $p into the working state, unrolled. */
function compression(): string[] {
  return indent([
    ";; W[0..15]: the block's words, big-endian: a byte swap of each little-endian load, by two rotations.",
    ...wordLoads(),
    `;; W[16..63], unrolled (W[t] is at ${SCHEDULE} + 4t): W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16],`,
    ';; with s1(w) = w>>>17 ^ w>>>19 ^ w>>10 and s0(x) = x>>>7 ^ x>>>18 ^ x>>3.',
    ...scheduleSteps(),
    `;; a..h: the working state (at ${STATE}).`,
    ...stateLoads(),
    ';; 64 rounds, unrolled, each with its constant K[t] in the code. Instead of moving a..h along each',
    ';; round, the names rotate (round t uses a..h shifted right by t), as in FIPS 180-4 implementations',
    ';; in C. Round t, with its roles as (A, B, C, D, E, F, G, H):',
    ';;   H += S1(E) + ch(E, F, G) + K[t] + W[t]; D += H; H += S0(A) + maj(A, B, C)',
    ';; S1(e) = e>>>6 ^ e>>>11 ^ e>>>25, ch = g ^ (e & (f ^ g)), S0(a) = a>>>2 ^ a>>>13 ^ a>>>22,',
    ';; maj = (a & b) | (c & (a | b)).',
    ...K.flatMap((k, t) => round(t, k)),
    ';; The working state += a..h.',
    ...stateUpdates(),
  ]);
}

const HEADER = `;; Generated by scripts/sha256-hmac-wat.ts: do not edit by hand; edit the generator, then \`npm run build:wasm\`.
;; HMAC-SHA256 of one message, from precomputed key pad states, in WebAssembly.
;; The source of \`sha256-hmac.wasm.ts\` (both written by \`npm run build:wasm\`; a test checks they match).
;;
;; The compression is unrolled: the 16 word loads, the 48 schedule steps and the 64 rounds are written
;; out one by one, so every memory offset and round constant is an immediate and no loop counter or
;; branch runs between them: an eighth fewer instructions per MAC than the 8-rounds-per-pass loop
;; it replaced (8.3k -> 7.3k, measured under callgrind), on the landing request's critical path. The
;; steps are regular: the generator emits each group from the formula in the comment above it.
;;
;; Memory layout (bytes):
;;     0 ..   31  inner pad state: 8 words (H0..H7 after compressing key XOR ipad), host byte order
;;    32 ..   63  outer pad state: the same for key XOR opad (both zeroed again when \`hmac\` returns)
;;    64 ..   71  free for the caller (the cookie codec puts its 7-byte header at 65, right before the MAC)
;;    72 ..  103  the MAC, big-endian (the output)
;;   128 ..  383  unused (the round constants K are immediates in the unrolled rounds)
;;   384 ..  639  the message schedule W
;;   640 ..  703  the outer hash's one block: inner digest (big-endian), then constant padding
;;   704 ..  735  the working state
;;  1024 ..       the message; \`hmac(len)\` pads it in place (so len + 72 bytes must fit)`;

/** The module up to the compression: memory, helpers, and the padding and block loop of `hmac`. */
const BEFORE_COMPRESSION = `(module
  (memory (export "memory") 1)

  ;; The outer block's padding: 0x80 after the 32-byte inner digest, length (64 + 32) * 8 = 768 bits.
  (data (i32.const 672) "\\80")
  (data (i32.const 702) "\\03\\00")

  ;; Writes the working state (8 words at 704, host order) big-endian to $out.
  (func $digest (param $out i32)
    (local $i i32) (local $v i32)
    (loop $words
      (local.set $v (i32.load offset=704 (local.get $i)))
      (i32.store8 (local.get $out) (i32.shr_u (local.get $v) (i32.const 24)))
      (i32.store8 offset=1 (local.get $out) (i32.shr_u (local.get $v) (i32.const 16)))
      (i32.store8 offset=2 (local.get $out) (i32.shr_u (local.get $v) (i32.const 8)))
      (i32.store8 offset=3 (local.get $out) (local.get $v))
      (local.set $out (i32.add (local.get $out) (i32.const 4)))
      (br_if $words (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 4))) (i32.const 32)))))

  ;; The pad state at $from (0: inner, 32: outer) copied to the working state at 704.
  (func $start (param $from i32)
    (local $i i32)
    (loop $words
      (i32.store offset=704 (local.get $i) (i32.load (i32.add (local.get $from) (local.get $i))))
      (br_if $words (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 4))) (i32.const 32)))))

  ;; HMAC of the $len-byte message at 1024 (after the 64-byte key block): the MAC lands at 72. One
  ;; function holding the compression loop for every block, inner and outer, so that the engine's
  ;; optimising tier, which works per function, takes all of the hot code at once.
  (func (export "hmac") (param $len i32)
    (local $p i32) (local $end i32) (local $bits i32)
    (local $i i32) (local $w i32) (local $x i32)
    (local $a i32) (local $b i32) (local $c i32) (local $d i32)
    (local $e i32) (local $f i32) (local $g i32) (local $h i32)
    ;; Padding in place: 0x80, zeros, then the bit length (64 + len) * 8 as a 64-bit big-endian number.
    (local.set $end (i32.add (i32.const 1024)
      (i32.shl (i32.shr_u (i32.add (local.get $len) (i32.const 72)) (i32.const 6)) (i32.const 6))))
    (local.set $p (i32.add (i32.const 1024) (local.get $len)))
    (i32.store8 (local.get $p) (i32.const 0x80))
    (local.set $p (i32.add (local.get $p) (i32.const 1)))
    (block $zeroed
      (loop $zero
        (br_if $zeroed (i32.ge_u (local.get $p) (i32.sub (local.get $end) (i32.const 4))))
        (i32.store8 (local.get $p) (i32.const 0))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $zero)))
    (local.set $bits (i32.shl (i32.add (local.get $len) (i32.const 64)) (i32.const 3)))
    (local.set $p (i32.sub (local.get $end) (i32.const 4)))
    (i32.store8 (local.get $p) (i32.shr_u (local.get $bits) (i32.const 24)))
    (i32.store8 offset=1 (local.get $p) (i32.shr_u (local.get $bits) (i32.const 16)))
    (i32.store8 offset=2 (local.get $p) (i32.shr_u (local.get $bits) (i32.const 8)))
    (i32.store8 offset=3 (local.get $p) (local.get $bits))
    ;; The inner hash's blocks from the inner pad state, then the outer hash's one block (at 640).
    (call $start (i32.const 0))
    (local.set $p (i32.const 1024))
    (loop $blocks
      ;; Compress the block at $p into the working state.`;

/** The rest of the block loop: the end of the outer hash, or the next block. */
const AFTER_COMPRESSION = `      (if (i32.eq (local.get $p) (i32.const 640))
        (then
          (call $digest (i32.const 72))
          ;; The pad states are as good as the key: leave none of them in memory a caller can see.
          (local.set $i (i32.const 0))
          (loop $wipe
            (i32.store (local.get $i) (i32.const 0))
            (br_if $wipe (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 4))) (i32.const 64))))
          (return)))
      (br_if $blocks (i32.lt_u (local.tee $p (i32.add (local.get $p) (i32.const 64))) (local.get $end)))
      ;; Inner hash done: its digest goes into the outer block, hashed from the outer pad state.
      (call $digest (i32.const 640))
      (call $start (i32.const 32))
      (local.set $p (i32.const 640))
      (br $blocks)))
)`;

/**
 * The text of `sha256-hmac.wat`: HMAC-SHA256 of one message from precomputed key pad states, with the
 * SHA-256 compression unrolled (word loads, schedule steps and rounds written out with immediates).
 *
 * @returns The module in WebAssembly text format, newline-terminated, as committed.
 */
export function sha256HmacWat(): string {
  return [HEADER, BEFORE_COMPRESSION, ...compression(), AFTER_COMPRESSION, ''].join('\n');
}
