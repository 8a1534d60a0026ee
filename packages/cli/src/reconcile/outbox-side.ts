/**
 * The outbox's side of `postback reconcile`: every order (its confirmation and its reversal, read page by
 * page) put in the row of the campaign the service attributed it to — or in the `unattributed` row when
 * no answer named one, never guessed — and the flags of what needs a person. Read only.
 */
import { type ConfirmJob, type Job, MAX_LIST_JOBS_LIMIT, type Outbox, type RefundJob } from '@postback/core';
import { duration, iso } from '../format.ts';
import {
  add,
  type CampaignRow,
  emptyFigures,
  MAX_LISTED_ORDERS,
  type OutboxFigures,
  type ReconcileFlag,
  type Tally,
  type UnattributedRow,
  zero,
} from './types.ts';

/** What the outbox side needs besides the outbox. */
export interface OutboxSideOptions {
  now: number;
  /** Only orders created at or after `now - sinceMs`; null: all. */
  sinceMs: number | null;
  /** The return window for the flags; null: open-ended (none configured). */
  returnWindowMs: number | null;
}

/** The outbox's figures. */
export interface OutboxSide {
  /** By {@link rowKey}. */
  rows: Map<string, CampaignRow>;
  unattributed: UnattributedRow;
  notSent: Record<string, Tally>;
  flags: ReconcileFlag[];
  /** Our confirmations by account and click token, to match the service's filtered clicks. */
  confirmsByToken: Map<string, ConfirmJob>;
}

/** The key of a row: its account and campaign. */
export const rowKey = (account: string | null, campaignId: string): string =>
  JSON.stringify([account, campaignId]);

/** The key of a confirmation by its click: its account and token. */
export const tokenKey = (account: string | null, token: string): string => JSON.stringify([account, token]);

/** A row with no figures yet. */
export function newRow(account: string | null, campaignId: string): CampaignRow {
  return { campaign_id: campaignId, account, ...emptyFigures(), service: null, filtered_clicks: null };
}

/** Every job of the outbox, page by page. */
async function allJobs(outbox: Outbox): Promise<Job[]> {
  const jobs: Job[] = [];
  for (let offset = 0; ; offset += MAX_LIST_JOBS_LIMIT) {
    const page = await outbox.listJobs({ limit: MAX_LIST_JOBS_LIMIT, offset });
    jobs.push(...page);
    if (page.length < MAX_LIST_JOBS_LIMIT) return jobs;
  }
}

/** An order: its confirmation and its reversal, either possibly absent. */
interface Order {
  confirm: ConfirmJob | null;
  refund: RefundJob | null;
}

const OPEN = new Set(['pending', 'inflight']);

/** Whether a request of the confirmation may have reached the service without a clear answer. */
const maybeApplied = (confirm: ConfirmJob) =>
  confirm.state !== 'delivered' && confirm.maybeAppliedAt !== null;

/**
 * Whether an ended reversal had the service's word: an attempt the service answered that its window has
 * closed (the Dispatcher's `window-closed` outcome). An `expired` reversal without one ended locally.
 */
async function answeredByService(outbox: Outbox, refund: RefundJob): Promise<boolean> {
  const history = await outbox.history(refund.id);
  return history.some((attempt) => attempt.outcome === 'window-closed' && attempt.status !== null);
}

/**
 * Reads the outbox and builds its side of the report.
 *
 * @example
 * ```ts
 * const side = await outboxSide(outbox, { now: Date.now(), sinceMs: null, returnWindowMs: 30 * DAY_MS });
 * ```
 */
export async function outboxSide(outbox: Outbox, options: OutboxSideOptions): Promise<OutboxSide> {
  const orders = new Map<string, Order>();
  for (const job of await allJobs(outbox)) {
    const key = JSON.stringify([job.account, job.orderId]);
    const order = orders.get(key) ?? { confirm: null, refund: null };
    if (job.kind === 'confirm') order.confirm = job;
    else order.refund = job;
    orders.set(key, order);
  }
  const side: OutboxSide = {
    rows: new Map(),
    unattributed: { ...emptyFigures(), orders: [], more: 0 },
    notSent: {},
    flags: [],
    confirmsByToken: new Map(),
  };
  const from = options.sinceMs === null ? null : options.now - options.sinceMs;
  for (const order of orders.values()) {
    const first = order.confirm ?? order.refund;
    if (first === null || (from !== null && first.createdAt < from)) continue;
    await place(outbox, order, side, options);
  }
  return side;
}

/** The figures an order's campaign (or its absence) puts it in. */
function figuresOf(side: OutboxSide, account: string | null, campaignId: string | null): OutboxFigures {
  if (campaignId === null) return side.unattributed;
  const key = rowKey(account, campaignId);
  const row = side.rows.get(key) ?? newRow(account, campaignId);
  side.rows.set(key, row);
  return row;
}

