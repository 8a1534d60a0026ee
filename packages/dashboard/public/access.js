/** The access box in the header: read-only, the token field, or "actions enabled" with a Lock button. */
import { ApiError, mutate, state } from './api.js';
import { h } from './dom.js';

/** Draws the box; unlocking or locking redraws the view. */
export function renderAccess() {
  const box = document.getElementById('access');
  if (!state.writable) {
    box.replaceChildren(h('span', { id: 'read-only' }, 'read-only'));
    return;
  }
  if (state.token !== null) {
    const lock = () => {
      state.token = null;
      renderAccess();
      state.redraw();
    };
    box.replaceChildren(
      h('span', {}, 'actions enabled'),
      h('button', { type: 'button', onclick: lock }, 'Lock'),
    );
    return;
  }
  const purpose = state.tokenForReads ? 'token to see the queue' : 'token to enable replay and purge';
  const input = h('input', {
    type: 'password',
    id: 'token',
    autocomplete: 'off',
    placeholder: purpose,
    'aria-label': purpose,
  });
  const status = h('span', { class: 'muted', role: 'status' });
  const unlock = async (event) => {
    event.preventDefault();
    state.token = input.value.trim();
    try {
      const checked = await mutate('check', {});
      state.refreshMs = Number(checked.refreshMs) || 0;
      renderAccess();
      await state.redraw();
    } catch (error) {
      state.token = null;
      status.textContent = error instanceof ApiError ? error.message : 'the server could not be reached';
    }
  };
  box.replaceChildren(
    h('form', { onsubmit: unlock }, input, ' ', h('button', { type: 'submit' }, 'Unlock')),
    status,
  );
}
