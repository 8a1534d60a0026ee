/**
 * The job list (`#/jobs?...`): the dead jobs of one reason group, or the jobs a filter names, most urgent
 * first. Dead rows can be selected ("select all N shown") and replayed or purged: the action names the
 * selected ids, nothing else. A reason filter reads one window of the list per page and says how far it
 * searched; "next" goes on from there.
 */
import { createSelection } from './actions.js';
import { api, canAct } from './api.js';
import { h, scrollable, table } from './dom.js';
import { accountHref, accountName, HOUR, jobLink, STATES, stateBadge, when } from './format.js';

const PAGE_SIZES = ['50', '200', '1000'];
const selection = createSelection();
let lastList = null;

function filtersForm(query) {
  const selected = new Set(query.getAll('state'));
  const field = (label, name, attrs = {}) =>
    h('label', {}, label, h('input', { name, value: query.get(name) ?? '', ...attrs }));
  const form = h(
    'form',
    { class: 'filters', id: 'filters' },
    h(
      'label',
      {},
      'states',
      h(
        'select',
        { name: 'state', multiple: true, size: STATES.length },
        STATES.map((st) => h('option', { value: st, selected: selected.has(st) }, st)),
      ),
    ),
    field('reason contains', 'reason'),
    field('status', 'status', { type: 'number', min: 100, max: 599 }),
    field('order id', 'orderId'),
    field('account', 'account', { id: 'filter-account' }),
    h(
      'label',
      { class: 'check' },
      h('input', {
        type: 'checkbox',
        name: 'noAccount',
        value: '1',
        id: 'filter-no-account',
        checked: query.has('noAccount'),
      }),
      'only jobs without an account',
    ),
    field('deadline within (hours)', 'hours', {
      type: 'number',
      min: 0,
      step: 'any',
      value: query.has('deadlineWithinMs') ? String(Number(query.get('deadlineWithinMs')) / HOUR) : '',
    }),
    h(
      'label',
      {},
      'per page',
      h(
        'select',
        { name: 'limit', id: 'filter-limit' },
        PAGE_SIZES.map((n) => h('option', { value: n, selected: (query.get('limit') ?? '50') === n }, n)),
      ),
    ),
    h('button', { type: 'submit' }, 'Filter'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    const data = new FormData(form);
    for (const st of data.getAll('state')) next.append('state', st);
    for (const name of ['reason', 'status', 'orderId']) {
      const v = String(data.get(name) ?? '').trim();
      if (v !== '') next.set(name, v);
    }
    // An account is an exact reference: kept as typed (only an all-blank field means none).
    const account = String(data.get('account') ?? '');
    if (data.get('noAccount') !== null) next.set('noAccount', '1');
    else if (account.trim() !== '') next.set('account', account);
    const hours = String(data.get('hours') ?? '').trim();
    if (hours !== '') next.set('deadlineWithinMs', String(Math.round(Number(hours) * HOUR)));
    const limit = String(data.get('limit') ?? '50');
    if (limit !== '50') next.set('limit', limit);
    location.hash = `#/jobs?${next}`;
  });
  return form;
}

function row(j, now, selectable) {
  return h(
    'tr',
    { class: 'job', 'data-id': j.id },
    selectable ? h('td', {}, j.state === 'dead' ? selection.checkbox(j.id) : null) : null,
    h('td', {}, jobLink(j.id)),
    h('td', {}, j.kind),
    h('td', {}, j.orderId),
    h(
      'td',
      { class: 'account' },
      h(
        'a',
        { href: accountHref(j.account), class: j.account === null ? 'muted' : null },
        accountName(j.account),
      ),
    ),
    h('td', {}, stateBadge(j.state)),
    h('td', { class: 'num' }, String(j.attempts)),
    h('td', {}, when(j.deadline, now)),
    h('td', {}, when(j.updatedAt, now)),
    h('td', { class: 'reason' }, j.lastError ?? ''),
  );
}

/** The list's sections. */
export async function jobsView(query) {
  const limit = Number(query.get('limit') ?? 50) || 50;
  const offset = Number(query.get('offset') ?? 0) || 0;
  const q = new URLSearchParams(query);
  q.set('limit', String(limit));
  q.set('offset', String(offset));
  const page = await api(`jobs?${q}`);
  const listKey = (() => {
    const k = new URLSearchParams(query);
    k.delete('offset');
    return `${k}|${offset}`;
  })();
  if (listKey !== lastList) selection.clear();
  lastList = listKey;
  const now = Date.now();
  selection.show(canAct() ? page.jobs.filter((j) => j.state === 'dead').map((j) => j.id) : []);
  const to = (at) => {
    const next = new URLSearchParams(query);
    next.set('offset', String(Math.max(0, at)));
    return `#/jobs?${next}`;
  };
  const reasonMode = query.has('reason') && query.get('reason') !== '';
  const selectable = canAct();
  const header = [
    ...(selectable ? ['select'] : []),
    'id',
    'kind',
    'order',
    'account',
    'state',
    'attempts',
    'deadline',
    'updated',
    'last error',
  ];
  return [
    h(
      'section',
      { id: 'jobs' },
      h('h2', {}, 'Jobs'),
      query.has('group')
        ? h(
            'p',
            { id: 'group-note' },
            `Dead jobs of the group: ${page.group === null ? '(gone)' : `${page.group.status ?? '—'} ${page.group.reason}`} — `,
            h('a', { href: '#/jobs?state=dead' }, 'all dead jobs'),
          )
        : filtersForm(query),
      reasonMode && page.scanned !== undefined
        ? h(
            'p',
            { id: 'scan-note', class: 'muted' },
            `Searched jobs ${offset + 1} to ${offset + page.scanned} of the list for the reason text.`,
          )
        : null,
      selection.bar(),
      page.jobs.length === 0
        ? h('p', { class: 'muted' }, 'No job matches.')
        : scrollable(
            'jobs',
            table(
              { id: 'job-list' },
              header,
              page.jobs.map((j) => row(j, now, selectable)),
            ),
          ),
      h(
        'div',
        { class: 'pager' },
        offset > 0
          ? h('a', { href: to(reasonMode ? 0 : offset - limit) }, reasonMode ? '← first' : '← previous')
          : null,
        page.next !== null
          ? h('a', { href: to(page.next) }, reasonMode && page.jobs.length < limit ? 'search on →' : 'next →')
          : null,
      ),
    ),
  ];
}
