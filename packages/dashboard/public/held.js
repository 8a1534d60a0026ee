/**
 * The overview's held panel: jobs held because their campaign is not on s2s, one row per account and
 * campaign, and for each one whose switch to s2s was seen (awaiting a decision: the pixel may have billed
 * its orders) what is at stake, with Send and Drop when the token allows actions.
 */
import { heldButtons } from './actions.js';
import { h, scrollable, table } from './dom.js';
import { accountHref, accountName, plural, when } from './format.js';

/** Micros as a decimal amount (the outbox does not know the currency). */
const money = (micros) => (micros / 1_000_000).toFixed(2);

/** The line of a held problem whose switch to s2s was seen: what is at stake, and Send and Drop. */
function heldDecision(p, now) {
  return h(
    'li',
    { class: 'held-decision', 'data-campaign': p.campaignId ?? '' },
    h('strong', {}, `${p.campaignId ?? 'no campaign named'} (${accountName(p.account)})`),
    ': switch to s2s seen ',
    when(p.switchSeenAt, now),
    ': awaiting a decision (the pixel may have billed these orders). ',
    `${plural(p.count, 'order')}, value ${money(p.valueMicros)}, earliest deadline `,
    when(p.earliestDeadline, now),
    '. ',
    heldButtons(p),
  );
}

/** The held panel, or null when nothing is held. */
export function heldSection(o) {
  const held = o.held ?? [];
  if (held.length === 0) return null;
  const count = held.reduce((n, p) => n + p.count, 0);
  const awaiting = held.filter((p) => p.awaitingDecision);
  const rows = held.map((p) =>
    h(
      'tr',
      { class: 'held-problem', 'data-campaign': p.campaignId ?? '' },
      h('td', { class: 'campaign' }, p.campaignId ?? 'not named by the service'),
      h('td', { class: 'account' }, accountName(p.account)),
      h('td', { class: 'num' }, String(p.count)),
      h('td', { class: 'num' }, money(p.valueMicros)),
      h('td', {}, when(p.since, o.now)),
      h('td', { class: 'reason' }, p.reason),
      h('td', {}, h('a', { href: accountHref(p.account, { state: 'pending' }) }, 'its jobs')),
    ),
  );
  return h(
    'section',
    { id: 'held', class: 'warning' },
    h('h2', {}, `Held: campaign not on s2s (${plural(count, 'job')})`),
    h(
      'p',
      {},
      'The service refuses these orders because their campaign bills by pixel, not s2s. Switch the ',
      'campaign to s2s: once a delivery shows it accepting s2s, its held orders wait for a decision, ',
      'since the pixel may have billed them meanwhile. Send delivers them (those still inside their ',
      'windows), Drop cancels them; nothing is sent without a decision, unless the workers were started ',
      "with onSwitch 'send' or 'drop'.",
      o.switches ? '' : ' This store keeps no switches: decide with the onSwitch option.',
    ),
    awaiting.length === 0
      ? null
      : h(
          'ul',
          { id: 'held-decisions' },
          awaiting.map((p) => heldDecision(p, o.now)),
        ),
    scrollable(
      'held jobs by campaign',
      table({}, ['campaign', 'account', 'jobs', 'value', 'since', 'why', 'list'], rows),
    ),
  );
}
