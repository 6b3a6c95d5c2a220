// @ts-check
// The object browser's listing: the breadcrumbs, the toolbar (search, sort, view, selection
// actions), a folder's pages or a search's, as a list or a grid of thumbnails.
import { api, download, sentence, retryable } from './api.js';
import { h, toast, bytes, when, errorBox, empty, thumbnailUrl } from './ui.js';
import { rulesDialog } from './lifecycle.js';
import { base, link } from './objects-state.js';
import { showDetails } from './objects-details.js';
import { uploadAll, newFolder, uploadUrlForm } from './objects-upload.js';
import { deleteSelected, deleteFolder } from './objects-move.js';
import { placeholders } from './objects-placeholders.js';

/** How the search is sorted, in words. */
export function sortLabel(state) {
  const desc = state.view.order
    ? state.view.order === 'desc'
    : state.view.sort && state.view.sort !== 'key';
  if (state.view.sort === 'size') return desc ? 'largest first' : 'smallest first';
  if (state.view.sort === 'lastModified') return desc ? 'newest first' : 'oldest first';
  return desc ? 'by path, Z to A' : 'by path';
}

/** The page's URL with `changes` (a value of null removes the parameter). */
export function withParams(state, changes) {
  const next = new URLSearchParams(state.view.params);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === '') next.delete(k);
    else next.set(k, v);
  }
  const text = next.toString();
  return `/objects${text ? `?${text}` : ''}`;
}

export function breadcrumbs(path) {
  const parts = path ? path.split('/') : [];
  const crumbs = [
    parts.length
      ? h('a', { href: link(''), 'data-link': true }, 'All files')
      : h('span', { 'aria-current': 'page' }, 'All files'),
  ];
  parts.forEach((p, i) => {
    const to = parts.slice(0, i + 1).join('/');
    crumbs.push(
      ' / ',
      i === parts.length - 1
        ? h('span', { 'aria-current': 'page' }, p)
        : h('a', { href: link(to), 'data-link': true }, p),
    );
  });
  return h('nav', { class: 'crumbs', 'aria-label': 'Folder' }, crumbs);
}

export function can(state, action) {
  return state.view.me.permissions.cdn.includes(action);
}

export function toolbar(state) {
  // searches the server: every file under this folder whose path contains the text
  let typing = null;
  const filter = h('input', {
    type: 'search',
    id: 'name-filter',
    placeholder: state.view.path ? `Search in ${state.view.path}/` : 'Search all files',
    value: state.view.q,
    oninput: () => {
      clearTimeout(typing);
      typing = setTimeout(
        () => state.view.navigate(withParams(state, { q: filter.value.trim() })),
        400,
      );
    },
    onkeydown: (e) => {
      if (e.key === 'Enter') {
        clearTimeout(typing);
        state.view.navigate(withParams(state, { q: filter.value.trim() }));
      }
    },
  });
  const views = h(
    'div',
    { class: 'view-switch', role: 'group', 'aria-label': 'View' },
    [
      ['list', 'List'],
      ['grid', 'Grid'],
    ].map(([v, label]) =>
      h(
        'a',
        {
          href: withParams(state, { view: v === 'grid' ? 'grid' : null }),
          'data-link': true,
          class: 'button ghost',
          id: `view-${v}`,
          'aria-current': (v === 'grid') === state.view.grid ? 'true' : false,
        },
        label,
      ),
    ),
  );
  const picker = h('input', {
    type: 'file',
    multiple: true,
    id: 'file-picker',
    class: 'visually-hidden',
    onchange: (e) => {
      uploadAll(state, [...e.target.files]);
      e.target.value = '';
    },
  });
  return h(
    'div',
    { class: 'toolbar' },
    h('label', { class: 'visually-hidden', for: 'name-filter' }, 'Search files by name'),
    filter,
    views,
    can(state, 'write')
      ? [
          picker,
          h(
            'label',
            {
              for: 'file-picker',
              class: 'button primary',
              tabindex: '0',
              onkeydown: (e) => {
                if (e.key === 'Enter' || e.key === ' ') {
                  e.preventDefault();
                  picker.click();
                }
              },
            },
            'Upload files',
          ),
        ]
      : null,
    can(state, 'write')
      ? h('button', { type: 'button', onclick: () => newFolder(state) }, 'New folder')
      : null,
    can(state, 'write')
      ? h('button', { type: 'button', onclick: () => uploadUrlForm(state) }, 'New upload URL')
      : null,
    h(
      'button',
      {
        type: 'button',
        id: 'zip-selected',
        disabled: true,
        onclick: () => zipDownload({ paths: [...state.view.selected] }, 'stowage-files.zip'),
      },
      'Download selected',
    ),
    state.view.path
      ? h(
          'button',
          {
            type: 'button',
            id: 'zip-folder',
            onclick: () => zipDownload({ path: state.view.path }, `${base(state.view.path)}.zip`),
          },
          'Download folder (ZIP)',
        )
      : null,
    can(state, 'delete')
      ? h(
          'button',
          {
            type: 'button',
            id: 'delete-selected',
            class: 'danger',
            disabled: true,
            onclick: () => deleteSelected(state),
          },
          'Delete selected',
        )
      : null,
    can(state, 'delete') && state.view.path
      ? h(
          'button',
          { type: 'button', class: 'danger', onclick: () => deleteFolder(state) },
          'Delete this folder',
        )
      : null,
    h(
      'button',
      { type: 'button', class: 'ghost', onclick: () => placeholders(state) },
      'Placeholders',
    ),
    h(
      'button',
      {
        type: 'button',
        class: 'ghost',
        id: 'lifecycle-rules',
        onclick: () =>
          rulesDialog(state.view.path, can(state, 'delete'), () =>
            state.view.navigate(withParams(state, {}), { replace: true }),
          ),
      },
      'Lifecycle',
    ),
  );
}

