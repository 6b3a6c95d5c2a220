// @ts-check
// The object browser's moves and deletes: an object renamed or moved, a selection or a whole
// folder deleted (a folder in batches, counted first).
import { api, sentence, ApiError } from './api.js';
import { h, toast, dialog, field } from './ui.js';
import { parent, link } from './objects-state.js';
import { loadPage, selectionChanged } from './objects-listing.js';

export async function moveObject(state, key) {
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
    await loadPage(state, true);
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

export async function deleteSelected(state) {
  const paths = [...state.view.selected];
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
    state.view.selected.clear();
    selectionChanged(state);
    toast(
      failed.length
        ? `${paths.length - failed.length} deleted; ${failed.length} could not be: ${failed.map((f) => `${f.path}: ${f.message}`).join('; ')}`
        : `${paths.length} deleted.`,
      failed.length ? 'error' : 'info',
    );
    await loadPage(state, true);
  } catch (err) {
    toast(sentence(err), 'error');
  }
}

/** Objects under the folder, counted by listing pages (up to 10,000). */
export async function countFolder(path) {
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

export async function deleteFolder(state) {
  const path = state.view.path;
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
    state.view.navigate(link(parent(path)));
  } catch (err) {
    toast(`${deleted} deleted before an error. ${sentence(err)}`, 'error');
  }
}
