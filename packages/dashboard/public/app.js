/**
 * The dashboard page: plain JavaScript modules, no framework and no build step. Five small views need
 * no more than a hyperscript helper, and a page with no dependency works offline and has nothing to
 * vendor or audit. Every value from the server reaches the page as a text node or an attribute set
 * through the DOM (`h()` below), never as HTML, so nothing in a job can become markup.
 *
 * Routes live in the fragment (`#/`, `#/jobs?state=dead`, `#/job/<id>`): the server serves one page,
 * and every request uses a relative URL, so the page works under any base path.
 */

const STATES = ['pending', 'inflight', 'delivered', 'dead', 'expired', 'cancelled'];

/** The token the operator pasted: in memory only (never a cookie, never in a URL), gone on reload. */
let token = null;
/** Whether the server was started with a token (replay and purge possible at all). */
let writable = false;

/** Creates an element; `attrs` become DOM properties (`on*` listeners) or attributes; strings become text. */
function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** Same for SVG elements. */
function s(tag, attrs, ...children) {
  return build(document.createElementNS('http://www.w3.org/2000/svg', tag), attrs, children);
}

function build(el, attrs, children) {
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

async function api(path, init = {}) {
  const response = await fetch(`api/${path}`, { cache: 'no-store', ...init });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.error ?? `the server answered ${response.status}`);
  return body;
}

