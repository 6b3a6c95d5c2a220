// @ts-check
// The object browser: folders (GET /v1/objects?delimiter=/), a search of everything under a folder
// by name or sorted by date or size (POST /v1/objects/search), a list or a grid of thumbnails
// (renditions), details, uploads, moves, deletes, purges, upload URLs and placeholders — each
// through its public route. The search, the sort and the view live in the URL
// (/objects?path=shots&q=jay&sort=lastModified&order=desc&view=grid).
import { api, upload, download, sentence, retryable, ApiError } from './api.js';
import { h, toast, bytes, when, errorBox, empty, dialog, copy, field, thumbnailUrl } from './ui.js';
import { listRules, folderNote, detailsRow, rulesDialog } from './lifecycle.js';

const parent = (p) => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '');
const base = (k) => k.slice(k.lastIndexOf('/') + 1);
const link = (path) => `/objects${path ? `?path=${encodeURIComponent(path)}` : ''}`;
/** The sorts of the search, by column: the API's `sort` and its label. */
const SORTS = [
  ['key', 'Name'],
  ['size', 'Size'],
  ['lastModified', 'Modified'],
];

/** The files page: one instance per visit, its state its own (`leave` drops it). */
export function filesView() {
  let state = null;

  function leave() {
    state = null;
  }

  async function render(root, { me, params, navigate }) {
    const path = params.get('path') || '';
    const allowed = me.restrictions.allowedPrefixes;
    document.title = `${path || 'Files'} · Stowage console`;
    // a text or a sort searches everything under the folder; neither: the folder view
    const q = params.get('q') || '';
    const sort = SORTS.some(([v]) => v === params.get('sort')) ? params.get('sort') : '';
    const order =
      params.get('order') === 'asc' || params.get('order') === 'desc' ? params.get('order') : '';
    state = {
      me,
      path,
      params,
      navigate,
      entries: [],
      token: null,
      selected: new Set(),
      root,
      q,
      sort,
      order,
      search: Boolean(q || sort),
      grid: params.get('view') === 'grid',
      shown: null,
    };
    root.append(h('h1', {}, 'Files'));
    if (!me.permissions.cdn.includes('read')) {
      root.append(
        empty(
          'This key cannot list files.',
          'Sign in with a key that has cdn:read to browse files.',
        ),
      );
      return;
    }
    if (!path && allowed.length) {
      // a path-restricted key cannot list the root: offer its folders instead
      root.append(
        h('p', { class: 'muted' }, 'This key may use these folders:'),
        h(
          'ul',
          { class: 'folders' },
          allowed.map((p) =>
            h('li', {}, h('a', { href: link(p), 'data-link': true, class: 'folder' }, `${p}/`)),
          ),
        ),
      );
      return;
    }
    const rules = await listRules();
    if (!state) return;
    root.append(
      breadcrumbs(path),
      folderNote(rules, path) || '',
      toolbar(),
      h('div', { id: 'uploads', class: 'uploads' }),
    );
    if (state.search)
      root.append(
        h(
          'p',
          { class: 'muted', id: 'search-scope' },
          `Every file under ${path ? `${path}/` : 'all folders'}`,
          q ? ` whose path contains “${q}”` : '',
          `, ${sortLabel()}. `,
          h('a', { href: link(path), 'data-link': true }, 'Back to the folder'),
        ),
      );
    const list = h('div', { id: 'listing', class: 'dropzone', tabindex: '-1' });
    const layout = h(
      'div',
      { class: 'split' },
      list,
      h('aside', { id: 'details', class: 'details-pane', hidden: true }),
    );
    root.append(layout);
    dropTarget(list);
    // typing goes on where it was after the search's page replaced the previous one
    const box = /** @type {HTMLInputElement | null} */ (document.getElementById('name-filter'));
    if (box && q) {
      box.focus();
      box.setSelectionRange(q.length, q.length);
    }
    await loadPage(true);
  }

  /** How the search is sorted, in words. */
  function sortLabel() {
    const desc = state.order ? state.order === 'desc' : state.sort && state.sort !== 'key';
    if (state.sort === 'size') return desc ? 'largest first' : 'smallest first';
    if (state.sort === 'lastModified') return desc ? 'newest first' : 'oldest first';
    return desc ? 'by path, Z to A' : 'by path';
  }

  /** The page's URL with `changes` (a value of null removes the parameter). */
  function withParams(changes) {
    const next = new URLSearchParams(state.params);
    for (const [k, v] of Object.entries(changes)) {
      if (v === null || v === '') next.delete(k);
      else next.set(k, v);
    }
    const text = next.toString();
    return `/objects${text ? `?${text}` : ''}`;
  }

  function breadcrumbs(path) {
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

  function can(action) {
    return state.me.permissions.cdn.includes(action);
  }

  function toolbar() {
    // searches the server: every file under this folder whose path contains the text
    let typing = null;
    const filter = h('input', {
      type: 'search',
      id: 'name-filter',
      placeholder: state.path ? `Search in ${state.path}/` : 'Search all files',
      value: state.q,
      oninput: () => {
        clearTimeout(typing);
        typing = setTimeout(() => state.navigate(withParams({ q: filter.value.trim() })), 400);
      },
      onkeydown: (e) => {
        if (e.key === 'Enter') {
          clearTimeout(typing);
          state.navigate(withParams({ q: filter.value.trim() }));
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
            href: withParams({ view: v === 'grid' ? 'grid' : null }),
            'data-link': true,
            class: 'button ghost',
            id: `view-${v}`,
            'aria-current': (v === 'grid') === state.grid ? 'true' : false,
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
        uploadAll([...e.target.files]);
        e.target.value = '';
      },
    });
    return h(
      'div',
      { class: 'toolbar' },
      h('label', { class: 'visually-hidden', for: 'name-filter' }, 'Search files by name'),
      filter,
      views,
      can('write')
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
      can('write') ? h('button', { type: 'button', onclick: newFolder }, 'New folder') : null,
      can('write')
        ? h('button', { type: 'button', onclick: uploadUrlForm }, 'New upload URL')
        : null,
      h(
        'button',
        {
          type: 'button',
          id: 'zip-selected',
          disabled: true,
          onclick: () => zipDownload({ paths: [...state.selected] }, 'stowage-files.zip'),
        },
        'Download selected',
      ),
      state.path
        ? h(
            'button',
            {
              type: 'button',
              id: 'zip-folder',
              onclick: () => zipDownload({ path: state.path }, `${base(state.path)}.zip`),
            },
            'Download folder (ZIP)',
          )
        : null,
      can('delete')
        ? h(
            'button',
            {
              type: 'button',
              id: 'delete-selected',
              class: 'danger',
              disabled: true,
              onclick: deleteSelected,
            },
            'Delete selected',
          )
        : null,
      can('delete') && state.path
        ? h(
            'button',
            { type: 'button', class: 'danger', onclick: deleteFolder },
            'Delete this folder',
          )
        : null,
      h('button', { type: 'button', class: 'ghost', onclick: placeholders }, 'Placeholders'),
      h(
        'button',
        {
          type: 'button',
          class: 'ghost',
          id: 'lifecycle-rules',
          onclick: () =>
            rulesDialog(state.path, can('delete'), () =>
              state.navigate(withParams({}), { replace: true }),
            ),
        },
        'Lifecycle',
      ),
    );
  }

  async function loadPage(first) {
    const list = document.getElementById('listing');
    if (!list || !state) return;
    try {
      /** @type {import('./types.js').ObjectPage} */
      const page = state.search
        ? await api('POST', '/objects/search', {
            json: {
              path: state.path || undefined,
              contains: state.q || undefined,
              sort: state.sort || undefined,
              order: state.order || undefined,
              limit: 100,
              continuationToken: first ? undefined : state.token,
            },
          })
        : await api('GET', '/objects', {
            params: {
              path: state.path,
              delimiter: '/',
              limit: 100,
              continuationToken: first ? null : state.token,
            },
          });
      if (!state) return;
      if (first) state.entries = [];
      for (const f of page.folders || [])
        state.entries.push({ folder: true, path: f.path, name: f.name });
      // a search finds files in sub-folders too: their path below this folder names them
      const prefix = state.path ? `${state.path}/` : '';
      for (const o of page.objects)
        state.entries.push({
          folder: false,
          ...o,
          name: state.search && o.key.startsWith(prefix) ? o.key.slice(prefix.length) : base(o.key),
        });
      state.token = page.continuationToken;
      drawList();
    } catch (err) {
      list.replaceChildren(
        errorBox(sentence(err), retryable(err) ? () => loadPage(first) : undefined),
      );
    }
  }

  function drawList() {
    const list = document.getElementById('listing');
    if (!list) return;
    const shown = state.entries;
    if (state.entries.length === 0) {
      list.replaceChildren(
        state.search
          ? empty(
              state.q
                ? `No file under ${state.path ? `${state.path}/` : 'any folder'} has “${state.q}” in its path.`
                : 'No files under this folder.',
              'Try fewer letters, or search from a folder higher up.',
            )
          : empty(
              'This folder is empty.',
              can('write')
                ? 'Drop files here or use “Upload files”.'
                : 'Files uploaded here will show up in this list.',
            ),
      );
      return;
    }
    const more = state.token
      ? h('button', { type: 'button', class: 'more', onclick: () => loadPage(false) }, 'More')
      : null;
    if (state.grid) {
      list.replaceChildren(
        ...[h('div', { class: 'tiles', id: 'file-tiles' }, shown.map(tile)), more].filter(Boolean),
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
            { 'data-key': e.key, class: state.shown === e.key ? 'selected' : '' },
            h(
              'td',
              {},
              // selected files can be downloaded (and deleted, with cdn:delete)
              h('input', {
                type: 'checkbox',
                'aria-label': `Select ${e.name}`,
                checked: state.selected.has(e.key),
                onchange: (ev) => {
                  if (ev.target.checked) state.selected.add(e.key);
                  else state.selected.delete(e.key);
                  selectionChanged();
                },
              }),
            ),
            h(
              'td',
              {},
              h(
                'button',
                { type: 'button', class: 'link', onclick: () => showDetails(e.key) },
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
                sortable('key', 'Name', ''),
                sortable('size', 'Size', 'num'),
                h('th', { class: 'hide-narrow' }, 'Type'),
                sortable('lastModified', 'Modified', 'hide-narrow'),
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
  function sortable(sort, label, cls) {
    const current = (state.sort || (state.search ? 'key' : '')) === sort;
    const natural = sort === 'key' ? 'asc' : 'desc';
    const now = state.order || natural;
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
          href: withParams({ sort, order: next === natural ? null : next }),
          'data-link': true,
          class: 'sort',
          title:
            sort === 'key' && !state.search
              ? 'Sort every file under this folder by name'
              : `Sort by ${label.toLowerCase()}`,
        },
        `${label}${arrow}`,
      ),
    );
  }

  /** A file in the grid: its thumbnail (a rendition) or its name, a click for its details. */
  function tile(e) {
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
        class: `tile${state.shown === e.key ? ' selected' : ''}`,
        'data-key': e.key,
        title: `${e.key} · ${bytes(e.size)} · ${when(e.lastModified)}`,
        onclick: () => showDetails(e.key),
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
  async function zipDownload(body, name) {
    toast(`Preparing ${name}…`);
    try {
      await download('/objects/zip', body, name);
    } catch (err) {
      toast(sentence(err), 'error');
    }
  }

  function selectionChanged() {
    const z = /** @type {HTMLButtonElement | null} */ (document.getElementById('zip-selected'));
    if (z) {
      z.disabled = state.selected.size === 0;
      z.textContent = state.selected.size
        ? `Download selected (${state.selected.size})`
        : 'Download selected';
    }
    const b = /** @type {HTMLButtonElement | null} */ (document.getElementById('delete-selected'));
    if (b) {
      b.disabled = state.selected.size === 0;
      b.textContent = state.selected.size
        ? `Delete selected (${state.selected.size})`
        : 'Delete selected';
    }
  }

  async function showDetails(key) {
    const pane = document.getElementById('details');
    pane.hidden = false;
    // the row or tile shown is marked
    state.shown = key;
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
        detailsRow(o, can('delete'), () => showDetails(o.key)),
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
        can('write') && can('delete')
          ? h('button', { type: 'button', onclick: () => moveObject(o.key) }, 'Rename or move')
          : null,
        state.me.permissions.cdn.includes('purge')
          ? h('button', { type: 'button', onclick: () => purge(o.key) }, 'Purge caches')
          : null,
        can('delete')
          ? h(
              'button',
              { type: 'button', class: 'danger', onclick: () => deleteOne(o.key) },
              'Delete',
            )
          : null,
      ),
    );
    // focus (and so scroll to) the details: below the list on a phone
    pane.querySelector('h2').focus();
  }

  function dropTarget(el) {
    if (!can('write')) return;
    el.addEventListener('dragover', (e) => {
      e.preventDefault();
      el.classList.add('over');
    });
    el.addEventListener('dragleave', () => el.classList.remove('over'));
    el.addEventListener('drop', (e) => {
      e.preventDefault();
      el.classList.remove('over');
      const files = [...(e.dataTransfer?.files || [])];
      if (files.length) uploadAll(files);
    });
  }

  async function uploadAll(files) {
    const box = document.getElementById('uploads');
    const jobs = files.map((file) => {
      const bar = h('progress', { max: '1', value: '0', 'aria-label': `Upload of ${file.name}` });
      const status = h('span', { class: 'muted' }, 'waiting');
      const row = h(
        'div',
        { class: 'upload', 'data-name': file.name },
        h('span', { class: 'name' }, file.name),
        bar,
        status,
      );
      box.append(row);
      return { file, bar, status, row };
    });
    // three at a time: progress stays visible and the rate limit is not hammered
    let next = 0;
    // one question at a time when several files already exist
    let asking = Promise.resolve();
    const ask = (name) => {
      const answer = asking.then(() =>
        dialog(
          'Replace the existing file?',
          h(
            'p',
            {},
            `A file named ${name} is already in ${state?.path ? `${state.path}/` : 'this folder'}. Replacing it changes what its public URL serves.`,
          ),
          [
            ['Skip', ''],
            ['Keep both', 'both'],
            ['Replace', 'replace', 'danger'],
          ],
        ),
      );
      asking = answer.then(() => undefined);
      return answer;
    };
    const worker = async () => {
      while (next < jobs.length) {
        const j = jobs[next];
        next += 1;
        j.status.textContent = 'uploading';
        const progress = (f) => {
          j.bar.value = f;
        };
        const folder = state?.path || '';
        try {
          try {
            // never a silent replace: create only, and ask when the name is taken
            await upload(j.file, folder, progress, { createOnly: true });
          } catch (err) {
            if (!(err instanceof ApiError) || err.code !== 'PRECONDITION_FAILED') throw err;
            j.status.textContent = 'already exists';
            j.bar.value = 0;
            const choice = await ask(j.file.name);
            if (choice === 'replace') await upload(j.file, folder, progress);
            else if (choice === 'both') {
              const kept = await keepBoth(j.file, folder, progress);
              j.status.textContent = `kept both: ${kept}`;
            } else {
              j.status.textContent = 'skipped (already exists)';
              j.row.classList.add('ok', 'skipped');
              continue;
            }
          }
          j.bar.value = 1;
          if (!j.status.textContent.startsWith('kept both')) j.status.textContent = 'done';
          j.row.classList.add('ok');
        } catch (err) {
          j.status.textContent = sentence(err);
          j.row.classList.add('failed');
        }
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    const failed = jobs.filter((j) => j.row.classList.contains('failed')).length;
    const skipped = jobs.filter((j) => j.row.classList.contains('skipped')).length;
    const uploaded = jobs.length - failed - skipped;
    const parts = [`${uploaded} file${uploaded === 1 ? '' : 's'} uploaded`];
    if (skipped) parts.push(`${skipped} skipped`);
    if (failed) parts.push(`${failed} failed (see each file)`);
    toast(`${parts.join(', ')}.`, failed ? 'error' : 'info');
    setTimeout(() => {
      for (const j of jobs) if (!j.row.classList.contains('failed')) j.row.remove();
    }, 3000);
    await loadPage(true);
  }

  /**
   * Uploads `file` under the first free name `name (2).ext`, `name (3).ext`, … (create only, so a
   * name taken meanwhile is never replaced); the name it got.
   */
  async function keepBoth(file, folder, progress) {
    const dot = file.name.lastIndexOf('.');
    const [stem, ext] = dot > 0 ? [file.name.slice(0, dot), file.name.slice(dot)] : [file.name, ''];
    for (let n = 2; n <= 50; n += 1) {
      const name = `${stem} (${n})${ext}`;
      try {
        await upload(file, folder, progress, { createOnly: true, filename: name });
        return name;
      } catch (err) {
        if (!(err instanceof ApiError) || err.code !== 'PRECONDITION_FAILED') throw err;
      }
    }
    throw new ApiError(409, 'CONFLICT', `${stem} (2)${ext} to ${stem} (50)${ext} are all taken`);
  }

  /**
   * Opens a new sub-folder to upload into. Folders are the paths of their files: it exists once
   * a file is in it (until then it is shown only here).
   */
  async function newFolder() {
    const name = h('input', { type: 'text', name: 'folder', required: true, spellcheck: 'false' });
    const ok = await dialog(
      'New folder',
      h(
        'div',
        {},
        field('Name', name, 'letters, digits, - _ . (no /)'),
        h('p', { class: 'muted small' }, 'It is kept once a file is uploaded into it.'),
      ),
      [
        ['Cancel', ''],
        ['Open it', 'yes', 'primary'],
      ],
    );
    const text = name.value.trim().replace(/^\/+|\/+$/g, '');
    if (ok !== 'yes' || !text) return;
    if (text.includes('/') || text.startsWith('.')) {
      toast('A folder name has no “/” and does not start with a dot.', 'error');
      return;
    }
    state.navigate(link(state.path ? `${state.path}/${text}` : text));
  }

  async function deleteOne(key) {
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
      await loadPage(true);
    } catch (err) {
      toast(sentence(err), 'error');
    }
  }

  async function deleteSelected() {
    const paths = [...state.selected];
    const ok = await dialog(
      `Delete ${paths.length} file${paths.length > 1 ? 's' : ''}?`,
      h(
        'ul',
        { class: 'short-list' },
        paths.slice(0, 10).map((p) => h('li', {}, p)),
        paths.length > 10 ? h('li', {}, `…and ${paths.length - 10} more`) : null,
      ),
      [
        ['Cancel', ''],
        ['Delete', 'yes', 'danger'],
      ],
    );
    if (ok !== 'yes') return;
    try {
      const r = await api('POST', '/objects/bulk-delete', { json: { paths } });
      const failed = r.results ? r.results.filter((x) => !x.success) : [];
      state.selected.clear();
      selectionChanged();
      toast(
        failed.length
          ? `${paths.length - failed.length} deleted; ${failed.length} could not be: ${failed.map((f) => `${f.path}: ${f.message}`).join('; ')}`
          : `${paths.length} deleted.`,
        failed.length ? 'error' : 'info',
      );
      await loadPage(true);
    } catch (err) {
      toast(sentence(err), 'error');
    }
  }

  /** Objects under the folder, counted by listing pages (up to 10,000). */
  async function countFolder(path) {
    let n = 0;
    let token = null;
    for (let i = 0; i < 10; i += 1) {
      const page = await api('GET', '/objects', {
        params: { path, limit: 1000, continuationToken: token },
      });
      n += page.objects.length;
      token = page.continuationToken;
      if (!token) return { n, more: false };
    }
    return { n, more: true };
  }

  async function deleteFolder() {
    const path = state.path;
    let count;
    try {
      count = await countFolder(path);
    } catch (err) {
      toast(sentence(err), 'error');
      return;
    }
    const what = `${count.more ? 'more than ' : ''}${count.n.toLocaleString()} file${count.n === 1 ? '' : 's'}`;
    const ok = await dialog(
      `Delete the folder ${path}?`,
      h(
        'p',
        {},
        `This deletes ${what} under ${path}/. Their public URLs stop working. This cannot be undone.`,
      ),
      [
        ['Cancel', ''],
        [`Delete ${what}`, 'yes', 'danger'],
      ],
    );
    if (ok !== 'yes') return;
    let deleted = 0;
    try {
      for (;;) {
        const r = await api('POST', '/objects/delete-folder', { json: { path } });
        deleted += r.deleted;
        if (r.done) break;
      }
      toast(`Deleted ${deleted.toLocaleString()} files under ${path}/.`);
      state.navigate(link(parent(path)));
    } catch (err) {
      toast(`${deleted} deleted before an error. ${sentence(err)}`, 'error');
    }
  }

  async function moveObject(key) {
    const to = h('input', { type: 'text', value: key, required: true, spellcheck: 'false' });
    const replace = h('input', { type: 'checkbox' });
    const choice = await dialog(
      'Rename or move',
      h(
        'div',
        {},
        field('New path', to, 'A folder path and a name, e.g. screenshots/2026/shot.png'),
        h('label', { class: 'check' }, replace, ' Replace a file that already has this path'),
      ),
      [
        ['Cancel', ''],
        ['Move', 'yes', 'primary'],
      ],
    );
    if (choice !== 'yes' || to.value.trim() === key) return;
    try {
      await api('POST', '/objects/move', {
        json: { from: key, to: to.value.trim(), replace: replace.checked },
      });
      toast(`Moved to ${to.value.trim()}.`);
      document.getElementById('details').hidden = true;
      await loadPage(true);
    } catch (err) {
      // the API says `send "replace": true`; here that is the box of the dialog
      toast(
        err instanceof ApiError && err.status === 409
          ? `A file is already at ${to.value.trim()}. Move again with “Replace a file that already has this path” ticked to replace it.`
          : sentence(err),
        'error',
      );
    }
  }

  async function purge(key) {
    try {
      await api('POST', '/objects/purge', { json: { paths: [key] } });
      toast('Cached copies purged: the next request gets the current bytes.');
    } catch (err) {
      toast(sentence(err), 'error');
    }
  }

  async function uploadUrlForm() {
    const path = h('input', { type: 'text', value: state.path, spellcheck: 'false' });
    const expires = h('input', { type: 'number', min: '1', value: '900' });
    const maxFiles = h('input', { type: 'number', min: '1', max: '1000', value: '1' });
    const maxSize = h('input', { type: 'number', min: '1', placeholder: 'workspace limit' });
    const mimes = h('input', {
      type: 'text',
      placeholder: 'e.g. image/png,image/jpeg (any when empty)',
    });
    const randomize = h('input', { type: 'checkbox' });
    const meta = h('input', { type: 'checkbox' });
    const choice = await dialog(
      'New upload URL',
      h(
        'div',
        { class: 'form-grid' },
        field('Folder', path, 'Files go here; the URL cannot write elsewhere.'),
        field('Valid for (seconds)', expires, 'Clamped to the plan’s maximum.'),
        field('Files', maxFiles),
        field('Largest file (bytes)', maxSize),
        field('Allowed types', mimes),
        h('label', { class: 'check' }, randomize, ' Give every file a random name'),
        h('label', { class: 'check' }, meta, ' Allow custom metadata'),
      ),
      [
        ['Cancel', ''],
        ['Create', 'yes', 'primary'],
      ],
    );
    if (choice !== 'yes') return;
    let r;
    try {
      r = await api('GET', '/presigned-url', {
        params: {
          path: path.value.trim(),
          expiresIn: expires.value,
          maxFiles: maxFiles.value,
          maxFileSize: maxSize.value,
          allowedMimeTypes: mimes.value.replace(/\s+/g, ''),
          randomizeName: randomize.checked,
          allowCustomMetadata: meta.checked,
        },
      });
    } catch (err) {
      toast(sentence(err), 'error');
      return;
    }
    const curl = `curl -F file=@screenshot.png '${r.uploadUrl}'`;
    const nui = [
      '// in-game web view (NUI): blob is the screenshot',
      'const form = new FormData();',
      "form.append('file', blob, 'screenshot.png');",
      `const res = await fetch('${r.uploadUrl}', { method: 'POST', body: form });`,
      'const { object } = await res.json(); // object.publicUrl',
    ].join('\n');
    const urlBox = h(
      'textarea',
      { readonly: true, rows: '3', id: 'upload-url', class: 'code' },
      r.uploadUrl,
    );
    await dialog(
      'Upload URL ready',
      h(
        'div',
        {},
        h(
          'p',
          {},
          `POST up to ${r.maxFiles} file${r.maxFiles > 1 ? 's' : ''} (form field “file”) ` +
            `before ${when(r.expiresAt)}${r.path ? ` into ${r.path}/` : ''}. ` +
            'No API key is needed, so hand it only to the script that uploads.',
        ),
        field('URL', urlBox),
        h(
          'div',
          { class: 'actions' },
          h(
            'button',
            { type: 'button', onclick: () => copy(r.uploadUrl, 'Upload URL') },
            'Copy URL',
          ),
          h(
            'button',
            { type: 'button', onclick: () => copy(curl, 'curl command') },
            'Copy curl command',
          ),
        ),
        h('pre', { class: 'code' }, curl),
        h('pre', { class: 'code' }, nui),
      ),
      [['Done', 'ok', 'primary']],
    );
  }

  async function placeholders() {
    let list;
    try {
      list = await api('GET', '/placeholders');
    } catch (err) {
      toast(sentence(err), 'error');
      return;
    }
    const items = list.placeholders || [];
    const pattern = h('input', {
      type: 'text',
      placeholder: 'inventory/items/*.png',
      spellcheck: 'false',
    });
    const fallback = h('input', {
      type: 'text',
      placeholder: 'inventory/missing.png',
      spellcheck: 'false',
    });
    const body = h(
      'div',
      {},
      h(
        'p',
        { class: 'muted' },
        'A missing file whose path matches a pattern is answered with the fallback file (status 404).',
      ),
      items.length
        ? h(
            'table',
            {},
            h(
              'thead',
              {},
              h('tr', {}, h('th', {}, 'Pattern'), h('th', {}, 'Fallback'), h('th', {}, '')),
            ),
            h(
              'tbody',
              {},
              items.map((p, i) =>
                h(
                  'tr',
                  {},
                  h('td', {}, h('code', {}, p.pattern)),
                  h('td', {}, h('code', {}, p.fallback)),
                  h(
                    'td',
                    {},
                    can('write')
                      ? // closes the dialog with this row's pattern to remove
                        h(
                          'button',
                          {
                            value: `remove:${i}`,
                            class: 'ghost danger',
                            'aria-label': `Remove the placeholder ${p.pattern}`,
                          },
                          'Remove',
                        )
                      : null,
                  ),
                ),
              ),
            ),
          )
        : h('p', {}, 'No placeholders yet.'),
      can('write') ? [field('Pattern', pattern), field('Fallback file', fallback)] : null,
    );
    const choice = await dialog(
      'Placeholders',
      body,
      can('write')
        ? [
            ['Close', ''],
            ['Save', 'save', 'primary'],
          ]
        : [['Close', '']],
    );
    try {
      if (choice === 'save') {
        await api('PUT', '/placeholders', {
          json: { pattern: pattern.value.trim(), fallback: fallback.value.trim() },
        });
        toast('Placeholder saved.');
      }
      if (choice.startsWith('remove:')) {
        const removed = items[Number(choice.slice('remove:'.length))];
        await api('DELETE', '/placeholders', { params: { pattern: removed.pattern } });
        toast(`Placeholder ${removed.pattern} removed.`);
      }
    } catch (err) {
      toast(sentence(err), 'error');
    }
  }

  return { render, leave };
}
