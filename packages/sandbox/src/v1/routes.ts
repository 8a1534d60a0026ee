/**
 * The `/v1` route table: method, path, the scope each route needs, and its handler. The scope column is
 * the spec's rule (GET → read, changes → write, s2s → conversions) plus our choice for the two routes the
 * spec leaves open: POST /v1/campaigns/plan needs `read` (it commits nothing), POST /v1/boost `write`.
 */
import type { Answer, V1Context } from '../context.ts';
import { HttpProblem } from '../problem.ts';
import type { Scope } from '../state.ts';
import { boostStatus, claimBoost, credits, listRefunds, me, segments } from './account.ts';
import { createCampaign, listCampaigns, planCampaign } from './campaigns.ts';
import { confirmConversion, reverseConversion } from './conversions.ts';
import {
  createPlacement,
  createSite,
  listPlacements,
  listSites,
  placementLive,
  verifySite,
} from './sites.ts';

/**
 * @example
 * ```ts
 * const route: V1Route = V1_ROUTES[0]!;
 * ```
 */
export interface V1Route {
  method: 'GET' | 'POST';
  /** Path with `{name}` for a parameter. */
  path: string;
  scope: Scope;
  handler: (ctx: V1Context) => Answer;
}

/**
 * Every `/v1` endpoint of the spec.
 * @example
 * ```ts
 * V1_ROUTES.find((r) => r.path === '/v1/boost' && r.method === 'POST')?.scope; // 'write'
 * ```
 */
export const V1_ROUTES: readonly V1Route[] = [
  { method: 'GET', path: '/v1/me', scope: 'read', handler: me },
  { method: 'GET', path: '/v1/campaigns', scope: 'read', handler: listCampaigns },
  { method: 'POST', path: '/v1/campaigns', scope: 'write', handler: createCampaign },
  { method: 'POST', path: '/v1/campaigns/plan', scope: 'read', handler: planCampaign },
  { method: 'GET', path: '/v1/refunds', scope: 'read', handler: listRefunds },
  { method: 'POST', path: '/v1/conversions/s2s', scope: 'conversions', handler: confirmConversion },
  { method: 'POST', path: '/v1/conversions/s2s/refund', scope: 'conversions', handler: reverseConversion },
  { method: 'GET', path: '/v1/sites', scope: 'read', handler: listSites },
  { method: 'POST', path: '/v1/sites', scope: 'write', handler: createSite },
  { method: 'POST', path: '/v1/sites/{site_id}/verify', scope: 'write', handler: verifySite },
  { method: 'GET', path: '/v1/placements', scope: 'read', handler: listPlacements },
  { method: 'POST', path: '/v1/placements', scope: 'write', handler: createPlacement },
  { method: 'GET', path: '/v1/placements/{placement_id}/live', scope: 'read', handler: placementLive },
  { method: 'GET', path: '/v1/boost', scope: 'read', handler: boostStatus },
  { method: 'POST', path: '/v1/boost', scope: 'write', handler: claimBoost },
  { method: 'GET', path: '/v1/credits', scope: 'read', handler: credits },
  { method: 'GET', path: '/v1/segments', scope: 'read', handler: segments },
];

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** A path → method → route lookup: static paths by map, parameterised ones by segment match. */
export interface Matched<R> {
  route: R;
  params: string[];
}

/**
 * Builds a matcher for a route table. Unknown path → 404, known path with another method → 405.
 *
 * @example
 * ```ts
 * const match = routeMatcher(V1_ROUTES);
 * match('POST', '/v1/sites/site_1/verify').params; // ['site_1']
 * ```
 */
export function routeMatcher<R extends { method: string; path: string }>(
  routes: readonly R[],
): (method: string, path: string) => Matched<R> {
  const exact = new Map<string, Map<string, R>>();
  const patterned: Array<{ parts: string[]; methods: Map<string, R> }> = [];
  for (const route of routes) {
    if (!route.path.includes('{')) {
      const methods = exact.get(route.path) ?? new Map<string, R>();
      methods.set(route.method, route);
      exact.set(route.path, methods);
      continue;
    }
    const parts = route.path.split('/');
    let entry = patterned.find((p) => p.parts.join('/') === parts.join('/'));
    if (entry === undefined) {
      entry = { parts, methods: new Map() };
      patterned.push(entry);
    }
    entry.methods.set(route.method, route);
  }
  const pick = (methods: Map<string, R>, method: string, params: string[]): Matched<R> => {
    const route = methods.get(method);
    if (route === undefined) {
      const allow = [...methods.keys()].join(', ');
      throw new HttpProblem(405, `method ${method} not allowed; allowed: ${allow}`, { allow });
    }
    return { route, params };
  };
  const noParams: string[] = [];
  return (method, path) => {
    const methods = exact.get(path);
    if (methods !== undefined) return pick(methods, method, noParams);
    const parts = path.split('/');
    for (const p of patterned) {
      if (p.parts.length !== parts.length) continue;
      const params: string[] = [];
      let hit = true;
      for (let i = 0; i < parts.length; i++) {
        const want = p.parts[i] as string;
        const got = parts[i] as string;
        if (want.startsWith('{')) {
          if (got === '') {
            hit = false;
            break;
          }
          params.push(safeDecode(got));
        } else if (want !== got) {
          hit = false;
          break;
        }
      }
      if (hit) return pick(p.methods, method, params);
    }
    throw new HttpProblem(404, `no such endpoint: ${method} ${path}`);
  };
}
