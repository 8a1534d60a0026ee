/**
 * The request handler: `/v1` (fault injection → authentication → route → scope → body → handler) and
 * `/_sandbox/` (no authentication, no faults). Errors thrown as `HttpProblem` become `{ detail }` answers;
 * anything else is a 500 without internals.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SandboxCore } from '../context.ts';
import type { ControlRoute } from '../control/routes.ts';
import { CONTROL_ROUTES } from '../control/routes.ts';
import type { FaultDecision } from '../faults.ts';
import { HttpProblem } from '../problem.ts';
import type { Account, Scope } from '../state.ts';
import type { V1Route } from '../v1/routes.ts';
import { routeMatcher, V1_ROUTES } from '../v1/routes.ts';
import type { Body } from '../validate.ts';
import { httpDate } from './date.ts';
import { readJsonBody, sendJson, sendProblem, sendWire } from './io.ts';

const matchV1 = routeMatcher<V1Route>(V1_ROUTES);
const matchControl = routeMatcher<ControlRoute>(CONTROL_ROUTES);
const NO_QUERY = new URLSearchParams();
const EMPTY_BODY: Body = Object.freeze({}) as Body;

const UNAUTHORIZED = { 'www-authenticate': 'Bearer realm="sandbox"' };

/** The key of an `Authorization: Bearer <key>` header (`undefined` for another scheme or none). */
function bearerKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const space = header.indexOf(' ');
  if (space === -1 || header.slice(0, space).toLowerCase() !== 'bearer') return undefined;
  return header.slice(space + 1).trim();
}

/** Resolves the Bearer key to its account and scopes (401 when missing, unknown or revoked). */
function authenticate(
  core: SandboxCore,
  header: string | undefined,
): { account: Account; scopes: readonly Scope[]; apiKey: string } {
  if (header === undefined || header === '')
    throw new HttpProblem(401, 'missing API key: send Authorization: Bearer <key>', UNAUTHORIZED);
  const space = header.indexOf(' ');
  const scheme = space === -1 ? header : header.slice(0, space);
  if (scheme.toLowerCase() !== 'bearer')
    throw new HttpProblem(401, 'Authorization must use the Bearer scheme', UNAUTHORIZED);
  const apiKey = header.slice(space + 1).trim();
  const key = core.state.keys.get(apiKey);
  const account = key === undefined ? undefined : core.state.accounts.get(key.accountId);
  // The detail never echoes the key (it is a secret even when it is wrong), unless the variant echo-key is on.
  if (key === undefined || account === undefined) throw new HttpProblem(401, 'invalid API key', UNAUTHORIZED);
  if (account.keysRevoked)
    throw new HttpProblem(401, 'API key revoked: this account’s keys no longer authenticate', UNAUTHORIZED);
  return { account, scopes: key.scopes, apiKey };
}

function splitUrl(url: string): { path: string; query: URLSearchParams } {
  const q = url.indexOf('?');
  return q === -1
    ? { path: url, query: NO_QUERY }
    : { path: url.slice(0, q), query: new URLSearchParams(url.slice(q + 1)) };
}

/**
 * Answers an error. `req` is given for answers outside `/_sandbox/`, which response variants may shape
 * (`html-404`, `echo-key`, `extra-fields`); control answers are always the default `{ detail }`.
 */
function fail(res: ServerResponse, err: unknown, core?: SandboxCore, req?: IncomingMessage): void {
  if (res.headersSent || res.destroyed) return;
  if (err instanceof HttpProblem) {
    if (core?.variants.active && req !== undefined)
      sendWire(res, core.variants.error(err, bearerKey(req.headers.authorization)));
    else sendProblem(res, err);
    return;
  }
  console.error('[postback sandbox] internal error:', err);
  sendJson(res, 500, { detail: 'internal sandbox error' });
}

/**
 * `/v1`: faults, then authentication, route, scope, body, handler. Written with callbacks, not
 * async/await: it is the benchmark's hot path and must stay close to a bare `node:http` server.
 */
function handleV1(core: SandboxCore, req: IncomingMessage, res: ServerResponse, url: string): void {
  const fault = core.faults.decide();
  if (fault.latencyMs > 0) {
    setTimeout(() => {
      res.setHeader('date', httpDate(core.clock.now()));
      serveV1(core, req, res, url, fault);
    }, fault.latencyMs);
  } else serveV1(core, req, res, url, fault);
}

function serveV1(
  core: SandboxCore,
  req: IncomingMessage,
  res: ServerResponse,
  url: string,
  fault: FaultDecision,
): void {
  try {
    if (fault.resetBefore) {
      req.socket.destroy();
      return;
    }
    if (fault.error !== null) throw fault.error;
    const { account, scopes, apiKey } = authenticate(core, req.headers.authorization);
    const { path, query } = splitUrl(url);
    const { route, params } = matchV1(req.method ?? 'GET', path);
    if (!scopes.includes(route.scope)) {
      throw new HttpProblem(
        403,
        `this key lacks the '${route.scope}' scope needed for ${route.method} ${route.path}`,
      );
    }
    const run = (body: Body): void => {
      const answer = route.handler({
        core,
        body,
        query,
        params,
        now: core.clock.now(),
        account,
        scopes,
        apiKey,
      });
      if (fault.resetAfter) {
        // Applied, answer lost: what a client sees when the service crashes after committing.
        req.socket.destroy();
        return;
      }
      if (core.variants.active)
        sendWire(res, core.variants.success(`${route.method} ${route.path}`, answer.status, answer.body));
      else sendJson(res, answer.status, answer.body);
    };
    if (route.method !== 'POST') {
      run(EMPTY_BODY);
      return;
    }
    readJsonBody(req, (error, body) => {
      if (error !== null) {
        fail(res, error, core, req);
        return;
      }
      try {
        run(body as Body);
      } catch (err) {
        fail(res, err, core, req);
      }
    });
  } catch (err) {
    fail(res, err, core, req);
  }
}

function handleControl(core: SandboxCore, req: IncomingMessage, res: ServerResponse, url: string): void {
  const { path, query } = splitUrl(url);
  const { route, params } = matchControl(req.method ?? 'GET', path);
  const run = (body: Body): void => {
    const answer = route.handler({ core, body, query, params, now: core.clock.now() });
    sendJson(res, answer.status, answer.body);
  };
  if (route.method === 'GET') {
    run(EMPTY_BODY);
    return;
  }
  readJsonBody(req, (error, body) => {
    if (error !== null) {
      fail(res, error);
      return;
    }
    try {
      run(body as Body);
    } catch (err) {
      fail(res, err);
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
    res.setHeader('date', httpDate(core.clock.now()));
    try {
      if (req.headers.host === undefined && req.httpVersion === '1.1')
        throw new HttpProblem(400, 'the Host header is missing (required in HTTP/1.1)');
      if (url.startsWith('/v1/')) handleV1(core, req, res, url);
      else if (url.startsWith('/_sandbox/')) handleControl(core, req, res, url);
      else throw new HttpProblem(404, `no such endpoint: ${req.method} ${url.split('?')[0]}`);
    } catch (err) {
      fail(res, err, core, url.startsWith('/_sandbox/') ? undefined : req);
    }
  };
}
