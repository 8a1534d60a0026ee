/**
 * Serving a `/v1` request: faults, then authentication, the rate limit, route, scope, body, handler; every
 * request (and the status it got) goes to the request log. Written with callbacks, not async/await: it is
 * the benchmark's hot path and must stay close to a bare `node:http` server.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SandboxCore } from '../context.ts';
import { type FaultDecision, NO_FAULT } from '../faults.ts';
import { HttpProblem } from '../problem.ts';
import type { Account, ApiKey } from '../state.ts';
import type { V1Route } from '../v1/routes.ts';
import { routeMatcher, V1_ROUTES } from '../v1/routes.ts';
import type { Body } from '../validate.ts';
import { bearerKey, fail, failureStatus, splitUrl } from './answer.ts';
import { httpDate } from './date.ts';
import { readJsonBody, sendJson, sendWire } from './io.ts';

const matchV1 = routeMatcher<V1Route>(V1_ROUTES);
const EMPTY_BODY: Body = Object.freeze({}) as Body;
const UNAUTHORIZED = { 'www-authenticate': 'Bearer realm="sandbox"' };

/**
 * The account of a request's key (401 when missing, not Bearer, unknown or revoked). `apiKey` is the
 * header's Bearer key, `key` the sandbox's record of it.
 */
function authenticate(
  core: SandboxCore,
  header: string | undefined,
  apiKey: string | undefined,
  key: ApiKey | undefined,
): Account {
  if (header === undefined || header === '')
    throw new HttpProblem(401, 'missing API key: send Authorization: Bearer <key>', UNAUTHORIZED);
  if (apiKey === undefined)
    throw new HttpProblem(401, 'Authorization must use the Bearer scheme', UNAUTHORIZED);
  const account = key === undefined ? undefined : core.state.accounts.get(key.accountId);
  // The detail never echoes the key (it is a secret even when it is wrong), unless the variant echo-key is on.
  if (key === undefined || account === undefined) throw new HttpProblem(401, 'invalid API key', UNAUTHORIZED);
  if (account.keysRevoked)
    throw new HttpProblem(401, 'API key revoked: this account’s keys no longer authenticate', UNAUTHORIZED);
  return account;
}

/**
 * Serves a request outside `/_sandbox/`: `/v1` routes, and a 404 for any other path (logged too, so a
 * test sees a client that uses a wrong base path).
 */
export function handleV1(core: SandboxCore, req: IncomingMessage, res: ServerResponse, url: string): void {
  const arrivedAt = core.clock.now();
  // Faults apply to `/v1` only: a wrong base path gets its 404 whatever is injected.
  const fault = url.startsWith('/v1/') ? core.faults.decide() : NO_FAULT;
  if (fault.latencyMs > 0) {
    setTimeout(() => serveV1(core, req, res, url, fault, arrivedAt), fault.latencyMs);
  } else serveV1(core, req, res, url, fault, arrivedAt);
}

function serveV1(
  core: SandboxCore,
  req: IncomingMessage,
  res: ServerResponse,
  url: string,
  fault: FaultDecision,
  arrivedAt: number,
): void {
  const { path, query } = splitUrl(url);
  const header = req.headers.authorization;
  const apiKey = bearerKey(header);
  const key = apiKey === undefined ? undefined : core.state.keys.get(apiKey);
  const method = req.method ?? 'GET';
  const log = core.requests;
  // Logged before the answer is written, so a test that reads the log after its answer finds the request.
  const refuse = (err: unknown) => {
    log.record(
      arrivedAt,
      key,
      method,
      path,
      res.headersSent ? res.statusCode : res.destroyed ? null : failureStatus(err),
    );
    fail(res, err, core, req);
  };
  try {
    if (fault.resetBefore) {
      log.record(arrivedAt, key, method, path, null);
      req.socket.destroy();
      return;
    }
    if (fault.error !== null) throw fault.error;
    if (!path.startsWith('/v1/')) throw new HttpProblem(404, `no such endpoint: ${method} ${path}`);
    const account = authenticate(core, header, apiKey, key);
    const limited = core.faults.admit(apiKey as string, arrivedAt);
    if (limited !== null) {
      (key as ApiKey).rateLimited += 1;
      throw limited;
    }
    const { route, params } = matchV1(method, path);
    const scopes = (key as ApiKey).scopes;
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
        apiKey: apiKey as string,
      });
      if (fault.resetAfter) {
        // Applied, answer lost: what a client sees when the service crashes after committing.
        log.record(arrivedAt, key, method, path, null);
        req.socket.destroy();
        return;
      }
      log.record(arrivedAt, key, method, path, answer.status);
      const date = httpDate(core.clock.now());
      if (core.variants.active)
        sendWire(
          res,
          core.variants.success(`${route.method} ${route.path}`, answer.status, answer.body),
          date,
        );
      else sendJson(res, answer.status, answer.body, date);
    };
    if (route.method !== 'POST') {
      run(EMPTY_BODY);
      return;
    }
    readJsonBody(req, (error, body) => {
      if (error !== null) {
        refuse(error);
        return;
      }
      try {
        run(body as Body);
      } catch (err) {
        refuse(err);
      }
    });
  } catch (err) {
    refuse(err);
  }
}
