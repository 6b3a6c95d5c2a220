// @ts-check
// Small DOM helpers shared by the views.

/** h('a', {href: '/x', class: 'y', onclick: f}, 'text', child) */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

export function toast(message, kind = 'info') {
  const box = document.getElementById('toasts');
  const t = h('div', { class: `toast ${kind}` }, message);
  box.append(t);
  setTimeout(() => t.remove(), kind === 'error' ? 9000 : 4000);
}

export function bytes(n) {
  if (n === null || n === undefined) return '';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  let v = Number(n);
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${i === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

export function when(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** A compact time: the time of day for today, else the date and time (the full one as a title). */
export function shortTime(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso || '—';
  const today = new Date().toDateString() === d.toDateString();
  return today
    ? d.toLocaleTimeString()
    : d.toLocaleString([], {
        month: 'short',
        day: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      });
}

/** A refusal in words, with the one action that can succeed (`label`), when there is one. */
export function errorBox(text, retry, label = 'Try again') {
  return h(
    'div',
    { class: 'error-box', role: 'alert' },
    h('p', {}, text),
    retry ? h('button', { type: 'button', onclick: retry }, label) : null,
  );
}

export function empty(title, hint) {
  return h(
    'div',
    { class: 'empty' },
    h('p', { class: 'empty-title' }, title),
    hint ? h('p', { class: 'muted' }, hint) : null,
  );
}

/** A modal dialog; resolves with the button's value ('' when dismissed). */
export function dialog(title, body, buttons) {
  return new Promise((resolve) => {
    const d = h(
      'dialog',
      { 'aria-label': title },
      h(
        'form',
        { method: 'dialog' },
        h('h2', {}, title),
        body,
        h(
          'div',
          { class: 'actions' },
          buttons.map(([label, value, cls]) => h('button', { value, class: cls || '' }, label)),
        ),
      ),
    );
    document.body.append(d);
    d.addEventListener('close', () => {
      resolve(d.returnValue);
      d.remove();
    });
    d.showModal();
  });
}

export async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
    toast(`${what} copied to the clipboard.`);
  } catch {
    toast(
      `Copying was refused by the browser: select the ${what.toLowerCase()} and copy it by hand.`,
      'error',
    );
  }
}

export function field(label, input, hint) {
  const id = input.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  input.id = id;
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    input,
    hint ? h('small', { class: 'muted' }, hint) : null,
  );
}

/**
 * A table that scrolls sideways on its own when narrow: the header cells' texts, then the rows.
 * @param {string[]} headers
 * @param {HTMLElement[]} rows `tr` elements
 */
export function table(headers, rows) {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headers.map((t) => h('th', {}, t)),
        ),
      ),
      h('tbody', {}, rows),
    ),
  );
}

/**
 * The picture of an object to show small (a grid, the player view's files): a rendition
 * public delivery makes and keeps (264 × 198, cropped to fill, JPEG — a few kilobytes, where
 * lossless WebP or PNG of a screenshot is tens — transparency on white), sharp on a 2× screen.
 */
export function thumbnailUrl(publicUrl) {
  return `${publicUrl}?w=264&h=198&fit=cover&format=jpeg`;
}
