/** One job (`#/job/<id>`): every field and every attempt (start, duration, outcome, status, detail). */
import { actions } from './actions.js';
import { api } from './api.js';
import { h, scrollable, table } from './dom.js';
import { accountName, STATE_MEANINGS, stateBadge, when } from './format.js';

/** Where a refund's campaign came from, as shown beside it. */
const CAMPAIGN_SOURCES = {
  answer: "from the service's confirmation answer",
  caller: 'given by hand or by the app',
};

/** The job's sections. */
export async function jobView(id) {
  const { job, attempts, attemptHistory } = await api(`jobs/${encodeURIComponent(id)}`);
  const now = Date.now();
  const fields = [
    ['id', job.id],
    ['kind', job.kind],
    ['order', job.orderId],
    ['account', accountName(job.account)],
    [
      'state',
      h('span', {}, stateBadge(job.state), STATE_MEANINGS[job.state] ? ` ${STATE_MEANINGS[job.state]}` : ''),
    ],
    ['attempts', String(job.attempts)],
    ['deadline', when(job.deadline, now)],
    ['next attempt', job.state === 'pending' ? when(job.nextAttemptAt, now) : '—'],
    ['created', when(job.createdAt, now)],
    ['updated', when(job.updatedAt, now)],
    ['delivered', when(job.deliveredAt, now)],
    [
      'campaign',
      job.campaignId === null
        ? '—'
        : `${job.campaignId}${CAMPAIGN_SOURCES[job.campaignFrom] ? ` (${CAMPAIGN_SOURCES[job.campaignFrom]})` : ''}`,
    ],
    ['value (micros)', job.valueMicros === null ? '—' : String(job.valueMicros)],
    ['clicked', when(job.clickedAt, now)],
    ['click token', job.clickToken ?? '—'],
    ['may have been applied', when(job.maybeAppliedAt, now)],
    ['last error', h('span', { class: 'reason' }, job.lastError ?? '—')],
  ];
  const rows = attempts.map((a) =>
    h(
      'tr',
      { class: 'attempt' },
      h('td', {}, when(a.startedAt, now)),
      h('td', { class: 'num' }, `${a.durationMs} ms`),
      h('td', {}, a.outcome),
      h('td', {}, a.status === null ? '—' : String(a.status)),
      h('td', { class: 'reason' }, a.detail ?? ''),
    ),
  );
  const list = !attemptHistory
    ? h('p', { class: 'muted' }, 'This backend keeps no attempt history.')
    : attempts.length === 0
      ? h('p', { class: 'muted' }, 'No attempt yet.')
      : scrollable(
          'attempts',
          table({ id: 'attempts' }, ['started', 'took', 'outcome', 'status', 'detail'], rows),
        );
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
        ? h('p', {}, actions([job.id], `dead job ${job.id} (order ${job.orderId})`))
        : null,
    ),
    h('section', { id: 'history' }, h('h2', {}, `Attempts (${attempts.length})`), list),
  ];
}
