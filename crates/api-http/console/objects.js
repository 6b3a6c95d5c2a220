// @ts-check
// The object browser: folders (GET /v1/objects?delimiter=/), a search of everything under a folder
// by name or sorted by date or size (POST /v1/objects/search), a list or a grid of thumbnails
// (renditions), details, uploads, moves, deletes, purges, upload URLs and placeholders — each
// through its public route. The search, the sort and the view live in the URL
// (/objects?path=shots&q=jay&sort=lastModified&order=desc&view=grid). The page lays out its
// panels — the listing (objects-listing.js), the details pane (objects-details.js), uploads
// (objects-upload.js), moves and deletes (objects-move.js), placeholders
// (objects-placeholders.js) — over one state (`ObjectsState`, objects-state.js).
import { h, empty } from './ui.js';
import { listRules, folderNote } from './lifecycle.js';
import { link, SORTS } from './objects-state.js';
import { sortLabel, breadcrumbs, toolbar, loadPage } from './objects-listing.js';
import { dropTarget } from './objects-upload.js';

/** The files page: one instance per visit, its state its own (`leave` drops it). */
export function filesView() {
  /** @type {import('./objects-state.js').ObjectsState} */
  const state = { view: null };

  async function render(root, { me, params, navigate }) {
    const path = params.get('path') || '';
    const allowed = me.restrictions.allowedPrefixes;
    document.title = `${path || 'Files'} · Stowage console`;
    // a text or a sort searches everything under the folder; neither: the folder view
    const q = params.get('q') || '';
    const sort = SORTS.some(([v]) => v === params.get('sort')) ? params.get('sort') : '';
    const order =
      params.get('order') === 'asc' || params.get('order') === 'desc' ? params.get('order') : '';
    state.view = {
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
    if (!state.view) return;
    root.append(
      breadcrumbs(path),
      folderNote(rules, path) || '',
      toolbar(state),
      h('div', { id: 'uploads', class: 'uploads' }),
    );
    if (state.view.search)
      root.append(
        h(
          'p',
          { class: 'muted', id: 'search-scope' },
          `Every file under ${path ? `${path}/` : 'all folders'}`,
          q ? ` whose path contains “${q}”` : '',
          `, ${sortLabel(state)}. `,
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
    dropTarget(state, list);
    // typing goes on where it was after the search's page replaced the previous one
    const box = /** @type {HTMLInputElement | null} */ (document.getElementById('name-filter'));
    if (box && q) {
      box.focus();
      box.setSelectionRange(q.length, q.length);
    }
    await loadPage(state, true);
  }

  function leave() {
    state.view = null;
  }

  return { render, leave };
}
