/** How values read on the page: durations, times, accounts, states, links. */
import { h } from './dom.js';

export const STATES = ['pending', 'inflight', 'delivered', 'dead', 'expired', 'cancelled', 'unmatched'];

/** What a state means, where its name alone does not say it (shown as the badge's tooltip and the count's). */
export const STATE_MEANINGS = {
  unmatched: 'no such conversion at the service: the reversal found nothing to reverse',
  cancelled: 'refunded before it was sent: nothing was charged',
};
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** `3 jobs`, `1 job`. */
export const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** A duration as "45s", "12m", "3h 20m", "2d 4h". */
export function duration(ms) {
  const abs = Math.abs(ms);
  if (abs < 60_000) return `${Math.round(abs / 1000)}s`;
  if (abs < HOUR) return `${Math.round(abs / 60_000)}m`;
  const [unit, big, smallUnit, small] = abs < DAY ? [HOUR, 'h', 60_000, 'm'] : [DAY, 'd', HOUR, 'h'];
  const rest = Math.floor((abs % unit) / smallUnit);
  return `${Math.floor(abs / unit)}${big}${rest === 0 ? '' : ` ${rest}${small}`}`;
}

/** A time as "in 3h 20m" or "5m ago", with the exact time as a tooltip. */
export function when(at, now) {
  if (at === null || at === undefined) return h('span', { class: 'muted' }, '—');
  const text = at >= now ? `in ${duration(at - now)}` : `${duration(now - at)} ago`;
  return h('time', { datetime: new Date(at).toISOString(), title: new Date(at).toISOString() }, text);
}

/** The label of a deadline bar. */
export const bound = (ms) => (ms === null ? 'later' : `< ${duration(ms)}`);

/** An account as shown: the account, or "(no account)" for jobs without one. */
export const accountName = (account) =>
  account === null || account === undefined ? '(no account)' : account;

/** The job list of one account (`null`: jobs without one). */
export function accountHref(account, extra = {}) {
  const q = new URLSearchParams(extra);
  if (account === null) q.set('noAccount', '1');
  else q.set('account', account);
  return `#/jobs?${q}`;
}

export const stateBadge = (state) =>
  h(
    'span',
    { class: `state ${state}`, ...(STATE_MEANINGS[state] ? { title: STATE_MEANINGS[state] } : {}) },
    state,
  );
export const jobLink = (id) => h('a', { href: `#/job/${encodeURIComponent(id)}` }, id);