export async function loadPage(state, first) {
  const list = document.getElementById('listing');
  if (!list || !state.view) return;
  try {
    /** @type {import('./types.js').ObjectPage} */
    const page = state.view.search
      ? await api('POST', '/objects/search', {
          json: {
            path: state.view.path || undefined,
            contains: state.view.q || undefined,
            sort: state.view.sort || undefined,
            order: state.view.order || undefined,
            limit: 100,
            continuationToken: first ? undefined : state.view.token,
          },
        })
      : await api('GET', '/objects', {
          params: {
            path: state.view.path,
            delimiter: '/',
            limit: 100,
            continuationToken: first ? null : state.view.token,
          },
        });
    if (!state.view) return;
    if (first) state.view.entries = [];
    for (const f of page.folders || [])
      state.view.entries.push({ folder: true, path: f.path, name: f.name });
    // a search finds files in sub-folders too: their path below this folder names them
    const prefix = state.view.path ? `${state.view.path}/` : '';
    for (const o of page.objects)
      state.view.entries.push({
        folder: false,
        ...o,
        name:
          state.view.search && o.key.startsWith(prefix) ? o.key.slice(prefix.length) : base(o.key),
      });
    state.view.token = page.continuationToken;
    drawList(state);
  } catch (err) {
    list.replaceChildren(
      errorBox(sentence(err), retryable(err) ? () => loadPage(state, first) : undefined),
    );
  }
}

export function drawList(state) {
  const list = document.getElementById('listing');
  if (!list) return;
  const shown = state.view.entries;
  if (state.view.entries.length === 0) {
    list.replaceChildren(
      state.view.search
        ? empty(
            state.view.q
              ? `No file under ${state.view.path ? `${state.view.path}/` : 'any folder'} has “${state.view.q}” in its path.`
              : 'No files under this folder.',
            'Try fewer letters, or search from a folder higher up.',
          )
        : empty(
            'This folder is empty.',
            can(state, 'write')
              ? 'Drop files here or use “Upload files”.'
              : 'Files uploaded here will show up in this list.',
          ),
    );
    return;
  }
  const more = state.view.token
    ? h('button', { type: 'button', class: 'more', onclick: () => loadPage(state, false) }, 'More')
    : null;
  if (state.view.grid) {
    list.replaceChildren(
      ...[
        h(
          'div',
          { class: 'tiles', id: 'file-tiles' },
          shown.map((e) => tile(state, e)),
        ),
        more,
      ].filter(Boolean),
    );
    return;
  }
  const rows = shown.map((e) =>
    e.folder
      ? h(
          'tr',
          { class: 'folder-row' },
          h('td', {}),
          h(
            'td',
            {},
            h('a', { href: link(e.path), 'data-link': true, class: 'folder' }, `${e.name}/`),
          ),
          h('td', {}, ''),
          h('td', { class: 'hide-narrow' }, 'folder'),
          h('td', { class: 'hide-narrow' }, ''),
        )
      : h(
          'tr',
          { 'data-key': e.key, class: state.view.shown === e.key ? 'selected' : '' },
          h(
            'td',
            {},
            // selected files can be downloaded (and deleted, with cdn:delete)
            h('input', {
              type: 'checkbox',
              'aria-label': `Select ${e.name}`,
              checked: state.view.selected.has(e.key),
              onchange: (ev) => {
                if (ev.target.checked) state.view.selected.add(e.key);
                else state.view.selected.delete(e.key);
                selectionChanged(state);
              },
            }),
          ),
          h(
            'td',
            {},
            h(
              'button',
              { type: 'button', class: 'link', onclick: () => showDetails(state, e.key) },
              e.name,
            ),
          ),
          h('td', { class: 'num' }, bytes(e.size)),
          h('td', { class: 'hide-narrow' }, e.contentType),
          h('td', { class: 'hide-narrow' }, when(e.lastModified)),
        ),
  );
  list.replaceChildren(
    ...[
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'files' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', { class: 'check' }, h('span', { class: 'visually-hidden' }, 'Select')),
              sortable(state, 'key', 'Name', ''),
              sortable(state, 'size', 'Size', 'num'),
              h('th', { class: 'hide-narrow' }, 'Type'),
              sortable(state, 'lastModified', 'Modified', 'hide-narrow'),
            ),
          ),
          h('tbody', {}, rows),
        ),
      ),
      more,
    ].filter(Boolean),
  );
}

