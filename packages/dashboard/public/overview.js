/**
 * The overview: a warning when open jobs wait and no worker delivers them, paused accounts, jobs held
 * because their campaign is not on s2s (`held.js`), jobs by state, open jobs by time left to their deadline, delivered and failed jobs over the last hour, dead
 * jobs grouped by reason (each group's Replay and Purge act on the ids listed in it), and the workers.
 */
import { actions } from './actions.js';
import { api } from './api.js';
import { activityChart, deadlineChart } from './charts.js';
import { h, scrollable, table } from './dom.js';
import { accountHref, accountName, duration, plural, STATE_MEANINGS, STATES, when } from './format.js';
import { heldSection } from './held.js';

function noWorkerWarning(o) {
  const open = o.counts.pending + o.counts.inflight;
  if (o.delivery.noWorker) {
    return h(
      'section',
      { id: 'no-worker', class: 'warning' },
      h('h2', {}, 'No worker is delivering'),
      h(
        'p',
        {},
        `${plural(open, 'open job')} ${open === 1 ? 'waits' : 'wait'}, and no worker has reported in the last `,
        `${duration(o.delivery.seenWithinMs)}: nothing sends them, and their deadlines run. `,
        'Start a worker (postback worker) or look at the one that should be running.',
      ),
    );
  }
  if (!o.delivery.heartbeats && open > 0) {
    return h(
      'p',
      { id: 'no-heartbeats', class: 'muted' },
      'This backend keeps no worker heart-beats: the dashboard cannot tell whether a worker delivers.',
    );
  }
  return null;
}

function pausedSection(o) {
  const paused = o.pausedAccounts ?? [];
  if (paused.length === 0) return null;
  const rows = paused.map((a) =>
    h(
      'tr',
      { class: 'paused-account', 'data-account': a.account ?? '' },
      h('td', { class: 'account' }, accountName(a.account)),
      h('td', {}, a.status === null ? 'no key' : String(a.status)),
      h('td', { class: 'reason' }, a.reason),
      h('td', {}, when(a.since, o.now)),
      h('td', {}, when(a.until, o.now)),
      h('td', { class: 'num' }, String(a.workers.length)),
      h('td', {}, h('a', { href: accountHref(a.account, { state: 'pending' }) }, 'its jobs')),
    ),
  );
  return h(
    'section',
    { id: 'paused-accounts' },
    h('h2', {}, `Paused accounts (${paused.length})`),
    h(
      'p',
      { class: 'muted' },
      'Their key was refused or is unknown: their jobs wait while the other accounts deliver. ',
      'One job probes the key again at "next probe".',
    ),
    scrollable(
      'paused accounts',
      table({}, ['account', 'status', 'why', 'since', 'next probe', 'workers', 'jobs'], rows),
    ),
  );
}

function deadSection(o) {
  const groups = o.dead.groups;
  const rows = groups.map((g) =>
    h(
      'tr',
      { class: 'dead-group' },
      h('td', {}, g.status === null ? '—' : String(g.status)),
      h('td', { class: 'reason', title: g.example ?? '' }, g.reason),
      h('td', { class: 'num' }, String(g.count)),
      h(
        'td',
        {},
        h('a', { href: `#/jobs?${new URLSearchParams({ group: g.key })}` }, 'list'),
        ' ',
        actions(g.ids, `the ${plural(g.ids.length, 'dead job')} of this group`),
      ),
    ),
  );
  return h(
    'section',
    { id: 'dead' },
    h('h2', {}, `Dead jobs by reason (${o.counts.dead})`),
    groups.length === 0
      ? h('p', { class: 'muted' }, 'No dead jobs.')
      : scrollable(
          'dead jobs by reason',
          table({ id: 'dead-groups' }, ['status', 'reason', 'jobs', ''], rows),
        ),
    o.dead.scanned < o.counts.dead
      ? h('p', { class: 'muted' }, `Grouped from the first ${o.dead.scanned} dead jobs.`)
      : null,
  );
}

function activitySection(o) {
  const buckets = o.activity.buckets;
  const delivered = buckets.reduce((n, b) => n + b.delivered, 0);
  const failed = buckets.reduce((n, b) => n + b.failed, 0);
  const watched = buckets.filter((b) => b.watched).length;
  return h(
    'section',
    { id: 'activity' },
    h('h2', {}, 'Delivered and failed, last hour'),
    h(
      'p',
      { id: 'activity-summary' },
      h('span', { class: 'key delivered' }, `${delivered} delivered`),
      ', ',
      h('span', { class: 'key failed' }, `${failed} failed`),
      ' (dead or expired), per minute, ',
      h(
        'span',
        { class: 'muted' },
        `from the counts read while a page was open (${watched} of ${buckets.length} minutes)`,
      ),
    ),
    activityChart(o.activity),
  );
}

function workersSection(o) {
  if (!o.features.heartbeats || o.workers.length === 0) return null;
  return h(
    'section',
    { id: 'workers' },
    h('h2', {}, `Workers (${o.delivery.liveWorkers} live)`),
    h(
      'ul',
      {},
      o.workers.map((w) => {
        const n = (w.pausedAccounts ?? []).length;
        return h(
          'li',
          { class: w.live ? 'worker live' : 'worker' },
          `${w.workerId} — ${w.state}${n > 0 ? `, ${n} account${n === 1 ? '' : 's'} paused` : ''}, seen `,
          when(w.at, o.now),
          w.live ? '' : ' (not live)',
        );
      }),
    ),
  );
}

/** The overview's sections. */
export async function overviewView() {
  const o = await api('overview');
  const counts = h(
    'div',
    { class: 'counts' },
    STATES.map((state) =>
      h(
        'a',
        {
          class: `count state-${state}`,
          href: `#/jobs?state=${state}`,
          'data-state': state,
          ...(STATE_MEANINGS[state] ? { title: STATE_MEANINGS[state] } : {}),
        },
        h('span', { class: 'n' }, String(o.counts[state])),
        h('span', { class: 'label' }, state),
      ),
    ),
  );
  const risk = o.atRisk.count;
  const riskNote = h(
    'p',
    { class: risk > 0 ? 'at-risk-note some' : 'at-risk-note', id: 'at-risk' },
    `${risk} open job${risk === 1 ? '' : 's'} at risk: deadline within ${duration(o.atRisk.withinMs)}`,
    risk > 0 ? ' — ' : '',
    risk > 0
      ? h(
          'a',
          { href: `#/jobs?state=pending&state=inflight&deadlineWithinMs=${o.atRisk.withinMs}` },
          'show them',
        )
      : '',
  );
  return [
    noWorkerWarning(o),
    heldSection(o),
    pausedSection(o),
    h('section', { id: 'counts' }, h('h2', {}, `Jobs by state (${o.total})`), counts),
    h(
      'section',
      { id: 'deadlines' },
      h('h2', {}, `Open jobs by time left to their deadline (${o.counts.pending + o.counts.inflight})`),
      riskNote,
      deadlineChart(o.deadline),
    ),
    activitySection(o),
    deadSection(o),
    workersSection(o),
  ];
}