async function place(
  outbox: Outbox,
  order: Order,
  side: OutboxSide,
  options: OutboxSideOptions,
): Promise<void> {
  const { confirm, refund } = order;
  const value = confirm?.valueMicros ?? 0;
  if (confirm !== null) {
    side.confirmsByToken.set(tokenKey(confirm.account, confirm.clickToken), confirm);
    if (confirm.state === 'delivered' || maybeApplied(confirm)) {
      const figures = figuresOf(side, confirm.account, confirm.campaignId);
      add(confirm.state === 'delivered' ? figures.delivered : figures.maybe_applied, value);
      if (confirm.campaignId === null) listUnattributed(side.unattributed, confirm);
    } else {
      add(tallyOf(side.notSent, confirm.state), value);
    }
  }
  if (refund !== null) {
    const figures = figuresOf(side, refund.account, refund.campaignId ?? confirm?.campaignId ?? null);
    if (refund.state === 'delivered') add(figures.reversed, value);
    else if (OPEN.has(refund.state)) add(figures.reversal_pending, value);
    else add(tallyOf(figures.reversals_other, refund.state), value);
  }
  side.flags.push(...(await flagsOf(outbox, order, options)));
}

/** The tally of `state` in `byState`, created at zero: a state this version does not know counts too. */
function tallyOf(byState: Record<string, Tally>, state: string): Tally {
  const found = Object.hasOwn(byState, state) ? byState[state] : undefined;
  if (found !== undefined) return found;
  const tally = zero();
  byState[state] = tally;
  return tally;
}

function listUnattributed(row: UnattributedRow, confirm: ConfirmJob): void {
  if (row.orders.length >= MAX_LISTED_ORDERS) {
    row.more += 1;
    return;
  }
  row.orders.push({
    order_id: confirm.orderId,
    account: confirm.account,
    state: confirm.state,
    value_micros: confirm.valueMicros,
    decided_by: null,
  });
}

/** The flags of one order. */
async function flagsOf(outbox: Outbox, order: Order, options: OutboxSideOptions): Promise<ReconcileFlag[]> {
  const { confirm, refund } = order;
  const flags: ReconcileFlag[] = [];
  const flag = (
    kind: ReconcileFlag['kind'],
    job: ConfirmJob | RefundJob,
    campaignId: string | null,
    detail: string,
  ) =>
    flags.push({
      kind,
      order_id: job.orderId,
      account: job.account,
      campaign_id: campaignId,
      job_id: job.id,
      detail,
      decided_by: null,
    });
  const charged = confirm !== null && (confirm.state === 'delivered' || confirm.maybeAppliedAt !== null);
  const reversed = refund?.state === 'delivered';

  // A maybe-applied confirmation that ended unanswered: no one knows whether it was charged.
  if (confirm !== null && maybeApplied(confirm) && !OPEN.has(confirm.state) && !reversed) {
    const since = `a request may have reached the service at ${iso(confirm.maybeAppliedAt)}, no answer was read, and it ended ${confirm.state}`;
    if (options.returnWindowMs === null) {
      flag(
        'maybe-applied-open-window',
        confirm,
        confirm.campaignId,
        `${since}; the return window is open-ended here (none configured), so whether it has closed is the service's to say: check its records for this order`,
      );
    } else if ((confirm.maybeAppliedAt as number) + options.returnWindowMs < options.now) {
      flag(
        'maybe-applied-past-return-window',
        confirm,
        confirm.campaignId,
        `${since}; its return window (${duration(options.returnWindowMs)}) closed at ${iso((confirm.maybeAppliedAt as number) + options.returnWindowMs)}: check the service's records for this order`,
      );
    }
  }
  if (confirm?.state === 'cancelled' && confirm.maybeAppliedAt !== null && !reversed) {
    flag(
      'reversal-without-answer',
      confirm,
      confirm.campaignId,
      'the confirmation was cancelled though a request of it may have reached the service, and no reversal was delivered',
    );
  }
  if (refund === null || reversed) return flags;
  const campaignId = refund.campaignId ?? confirm?.campaignId ?? null;
  if (charged && campaignId === null) {
    flag(
      'unattributed-refunded',
      refund,
      null,
      `the order was refunded but its campaign is unknown (the confirmation's answer carried none, or was lost): give it with postback refund --order-id ${refund.orderId}${refund.account === null ? '' : ` --account ${refund.account}`} --campaign-id cmp_...`,
    );
    return flags;
  }
  if (refund.state === 'dead') {
    flag(
      'reversal-dead',
      refund,
      campaignId,
      `the reversal is dead: ${refund.lastError ?? 'no reason kept'}`,
    );
  } else if (refund.state === 'expired' && !(await answeredByService(outbox, refund))) {
    flag(
      'reversal-without-answer',
      refund,
      campaignId,
      `the reversal expired without the service's word (${refund.lastError ?? 'no reason kept'})`,
    );
  } else if (refund.state === 'cancelled' && (charged || confirm === null)) {
    flag(
      'reversal-without-answer',
      refund,
      campaignId,
      `the reversal was cancelled though the order ${confirm === null ? 'is not in this outbox' : 'may have been charged'}`,
    );
  }
  return flags;
}
