// @ts-check
// The object browser's details pane: an object's facts, its links, what may be done to it.
import { api, sentence } from './api.js';
import { h, toast, bytes, when, errorBox, dialog, copy, field } from './ui.js';
import { detailsRow } from './lifecycle.js';
import { base } from './objects-state.js';
import { can, loadPage } from './objects-listing.js';
import { moveObject } from './objects-move.js';

export async function showDetails(state, key) {
  const pane = document.getElementById('details');
  pane.hidden = false;
  // the row or tile shown is marked
  state.view.shown = key;
  for (const el of document.querySelectorAll('#listing [data-key]'))
    el.classList.toggle('selected', /** @type {HTMLElement} */ (el).dataset.key === key);
  pane.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  /** @type {import('./types.js').StoredObject} */
  let o;
  try {
    o = (await api('GET', '/objects/details', { params: { path: key } })).object;
  } catch (err) {
    pane.replaceChildren(errorBox(sentence(err)));
    return;
  }
  const type = o.contentType || '';
  const preview = type.startsWith('image/')
    ? h('img', { src: o.publicUrl, alt: `Preview of ${base(o.key)}`, class: 'preview' })
    : type.startsWith('audio/')
      ? h('audio', { src: o.publicUrl, controls: true, class: 'preview' })
      : type.startsWith('video/')
        ? h('video', { src: o.publicUrl, controls: true, class: 'preview' })
        : type.split(';')[0] === 'text/plain'
          ? // the text as delivery serves it, in a frame of its own origin with no script
            h('iframe', {
              src: o.publicUrl,
              sandbox: '',
              class: 'preview text-preview',
              title: `Text of ${base(o.key)}`,
            })
          : h('p', { class: 'muted' }, 'No preview for this type.');
  const url = h('input', {
    type: 'text',
    readonly: true,
    value: o.publicUrl,
    id: 'public-url',
    onfocus: (e) => e.target.select(),
  });
  pane.replaceChildren(
    h(
      'div',
      { class: 'pane-head' },
      h('h2', { tabindex: '-1' }, base(o.key)),
      h(
        'button',
        {
          type: 'button',
          class: 'ghost',
          'aria-label': 'Close details',
          onclick: () => {
            pane.hidden = true;
          },
        },
        '×',
      ),
    ),
    preview,
    field('Public URL', url),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', onclick: () => copy(o.publicUrl, 'Public URL') }, 'Copy URL'),
      h(
        'a',
        {
          href: o.publicUrl,
          target: '_blank',
          rel: 'noopener noreferrer',
          class: 'button ghost',
        },
        'Open',
      ),
    ),
    h(
      'dl',
      { class: 'details' },
      h('dt', {}, 'Path'),
      h('dd', {}, h('code', {}, o.key)),
      h('dt', {}, 'Size'),
      h('dd', {}, `${bytes(o.size)} (${o.size.toLocaleString()} bytes)`),
      h('dt', {}, 'Type'),
      h('dd', {}, type),
      h('dt', {}, 'ETag'),
      h('dd', {}, h('code', {}, o.etag)),
      h('dt', {}, 'Created'),
      h('dd', {}, when(o.createdAt)),
      h('dt', {}, 'Modified'),
      h('dd', {}, when(o.updatedAt)),
      detailsRow(o, can(state, 'delete'), () => showDetails(state, o.key)),
      h('dt', {}, 'Metadata'),
      h(
        'dd',
        {},
        Object.keys(o.metadata || {}).length
          ? h('pre', {}, JSON.stringify(o.metadata, null, 2))
          : 'none',
      ),
    ),
    h(
      'div',
      { class: 'actions' },
      can(state, 'write') && can(state, 'delete')
        ? h('button', { type: 'button', onclick: () => moveObject(state, o.key) }, 'Rename or move')
        : null,
      state.view.me.permissions.cdn.includes('purge')
        ? h('button', { type: 'button', onclick: () => purge(o.key) }, 'Purge caches')
        : null,
      can(state, 'delete')
        ? h(
            'button',
            { type: 'button', class: 'danger', onclick: () => deleteOne(state, o.key) },
            'Delete',
          )
        : null,
    ),
  );
  // focus (and so scroll to) the details: below the list on a phone
  pane.querySelector('h2').focus();
}

export async function purge(key) {
  try {
    await api('POST', '/objects/purge', { json: { paths: [key] } });
    toast('Cached copies purged: the next request gets the current bytes.');
  } catch (err) {
    toast(sentence(err), 'error');
  }
}

export async function deleteOne(state, key) {
  const ok = await dialog(
    'Delete this file?',
    h('p', {}, `${key} will be deleted. Its public URL stops working.`),
    [
      ['Cancel', ''],
      ['Delete', 'yes', 'danger'],
    ],
  );
  if (ok !== 'yes') return;
  try {
    await api('DELETE', '/objects', { params: { path: key } });
    toast(`Deleted ${key}.`);
    document.getElementById('details').hidden = true;
    await loadPage(state, true);
  } catch (err) {
    toast(sentence(err), 'error');
  }
}