/**
 * A column head that sorts the search by it (the folder view is by name): a first click sorts
 * as people expect (names A to Z, sizes largest and dates newest first), the next reverses.
 */
export function sortable(state, sort, label, cls) {
  const current = (state.view.sort || (state.view.search ? 'key' : '')) === sort;
  const natural = sort === 'key' ? 'asc' : 'desc';
  const now = state.view.order || natural;
  const next = current ? (now === 'asc' ? 'desc' : 'asc') : natural;
  const arrow = current ? (now === 'asc' ? ' ▲' : ' ▼') : '';
  return h(
    'th',
    {
      class: cls,
      'aria-sort': current ? (now === 'asc' ? 'ascending' : 'descending') : false,
    },
    h(
      'a',
      {
        href: withParams(state, { sort, order: next === natural ? null : next }),
        'data-link': true,
        class: 'sort',
        title:
          sort === 'key' && !state.view.search
            ? 'Sort every file under this folder by name'
            : `Sort by ${label.toLowerCase()}`,
      },
      `${label}${arrow}`,
    ),
  );
}

/** A file in the grid: its thumbnail (a rendition) or its name, a click for its details. */
export function tile(state, e) {
  if (e.folder)
    return h(
      'a',
      { class: 'tile', href: link(e.path), 'data-link': true, title: e.path },
      h('span', { class: 'tile-name' }, `📁 ${e.name}/`),
      h('span', { class: 'tile-when muted small' }, 'folder'),
    );
  const image = /^image\/(png|jpeg|webp|gif)$/.test(e.contentType || '');
  return h(
    'button',
    {
      type: 'button',
      class: `tile${state.view.shown === e.key ? ' selected' : ''}`,
      'data-key': e.key,
      title: `${e.key} · ${bytes(e.size)} · ${when(e.lastModified)}`,
      onclick: () => showDetails(state, e.key),
    },
    image
      ? h('img', {
          src: thumbnailUrl(e.publicUrl),
          alt: e.name,
          loading: 'lazy',
          onerror: (ev) => {
            const img = /** @type {HTMLImageElement} */ (ev.target);
            if (img.src !== e.publicUrl) img.src = e.publicUrl;
          },
        })
      : h('span', { class: 'tile-name' }, e.name),
    h('span', { class: 'tile-when muted small' }, `${e.name} · ${bytes(e.size)}`),
  );
}

/** The files of `body` (`paths` or a folder's `path`) as one ZIP, saved as `name`. */
export async function zipDownload(body, name) {
  toast(`Preparing ${name}…`);
  try {
    await download('/objects/zip', body, name);
  } catch (err) {
    toast(sentence(err), 'error');
  }
}

export function selectionChanged(state) {
  const z = /** @type {HTMLButtonElement | null} */ (document.getElementById('zip-selected'));
  if (z) {
    z.disabled = state.view.selected.size === 0;
    z.textContent = state.view.selected.size
      ? `Download selected (${state.view.selected.size})`
      : 'Download selected';
  }
  const b = /** @type {HTMLButtonElement | null} */ (document.getElementById('delete-selected'));
  if (b) {
    b.disabled = state.view.selected.size === 0;
    b.textContent = state.view.selected.size
      ? `Delete selected (${state.view.selected.size})`
      : 'Delete selected';
  }
}