/** A POST the server accepts only with the token: a custom header, JSON, and no cookie. */
function mutate(path, body) {
  return api(path, {
    method: 'POST',
    credentials: 'omit',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
}

const canAct = () => writable && token !== null;

// ---- formatting ----

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function duration(ms) {
  const abs = Math.abs(ms);
  if (abs < 60_000) return `${Math.round(abs / 1000)}s`;
  if (abs < HOUR) return `${Math.round(abs / 60_000)}m`;
  const [unit, big, smallUnit, small] = abs < DAY ? [HOUR, 'h', 60_000, 'm'] : [DAY, 'd', HOUR, 'h'];
  const rest = Math.floor((abs % unit) / smallUnit);
  return `${Math.floor(abs / unit)}${big}${rest === 0 ? '' : ` ${rest}${small}`}`;
}

/** A time as "in 3h 20m" or "5m ago", with the exact time as a tooltip. */
function when(at, now) {
  if (at === null || at === undefined) return h('span', { class: 'muted' }, '—');
  const text = at >= now ? `in ${duration(at - now)}` : `${duration(now - at)} ago`;
  return h('time', { datetime: new Date(at).toISOString(), title: new Date(at).toISOString() }, text);
}

function bound(ms) {
  if (ms === null) return 'later';
  return `< ${duration(ms)}`;
}

/** An account as shown: the account, or "(no account)" for jobs without one. */
const accountName = (account) => (account === null || account === undefined ? '(no account)' : account);

/** The job list of one account (`null`: jobs without one). */
const accountHref = (account, extra = {}) => {
  const q = new URLSearchParams(extra);
  if (account === null) q.set('noAccount', '1');
  else q.set('account', account);
  return `#/jobs?${q}`;
};

const stateBadge = (state) => h('span', { class: `state ${state}` }, state);
const jobLink = (id) => h('a', { href: `#/job/${encodeURIComponent(id)}` }, id);

function message(text, error = false) {
  return h('p', { class: error ? 'message error' : 'message', role: error ? 'alert' : 'status' }, text);
}

// ---- access (the token) ----

function renderAccess() {
  const box = document.getElementById('access');
  if (!writable) {
    box.replaceChildren(h('span', { id: 'read-only' }, 'read-only'));
  } else if (token !== null) {
    const lock = () => {
      token = null;
      renderAccess();
      show();
    };
    box.replaceChildren(
      h('span', {}, 'actions enabled'),
      h('button', { type: 'button', onclick: lock }, 'Lock'),
    );
  } else {
    const input = h('input', {
      type: 'password',
      id: 'token',
      autocomplete: 'off',
      placeholder: 'token to enable replay and purge',
      'aria-label': 'token',
    });
    const status = h('span', { class: 'muted' });
    const unlock = async (event) => {
      event.preventDefault();
      token = input.value.trim();
      try {
        await mutate('check', {});
        renderAccess();
        show();
      } catch (error) {
        token = null;
        status.textContent = error.message;
      }
    };
    box.replaceChildren(
      h('form', { onsubmit: unlock }, input, ' ', h('button', { type: 'submit' }, 'Unlock')),
      status,
    );
  }
}

/** Asks, then replays or purges; reports the result and redraws. */
async function act(action, target, what) {
  const verb = action === 'replay' ? 'Replay' : 'Delete';
  if (!window.confirm(`${verb} ${what}?`)) return;
  try {
    const result = await mutate(action, target);
    const n = action === 'replay' ? result.replayed : result.purged;
    await show(message(`${action === 'replay' ? 'Replayed' : 'Deleted'} ${n} job${n === 1 ? '' : 's'}.`));
  } catch (error) {
    await show(message(`${verb} failed: ${error.message}`, true));
  }
}

function actions(target, what) {
  if (!canAct()) return null;
  return h(
    'span',
    { class: 'actions' },
    h('button', { type: 'button', class: 'replay', onclick: () => act('replay', target, what) }, 'Replay'),
    ' ',
    h(
      'button',
      { type: 'button', class: 'danger purge', onclick: () => act('purge', target, what) },
      'Purge',
    ),
  );
}

// ---- views ----

function chart(bars) {
  const width = 640;
  const rowHeight = 28;
  const labelWidth = 70;
  const max = Math.max(1, ...bars.map((b) => b.count));
  const svg = s('svg', {
    class: 'chart',
    id: 'deadline-chart',
    viewBox: `0 0 ${width} ${bars.length * rowHeight + 4}`,
    role: 'img',
    'aria-label': 'open jobs by time left to their deadline',
  });
  bars.forEach((bar, i) => {
    const y = i * rowHeight + 2;
    const barWidth = Math.round(((width - labelWidth - 60) * bar.count) / max);
    svg.append(
      s('text', { x: 0, y: y + 17 }, bound(bar.withinMs)),
      s('rect', {
        class: bar.atRisk ? 'bar at-risk' : 'bar',
        x: labelWidth,
        y,
        width: Math.max(bar.count > 0 ? 2 : 0, barWidth),
        height: rowHeight - 8,
        'data-count': bar.count,
      }),
      s('text', { x: labelWidth + barWidth + 6, y: y + 17 }, String(bar.count)),
    );
  });
  svg.append(
    s('line', { class: 'axis', x1: labelWidth, x2: labelWidth, y1: 0, y2: bars.length * rowHeight }),
  );
  return svg;
}

async function overviewView() {
  const o = await api('overview');
  const counts = h(
    'div',
    { class: 'counts' },
    STATES.map((state) =>
      h(
        'a',
        { class: `count state-${state}`, href: `#/jobs?state=${state}`, 'data-state': state },
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
  const groups = o.dead.groups;
  const deadBody =
    groups.length === 0
      ? h('p', { class: 'muted' }, 'No dead jobs.')
      : h(
          'table',
          { id: 'dead-groups' },
          h(
            'thead',
            {},
            h('tr', {}, h('th', {}, 'status'), h('th', {}, 'reason'), h('th', {}, 'jobs'), h('th', {}, '')),
          ),
          h(
            'tbody',
            {},
            groups.map((g) =>
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
                  actions(
                    { group: g.key },
                    `the ${g.count} dead job${g.count === 1 ? '' : 's'} of this group`,
                  ),
                ),
              ),
            ),
          ),
        );
  const scanned =
    o.dead.scanned < o.counts.dead
      ? h('p', { class: 'muted' }, `Grouped from the first ${o.dead.scanned} dead jobs.`)
      : null;
  const paused = o.pausedAccounts ?? [];
  const pausedSection =
    paused.length === 0
      ? null
      : h(
          'section',
          { id: 'paused-accounts' },
          h('h2', {}, `Paused accounts (${paused.length})`),
          h(
            'p',
            { class: 'muted' },
            'Their key was refused or is unknown: their jobs wait while the other accounts deliver. ',
            'One job probes the key again at "next probe".',
          ),
          h(
            'table',
            {},
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['account', 'status', 'why', 'since', 'next probe', 'workers', ''].map((t) => h('th', {}, t)),
              ),
            ),
            h(
              'tbody',
              {},
              paused.map((a) =>
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
              ),
            ),
          ),
        );
  const workers =
    o.features.heartbeats && o.workers.length > 0
      ? h(
          'section',
          { id: 'workers' },
          h('h2', {}, 'Workers'),
          h(
            'ul',
            {},
            o.workers.map((w) => {
              const n = (w.pausedAccounts ?? []).length;
              return h(
                'li',
                {},
                `${w.workerId} — ${w.state}${n > 0 ? `, ${n} account${n === 1 ? '' : 's'} paused` : ''}, seen `,
                when(w.at, o.now),
              );
            }),
          ),
        )
      : null;
  return [
    pausedSection,
    h('section', { id: 'counts' }, h('h2', {}, `Jobs by state (${o.total})`), counts),
    h(
      'section',
      { id: 'deadlines' },
      h('h2', {}, `Open jobs by time left to their deadline (${o.counts.pending + o.counts.inflight})`),
      riskNote,
      chart(o.deadline),
    ),
    h('section', { id: 'dead' }, h('h2', {}, `Dead jobs by reason (${o.counts.dead})`), deadBody, scanned),
    workers,
  ];
}

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
        { name: 'state', multiple: true, size: 6 },
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
    location.hash = `#/jobs?${next}`;
  });
  return form;
}

