/**
 * Live refresh: the view redraws itself every `refreshMs` (the server's option), so a job is seen moving
 * without a reload. It waits while the operator is busy: paused with the button, an action's dialog or
 * request under way, focus in a field or control of the view (typing a filter, choosing rows), the tab
 * hidden, or the page locked until the token is pasted.
 */

import { isBusy } from './actions.js';
import { state } from './api.js';
import { h } from './dom.js';
import { duration } from './format.js';

let paused = false;
let timer = null;
let started = false;

/** Whether the operator is working in the view (a redraw would take the focus away). */
function working() {
  const active = document.activeElement;
  return active !== null && active !== document.body && document.getElementById('view')?.contains(active);
}

function schedule() {
  clearTimeout(timer);
  if (paused || state.refreshMs <= 0) return;
  timer = setTimeout(async () => {
    // A locked page (reads need the token) waits for Unlock: a redraw would retype the token field.
    const locked = document.body.dataset.view === 'locked';
    if (!paused && !locked && !isBusy() && !document.hidden && !working()) {
      await state.redraw(undefined, { refresh: true });
    }
    schedule();
  }, state.refreshMs);
}

/** Draws the refresh control in the header and starts the loop (once, when the server asks for it). */
export function startRefresh() {
  if (started || state.refreshMs <= 0) return;
  started = true;
  const box = document.getElementById('refresh');
  const label = h('span', { class: 'muted', id: 'refresh-state' });
  const button = h('button', { type: 'button', id: 'refresh-toggle', 'aria-pressed': 'false' });
  const draw = () => {
    label.textContent = paused ? 'refresh paused' : `live: every ${duration(state.refreshMs)}`;
    button.textContent = paused ? 'Resume' : 'Pause';
    button.setAttribute('aria-pressed', String(paused));
  };
  button.addEventListener('click', () => {
    paused = !paused;
    draw();
    schedule();
  });
  draw();
  box.replaceChildren(label, button);
  schedule();
}
