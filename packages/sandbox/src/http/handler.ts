/**
 * The request listener: `/_sandbox/` (the control API: no authentication, no faults) and everything else
 * (`/v1`, see `serve-v1.ts`), once the request passes `checkRequest` (`Host`, query escapes, no body on a
 * GET). Every answer is dated by the sandbox clock; errors thrown as `HttpProblem`
 * become `{ detail }` answers, anything else a 500 without internals.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SandboxCore } from '../context.ts';
import type { ControlRoute } from '../control/routes.ts';
import { CONTROL_ROUTES } from '../control/routes.ts';
import { routeMatcher } from '../v1/routes.ts';
import type { Body } from '../validate.ts';
import { fail, splitUrl } from './answer.ts';
import { httpDate } from './date.ts';
import { readJsonBody, sendJson } from './io.ts';
import { checkRequest } from './request-checks.ts';
import { handleV1 } from './serve-v1.ts';

const matchControl = routeMatcher<ControlRoute>(CONTROL_ROUTES);
const EMPTY_BODY: Body = Object.freeze({}) as Body;

function handleControl(core: SandboxCore, req: IncomingMessage, res: ServerResponse, url: string): void {
  const { path, query } = splitUrl(url);
  const { route, params } = matchControl(req.method ?? 'GET', path);
  const run = (body: Body): void => {
    const answer = route.handler({ core, body, query, params, now: core.clock.now() });
    sendJson(res, answer.status, answer.body, httpDate(core.clock.now()));
  };
  if (route.method === 'GET') {
    run(EMPTY_BODY);
    return;
  }
  readJsonBody(req, (error, body) => {
    if (error !== null) {
      fail(res, error, core);
      return;
    }
    try {
      run(body as Body);
    } catch (err) {
      fail(res, err, core);
    }
  });
}

/**
 * Builds the `node:http` request listener of a sandbox.
 *
 * @example
 * ```ts
 * const server = http.createServer(createRequestListener(core));
 * ```
 */
export function createRequestListener(
  core: SandboxCore,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const url = req.url ?? '/';
    try {
      checkRequest(req, url);
      if (url.startsWith('/_sandbox/')) handleControl(core, req, res, url);
      else handleV1(core, req, res, url);
    } catch (err) {
      fail(res, err, core, url.startsWith('/_sandbox/') ? undefined : req);
    }
  };
}
