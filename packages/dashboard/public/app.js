/**
 * The dashboard page: plain JavaScript modules, no framework and no build step. Small views need no more
 * than the hyperscript helper in `dom.js`, and a page with no dependency works offline and has nothing
 * to vendor or audit: every module comes from this origin (`assets/`), nothing from anywhere else.
 *
 * Routes live in the fragment (`#/`, `#/jobs?state=dead`, `#/job/<id>`): the server serves one page,
 * and every request uses a relative URL, so the page works under any base path. The view redraws itself
 * every few seconds (see `refresh.js`).
 */
import { renderAccess } from './access.js';
import { ApiError, api, state } from './api.js';
import { message } from './dom.js';
import { jobView } from './job.js';
import { jobsView } from './jobs.js';
import { overviewView } from './overview.js';
import { startRefresh } from './refresh.js';

/** The note above the view (an action's result): kept across refreshes, dropped on navigation. */
let note = null;

/**
 * Draws the view the fragment names, with `next` as its note when given. A refresh that fails leaves the
 * view as it was and says so.
 */
async function show(next, { refresh = false } = {}) {
  if (next !== undefined) note = next;
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
    document.body.dataset.refreshedAt = String(Date.now());
    startRefresh();
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return needToken();
    if (refresh) return;
    view.replaceChildren(message(`Could not load this page: ${error.message}`, true));
  }
}

/** Reads need the token: the access box asks for it, and the view says why it is empty. */
function needToken() {
  state.tokenForReads = true;
  state.writable = true;
  state.token = null;
  renderAccess();
  document
    .getElementById('view')
    .replaceChildren(message('This dashboard shows the queue only with its token: paste it above.'));
  document.body.dataset.view = 'locked';
}

async function start() {
  state.redraw = show;
  try {
    const o = await api('overview');
    state.writable = o.writable === true;
    state.tokenForReads = o.tokenForReads === true;
    state.refreshMs = Number(o.refreshMs) || 0;
  } catch (error) {
    // Reads need the token, so the server has one: the access box asks for it.
    if (error instanceof ApiError && error.status === 401)
      Object.assign(state, { tokenForReads: true, writable: true });
  }
  renderAccess();
  window.addEventListener('hashchange', () => show(null));
  await show();
  document.body.dataset.ready = 'true';
}

start();
