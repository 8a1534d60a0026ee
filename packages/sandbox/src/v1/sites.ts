/**
 * `/v1/sites` and `/v1/placements`: publishers register domains, prove ownership (DNS TXT, file or meta
 * tag — the proof is recorded through the control API), create placements and check their liveness.
 */
import type { Answer, V1Context } from '../context.ts';
import { iso, newId, newVerificationToken } from '../ids.ts';
import { badField, HttpProblem, notFound } from '../problem.ts';
import type { Placement, PlacementWire, Site, SiteWire } from '../state.ts';
import { CREATIVE_FORMATS, VERIFICATION_METHODS } from '../state.ts';
import { LIVENESS_WINDOW_MS } from '../traffic.ts';
import { onlyFields, readEnum, readQuery, readString } from '../validate.ts';

const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** Lower-cases and checks a bare domain name (no scheme, port or path). */
export function normalizeDomain(value: string, field = 'domain'): string {
  const domain = value.trim().toLowerCase().replace(/\.$/, '');
  if (!DOMAIN.test(domain)) throw badField(field, 'must be a domain name such as shop.example.com');
  return domain;
}

function ownSite(ctx: V1Context, siteId: string): Site {
  const site = ctx.core.state.sites.get(siteId);
  if (site === undefined || site.accountId !== ctx.account.id) throw notFound('site', siteId);
  return site;
}

/** GET /v1/sites */
export function listSites(ctx: V1Context): Answer {
  const sites: SiteWire[] = [];
  for (const s of ctx.core.state.sites.values()) if (s.accountId === ctx.account.id) sites.push(s.wire);
  return { status: 200, body: { sites } };
}

/** POST /v1/sites — one site per domain per account (409 on a second); other accounts may register it too. */
export function createSite(ctx: V1Context): Answer {
  const domain = normalizeDomain(readString(ctx.body, 'domain', 'domain', 253));
  const method = readEnum(ctx.body, 'verification_method', VERIFICATION_METHODS, 'dns_txt');
  onlyFields(ctx.body, ['domain', 'verification_method']);
  for (const s of ctx.core.state.sites.values()) {
    if (s.accountId === ctx.account.id && s.wire.domain === domain) {
      throw new HttpProblem(409, `domain ${domain} is already registered as site ${s.wire.id}`);
    }
  }
  const wire: SiteWire = {
    id: newId('site'),
    domain,
    verified: false,
    verification: { method, token: newVerificationToken() },
    created_at: iso(ctx.now),
  };
  ctx.core.state.sites.set(wire.id, { accountId: ctx.account.id, wire });
  return { status: 201, body: wire };
}

/**
 * POST /v1/sites/{site_id}/verify — verified when the domain publishes the site's token by the site's
 * method (recorded with `POST /_sandbox/domain-proofs`). A failed check is an answer (200, verified
 * false), not an error; once verified, a site stays verified.
 */
export function verifySite(ctx: V1Context): Answer {
  const site = ownSite(ctx, ctx.params[0] ?? '');
  const { method, token } = site.wire.verification;
  if (!site.wire.verified) {
    site.wire.verified = ctx.core.state.domainProofs.some(
      (p) => p.domain === site.wire.domain && p.method === method && p.token === token && p.at <= ctx.now,
    );
  }
  return {
    status: 200,
    body: { site_id: site.wire.id, verified: site.wire.verified, method, checked_at: iso(ctx.now) },
  };
}

/** GET /v1/placements?site_id= */
export function listPlacements(ctx: V1Context): Answer {
  const site = ownSite(ctx, readQuery(ctx.query, 'site_id'));
  const placements: PlacementWire[] = [];
  for (const p of ctx.core.state.placements.values())
    if (p.wire.site_id === site.wire.id) placements.push(p.wire);
  return { status: 200, body: { placements } };
}

/** POST /v1/placements — on any own site, verified or not (an unverified site just gets no traffic). */
export function createPlacement(ctx: V1Context): Answer {
  const input = {
    site_id: readString(ctx.body, 'site_id'),
    name: readString(ctx.body, 'name'),
    format: readEnum(ctx.body, 'format', CREATIVE_FORMATS, 'card'),
  };
  onlyFields(ctx.body, ['site_id', 'name', 'format']);
  const site = ownSite(ctx, input.site_id);
  const wire: PlacementWire = {
    id: newId('plc'),
    site_id: site.wire.id,
    name: input.name,
    format: input.format,
    created_at: iso(ctx.now),
  };
  const placement: Placement = { accountId: ctx.account.id, wire, lastRequestAt: null };
  ctx.core.state.placements.set(wire.id, placement);
  return { status: 201, body: wire };
}

/** GET /v1/placements/{placement_id}/live — live when a request arrived in the last 24 hours (exclusive). */
export function placementLive(ctx: V1Context): Answer {
  const id = ctx.params[0] ?? '';
  const placement = ctx.core.state.placements.get(id);
  if (placement === undefined || placement.accountId !== ctx.account.id) throw notFound('placement', id);
  const last = placement.lastRequestAt;
  return {
    status: 200,
    body: {
      placement_id: id,
      live: last !== null && ctx.now - last < LIVENESS_WINDOW_MS,
      last_request_at: last === null ? null : iso(last),
    },
  };
}