async function jobsView(query) {
  const limit = 50;
  const offset = Number(query.get('offset') ?? 0) || 0;
  const q = new URLSearchParams(query);
  q.set('limit', String(limit));
  q.set('offset', String(offset));
  const { jobs, group } = await api(`jobs?${q}`);
  const now = Date.now();
  const rows = jobs.map((j) =>
    h(
      'tr',
      { class: 'job', 'data-id': j.id },
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
      h(
        'td',
        {},
        j.state === 'dead' ? actions({ ids: [j.id] }, `dead job ${j.id} (order ${j.orderId})`) : null,
      ),
    ),
  );
  const page = (to) => {
    const next = new URLSearchParams(query);
    next.set('offset', String(Math.max(0, to)));
    return `#/jobs?${next}`;
  };
  return [
    h(
      'section',
      { id: 'jobs' },
      h('h2', {}, 'Jobs'),
      query.has('group')
        ? h(
            'p',
            { id: 'group-note' },
            `Dead jobs of the group: ${group === null ? '(gone)' : `${group.status ?? '—'} ${group.reason}`} — `,
            h('a', { href: '#/jobs?state=dead' }, 'all dead jobs'),
          )
        : filtersForm(query),
      jobs.length === 0
        ? h('p', { class: 'muted' }, 'No job matches.')
        : h(
            'table',
            { id: 'job-list' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                [
                  'id',
                  'kind',
                  'order',
                  'account',
                  'state',
                  'attempts',
                  'deadline',
                  'updated',
                  'last error',
                  '',
                ].map((t) => h('th', {}, t)),
              ),
            ),
            h('tbody', {}, rows),
          ),
      h(
        'div',
        { class: 'pager' },
        offset > 0 ? h('a', { href: page(offset - limit) }, '← previous') : null,
        jobs.length === limit ? h('a', { href: page(offset + limit) }, 'next →') : null,
      ),
    ),
  ];
}

async function jobView(id) {
  const { job, attempts, attemptHistory } = await api(`jobs/${encodeURIComponent(id)}`);
  const now = Date.now();
  const fields = [
    ['id', job.id],
    ['kind', job.kind],
    ['order', job.orderId],
    ['account', accountName(job.account)],
    ['state', stateBadge(job.state)],
    ['attempts', String(job.attempts)],
    ['deadline', when(job.deadline, now)],
    ['next attempt', job.state === 'pending' ? when(job.nextAttemptAt, now) : '—'],
    ['created', when(job.createdAt, now)],
    ['updated', when(job.updatedAt, now)],
    ['delivered', when(job.deliveredAt, now)],
    ['campaign', job.campaignId ?? '—'],
    ['value (micros)', job.valueMicros === null ? '—' : String(job.valueMicros)],
    ['clicked', when(job.clickedAt, now)],
    ['click token', job.clickToken ?? '—'],
    ['may have been applied', when(job.maybeAppliedAt, now)],
    ['last error', h('span', { class: 'reason' }, job.lastError ?? '—')],
  ];
  const list = attemptHistory
    ? attempts.length === 0
      ? h('p', { class: 'muted' }, 'No attempt yet.')
      : h(
          'table',
          { id: 'attempts' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['started', 'took', 'outcome', 'status', 'detail'].map((t) => h('th', {}, t)),
            ),
          ),
          h(
            'tbody',
            {},
            attempts.map((a) =>
              h(
                'tr',
                { class: 'attempt' },
                h('td', {}, when(a.startedAt, now)),
                h('td', { class: 'num' }, `${a.durationMs} ms`),
                h('td', {}, a.outcome),
                h('td', {}, a.status === null ? '—' : String(a.status)),
                h('td', { class: 'reason' }, a.detail ?? ''),
              ),
            ),
          ),
        )
    : h('p', { class: 'muted' }, 'This backend keeps no attempt history.');
  return [
    h(
      'section',
      { id: 'job' },
      h('h2', {}, `Job ${job.id}`),
      h(
        'dl',
        { class: 'fields' },
        fields.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
      ),
      job.state === 'dead'
        ? h('p', {}, actions({ ids: [job.id] }, `dead job ${job.id} (order ${job.orderId})`))
        : null,
    ),
    h('section', { id: 'history' }, h('h2', {}, `Attempts (${attempts.length})`), list),
  ];
}

/** Draws the view the fragment names, with an optional message above it. */
async function show(note = null) {
  const view = document.getElementById('view');
  const [path, search = ''] = location.hash.replace(/^#/, '').split('?');
  const query = new URLSearchParams(search);
  try {
    let content;
    if (path.startsWith('/job/')) content = await jobView(decodeURIComponent(path.slice('/job/'.length)));
    else if (path === '/jobs') content = await jobsView(query);
    else content = await overviewView();
    view.replaceChildren(...[note, ...content].filter(Boolean));
    document.body.dataset.view = path || '/';
  } catch (error) {
    view.replaceChildren(message(`Could not load this page: ${error.message}`, true));
  }
}

async function start() {
  try {
    writable = (await api('overview')).writable === true;
  } catch {
    writable = false;
  }
  renderAccess();
  window.addEventListener('hashchange', () => show());
  await show();
  document.body.dataset.ready = 'true';
}

start();
