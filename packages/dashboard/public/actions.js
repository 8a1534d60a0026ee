/**
 * Replay and purge, and the decision on held orders. Every replay or purge names the ids of the jobs the page shows: one job, the jobs of a reason
 * group as the overview listed them, or the rows the operator selected ("select all N shown"). The
 * server acts on those ids only, so a job that died after the page was drawn is never touched. A held
 * decision names one problem (account and campaign) whose switch to s2s was seen. Each action asks for
 * confirmation first; while it runs, live refresh waits.
 */
import { canAct, mutate, state } from './api.js';
import { h, message } from './dom.js';
import { accountName, plural } from './format.js';

let busy = false;
/** Whether an action (its dialog, or its request) is under way. */
export const isBusy = () => busy;

/** Asks, then replays or purges `ids`; reports the result and redraws. */
export async function act(action, ids, what) {
  const verb = action === 'replay' ? 'Replay' : 'Delete';
  busy = true;
  try {
    if (!window.confirm(`${verb} ${what}?`)) return;
    const result = await mutate(action, { ids });
    const n = action === 'replay' ? result.replayed : result.purged;
    await state.redraw(message(`${action === 'replay' ? 'Replayed' : 'Deleted'} ${plural(n, 'job')}.`));
  } catch (error) {
    await state.redraw(message(`${verb} failed: ${error.message}`, true));
  } finally {
    busy = false;
  }
}

/** Replay and Purge buttons for `ids` (described as `what` in the dialog), or null without the token. */
export function actions(ids, what) {
  if (!canAct() || ids.length === 0) return null;
  return h(
    'span',
    { class: 'actions' },
    h('button', { type: 'button', class: 'replay', onclick: () => act('replay', ids, what) }, 'Replay'),
    ' ',
    h('button', { type: 'button', class: 'danger purge', onclick: () => act('purge', ids, what) }, 'Purge'),
  );
}

/** The held problem as a dialog names it: its orders, campaign and account. */
const problemName = (p) =>
  `the ${plural(p.count, 'held order')} of campaign ${p.campaignId ?? '(none named)'} (account ${accountName(p.account)})`;

/** Asks, then sends or drops the held orders of `problem`; reports the counts and redraws. */
export async function decideHeld(decision, problem) {
  const verb = decision === 'send' ? 'Send' : 'Drop';
  const consequence =
    decision === 'send'
      ? 'They are sent now (those past their deadline expire unsent); if the pixel billed them, they are billed twice.'
      : 'They are cancelled and never sent (a held reversal is still sent).';
  busy = true;
  try {
    if (!window.confirm(`${verb} ${problemName(problem)}? ${consequence}`)) return;
    const result = await mutate(`held-${decision}`, {
      account: problem.account,
      campaignId: problem.campaignId,
    });
    const text =
      result.decided === 0
        ? 'No held order was left to decide.'
        : `Decided ${plural(result.decided, 'order')}: ${result.sent} sent now, ${result.dropped} dropped, ` +
          `${result.expired} expired (past their deadline, not sent).`;
    await state.redraw(message(text));
  } catch (error) {
    await state.redraw(message(`${verb} failed: ${error.message}`, true));
  } finally {
    busy = false;
  }
}

/** Send and Drop buttons for a held problem awaiting a decision, or null without the token. */
export function heldButtons(problem) {
  if (!canAct()) return null;
  const what = `${problem.campaignId ?? 'no campaign'}, ${accountName(problem.account)}`;
  return h(
    'span',
    { class: 'actions' },
    h(
      'button',
      {
        type: 'button',
        class: 'held-send',
        'aria-label': `Send the held orders (${what})`,
        onclick: () => decideHeld('send', problem),
      },
      'Send',
    ),
    ' ',
    h(
      'button',
      {
        type: 'button',
        class: 'danger held-drop',
        'aria-label': `Drop the held orders (${what})`,
        onclick: () => decideHeld('drop', problem),
      },
      'Drop',
    ),
  );
}

/**
 * The selection of a job list: a checkbox per dead job shown, "select all N shown", and buttons that
 * act on the selected ids. The selection survives a refresh for the jobs still shown and dead; a job
 * that left the page leaves the selection.
 */
export function createSelection() {
  const selected = new Set();
  let shown = [];
  let bar = null;

  const update = () => {
    if (bar === null) return;
    const n = selected.size;
    bar.querySelector('.selected-count').textContent = `${n} selected`;
    for (const b of bar.querySelectorAll('button')) b.disabled = n === 0;
    const all = bar.querySelector('#select-all');
    all.checked = n > 0 && n === shown.length;
    all.indeterminate = n > 0 && n < shown.length;
  };

  return {
    /** Sets the dead jobs the page shows now, dropping selected ids no longer among them. */
    show(ids) {
      shown = ids;
      for (const id of [...selected]) if (!ids.includes(id)) selected.delete(id);
    },
    /** The checkbox of one row. */
    checkbox(id) {
      return h('input', {
        type: 'checkbox',
        class: 'select-job',
        'aria-label': `select job ${id}`,
        checked: selected.has(id),
        onchange: (event) => {
          if (event.target.checked) selected.add(id);
          else selected.delete(id);
          update();
        },
      });
    },
    /** The bar above the list: select all shown, and act on the selection. */
    bar() {
      if (!canAct() || shown.length === 0) return null;
      const run = (action) => () => {
        const ids = shown.filter((id) => selected.has(id));
        act(action, ids, `the ${plural(ids.length, 'selected dead job')}`);
      };
      bar = h(
        'div',
        { class: 'selection', id: 'selection' },
        h(
          'label',
          { class: 'select-all' },
          h('input', {
            type: 'checkbox',
            id: 'select-all',
            onchange: (event) => {
              for (const id of shown) {
                if (event.target.checked) selected.add(id);
                else selected.delete(id);
              }
              for (const box of document.querySelectorAll('input.select-job'))
                box.checked = event.target.checked;
              update();
            },
          }),
          `Select all ${shown.length} shown`,
        ),
        h('span', { class: 'selected-count muted' }),
        h('button', { type: 'button', class: 'replay-selected', onclick: run('replay') }, 'Replay selected'),
        h(
          'button',
          { type: 'button', class: 'danger purge-selected', onclick: run('purge') },
          'Purge selected',
        ),
      );
      update();
      return bar;
    },
    clear() {
      selected.clear();
    },
  };
}
