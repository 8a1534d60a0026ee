/**
 * What `postback reconcile` reports: per campaign, the outbox's figures beside the service's, the orders
 * whose campaign is unknown in a row of their own, and the flags that need a person. Field names are the
 * JSON's (`--json`), snake_case like the service's own fields; money is integer micros everywhere.
 */

/** How many, and the order value they carry (micros). */
export interface Tally {
  count: number;
  value_micros: number;
}

/** The outbox's side of a row. */
export interface OutboxFigures {
  /** Confirmations the service accepted (a 2xx). */
  delivered: Tally;
  /** Confirmations never answered clearly whose request may have reached the service (a lost answer). */
  maybe_applied: Tally;
  /** Reversals the service accepted; their value is the order's (its confirmation's). */
  reversed: Tally;
  /** Reversals waiting to be sent (`pending`, `inflight`). */
  reversal_pending: Tally;
  /**
   * Reversals in every other state, by the state's name: `dead`, `expired`, `cancelled`, `unmatched` (the
   * service has no such conversion), or a state this version does not know, counted under its own name.
   */
  reversals_other: Record<string, Tally>;
}

/** A campaign as `GET /v1/campaigns` shows it; null where the answer carries no such field. */
export interface ServiceFigures {
  status: string | null;
  bid_micros: number | null;
  /** The total budget (`total_budget_micros`; null for cross_promo campaigns and when absent). */
  budget_micros: number | null;
  spend_micros: number | null;
  conversion_source: string | null;
}

/** The clicks of a campaign the service filtered and did not bill (`GET /v1/refunds`). */
export interface FilteredClicks {
  count: number;
  /** Sum of the records' `amount_micros` (records without one add nothing). */
  amount_micros: number;
  /** Our orders whose click token a record carries (records without a token match nothing). */
  matched_orders: number;
  matched_value_micros: number;
}

/** One campaign, side by side. */
export interface CampaignRow extends OutboxFigures {
  campaign_id: string;
  /** The advertiser account of its orders (whose key read its figures); null: none. */
  account: string | null;
  /** Null when the service was not asked or did not list it (see `notes`). */
  service: ServiceFigures | null;
  filtered_clicks: FilteredClicks | null;
}

/** An order of the unattributed row, as listed (the first {@link MAX_LISTED_ORDERS}). */
export interface UnattributedOrder {
  order_id: string;
  account: string | null;
  /** The confirmation's state (`delivered`: answered without a campaign; else a lost answer). */
  state: string;
  value_micros: number;
  /** Who decided the order's money last, from the ledger (see {@link ReconcileFlag.decided_by}). */
  decided_by: string | null;
}

/** Orders charged or maybe charged whose campaign is unknown: never guessed into a campaign. */
export interface UnattributedRow extends OutboxFigures {
  orders: UnattributedOrder[];
  /** Orders beyond those listed. */
  more: number;
}

/** Something a person must look at. */
export interface ReconcileFlag {
  /**
   * - `maybe-applied-past-return-window`: may have been charged, ended without an answer, and its return
   *   window (as configured) has closed: no reversal can fix it any more;
   * - `maybe-applied-open-window`: the same, and the return window is open-ended (none configured): whether
   *   it closed is the service's to say;
   * - `reversal-without-answer`: a reversal that ended without the service's word (expired locally,
   *   cancelled though the order may have been charged);
   * - `reversal-dead`: a reversal in the dead letters;
   * - `unattributed-refunded`: an order returned whose campaign is unknown, so its reversal cannot be sent.
   */
  kind:
    | 'maybe-applied-past-return-window'
    | 'maybe-applied-open-window'
    | 'reversal-without-answer'
    | 'reversal-dead'
    | 'unattributed-refunded';
  order_id: string;
  account: string | null;
  campaign_id: string | null;
  job_id: string;
  detail: string;
  /**
   * Who decided the order's money last, from the ledger: the actor of its latest row (an operator's name,
   * a dashboard token's name, or `dispatcher`); null when the ledger has no row for it or the backend
   * keeps none (SQS).
   */
  decided_by: string | null;
}

/** The whole report. */
export interface ReconcileReport {
  /** Orders created at or after this time only (`--since`), or null for all. ISO 8601. */
  since: string | null;
  /** The return window the flags used; null: open-ended. */
  return_window_ms: number | null;
  campaigns: CampaignRow[];
  unattributed: UnattributedRow;
  /** Confirmations no request of which may have reached the service, by state. */
  not_sent: Record<string, Tally>;
  flags: ReconcileFlag[];
  /** What could not be read from the service, and why (a key without the read scope...). */
  notes: string[];
}

/** How many orders the unattributed row lists. @defaultValue 100 */
export const MAX_LISTED_ORDERS = 100;

/** A tally at zero. */
export const zero = (): Tally => ({ count: 0, value_micros: 0 });

/** Empty outbox figures. */
export const emptyFigures = (): OutboxFigures => ({
  delivered: zero(),
  maybe_applied: zero(),
  reversed: zero(),
  reversal_pending: zero(),
  reversals_other: {},
});

/** Adds one order of `valueMicros` to a tally. */
export function add(tally: Tally, valueMicros: number): void {
  tally.count += 1;
  tally.value_micros += valueMicros;
}
