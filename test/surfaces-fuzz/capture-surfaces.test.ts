/**
 * The standing fuzz test of click capture (issue 23), in every mount style the adapters' READMEs show:
 * Express 5 and 4, Koa 3 and 2, Fastify, Hono on `@hono/node-server`, core's Fetch wrapper `withPostback`,
 * and Next's proxy (`host.ts` serves each in a child process, in front of a page that shows the click).
 *
 * - The hostile requests every surface gets (`hostile-requests.ts`): the app behind the middleware answers
 *   what it can serve with its own page, so anything below 500 is right; nothing may fail, hang or stop
 *   the process, and the next landing still gets its click.
 * - Hostile landings (`hostile-landings.ts`): a malformed token or cookie serves the page without a click
 *   and is reported to `onInvalid` (at most a few reports a request, each value well-formed Unicode); a
 *   valid token is taken whatever else is odd, unless the server refuses the request first.
 * - Generated targets (fast-check, fixed seed): paths and queries built from escapes, separators and
 *   token pieces; a 200 shows exactly the click the query holds (its first valid token among the first
 *   few values), anything else is a 4xx.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type HostileLanding,
  hostileLandings,
  type LandingExpectation,
} from '../helpers/hostile-landings.ts';
import {
  hostileRequests,
  type ParsedAnswer,
  parseAnswer,
  requestLine,
  sendRaw,
  unmet,
} from '../helpers/hostile-requests.ts';
import { eventsArrived, type RunningHost, useHost } from './host-process.ts';

const MOUNTS = [
  'capture/express5',
  'capture/express4',
  'capture/koa3',
  'capture/koa2',
  'capture/fastify',
  'capture/hono',
  'capture/fetch',
  'capture/next',
] as const;

const PARAM = 'click_token';
const COOKIE = 'postback_click';
const TOKEN = 'tok_fuzzValid0123456789AB';
/** The most values of the token parameter, or click cookies, the engine looks at (and reports) per request. */
const MAX_VALUES = 4;
const TOKEN_SHAPE = /^[A-Za-z0-9._~-]{16,256}$/;

const setsClickCookie = (answer: ParsedAnswer) =>
  answer.headers.some(([name, value]) => name === 'set-cookie' && value.startsWith(`${COOKIE}=`));

/** What is wrong with `answer` for a landing expected to show `expected`, or null. */
function landingProblem(expected: LandingExpectation, answer: ParsedAnswer): string | null {
  const { status, body } = answer;
  const is4xx = status !== null && status >= 400 && status < 500;
  const shows = `status ${status}, body ${JSON.stringify(body.slice(0, 80))}, click cookie ${setsClickCookie(answer)}`;
  if (expected === 'any') return status !== null && status < 500 ? null : shows;
  if (expected === 'no-click') {
    return status === 200 && body === 'none' && !setsClickCookie(answer) ? null : shows;
  }
  const token = 'click' in expected ? expected.click : expected.clickOrRefused;
  if ('clickOrRefused' in expected && is4xx) return null;
  return status === 200 && body === `click:${token}` && setsClickCookie(answer) ? null : shows;
}

/**
 * The click a GET of `target` must show: among the first values of the parameter (named as written, its
 * values decoded as URLSearchParams decodes them), the first valid token.
 */
function clickOf(target: string): string {
  const q = target.indexOf('?');
  if (q < 0) return 'none';
  const hash = target.indexOf('#', q);
  const values = target
    .slice(q + 1, hash < 0 ? undefined : hash)
    .split('&')
    .filter((pair) => pair === PARAM || pair.startsWith(`${PARAM}=`))
    .map((pair) => new URLSearchParams(pair).values().next().value ?? '')
    .slice(0, MAX_VALUES);
  const token = values.find((value) => TOKEN_SHAPE.test(value));
  return token === undefined ? 'none' : `click:${token}`;
}

