/**
 * Building the page: a hyperscript helper for HTML and SVG elements. Every value reaches the page as a
 * text node or an attribute set through the DOM, never as HTML, so nothing in a job can become markup.
 */

/** Creates an element; `attrs` become listeners (`on*`) or attributes; strings become text. */
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** Same for SVG elements. */
export function s(tag, attrs, ...children) {
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

/** A note above a view: a status, or an error. */
export function message(text, error = false) {
  return h('p', { class: error ? 'message error' : 'message', role: error ? 'alert' : 'status' }, text);
}

/** Text for screen readers only (an actions column's header, a checkbox's label). */
export const hidden = (text) => h('span', { class: 'visually-hidden' }, text);

/** A table that scrolls inside its own box on a narrow screen instead of widening the page. */
export const scrollable = (label, table) =>
  h('div', { class: 'table-wrap', role: 'region', 'aria-label': label, tabindex: 0 }, table);

/** A table with a header row (`''` makes a header read only by screen readers, as "actions"). */
export function table(attrs, headers, rows) {
  return h(
    'table',
    attrs,
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        headers.map((t) => h('th', { scope: 'col' }, t === '' ? hidden('actions') : t)),
      ),
    ),
    h('tbody', {}, rows),
  );
}