/** The good request after each hostile one: a landing, answered with its click and the cookie. */
async function landsWell(running: RunningHost): Promise<string> {
  try {
    const response = await fetch(`http://127.0.0.1:${running.port}/?${PARAM}=${TOKEN}`, {
      redirect: 'manual',
    });
    const body = await response.text();
    const cookie = response.headers.getSetCookie().some((c) => c.startsWith(`${COOKIE}=`));
    return `status ${response.status}, ${body}, cookie ${cookie}`;
  } catch (error) {
    return `failed: ${(error as Error).message}`;
  }
}
const LANDED = `status 200, click:${TOKEN}, cookie true`;

// Targets: a path, then a query made of escapes (good and bad), separators and pieces of tokens.
const pathPiece = fc.constantFrom('/', '//', '//[', '/a', '/%ZZ', '/..', '/\\', '/:', '/@x', '/%2F', '/~');
const queryPiece = fc.constantFrom(
  `${PARAM}=`,
  `${PARAM}=`,
  'click%5Ftoken=',
  TOKEN,
  'x',
  '0123456789abcdef',
  '%ZZ',
  '%',
  '%25',
  '%ED%A0%80',
  '%F0%9F%98%80',
  '%uD83D',
  '+',
  '&',
  '&',
  '=',
  '%26',
  '.',
  '~',
  '-',
  '#',
  '?',
);
const target = fc
  .tuple(pathPiece, fc.boolean(), fc.array(queryPiece, { maxLength: 12 }))
  .map(([path, hasQuery, query]) => (hasQuery ? `${path}?${query.join('')}` : path));

describe.each(MOUNTS)('%s under hostile requests', (mount) => {
  const host = useHost(mount);

  for (const request of hostileRequests({ path: '/' })) {
    it(`${request.name}: the app's answer or a 4xx, the process lives, the next landing lands`, async () => {
      const running = await host.ensure();
      const problem = unmet(request, await sendRaw(running.port, request), 'app');
      expect({ problem, alive: running.alive(), next: await landsWell(running) }).toEqual({
        problem: null,
        alive: true,
        next: LANDED,
      });
    });
  }

  const landings = hostileLandings({
    path: '/',
    param: PARAM,
    token: TOKEN,
    cookieName: COOKIE,
    maxReports: MAX_VALUES,
  });
  const expectedReports = ({ expect: expected, minReports, maxReports = 1 }: HostileLanding) => ({
    min: minReports ?? (expected === 'no-click' ? 1 : 0),
    max: maxReports,
  });

  for (const landing of landings) {
    const { min, max } = expectedReports(landing);
    it(`${landing.name}: ${JSON.stringify(landing.expect)}, ${min}–${max} reports, well-formed`, async () => {
      const running = await host.ensure();
      const before = running.events.length;
      const answer = parseAnswer(await sendRaw(running.port, landing));
      await eventsArrived(running, before + min);
      const next = await landsWell(running);
      const reports = running.events.slice(before).filter((e) => e.kind === 'invalid');
      expect({
        problem: landingProblem(landing.expect, answer),
        reports: reports.length >= min && reports.length <= max ? 'in bounds' : reports.length,
        illFormed: reports.filter((r) => r.wellFormed === false).length,
        alive: running.alive(),
        next,
      }).toEqual({ problem: null, reports: 'in bounds', illFormed: 0, alive: true, next: LANDED });
    });
  }

  it('shows exactly the click a generated target holds, or refuses it with a 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(target, async (generated) => {
        const running = await host.ensure();
        const answer = parseAnswer(
          await sendRaw(running.port, {
            raw: requestLine('GET', generated, ['Host: localhost', 'Connection: close']),
            leave: 'open',
          }),
        );
        const status = answer.status ?? 0;
        const shown =
          status === 200 ? answer.body : status >= 400 && status < 500 ? 'refused' : `status ${status}`;
        expect({ shown, alive: running.alive() }).toEqual({
          shown: shown === 'refused' ? 'refused' : clickOf(generated),
          alive: true,
        });
      }),
      { seed: 23, numRuns: 30 },
    );
    expect(await landsWell(await host.ensure())).toBe(LANDED);
  });

  it('was never stopped, and told onError nothing', async () => {
    const running = await host.ensure();
    expect(host.deaths).toEqual([]);
    expect(running.events.filter((e) => e.kind === 'error')).toEqual([]);
  });
});
